"""How a store runs one statement of a program: async (``_statements_sync`` is generated).

``prepare=False`` unless a statement asks otherwise: the store's statements are
parameter-sensitive (namespace ranges, query vectors, lexeme lists), and a server-side
prepared statement switches to a generic plan after a few runs — far slower searches on
large stores. It also keeps the store usable behind PgBouncer in transaction mode.
"""

from __future__ import annotations

from typing import Any

import psycopg

from langgraph_memory._pg.program import Rows, Stmt
from langgraph_memory.store.postgres._sql import BOOKKEEPING_GAVE_WAY, BOOKKEEPING_SETTINGS
from langgraph_memory.store.postgres._types import BOOKKEEPING_LOCK_TIMEOUT

__all__ = ["execute", "execute_isolated"]

AConn = psycopg.AsyncConnection[dict[str, Any]]
ACursor = psycopg.AsyncCursor[dict[str, Any]]


async def _rows(cursor: ACursor, stmt: Stmt) -> Rows:
    return await cursor.fetchall() if stmt.fetch and cursor.description else []


async def execute(conn: AConn, cursor: ACursor, stmt: Stmt) -> Rows | psycopg.Error:
    """Run ``stmt`` in the program's transaction; its rows (``[]`` unless ``fetch``), or
    with ``tolerate_error`` the database error (the statement then ran in a savepoint)."""
    prepare = False if stmt.prepare is None else stmt.prepare
    if stmt.tolerate_error:
        try:
            async with conn.transaction():
                await cursor.execute(stmt.sql, stmt.params, prepare=prepare)
        except psycopg.Error as exc:
            return exc
        return await _rows(cursor, stmt)
    await cursor.execute(stmt.sql, stmt.params, prepare=prepare)
    return await _rows(cursor, stmt)


async def execute_isolated(conn: AConn, cursor: ACursor, stmt: Stmt) -> Rows | psycopg.Error:
    """Run bookkeeping alone in its own short transaction (``Stmt.isolated``); a lock
    timeout or deadlock is returned, not raised."""
    prepare = False if stmt.prepare is None else stmt.prepare
    try:
        async with conn.transaction():
            await cursor.execute(
                BOOKKEEPING_SETTINGS, {"wait": BOOKKEEPING_LOCK_TIMEOUT}, prepare=False
            )
            if stmt.locks is not None:
                await cursor.execute(stmt.locks, stmt.params, prepare=prepare)
            await cursor.execute(stmt.sql, stmt.params, prepare=prepare)
            return await _rows(cursor, stmt)
    except BOOKKEEPING_GAVE_WAY as exc:
        return exc
