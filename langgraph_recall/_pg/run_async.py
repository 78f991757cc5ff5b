"""Running programs on Postgres: connectors, the runner, the probe and the pool factory.

A connector hands out cursors on a pool (concurrently) or on one connection (under a lock),
turns a dropped connection into :class:`BackendUnavailableError` (the one map of
:mod:`~langgraph_recall._pg.errors`), and runs a :data:`~langgraph_recall._pg.program.Program`
in one transaction -- in pipeline mode with a single sync when it can.
"""

from __future__ import annotations

# unasync: async-only
# The sync twin, run_sync.py, is generated from this file: edit here, then run
# `python scripts/unasync.py`.
# unasync: end
import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg import AsyncConnection, AsyncCursor
from psycopg.pq import TransactionStatus
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from langgraph_recall._pg.dsn import describe_target, validate_dsn
from langgraph_recall._pg.errors import SAVER, QueueTimeout, connect_error, translate_error
from langgraph_recall._pg.pool import (
    SAVER_POOL,
    IdleHealthCheck,
    PoolConfig,
    PoolRole,
    idle_autocommit,
    note_failure,
    pool_options,
    target_of,
)
from langgraph_recall._pg.program import Finished, Program, Rows, Stmt, T, finish_alone, start
from langgraph_recall.errors import BackendUnavailableError, ConfigurationError

__all__ = [
    "AsyncConn",
    "AsyncConnector",
    "abehind_pooler",
    "abuild_pool",
    "aexecute",
    "anotice_pooler",
    "aprobe",
    "arun_program",
]

# unasync: async-only
_timeout: Any = getattr(asyncio, "timeout", None)
"""``asyncio.timeout`` (Python 3.11+): a timer handle, no extra task like ``wait_for``."""
# unasync: end

AsyncConn = AsyncConnection[DictRow] | AsyncConnectionPool[AsyncConnection[DictRow]]
"""What a connector runs on: one connection, or a pool of them."""

_TRANSLATED = (PoolTimeout, psycopg.Error)
"""Errors the connectors turn into ours (:func:`~langgraph_recall._pg.errors.translate_error`)."""


async def aexecute(
    cur: AsyncCursor[DictRow], stmt: Stmt, *, prepare: bool | None = None
) -> Rows | psycopg.Error:
    """Run one statement in the cursor's transaction and return its rows (``[]`` unless
    ``fetch``); the one way every component executes a :class:`Stmt`.

    ``many`` runs ``executemany``; ``tolerate_error`` runs it in a savepoint and returns the
    database error instead of raising it. ``prepare`` is the caller's default for statements
    that leave ``Stmt.prepare`` as ``None`` (``None``: the connection's threshold).
    """
    if stmt.many:
        await cur.executemany(stmt.sql, stmt.params)
        return []
    ready = prepare if stmt.prepare is None else stmt.prepare
    if stmt.tolerate_error:
        try:
            async with cur.connection.transaction():
                await cur.execute(stmt.sql, stmt.params, prepare=ready)
        except psycopg.Error as exc:
            return exc
    else:
        await cur.execute(stmt.sql, stmt.params, prepare=ready)
    # no look at cur.description: in pipeline mode it is known only after the sync
    return await cur.fetchall() if stmt.fetch else []


async def arun_program(
    cur: AsyncCursor[DictRow], program: Program[T], first: Stmt | None = None
) -> T:
    """Execute ``program`` on a cursor and return its result.

    Args:
        cur: The cursor (the caller owns the transaction).
        program: The program.
        first: The program's first statement if the caller already took it (:func:`start`).
    """
    try:
        stmt = next(program) if first is None else first
        while True:
            rows = await aexecute(cur, stmt)
            if isinstance(rows, psycopg.Error):  # a tolerate_error statement: send it back
                raise rows  # pragma: no cover - no saver or lease program tolerates errors
            stmt = program.send(rows)
    except StopIteration as stop:
        result: T = stop.value
        return result


@asynccontextmanager
async def _apipelined_transaction(
    conn: AsyncConnection[DictRow],
) -> AsyncIterator[AsyncCursor[DictRow]]:
    """One transaction in pipeline mode with a single sync: explicit ``BEGIN``/``COMMIT``.

    psycopg's ``transaction()`` block adds a round trip in pipeline mode, which doubled
    the latency of a ``put``. On any error the aborted transaction is rolled back before
    the connection goes back to the pool."""
    try:
        async with conn.pipeline(), conn.cursor(binary=True, row_factory=dict_row) as cur:
            await cur.execute("BEGIN")
            yield cur
            await cur.execute("COMMIT")
    except BaseException:
        if not conn.closed and conn.info.transaction_status != TransactionStatus.IDLE:
            with contextlib.suppress(psycopg.Error):
                await conn.rollback()
        raise


