"""Connections for the Postgres savers and lease backends: pools built with the right
settings, cursors without an instance-wide lock on pools, and clear errors when the
server is unreachable or a connection was dropped."""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import time
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import psycopg
from psycopg import AsyncConnection, AsyncCursor, Connection, Cursor
from psycopg.pq import TransactionStatus
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from langgraph_memory.checkpoint.postgres import _common
from langgraph_memory.checkpoint.postgres._common import PoolConfig, Program, Stmt, run_program
from langgraph_memory.errors import (
    BackendUnavailableError,
    ConfigurationError,
    InvalidConnectionStringError,
)

__all__ = [
    "AsyncConn",
    "AsyncConnector",
    "IdleHealthCheck",
    "SyncConn",
    "SyncConnector",
    "abuild_pool",
    "aprobe",
    "arun_program",
    "build_pool",
    "connect_error",
    "probe",
]

_timeout: Any = getattr(asyncio, "timeout", None)
"""``asyncio.timeout`` (Python 3.11+): a timer handle, no extra task like ``wait_for``."""

SyncConn = Connection[DictRow] | ConnectionPool[Connection[DictRow]]
AsyncConn = AsyncConnection[DictRow] | AsyncConnectionPool[AsyncConnection[DictRow]]


def _target_of(conn: Any) -> str:
    if isinstance(conn, (ConnectionPool, AsyncConnectionPool)):
        conninfo = conn.conninfo
        try:
            return _common.describe_target(_common.validate_dsn(str(conninfo)))
        except InvalidConnectionStringError:
            return "(pool)"
    info = conn.info
    return _common.describe_target({"host": info.host, "port": info.port})


_TRANSLATED = (PoolTimeout, psycopg.Error)
"""Errors the connectors turn into ours (see ``_common.translate_error``)."""


def _idle_autocommit(conn: Connection[Any] | AsyncConnection[Any]) -> bool:
    """True when ``conn`` is in autocommit mode outside any transaction (pooled use)."""
    return bool(conn.autocommit) and conn.pgconn.transaction_status == TransactionStatus.IDLE


@contextmanager
def _pipelined_transaction(conn: Connection[DictRow]) -> Iterator[Cursor[DictRow]]:
    """One transaction in pipeline mode with a single sync: explicit ``BEGIN``/``COMMIT``.

    psycopg's ``transaction()`` block adds a round trip in pipeline mode, which doubled
    the latency of a ``put``. On any error the aborted transaction is rolled back before
    the connection goes back to the pool."""
    try:
        with conn.pipeline(), conn.cursor(binary=True, row_factory=dict_row) as cur:
            cur.execute("BEGIN")
            yield cur
            cur.execute("COMMIT")
    except BaseException:
        if not conn.closed and conn.info.transaction_status != TransactionStatus.IDLE:
            with contextlib.suppress(psycopg.Error):
                conn.rollback()
        raise


@asynccontextmanager
async def _apipelined_transaction(
    conn: AsyncConnection[DictRow],
) -> AsyncIterator[AsyncCursor[DictRow]]:
    """Async :func:`_pipelined_transaction`."""
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


def _execute_alone(conn: Connection[DictRow], stmt: Stmt) -> _common.Rows:
    """Run one self-contained statement: in autocommit (it commits by itself, in one
    round trip), or in a transaction block if the connection is not in autocommit."""
    block = contextlib.nullcontext() if _idle_autocommit(conn) else conn.transaction()
    with block, conn.cursor(binary=True, row_factory=dict_row) as cur:
        cur.execute(stmt.sql, stmt.params, prepare=stmt.prepare)
        return cur.fetchall() if stmt.fetch else []


async def _aexecute_alone(conn: AsyncConnection[DictRow], stmt: Stmt) -> _common.Rows:
    """Async :func:`_execute_alone`."""
    block = contextlib.nullcontext() if _idle_autocommit(conn) else conn.transaction()
    async with block, conn.cursor(binary=True, row_factory=dict_row) as cur:
        await cur.execute(stmt.sql, stmt.params, prepare=stmt.prepare)
        return await cur.fetchall() if stmt.fetch else []


