"""Bad input on the Redis savers (H8-14) and ``await AsyncRedisSaver.setup()`` parity.

Same rules as the Postgres savers (``checkpoint/_config.py``): ids are ``str()``-ed,
unpaired surrogates and NUL in ids raise ``ConfigurationError`` before any command is
sent (nothing is written: Postgres text cannot store NUL, so no saver accepts it in an
id); bad filters raise ``InvalidFilterError``; a negative ``limit`` lists nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import redis
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from redis_saver_helpers import contents, scan_keys

from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph_recall.checkpoint.redis._keys import SCHEMA_VERSION
from langgraph_recall.errors import ConfigurationError, InvalidFilterError
from tests.graph_helpers import chat_graph, count_seen

pytestmark = pytest.mark.redis


def turn(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


def bad_calls(saver: RedisSaver) -> dict[str, Callable[[], Any]]:
    graph = chat_graph(saver, reply=count_seen)
    checkpoint = empty_checkpoint()
    return {
        "get_tuple": lambda: saver.get_tuple({"configurable": {"thread_id": "a\ud800"}}),
        "get_tuple ns": lambda: saver.get_tuple(
            {"configurable": {"thread_id": "t", "checkpoint_ns": "\udc00"}}
        ),
        "invoke": lambda: graph.invoke(turn("x"), {"configurable": {"thread_id": "\ud800"}}),
        "put": lambda: saver.put({"configurable": {"thread_id": "\ud800"}}, checkpoint, {}, {}),
        "put_writes": lambda: saver.put_writes(
            {"configurable": {"thread_id": "\ud800", "checkpoint_id": "1"}}, [("c", 1)], "task"
        ),
        "delete_thread": lambda: saver.delete_thread("\ud800"),
        "copy_thread": lambda: saver.copy_thread("good", "\ud800"),
        "prune": lambda: saver.prune(["\ud800"]),
        "delete_for_runs": lambda: saver.delete_for_runs(["\ud800"]),
        "list thread": lambda: list(saver.list({"configurable": {"thread_id": "\ud800"}})),
        "list filter": lambda: list(saver.list(None, filter={"k": "\ud800"})),
        "list limit": lambda: list(saver.list(None, limit="2")),  # type: ignore[arg-type]
        "delta history": lambda: saver.get_delta_channel_history(
            config={"configurable": {"thread_id": "\ud800"}}, channels=["messages"]
        ),
    }


def test_surrogates_raise_configuration_error_and_write_nothing(
    saver: RedisSaver, raw_redis: redis.Redis, redis_prefix: str
) -> None:
    chat_graph(saver, reply=count_seen).invoke(
        turn("keep"), {"configurable": {"thread_id": "good"}}
    )
    keys_before = sorted(scan_keys(raw_redis, redis_prefix))
    for name, call in bad_calls(saver).items():
        with pytest.raises((ConfigurationError, InvalidFilterError)) as info:
            call()
        assert isinstance(info.value, ValueError), name
        assert "surrogate" in str(info.value) or "limit" in str(info.value), name
    assert sorted(scan_keys(raw_redis, redis_prefix)) == keys_before
    good = saver.get_tuple({"configurable": {"thread_id": "good"}})
    assert good is not None and good.config["configurable"]["thread_id"] == "good"


def test_int_ids_and_negative_limit_and_nul_ids_refused(
    saver: RedisSaver, raw_redis: redis.Redis, redis_prefix: str
) -> None:
    graph = chat_graph(saver, reply=count_seen)
    config = {"configurable": {"thread_id": 5}}
    graph.invoke(turn("hi"), config)
    assert contents(graph.get_state(config).values) == ["hi", "a saw 1", "b saw 2"]
    latest = saver.get_tuple({"configurable": {"thread_id": "5"}})
    assert latest is not None and latest.config["configurable"]["thread_id"] == "5"
    assert len(list(saver.list({"configurable": {"thread_id": 5}}, limit=2))) == 2
    assert list(saver.list({"configurable": {"thread_id": 5}}, limit=-1)) == []
    assert list(saver.list(None, limit=0)) == []
    keys_before = scan_keys(raw_redis, redis_prefix)
    with pytest.raises(ConfigurationError, match="NUL"):  # as on Postgres
        graph.invoke(turn("hi"), {"configurable": {"thread_id": "a\x00b"}})
    assert scan_keys(raw_redis, redis_prefix) == keys_before
    saver.delete_thread(5)
    assert saver.get_tuple({"configurable": {"thread_id": 5}}) is None


async def test_async_setup_is_awaitable_and_asetup_is_an_alias(
    redis_url: str, redis_prefix: str, raw_redis: redis.Redis
) -> None:
    async with AsyncRedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as saver:
        await saver.setup()
        layout = str(SCHEMA_VERSION).encode()
        assert raw_redis.get(f"{redis_prefix}:schema") == layout
        raw_redis.delete(f"{redis_prefix}:schema")
        await saver.asetup()
        assert raw_redis.get(f"{redis_prefix}:schema") == layout


async def test_async_saver_rejects_surrogates(async_saver: AsyncRedisSaver) -> None:
    for call in (
        lambda: async_saver.aget_tuple({"configurable": {"thread_id": "a\ud800"}}),
        lambda: async_saver.adelete_thread("\ud800"),
        lambda: async_saver.acopy_thread("\ud800", "b"),
        lambda: async_saver.aput(
            {"configurable": {"thread_id": "\ud800"}}, empty_checkpoint(), {}, {}
        ),
    ):
        with pytest.raises(ConfigurationError, match="surrogate"):
            await call()
    with pytest.raises(ConfigurationError, match="surrogate"):
        [t async for t in async_saver.alist({"configurable": {"thread_id": "\ud800"}})]
    assert [t async for t in async_saver.alist(None, limit=-1)] == []
