"""Per-thread leases and fencing on Redis: exclusivity, expiry, renewal, stale writes
rejected atomically, and deletes that late writers cannot undo."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
import redis
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from redis_saver_helpers import contents, scan_keys

from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisLeaseBackend, RedisSaver
from langgraph_recall.errors import LeaseLostError, StaleWriteError, ThreadBusyError
from langgraph_recall.lease import Lease, with_thread_lease
from langgraph_recall.lease._protocol import (
    FENCE_CONFIG_KEY,
    AsyncLeaseBackend,
    LeaseBackend,
)
from langgraph_recall.lease._tokens import CLOCK_BASE_MS, sequence_of
from tests.graph_helpers import chat_graph, count_seen

pytestmark = pytest.mark.redis


def data_keys(raw: redis.Redis, saver: RedisSaver, thread_id: str) -> dict[bytes, Any]:
    """Contents of the thread's checkpoint data keys (not its lease/fence bookkeeping)."""
    keys = saver._thread_keys(thread_id)
    wanted = {k.encode() for k in keys.data if k != keys.fence}
    readers = {
        b"hash": raw.hgetall,
        b"zset": lambda k: raw.zrange(k, 0, -1, withscores=True),
        b"string": raw.get,
    }
    return {k: readers[raw.type(k)](k) for k in scan_keys(raw, saver.prefix) if k in wanted}


def fenced(thread_id: str, token: int) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, FENCE_CONFIG_KEY: token}}


def test_lease_exclusivity_expiry_and_renewal(saver: RedisSaver) -> None:
    leases = saver.lease_backend()
    assert isinstance(leases, LeaseBackend)
    started_ms = int(time.time() * 1000) - CLOCK_BASE_MS
    first = leases.try_acquire("t", "worker-a", ttl=5.0)
    # a new thread's sequence starts at the server clock in ms (see the next test)
    assert first is not None and abs(sequence_of(first.token) - started_ms) < 60_000
    assert leases.try_acquire("t", "worker-b", ttl=5.0) is None
    assert leases.renew(first, 5.0) is True
    # a retried acquire by the same owner (its reply was lost) gets the same lease back
    assert leases.try_acquire("t", "worker-a", ttl=5.0) == first

    # only the owner releases
    leases.release(type(first)("t", "worker-b", first.token))
    assert leases.try_acquire("t", "worker-b", ttl=5.0) is None
    leases.release(first)
    second = leases.try_acquire("t", "worker-b", ttl=0.1)
    assert second is not None and second.token > first.token
    assert leases.renew(first, 5.0) is False  # superseded

    # an expired lease nobody took can be renewed by its owner
    time.sleep(0.2)
    assert leases.renew(second, 0.1) is True
    assert leases.try_acquire("t", "worker-c", ttl=5.0) is None

    # once it expires and someone else takes it, the old owner has lost it
    time.sleep(0.2)
    third = leases.try_acquire("t", "worker-c", ttl=5.0)
    assert third is not None and third.token > first.token
    assert leases.renew(second, 5.0) is False

    with pytest.raises(ValueError, match="seconds"):
        leases.try_acquire("t", "worker-d", ttl=0)


def test_tokens_stay_unique_after_the_fence_counter_expires(
    saver: RedisSaver, raw_redis: redis.Redis
) -> None:
    """The counter expires with the thread's keys; a writer that stalled past that must not
    share a token with the thread's next owner."""
    graph = chat_graph(saver, reply=count_seen)
    leases = saver.lease_backend()
    stalled = leases.try_acquire("expiring", "worker-a", ttl=0.1)
    assert stalled is not None
    graph.invoke({"messages": [HumanMessage(content="a")]}, fenced("expiring", stalled.token))
    raw_redis.delete(*saver._thread_keys("expiring").data)  # what the thread's TTL does
    time.sleep(0.2)
    owner = leases.try_acquire("expiring", "worker-b", ttl=5.0)
    assert owner is not None and owner.token > stalled.token
    with pytest.raises(StaleWriteError, match="fencing token"):
        graph.invoke(
            {"messages": [HumanMessage(content="late")]}, fenced("expiring", stalled.token)
        )
    state = graph.invoke({"messages": [HumanMessage(content="b")]}, fenced("expiring", owner.token))
    assert contents(state) == ["b", "a saw 1", "b saw 2"]


