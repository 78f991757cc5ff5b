"""A call that gives up waiting says what was measured: a call stuck in the store's own
queue says it waited there for a free connection of its pool and was never sent — not
that the server "answered nothing" or that it may be down — while the server answers
other sessions at once (real Postgres; a lock held by another session blocks the store's
only connection)."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from langgraph_recall.errors import BackendUnavailableError
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore
from tests.fakes import HashingEmbeddings

pytestmark = [pytest.mark.serial, pytest.mark.postgres]

NS = ("memories", "user_id:u1")


async def _blocked_on_a_lock(locker: psycopg.AsyncConnection[Any]) -> None:
    """Wait until another session of this database waits for a lock (at most 10 s)."""
    for _ in range(200):
        row = await (
            await locker.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            )
        ).fetchone()
        if row and row[0]:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the store's call never reached the lock")


async def test_a_queued_call_reports_the_wait_in_our_queue_not_a_network_fault(
    postgres_dsn: str,
) -> None:
    index = {"dims": 16, "embed": HashingEmbeddings(16)}
    pool = {"max_size": 1, "timeout": 1}
    async with AsyncPostgresMemoryStore.from_conn_string(
        postgres_dsn, index=index, pool_config=pool
    ) as store:
        await store.asetup()
        await store.aput(NS, "k0", {"content": "User likes tea."})
        async with await psycopg.AsyncConnection.connect(postgres_dsn) as locker:
            await locker.execute("LOCK TABLE lgm_memory_items IN ACCESS EXCLUSIVE MODE")
            running = asyncio.ensure_future(store.aput(NS, "k1", {"content": "User likes jazz."}))
            await _blocked_on_a_lock(locker)  # k1 holds the only connection
            queued = asyncio.ensure_future(store.aput(NS, "k2", {"content": "User likes rye."}))
            await asyncio.sleep(0.3)
            other = await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True)
            async with other:  # the server answers everyone else meanwhile
                assert (await (await other.execute("SELECT 1")).fetchone()) == (1,)
            outcomes = await asyncio.gather(running, queued, return_exceptions=True)
            await locker.rollback()
        in_flight, waiting = outcomes
        assert isinstance(waiting, BackendUnavailableError), waiting
        text = str(waiting)
        assert "waited" in text and "in this store's queue for a free connection" in text
        assert "was never run (nothing of it was sent or applied)" in text
        assert "answered nothing" not in text and "Check that the server is running" not in text
        assert isinstance(in_flight, BackendUnavailableError), in_flight
        assert "this call was sent to Postgres" in str(in_flight)
        assert "may still be applied" in str(in_flight)
        assert await store.aget(NS, "k2") is None  # the queued call never ran
