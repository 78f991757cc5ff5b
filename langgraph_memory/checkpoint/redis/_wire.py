"""A lean request path for the sync saver on a standalone ``redis.Redis`` client.

redis-py's generic ``execute_command`` costs ~100 µs of Python per call on top of the
round trip, and for every call it checks a pooled connection out (``can_read``: three
GIL-releasing syscalls), polls before each send and each receive (``socket_timeout``)
and packs arguments one by one. Under LangGraph's background executor every
GIL-releasing syscall of a ``put`` can leave the call waiting for the busy main thread,
so those extra syscalls cost far more than their own time.

:class:`DirectLane` keeps a few connections of the client's own pool checked out, sends
each batch of commands with ONE ``sendall`` and reads the replies with the connection's
own parser. The socket of a kept connection keeps its timeout, enforced by the kernel
(``SO_RCVTIMEO`` / ``SO_SNDTIMEO``) instead of a ``poll`` before every call; when it
expires the lane raises ``redis.exceptions.TimeoutError`` on every redis-py version (5.2
to 7 report the kernel's ``EAGAIN`` as a ``ConnectionError``), so a hung server costs one
timeout, never a second attempt. Nothing is buffered: a call returns when Redis has
answered it. Connections go back to the pool (with their Python timeout restored) when
the lane is closed or has too many idle ones.

Example:
    ```python
    import redis
    from langgraph_memory.checkpoint.redis._wire import DirectLane, pack_command

    lane = DirectLane.for_client(redis.Redis())
    assert lane is not None
    assert lane.execute(pack_command(["PING"]), 1) == [b"PONG"]
    lane.close()
    ```
"""

from __future__ import annotations

import errno
import inspect
import os
import socket
import struct
from collections import deque
from collections.abc import Sequence
from typing import Any

from redis import Redis
from redis import exceptions as redis_errors
from redis.connection import BlockingConnectionPool, ConnectionPool

__all__ = ["DirectLane", "pack_command", "timed_out"]

_MIN_POOL_SIZE = 64
"""A pool smaller than this is left to redis-py (the lane must not hoard its connections)."""

_MAX_IDLE = 16
"""Idle connections a lane keeps at most (more go back to the pool)."""


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


def timed_out(exc: BaseException) -> bool:
    """Whether a socket error (or the redis-py error wrapping it) is an expired timeout:
    ``socket.timeout`` / ``TimeoutError``, or the ``EAGAIN`` a kernel-enforced
    ``SO_RCVTIMEO`` / ``SO_SNDTIMEO`` returns.

    Example:
        ```python
        assert timed_out(BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable"))
        assert not timed_out(ConnectionResetError())
        ```
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (TimeoutError, redis_errors.TimeoutError)):
            return True
        if isinstance(current, OSError) and current.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
            return True
        current = current.__cause__ or current.__context__
    return False


def _needs_command_name(pool: ConnectionPool) -> bool:
    """redis-py 5.2's ``get_connection(command_name, ...)`` requires the (unused) name;
    5.3+ deprecate passing it."""
    try:
        parameter = inspect.signature(pool.get_connection).parameters.get("command_name")
    except (TypeError, ValueError):
        return False
    return parameter is not None and parameter.default is inspect.Parameter.empty


def _timeval(seconds: float | None) -> bytes:
    whole = int(seconds or 0)
    micros = round(((seconds or 0) - whole) * 1_000_000)
    return struct.pack("@ll", whole, micros)


class DirectLane:
    """Send packed commands on connections kept out of a ``redis.Redis`` client's pool.

    Thread-safe: a connection is used by one call at a time (taken from and returned to
    a deque, whose ``pop``/``append`` are atomic). After ``fork`` the child drops the
    parent's connections without touching them. On a connection or timeout error the
    connection is disconnected (the pool reconnects it later) and the error raised, so
    the caller can retry through redis-py's own retry policy.

    Args:
        pool: The client's connection pool.
    """

    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool
        self._idle: deque[Any] = deque()  # redis.connection.AbstractConnection
        self._pid = os.getpid()
        self._checkout_args: tuple[str, ...] = ("EVALSHA",) if _needs_command_name(pool) else ()

    @classmethod
    def for_client(cls, client: Any) -> DirectLane | None:
        """A lane for ``client``, or ``None`` where the generic path must be used: a
        cluster, a ``single_connection_client``, client-side caching, a non-UTF-8
        encoding, or a blocking or small pool the lane's kept connections could starve."""
        if not isinstance(client, Redis) or getattr(client, "connection", None) is not None:
            return None
        pool = getattr(client, "connection_pool", None)
        if not isinstance(pool, ConnectionPool) or isinstance(pool, BlockingConnectionPool):
            return None
        if getattr(pool, "cache", None) is not None:
            return None
        kwargs = pool.connection_kwargs
        if kwargs.get("encoding", "utf-8").lower().replace("-", "") != "utf8":
            return None
        if kwargs.get("encoding_errors", "strict") != "strict":
            return None
        if (getattr(pool, "max_connections", 0) or 0) < _MIN_POOL_SIZE:
            return None
        return cls(pool)

    # ----- connections ---------------------------------------------------------------

    def _take(self) -> Any:
        if self._pid != os.getpid():  # forked: the parent's sockets are not ours
            self._idle = deque()
            self._pid = os.getpid()
        try:
            return self._idle.pop()
        except IndexError:
            return self._pool.get_connection(*self._checkout_args)

    def _give_back(self, connection: Any) -> None:
        if len(self._idle) < _MAX_IDLE:
            self._idle.append(connection)
        else:
            self._release(connection)

    def _release(self, connection: Any) -> None:
        sock = getattr(connection, "_sock", None)
        if type(sock) is socket.socket:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _timeval(0))
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, _timeval(0))
                sock.settimeout(getattr(connection, "socket_timeout", None))
            except OSError:
                connection.disconnect()
        self._pool.release(connection)

    @staticmethod
    def _socket(connection: Any) -> Any:
        sock = getattr(connection, "_sock", None)
        if sock is None:
            connection.connect()
            sock = getattr(connection, "_sock", None)
        if type(sock) is socket.socket and sock.gettimeout() is not None:
            # Same timeout, enforced by the kernel: no poll() before every send / recv.
            timeout = _timeval(getattr(connection, "socket_timeout", None))
            sock.settimeout(None)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeout)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeout)
        return sock

    def close(self) -> None:
        """Hand every kept connection back to the pool (idempotent)."""
        if self._pid != os.getpid():
            self._idle = deque()
            return
        while True:
            try:
                connection = self._idle.pop()
            except IndexError:
                return
            self._release(connection)

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
        connection = self._take()
        try:
            sock = self._socket(connection)
            try:
                sock.sendall(packed)
            except OSError as exc:
                if timed_out(exc):
                    raise redis_errors.TimeoutError("Timeout writing to socket") from exc
                raise redis_errors.ConnectionError(f"Error while writing to socket: {exc}") from exc
            replies: list[Any] = []
            error: redis_errors.ResponseError | None = None
            for _ in range(count):
                try:
                    replies.append(connection.read_response())
                except redis_errors.ResponseError as exc:
                    replies.append(exc)
                    error = error or exc
        except (redis_errors.ConnectionError, OSError) as exc:
            connection.disconnect()
            self._release(connection)
            if timed_out(exc) and not isinstance(exc, redis_errors.TimeoutError):
                raise redis_errors.TimeoutError("Timeout reading from socket") from exc
            raise
        except BaseException:
            connection.disconnect()
            self._release(connection)
            raise
        self._give_back(connection)
        if error is not None:
            raise error
        return replies
