"""The one DSN resolution of every Postgres component: which server, and how it is named.

:func:`resolve_postgres_dsn` picks the DSN (given, else ``$LANGGRAPH_RECALL_POSTGRES_URI``,
else the embedded server, started on first use); :func:`configured_dsn` is the same choice
without starting anything (``None``: the embedded server's turn, as the CLI needs it);
:func:`resolve_dsn` adds :func:`validate_dsn`, which rejects a malformed DSN with a helpful
error, and :func:`describe_target`, the ``host:port`` that error messages name. The server
itself is :mod:`langgraph_recall._embedded_server`; :mod:`langgraph_recall.embedded`
re-exports the public names. Importing this module needs no driver (``embedded`` and the
CLI read :data:`ENV_DSN` without the ``postgres`` extra).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from langgraph_recall._embedded_server import embedded_dsn
from langgraph_recall._env import ENV_DSN, setting
from langgraph_recall._internal.terminal import fold_lines
from langgraph_recall.errors import InvalidConnectionStringError

__all__ = [
    "ENV_DSN",
    "configured_dsn",
    "default_dsn",
    "describe_target",
    "resolve_dsn",
    "resolve_postgres_dsn",
    "validate_dsn",
]


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
            f"malformed Postgres connection string ({fold_lines(exc)}); "
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


def configured_dsn(conn_string: str | None = None) -> str | None:
    """The Postgres DSN configured: ``conn_string`` if given, else
    ``$LANGGRAPH_RECALL_POSTGRES_URI``; ``None`` when neither is (the embedded server's
    turn, not started here). No other variable (``DATABASE_URL``, ``POSTGRES_URI``, ...) is
    read. An empty string — given or in the variable — is an error, never "use the default".

    Raises:
        InvalidConnectionStringError: ``conn_string`` or the variable is empty.

    Example:
        ```python
        import os

        from langgraph_recall._pg.dsn import configured_dsn

        os.environ.pop("LANGGRAPH_RECALL_POSTGRES_URI", None)
        assert configured_dsn(None) is None
        assert configured_dsn("postgresql://db/app") == "postgresql://db/app"
        ```
    """
    example = "postgresql://user@host:5432/db"
    chosen = setting(
        conn_string,
        os.environ.get(ENV_DSN),
        variable=ENV_DSN,
        what="Postgres connection string",
        example=example,
        fallback="the embedded server",
    )
    return chosen or None


def resolve_postgres_dsn(conn_string: str | None = None) -> str:
    """The Postgres DSN to use, the same way everywhere (stores, CLI, examples, server).

    ``conn_string`` if given; else ``$LANGGRAPH_RECALL_POSTGRES_URI``; else the embedded
    server (started on first use). No other variable (``DATABASE_URL``, ``POSTGRES_URI``,
    ...) is read. An empty string — given or in the variable — is an error, never "use
    the default": it is what an unset variable interpolated into a config looks like.

    Raises:
        InvalidConnectionStringError: ``conn_string`` or the variable is empty.

    Example:
        ```python
        from langgraph_recall.embedded import resolve_postgres_dsn

        assert resolve_postgres_dsn("postgresql://db/app") == "postgresql://db/app"
        ```
    """
    return configured_dsn(conn_string) or embedded_dsn()


def default_dsn() -> str:
    """``$LANGGRAPH_RECALL_POSTGRES_URI`` if set, else
    :func:`~langgraph_recall.embedded.embedded_dsn` (:func:`resolve_postgres_dsn` with no
    argument).

    Example:
        ```python
        import os

        from langgraph_recall.embedded import default_dsn

        os.environ["LANGGRAPH_RECALL_POSTGRES_URI"] = "postgresql://db.internal/app"
        assert default_dsn() == "postgresql://db.internal/app"
        ```
    """
    return resolve_postgres_dsn(None)


def resolve_dsn(conn_string: str | None) -> tuple[str, str]:
    """``(dsn, "host:port")``: ``conn_string``, else ``$LANGGRAPH_RECALL_POSTGRES_URI``, else
    the embedded server (:func:`resolve_postgres_dsn`), validated.

    Raises:
        InvalidConnectionStringError: empty or malformed DSN, unsupported scheme, bad port.

    Example:
        ```python
        from langgraph_recall._pg.dsn import resolve_dsn

        dsn, target = resolve_dsn("postgresql://u@db:6543/app")
        assert target == "db:6543"
        ```
    """
    dsn = resolve_postgres_dsn(conn_string)
    return dsn, describe_target(validate_dsn(dsn))
