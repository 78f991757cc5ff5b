"""One timeout bounds a call (pure parts): which socket errors are timeouts on every
redis-py version, the client defaults, the cluster retry list and the error mapping."""

from __future__ import annotations

import errno

import pytest
from redis import exceptions as redis_errors

from langgraph_memory.checkpoint.redis._base import (
    CLUSTER_RETRIED_ERRORS,
    DEFAULT_SOCKET_TIMEOUT,
    client_defaults,
    translate_errors,
)
from langgraph_memory.checkpoint.redis._wire import timed_out
from langgraph_memory.checkpoint.redis.aio import BoundedAsyncRedisCluster
from langgraph_memory.checkpoint.redis.saver import BoundedRedisCluster
from langgraph_memory.errors import BackendUnavailableError


def _wrapped(inner: BaseException, outer: BaseException) -> BaseException:
    try:
        try:
            raise inner
        except BaseException:
            raise outer  # noqa: B904 - implicit context, as redis-py's parsers raise
    except BaseException as exc:
        return exc


def test_kernel_timeouts_are_timeouts_whatever_redis_py_calls_them() -> None:
    eagain = BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
    assert timed_out(eagain)
    assert timed_out(TimeoutError("timed out"))  # socket.timeout
    assert timed_out(redis_errors.TimeoutError("Timeout reading from socket"))
    # redis-py 5.2 - 7 report SO_RCVTIMEO's EAGAIN as a ConnectionError
    assert timed_out(_wrapped(eagain, redis_errors.ConnectionError("Error while reading")))
    assert not timed_out(redis_errors.ConnectionError("Connection closed by server."))
    assert not timed_out(ConnectionResetError(errno.ECONNRESET, "reset"))
    refused = ConnectionRefusedError(errno.ECONNREFUSED, "refused")
    assert not timed_out(_wrapped(refused, redis_errors.ConnectionError("Error 111")))


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
