"""How a store runs its isolated bookkeeping statements: async (``_statements_sync`` is
generated). Every statement runs through the one executor of ``_pg`` (``aexecute``), with
the store's default :data:`STORE_PREPARE`: ``prepare=False`` unless a statement asks
otherwise: the store's statements are parameter-sensitive (namespace ranges, query
vectors, lexeme lists), and a server-side prepared statement switches to a generic plan
after a few runs — far slower searches on large stores. It also keeps the store usable
behind PgBouncer in transaction mode.
"""

from __future__ import annotations

from typing import Any

import psycopg

from langgraph_recall._pg.program import Rows, Stmt
from langgraph_recall._pg.run_async import aexecute
from langgraph_recall.store.postgres._sql import (
    BOOKKEEPING_GAVE_WAY,
    BOOKKEEPING_REFUSED,
    BOOKKEEPING_SETTINGS,
)
from langgraph_recall.store.postgres._types import BOOKKEEPING_LOCK_TIMEOUT

__all__ = ["STORE_PREPARE", "execute_isolated"]

STORE_PREPARE = False
"""The store's default ``prepare`` (see above)."""

AConn = psycopg.AsyncConnection[dict[str, Any]]
ACursor = psycopg.AsyncCursor[dict[str, Any]]


async def execute_isolated(conn: AConn, cursor: ACursor, stmt: Stmt) -> Rows | psycopg.Error:
    """Run bookkeeping alone in its own short transaction (``Stmt.isolated``); a lock
    timeout, a deadlock or a read-only server is returned, not raised."""
    prepare = STORE_PREPARE if stmt.prepare is None else stmt.prepare
    try:
        async with conn.transaction():
            await cursor.execute(
                BOOKKEEPING_SETTINGS, {"wait": BOOKKEEPING_LOCK_TIMEOUT}, prepare=False
            )
            if stmt.locks is not None:
                await cursor.execute(stmt.locks, stmt.params, prepare=prepare)
            return await aexecute(cursor, stmt, prepare=STORE_PREPARE)
    except (*BOOKKEEPING_GAVE_WAY, BOOKKEEPING_REFUSED) as exc:
        return exc
