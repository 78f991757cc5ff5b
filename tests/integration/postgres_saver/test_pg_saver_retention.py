"""Retention: TTL and keep-last-N per thread, applied by sweep()/asweep() and the sweeper."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import psycopg
import pytest
from pg_saver_helpers import count_rows, thread, turn

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.errors import ConfigurationError
from tests.graph_helpers import chat_graph

pytestmark = pytest.mark.postgres


def age_thread(dsn: str, thread_id: str, seconds: float) -> None:
    """Pretend a thread was last written ``seconds`` ago."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "UPDATE lgm_thread_activity SET updated_at = now() - make_interval(secs => %s) "
            "WHERE thread_id = %s",
            (seconds, thread_id),
        )


def test_ttl_sweep_deletes_only_idle_threads(postgres_dsn: str) -> None:
    with PostgresSaver.from_conn_string(postgres_dsn, ttl={"default_ttl": 60}) as saver:
        saver.setup()
        graph = chat_graph(saver)
        for tid in ("idle-1", "idle-2", "active"):
            graph.invoke(turn(tid), thread(tid))
        lease = saver.lease_backend().try_acquire("idle-1", "w", ttl=600)
        assert lease is not None
        age_thread(postgres_dsn, "idle-1", 7200)
        age_thread(postgres_dsn, "idle-2", 3700)
        age_thread(postgres_dsn, "active", 600)

        # a thread whose lease is live is never swept, however idle it looks
        result = saver.sweep()
        assert result.expired_threads == ["idle-2"]
        assert len(graph.get_state(thread("idle-1")).values["messages"]) == 3
        assert saver.lease_backend().renew(lease, ttl=600) is True

        saver.lease_backend().release(lease)
        assert saver.sweep().expired_threads == ["idle-1"]
        for tid in ("idle-1", "idle-2"):
            assert saver.get_tuple(thread(tid)) is None
            for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
                assert count_rows(postgres_dsn, table, tid) == 0
        assert len(graph.get_state(thread("active")).values["messages"]) == 3
        assert saver.lease_backend().renew(lease, ttl=600) is False  # token advanced
        assert saver.sweep().expired_threads == []

        # an expired thread that is used again starts fresh
        graph.invoke(turn("back"), thread("idle-1"))
        assert [m.content for m in graph.get_state(thread("idle-1")).values["messages"]] == [
            "back",
            "a:back",
            "b:back",
        ]


def test_keep_last_is_applied_by_every_put(postgres_dsn: str) -> None:
    with PostgresSaver.from_conn_string(postgres_dsn, keep_last=2) as saver:
        saver.setup()
        graph = chat_graph(saver)
        for i in range(3):
            graph.invoke(turn(f"k{i}"), thread("long"))
            assert count_rows(postgres_dsn, "checkpoints", "long") == 2
        graph.invoke(turn("s"), thread("short"))
        assert count_rows(postgres_dsn, "checkpoints", "short") == 2
        messages = [m.content for m in graph.get_state(thread("long")).values["messages"]]
        assert messages == [m for i in range(3) for m in (f"k{i}", f"a:k{i}", f"b:k{i}")]
        assert [t.checkpoint["id"] for t in saver.list(thread("long"))] == sorted(
            (t.checkpoint["id"] for t in saver.list(thread("long"))), reverse=True
        )

        graph.invoke(turn("k3"), thread("long"))
        assert count_rows(postgres_dsn, "checkpoints", "long") == 2
        assert len(graph.get_state(thread("long")).values["messages"]) == 12
        with pytest.raises(ConfigurationError, match="nothing to sweep"):
            saver.start_sweeper(1)  # keep_last needs no sweeper
        assert saver.sweep().pruned_checkpoints == 0


def test_background_sweeper_thread(postgres_dsn: str) -> None:
    with PostgresSaver.from_conn_string(
        postgres_dsn, ttl={"default_ttl": 0.5}, sweep_interval=timedelta(seconds=0.1)
    ) as saver:
        saver.setup()
        graph = chat_graph(saver)
        graph.invoke(turn("x"), thread("bg"))
        age_thread(postgres_dsn, "bg", 60)
        deadline = time.monotonic() + 10
        while saver.get_tuple(thread("bg")) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert saver.get_tuple(thread("bg")) is None
        assert saver._sweeper is not None and saver._sweeper.is_alive()
    assert saver._sweeper is None


def test_sweeper_needs_a_policy(saver: PostgresSaver) -> None:
    with pytest.raises(ConfigurationError, match="nothing to sweep"):
        saver.start_sweeper(1)
    assert saver.sweep().expired_threads == []


async def test_async_retention(postgres_dsn: str) -> None:
    async with AsyncPostgresSaver.from_conn_string(
        postgres_dsn, ttl={"default_ttl": 1}, keep_last=1
    ) as saver:
        await saver.setup()
        graph = chat_graph(saver)
        await graph.ainvoke(turn("old"), thread("a-old"))
        await graph.ainvoke(turn("new"), thread("a-new"))
        await graph.ainvoke(turn("new2"), thread("a-new"))
        age_thread(postgres_dsn, "a-old", 120)

        result = await saver.asweep()

        assert result.expired_threads == ["a-old"]
        assert count_rows(postgres_dsn, "checkpoints", "a-new") == 1  # trimmed by each put
        assert await saver.aget_tuple(thread("a-old")) is None
        state = await graph.aget_state(thread("a-new"))
        assert [m.content for m in state.values["messages"]][-1] == "b:new2"

        saver.start_sweeper(0.05)
        await graph.ainvoke(turn("x"), thread("a-bg"))
        age_thread(postgres_dsn, "a-bg", 120)
        for _ in range(200):
            if await saver.aget_tuple(thread("a-bg")) is None:
                break
            await asyncio.sleep(0.05)
        assert await saver.aget_tuple(thread("a-bg")) is None
        await saver.stop_sweeper()
        assert saver._sweeper is None


def test_threads_of_the_official_saver_are_adopted_on_upgrade(postgres_dsn: str) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver as OfficialPostgresSaver

    with OfficialPostgresSaver.from_conn_string(postgres_dsn) as official:
        official.setup()
        chat_graph(official).invoke(turn("legacy"), thread("legacy"))
    with PostgresSaver.from_conn_string(postgres_dsn, ttl={"default_ttl": 1}, keep_last=1) as saver:
        saver.setup()  # adds our tables and registers the existing thread
        assert count_rows(postgres_dsn, "lgm_thread_activity", "legacy") == 1
        assert count_rows(postgres_dsn, "checkpoints", "legacy") == 4  # until its next put
        chat_graph(saver).invoke(turn("again"), thread("legacy"))
        assert count_rows(postgres_dsn, "checkpoints", "legacy") == 1
        age_thread(postgres_dsn, "legacy", 120)
        assert saver.sweep().expired_threads == ["legacy"]
        assert saver.get_tuple(thread("legacy")) is None
