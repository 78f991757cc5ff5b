"""LoCoMo's data as the benchmarks read it: conversations, their turns and questions.

Only this module knows LoCoMo's format (``speaker_a``, ``session_N``,
``session_N_date_time``, ``qa``); :mod:`langgraph_recall.bench.locomo` (retrieval) and
:mod:`langgraph_recall.bench.locomo_qa` (question answering) both read conversations here.
The public names are re-exported by :mod:`langgraph_recall.bench.locomo`.

Example:
    ```python
    from langgraph_recall.bench._locomo_data import conversation_from_record

    record = {
        "session_1": [{"dia_id": "D1:1", "speaker": "Ann", "text": "I moved to Lyon."}],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "qa": [{"question": "Where does Ann live?", "category": 4, "evidence": ["D1:1"]}],
    }
    conversation = conversation_from_record("conv-x", record)
    assert conversation.turns[0].content == "Ann: I moved to Lyon."
    assert conversation.questions[0].evidence == ("D1:1",)
    ```
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from langgraph_recall.bench._data import locomo_data_dir

__all__ = [
    "CATEGORIES",
    "CATEGORY_NAMES",
    "TUNING_CONVERSATIONS",
    "Conversation",
    "Question",
    "Turn",
    "conversation_from_record",
    "conversation_records",
    "load_conversation",
    "load_conversations",
]

CATEGORIES = (1, 2, 3, 4)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
# The fusion weights and the contextual-embedding choices were tuned on these conversations;
# the others of the data directory are held out (the report shows both groups).
TUNING_CONVERSATIONS = ("conv-26", "conv-30")


@dataclass(frozen=True)
class Turn:
    """One dialog turn."""

    dia_id: str
    speaker: str
    text: str
    session: int
    when: datetime | None
    previous: str | None  # the previous turn of the same session, as "Speaker: text"

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class Question:
    """One question with the dialog ids of its evidence."""

    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    """A LoCoMo conversation: its turns in order and its questions of categories 1–4."""

    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def _parse_session_time(raw: object) -> datetime | None:
    if not isinstance(raw, str):
        return None
    for pattern in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(raw.strip(), pattern).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    return None


def _evidence_ids(raw: object) -> tuple[str, ...]:
    ids: list[str] = []
    for entry in raw if isinstance(raw, list) else []:
        ids.extend(part for part in re.split(r"[;,\s]+", str(entry)) if part)
    return tuple(dict.fromkeys(ids))


def conversation_records(data_dir: str | Path | None = None) -> list[tuple[str, dict[str, Any]]]:
    """``(sample id, conversation data)`` of every conversation in the LoCoMo folder
    (:func:`~langgraph_recall.bench._data.locomo_data_dir` finds it): the upstream
    ``locomo10.json`` (a list of samples) or one conversation per ``*.json`` file, sorted by
    file name. The data has ``speaker_a``, ``session_N``, ``session_N_date_time`` and ``qa``.
    """
    records: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(locomo_data_dir(data_dir).glob("*.json")):
        loaded = json.loads(path.read_text())
        samples = loaded if isinstance(loaded, list) else [loaded]
        for index, data in enumerate(samples):
            name = f"conv-{path.stem}" if len(samples) == 1 else f"conv-{path.stem}-{index}"
            if "conversation" in data:  # the locomo10.json sample layout
                name = str(data.get("sample_id") or name)
                data = {**data["conversation"], "qa": data.get("qa", [])}
            records.append((name, data))
    return records


def conversation_from_record(sample_id: str, data: dict[str, Any]) -> Conversation:
    """One conversation (turns of every session, questions of categories 1–4)."""
    turns: list[Turn] = []
    session = 1
    while f"session_{session}" in data:
        when = _parse_session_time(data.get(f"session_{session}_date_time"))
        previous: str | None = None
        for raw in data[f"session_{session}"]:
            turn = Turn(
                dia_id=str(raw["dia_id"]),
                speaker=str(raw["speaker"]),
                text=str(raw["text"]),
                session=session,
                when=when,
                previous=previous,
            )
            turns.append(turn)
            previous = turn.content
        session += 1
    questions = tuple(
        Question(str(q["question"]), int(q["category"]), _evidence_ids(q.get("evidence")))
        for q in data.get("qa", [])
        if q.get("category") in CATEGORIES and _evidence_ids(q.get("evidence"))
    )
    return Conversation(sample_id, tuple(turns), questions)


def load_conversation(path: Path) -> Conversation:
    """Read one LoCoMo conversation file (``{speaker_a, session_N, qa, ...}`` layout, or
    one sample of ``locomo10.json``)."""
    data = json.loads(Path(path).read_text())
    name = f"conv-{Path(path).stem}"
    if "conversation" in data:  # the locomo10.json sample layout
        name = str(data.get("sample_id") or name)
        data = {**data["conversation"], "qa": data.get("qa", [])}
    return conversation_from_record(name, data)


def load_conversations(data_dir: str | Path | None = None) -> list[Conversation]:
    """Every conversation of the LoCoMo folder (see :func:`conversation_records`).

    Raises:
        BenchmarkDataError: No LoCoMo data there; the message says how to download it.
    """
    return [conversation_from_record(name, data) for name, data in conversation_records(data_dir)]
