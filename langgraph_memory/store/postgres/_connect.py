"""Connection settings shared by the sync and async stores (pure helpers)."""

from __future__ import annotations

import os
from typing import Any

from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row

from langgraph_memory.errors import InvalidConnectionStringError
from langgraph_memory.store.postgres._core import PoolConfig

__all__ = ["ENV_DSN", "connection_kwargs", "resolve_dsn"]

ENV_DSN = "LANGGRAPH_MEMORY_POSTGRES_URI"


def resolve_dsn(conn_string: str | None) -> str:
    """``conn_string``, else ``$LANGGRAPH_MEMORY_POSTGRES_URI``, else the embedded Postgres.

    Raises:
        InvalidConnectionStringError: the DSN cannot be parsed.
    """
    dsn = conn_string or os.environ.get(ENV_DSN)
    if not dsn:
        from langgraph_memory.embedded import embedded_dsn

        dsn = embedded_dsn()
    try:
        conninfo_to_dict(dsn)
    except Exception as exc:
        raise InvalidConnectionStringError(
            f"cannot parse the Postgres connection string: {exc}; "
            "use e.g. 'postgresql://user:password@host:5432/dbname'"
        ) from None
    return dsn


def connection_kwargs(pool_config: PoolConfig | None) -> dict[str, Any]:
    """Connection kwargs the store needs (autocommit, dict rows) plus the user's extras."""
    extra = dict((pool_config or {}).get("kwargs") or {})
    return {**extra, "autocommit": True, "row_factory": dict_row}
