"""The memory store's records and options, whatever the backend (pure)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, NamedTuple

from langgraph.store.base import SearchItem

from langgraph_recall.errors import ConfigurationError, InvalidValueError
from langgraph_recall.retrieval import ScoreBreakdown
from langgraph_recall.store._bounds import check_text

__all__ = [
    "DecayConfig",
    "ExplainedSearchItem",
    "HistoryEntry",
    "MemorySearchOp",
    "acting_as",
    "current_actor",
]

MAX_DECAY_SPAN = timedelta(days=365_250)  # 1,000 years: now() - min_age stays a valid time
_ACTOR: ContextVar[str | None] = ContextVar("langgraph_recall_actor", default=None)


@contextlib.contextmanager
def acting_as(actor: str | None) -> Iterator[None]:
    """Record ``actor`` in the audit history of every write made inside the block.

    Example:
        ```python
        from langchain_core.embeddings import DeterministicFakeEmbedding

        from langgraph_recall.store.postgres import PostgresMemoryStore, acting_as

        index = {"dims": 384, "embed": DeterministicFakeEmbedding(size=384)}
        with PostgresMemoryStore.from_conn_string(DB_URI, index=index) as store:
            store.setup()
            with acting_as("extract-node"):
                store.put(("memories", "u1"), "k", {"content": "likes tea"})
            assert store.history(("memories", "u1"), "k")[-1].actor == "extract-node"
        ```
    """
    if actor is not None:
        if not isinstance(actor, str):
            raise InvalidValueError(f"actor must be a string or None, got {type(actor).__name__}")
        check_text(actor, "actor")
    token = _ACTOR.set(actor)
    try:
        yield
    finally:
        _ACTOR.reset(token)


class MemorySearchOp(NamedTuple):
    """``SearchOp`` with the memory store's temporal options."""

    namespace_prefix: tuple[str, ...]
    filter: dict[str, Any] | None = None
    limit: int = 10
    offset: int = 0
    query: str | None = None
    refresh_ttl: bool = True
    as_of: datetime | None = None
    include_invalid: bool = False
    explain: bool = False


class ExplainedSearchItem(SearchItem):
    """A ``SearchItem`` from ``search(..., explain=True)``: also why it scored what it did.

    ``score`` is the store's fused ranking score (lexical + vector relevance, recency,
    importance, access, time match), **not** a vector similarity; ``explanation`` holds
    each term of it (they add up to ``score``) and the raw BM25 score and cosine
    similarity (``explanation.similarity``). ``None`` for searches without a query.
    """

    __slots__ = ("explanation",)

    def __init__(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        created_at: datetime,
        updated_at: datetime,
        score: float | None = None,
        explanation: ScoreBreakdown | None = None,
    ) -> None:
        super().__init__(namespace, key, value, created_at, updated_at, score)
        self.explanation = explanation

    def dict(self) -> dict[str, Any]:
        """``SearchItem.dict()`` plus ``explanation`` (a dict, or ``None``)."""
        from dataclasses import asdict

        result: dict[str, Any] = super().dict()
        result["explanation"] = None if self.explanation is None else asdict(self.explanation)
        return result


@dataclass(frozen=True)
class HistoryEntry:
    """One audit record of a memory: ``add``, ``update``, ``invalidate``, ``delete``, ``expire``."""

    namespace: tuple[str, ...]
    key: str
    action: str
    old_text: str | None
    new_text: str | None
    old_value: dict[str, Any] | None
    new_value: dict[str, Any] | None
    actor: str | None
    at: datetime


@dataclass(frozen=True)
class DecayConfig:
    """Decay-based forgetting: retire memories whose value has decayed below ``threshold``.

    value = importance/10 × 0.5^(age since last access / ``half_life``) × (1 + ln(1 + access_count))
    (importance defaults to 5). Only memories older than ``min_age`` are considered.

    Example:
        ```python
        from langgraph_recall.store._types import DecayConfig

        from datetime import timedelta

        DecayConfig(threshold=0.05, half_life=timedelta(days=30), mode="delete")
        ```
    """

    threshold: float = 0.05
    half_life: timedelta = timedelta(days=30)
    min_age: timedelta = timedelta(days=7)
    mode: Literal["invalidate", "delete"] = "invalidate"
    kinds: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        threshold = self.threshold
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise ConfigurationError("DecayConfig.threshold must be a number")
        try:
            finite = math.isfinite(float(threshold))
        except OverflowError:  # an int beyond float
            finite = False
        if not finite:
            raise ConfigurationError("DecayConfig.threshold must be a finite number")
        for name in ("half_life", "min_age"):
            span = getattr(self, name)
            if not isinstance(span, timedelta) or not timedelta(0) <= span <= MAX_DECAY_SPAN:
                raise ConfigurationError(
                    f"DecayConfig.{name} must be a timedelta from 0 to 1,000 years"
                )
        if self.half_life.total_seconds() <= 0:
            raise ConfigurationError("DecayConfig.half_life must be positive")
        if self.mode not in ("invalidate", "delete"):
            raise ConfigurationError("DecayConfig.mode must be 'invalidate' or 'delete'")
        kinds = self.kinds
        if kinds is not None and (
            not isinstance(kinds, (tuple, list, frozenset, set))
            or not all(isinstance(kind, str) for kind in kinds)
        ):
            raise ConfigurationError("DecayConfig.kinds must be a tuple of kind names or None")
        for kind in kinds or ():
            check_text(kind, "a DecayConfig kind", error=ConfigurationError)


def current_actor() -> str | None:
    """The actor set by the innermost :func:`acting_as` block (``None`` outside)."""
    return _ACTOR.get()
