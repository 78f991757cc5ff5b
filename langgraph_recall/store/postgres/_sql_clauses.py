"""The fragments every statement of the Postgres memory store shares (pure).

The columns a read selects (:data:`ITEM_COLUMNS`, :data:`CANDIDATE_COLUMNS`, with
:data:`ACCESS_JOIN`), what an item must be to be seen (:data:`NOT_EXPIRED`,
:data:`VALID_AT`, :func:`visible_clause`) and a namespace scope (:data:`SCOPE`,
:func:`scope_clause`). :mod:`~langgraph_recall.store.postgres._sql` re-exports them.

Example:
    ```python
    from langgraph_recall.store.postgres._sql_clauses import scope_clause, visible_clause

    assert "ns_lo" in scope_clause(True).as_string(None)
    assert "as_of" in visible_clause(False).as_string(None)
    ```
"""

from __future__ import annotations

from psycopg import sql

__all__ = [
    "ACCESS_JOIN",
    "CANDIDATE_COLUMNS",
    "ITEM_COLUMNS",
    "NOT_EXPIRED",
    "NOT_EXPIRED_TEXT",
    "SCOPE",
    "VALID_AT",
    "element",
    "scope_clause",
    "stats_scope",
    "visible_clause",
]

_OTHER_COLUMNS = (
    "i.created_at, i.updated_at, i.valid_from, i.importance, "
    "i.access_count + coalesce(a.access_count, 0) AS access_count, "
    "coalesce(a.last_accessed_at, i.last_accessed_at) AS last_accessed_at, i.ttl_minutes"
)
ITEM_COLUMNS = sql.SQL("i.id, i.ns, i.key, i.value, " + _OTHER_COLUMNS)
# A hybrid search returns ~100 candidates for one page: their values come back as JSON
# text, and only the page's values are decoded.
CANDIDATE_COLUMNS = sql.SQL("i.id, i.ns, i.key, i.value::text AS value, " + _OTHER_COLUMNS)
# Access counters live in lgm_memory_access (narrow rows, HOT updates); every query that
# selects ITEM_COLUMNS joins them with this clause.
ACCESS_JOIN = sql.SQL("LEFT JOIN lgm_memory_access a ON a.id = i.id")
# An item expires at ``expires_at`` (set by its put) unless a read has since refreshed its TTL:
# refreshes go to the narrow ``lgm_memory_access.refreshed_until``, because rewriting the
# wide item row is a non-HOT update (new HNSW, GIN and btree entries) on every search, which
# grows with the store (``python -m langgraph_recall.bench.store`` at 100k memories shows it). The
# sweeper folds a refresh back into ``expires_at`` when it is due.
NOT_EXPIRED_TEXT = "(i.expires_at IS NULL OR i.expires_at > now() OR lgm_memory_refreshed(i.id))"
NOT_EXPIRED = sql.SQL(NOT_EXPIRED_TEXT)
VALID_AT = sql.SQL(
    "i.valid_from <= coalesce(%(as_of)s::timestamptz, now()) AND "
    "(i.invalid_at IS NULL OR i.invalid_at > coalesce(%(as_of)s::timestamptz, now()))"
)
SCOPE = sql.SQL("i.ns >= %(ns_lo)s AND i.ns < %(ns_hi)s")


def scope_clause(scoped: bool) -> sql.Composable:
    """``true`` or the C-collation range predicate on ``i.ns``."""
    return SCOPE if scoped else sql.SQL("true")


def visible_clause(include_invalid: bool) -> sql.Composable:
    """Not expired, and (unless ``include_invalid``) valid at ``%(as_of)s`` (default now)."""
    if include_invalid:
        return NOT_EXPIRED
    return sql.SQL("{} AND {}").format(NOT_EXPIRED, VALID_AT)


def element(vector_type: str) -> sql.Composable:
    """The pgvector type of embeddings and query vectors: ``vector`` or ``halfvec``."""
    return sql.SQL("halfvec" if vector_type == "halfvec" else "vector")


def stats_scope(scoped: bool) -> sql.Composable:
    """``true`` or the range predicate on ``lgm_memory_ns_stats s``'s namespaces."""
    return sql.SQL("s.ns >= %(ns_lo)s AND s.ns < %(ns_hi)s" if scoped else "true")
