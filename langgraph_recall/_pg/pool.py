"""Pools and connection settings of every Postgres component (no I/O here).

One :class:`PoolConfig` for the savers, the leases and the store; one health policy,
:class:`IdleHealthCheck`; the keyword arguments of the pools ``from_conn_string`` builds
(:func:`pool_options`, per :class:`PoolRole`). The factories that open them are ``build_pool`` in
:mod:`~langgraph_recall._pg.run_sync` and ``abuild_pool`` in
:mod:`~langgraph_recall._pg.run_async`.
"""

from __future__ import annotations

import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, TypedDict

import psycopg
from psycopg import AsyncConnection, Connection
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langgraph_recall._pg.dsn import describe_target, validate_dsn
from langgraph_recall.errors import ConfigurationError, InvalidConnectionStringError

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_POOL_TIMEOUT",
    "DEFAULT_RECONNECT_TIMEOUT",
    "IDLE_CHECK_AFTER",
    "PSYCOPG_PREPARE_THRESHOLD",
    "SAVER_POOL",
    "STORE_POOL",
    "IdleHealthCheck",
    "PoolConfig",
    "PoolRole",
    "check_connection_settings",
    "connection_kwargs",
    "idle_autocommit",
    "note_failure",
    "pool_options",
    "prepare_threshold_of",
    "target_of",
]

DEFAULT_CONNECT_TIMEOUT = 5
"""Seconds libpq waits for a TCP/unix connection before giving up."""

DEFAULT_POOL_TIMEOUT = 5.0
"""Seconds a call waits for a pooled connection before failing (also the longest a call
waits during an outage before :class:`BackendUnavailableError`; lower it with
``pool_config={"timeout": ...}`` to fail faster)."""

DEFAULT_RECONNECT_TIMEOUT = 5.0
"""Seconds the pool's background reconnect keeps retrying (1, 2, 4 s ... apart) before it
gives up; the next call then starts a fresh attempt at once. psycopg_pool's default (300 s)
lets the backoff grow to 16-64 s, so after a long outage the pool could take that long to
notice the server is back; a short value bounds that delay to a few seconds."""

IDLE_CHECK_AFTER = 2.0
"""Seconds since its last checkout after which a pooled connection is pinged before use."""


class PoolConfig(TypedDict, total=False):
    """Options for the connection pool ``from_conn_string`` builds (savers and store).

    Attributes:
        min_size: Connections kept open (default 1).
        max_size: Upper bound of open connections (default 8 for the savers, 10 for the
            store).
        timeout: Seconds a call waits for a free connection before failing (default 5).
            This is also how long a call can take to fail while the server is down: lower
            it (e.g. ``1``) to fail fast during outages.
        max_idle: Seconds an unused connection stays open (default 600).
        max_lifetime: Seconds before a connection is recycled (default 3600).
        reconnect_timeout: Seconds the background reconnect retries (with doubling delays)
            before giving up until the next call (default 5 for the savers; bounds recovery
            after outages).
        kwargs: Extra ``psycopg.connect`` keyword arguments.

    Example:
        ```python
        from langgraph_recall.checkpoint.postgres import PostgresSaver, PoolConfig

        config: PoolConfig = {"max_size": 4, "timeout": 5, "kwargs": {"application_name": "api"}}
        with PostgresSaver.from_conn_string(DB_URI, pool_config=config) as saver:
            saver.setup()
        ```
    """

    min_size: int
    max_size: int
    timeout: float
    max_idle: float
    max_lifetime: float
    reconnect_timeout: float
    kwargs: dict[str, Any]


def connection_kwargs(
    pool_config: PoolConfig | None,
    *,
    connect_timeout: int = DEFAULT_CONNECT_TIMEOUT,
    **fixed: Any,
) -> dict[str, Any]:
    """Keyword arguments of every pooled connection: ``connect_timeout``, then the user's
    ``pool_config["kwargs"]``, then what the component requires -- autocommit, dict rows and
    the ``fixed`` settings (e.g. ``prepare_threshold``) -- which no user setting overrides.

    Example:
        ```python
        from langgraph_recall._pg.pool import connection_kwargs

        kwargs = connection_kwargs({"kwargs": {"autocommit": False}}, prepare_threshold=None)
        assert kwargs["autocommit"] is True and kwargs["prepare_threshold"] is None
        ```
    """
    kwargs: dict[str, Any] = {"connect_timeout": connect_timeout}
    kwargs.update((pool_config or {}).get("kwargs") or {})
    kwargs.update(autocommit=True, row_factory=dict_row, **fixed)
    return kwargs