def test_stale_token_is_rejected_and_writes_nothing(
    saver: RedisSaver, raw_redis: redis.Redis
) -> None:
    graph = chat_graph(saver, reply=count_seen)
    leases = saver.lease_backend()
    old = leases.try_acquire("fenced", "worker-a", ttl=0.1)
    assert old is not None
    state = graph.invoke({"messages": [HumanMessage(content="mine")]}, fenced("fenced", old.token))
    assert contents(state) == ["mine", "a saw 1", "b saw 2"]

    time.sleep(0.2)  # worker-a stalls; its lease expires and worker-b takes over
    new = leases.try_acquire("fenced", "worker-b", ttl=5.0)
    assert new is not None and new.token > old.token
    graph.invoke({"messages": [HumanMessage(content="b's turn")]}, fenced("fenced", new.token))

    before = data_keys(raw_redis, saver, "fenced")
    with pytest.raises(StaleWriteError, match="fencing token"):
        graph.invoke({"messages": [HumanMessage(content="late")]}, fenced("fenced", old.token))
    head = saver.get_tuple({"configurable": {"thread_id": "fenced"}})
    assert head is not None
    with pytest.raises(StaleWriteError):
        stale_config = {
            "configurable": {**head.config["configurable"], FENCE_CONFIG_KEY: old.token}
        }
        saver.put_writes(stale_config, [("x", 1)], "task")
    with pytest.raises(StaleWriteError):
        saver.put(
            {"configurable": {**head.config["configurable"], FENCE_CONFIG_KEY: old.token}},
            empty_checkpoint(),
            {"source": "loop", "step": 99},
            {},
        )
    assert data_keys(raw_redis, saver, "fenced") == before
    assert contents(graph.get_state({"configurable": {"thread_id": "fenced"}}).values)[-1] == (
        "b saw 5"
    )


def test_rejected_first_write_leaves_no_trace(saver: RedisSaver, raw_redis: redis.Redis) -> None:
    lease = saver.lease_backend().try_acquire("fresh", "worker-a", ttl=5.0)
    assert lease is not None
    with pytest.raises(StaleWriteError):
        chat_graph(saver, reply=count_seen).invoke(
            {"messages": [HumanMessage(content="x")]}, fenced("fresh", lease.token - 1)
        )
    assert data_keys(raw_redis, saver, "fresh") == {}
    assert raw_redis.zscore(f"{saver.prefix}:threads", "fresh") is None


def test_delete_cannot_be_undone_by_a_late_writer(
    saver: RedisSaver, raw_redis: redis.Redis
) -> None:
    graph = chat_graph(saver, reply=count_seen)
    leases = saver.lease_backend()
    lease = leases.try_acquire("doomed", "worker-a", ttl=30.0)
    assert lease is not None
    graph.invoke({"messages": [HumanMessage(content="hello")]}, fenced("doomed", lease.token))

    saver.delete_thread("doomed")
    assert saver.get_tuple({"configurable": {"thread_id": "doomed"}}) is None
    assert leases.renew(lease, 30.0) is False  # the holder learns it lost the thread

    with pytest.raises(StaleWriteError):
        graph.invoke({"messages": [HumanMessage(content="zombie")]}, fenced("doomed", lease.token))
    assert saver.get_tuple({"configurable": {"thread_id": "doomed"}}) is None
    assert data_keys(raw_redis, saver, "doomed") == {}
    assert list(saver.list(None)) == []

    # the delete freed the lease (as on Postgres): re-acquiring, even by the same owner,
    # yields a newer token -- the stale one never becomes current again
    leases.release(lease)  # a no-op now
    fresh = leases.try_acquire("doomed", "worker-a", ttl=30.0)
    assert fresh is not None and fresh.token > lease.token
    with pytest.raises(StaleWriteError):
        graph.invoke({"messages": [HumanMessage(content="zombie")]}, fenced("doomed", lease.token))
    graph.invoke({"messages": [HumanMessage(content="reborn")]}, fenced("doomed", fresh.token))
    assert contents(graph.get_state({"configurable": {"thread_id": "doomed"}}).values)[0] == (
        "reborn"
    )