class SyncConnector:
    """Hands out cursors on a pool (concurrently) or one connection (under a lock), and
    turns dropped connections into :class:`BackendUnavailableError`."""

    def __init__(self, conn: SyncConn, lock: threading.Lock | None = None) -> None:
        if not isinstance(conn, (Connection, ConnectionPool)):
            raise ConfigurationError(
                f"expected a psycopg Connection or ConnectionPool, got {type(conn).__name__}; "
                "or use from_conn_string(dsn)"
            )
        self.conn = conn
        self.lock = lock or threading.Lock()
        self.target = _target_of(conn)
        self.supports_pipeline = psycopg.Capabilities().has_pipeline()

    @contextmanager
    def connection(self) -> Iterator[Connection[DictRow]]:
        try:
            if isinstance(self.conn, ConnectionPool):
                conn = self.conn.getconn()
                try:
                    yield conn
                except BaseException:
                    if conn.pgconn.transaction_status != TransactionStatus.IDLE:
                        with contextlib.suppress(psycopg.Error):
                            conn.rollback()
                    raise
                else:
                    if conn.pgconn.transaction_status != TransactionStatus.IDLE:
                        conn.commit()
                finally:
                    self.conn.putconn(conn)
            else:
                with self.lock:
                    yield self.conn
        except _TRANSLATED as exc:
            translated = _common.translate_error(self.target, exc)
            if translated is exc:
                raise
            raise translated from exc

    @contextmanager
    def cursor(
        self, *, transaction: bool = False, pipeline: bool = False
    ) -> Iterator[Cursor[DictRow]]:
        with self.connection() as conn:
            if not transaction:
                with conn.cursor(binary=True, row_factory=dict_row) as cur:
                    yield cur
            elif pipeline and self.supports_pipeline and _idle_autocommit(conn):
                with _pipelined_transaction(conn) as cur:
                    yield cur
            elif pipeline and self.supports_pipeline:
                with (
                    conn.pipeline(),
                    conn.transaction(),
                    conn.cursor(binary=True, row_factory=dict_row) as cur,
                ):
                    yield cur
            else:
                with conn.transaction(), conn.cursor(binary=True, row_factory=dict_row) as cur:
                    yield cur

    def run(self, program: Program[_common.T], *, pipeline: bool = True) -> _common.T:
        """Run ``program`` in one transaction (an ``alone`` statement: on its own)."""
        first = _common.start(program)
        if isinstance(first, _common.Finished):
            return first.value
        if first.alone:
            with self.connection() as conn:
                return _common.finish_alone(program, _execute_alone(conn, first))
        with self.cursor(transaction=True, pipeline=pipeline) as cur:
            return run_program(cur, program, first)


# What the server (or libpq) says when the connection string itself is wrong: retrying
# cannot help, so these are configuration errors, not "unavailable". Connection errors carry
# no SQLSTATE in psycopg, hence the server's (English) messages.
_CONFIG_FAILURES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), fix)
    for pattern, fix in (
        (
            r'database "[^"]*" does not exist',
            "create it (CREATE DATABASE) or fix the dbname",
        ),
        (r'role "[^"]*" does not exist', "create it (CREATE ROLE ... LOGIN) or fix the DSN's user"),
        (r"password authentication failed", "check the user and password in the DSN"),
        (r"authentication failed", "check the user and credentials in the DSN"),
        (r"no password supplied", "add the password to the DSN (or a ~/.pgpass entry)"),
        (r"no pg_hba\.conf entry", "allow this client in the server's pg_hba.conf, or fix user/db"),
        (r"permission denied for database", "GRANT CONNECT on the database to this user"),
        (r"not permitted to log in", "ALTER ROLE ... LOGIN, or use another user"),
        (r"ssl was required|does not support ssl", "drop sslmode=require, or enable server SSL"),
    )
)


def connect_error(target: str, exc: BaseException) -> Exception:
    """The error to raise when connecting to ``target`` failed with ``exc``.

    A missing database or role, bad credentials, a refused ``pg_hba.conf`` entry or an SSL
    mismatch is a :class:`ConfigurationError` naming the cause and the fix (the
    server is up; retrying changes nothing); a refused/timed-out connection is a
    :class:`BackendUnavailableError`; a malformed option an
    :class:`InvalidConnectionStringError`.

    Example:
        ```python
        import psycopg

        err = connect_error("db:5432", psycopg.OperationalError(
            'connection failed: FATAL:  database "app" does not exist'))
        assert isinstance(err, ConfigurationError) and "CREATE DATABASE" in str(err)
        ```
    """
    detail = str(exc).strip()
    reason = next((line for line in detail.splitlines() if "FATAL" in line), "")
    if not reason:
        reason = detail.splitlines()[0] if detail else type(exc).__name__
    reason = reason.split("FATAL:", 1)[-1].strip()
    lowered = detail.lower()
    if isinstance(exc, psycopg.ProgrammingError):
        return InvalidConnectionStringError(
            f"invalid Postgres connection string for {target}: {reason}"
        )
    for pattern, fix in _CONFIG_FAILURES:
        if pattern.search(lowered):
            return ConfigurationError(
                f"Postgres at {target} refused the connection: {reason}. This is a "
                f"configuration problem, not an outage: {fix}."
            )
    return BackendUnavailableError(_common.unavailable_message(target, exc))