@dataclass(frozen=True)
class PoolRole:
    """Whom a pool serves: its ``name`` (psycopg_pool's logs and stats) and the default
    ``max_size`` when :class:`PoolConfig` sets none (at least its ``min_size``)."""

    name: str
    max_size: int


SAVER_POOL = PoolRole("langgraph-recall-checkpoints", 8)
"""The pools of the savers and leases."""

STORE_POOL = PoolRole("langgraph-recall-store", 10)
"""The pools of the memory store."""

PSYCOPG_PREPARE_THRESHOLD = 5
"""psycopg's own ``prepare_threshold`` default."""


def prepare_threshold_of(pool_config: PoolConfig | None) -> int | None:
    """The ``prepare_threshold`` of ``pool_config["kwargs"]``, else psycopg's default (for a
    component without a ``prepare_threshold`` option of its own, the store).

    Example:
        ```python
        from langgraph_recall._pg.pool import prepare_threshold_of

        assert prepare_threshold_of({"kwargs": {"prepare_threshold": None}}) is None
        assert prepare_threshold_of(None) == 5
        ```
    """
    kwargs = (pool_config or {}).get("kwargs") or {}
    value: int | None = kwargs.get("prepare_threshold", PSYCOPG_PREPARE_THRESHOLD)
    return value


def pool_options(
    pool_config: PoolConfig | None,
    prepare_threshold: int | None,
    connect_timeout: int,
    role: PoolRole = SAVER_POOL,
) -> dict[str, Any]:
    """Keyword arguments of the (sync or async) pool ``from_conn_string`` builds.

    Example:
        ```python
        from langgraph_recall._pg.pool import STORE_POOL, pool_options

        assert pool_options({"max_size": 16}, None, 5)["max_size"] == 16
        assert pool_options(None, 5, 5, STORE_POOL)["max_size"] == 10
        ```
    """
    config = pool_config or {}
    return {
        "open": False,
        "min_size": config.get("min_size", 1),
        "max_size": config.get("max_size", max(role.max_size, config.get("min_size", 1))),
        "timeout": config.get("timeout", DEFAULT_POOL_TIMEOUT),
        "max_idle": config.get("max_idle", 600.0),
        "max_lifetime": config.get("max_lifetime", 3600.0),
        "reconnect_timeout": config.get("reconnect_timeout", DEFAULT_RECONNECT_TIMEOUT),
        "kwargs": connection_kwargs(
            config, connect_timeout=connect_timeout, prepare_threshold=prepare_threshold
        ),
        "name": role.name,
    }


class IdleHealthCheck:
    """Pool ``check`` callbacks that ping a connection only when it sat unused, and check
    the whole pool when one of them turns out dead.

    psycopg_pool's stock ``check_connection`` pings on *every* checkout: one extra round
    trip per call, eight per invoke of a two-node graph. A connection handed out
    less than ``idle`` seconds ago was working a moment before, so it is used as is;
    one that sat longer -- the kind a server restart or ``pg_terminate_backend`` kills
    while nobody looks -- is pinged and, if dead, replaced by the pool before use. A
    connection killed inside the window fails that one call with
    ``BackendUnavailableError`` and is discarded by the pool on return.

    A dead connection rarely dies alone: a failover or a restart kills every connection of
    the pool. The pool tries the next one after a back-off (0, 1, 2, 4 s ...), so an idle pool
    of 8 after a promotion used to time out its first calls one dead connection at a time.
    When a ping fails, the callback checks the whole pool at once (``pool.check()``: every
    idle connection pinged, the dead ones replaced), so the pool's next try gets a new
    connection to the server that answers now.

    Example:
        ```python
        from psycopg_pool import ConnectionPool

        from langgraph_recall._pg.pool import IdleHealthCheck

        health = IdleHealthCheck(idle=2.0)
        with ConnectionPool(DB_URI, check=health.check, min_size=1, max_size=1) as pool:
            health.watch(pool)
            with pool.connection() as conn:
                conn.execute("SELECT 1")
        ```
    """

    def __init__(self, idle: float = IDLE_CHECK_AFTER) -> None:
        self.idle = idle
        self._last: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._pool: weakref.ReferenceType[Any] | None = None
        self._sweeping = False
        self._suspect_until = 0.0

    def watch(self, pool: ConnectionPool[Any] | AsyncConnectionPool[Any]) -> None:
        """The pool whose connections this callback checks (swept when one is dead)."""
        self._pool = weakref.ref(pool)
        _WATCHED[pool] = self

    def suspect(self) -> None:
        """A call lost its connection: ping every connection handed out for the next
        ``idle`` seconds (the first dead one found sweeps the pool)."""
        with self._lock:
            self._suspect_until = time.monotonic() + self.idle

    def needs_ping(self, conn: Any) -> bool:
        """Record this checkout; ``True`` if the connection was idle longer than ``idle``
        (or the pool lost a connection less than ``idle`` seconds ago)."""
        now = time.monotonic()
        with self._lock:
            last = self._last.get(conn)
            self._last[conn] = now
            suspect = now < self._suspect_until
        return suspect or last is None or now - last > self.idle

    def _sweep_target(self) -> Any:
        """The watched pool if no sweep of it runs now (the caller then sweeps it)."""
        pool = self._pool() if self._pool is not None else None
        with self._lock:
            if pool is None or self._sweeping:
                return None
            self._sweeping = True
        return pool

    def _swept(self) -> None:
        with self._lock:
            self._sweeping = False

    def check(self, conn: Connection[Any]) -> None:
        """Sync pool ``check`` callback."""
        if not self.needs_ping(conn):
            return
        try:
            ConnectionPool.check_connection(conn)
        except Exception:
            pool = self._sweep_target()
            if pool is not None:
                try:
                    pool.check()
                finally:
                    self._swept()
            raise

    async def acheck(self, conn: AsyncConnection[Any]) -> None:
        """Async pool ``check`` callback."""
        if not self.needs_ping(conn):
            return
        try:
            await AsyncConnectionPool.check_connection(conn)
        except Exception:
            pool = self._sweep_target()
            if pool is not None:
                try:
                    await pool.check()
                finally:
                    self._swept()
            raise


