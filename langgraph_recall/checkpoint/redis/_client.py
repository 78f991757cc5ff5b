"""The client side of both Redis savers: timeouts, URL and server checks, error translation.

What a redis-py client is given (:func:`client_defaults`, :data:`CLUSTER_RETRIED_ERRORS`),
what it is checked against (:func:`client_url_options`, :func:`check_server_version`,
:func:`checked_replicas`), how it is named in messages (:func:`describe_client`) and what
its errors become (:func:`translate_errors`). No I/O.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from redis import exceptions as redis_errors
from redis.cluster import RedisCluster

from langgraph_recall.checkpoint.redis._commands import WriteContext
from langgraph_recall.checkpoint.redis._server_errors import (
    pool_exhausted,
    pool_exhausted_error,
    server_refusal,
)
from langgraph_recall.errors import (
    BackendUnavailableError,
    ConfigurationError,
    InvalidConnectionStringError,
)

__all__ = [
    "CLUSTER_RETRIED_ERRORS",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_SOCKET_TIMEOUT",
    "MIN_SERVER_VERSION",
    "check_server_version",
    "checked_replicas",
    "client_defaults",
    "client_url_options",
    "decodes_responses",
    "describe_client",
    "is_cluster",
    "translate_errors",
]

MIN_SERVER_VERSION = (6, 2)


DEFAULT_CONNECT_TIMEOUT = 5.0
"""Seconds ``from_conn_string`` waits for a TCP connection before reporting the server
unreachable."""

DEFAULT_SOCKET_TIMEOUT = 5.0
"""Seconds ``from_conn_string`` lets a command wait for its reply: the bound of a call
against a hung server (redis-py < 8 has no default, so a frozen server would block a call
forever; 8 uses 5 s)."""


def client_defaults(options: Mapping[str, Any]) -> dict[str, Any]:
    """``from_url`` options with our timeouts unless given (a URL's own query wins too).

    Example:
        ```python
        from langgraph_recall.checkpoint.redis._client import (
            DEFAULT_CONNECT_TIMEOUT,
            client_defaults,
        )

        assert client_defaults({"socket_timeout": 1})["socket_timeout"] == 1
        assert client_defaults({})["socket_connect_timeout"] == DEFAULT_CONNECT_TIMEOUT
        ```
    """
    return {
        "socket_connect_timeout": DEFAULT_CONNECT_TIMEOUT,
        "socket_timeout": DEFAULT_SOCKET_TIMEOUT,
        **options,
    }


CLUSTER_RETRIED_ERRORS: tuple[type[Exception], ...] = tuple(
    error for error in RedisCluster.ERRORS_ALLOW_RETRY if error is not redis_errors.TimeoutError
)
"""What the cluster clients ``from_conn_string`` builds retry after refreshing the slot
map: redis-py's list without ``TimeoutError`` (a hung node would otherwise cost up to
eleven timeouts, 55 s, in one call); connection errors and moved slots still are."""


def check_server_version(info: Mapping[str, Any]) -> str:
    """The server version from ``INFO server``; raises if it is older than 6.2."""
    raw = str(info.get("redis_version", "0"))
    parts = tuple(int(p) if p.isdigit() else 0 for p in raw.split(".")[:2])
    if parts < MIN_SERVER_VERSION:
        raise ConfigurationError(
            f"Redis {raw} is too old: the Redis checkpointer needs Redis >= 6.2 or Valkey "
            "(older servers are end-of-life and untested); upgrade the server"
        )
    return raw


def describe_client(client: Any) -> str:
    """``host:port`` (or socket path / node list / Sentinel service) of a redis-py client,
    for error messages.

    A client from ``Sentinel(...).master_for(name)`` has no address of its own: it is named
    by its service, the master it last reached (redis-py keeps the address Sentinel last gave
    it; nothing is asked here) and its sentinels. Read it when the message is made: after a
    failover the same client reaches another server.

    Example:
        ```python
        from redis.sentinel import Sentinel
        from langgraph_recall.checkpoint.redis._client import describe_client

        client = Sentinel([("10.0.0.5", 26379)]).master_for("cache")
        assert describe_client(client) == (
            "Sentinel master 'cache' (not reached yet; sentinels 10.0.0.5:26379)"
        )
        ```
    """
    nodes = getattr(client, "startup_nodes", None)
    if nodes:
        items = nodes.values() if isinstance(nodes, Mapping) else nodes
        names = [getattr(n, "name", None) or f"{n.host}:{n.port}" for n in items]
        return "cluster " + ",".join(sorted(names))
    pool = getattr(client, "connection_pool", None)
    if getattr(pool, "sentinel_manager", None) is not None:
        return _describe_sentinel(pool)
    kwargs = getattr(pool, "connection_kwargs", {}) or {}
    if kwargs.get("path"):
        return f"unix:{kwargs['path']}"
    return f"{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}"


def _describe_sentinel(pool: Any) -> str:
    role = "master" if getattr(pool, "is_master", True) else "replica"
    address = getattr(pool, "master_address", None)
    last = f"last at {address[0]}:{address[1]}" if address else "not reached yet"
    sentinels = [
        f"{kwargs.get('host', 'localhost')}:{kwargs.get('port', 26379)}"
        for sentinel in getattr(pool.sentinel_manager, "sentinels", ())
        for kwargs in [getattr(sentinel.connection_pool, "connection_kwargs", {}) or {}]
    ]
    via = f"; sentinels {','.join(sentinels)}" if sentinels else ""
    return f"Sentinel {role} {getattr(pool, 'service_name', '?')!r} ({last}{via})"


def client_url_options(url: str) -> str:
    """Validate a Redis URL and return ``host:port`` for messages; raise on malformed URLs."""
    if not isinstance(url, str) or not url:
        raise InvalidConnectionStringError("Redis URL must be a non-empty string")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidConnectionStringError(
            f"malformed Redis URL ({exc}); expected redis://[user:password@]host[:port][/db]"
        ) from exc
    if parts.scheme not in {"redis", "rediss", "unix"}:
        raise InvalidConnectionStringError(
            f"unsupported Redis URL scheme {parts.scheme!r}; use redis://, rediss:// or unix://"
        )
    if parts.scheme == "unix":
        return f"unix:{parts.path}"
    if not parts.hostname:
        raise InvalidConnectionStringError("Redis URL has no host; use redis://host:port/db")
    return f"{parts.hostname}:{port or 6379}"


@contextmanager
def translate_errors(where: str, context: WriteContext | None = None) -> Iterator[None]:
    """Turn unreachable-server errors into :class:`BackendUnavailableError` (naming
    ``where``) and the write guard's refusals into ``ThreadBusyError`` /
    ``StaleWriteError`` / ``CheckpointIntegrityError`` (worded with ``context``); re-raise
    the rest."""
    try:
        yield
    except (redis_errors.ClusterError, redis_errors.RedisClusterException) as exc:
        # before ResponseError: ClusterDownError / TryAgainError are both
        raise BackendUnavailableError(
            f"Redis at {where} is unavailable: {exc}. Check that every cluster node is "
            "running and reachable; the next call retries."
        ) from exc
    except redis_errors.ResponseError as exc:
        refusal = (context or WriteContext("?", "write")).refusal(str(exc))
        if refusal is not None:
            raise refusal from exc
        raise server_refusal(where, exc) from exc
    except redis_errors.TimeoutError as exc:
        raise BackendUnavailableError(
            f"Redis at {where} did not answer in time ({exc}): the server is hung, "
            "overloaded or cut off. The call was not retried (one timeout bounds a call: "
            "the client's socket_timeout, 5 s by default); the next call tries again."
        ) from exc
    except redis_errors.ConnectionError as exc:
        if pool_exhausted(exc):  # redis-py's own pool, not the server
            raise pool_exhausted_error(where) from exc
        raise BackendUnavailableError(
            f"Redis at {where} is unreachable: {exc}. Check that the server is running and "
            "that the URL's host and port are right."
        ) from exc


def checked_replicas(replicas: int, timeout: float, cluster: bool) -> tuple[int, int]:
    """``(replicas, timeout in ms)`` of the durability option, checked.

    Example:
        ```python
        from langgraph_recall.checkpoint.redis._client import checked_replicas

        assert checked_replicas(1, 0.5, False) == (1, 500)
        ```
    """
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
        raise ConfigurationError(f"replicas must be an integer >= 0, got {replicas!r}")
    if not (isinstance(timeout, (int, float)) and 0 < timeout <= 3600):
        raise ConfigurationError(
            f"replica_timeout must be a number of seconds in (0, 3600], got {timeout!r}"
        )
    if replicas and cluster:
        raise ConfigurationError(
            "replicas= is not supported on Redis Cluster (WAIT counts the replicas of the node "
            "a connection writes to; each slot's master has its own); use the cluster's own "
            "replication settings, or replicas=0"
        )
    return replicas, max(1, round(timeout * 1000))


def decodes_responses(client: Any) -> bool:
    """Whether ``client`` decodes replies (``decode_responses=True``)."""
    getter = getattr(client, "get_encoder", None)
    encoder = getter() if callable(getter) else getattr(client, "encoder", None)
    return bool(getattr(encoder, "decode_responses", False))


def is_cluster(client: Any) -> bool:
    """Whether ``client`` is a Redis Cluster client (sync or async)."""
    return hasattr(client, "get_nodes") and hasattr(client, "keyslot")
