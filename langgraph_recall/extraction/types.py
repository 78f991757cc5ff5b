"""Data types shared by extractors, consolidators and the ``extract`` node.

A turn is turned into :class:`MemoryCandidate` objects (by an extractor), compared
with :class:`ExistingMemory` neighbours from the store, and each candidate gets a
:class:`ConsolidationDecision` (``ADD``, ``UPDATE``, ``INVALIDATE`` or ``NOOP``).

Example:
    ```python
    from langgraph_recall.extraction.types import Action, ConsolidationDecision

    decision = ConsolidationDecision(candidate=0, action=Action.ADD)
    assert decision.action is Action.ADD
    ```
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from langchain_core.messages import BaseMessage

__all__ = [
    "MEMORY_KINDS",
    "Action",
    "ConsolidationDecision",
    "ExistingMemory",
    "MemoryCandidate",
    "MemoryExtractor",
]

MEMORY_KINDS = ("semantic", "episodic", "procedural", "preference", "reflection")
"""The memory kinds the store understands."""


class Action(str, enum.Enum):
    """What consolidation does with one candidate."""

    ADD = "ADD"
    """Store the candidate as a new memory."""
    UPDATE = "UPDATE"
    """Rewrite the target memory in place (same fact, richer wording)."""
    INVALIDATE = "INVALIDATE"
    """The candidate supersedes the target (same subject/slot): close the target's
    validity interval (``invalid_at``) and store the candidate."""
    NOOP = "NOOP"
    """The candidate repeats the target: reinforce the target, store nothing new."""


@dataclass(frozen=True)
class MemoryCandidate:
    """A memory proposed by an extractor, before PII filtering and consolidation.

    Attributes:
        content: One self-contained sentence, third person ("User lives in Beijing.").
        kind: One of :data:`MEMORY_KINDS`.
        importance: 1 (trivia) to 10 (critical, e.g. an allergy).
        subject: Who the fact is about (``"user"`` by default).
        slot: The attribute the fact fills (``"location"``, ``"employer"``,
            ``"preference:python"``); facts with the same subject and slot supersede
            each other. ``None`` for free-form facts.
        valid_from: When the fact became true (a stated date, resolved), else ``None``
            meaning "when it was said".
        replaces: Earlier memories this one supersedes, each named by a phrase the old
            memory's text contains ("Django" for "I switched from Django to FastAPI"), by
            its key, or by a slot family ending in ``*`` (``"uses:*"``: the newest memory
            of that family, for "I switched to FastAPI"). Consolidation closes those memories
            (same subject only; kept as history) even when their slot differs.
        entities: The people, places, organisations and projects it names, as a model
            names them (``("Ana", "Lisbon")``); stored as the memory's ``entities``, which
            the store links it through. Empty: the store finds them in its text.

    Example:
        ```python
        from langgraph_recall.extraction.types import MemoryCandidate

        c = MemoryCandidate("User lives in Beijing.", slot="location")
        assert c.subject == "user"
        ```
    """

    content: str
    kind: str = "semantic"
    importance: int = 5
    subject: str = "user"
    slot: str | None = None
    valid_from: datetime | None = None
    replaces: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExistingMemory:
    """A stored memory offered to consolidation as a neighbour of the candidates.

    Example:
        ```python
        from langgraph_recall.extraction.types import ExistingMemory

        m = ExistingMemory(key="k1", value={"content": "User likes tea.", "slot": "p:tea"})
        assert m.content == "User likes tea." and m.slot == "p:tea"
        ```
    """

    key: str
    value: Mapping[str, Any]
    namespace: tuple[str, ...] = ()
    score: float | None = None

    @property
    def content(self) -> str:
        """The memory text."""
        return str(self.value.get("content", ""))

    @property
    def slot(self) -> str | None:
        """The memory's slot, if any."""
        slot = self.value.get("slot")
        return str(slot) if slot else None

    @property
    def subject(self) -> str:
        """The memory's subject (``"user"`` when unset)."""
        return str(self.value.get("subject") or "user")


@dataclass(frozen=True)
class ConsolidationDecision:
    """The consolidation verdict for candidate number ``candidate``.

    Attributes:
        candidate: Index into the turn's candidate list.
        action: See :class:`Action`.
        target: Key of the existing memory the action applies to (``UPDATE``,
            ``INVALIDATE``, ``NOOP``).
        content: New text for ``UPDATE`` (defaults to the candidate's text).

    Example:
        ```python
        from langgraph_recall.extraction.types import Action, ConsolidationDecision

        d = ConsolidationDecision(0, Action.NOOP, target="k1")
        assert d.target == "k1"
        ```
    """

    candidate: int
    action: Action
    target: str | None = None
    content: str | None = None
    extra_targets: tuple[str, ...] = field(default=())
    """Further same-slot memories an ``INVALIDATE`` closes (e.g. two stale locations)."""


@runtime_checkable
class MemoryExtractor(Protocol):
    """What the ``extract`` node needs from an extractor.

    ``uses_llm`` tells the node whether ``extract``/``consolidate`` each cost one model
    call (it counts them). ``extract`` receives the messages of the turn and the turn's
    time (for resolving "since last May"); ``consolidate`` receives all candidates of
    the turn and the union of their nearest stored memories and answers in one call.
    """

    uses_llm: bool

    def extract(self, messages: Sequence[BaseMessage], *, now: datetime) -> list[MemoryCandidate]:
        """Propose candidate memories for the turn."""
        ...

    async def aextract(
        self, messages: Sequence[BaseMessage], *, now: datetime
    ) -> list[MemoryCandidate]:
        """Async :meth:`extract`."""
        ...

    def consolidate(
        self, candidates: Sequence[MemoryCandidate], existing: Sequence[ExistingMemory]
    ) -> list[ConsolidationDecision]:
        """Decide ADD / UPDATE / INVALIDATE / NOOP for every candidate (one batch)."""
        ...

    async def aconsolidate(
        self, candidates: Sequence[MemoryCandidate], existing: Sequence[ExistingMemory]
    ) -> list[ConsolidationDecision]:
        """Async :meth:`consolidate`."""
        ...