_WATCHED: weakref.WeakKeyDictionary[Any, IdleHealthCheck] = weakref.WeakKeyDictionary()


def note_failure(conn: object, exc: BaseException) -> None:
    """After a failed call on ``conn`` (a pool we built, or anything else): a lost
    connection (a driver error without SQLSTATE) makes the pool's health check ping what it
    hands out next, so the other connections a failover or restart killed are found and
    replaced before they fail calls of their own."""
    if isinstance(exc, psycopg.OperationalError) and exc.sqlstate is None:
        health = _WATCHED.get(conn)
        if health is not None:
            health.suspect()


def target_of(
    conn: Connection[Any] | AsyncConnection[Any] | ConnectionPool[Any] | AsyncConnectionPool[Any],
) -> str:
    """:func:`describe_target` of an open connection, or of a pool's DSN (``"(pool)"`` if
    that does not parse)."""
    if isinstance(conn, (ConnectionPool, AsyncConnectionPool)):
        try:
            return describe_target(validate_dsn(str(conn.conninfo)))
        except InvalidConnectionStringError:
            return "(pool)"
    return describe_target({"host": conn.info.host, "port": conn.info.port})


def idle_autocommit(conn: Connection[Any] | AsyncConnection[Any]) -> bool:
    """True when ``conn`` is in autocommit mode outside any transaction (pooled use)."""
    return bool(conn.autocommit) and conn.pgconn.transaction_status == TransactionStatus.IDLE


def check_connection_settings(conn: Any) -> None:
    """Reject a connection or pool that lacks ``autocommit=True`` / ``row_factory=dict_row``
    (the store's requirement; the savers bring their own connector).

    Raises:
        ConfigurationError: naming the missing setting and how to create it.

    Example:
        ```python
        import psycopg
        from psycopg.rows import dict_row

        from langgraph_recall._pg.pool import check_connection_settings

        with psycopg.connect(DB_URI, autocommit=True, row_factory=dict_row) as conn:
            check_connection_settings(conn)
        ```
    """
    kwargs = getattr(conn, "kwargs", None)
    if isinstance(kwargs, dict):  # a pool
        autocommit, row_factory = kwargs.get("autocommit"), kwargs.get("row_factory")
        if row_factory is None and autocommit:  # configure= callbacks may set it; trust the pool
            return
    else:
        autocommit, row_factory = conn.autocommit, conn.row_factory
    if not autocommit or row_factory is not dict_row:
        raise ConfigurationError(
            "the memory store needs connections opened with autocommit=True and "
            "row_factory=dict_row, e.g. psycopg.connect(dsn, autocommit=True, "
            "row_factory=dict_row), or use from_conn_string(dsn)"
        )