async def _aexecute_alone(conn: AsyncConnection[DictRow], stmt: Stmt) -> Rows:
    """Run one self-contained statement: in autocommit (it commits by itself, in one
    round trip), or in a transaction block if the connection is not in autocommit."""
    block = contextlib.nullcontext() if idle_autocommit(conn) else conn.transaction()
    async with block, conn.cursor(binary=True, row_factory=dict_row) as cur:
        await cur.execute(stmt.sql, stmt.params, prepare=stmt.prepare)
        return await cur.fetchall() if stmt.fetch else []


class AsyncConnector:
    """Hands out cursors on a pool (concurrently) or one connection (under a lock), and
    turns dropped connections into :class:`BackendUnavailableError`."""

    def __init__(self, conn: AsyncConn, lock: asyncio.Lock | None = None) -> None:
        if not isinstance(conn, (AsyncConnection, AsyncConnectionPool)):
            raise ConfigurationError(
                f"expected a psycopg AsyncConnection or AsyncConnectionPool, got "
                f"{type(conn).__name__}; or use from_conn_string(dsn)"
            )
        self.conn = conn
        self.lock = lock or asyncio.Lock()
        self.target = target_of(conn)
        self.supports_pipeline = psycopg.Capabilities().has_pipeline()
        # unasync: async-only
        self._gate_size = conn.max_size if isinstance(conn, AsyncConnectionPool) else 1
        self._gate = asyncio.Semaphore(self._gate_size)
        # unasync: end

    # unasync: async-only
    async def _enter_gate(self, timeout: float) -> None:
        """Wait for one of ``max_size`` permits before asking the pool for a connection.

        When more coroutines want a connection than the pool has, they queue here on a
        plain semaphore instead of in the pool's waiting queue, whose per-request
        condition variable and timeout task cost several times more CPU (with LangGraph's
        background puts, 8 clients keep ~2x as many calls in flight as a pool of 8 has
        connections). Waiting is bounded by the pool's ``timeout`` as before."""
        if not self._gate.locked():
            await self._gate.acquire()  # a permit is free: returns at once
            return
        try:
            if _timeout is not None:
                async with _timeout(timeout):
                    await self._gate.acquire()
            else:  # Python 3.10
                await asyncio.wait_for(self._gate.acquire(), timeout)
        except (TimeoutError, asyncio.TimeoutError):
            raise QueueTimeout(timeout, self._gate_size) from None

    # unasync: end
    @asynccontextmanager
    async def connection(self) -> AsyncIterator[AsyncConnection[DictRow]]:
        """A connection for one unit of work: committed if it ends in a transaction,
        rolled back on error, and back to the pool afterwards."""
        try:
            if isinstance(self.conn, AsyncConnectionPool):
                # unasync: async-only
                await self._enter_gate(self.conn.timeout)
                try:
                    conn = await self.conn.getconn()
                except BaseException:
                    self._gate.release()
                    raise
                # unasync: end
                # unasync: sync-only
                # conn = self.conn.getconn()
                # unasync: end
                try:
                    yield conn
                except BaseException:
                    if conn.pgconn.transaction_status != TransactionStatus.IDLE:
                        with contextlib.suppress(psycopg.Error):
                            await conn.rollback()
                    raise
                else:
                    if conn.pgconn.transaction_status != TransactionStatus.IDLE:
                        await conn.commit()
                finally:
                    # unasync: async-only
                    try:
                        await self.conn.putconn(conn)
                    finally:
                        self._gate.release()
                    # unasync: end
                    # unasync: sync-only
                    # self.conn.putconn(conn)
                    # unasync: end
            else:
                async with self.lock:
                    yield self.conn
        except _TRANSLATED as exc:
            note_failure(self.conn, exc)
            translated = translate_error(self.target, exc, SAVER, self.conn)
            if translated is exc:
                raise
            raise translated from exc

    @asynccontextmanager
    async def cursor(
        self, *, transaction: bool = False, pipeline: bool = False
    ) -> AsyncIterator[AsyncCursor[DictRow]]:
        """A cursor (dict rows, binary), in a transaction (pipelined) if asked."""
        async with self.connection() as conn:
            if not transaction:
                async with conn.cursor(binary=True, row_factory=dict_row) as cur:
                    yield cur
            elif pipeline and self.supports_pipeline and idle_autocommit(conn):
                async with _apipelined_transaction(conn) as cur:
                    yield cur
            elif pipeline and self.supports_pipeline:
                async with (
                    conn.pipeline(),
                    conn.transaction(),
                    conn.cursor(binary=True, row_factory=dict_row) as cur,
                ):
                    yield cur
            else:
                async with (
                    conn.transaction(),
                    conn.cursor(binary=True, row_factory=dict_row) as cur,
                ):
                    yield cur

    async def run(self, program: Program[T], *, pipeline: bool = True) -> T:
        """Run ``program`` in one transaction (an ``alone`` statement: on its own)."""
        first = start(program)
        if isinstance(first, Finished):
            return first.value
        if first.alone:
            async with self.connection() as conn:
                rows = await _aexecute_alone(conn, first)
            return finish_alone(program, rows)
        async with self.cursor(transaction=True, pipeline=pipeline) as cur:
            return await arun_program(cur, program, first)


