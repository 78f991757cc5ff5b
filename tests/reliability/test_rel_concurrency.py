"""Concurrency: 8 worker PROCESSES × several threads on the same savers and store.

* Lease contention: every process runs ``with_thread_lease(strategy="wait")`` turns on the
  same few ``thread_id``s (Postgres and Redis). No turn is lost, none is interleaved with
  another (each turn's ``[human, a, b]`` stays contiguous) and none runs twice.
* Store: concurrent own-key puts and searches from 8 processes (no cross-user hit), and
  concurrent upserts of ONE key from all of them converge to exactly one row whose value is
  one of the written values, with a consistent audit history (one ``add``; each entry's
  old value is the previous entry's new value; the last new value is the stored value).
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from langgraph_recall.checkpoint.postgres import PostgresSaver
from langgraph_recall.checkpoint.redis import RedisSaver
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests.graph_helpers import chat_graph
from tests.reliability._figures import Figures
from tests.reliability._procs import leased_chat_worker, store_worker
from tests.reliability._workload import check_thread, thread_config
from tests.reliability.conftest import index_config

pytestmark = [pytest.mark.slow]

PROCESSES = 8
THREADS_PER_PROCESS = 4
TURNS_PER_THREAD = 4
SHARED_THREADS = [f"hot-{i}" for i in range(5)]


@pytest.fixture(scope="module")
def processes() -> Iterator[ProcessPoolExecutor]:
    """8 spawned worker processes (imports paid once for the whole module)."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(PROCESSES, mp_context=context) as pool:
        list(pool.map(time.sleep, [0.0] * PROCESSES))  # start them all now
        yield pool


def run_everywhere(pool: ProcessPoolExecutor, function: Any, *args: Any) -> list[Any]:
    futures = [pool.submit(function, *args[:-1], index, *args[-1]) for index in range(PROCESSES)]
    return [future.result(timeout=240) for future in futures]


def check_leased_run(records: list[tuple[str, str, str | None]], states: dict[str, Any]) -> int:
    failures = [r for r in records if r[2] is not None]
    assert failures == [], failures[:5]
    assert len(records) == PROCESSES * THREADS_PER_PROCESS * TURNS_PER_THREAD
    per_thread: dict[str, list[str]] = {tid: [] for tid in SHARED_THREADS}
    for tid, text, _ in records:
        per_thread[tid].append(text)
    for tid in SHARED_THREADS:
        messages = states[tid]
        humans = [str(m.content) for m in messages if m.type == "human"]
        assert sorted(humans) == sorted(per_thread[tid]), (tid, "lost or extra turns")
        # contiguity ([t, a:t, b:t] for every turn) = no interleaving; order within one
        # worker thread is preserved
        check_thread(tid, messages, acked=humans, failed=[])
        for worker_prefix in {text.rsplit("n", 1)[0] for text in per_thread[tid]}:
            mine = [h for h in humans if h.rsplit("n", 1)[0] == worker_prefix]
            assert mine == sorted(mine, key=lambda h: int(h.rsplit("n", 1)[1])), (tid, mine)
    return len(records)


@pytest.mark.postgres
def test_leased_turns_from_8_processes_on_postgres(
    processes: ProcessPoolExecutor, postgres_dsn: str, figures: Figures
) -> None:
    with PostgresSaver.from_conn_string(postgres_dsn) as saver:
        saver.setup()
    records = [
        record
        for batch in run_everywhere(
            processes,
            leased_chat_worker,
            "postgres",
            postgres_dsn,
            "",
            SHARED_THREADS,
            (THREADS_PER_PROCESS, TURNS_PER_THREAD),
        )
        for record in batch
    ]
    with PostgresSaver.from_conn_string(postgres_dsn) as saver:
        graph = chat_graph(saver)
        states = {
            tid: graph.get_state(thread_config(tid)).values["messages"] for tid in SHARED_THREADS
        }
    turns = check_leased_run(records, states)
    figures.add("concurrent_turns_checked", turns)
    figures.add("concurrent_processes_runs", PROCESSES)


@pytest.mark.redis
def test_leased_turns_from_8_processes_on_redis(
    processes: ProcessPoolExecutor, redis_url: str, redis_prefix: str, figures: Figures
) -> None:
    records = [
        record
        for batch in run_everywhere(
            processes,
            leased_chat_worker,
            "redis",
            redis_url,
            redis_prefix,
            SHARED_THREADS,
            (THREADS_PER_PROCESS, TURNS_PER_THREAD),
        )
        for record in batch
    ]
    with RedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as saver:
        graph = chat_graph(saver)
        states = {
            tid: graph.get_state(thread_config(tid)).values["messages"] for tid in SHARED_THREADS
        }
    turns = check_leased_run(records, states)
    figures.add("concurrent_turns_checked", turns)
    figures.add("concurrent_processes_runs", PROCESSES)


HOT_KEY = "profile"
PUTS_PER_THREAD = 5


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def run_store_workers(pool: ProcessPoolExecutor, dsn: str) -> tuple[list[Any], list[Any]]:
    """8 processes × 4 threads: own-key puts + searches + upserts of the shared hot key."""
    with PostgresMemoryStore.from_conn_string(dsn, index=index_config()) as store:
        store.setup()
    results = run_everywhere(
        pool, store_worker, dsn, (THREADS_PER_PROCESS, PUTS_PER_THREAD, HOT_KEY)
    )
    errors = [e for r in results for e in r["errors"]]
    leaks = [e for r in results for e in r["leaks"]]
    assert errors == [] and leaks == [], (errors[:5], leaks[:5])
    written = [hot for r in results for hot in r["hot"]]
    assert len(written) == PROCESSES * THREADS_PER_PROCESS * PUTS_PER_THREAD
    return results, written


@pytest.mark.postgres
def test_store_from_8_processes_converges(
    processes: ProcessPoolExecutor, postgres_dsn: str, figures: Figures
) -> None:
    results, written = run_store_workers(processes, postgres_dsn)
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=index_config()) as store:
        for process_index, result in enumerate(results):
            mine = store.search(("conc", f"u{process_index}"), limit=1000)
            assert sorted(item.key for item in mine) == sorted(result["own"])
        item = store.get(("conc", "shared"), HOT_KEY)
        assert item is not None and item.value in written
        history = store.history(("conc", "shared"), HOT_KEY)
    with psycopg.connect(postgres_dsn, row_factory=dict_row) as conn:
        rows = conn.execute(
            "SELECT count(*) AS n FROM lgm_memory_items WHERE key = %s", (HOT_KEY,)
        ).fetchone()
    assert rows is not None and rows["n"] == 1
    # one history record per acknowledged put, each carrying the value that was written,
    # and the newest one is what the row holds
    assert len(history) == len(written), (len(history), len(written))
    assert sorted(map(canonical, (e.new_value for e in history))) == sorted(map(canonical, written))
    assert history[-1].new_value == item.value
    figures.add("concurrent_store_puts", len(written) * 2)
    figures.add("concurrent_upsert_rows", rows["n"])


@pytest.mark.postgres
def test_concurrent_upserts_keep_a_consistent_history(
    processes: ProcessPoolExecutor, postgres_dsn: str
) -> None:
    run_store_workers(processes, postgres_dsn)
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=index_config()) as store:
        history = store.history(("conc", "shared"), HOT_KEY)
    actions = [entry.action for entry in history]
    assert actions.count("add") == 1 and actions[0] == "add", actions[:5]
    assert history[0].old_value is None
    for before, after in itertools.pairwise(history):
        assert after.old_value == before.new_value
        assert after.old_text == before.new_text
