"""Turn consolidation decisions into store writes — pure, deterministic, guarded.

:func:`plan_writes` is where the invariants live, whatever produced the decisions (an
LLM or the rules):

* ``INVALIDATE`` only closes a memory with the **same subject and slot** as the
  candidate (Zep-style, never collateral); otherwise the candidate is just added.
  ``UPDATE`` likewise, except that a slotless memory may be enriched by a candidate that
  keeps all of its words.
* A candidate older than the memory it would supersede is stored as history
  (closed at the newer memory's ``valid_from``) instead of closing the newer one.
* ``NOOP`` on a same-slot memory naming different things (different proper nouns or
  numbers: "works at Google" vs "works at Microsoft") is a real update: it becomes
  ``INVALIDATE`` — a repeat must not swallow a change.
* A candidate that names what it replaces (``MemoryCandidate.replaces``: "I switched from
  Django to FastAPI") closes those memories too, whatever their slot — only memories of the
  same subject whose text contains the named phrase, or the newest of a named slot family
  (:func:`replaced_memories`); an ``ADD`` of such a candidate becomes ``INVALIDATE``.
* ``ADD`` of text identical to a current memory becomes ``NOOP`` (reinforce).
* A candidate without a decision is added (nothing is silently dropped).

Example:
    ```python
    from datetime import datetime, timezone

    from langgraph_recall.extraction.consolidation import plan_writes, rule_decisions
    from langgraph_recall.extraction.types import ExistingMemory, MemoryCandidate

    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    old = ExistingMemory("k1", {"content": "User works at Google.", "slot": "employer"})
    new = [MemoryCandidate("User works at Microsoft.", slot="employer")]
    plan = plan_writes(new, [old], rule_decisions(new, [old]), now=now, new_key=lambda: "k2")
    assert plan.counts["invalidated"] == 1 and plan.counts["added"] == 1
    ```
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langgraph_recall.extraction._names import UPPER
from langgraph_recall.extraction.dates import parse_iso_datetime
from langgraph_recall.extraction.textnorm import CJK_RUN
from langgraph_recall.extraction.types import (
    Action,
    ConsolidationDecision,
    ExistingMemory,
    MemoryCandidate,
)

__all__ = [
    "PlannedWrite",
    "WritePlan",
    "candidate_value",
    "key_terms",
    "normalize_content",
    "plan_writes",
    "replaced_memories",
    "rule_decisions",
    "same_topic",
    "topic_terms",
]


def normalize_content(text: str) -> str:
    """NFKC, lower-case, collapse whitespace, strip trailing punctuation (for exact-repeat
    checks: "User likes tea．" in fullwidth repeats "User likes tea.").

    Example:
        ```python
        from langgraph_recall.extraction.consolidation import normalize_content

        assert normalize_content(" User likes  Tea. ") == "user likes tea"
        assert normalize_content("User likes ｔｅａ！") == "user likes tea"
        ```
    """
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"\s+", " ", text).strip().rstrip(".!。").strip().lower()


_TERM = re.compile(rf"[{UPPER}][\w\-+#]*|\d[\d.,]*|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")


def key_terms(text: str) -> frozenset[str]:
    """Proper nouns (capitalised in any script), numbers and CJK runs in ``text`` (minus
    the word "User").

    Example:
        ```python
        from langgraph_recall.extraction.consolidation import key_terms

        assert key_terms("User works at Google.") == {"google"}
        assert key_terms("User works at Škoda.") != key_terms("User works at Ørsted.")
        ```
    """
    text = unicodedata.normalize("NFKC", text)
    return frozenset(
        term.lower().rstrip(".,") for term in _TERM.findall(text) if term.lower() != "user"
    )


def candidate_value(
    candidate: MemoryCandidate, *, now: datetime, source: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The store value for a new memory (``valid_from`` defaults to ``now``).

    Example:
        ```python
        from datetime import datetime, timezone

        from langgraph_recall.extraction.consolidation import candidate_value
        from langgraph_recall.extraction.types import MemoryCandidate

        v = candidate_value(MemoryCandidate("User likes tea."), now=datetime(2026, 1, 1,
                            tzinfo=timezone.utc))
        assert v["valid_from"].startswith("2026-01-01")
        ```
    """
    value: dict[str, Any] = {
        "content": candidate.content,
        "kind": candidate.kind,
        "importance": int(candidate.importance),
        "subject": candidate.subject,
        "valid_from": (candidate.valid_from or now).isoformat(),
        "recorded_at": now.isoformat(),
    }
    if candidate.slot:
        value["slot"] = candidate.slot
    if candidate.entities:
        value["entities"] = list(candidate.entities)
    if source:
        value["source"] = dict(source)
    return value


