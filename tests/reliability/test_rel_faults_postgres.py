"""Fault injection on Postgres: every backend of the test database is terminated
(``pg_terminate_backend``) again and again while graphs run on ``PostgresSaver`` /
``AsyncPostgresSaver`` (the sync one behind ``with_thread_lease``, so the Postgres
lease backend is under fire too) and the memory store takes puts and searches at the same time.

Checked: the SAME saver and store objects recover (nothing rebuilt); during the outage
calls fail fast (< 10 s) with ``BackendUnavailableError``; afterwards every thread holds
every acknowledged turn (whole, once, in order), every acknowledged memory is stored with
exactly its value, and no memory is half-written (row, full text, embedding and its
``add`` history record all present — or none of them).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from typing import Any

import psycopg
import pytest

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.lease import with_thread_lease
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from tests.graph_helpers import chat_graph
from tests.reliability._figures import Figures
from tests.reliability._servers import BackendKiller
from tests.reliability._workload import Ledger, check_thread, run_turns, thread_config, turn_input
from tests.reliability.conftest import index_config

# serial: its time bounds are measured alone (scripts/test.sh)
pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.serial]

THREADS = [f"pthread-{i}" for i in range(12)]
ROUNDS = 10
EVERY = 0.2
FAIL_FAST_SECONDS = 10.0
# A call that finds no healthy connection waits up to the pool timeout (5 s, also the
# default since a defect outside testing found was fixed; test_rel_outage.py checks the defaults).
POOL_TIMEOUT = 5.0


def pool(max_size: int) -> Any:
    return {"max_size": max_size, "timeout": POOL_TIMEOUT}


NAMESPACE = ("faults", "writer")


class StoreLedger:
    """Acknowledged and failed store puts; search outcomes."""

    def __init__(self) -> None:
        self.acked: dict[str, dict[str, Any]] = {}
        self.failed: dict[str, dict[str, Any]] = {}
        self.searches_ok = 0
        self.errors: list[tuple[str, float]] = []
        self.lock = threading.Lock()

    def error(self, exc: BaseException, seconds: float) -> None:
        with self.lock:
            self.errors.append((f"{type(exc).__module__}.{type(exc).__qualname__}", seconds))


def memory_value(writer: int, n: int) -> dict[str, Any]:
    return {"content": f"writer {writer} remembers fact number {n}", "importance": 1 + n % 10}


def check_store(dsn: str, ledger: StoreLedger, got: dict[str, Any]) -> None:
    """Every acknowledged put is stored exactly; nothing is half-written."""
    for key, value in ledger.acked.items():
        assert got.get(key) == value, (key, got.get(key), value)
    for key, item in got.items():
        assert key in ledger.acked or key in ledger.failed, key
        expected = ledger.acked.get(key) or ledger.failed[key]
        assert item == expected, key
    with psycopg.connect(dsn, autocommit=True) as conn:
        broken = conn.execute(
            "SELECT i.key FROM lgm_memory_items i WHERE i.text IS NULL OR i.tsv IS NULL "
            "OR i.embedding IS NULL OR NOT EXISTS (SELECT 1 FROM lgm_memory_history h "
            "WHERE h.ns = i.ns AND h.key = i.key AND h.action = 'add')"
        ).fetchall()
        orphans = conn.execute(
            "SELECT h.key FROM lgm_memory_history h WHERE NOT EXISTS "
            "(SELECT 1 FROM lgm_memory_items i WHERE i.ns = h.ns AND i.key = h.key)"
        ).fetchall()
    assert broken == [] and orphans == [], (broken, orphans)


UNAVAILABLE = "langgraph_recall.errors.BackendUnavailableError"


def summarise(
    figures: Figures, name: str, turns: Ledger, memories: StoreLedger, killer: BackendKiller
) -> None:
    assert killer.terminated > 0, "no backend was terminated"
    assert turns.failure_seconds or memories.errors, "the terminations hit no call"
    assert set(turns.error_types) <= {UNAVAILABLE}, turns.error_types
    store_types = Counter(error_type for error_type, _ in memories.errors)
    assert set(store_types) <= {UNAVAILABLE}, store_types  # was raw psycopg once, fixed
    seconds = turns.failure_seconds + [s for _, s in memories.errors]
    assert max(seconds) < FAIL_FAST_SECONDS, max(seconds)
    figures.add("pg_backends_terminated", killer.terminated)
    figures.add("pg_termination_rounds", killer.rounds_done)
    figures.extend("fail_fast_seconds", [max(seconds)])
    figures.put(f"{name}_saver_error_types", dict(turns.error_types))
    figures.put(f"{name}_store_error_types", dict(store_types))
    figures.add("acknowledged_turns_checked", sum(len(v) for v in turns.acked.values()))
    figures.add("acknowledged_memories_checked", len(memories.acked))


def test_sync_saver_and_store_survive_terminated_backends(
    postgres_dsn: str, figures: Figures
) -> None:
    turns = Ledger()
    memories = StoreLedger()
    with (
        PostgresSaver.from_conn_string(postgres_dsn, pool_config=pool(4)) as saver,
        PostgresMemoryStore.from_conn_string(
            postgres_dsn, index=index_config(), pool_config=pool(4)
        ) as store,
    ):
        saver.setup()
        store.setup()
        # the Postgres lease backend (same pool) is under fire too
        graph = with_thread_lease(chat_graph(saver), strategy="wait", wait_timeout=5.0, ttl=1.5)
        stop = threading.Event()

        def graph_worker(thread_ids: list[str]) -> None:
            run_turns(graph, thread_ids, turns, stop, pause=0.01)

        def store_writer(writer: int) -> None:
            n = 0
            while not stop.is_set():
                key, value = f"w{writer}-{n}", memory_value(writer, n)
                start = time.monotonic()
                try:
                    store.put(NAMESPACE, key, value)
                except Exception as exc:
                    memories.failed[key] = value
                    memories.error(exc, time.monotonic() - start)
                    time.sleep(0.01)
                else:
                    memories.acked[key] = value
                n += 1

        def store_searcher() -> None:
            while not stop.is_set():
                start = time.monotonic()
                try:
                    hits = store.search(("faults",), query="remembers fact", limit=5)
                except Exception as exc:
                    memories.error(exc, time.monotonic() - start)
                    time.sleep(0.01)
                else:
                    assert all(hit.namespace == NAMESPACE for hit in hits)
                    memories.searches_ok += 1

        workers = [threading.Thread(target=graph_worker, args=(THREADS[k::3],)) for k in range(3)]
        workers += [threading.Thread(target=store_writer, args=(w,)) for w in range(2)]
        workers.append(threading.Thread(target=store_searcher))
        for w in workers:
            w.start()
        with BackendKiller(postgres_dsn, rounds=ROUNDS, every=EVERY) as killer:
            pass
        ended = time.monotonic()
        time.sleep(0.3)
        stop.set()
        for w in workers:
            w.join(60)
        assert not any(w.is_alive() for w in workers)

        # the same saver and store recover: one more of everything
        for tid in THREADS:
            graph.invoke(turn_input(f"{tid}#final"), thread_config(tid))
            turns.ok(tid, f"{tid}#final")
        store.put(NAMESPACE, "final", memory_value(9, 9))
        memories.acked["final"] = memory_value(9, 9)
        assert store.search(NAMESPACE, query="fact number 9", limit=50)
        recovery = turns.first_success_after(ended)

        for tid in THREADS:
            state = graph.get_state(thread_config(tid)).values
            check_thread(tid, state["messages"], turns.acked[tid], turns.failed[tid])
        got = {item.key: item.value for item in store.search(NAMESPACE, limit=100_000)}
        check_store(postgres_dsn, memories, got)

    assert memories.searches_ok > 0 and len(memories.acked) > 1
    summarise(figures, "postgres_sync", turns, memories, killer)
    figures.extend("postgres_recovery_seconds", [recovery])


async def test_async_saver_and_store_survive_terminated_backends(
    postgres_dsn: str, figures: Figures
) -> None:
    turns = Ledger()
    memories = StoreLedger()
    async with (
        AsyncPostgresSaver.from_conn_string(postgres_dsn, pool_config=pool(6)) as saver,
        AsyncPostgresMemoryStore.from_conn_string(
            postgres_dsn, index=index_config(), pool_config=pool(4)
        ) as store,
    ):
        await saver.setup()
        await store.asetup()
        graph = chat_graph(saver)
        stop = asyncio.Event()

        async def client(tid: str) -> None:
            n = 0
            while not stop.is_set():
                text = f"{tid}#{n}"
                start = time.monotonic()
                try:
                    await graph.ainvoke(turn_input(text), thread_config(tid))
                except Exception as exc:
                    turns.fail(tid, text, exc, time.monotonic() - start)
                    await asyncio.sleep(0.01)
                else:
                    turns.ok(tid, text)
                n += 1

        async def writer(w: int) -> None:
            n = 0
            while not stop.is_set():
                key, value = f"w{w}-{n}", memory_value(w, n)
                start = time.monotonic()
                try:
                    await store.aput(NAMESPACE, key, value)
                    hits = await store.asearch(NAMESPACE, query=f"fact number {n}", limit=3)
                except Exception as exc:
                    memories.failed[key] = value
                    memories.error(exc, time.monotonic() - start)
                    await asyncio.sleep(0.01)
                else:
                    memories.acked[key] = value
                    memories.searches_ok += 1
                    assert all(hit.namespace == NAMESPACE for hit in hits)
                n += 1

        tasks = [asyncio.create_task(client(tid)) for tid in THREADS]
        tasks += [asyncio.create_task(writer(w)) for w in range(3)]
        killer = BackendKiller(postgres_dsn, rounds=ROUNDS, every=EVERY)
        with killer:
            while not killer.done:
                await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), 60)

        for tid in THREADS:
            await graph.ainvoke(turn_input(f"{tid}#final"), thread_config(tid))
            turns.ok(tid, f"{tid}#final")
        for tid in THREADS:
            state = (await graph.aget_state(thread_config(tid))).values
            check_thread(tid, state["messages"], turns.acked[tid], turns.failed[tid])
        got = {item.key: item.value for item in await store.asearch(NAMESPACE, limit=100_000)}
        check_store(postgres_dsn, memories, got)

    assert memories.searches_ok > 0 and len(memories.acked) > 1
    summarise(figures, "postgres_async", turns, memories, killer)
