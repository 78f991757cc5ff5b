"""Ranking glue: a backend's candidate rows, fused by :mod:`langgraph_recall.retrieval` (pure).

A backend's hybrid search returns candidate rows (the union of its lexical and vector
candidates) with these columns: ``id``, ``ns``, ``key``, ``value`` (JSON text),
``created_at``, ``updated_at``, ``valid_from``, ``importance``, ``access_count``,
``last_accessed_at``, ``lexical_score``, ``lexical_rank``, ``vector_rank``.
:func:`rank_rows` ranks them and returns the requested page.

Example:
    ```python
    from datetime import datetime, timezone

    from langgraph_recall.retrieval import RetrievalConfig
    from langgraph_recall.store._ranking import rank_rows
    from langgraph_recall.store._types import MemorySearchOp

    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    row = {
        "id": 1, "ns": "a", "key": "k", "value": '{"content": "tea"}',
        "created_at": now, "updated_at": now, "valid_from": None, "importance": None,
        "access_count": 0, "last_accessed_at": None,
        "lexical_score": 1.0, "lexical_rank": 1, "vector_rank": 1,
    }
    page = rank_rows([row], {1: 0.9}, MemorySearchOp(("a",), query="tea"), RetrievalConfig())
    assert page[0][0]["value"] == {"content": "tea"}
    ```
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import SearchItem

from langgraph_recall.retrieval import (
    Candidate,
    RetrievalConfig,
    ScoreBreakdown,
    asks_about_the_past,
    query_time_window,
    rank_explained,
    states_change,
)
from langgraph_recall.retrieval._updates import (
    ValueStatement,
    query_terms,
    restated_first,
    value_statement,
)
from langgraph_recall.store._namespace import decode_namespace
from langgraph_recall.store._types import ExplainedSearchItem, MemorySearchOp

__all__ = ["rank_rows", "search_item"]


_UNLINKED: tuple[float, tuple[str, ...]] = (0.0, ())


def _as_utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _statement(value: Mapping[str, Any]) -> str:
    """The one statement a memory makes: its ``content`` (or ``text``), else its string
    fields. An episode (``kind: episodic``) records a whole turn, whose words of change may
    be about anything in it: it states nothing here (measured on BEAM: lifting episodes
    costs recall and lifts no update)."""
    if value.get("kind") == "episodic":
        return ""
    for field in ("content", "text"):
        if isinstance(value.get(field), str):
            return str(value[field])
    return " ".join(v for k, v in value.items() if isinstance(v, str) and k != "context")


# An episode's value as JSON text (jsonb prints ": "; a string's own quotes are escaped).
_EPISODE = ('"kind": "episodic"', '"kind":"episodic"')


def _states_change(raw: str) -> bool:
    """Whether the memory whose value is the JSON text ``raw`` states a change; the text
    is parsed only when it holds a change word and is not an episode's (a search ranks up
    to ``lexical_candidates + vector_candidates`` rows and returns a page of them)."""
    if any(mark in raw for mark in _EPISODE) or not states_change(raw):
        return False
    value = json.loads(raw)
    return isinstance(value, dict) and states_change(_statement(value))


def rank_rows(
    rows: Sequence[Mapping[str, Any]],
    similarity: Mapping[int, float | None],
    op: MemorySearchOp,
    config: RetrievalConfig,
    links: Mapping[int, tuple[float, tuple[str, ...]]] | None = None,
) -> list[tuple[dict[str, Any], ScoreBreakdown]]:
    """The page ``op`` asks for of the candidate ``rows``, ranked, each with its score terms.

    Args:
        rows: The candidates (columns: see the module docs).
        similarity: Each candidate's cosine similarity to the query, by id (absent: none).
        op: The search (query, ``as_of``, offset and limit).
        config: The ranking weights.
        links: Each linked candidate's link strength to the query's entities and the
            entities that link it, by id (absent: not linked).
    """
    links = links or {}
    by_id = {row["id"]: row for row in rows}
    updates = bool(op.query and config.update_weight and not asks_about_the_past(op.query))
    candidates = [
        Candidate(
            id=row["id"],
            lexical_score=row["lexical_score"],
            lexical_rank=row["lexical_rank"],
            vector_similarity=similarity.get(row["id"]),
            vector_rank=row["vector_rank"],
            importance=row["importance"],
            event_time=row["valid_from"] or row["updated_at"],
            last_accessed=row["last_accessed_at"],
            access_count=row["access_count"],
            states_change=functools.partial(_states_change, row["value"]) if updates else False,
            entity_link=link,
            entities=via,
        )
        for row in rows
        for link, via in (links.get(row["id"], _UNLINKED),)
    ]
    now = _as_utc(op.as_of) if op.as_of is not None else datetime.now(timezone.utc)
    window = query_time_window(op.query) if op.query and config.time_match_weight else None
    end = op.offset + op.limit
    ranked = rank_explained(
        candidates, config=config, now=now, time_window=window, updates=updates, limit=end
    )
    # each shown memory's value, parsed once (the update reader reads the same ones)
    values = {candidate.id: json.loads(by_id[candidate.id]["value"]) for candidate, _ in ranked}
    if updates and op.query:
        ranked = _restated_first(ranked, values, op.query)
    return [({**by_id[c.id], "value": values[c.id]}, parts) for c, parts in ranked[op.offset :]]


_MARGIN = 1e-6


def _said(value: Any) -> str:
    """What a memory says, for its value statements: ``content`` (an episode's turn, not its
    context), else its string fields."""
    if not isinstance(value, dict):
        return ""
    for field in ("content", "text"):
        if isinstance(value.get(field), str):
            return str(value[field])
    return " ".join(v for k, v in value.items() if isinstance(v, str) and k != "context")


def _restated_first(
    ranked: list[tuple[Candidate, ScoreBreakdown]], values: Mapping[Any, Any], query: str
) -> list[tuple[Candidate, ScoreBreakdown]]:
    """Within the shown results and those before them (``ranked``, the first ``offset +
    limit``), a newer memory that states a change of the value the query asks about goes
    just above an older one stating that value
    (:func:`~langgraph_recall.retrieval.restated_first`): the update term is the score it
    takes. Nothing enters or leaves the page."""
    asked = query_terms(query)
    if len(asked) < 2 or len(ranked) < 2:
        return ranked
    statements: list[tuple[ValueStatement, datetime | None]] = [
        (value_statement(_said(values[c.id]), asked, query), c.event_time) for c, _ in ranked
    ]
    order = restated_first(statements)
    if order == list(range(len(ranked))):
        return ranked
    lifted: list[tuple[Candidate, ScoreBreakdown]] = []
    floor: float | None = None  # the score of the result below (bottom up)
    for index in reversed(order):
        candidate, parts = ranked[index]
        if floor is not None and parts.score <= floor:
            lift = floor - parts.score + _MARGIN
            parts = replace(parts, update=parts.update + lift, score=parts.score + lift)
        floor = parts.score
        lifted.append((candidate, parts))
    return lifted[::-1]


def search_item(row: Mapping[str, Any], parts: ScoreBreakdown | None, explain: bool) -> SearchItem:
    """A search result; with ``explain``, an :class:`ExplainedSearchItem` carrying ``parts``."""
    fields: dict[str, Any] = {
        "namespace": decode_namespace(row["ns"]),
        "key": row["key"],
        "value": row["value"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "score": None if parts is None else parts.score,
    }
    return ExplainedSearchItem(**fields, explanation=parts) if explain else SearchItem(**fields)
