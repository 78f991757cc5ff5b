"""A Redis that refuses commands (out of memory, a read-only replica, a foreign key under our
prefix) gets our errors from every saver write, naming the state and the fix, and writes
nothing (an erasure may still run: Redis allows deletes when full); once the server is back
to normal the same saver works.

Before: the server's ``ResponseError`` (``OOM command not allowed ...``, ``READONLY ...``,
``WRONGTYPE ...``) escaped raw from every write.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
import redis

from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph_recall.errors import BackendUnavailableError, ConfigurationError
from tests.graph_helpers import chat_graph
from tests.reliability._servers import OwnedRedis, free_port
from tests.reliability._workload import thread_config, turn_input
from tests.reliability.test_rel_frozen_redis import sync_calls, timed

pytestmark = [pytest.mark.redis]

WRITES = {"put", "put_writes", "copy_thread", "invoke"}
"""Writes the server must refuse in both states (each one a whole script or pipeline)."""
ERASURES = {"delete_thread", "prune", "delete_for_runs"}
"""Deletions Redis may still run out of memory (it allows DEL): done, or our error."""


@contextlib.contextmanager
def refusing(server: OwnedRedis, state: str) -> Iterator[None]:
    """The server in ``state`` for the block, back to normal after."""
    admin = redis.Redis(port=server.port)
    if state == "oom":
        admin.config_set("maxmemory-policy", "noeviction")
        admin.config_set("maxmemory", "1")
    else:
        admin.replicaof("127.0.0.1", str(free_port()))  # a primary that is not there
    try:
        yield
    finally:
        if state == "oom":
            admin.config_set("maxmemory", "0")
        else:
            admin.replicaof("NO", "ONE")
        admin.close()


def keys(server: OwnedRedis) -> dict[bytes, bytes | None]:
    client = redis.Redis(port=server.port)
    try:
        return {key: client.dump(key) for key in client.scan_iter("ref*")}
    finally:
        client.close()


@pytest.mark.parametrize(("state", "says"), [("oom", "maxmemory"), ("replica", "read-only")])
def test_a_refusing_server_gets_our_error_and_nothing_changes(
    owned_redis: OwnedRedis, state: str, says: str
) -> None:
    with RedisSaver.from_conn_string(owned_redis.url, prefix="ref") as saver:
        chat_graph(saver).invoke(turn_input("before"), thread_config("t"))
        calls = sync_calls(saver)
        before = keys(owned_redis)
        with refusing(owned_redis, state):
            for name in sorted(WRITES & set(calls)):
                error, _ = timed(calls[name])
                assert isinstance(error, BackendUnavailableError), (name, repr(error))
                assert says in str(error) and f"127.0.0.1:{owned_redis.port}" in str(error)
            assert saver.get_tuple(thread_config("t")) is not None  # reads still work
            assert keys(owned_redis) == before
            for name in sorted(ERASURES):
                error, _ = timed(calls[name])
                assert error is None or isinstance(error, BackendUnavailableError), name
        state_after = chat_graph(saver).invoke(turn_input("after"), thread_config("t"))
        assert [m.content for m in state_after["messages"]][-3:] == ["after", "a:after", "b:after"]


async def test_async_saver_on_a_full_server_gets_our_error(owned_redis: OwnedRedis) -> None:
    async with AsyncRedisSaver.from_conn_string(owned_redis.url, prefix="ref") as saver:
        graph = chat_graph(saver)
        await graph.ainvoke(turn_input("before"), thread_config("a"))
        with (
            refusing(owned_redis, "oom"),
            pytest.raises(BackendUnavailableError, match="maxmemory"),
        ):
            await graph.ainvoke(turn_input("refused"), thread_config("a"))
        await graph.ainvoke(turn_input("after"), thread_config("a"))


def test_a_foreign_key_under_the_prefix_is_a_configuration_error(owned_redis: OwnedRedis) -> None:
    with RedisSaver.from_conn_string(owned_redis.url, prefix="ref") as saver:
        key = saver._thread_keys("mine").idx
        client = redis.Redis(port=owned_redis.port)
        client.hset(key, "someone", "else")  # another application's hash where we keep a zset
        client.close()
        with pytest.raises(ConfigurationError, match="prefix="):
            chat_graph(saver).invoke(turn_input("x"), thread_config("mine"))
