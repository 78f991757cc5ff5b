"""The Redis savers on a real 3-node Redis Cluster (started by the fixture).

Each thread's keys must share one hash slot (the Lua scripts would fail with CROSSSLOT
otherwise), different threads spread over the nodes, and real graphs run end to end
with the sync and the async saver, including leases and fencing."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from redis import exceptions as redis_errors
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import ClusterNode, RedisCluster
from redis_saver_helpers import LocalServer, contents

from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph_recall.checkpoint.redis._keys import ThreadKeys
from langgraph_recall.errors import BackendUnavailableError, StaleWriteError, ThreadBusyError
from langgraph_recall.lease._protocol import FENCE_CONFIG_KEY
from tests.graph_helpers import chat_graph, count_seen

pytestmark = [pytest.mark.redis, pytest.mark.slow]

THREADS = ["alpha", "beta", "gamma{1}", "delta}x{", "epsilon:ns", "zeta%7B"]


def test_sync_saver_on_cluster(redis_cluster_nodes: list[tuple[str, int]]) -> None:
    nodes = [ClusterNode(host, port) for host, port in redis_cluster_nodes]
    client = RedisCluster(startup_nodes=nodes)
    try:
        saver = RedisSaver(client, prefix="clsync", ttl={"default_ttl": 10}, keep_last=3)
        saver.setup()
        graph = chat_graph(saver, reply=count_seen)
        for thread in THREADS:
            config = {"configurable": {"thread_id": thread}}
            graph.invoke({"messages": [HumanMessage(content="hi")]}, config)
            state = graph.invoke({"messages": [HumanMessage(content="again")]}, config)
            assert contents(state) == ["hi", "a saw 1", "b saw 2", "again", "a saw 4", "b saw 5"]
            history = list(graph.get_state_history(config))
            assert len(history) == 3  # keep_last=3 on the root namespace

        # every key of a thread sits in one slot; the threads use several nodes
        slots = set()
        for thread in THREADS:
            keys = ThreadKeys.build("clsync", thread)
            thread_slots = {client.keyslot(k) for k in [*keys.data, keys.lease]}
            assert len(thread_slots) == 1
            slots |= thread_slots
            assert all(client.pttl(k) > 0 for k in keys.data[:4])
        owners = {client.nodes_manager.get_node_from_slot(s).port for s in slots}
        assert len(owners) >= 2

        listed = {t.config["configurable"]["thread_id"] for t in saver.list(None)}
        assert listed == set(THREADS)

        # leases and fencing work across the cluster
        leases = saver.lease_backend()
        lease = leases.try_acquire("alpha", "worker-1", ttl=5.0)
        assert lease is not None
        assert leases.try_acquire("alpha", "worker-2", ttl=5.0) is None
        fenced = {"configurable": {"thread_id": "alpha", FENCE_CONFIG_KEY: lease.token}}
        graph.invoke({"messages": [HumanMessage(content="fenced")]}, fenced)
        saver.delete_thread("alpha")
        with pytest.raises(StaleWriteError):
            graph.invoke({"messages": [HumanMessage(content="late")]}, fenced)
        assert saver.get_tuple({"configurable": {"thread_id": "alpha"}}) is None
        assert leases.renew(lease, 5.0) is False

        saver.copy_thread("beta", "beta-copy")
        copied = saver.get_tuple({"configurable": {"thread_id": "beta-copy"}})
        assert copied is not None and len(copied.checkpoint["channel_values"]["messages"]) == 6
        saver.prune(["gamma{1}"], strategy="keep_latest")
        assert len(list(saver.list({"configurable": {"thread_id": "gamma{1}"}}))) == 1
    finally:
        client.close()


async def test_async_saver_on_cluster(redis_cluster_nodes: list[tuple[str, int]]) -> None:
    nodes = [ClusterNode(host, port) for host, port in redis_cluster_nodes]
    client = AsyncRedisCluster(startup_nodes=nodes)
    try:
        saver = AsyncRedisSaver(client, prefix="clasync")
        await saver.setup()
        graph = chat_graph(saver, reply=count_seen)
        for thread in THREADS:
            config = {"configurable": {"thread_id": thread}}
            first = {**config, "metadata": {"run_id": f"{thread}-1"}}
            second = {**config, "metadata": {"run_id": f"{thread}-2"}}
            await graph.ainvoke({"messages": [HumanMessage(content="hi")]}, first)
            state = await graph.ainvoke({"messages": [HumanMessage(content="more")]}, second)
            assert contents(state)[-3:] == ["more", "a saw 4", "b saw 5"]
            history = [s async for s in graph.aget_state_history(config)]
            assert len(history) == 8  # 4 checkpoints per invoke

        run_ids = set()
        async for tup in saver.alist(None, filter={"source": "input"}):
            run_ids.add(tup.metadata["run_id"])
        assert run_ids == {f"{t}-{n}" for t in THREADS for n in (1, 2)}

        await saver.adelete_for_runs([f"{t}-1" for t in THREADS])
        for thread in THREADS:
            left = [t async for t in saver.alist({"configurable": {"thread_id": thread}})]
            assert {t.metadata["run_id"] for t in left} == {f"{thread}-2"}

        leases = saver.lease_backend()
        lease = await leases.atry_acquire("beta", "w1", 5.0)
        assert lease is not None and await leases.arenew(lease, 5.0)
        await leases.arelease(lease)
        again = await leases.atry_acquire("beta", "w2", 5.0)
        assert again is not None and again.token > lease.token

        await saver.adelete_thread("beta")
        assert await saver.aget_tuple({"configurable": {"thread_id": "beta"}}) is None
    finally:
        await client.aclose()


async def test_from_conn_string_with_cluster_option(
    redis_cluster_nodes: list[tuple[str, int]],
) -> None:
    host, port = redis_cluster_nodes[0]
    url = f"redis://{host}:{port}"
    with RedisSaver.from_conn_string(url, cluster=True, prefix="clurl") as saver:
        saver.setup()
        graph = chat_graph(saver, reply=count_seen)
        state = graph.invoke(
            {"messages": [HumanMessage(content="hi")]}, {"configurable": {"thread_id": "u"}}
        )
        assert contents(state) == ["hi", "a saw 1", "b saw 2"]
    async with AsyncRedisSaver.from_conn_string(url, cluster=True, prefix="clurl") as async_saver:
        loaded = await async_saver.aget_tuple({"configurable": {"thread_id": "u"}})
        assert loaded is not None
        assert contents(loaded.checkpoint["channel_values"]) == ["hi", "a saw 1", "b saw 2"]


@pytest.mark.serial  # a time bound
async def test_one_timeout_bounds_a_call_to_a_frozen_cluster_node(
    redis_cluster_servers: list[LocalServer],
) -> None:
    """redis-py's cluster client retries a timed-out command up to 10 times (55 s with a
    5 s timeout); the clients ``from_conn_string(cluster=True)`` builds do not."""
    timeout = 1.0  # well under the fixture's cluster-node-timeout: no failover starts
    url = f"redis://127.0.0.1:{redis_cluster_servers[0].port}"
    config = {"configurable": {"thread_id": "frozen"}}
    with RedisSaver.from_conn_string(
        url, cluster=True, prefix="clfrz", socket_timeout=timeout
    ) as saver:
        chat_graph(saver, reply=count_seen).invoke(
            {"messages": [HumanMessage(content="hi")]}, config
        )
        slot = saver.client.keyslot(ThreadKeys.build("clfrz", "frozen").data[0])
        owner = saver.client.nodes_manager.get_node_from_slot(slot).port
        (server,) = [s for s in redis_cluster_servers if s.port == owner]
        async with AsyncRedisSaver.from_conn_string(
            url, cluster=True, prefix="clfrz", socket_timeout=timeout
        ) as async_saver:
            assert await async_saver.aget_tuple(config) is not None
            os.kill(server.process.pid, signal.SIGSTOP)
            try:
                for call in (
                    lambda: saver.get_tuple(config),
                    lambda: saver.put_writes(
                        {"configurable": {**config["configurable"], "checkpoint_id": "1"}},
                        [("x", 1)],
                        "task",
                    ),
                ):
                    started = time.monotonic()
                    with pytest.raises(BackendUnavailableError, match="did not answer in time"):
                        call()
                    assert time.monotonic() - started < timeout + 1.5
                started = time.monotonic()
                with pytest.raises(BackendUnavailableError, match="did not answer in time"):
                    await async_saver.aget_tuple(config)
                assert time.monotonic() - started < timeout + 1.5
            finally:
                os.kill(server.process.pid, signal.SIGCONT)
            loaded = await async_saver.aget_tuple(config)
            assert loaded is not None
        assert contents(saver.get_tuple(config).checkpoint["channel_values"])[0] == "hi"


def test_cluster_registry_is_written_with_the_put_and_the_lease_guards_writes(
    redis_cluster_nodes: list[tuple[str, int]],
) -> None:
    """Each thread's slot registry shares its slot, so the PUT script registers the thread
    atomically even on a cluster: a put whose reply is lost, then retried, stays listed.
    The lease guard works there too (the lease key is in the same slot)."""
    nodes = [ClusterNode(host, port) for host, port in redis_cluster_nodes]
    client = RedisCluster(startup_nodes=nodes)
    try:
        saver = RedisSaver(client, prefix="clreg")
        saver.setup()
        graph = chat_graph(saver, reply=count_seen)
        for thread in THREADS:
            keys = ThreadKeys.build("clreg", thread)
            assert {client.keyslot(k) for k in keys.script} == {client.keyslot(keys.idx)}
            original = saver._send

            def reply_lost(commands: Any, original: Any = original) -> Any:
                saver._send = original  # type: ignore[method-assign]
                original(commands)
                raise redis_errors.ConnectionError("reply lost (injected)")

            saver._send = reply_lost  # type: ignore[method-assign]
            config = {"configurable": {"thread_id": thread}}
            with pytest.raises(BackendUnavailableError):
                graph.invoke({"messages": [HumanMessage(content="hi")]}, config)
            graph.invoke({"messages": [HumanMessage(content="retry")]}, config)
        listed = {t.config["configurable"]["thread_id"] for t in saver.list(None)}
        assert listed == set(THREADS)

        lease = saver.lease_backend().try_acquire("beta", "worker-a", ttl=5.0)
        assert lease is not None
        with pytest.raises(ThreadBusyError, match="'beta'"):
            graph.invoke(
                {"messages": [HumanMessage(content="b")]}, {"configurable": {"thread_id": "beta"}}
            )
    finally:
        client.close()
