"""AsyncPostgresSaver under real graphs: delta-channel history, prune, sync bridges, no lock."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from pg_saver_helpers import build_delta_graph, count_rows, thread, turn

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver
from langgraph_recall.errors import BackendUnavailableError
from tests.graph_helpers import chat_graph

pytestmark = pytest.mark.postgres


async def test_delta_channel_history_matches_the_reference_walk(
    async_saver: AsyncPostgresSaver,
) -> None:
    graph = build_delta_graph(async_saver)
    for i in range(5):
        await graph.ainvoke({"items": [f"in{i}"]}, thread("adelta"))
    state = await graph.aget_state(thread("adelta"))
    assert state.values["items"] == [x for i in range(5) for x in (f"in{i}", f"n{2 * i + 1}")]

    async for snapshot in async_saver.alist(thread("adelta"), limit=6):
        config = snapshot.config
        fast = await async_saver.aget_delta_channel_history(config=config, channels=["items"])
        # the base class walks get_tuple + parent_config: the reference semantics
        slow = await BaseCheckpointSaver.aget_delta_channel_history(
            async_saver, config=config, channels=["items"]
        )
        assert fast == slow

    await async_saver.aprune(["adelta"], strategy="keep_latest")
    assert (await graph.aget_state(thread("adelta"))).values["items"] == state.values["items"]
    await graph.ainvoke({"items": ["z"]}, thread("adelta"))
    assert (await graph.aget_state(thread("adelta"))).values["items"][-2:] == ["z", "n11"]


async def test_async_graph_history_copy_and_runs(async_saver: AsyncPostgresSaver) -> None:
    graph = chat_graph(async_saver)
    await graph.ainvoke(turn("one"), thread("ah", run_id="r1"))
    await graph.ainvoke(turn("two"), thread("ah", run_id="r2"))
    history = [h async for h in graph.aget_state_history(thread("ah"))]
    assert len(history) == 8

    await async_saver.acopy_thread("ah", "ah-copy")
    copied = [h.values for h in [h async for h in graph.aget_state_history(thread("ah-copy"))]]
    assert copied == [h.values for h in history]

    await async_saver.adelete_for_runs(["r2"])
    state = await graph.aget_state(thread("ah"))
    assert [m.content for m in state.values["messages"]] == ["one", "a:one", "b:one"]
    # run ids are global: the copy's checkpoints of run r2 (same metadata) go too
    copy_state = await graph.aget_state(thread("ah-copy"))
    assert [m.content for m in copy_state.values["messages"]] == ["one", "a:one", "b:one"]
    assert len([h async for h in graph.aget_state_history(thread("ah-copy"))]) == 4


async def test_sync_bridges_run_from_worker_threads(async_saver: AsyncPostgresSaver) -> None:
    graph = chat_graph(async_saver)
    await graph.ainvoke(turn("x"), thread("bridge"))
    dsn = async_saver.conn.conninfo  # type: ignore[union-attr]

    def from_a_thread() -> Any:
        async_saver.copy_thread("bridge", "bridge-2")
        async_saver.prune(["bridge"], strategy="keep_latest")
        async_saver.delete_for_runs(["nope"])
        return async_saver.get_tuple(thread("bridge-2"))

    copied = await asyncio.to_thread(from_a_thread)
    assert copied is not None
    assert count_rows(dsn, "checkpoints", "bridge") == 1
    with pytest.raises(asyncio.InvalidStateError):
        async_saver.copy_thread("bridge", "bridge-3")  # on the loop thread: refused


@contextlib.asynccontextmanager
async def holding_a_connection(saver: AsyncPostgresSaver) -> AsyncIterator[None]:
    """Keep one of the saver's connections busy (a cursor open) until the block ends."""
    held = asyncio.Event()
    release = asyncio.Event()

    async def hold() -> None:
        async with saver._connector.cursor() as cur:
            await cur.execute("SELECT 1")
            held.set()
            await release.wait()

    holder = asyncio.create_task(hold())
    await held.wait()
    try:
        yield
    finally:
        release.set()
        await holder


async def test_pooled_async_calls_are_not_serialised(async_saver: AsyncPostgresSaver) -> None:
    graph = chat_graph(async_saver)
    await graph.ainvoke(turn("x"), thread("abusy"))
    async with holding_a_connection(async_saver):
        # would wait forever behind the official saver's instance lock
        found = await asyncio.wait_for(async_saver.aget_tuple(thread("abusy")), timeout=10)
        assert found is not None


@pytest.mark.serial  # races the pool timeout
async def test_more_concurrent_calls_than_connections_queue_at_the_gate(
    postgres_dsn: str,
) -> None:
    async with AsyncPostgresSaver.from_conn_string(
        postgres_dsn, pool_config={"min_size": 2, "max_size": 2}
    ) as saver:
        await saver.setup()
        graph = chat_graph(saver)
        await asyncio.gather(*(graph.ainvoke(turn(f"m{i}"), thread(f"g{i}")) for i in range(12)))
        for i in range(12):
            state = await graph.aget_state(thread(f"g{i}"))
            assert [m.content for m in state.values["messages"]] == [f"m{i}", f"a:m{i}", f"b:m{i}"]
        stats = saver.conn.get_stats()  # type: ignore[union-attr]
        assert stats["requests_num"] >= 12 * 8
        assert stats.get("requests_queued", 0) == 0  # waited on the gate, not in the pool


@pytest.mark.serial  # a time bound
async def test_waiting_for_a_connection_is_bounded_by_the_pool_timeout(
    postgres_dsn: str,
) -> None:
    async with AsyncPostgresSaver.from_conn_string(
        postgres_dsn, pool_config={"min_size": 1, "max_size": 1, "timeout": 0.3}
    ) as saver:
        await saver.setup()
        async with holding_a_connection(saver):  # the only one
            with pytest.raises(BackendUnavailableError) as refused:
                await saver.aget_tuple(thread("busy"))
        # what was measured: a wait in our own queue, not a network fault
        message = str(refused.value)
        assert "waited 0.30 s in this component's queue for a free connection" in message
        assert "all 1 connections of its pool stayed in use" in message
        assert "unreachable" not in message and "Check that the server" not in message
        assert await saver.aget_tuple(thread("busy")) is None  # the permit came back
