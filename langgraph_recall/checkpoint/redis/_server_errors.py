"""What a Redis server's error reply means for the caller (pure): our error for it, naming
the cause and the fix.

redis-py turns some reply codes into classes (``OutOfMemoryError``, ``BusyLoadingError``,
...) and strips the code from their message; for the others the code is the reply's first
word -- also when redis-py reports the reply from a pipeline, prefixed with
``Command # N (...) of pipeline caused error:`` (redis-py 8's asyncio pipeline quotes it as a
tuple). redis-py's own pool running out of connections is told apart from the server.
Our savers' own refusals never come this way: the write guard's integrity rules answer with
a status reply (see :mod:`~langgraph_recall.checkpoint.redis._scripts`).

Example:
    ```python
    from langgraph_recall.checkpoint.redis._server_errors import server_refusal
    from langgraph_recall.errors import BackendUnavailableError

    err = server_refusal("127.0.0.1:6379", Exception("OOM command not allowed"))
    assert isinstance(err, BackendUnavailableError) and "maxmemory" in str(err)
    ```
"""

from __future__ import annotations

import re

from redis import exceptions as redis_errors

from langgraph_recall.errors import (
    BackendUnavailableError,
    ConfigurationError,
    LangGraphRecallError,
)

__all__ = ["pool_exhausted", "pool_exhausted_error", "server_refusal"]


_MAX_CONNECTIONS_ERROR = getattr(redis_errors, "MaxConnectionsError", None)


def pool_exhausted(exc: Exception) -> bool:
    """Whether redis-py's non-blocking pool had no free connection: its
    ``MaxConnectionsError`` (redis-py >= 6), or on older versions the one
    ``ConnectionError`` it raises with exactly this text."""
    if isinstance(_MAX_CONNECTIONS_ERROR, type) and isinstance(exc, _MAX_CONNECTIONS_ERROR):
        return True
    return type(exc) is redis_errors.ConnectionError and str(exc) == "Too many connections"


_SERVER_STATES = {
    "OOM": "is out of memory (maxmemory, noeviction): free memory, raise maxmemory or set "
    "TTLs (ttl=)",
    "MISCONF": "cannot persist (RDB/AOF errors) and refuses writes: check its disk and logs",
    "READONLY": "is a read-only replica: point the URL at the primary",
    "MASTERDOWN": "is a replica that lost its primary",
    "NOREPLICAS": "has fewer replicas than min-replicas-to-write",
    "LOADING": "is loading its dataset into memory; the next call retries",
    "BUSY": "is running a long script; the next call retries",
}


_CODED_ERRORS: tuple[tuple[type[Exception], str], ...] = tuple(
    (kind, code)
    for name, code in (
        ("OutOfMemoryError", "OOM"),
        ("ReadOnlyError", "READONLY"),
        ("MasterDownError", "MASTERDOWN"),
        ("BusyLoadingError", "LOADING"),
    )
    if isinstance(kind := getattr(redis_errors, name, None), type)
)
"""redis-py's classes for error replies whose code it strips from the message (the ones
this redis-py has)."""


def server_refusal(where: str, exc: Exception) -> Exception:
    """Our error for a command the server refused (pure): a server state that refuses it
    (out of memory, read-only replica, loading, ...) is :class:`BackendUnavailableError`
    naming the fix; a key of another type under our prefix is :class:`ConfigurationError`
    (another application writes there); anything else is :class:`LangGraphRecallError`
    quoting the server.

    Example:
        ```python
        from langgraph_recall.checkpoint.redis._server_errors import server_refusal
        from langgraph_recall.errors import BackendUnavailableError

        err = server_refusal("127.0.0.1:6379", Exception("OOM command not allowed"))
        assert isinstance(err, BackendUnavailableError) and "maxmemory" in str(err)
        ```
    """
    text = str(exc)
    code = next((code for kind, code in _CODED_ERRORS if isinstance(exc, kind)), None)
    if code is None:
        code = _reply_code(text)
    if code == "WRONGTYPE":
        return ConfigurationError(
            f"Redis at {where}: a key under this saver's prefix holds another kind of value "
            f"({text}); another application writes there: give the saver its own prefix="
        )
    state = _SERVER_STATES.get(code)
    if state is not None:
        return BackendUnavailableError(f"Redis at {where} {state} ({text})")
    return LangGraphRecallError(f"Redis at {where} refused the command: {text}")


_PIPELINE_PREFIX = re.compile(r"^Command # \d+ \(.*\) of pipeline caused error: \(?['\"]?", re.S)


def _reply_code(text: str) -> str:
    """The code (first word) of a server's error reply, also when redis-py reports it from a
    pipeline (``Command # 2 (...) of pipeline caused error: <reply>``; redis-py 8's asyncio
    pipeline quotes the reply as a tuple)."""
    return _PIPELINE_PREFIX.sub("", text, count=1).split(" ", 1)[0]


def pool_exhausted_error(where: str) -> BackendUnavailableError:
    """The error for a call redis-py could not send: its pool had no free connection."""
    return BackendUnavailableError(
        f"Redis at {where} was not asked: the client's connection pool had no free "
        "connection (more calls at once than its max_connections; redis-py 8's "
        "asyncio pool holds 100). Pass a client with a larger pool or a "
        "redis.asyncio.BlockingConnectionPool (calls then wait for a connection)."
    )
