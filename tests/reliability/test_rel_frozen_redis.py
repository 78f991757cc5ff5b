"""One timeout bounds a call: a frozen Redis (a test-owned ``redis-server`` stopped with
SIGSTOP: connections are accepted by the kernel, nothing ever answers).

Every saver call must fail within the socket timeout + ε (no hidden second attempt), with
``BackendUnavailableError`` naming host:port — the sync saver's fast lane, its generic
redis-py path and the async saver — and work again right after SIGCONT. Before the fix
the fast lane took two timeouts (10.2 s with the default 5 s) and, on redis-py < 8, whose
clients have no default ``socket_timeout``, a call blocked forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph_recall.checkpoint.redis._base import DEFAULT_SOCKET_TIMEOUT
from langgraph_recall.errors import BackendUnavailableError, LangGraphRecallError
from tests.graph_helpers import chat_graph
from tests.reliability._figures import Figures
from tests.reliability._servers import OwnedRedis
from tests.reliability._workload import thread_config, turn_input

# serial: its time bounds are measured alone (scripts/test.sh)
pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.serial]

EPSILON = 1.5
"""Seconds a failing call may take beyond its timeout (scheduling on a loaded 2-core box)."""

SHORT_TIMEOUT = 1.0
"""``socket_timeout`` of the per-method sweep (every method, every path, in little time)."""


@contextlib.contextmanager
def frozen(server: OwnedRedis) -> Iterator[None]:
    """SIGSTOP the server for the block, SIGCONT after (whatever happens)."""
    assert server.process is not None
    os.kill(server.process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(server.process.pid, signal.SIGCONT)


def check_failure(
    error: BaseException | None, seconds: float, bound: float, port: int, what: str = "call"
) -> None:
    assert isinstance(error, BackendUnavailableError), (what, repr(error))
    assert isinstance(error, ConnectionError) and isinstance(error, LangGraphRecallError)
    assert f"127.0.0.1:{port}" in str(error)
    assert "did not answer in time" in str(error)
    assert seconds < bound + EPSILON, f"{what}: {seconds:.2f} s for a {bound} s timeout"


def timed(call: Callable[[], Any]) -> tuple[BaseException | None, float]:
    start = time.monotonic()
    try:
        call()
    except Exception as exc:
        return exc, time.monotonic() - start
    return None, time.monotonic() - start


async def atimed(call: Callable[[], Awaitable[Any]]) -> tuple[BaseException | None, float]:
    start = time.monotonic()
    try:
        await call()
    except Exception as exc:
        return exc, time.monotonic() - start
    return None, time.monotonic() - start


def sync_calls(saver: RedisSaver) -> dict[str, Callable[[], Any]]:
    head = saver.get_tuple(thread_config("t"))
    assert head is not None
    checkpoint = empty_checkpoint()
    return {
        "get_tuple": lambda: saver.get_tuple(thread_config("t")),
        "list": lambda: list(saver.list(thread_config("t"), limit=2)),
        "list all": lambda: list(saver.list(None)),
        "put": lambda: saver.put(head.config, checkpoint, {"source": "loop", "step": 9}, {}),
        "put_writes": lambda: saver.put_writes(head.config, [("messages", 1)], "task"),
        "delete_thread": lambda: saver.delete_thread("other"),
        "copy_thread": lambda: saver.copy_thread("t", "copy"),
        "prune": lambda: saver.prune(["t"]),
        "delete_for_runs": lambda: saver.delete_for_runs(["run"]),
        "invoke": lambda: chat_graph(saver).invoke(turn_input("x"), thread_config("t")),
    }


@pytest.mark.parametrize("path", ["fast lane", "generic"])
def test_one_timeout_bounds_a_sync_call_to_a_frozen_redis(
    owned_redis: OwnedRedis, path: str, figures: Figures
) -> None:
    # a pool under 64 connections makes the saver use redis-py's generic request path
    options: dict[str, Any] = {} if path == "fast lane" else {"max_connections": 8}
    with RedisSaver.from_conn_string(owned_redis.url, prefix="frz", **options) as saver:
        assert (saver._kept is not None) == (path == "fast lane")
        graph = chat_graph(saver)
        graph.invoke(turn_input("before"), thread_config("t"))
        with frozen(owned_redis):  # the default timeout: one call, ≤ 5 s + ε
            error, seconds = timed(lambda: saver.get_tuple(thread_config("t")))
        check_failure(error, seconds, DEFAULT_SOCKET_TIMEOUT, owned_redis.port)
        figures.extend("frozen_redis_call_seconds", [round(seconds, 2)])
        assert saver.get_tuple(thread_config("t")) is not None  # recovered at once

    with RedisSaver.from_conn_string(
        owned_redis.url, prefix="frz", socket_timeout=SHORT_TIMEOUT, **options
    ) as saver:
        calls = sync_calls(saver)
        with frozen(owned_redis):
            for name, call in calls.items():
                error, seconds = timed(call)
                check_failure(error, seconds, SHORT_TIMEOUT, owned_redis.port, name)
                figures.add("frozen_redis_calls")
        graph = chat_graph(saver)
        graph.invoke(turn_input("after"), thread_config("t"))
        texts = [m.content for m in graph.get_state(thread_config("t")).values["messages"]]
        assert texts[:3] == ["before", "a:before", "b:before"]
        assert texts[-3:] == ["after", "a:after", "b:after"]


async def test_one_timeout_bounds_an_async_call_to_a_frozen_redis(
    owned_redis: OwnedRedis, figures: Figures
) -> None:
    async with AsyncRedisSaver.from_conn_string(owned_redis.url, prefix="afrz") as saver:
        graph = chat_graph(saver)
        await graph.ainvoke(turn_input("before"), thread_config("t"))
        with frozen(owned_redis):
            error, seconds = await atimed(lambda: saver.aget_tuple(thread_config("t")))
        check_failure(error, seconds, DEFAULT_SOCKET_TIMEOUT, owned_redis.port)
        figures.extend("frozen_redis_call_seconds", [round(seconds, 2)])
        assert await saver.aget_tuple(thread_config("t")) is not None

    async with AsyncRedisSaver.from_conn_string(
        owned_redis.url, prefix="afrz", socket_timeout=SHORT_TIMEOUT
    ) as saver:
        head = await saver.aget_tuple(thread_config("t"))
        assert head is not None
        calls: dict[str, Callable[[], Awaitable[Any]]] = {
            "aget_tuple": lambda: saver.aget_tuple(thread_config("t")),
            "alist": lambda: _collect(saver.alist(None)),
            "aput": lambda: saver.aput(head.config, empty_checkpoint(), {}, {}),
            "aput_writes": lambda: saver.aput_writes(head.config, [("messages", 1)], "task"),
            "adelete_thread": lambda: saver.adelete_thread("other"),
            "acopy_thread": lambda: saver.acopy_thread("t", "copy"),
            "aprune": lambda: saver.aprune(["t"]),
            "ainvoke": lambda: chat_graph(saver).ainvoke(turn_input("x"), thread_config("t")),
        }
        with frozen(owned_redis):
            for name, call in calls.items():
                error, seconds = await atimed(call)
                check_failure(error, seconds, SHORT_TIMEOUT, owned_redis.port, name)
                figures.add("frozen_redis_calls")
        await asyncio.sleep(0)
        await chat_graph(saver).ainvoke(turn_input("after"), thread_config("t"))
        state = await chat_graph(saver).aget_state(thread_config("t"))
        assert [m.content for m in state.values["messages"]][-3:] == ["after", "a:after", "b:after"]


async def _collect(items: Any) -> list[Any]:
    return [item async for item in items]
