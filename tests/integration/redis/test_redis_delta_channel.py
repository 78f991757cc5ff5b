"""``DeltaChannel`` threads survive retention: prune, keep_last and copy keep every
ancestor a delta value is rebuilt from (up to its last snapshot)."""

from __future__ import annotations

import pytest
import redis
from langgraph.checkpoint.base import BaseCheckpointSaver
from redis_saver_helpers import delta_graph

from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver

pytestmark = pytest.mark.redis

EXPECTED = [f"n{i}" for i in range(7)]


def run_turns(graph: object, thread_id: str, turns: int = 7) -> list[str]:
    config = {"configurable": {"thread_id": thread_id}}
    for _ in range(turns):
        state = graph.invoke({"items": []}, config)  # type: ignore[attr-defined]
    return list(state["items"])


def test_prune_keep_latest_keeps_the_delta_chain(saver: RedisSaver) -> None:
    graph = delta_graph(saver)
    assert run_turns(graph, "d") == EXPECTED
    before = len(list(saver.list({"configurable": {"thread_id": "d"}})))
    saver.prune(["d"], strategy="keep_latest")
    after = list(saver.list({"configurable": {"thread_id": "d"}}))
    assert 1 < len(after) < before  # the chain back to the last snapshot, not everything
    assert graph.get_state({"configurable": {"thread_id": "d"}}).values["items"] == EXPECTED
    # and the thread keeps working
    state = graph.invoke({"items": []}, {"configurable": {"thread_id": "d"}})
    assert state["items"] == [*EXPECTED, "n7"]


def test_keep_last_never_cuts_a_delta_chain(redis_url: str, redis_prefix: str) -> None:
    with RedisSaver.from_conn_string(redis_url, prefix=redis_prefix, keep_last=1) as saver:
        graph = delta_graph(saver)
        assert run_turns(graph, "k", turns=10) == [f"n{i}" for i in range(10)]
        kept = list(saver.list({"configurable": {"thread_id": "k"}}))
        assert 1 < len(kept) <= 5  # of 30: old ones went, the chain to the snapshot stays...
        state = graph.get_state({"configurable": {"thread_id": "k"}})
        assert state.values["items"] == [f"n{i}" for i in range(10)]  # ...but not needed ones


def test_copy_thread_copies_the_whole_chain(saver: RedisSaver, raw_redis: redis.Redis) -> None:
    graph = delta_graph(saver)
    run_turns(graph, "src")
    saver.copy_thread("src", "dst")
    assert graph.get_state({"configurable": {"thread_id": "dst"}}).values["items"] == EXPECTED
    src_keys, dst_keys = saver._thread_keys("src"), saver._thread_keys("dst")
    assert raw_redis.hlen(dst_keys.writes) == raw_redis.hlen(src_keys.writes) > 0


def test_delta_history_matches_the_base_class_walk(saver: RedisSaver) -> None:
    graph = delta_graph(saver)
    config = {"configurable": {"thread_id": "h"}}
    run_turns(graph, "h")
    # a fork: replay from an early checkpoint so the thread has two branches
    early = list(saver.list(config))[-4]
    graph.invoke({"items": []}, early.config)
    targets = [config, *(t.config for t in saver.list(config))]
    for target in targets:
        for channels in (["items"], ["items", "absent"], []):
            fast = saver.get_delta_channel_history(config=target, channels=channels)
            slow = BaseCheckpointSaver.get_delta_channel_history(
                saver, config=target, channels=channels
            )
            assert fast == slow, target
    latest = saver.get_delta_channel_history(config=config, channels=["items"])
    assert latest["items"]["writes"] or "seed" in latest["items"]


async def test_async_delta_history_matches(async_saver: AsyncRedisSaver) -> None:
    graph = delta_graph(async_saver)
    config = {"configurable": {"thread_id": "ah"}}
    for _ in range(5):
        state = await graph.ainvoke({"items": []}, config)
    assert state["items"] == [f"n{i}" for i in range(5)]
    async for tup in async_saver.alist(config):
        fast = await async_saver.aget_delta_channel_history(config=tup.config, channels=["items"])
        slow = await BaseCheckpointSaver.aget_delta_channel_history(
            async_saver, config=tup.config, channels=["items"]
        )
        assert fast == slow
