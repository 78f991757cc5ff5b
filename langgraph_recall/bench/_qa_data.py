"""LoCoMo conversations with their QA for the QA harness (pure, no model, no store).

Turns come from :func:`langgraph_recall.bench.locomo.load_conversation` (the retrieval benchmark's
loader); this adds the speakers, the gold answers of the questions of categories 1–4 (category 5
has none), the transcript the full-context baseline reads and the node turns the ingest
feeds (pairs of consecutive turns within a session).

Example:
    Not executed (it needs data or a model)::

        from pathlib import Path
        from langgraph_recall.bench._qa_data import load_qa_conversations, turn_groups

        [conversation] = load_qa_conversations(Path("tests/integration/bench/data"))
        print(conversation.speakers, len(turn_groups(conversation)))
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langgraph_recall.bench._locomo_data import (
    CATEGORIES,
    CATEGORY_NAMES,
    Turn,
    conversation_from_record,
    conversation_records,
)

__all__ = [
    "CATEGORIES",
    "CATEGORY_NAMES",
    "QAConversation",
    "QAQuestion",
    "load_qa_conversation",
    "load_qa_conversations",
    "message_text",
    "pair_messages",
    "transcript",
    "turn_groups",
]


@dataclass(frozen=True)
class QAQuestion:
    """One question of categories 1–4 with its gold answer."""

    text: str
    answer: str
    category: int
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class QAConversation:
    """A LoCoMo conversation: its speakers, turns (``langgraph_recall.bench.locomo`` loader) and
    questions."""

    sample_id: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]
    questions: tuple[QAQuestion, ...]

    def sessions(self) -> list[list[Turn]]:
        """The turns grouped by session, in order."""
        grouped: dict[int, list[Turn]] = {}
        for turn in self.turns:
            grouped.setdefault(turn.session, []).append(turn)
        return [grouped[s] for s in sorted(grouped)]


def _evidence(raw: object) -> tuple[str, ...]:
    ids: list[str] = []
    for entry in raw if isinstance(raw, list) else []:
        ids.extend(part for part in re.split(r"[;,\s]+", str(entry)) if part)
    return tuple(dict.fromkeys(ids))


def qa_conversation_from_record(sample_id: str, data: dict[str, Any]) -> QAConversation:
    """One conversation: turns as :func:`langgraph_recall.bench.locomo.conversation_from_record`
    reads them, questions of categories 1–4 with their answers (category 5 has none)."""
    base = conversation_from_record(sample_id, data)
    speakers = (str(data.get("speaker_a", "A")), str(data.get("speaker_b", "B")))
    questions = tuple(
        QAQuestion(
            str(q["question"]), str(q["answer"]), int(q["category"]), _evidence(q.get("evidence"))
        )
        for q in data.get("qa", [])
        if q.get("category") in CATEGORIES and q.get("answer") is not None
    )
    return QAConversation(base.sample_id, speakers, base.turns, questions)


def load_qa_conversation(path: Path) -> QAConversation:
    """One conversation file (one conversation, or one sample of ``locomo10.json``)."""
    data = json.loads(Path(path).read_text())
    name = f"conv-{Path(path).stem}"
    if "conversation" in data:  # the locomo10.json sample layout
        name = str(data.get("sample_id") or name)
        data = {**data["conversation"], "qa": data.get("qa", [])}
    return qa_conversation_from_record(name, data)


def load_qa_conversations(data_dir: str | Path | None = None) -> list[QAConversation]:
    """Every conversation of the LoCoMo folder
    (:func:`langgraph_recall.bench.locomo.conversation_records`).

    Raises:
        BenchmarkDataError: No LoCoMo data there; the message says how to download it.
    """
    return [
        qa_conversation_from_record(name, data) for name, data in conversation_records(data_dir)
    ]


def _date(turn: Turn) -> str:
    return turn.when.strftime("%-d %B %Y, %H:%M") if turn.when else "unknown date"


def transcript(conversation: QAConversation) -> str:
    """Every session with its date, one ``Speaker: text`` line per turn."""
    blocks = []
    for number, turns in enumerate(conversation.sessions(), start=1):
        lines = [f"Session {number} ({_date(turns[0])}):"]
        lines += [turn.content for turn in turns]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def turn_groups(conversation: QAConversation) -> list[list[Turn]]:
    """The node turns of the ingest: consecutive pairs of turns within each session."""
    groups: list[list[Turn]] = []
    for turns in conversation.sessions():
        groups += [turns[i : i + 2] for i in range(0, len(turns), 2)]
    return groups


def pair_messages(group: Sequence[Turn]) -> list[BaseMessage]:
    """One node turn: the first turn as the user message, the reply as the assistant
    message, both ``"Name: text"`` and stamped with the session's date."""
    stamp = {"timestamp": group[0].when.isoformat()} if group[0].when else {}
    first = HumanMessage(group[0].content, additional_kwargs=dict(stamp))
    return [first, *(AIMessage(t.content, additional_kwargs=dict(stamp)) for t in group[1:])]


def message_text(message: BaseMessage) -> str:
    """A message's text content, stripped."""
    content = message.content
    if isinstance(content, str):
        return content.strip()
    return " ".join(
        str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in content
    ).strip()