@dataclass(frozen=True)
class PlannedWrite:
    """One store write: the full new value for ``key`` and why.

    Example:
        ```python
        from langgraph_recall.extraction.consolidation import PlannedWrite
        from langgraph_recall.extraction.types import Action

        w = PlannedWrite("k", {"content": "x"}, Action.ADD, candidate=0)
        assert w.action is Action.ADD
        ```
    """

    key: str
    value: dict[str, Any]
    action: Action
    candidate: int | None = None


@dataclass
class WritePlan:
    """All writes of one turn plus counters and guard notes.

    Example:
        ```python
        from langgraph_recall.extraction.consolidation import WritePlan

        assert WritePlan().counts["added"] == 0
        ```
    """

    writes: list[PlannedWrite] = field(default_factory=list)
    counts: dict[str, int] = field(
        default_factory=lambda: {
            "added": 0,
            "updated": 0,
            "invalidated": 0,
            "reinforced": 0,
            "skipped": 0,
        }
    )
    notes: list[str] = field(default_factory=list)


_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "by",
        "from",
        "is",
        "are",
        "be",
        "it",
        "its",
        "this",
        "that",
        "user",
        "user's",
        "users",
        "always",
        "never",
        "please",
        "do",
        "don't",
        "not",
        "no",
        "now",
        "use",
        "using",
        "any",
        "all",
        "every",
        "my",
        "your",
        "when",
    ]
)
_WORD = re.compile(r"[^\W\d_][\w'\-+#]*|\d[\d.,]*")


