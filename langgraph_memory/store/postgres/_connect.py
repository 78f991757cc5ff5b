"""Connection settings and error translation shared by the sync and async stores."""

from __future__ import annotations

import os
from typing import Any

import psycopg
from psycopg.rows import dict_row

from langgraph_memory.checkpoint.postgres._common import (
    describe_target,
    is_connection_failure,
    validate_dsn,
)
from langgraph_memory.errors import (
    BackendUnavailableError,
    ConfigurationError,
    InvalidValueError,
)
from langgraph_memory.store.postgres._types import PoolConfig

__all__ = [
    "CONNECT_TIMEOUT",
    "ENV_DSN",
    "POOL_TIMEOUT",
    "check_connection_settings",
    "connection_kwargs",
    "describe_target",
    "resolve_dsn",
    "translate_error",
]

ENV_DSN = "LANGGRAPH_MEMORY_POSTGRES_URI"
CONNECT_TIMEOUT = 5
POOL_TIMEOUT = 5.0  # seconds a call waits for a pooled connection (fail fast in an outage)
_REFUSED_INPUT = frozenset({"22", "23", "54"})  # SQLSTATE classes: data, integrity, limits


def resolve_dsn(conn_string: str | None) -> tuple[str, str]:
    """``(dsn, "host:port")``: ``conn_string``, else ``$LANGGRAPH_MEMORY_POSTGRES_URI``,
    else the embedded Postgres.

    Raises:
        InvalidConnectionStringError: malformed DSN, unsupported scheme or bad port.
    """
    dsn = conn_string or os.environ.get(ENV_DSN)
    if not dsn:
        from langgraph_memory.embedded import embedded_dsn

        dsn = embedded_dsn()
    params = validate_dsn(dsn)
    return dsn, describe_target(params)


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


def translate_error(target: str, exc: BaseException) -> BaseException:
    """The error a public call raises for a database error.

    * a lost/refused connection or pool timeout → :class:`BackendUnavailableError`;
    * a value the database refused (data exceptions, class 22; constraint violations,
      23; size limits, 54) → :class:`InvalidValueError`. The store checks values at the
      door, so this is a safety net: the transaction was rolled back, nothing changed.
    """
    if is_connection_failure(exc) or type(exc).__name__ == "PoolTimeout":
        return BackendUnavailableError(f"Postgres at {target} is unreachable: {exc}")
    sqlstate = getattr(exc, "sqlstate", None) or ""
    if isinstance(exc, psycopg.DataError) or sqlstate[:2] in _REFUSED_INPUT:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return InvalidValueError(
            f"Postgres at {target} refused the input ({sqlstate or type(exc).__name__}: "
            f"{detail}); nothing was written"
        )
    return exc
