"""Pools across a failover, on a primary + streaming standby the test builds.

Principle: **a failover kills every connection of a pool at once, so the first dead one
found sweeps the pool.** An idle pool of 8 (the default) used to fail its first two calls
after a promotion, 5 s each, with a message blaming ``max_size``: psycopg_pool tries the
next pooled connection after a back-off (0, 1, 2, 4 s), one dead connection at a time. Now
the first failed ping checks the whole pool and the call gets a new connection to the
promoted server; and a call that lost its connection in use makes the pool ping what it
hands out next, so at most that one call fails.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from langgraph_recall._pg.pool import IDLE_CHECK_AFTER
from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.errors import BackendUnavailableError
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests.reliability._clusters import PostgresPair
from tests.reliability._figures import Figures
from tests.reliability.conftest import index_config

pytestmark = [pytest.mark.serial, pytest.mark.slow, pytest.mark.failover, pytest.mark.postgres]

NS = ("memories", "user_id:u")
THREAD = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
POOL = 8  # the default max_size of the savers' pools; the store's is larger


def fill_pool(call: Callable[[], Any]) -> None:
    """Open ``POOL`` connections (concurrent calls) so they all sit in the pool."""
    with ThreadPoolExecutor(POOL) as workers:
        list(workers.map(lambda _: call(), range(POOL * 4)))


def failures_before_success(call: Callable[[], Any], tries: int = 5) -> int:
    for failed in range(tries):
        try:
            call()
        except BackendUnavailableError:
            continue
        return failed
    return tries


@pytest.mark.parametrize("idle", [True, False], ids=["idle-pool", "busy-pool"])
def test_the_first_call_after_a_promotion_finds_a_live_connection(
    idle: bool, figures: Figures
) -> None:
    with (
        PostgresPair.running(synchronous=True) as pair,
        PostgresSaver.from_conn_string(pair.dsn) as saver,
        PostgresMemoryStore.from_conn_string(
            pair.dsn, index=index_config(), pool_config={"max_size": POOL}
        ) as store,
    ):
        saver.setup()
        store.setup()
        calls: dict[str, Callable[[], Any]] = {
            "saver": lambda: saver.get_tuple(THREAD),
            "store": lambda: store.search(NS, query="x"),
        }
        for call in calls.values():
            fill_pool(call)
        if idle:
            time.sleep(IDLE_CHECK_AFTER + 0.5)
        pair.fail_over()
        failed = {name: failures_before_success(call) for name, call in calls.items()}
    label = "idle" if idle else "busy"
    for name, count in failed.items():
        figures.put(f"failover_pool_first_calls_failed[{name}-{label}]", count)
    # an idle pool pings before use: no call fails; a busy one: at most the call that held a
    # connection killed in use (0 when the promotion took longer than the idle window)
    if idle:
        assert failed == {"saver": 0, "store": 0}
    else:
        assert max(failed.values()) <= 1, failed


async def test_the_async_saver_s_idle_pool_recovers_on_its_first_call() -> None:
    with PostgresPair.running(synchronous=True) as pair:
        async with AsyncPostgresSaver.from_conn_string(pair.dsn) as saver:
            await saver.setup()
            await asyncio.gather(*(saver.aget_tuple(THREAD) for _ in range(POOL * 4)))
            await asyncio.sleep(IDLE_CHECK_AFTER + 0.5)
            pair.fail_over()
            first: Awaitable[Any] = saver.aget_tuple(THREAD)  # was: a pool timeout after 5 s
            assert await first is None