def topic_terms(text: str) -> frozenset[str]:
    """The words a memory is about: lower-case words minus stop words, numbers, and each
    CJK run as character bigrams ("代码注释" → 代码, 码注, 注释) (pure).

    Example:
        ```python
        from langgraph_recall.extraction.consolidation import topic_terms

        assert topic_terms("User's instruction: always answer in English.") == {
            "answer", "english"}
        assert "注释" in topic_terms("以后代码注释都用英文")
        ```
    """
    text = unicodedata.normalize("NFKC", text).lower()
    terms: set[str] = set()
    for run in CJK_RUN.findall(text):
        terms.update(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
    for word in _WORD.findall(CJK_RUN.sub(" ", text)):
        word = word.rstrip(".,:")
        if word and word not in _STOP_WORDS and not word.startswith("instruction"):
            terms.add(word)
    return frozenset(terms)


def same_topic(first: str, second: str) -> bool:
    """Whether two instructions speak about the same thing (pure): they share a topic term
    and either half of their terms, or differ by at most one term on each side ("answer in
    English" / "answer in Chinese"; "代码注释都用英文" / "代码注释都用中文").

    Example:
        ```python
        from langgraph_recall.extraction.consolidation import same_topic

        assert same_topic("Always answer in English.", "Always answer in Chinese.")
        assert not same_topic("Always use type hints.", "Always write docstrings.")
        ```
    """
    a, b = topic_terms(first), topic_terms(second)
    common = a & b
    if not common:
        return False
    return len(common) / len(a | b) >= 0.5 or (len(a - b) <= 1 and len(b - a) <= 1)


def _started(memory: ExistingMemory) -> float:
    moment = parse_iso_datetime(memory.value.get("valid_from"))
    return moment.timestamp() if moment is not None else float("-inf")


def replaced_memories(
    candidate: MemoryCandidate, existing: Sequence[ExistingMemory]
) -> list[ExistingMemory]:
    """The memories among ``existing`` that ``candidate.replaces`` names (pure).

    An instruction (kind ``procedural``) also replaces the earlier instructions on the same
    topic (:func:`same_topic`): the newest wins. Each entry of ``replaces`` names a key,
    a slot family ending in ``*`` (its newest memory) or a phrase the old memory's text
    contains (case- and width-insensitive). Only memories of the candidate's subject
    count, never one repeating the candidate itself.

    Example:
        ```python
        from langgraph_recall.extraction.consolidation import replaced_memories
        from langgraph_recall.extraction.types import ExistingMemory, MemoryCandidate

        old = ExistingMemory("k1", {"content": "User uses Django.", "slot": "uses:django"})
        tea = ExistingMemory("k2", {"content": "User likes tea.", "slot": "preference:tea"})
        new = MemoryCandidate("User uses FastAPI.", slot="uses:fastapi", replaces=("Django",))
        assert [m.key for m in replaced_memories(new, [old, tea])] == ["k1"]
        ```
    """
    text = normalize_content(candidate.content)
    pool = [
        m
        for m in existing
        if m.subject == candidate.subject and normalize_content(m.content) != text
    ]
    found: dict[str, ExistingMemory] = {}
    if candidate.kind == "procedural":  # newest wins among instructions on one topic
        for memory in pool:
            if memory.value.get("kind") == "procedural" and same_topic(
                candidate.content, memory.content
            ):
                found.setdefault(memory.key, memory)
    for named in candidate.replaces:
        named = named.strip()
        if not named:
            continue
        if named.endswith("*"):
            prefix = named[:-1].lower()
            family = [
                m for m in pool if m.slot and m.slot.startswith(prefix) and m.slot != candidate.slot
            ]
            if family:
                newest = max(family, key=_started)
                found.setdefault(newest.key, newest)
            continue
        phrase = normalize_content(named)
        for memory in pool:
            if memory.key == named or (phrase and phrase in normalize_content(memory.content)):
                found.setdefault(memory.key, memory)
    return list(found.values())


def rule_decisions(
    candidates: Sequence[MemoryCandidate], existing: Sequence[ExistingMemory]
) -> list[ConsolidationDecision]:
    """Deterministic consolidation: repeat → NOOP, same subject/slot → INVALIDATE, else ADD.

    Example:
        ```python
        from langgraph_recall.extraction.consolidation import rule_decisions
        from langgraph_recall.extraction.types import Action, ExistingMemory, MemoryCandidate

        old = ExistingMemory("k1", {"content": "User likes tea.", "slot": "preference:tea"})
        same = [MemoryCandidate("User likes tea.", slot="preference:tea")]
        assert rule_decisions(same, [old])[0].action is Action.NOOP
        ```
    """
    decisions: list[ConsolidationDecision] = []
    for index, candidate in enumerate(candidates):
        text = normalize_content(candidate.content)
        repeat = next((e for e in existing if normalize_content(e.content) == text), None)
        same_slot = [
            e
            for e in existing
            if candidate.slot and e.slot == candidate.slot and e.subject == candidate.subject
        ]
        same_slot += [e for e in replaced_memories(candidate, existing) if e not in same_slot]
        if repeat is not None:
            decisions.append(ConsolidationDecision(index, Action.NOOP, target=repeat.key))
        elif same_slot:
            decisions.append(
                ConsolidationDecision(
                    index,
                    Action.INVALIDATE,
                    target=same_slot[0].key,
                    extra_targets=tuple(e.key for e in same_slot[1:]),
                )
            )
        else:
            decisions.append(ConsolidationDecision(index, Action.ADD))
    return decisions


def _same_slot(candidate: MemoryCandidate, memory: ExistingMemory) -> bool:
    return (
        bool(candidate.slot)
        and memory.slot == candidate.slot
        and (memory.subject == candidate.subject)
    )


def _words(text: str) -> set[str]:
    return set(re.findall(r"[\w']+", normalize_content(text)))


def _enriches(candidate: MemoryCandidate, memory: ExistingMemory) -> bool:
    """A slotless UPDATE is allowed only when the new text keeps every word of the old one
    ("User has a dog." → "User has a dog named Rex.")."""
    return (
        not candidate.slot
        and not memory.slot
        and memory.subject == candidate.subject
        and _words(memory.content) <= _words(candidate.content)
    )


def _reinforced(value: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    updated = dict(value)
    updated["importance"] = min(10, int(value.get("importance") or 5) + 1)
    updated["reinforcements"] = int(value.get("reinforcements") or 0) + 1
    updated["last_reinforced_at"] = now.isoformat()
    return updated


def plan_writes(
    candidates: Sequence[MemoryCandidate],
    existing: Sequence[ExistingMemory],
    decisions: Sequence[ConsolidationDecision],
    *,
    now: datetime,
    source: Mapping[str, Any] | None = None,
    new_key: Callable[[], str] = lambda: uuid.uuid4().hex,
) -> WritePlan:
    """Apply ``decisions`` to produce the writes of one turn (see module docs for guards).

    Args:
        candidates: The turn's candidates (after PII filtering).
        existing: Their neighbours, as offered to the consolidator.
        decisions: One per candidate (extra or out-of-range ones are ignored).
        now: The turn time (``valid_from`` default, ``invalid_at`` of superseded facts).
        source: Provenance stored with new memories (e.g. ``{"thread_id": ...}``).
        new_key: Key factory for new memories.

    Example:
        ```python
        from datetime import datetime, timezone

        from langgraph_recall.extraction.consolidation import plan_writes
        from langgraph_recall.extraction.types import Action, MemoryCandidate

        c = [MemoryCandidate("User likes tea.")]
        plan = plan_writes(c, [], [], now=datetime(2026, 1, 1, tzinfo=timezone.utc))
        assert plan.writes[0].action is Action.ADD
        ```
    """
    by_key = {memory.key: memory for memory in existing}
    chosen: dict[int, ConsolidationDecision] = {}
    for decision in decisions:
        if 0 <= decision.candidate < len(candidates) and decision.candidate not in chosen:
            chosen[decision.candidate] = decision
    plan = WritePlan()
    pending: dict[str, PlannedWrite] = {}
    seen_texts: set[str] = set()

    def add(index: int, candidate: MemoryCandidate, invalid_at: datetime | None = None) -> str:
        value = candidate_value(candidate, now=now, source=source)
        if invalid_at is not None:
            value["invalid_at"] = invalid_at.isoformat()
        key = new_key()
        pending[key] = PlannedWrite(key, value, Action.ADD, index)
        plan.counts["added"] += 1
        return key

    def current_value(memory: ExistingMemory) -> dict[str, Any]:
        planned = pending.get(memory.key)
        return dict(planned.value) if planned else dict(memory.value)

    for index, candidate in enumerate(candidates):
        text = normalize_content(candidate.content)
        if not text or text in seen_texts:
            plan.counts["skipped"] += 1
            continue
        seen_texts.add(text)
        decision = chosen.get(index, ConsolidationDecision(index, Action.ADD))
        replaced = {m.key for m in replaced_memories(candidate, existing)}
        if decision.action is Action.ADD and replaced:
            first, *others = sorted(replaced)
            decision = ConsolidationDecision(
                index, Action.INVALIDATE, target=first, extra_targets=tuple(others)
            )
        elif decision.action is Action.INVALIDATE and replaced:
            more = tuple(k for k in sorted(replaced) if k != decision.target)
            decision = dataclasses.replace(decision, extra_targets=decision.extra_targets + more)
        target = by_key.get(decision.target) if decision.target else None
        action = decision.action

        if action is not Action.ADD and target is None:
            plan.notes.append(f"candidate {index}: {action.value} names unknown target; added")
            action = Action.ADD
        if action is Action.ADD:
            repeat = next((e for e in existing if normalize_content(e.content) == text), None)
            if repeat is not None:
                action, target = Action.NOOP, repeat
        if (
            action is Action.NOOP
            and target is not None
            and _same_slot(candidate, target)
            and key_terms(candidate.content) != key_terms(target.content)
            and normalize_content(target.content) != text
        ):
            plan.notes.append(f"candidate {index}: NOOP would swallow a change; invalidating")
            action = Action.INVALIDATE
        if (
            action in (Action.UPDATE, Action.INVALIDATE)
            and target is not None
            and not _same_slot(candidate, target)
            and not (action is Action.INVALIDATE and target.key in replaced)
            and not (action is Action.UPDATE and _enriches(candidate, target))
        ):
            plan.notes.append(
                f"candidate {index}: {action.value} of {target.key} refused "
                "(different subject/slot); added instead"
            )
            action = Action.ADD
        assert action is Action.ADD or target is not None
        if action is Action.ADD:
            add(index, candidate)
        elif action is Action.NOOP and target is not None:
            pending[target.key] = PlannedWrite(
                target.key, _reinforced(current_value(target), now), Action.NOOP, index
            )
            plan.counts["reinforced"] += 1
        elif action is Action.UPDATE and target is not None:
            value = current_value(target)
            value["content"] = decision.content or candidate.content
            value["importance"] = max(int(value.get("importance") or 1), candidate.importance)
            value["kind"] = candidate.kind
            pending[target.key] = PlannedWrite(target.key, value, Action.UPDATE, index)
            plan.counts["updated"] += 1
        elif target is not None:
            starts = candidate.valid_from or now
            targets = [target] + [
                by_key[key]
                for key in decision.extra_targets
                if key in by_key
                and key != target.key
                and (_same_slot(candidate, by_key[key]) or key in replaced)
            ]
            newest_start = max(
                (parse_iso_datetime(t.value.get("valid_from")) or starts for t in targets),
                default=starts,
            )
            if starts < newest_start:
                add(index, candidate, invalid_at=newest_start)
                plan.notes.append(f"candidate {index}: older than {target.key}; stored as history")
                continue
            new_memory_key = add(index, candidate)
            for old in targets:
                value = current_value(old)
                if value.get("invalid_at"):
                    continue
                value["invalid_at"] = starts.isoformat()
                value["superseded_by"] = new_memory_key
                pending[old.key] = PlannedWrite(old.key, value, Action.INVALIDATE, index)
                plan.counts["invalidated"] += 1
    plan.writes = list(pending.values())
    return plan