async def aprobe(
    conn_string: str, connect_timeout: int, extra: dict[str, Any] | None = None
) -> str:
    """Check the DSN parses and the server answers; return its ``host:port``.

    Raises:
        InvalidConnectionStringError: malformed DSN.
        ConfigurationError: missing database/role, bad credentials (see
            :func:`~langgraph_recall._pg.errors.connect_error`).
        BackendUnavailableError: the server cannot be reached.
    """
    target = describe_target(validate_dsn(conn_string))
    kwargs = {**(extra or {}), "connect_timeout": connect_timeout, "autocommit": True}
    try:
        conn = await AsyncConnection.connect(conn_string, **kwargs)
        await conn.close()
    except psycopg.Error as exc:
        raise connect_error(target, exc) from exc
    return target


async def abehind_pooler(conn: AsyncConnection[Any]) -> bool:
    """Whether ``conn`` goes through a pooler (PgBouncer, and the like) to its server.

    A pooler must answer cancel requests itself, so the backend key it sends the client is
    its own: the server process id the connection reports (``conn.info.backend_pid``) is not
    the one that runs its queries (``pg_backend_pid()``). One round trip; leaves an idle
    autocommit connection idle.
    """
    cur = await conn.execute("SELECT pg_backend_pid() AS pid")
    row = await cur.fetchone()
    server_pid = row["pid"] if isinstance(row, dict) else row[0] if row else None
    return server_pid != conn.info.backend_pid


async def anotice_pooler(conn: AsyncConnection[Any]) -> None:
    """Pool ``configure`` callback: no server-side prepared statements on a connection that
    goes through a pooler (:func:`abehind_pooler`).

    A transaction pooler (PgBouncer in transaction mode, and the like) hands each transaction
    whichever server connection is free, so a statement prepared on one is missing on the next
    (or its name already taken there): with psycopg's prepared statements every call failed
    behind PgBouncer 1.18. One round trip per new connection.
    """
    if conn.prepare_threshold is None:
        return
    if await abehind_pooler(conn):
        conn.prepare_threshold = None
    if conn.info.transaction_status != TransactionStatus.IDLE:
        await conn.commit()


async def abuild_pool(
    conn_string: str,
    pool_config: PoolConfig | None,
    prepare_threshold: int | None,
    connect_timeout: int,
    role: PoolRole = SAVER_POOL,
) -> AsyncConnectionPool[AsyncConnection[DictRow]]:
    """The one pool factory: an opened pool (autocommit, dict rows, idle connections
    health-checked by :class:`~langgraph_recall._pg.pool.IdleHealthCheck`, no server-side
    prepared statements behind a transaction pooler: :func:`anotice_pooler`).

    Call :func:`aprobe` first: it names a refused or unreachable server clearly.

    Raises:
        BackendUnavailableError: The pool could not open its first connections in time.
    """
    health = IdleHealthCheck()
    pool: AsyncConnectionPool[AsyncConnection[DictRow]] = AsyncConnectionPool(
        conn_string,
        check=health.acheck,
        configure=anotice_pooler,
        **pool_options(pool_config, prepare_threshold, connect_timeout, role),
    )
    health.watch(pool)
    try:
        await pool.open(wait=True, timeout=float(connect_timeout) + 5.0)
    except Exception as exc:
        await pool.close()
        raise BackendUnavailableError(
            f"Postgres at {target_of(pool)} accepted a first connection but the pool could "
            f"not open its connections in time: {exc}"
        ) from exc
    return pool