def test_with_thread_lease_uses_the_redis_backend(saver: RedisSaver) -> None:
    graph = with_thread_lease(chat_graph(saver, reply=count_seen), strategy="reject", ttl=10.0)
    config = {"configurable": {"thread_id": "guarded"}}
    state = graph.invoke({"messages": [HumanMessage(content="one")]}, config)
    assert contents(state) == ["one", "a saw 1", "b saw 2"]

    # another worker holding the thread makes this one refuse
    other = RedisLeaseBackend(saver.client, prefix=saver.prefix)
    held = other.try_acquire("guarded", f"other-{uuid.uuid4().hex}", ttl=10.0)
    assert held is not None
    with pytest.raises(ThreadBusyError):
        graph.invoke({"messages": [HumanMessage(content="two")]}, config)
    other.release(held)
    state = graph.invoke({"messages": [HumanMessage(content="two")]}, config)
    assert contents(state)[-3:] == ["two", "a saw 4", "b saw 5"]

    # a run whose thread is deleted mid-way is fenced out
    def delete_during(state: dict[str, Any]) -> dict[str, Any]:
        saver.delete_thread("guarded")
        return {"messages": []}

    from langgraph.graph import END, START, MessagesState, StateGraph

    builder = StateGraph(MessagesState)
    builder.add_node("delete", delete_during)
    builder.add_edge(START, "delete")
    builder.add_edge("delete", END)
    deleting = with_thread_lease(builder.compile(checkpointer=saver), ttl=10.0)
    with pytest.raises(LeaseLostError):
        deleting.invoke({"messages": [HumanMessage(content="x")]}, config)
    assert saver.get_tuple(config) is None


async def test_async_lease_backend(async_saver: AsyncRedisSaver) -> None:
    leases = async_saver.lease_backend()
    assert isinstance(leases, AsyncLeaseBackend)
    lease = await leases.atry_acquire("a", "w1", 5.0)
    assert lease is not None
    assert await leases.atry_acquire("a", "w2", 5.0) is None
    graph = chat_graph(async_saver, reply=count_seen)
    await graph.ainvoke({"messages": [HumanMessage(content="hi")]}, fenced("a", lease.token))
    await async_saver.adelete_thread("a")
    assert await leases.arenew(lease, 5.0) is False
    with pytest.raises(StaleWriteError):
        await graph.ainvoke({"messages": [HumanMessage(content="late")]}, fenced("a", lease.token))
    assert await async_saver.aget_tuple({"configurable": {"thread_id": "a"}}) is None
    await leases.arelease(lease)
    again = await leases.atry_acquire("a", "w2", 5.0)
    assert again is not None and again.token > lease.token


def test_delete_thread_leaves_no_key_naming_the_thread(
    saver: RedisSaver, raw_redis: redis.Redis
) -> None:
    """Erasure is complete: the fencing counter and the lease go with the thread's data;
    the holder stays fenced out and the next owner's token is above the old one."""
    graph = chat_graph(saver, reply=count_seen)
    leases = saver.lease_backend()
    lease = leases.try_acquire("zhang-private-thread", "worker-a", ttl=5.0)
    assert lease is not None
    config = fenced("zhang-private-thread", lease.token)
    graph.invoke({"messages": [HumanMessage(content="hi")]}, config)
    saver.delete_thread("zhang-private-thread")
    named = [k for k in raw_redis.scan_iter(f"{saver.prefix}*") if b"zhang-private" in k]
    assert named == []
    assert all(
        b"zhang-private" not in m
        for k in raw_redis.scan_iter(f"{saver.prefix}*")
        if raw_redis.type(k) == b"zset"
        for m in raw_redis.zrange(k, 0, -1)
    )
    with pytest.raises(StaleWriteError):
        graph.invoke({"messages": [HumanMessage(content="late")]}, config)
    assert saver.get_tuple({"configurable": {"thread_id": "zhang-private-thread"}}) is None
    fresh = leases.try_acquire("zhang-private-thread", "worker-b", ttl=5.0)
    assert fresh is not None and fresh.token > lease.token


def test_a_lease_written_by_the_previous_version_is_honoured(
    saver: RedisSaver, raw_redis: redis.Redis
) -> None:
    """An upgrade mid-lease: a lease key in the 0.1 format (``<token>|<owner>``, no epoch)
    counts as live by its TTL; its holder's token still writes; its renewal moves it to the
    current format (with the server's epoch); and the next token is above the old one."""
    keys = saver._thread_keys("legacy")
    raw_redis.set(keys.fence, "1796073854237297")
    raw_redis.set(keys.lease, "1796073854237297|worker-old", px=30_000)
    leases = saver.lease_backend()
    assert leases.try_acquire("legacy", "worker-new", ttl=5.0) is None
    graph = chat_graph(saver)
    graph.invoke({"messages": [HumanMessage(content="old")]}, fenced("legacy", 1796073854237297))
    held = Lease("legacy", "worker-old", 1796073854237297)
    assert leases.renew(held, 5.0) is True
    assert raw_redis.get(keys.lease).startswith(b"@1796073854237297|")
    leases.release(held)
    fresh = leases.try_acquire("legacy", "worker-new", ttl=5.0)
    assert fresh is not None and fresh.token > held.token
