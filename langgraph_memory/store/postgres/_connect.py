"""Connection settings and error translation shared by the sync and async stores."""

from __future__ import annotations

import random
from typing import Any

import psycopg
from psycopg.rows import dict_row

from langgraph_memory._internal.pgstate import server_state_error
from langgraph_memory.checkpoint.postgres._common import (
    describe_target,
    is_connection_failure,
    validate_dsn,
)
from langgraph_memory.checkpoint.postgres._connect import connect_error
from langgraph_memory.embedded import ENV_DSN, resolve_postgres_dsn
from langgraph_memory.errors import (
    BackendUnavailableError,
    ConfigurationError,
    InvalidValueError,
    MigrationError,
)
from langgraph_memory.store.postgres._types import PoolConfig

__all__ = [
    "CONNECT_TIMEOUT",
    "ENV_DSN",
    "POOL_TIMEOUT",
    "TRANSACTION_ATTEMPTS",
    "check_connection_settings",
    "connect_error",
    "connection_kwargs",
    "describe_target",
    "resolve_dsn",
    "retry_pause",
    "should_retry",
    "translate_error",
]

CONNECT_TIMEOUT = 5
POOL_TIMEOUT = 5.0  # seconds a call waits for a pooled connection (fail fast in an outage)
_REFUSED_INPUT = frozenset({"22", "23", "54"})  # SQLSTATE classes: data, integrity, limits
TRANSACTION_ATTEMPTS = 3
"""Runs of a transaction the server broke as a deadlock victim or a serialization failure
(the store's own transactions take their locks in one order and cannot deadlock each
other; a user's transaction on the same tables can still make the server pick ours)."""
_RETRYABLE = frozenset({"40P01", "40001"})  # deadlock_detected, serialization_failure
_MISSING_SCHEMA = frozenset({"42P01", "42883"})  # undefined_table, undefined_function


def should_retry(exc: BaseException, attempt: int) -> bool:
    """Whether a transaction that failed with ``exc`` on run ``attempt`` (1-based) runs again:
    a deadlock or serialization failure, fewer than :data:`TRANSACTION_ATTEMPTS` runs so far.
    The caller also checks that nothing of the program was committed yet."""
    return getattr(exc, "sqlstate", None) in _RETRYABLE and attempt < TRANSACTION_ATTEMPTS


def retry_pause(attempt: int) -> float:
    """Seconds to wait before run ``attempt + 1``: jittered, doubling from ~10 ms."""
    return float(0.01 * 2 ** (attempt - 1) * (1 + random.random()))  # jitter, not crypto


def resolve_dsn(conn_string: str | None) -> tuple[str, str]:
    """``(dsn, "host:port")`` of :func:`~langgraph_memory.embedded.resolve_postgres_dsn`.

    Raises:
        InvalidConnectionStringError: empty or malformed DSN, unsupported scheme, bad port.
    """
    dsn = resolve_postgres_dsn(conn_string)
    return dsn, describe_target(validate_dsn(dsn))


def connection_kwargs(pool_config: PoolConfig | None) -> dict[str, Any]:
    """Connection kwargs the store needs (autocommit, dict rows) plus the user's extras."""
    extra: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT}
    extra.update((pool_config or {}).get("kwargs") or {})
    return {**extra, "autocommit": True, "row_factory": dict_row}


def check_connection_settings(conn: Any) -> None:
    """Reject a connection or pool that lacks ``autocommit=True`` / ``row_factory=dict_row``.

    Raises:
        ConfigurationError: naming the missing setting and how to create it.
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


def _pool_saturated(pool: Any) -> bool:
    """Whether every connection ``pool`` may open exists and is checked out (it is busy)."""
    try:
        stats = pool.get_stats()
    except Exception:  # not a psycopg_pool pool
        return False
    return bool(stats.get("pool_size", 0) >= pool.max_size and stats.get("pool_available", 0) == 0)


def translate_error(target: str, exc: BaseException, conn: Any = None) -> BaseException:
    """The error a public call raises for a database error ``exc``.

    * a pool that timed out while all its connections were busy: a
      :class:`BackendUnavailableError` that says so (not "unreachable"): the pool is shared
      with other users and too small, or a call holds its connection for long;
    * a pool timeout otherwise, a lost or refused connection:
      :class:`BackendUnavailableError` naming ``target``;
    * a missing database/role or bad credentials: :class:`ConfigurationError`
      (:func:`connect_error`);
    * a deadlock or serialization failure (after the retries), a lock or statement
      timeout, a cancelled query → :class:`TransientError` (rolled back; safe to retry);
      a read-only standby, a server out of resources or shutting down →
      :class:`BackendUnavailableError`; a missing privilege → :class:`ConfigurationError`
      (:func:`~langgraph_memory._internal.pgstate.server_state_error`, shared with the
      savers);
    * a missing table or function of the store → :class:`MigrationError` (run ``setup()``);
    * a value the database refused (data exceptions, class 22; constraint violations,
      23; size limits, 54) → :class:`InvalidValueError`. The store checks values at the
      door, so this is a safety net: the transaction was rolled back, nothing changed.
    """
    if type(exc).__name__ == "PoolTimeout":
        if conn is not None and _pool_saturated(conn):
            return BackendUnavailableError(
                f"Postgres at {target} answers, but all {conn.max_size} connections of the "
                f"pool stayed busy ({exc}); other users of the same pool hold them. Give the "
                "store its own pool or raise pool_config['max_size'] / ['timeout']."
            )
        return BackendUnavailableError(
            f"Postgres at {target}: no pooled connection could be opened in time ({exc}); "
            "check that the server is running and reachable."
        )
    if is_connection_failure(exc):
        translated = connect_error(target, exc)
        return translated
    sqlstate = getattr(exc, "sqlstate", None) or ""
    state = server_state_error(target, exc)
    if state is not None:
        return state
    if sqlstate in _MISSING_SCHEMA:
        return MigrationError(
            f"the memory store schema at {target} is missing or older than this package "
            f"({sqlstate}: {_first_line(exc)}); call store.setup() first"
        )
    if isinstance(exc, psycopg.DataError) or sqlstate[:2] in _REFUSED_INPUT:
        return InvalidValueError(
            f"Postgres at {target} refused the input ({sqlstate or type(exc).__name__}: "
            f"{_first_line(exc)}); nothing was written"
        )
    return exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
