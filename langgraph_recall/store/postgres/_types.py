"""The Postgres memory store's programs, pool settings and setup report (pure)."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from langgraph_recall._pg.program import Stmt
from langgraph_recall.store._embedding import EmbedDocuments, EmbedQueries
from langgraph_recall.store.postgres._migrations import VectorMode

__all__ = [
    "BOOKKEEPING_LOCK_TIMEOUT",
    "Program",
    "Request",
    "SetupReport",
]

T = TypeVar("T")

BOOKKEEPING_LOCK_TIMEOUT = "200ms"
"""How long an isolated bookkeeping statement waits for a row lock before giving way (it is
retried with the next operation): far below ``deadlock_timeout`` (1 s by default), so the
bookkeeping statement, never a user's transaction, is the one that yields."""

Request = Stmt | EmbedDocuments | EmbedQueries
"""What a store program asks its runner for: a statement (see :class:`Stmt`) or embeddings."""

Program = Generator[Request, Any, T]
"""A store program returning ``T``. The runner sends back what each request produces: a
statement's rows (``[]`` unless ``fetch``), or the database error of a ``tolerate_error`` /
``isolated`` statement; the vectors of an embedding request."""


@dataclass(frozen=True)
class SetupReport:
    """What ``setup()`` found and did.

    Attributes:
        vector_mode: ``"pgvector"`` (HNSW index) or ``"exact"`` (no pgvector: exact
            search from an in-process matrix; same results).
        pgvector_version: installed pgvector version, if any.
        dims: embedding dimensions of the schema.
        schema_version: number of migrations applied in total.
        applied: versions applied by this call (empty when already up to date).
    """

    vector_mode: VectorMode
    pgvector_version: str | None
    dims: int
    schema_version: int
    applied: tuple[int, ...]
