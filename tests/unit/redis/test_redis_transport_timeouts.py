"""One timeout bounds a call (no Redis server needed): a server that never answers is a
``TimeoutError`` on the kept connections on every redis-py version, the client defaults, the
cluster retry list and the error mapping."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import redis
from redis import exceptions as redis_errors

from langgraph_recall.checkpoint.redis._base import (
    CLUSTER_RETRIED_ERRORS,
    DEFAULT_SOCKET_TIMEOUT,
    client_defaults,
    translate_errors,
)
from langgraph_recall.checkpoint.redis._kept_connections import KeptConnections, pack_command
from langgraph_recall.checkpoint.redis.aio import BoundedAsyncRedisCluster
from langgraph_recall.checkpoint.redis.saver import BoundedRedisCluster
from langgraph_recall.errors import BackendUnavailableError


class FreezableServer:
    """A fake Redis on a local port: ``+OK`` to every command until :attr:`frozen` is set,
    then silence (what a SIGSTOPped server looks like to an open connection)."""

    def __init__(self) -> None:
        self.frozen = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self._listener.accept()
                threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            while data := conn.recv(65536):
                commands = sum(1 for line in data.split(b"\r\n") if line.startswith(b"*"))
                if not self.frozen.is_set():
                    conn.sendall(b"+OK\r\n" * commands)

    def close(self) -> None:
        self._listener.close()


@pytest.fixture
def server() -> Iterator[FreezableServer]:
    fake = FreezableServer()
    yield fake
    fake.close()


@pytest.mark.serial  # a time bound
def test_a_hung_server_is_one_timeout_on_the_kept_connections(server: FreezableServer) -> None:
    client = redis.Redis(port=server.port, socket_timeout=0.3, protocol=2)
    kept = KeptConnections.for_client(client)
    assert kept is not None
    assert kept.execute(pack_command(["SET", "k", "v"]), 1) == [b"OK"]
    server.frozen.set()
    started = time.monotonic()
    with pytest.raises(redis_errors.TimeoutError):
        kept.execute(pack_command(["SET", "k", "v"]), 1)
    assert time.monotonic() - started < 2.0  # one timeout, not a retry
    assert kept.idle == 0  # the timed-out connection went back to the pool, disconnected
    kept.close()
    client.close()


def test_from_conn_string_bounds_every_command_by_default() -> None:
    options = client_defaults({})
    assert options["socket_timeout"] == DEFAULT_SOCKET_TIMEOUT == 5.0
    assert options["socket_connect_timeout"] == 5.0
    assert client_defaults({"socket_timeout": None})["socket_timeout"] is None  # user's choice


def test_cluster_clients_we_build_do_not_retry_timeouts() -> None:
    assert redis_errors.TimeoutError not in CLUSTER_RETRIED_ERRORS
    assert redis_errors.ConnectionError in CLUSTER_RETRIED_ERRORS  # failover still retried
    assert BoundedRedisCluster.ERRORS_ALLOW_RETRY == CLUSTER_RETRIED_ERRORS
    assert BoundedAsyncRedisCluster.ERRORS_ALLOW_RETRY == CLUSTER_RETRIED_ERRORS


@pytest.mark.parametrize(
    "error",
    [
        redis_errors.TimeoutError("Timeout reading from socket"),
        redis_errors.ConnectionError("Error 111 connecting"),
        redis_errors.ClusterDownError("The cluster is down"),
    ],
)
def test_unreachable_hung_or_down_servers_are_backend_unavailable(error: Exception) -> None:
    with (
        pytest.raises(BackendUnavailableError, match="db:6380") as info,
        translate_errors("db:6380"),
    ):
        raise error
    assert isinstance(info.value, ConnectionError)
    assert info.value.__cause__ is error
