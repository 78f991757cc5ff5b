"""The one DSN resolution of every Postgres component: which server, and how it is named.

:func:`resolve_dsn` picks the DSN (given, else ``$LANGGRAPH_RECALL_POSTGRES_URI``, else the
embedded server), :func:`validate_dsn` rejects a malformed one with a helpful error, and
:func:`describe_target` gives the ``host:port`` that error messages name. Importing this
module needs no driver (``embedded`` and the CLI read :data:`ENV_DSN` without the
``postgres`` extra).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from langgraph_recall.errors import InvalidConnectionStringError

__all__ = ["ENV_DSN", "describe_target", "resolve_dsn", "validate_dsn"]

ENV_DSN = "LANGGRAPH_RECALL_POSTGRES_URI"
"""The one environment variable naming the Postgres server (library, CLI, server, docs)."""


def validate_dsn(dsn: str) -> dict[str, Any]:
    """Parse a libpq DSN/URI, raising a helpful error when it is malformed.

    Raises:
        InvalidConnectionStringError: empty or malformed DSN, unsupported scheme, bad port.

    Example:
        ```python
        from langgraph_recall._pg.dsn import validate_dsn

        params = validate_dsn("postgresql://postgres@127.0.0.1:5432/app")
        assert params["port"] == "5432"
        ```
    """
    from psycopg.conninfo import conninfo_to_dict

    if not isinstance(dsn, str) or not dsn.strip():
        raise InvalidConnectionStringError(
            "empty Postgres connection string; pass e.g. 'postgresql://user@host:5432/db'"
        )
    if "://" in dsn:
        scheme = dsn.split("://", 1)[0].lower()
        if scheme not in {"postgresql", "postgres"}:
            raise InvalidConnectionStringError(
                f"unsupported scheme {scheme!r} in Postgres connection string; "
                "use 'postgresql://user@host:5432/db'"
            )
    try:
        params = dict(conninfo_to_dict(dsn))
    except Exception as exc:
        raise InvalidConnectionStringError(
            f"malformed Postgres connection string ({exc}); "
            "use 'postgresql://user@host:5432/db' or 'host=... port=... dbname=...'"
        ) from exc
    port = params.get("port")
    if port is not None:
        for part in str(port).split(","):
            if not part.isdigit() or not 0 < int(part) < 65536:
                raise InvalidConnectionStringError(
                    f"invalid port {port!r} in Postgres connection string; use 1-65535"
                )
    return params


def describe_target(params: Mapping[str, Any]) -> str:
    """``host:port`` (or the socket directory) a DSN points at, for error messages.

    Example:
        ```python
        from langgraph_recall._pg.dsn import describe_target

        assert describe_target({"host": "db", "port": "6543"}) == "db:6543"
        ```
    """
    host = str(params.get("host") or params.get("hostaddr") or os.environ.get("PGHOST") or "")
    port = str(params.get("port") or os.environ.get("PGPORT") or "5432")
    if not host or host.startswith("/"):
        return f"unix socket {host or '(default)'} port {port}"
    return f"{host}:{port}"


def resolve_dsn(conn_string: str | None) -> tuple[str, str]:
    """``(dsn, "host:port")``: ``conn_string``, else ``$LANGGRAPH_RECALL_POSTGRES_URI``, else
    the embedded server (:func:`~langgraph_recall.embedded.resolve_postgres_dsn`), validated.

    Raises:
        InvalidConnectionStringError: empty or malformed DSN, unsupported scheme, bad port.

    Example:
        ```python
        from langgraph_recall._pg.dsn import resolve_dsn

        dsn, target = resolve_dsn("postgresql://u@db:6543/app")
        assert target == "db:6543"
        ```
    """
    from langgraph_recall.embedded import resolve_postgres_dsn  # it imports ENV_DSN from here

    dsn = resolve_postgres_dsn(conn_string)
    return dsn, describe_target(validate_dsn(dsn))
