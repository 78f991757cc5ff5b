"""Connections the sync saver keeps out of a ``redis.Redis`` client's pool, and RESP packing.

redis-py's generic ``execute_command`` adds Python work to every call on top of the
round trip (``python -m langgraph_recall.bench.checkpointers`` compares both paths), and checks a
pooled connection out and back in for every call (``can_read``:
three GIL-releasing syscalls). Under LangGraph's background executor every GIL-releasing
syscall of a ``put`` can leave the call waiting for the busy main thread, so those extra
syscalls cost far more than their own time.

:class:`KeptConnections` keeps a few connections of the client's own pool checked out
(each held by a ``single_connection_client`` on that pool, so redis-py checks it out the
way its version wants), sends each batch of commands with ONE ``send_packed_command``
and reads the replies with ``read_response``: public redis-py API only, so the health
check, the socket timeout and the error types are redis-py's own. A hung server raises
``redis.exceptions.TimeoutError`` after ``socket_timeout`` on every redis-py version
(redis-py raises it for an expired socket timeout on send and on receive). Nothing is
buffered: a call returns when Redis has answered it. Connections go back to the pool when
:meth:`KeptConnections.close` is called or too many are idle.

Example:
    ```python
    import redis

    from langgraph_recall.checkpoint.redis._kept_connections import (
        KeptConnections,
        pack_command,
    )

    client = redis.Redis.from_url(REDIS_URL)
    kept = KeptConnections.for_client(client)
    assert kept is not None
    assert kept.execute(pack_command(["PING"]), 1) == [b"PONG"]
    kept.close()
    client.close()
    ```
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Sequence
from typing import Any, Protocol

from redis import Redis
from redis import exceptions as redis_errors
from redis.connection import BlockingConnectionPool, ConnectionPool

__all__ = ["MAX_IDLE", "KeptConnections", "pack_command"]

_MIN_POOL_SIZE = 64
"""A pool smaller than this is left to redis-py (kept connections must not starve it)."""

MAX_IDLE = 16
"""Idle connections kept at most (more go back to the pool)."""


class _Connection(Protocol):
    """The public methods of a redis-py connection the kept connections use (typed)."""

    def send_packed_command(self, command: Sequence[bytes], check_health: bool = True) -> None:
        """Send already packed commands (after the health check, if due)."""

    def read_response(self) -> Any:
        """Read one reply (an error reply raises ``ResponseError``)."""

    def disconnect(self) -> None:
        """Close the socket (the next use reconnects)."""


def _encode(arg: Any) -> bytes:
    if isinstance(arg, bytes):
        return arg
    if isinstance(arg, str):
        return arg.encode()
    if isinstance(arg, int) and not isinstance(arg, bool):
        return b"%d" % arg
    raise TypeError(f"cannot send {type(arg).__name__} to Redis: {arg!r}")


def pack_command(args: Sequence[Any]) -> bytes:
    """One command in the RESP request format (bytes, UTF-8 ``str`` or ``int`` args).

    Example:
        ```python
        from langgraph_recall.checkpoint.redis._kept_connections import pack_command

        assert pack_command(["GET", "k"]) == b"*2\\r\\n$3\\r\\nGET\\r\\n$1\\r\\nk\\r\\n"
        ```
    """
    parts = [b"*%d\r\n" % len(args)]
    append = parts.append
    for arg in args:
        kind = type(arg)
        data = arg if kind is bytes else arg.encode() if kind is str else _encode(arg)
        append(b"$%d\r\n" % len(data))
        append(data)
        append(b"\r\n")
    return b"".join(parts)


class KeptConnections:
    """Send packed commands on connections kept out of a ``redis.Redis`` client's pool.

    Thread-safe: a connection is used by one call at a time (its holder is taken from and
    returned to a deque, whose ``pop``/``append`` are atomic). After ``fork`` the child
    drops the parent's connections without touching them. On any error but an error reply
    the connection is disconnected (redis-py reconnects it on its next use) and the error
    raised, so the caller can retry through redis-py's own retry policy.

    Args:
        pool: The client's connection pool.
    """

    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool
        self._idle: deque[Redis] = deque()
        self._pid = os.getpid()

    @classmethod
    def for_client(cls, client: object) -> KeptConnections | None:
        """Kept connections for ``client``, or ``None`` where the generic path must be used:
        a cluster, a ``single_connection_client``, client-side caching, a non-UTF-8
        encoding, ``decode_responses=True`` (the generic path reads our replies
        undecoded), or a blocking or small pool the kept connections could starve."""
        if not isinstance(client, Redis) or client.connection is not None:
            return None
        pool = client.connection_pool
        if not isinstance(pool, ConnectionPool) or isinstance(pool, BlockingConnectionPool):
            return None
        if getattr(pool, "cache", None) is not None:
            return None
        kwargs = pool.connection_kwargs
        if kwargs.get("encoding", "utf-8").lower().replace("-", "") != "utf8":
            return None
        if kwargs.get("encoding_errors", "strict") != "strict" or kwargs.get("decode_responses"):
            return None
        if (pool.max_connections or 0) < _MIN_POOL_SIZE:
            return None
        return cls(pool)

    @property
    def idle(self) -> int:
        """How many connections are kept idle right now."""
        return len(self._idle)

    # ----- connections ---------------------------------------------------------------

    def _take(self) -> Redis:
        if self._pid != os.getpid():  # forked: the parent's sockets are not ours
            self._idle = deque()
            self._pid = os.getpid()
        try:
            return self._idle.pop()
        except IndexError:
            return Redis(connection_pool=self._pool, single_connection_client=True)

    def _give_back(self, holder: Redis) -> None:
        if len(self._idle) < MAX_IDLE:
            self._idle.append(holder)
        else:
            holder.close()

    def close(self) -> None:
        """Hand every kept connection back to the pool (idempotent)."""
        if self._pid != os.getpid():
            self._idle = deque()
            return
        while True:
            try:
                holder = self._idle.pop()
            except IndexError:
                return
            holder.close()

    # ----- requests ------------------------------------------------------------------

    def execute(self, packed: bytes, count: int) -> list[Any]:
        """Send ``count`` packed commands at once and return their ``count`` replies.

        A Redis error reply (``ResponseError``) is raised after every reply was read
        (the connection stays usable), like a non-transactional pipeline.

        Raises:
            redis.exceptions.ConnectionError: The connection failed (it is disconnected);
                the caller may retry it on a fresh connection.
            redis.exceptions.TimeoutError: Redis did not answer within ``socket_timeout``
                (the connection is disconnected); a hung server is not retried.
        """
        holder = self._take()
        if holder.connection is None:  # a single_connection_client always holds one
            raise redis_errors.ConnectionError("the kept client holds no connection")
        connection: _Connection = holder.connection
        try:
            connection.send_packed_command([packed])
            replies: list[Any] = []
            error: redis_errors.ResponseError | None = None
            for _ in range(count):
                try:
                    replies.append(connection.read_response())
                except redis_errors.ResponseError as exc:
                    replies.append(exc)
                    error = error or exc
        except BaseException:
            connection.disconnect()
            holder.close()
            raise
        self._give_back(holder)
        if error is not None:
            raise error
        return replies