def probe(conn_string: str, connect_timeout: int, extra: dict[str, Any] | None = None) -> str:
    """Check the DSN parses and the server answers; return its ``host:port``.

    Raises:
        InvalidConnectionStringError: malformed DSN.
        ConfigurationError: missing database/role, bad credentials (see :func:`connect_error`).
        BackendUnavailableError: the server cannot be reached.
    """
    target = _common.describe_target(_common.validate_dsn(conn_string))
    kwargs = {**(extra or {}), "connect_timeout": connect_timeout, "autocommit": True}
    try:
        with psycopg.connect(conn_string, **kwargs):
            pass
    except (psycopg.ProgrammingError, psycopg.OperationalError) as exc:
        raise connect_error(target, exc) from exc
    return target


IDLE_CHECK_AFTER = 2.0
"""Seconds since its last checkout after which a pooled connection is pinged before use."""


class IdleHealthCheck:
    """Pool ``check`` callbacks that ping a connection only when it sat unused.

    psycopg_pool's stock ``check_connection`` pings on *every* checkout: one extra round
    trip per saver call, eight per invoke of a two-node graph. A connection handed out
    less than ``idle`` seconds ago was working a moment before, so it is used as is;
    one that sat longer -- the kind a server restart or ``pg_terminate_backend`` kills
    while nobody looks -- is pinged and, if dead, replaced by the pool before use. A
    connection killed inside the window fails that one call with
    ``BackendUnavailableError`` and is discarded by the pool on return.

    Example:
        ```python
        health = IdleHealthCheck(idle=2.0)
        pool = ConnectionPool(dsn, check=health.check)
        ```
    """

    def __init__(self, idle: float = IDLE_CHECK_AFTER) -> None:
        self.idle = idle
        self._last: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def needs_ping(self, conn: Any) -> bool:
        """Record this checkout; ``True`` if the connection was idle longer than ``idle``."""
        now = time.monotonic()
        with self._lock:
            last = self._last.get(conn)
            self._last[conn] = now
        return last is None or now - last > self.idle

    def check(self, conn: Connection[Any]) -> None:
        """Sync pool ``check`` callback."""
        if self.needs_ping(conn):
            ConnectionPool.check_connection(conn)

    async def acheck(self, conn: AsyncConnection[Any]) -> None:
        """Async pool ``check`` callback."""
        if self.needs_ping(conn):
            await AsyncConnectionPool.check_connection(conn)


def pool_options(
    pool_config: PoolConfig | None, prepare_threshold: int | None, connect_timeout: int
) -> dict[str, Any]:
    """Keyword arguments of the (sync or async) pool ``from_conn_string`` builds.

    Example:
        ```python
        pool_options({"max_size": 16}, None, 5)["max_size"] == 16
        ```
    """
    config = pool_config or {}
    return {
        "open": False,
        "min_size": config.get("min_size", 1),
        "max_size": config.get("max_size", max(8, config.get("min_size", 1))),
        "timeout": config.get("timeout", _common.DEFAULT_POOL_TIMEOUT),
        "max_idle": config.get("max_idle", 600.0),
        "max_lifetime": config.get("max_lifetime", 3600.0),
        "reconnect_timeout": config.get("reconnect_timeout", _common.DEFAULT_RECONNECT_TIMEOUT),
        "kwargs": _common.connection_kwargs(
            prepare_threshold, connect_timeout, config.get("kwargs")
        ),
        "name": "langgraph-memory-checkpoints",
    }


def build_pool(
    conn_string: str,
    pool_config: PoolConfig | None,
    prepare_threshold: int | None,
    connect_timeout: int,
) -> ConnectionPool[Connection[DictRow]]:
    """An opened pool with the settings the saver needs (idle connections health-checked)."""
    pool: ConnectionPool[Connection[DictRow]] = ConnectionPool(
        conn_string,
        check=IdleHealthCheck().check,
        **pool_options(pool_config, prepare_threshold, connect_timeout),
    )
    pool.open(wait=True, timeout=float(connect_timeout) + 5.0)
    return pool


async def arun_program(
    cur: AsyncCursor[DictRow], program: Program[_common.T], first: Stmt | None = None
) -> _common.T:
    """Async twin of :func:`~langgraph_memory.checkpoint.postgres._common.run_program`."""
    try:
        stmt = next(program) if first is None else first
        while True:
            if stmt.many:
                await cur.executemany(stmt.sql, stmt.params)
                rows: _common.Rows = []
            else:
                await cur.execute(stmt.sql, stmt.params, prepare=stmt.prepare)
                rows = await cur.fetchall() if stmt.fetch else []
            stmt = program.send(rows)
    except StopIteration as stop:
        result: _common.T = stop.value
        return result


class AsyncConnector:
    """Async twin of :class:`SyncConnector` (lock only for a single connection)."""

    def __init__(self, conn: AsyncConn, lock: asyncio.Lock | None = None) -> None:
        if not isinstance(conn, (AsyncConnection, AsyncConnectionPool)):
            raise ConfigurationError(
                "expected a psycopg AsyncConnection or AsyncConnectionPool, got "
                f"{type(conn).__name__}; or use from_conn_string(dsn)"
            )
        self.conn = conn
        self.lock = lock or asyncio.Lock()
        self.target = _target_of(conn)
        self.supports_pipeline = psycopg.Capabilities().has_pipeline()
        self._gate = asyncio.Semaphore(
            conn.max_size if isinstance(conn, AsyncConnectionPool) else 1
        )

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
            raise PoolTimeout(f"couldn't get a connection after {timeout:.2f} sec") from None

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[AsyncConnection[DictRow]]:
        try:
            if isinstance(self.conn, AsyncConnectionPool):
                await self._enter_gate(self.conn.timeout)
                try:
                    conn = await self.conn.getconn()
                except BaseException:
                    self._gate.release()
                    raise
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
                    try:
                        await self.conn.putconn(conn)
                    finally:
                        self._gate.release()
            else:
                async with self.lock:
                    yield self.conn
        except _TRANSLATED as exc:
            translated = _common.translate_error(self.target, exc)
            if translated is exc:
                raise
            raise translated from exc

    @asynccontextmanager
    async def cursor(
        self, *, transaction: bool = False, pipeline: bool = False
    ) -> AsyncIterator[AsyncCursor[DictRow]]:
        async with self.connection() as conn:
            if not transaction:
                async with conn.cursor(binary=True, row_factory=dict_row) as cur:
                    yield cur
            elif pipeline and self.supports_pipeline and _idle_autocommit(conn):
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

    async def run(self, program: Program[_common.T], *, pipeline: bool = True) -> _common.T:
        """Run ``program`` in one transaction (an ``alone`` statement: on its own)."""
        first = _common.start(program)
        if isinstance(first, _common.Finished):
            return first.value
        if first.alone:
            async with self.connection() as conn:
                rows = await _aexecute_alone(conn, first)
            return _common.finish_alone(program, rows)
        async with self.cursor(transaction=True, pipeline=pipeline) as cur:
            return await arun_program(cur, program, first)


async def aprobe(
    conn_string: str, connect_timeout: int, extra: dict[str, Any] | None = None
) -> str:
    """Async :func:`probe`."""
    target = _common.describe_target(_common.validate_dsn(conn_string))
    kwargs = {**(extra or {}), "connect_timeout": connect_timeout, "autocommit": True}
    try:
        conn = await psycopg.AsyncConnection.connect(conn_string, **kwargs)
        await conn.close()
    except (psycopg.ProgrammingError, psycopg.OperationalError) as exc:
        raise connect_error(target, exc) from exc
    return target


async def abuild_pool(
    conn_string: str,
    pool_config: PoolConfig | None,
    prepare_threshold: int | None,
    connect_timeout: int,
) -> AsyncConnectionPool[AsyncConnection[DictRow]]:
    """Async :func:`build_pool`."""
    pool: AsyncConnectionPool[AsyncConnection[DictRow]] = AsyncConnectionPool(
        conn_string,
        check=IdleHealthCheck().acheck,
        **pool_options(pool_config, prepare_threshold, connect_timeout),
    )
    await pool.open(wait=True, timeout=float(connect_timeout) + 5.0)
    return pool
