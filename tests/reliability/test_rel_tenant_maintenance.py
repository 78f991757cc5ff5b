"""One tenant's maintenance never stops another tenant's writes.

``forget`` locks only the namespaces its erasure reaches (their lock buckets, in the
store's one lock order) and refreshes the planner statistics after its erasure committed,
holding no namespace lock; sweeps and decay lock only the namespaces they change. Before,
``forget`` held the store-wide lock exclusively through its deletes, lineage rounds and an
``ANALYZE`` of every table: erasing one user in a 60,000-memory store blocked every other
tenant's ``put`` for seconds, and with ``pool_config={"timeout": 1}`` some failed.

The first test holds the erasure in the middle of its deletes (another connection holds a
row lock on one of the erased rows, so ``forget`` waits there *with its locks taken*) and
writes as another tenant meanwhile: every write must complete while the erasure still waits.
With the old store-wide lock none can. The second measures the other tenant's write latency
during a large erasure that is not held (reported in the figures, never asserted on).
"""

from __future__ import annotations

import asyncio
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from langgraph.store.base import PutOp

from langgraph_recall.store._namespace import encode_namespace
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from langgraph_recall.store.postgres._migrations import LOCK_BUCKETS
from tests.reliability._figures import Figures
from tests.reliability._servers import residue
from tests.reliability.conftest import index_config

# serial: its time bounds are measured alone (scripts/test.sh)
pytestmark = [pytest.mark.postgres, pytest.mark.serial]

WAIT = 120.0  # a bound for "never happens", not a timing


def buckets(dsn: str, namespaces: list[tuple[str, ...]]) -> list[int]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            f"SELECT hashtext(n) & {LOCK_BUCKETS - 1} FROM unnest(%s::text[]) WITH ORDINALITY "
            "AS t(n, i) ORDER BY i",
            ([encode_namespace(ns) for ns in namespaces],),
        ).fetchall()
    return [int(row[0]) for row in rows]


def other_tenant(dsn: str, taken: set[int]) -> tuple[str, ...]:
    """A tenant namespace in a lock bucket the erasure does not take."""
    while True:
        candidate = ("memories", f"other-{uuid.uuid4().hex[:8]}")
        if buckets(dsn, [candidate])[0] not in taken:
            return candidate


def load(store: PostgresMemoryStore, namespace: tuple[str, ...], count: int, word: str) -> None:
    for start in range(0, count, 500):
        store.batch(
            [
                PutOp(namespace, f"m{n}", {"content": f"{word} memory number {n} about Lyon"})
                for n in range(start, min(count, start + 500))
            ]
        )


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {WAIT:.0f} s: {what}")
        time.sleep(0.05)


def erasure_backend(dsn: str) -> dict[str, Any] | None:
    """The backend of a ``forget`` waiting on a row lock in its delete, with its advisory
    locks (held) counted."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT a.pid, (SELECT count(*) FROM pg_locks l WHERE l.pid = a.pid "
            "AND l.locktype = 'advisory' AND l.granted) AS advisory "
            "FROM pg_stat_activity a WHERE a.datname = current_database() "
            "AND a.wait_event_type = 'Lock' AND a.query LIKE '%DELETE FROM lgm_memory_items%'"
        ).fetchone()
    return None if row is None else {"pid": row[0], "advisory": row[1]}


async def tenant_writes(dsn: str, namespace: tuple[str, ...], count: int) -> list[float]:
    """``count`` concurrent ``aput`` of one tenant (pool timeout 1 s); their latencies."""
    async with AsyncPostgresMemoryStore.from_conn_string(
        dsn, index=index_config(), pool_config={"timeout": 1, "max_size": 4}
    ) as store:

        async def one(n: int) -> float:
            began = time.perf_counter()
            await store.aput(namespace, f"w{n}", {"content": f"tenant write {n}"})
            return time.perf_counter() - began

        return list(await asyncio.gather(*(one(n) for n in range(count))))


def test_one_tenants_erasure_never_stops_another_tenants_writes(
    any_dsn: str, any_store: PostgresMemoryStore, figures: Figures
) -> None:
    victim = ("memories", f"victim-{uuid.uuid4().hex[:8]}")
    derived = ("teams", f"digest-{uuid.uuid4().hex[:8]}")
    load(any_store, victim, 300, "victim")
    any_store.put(
        derived,
        "digest",
        {"content": "victim digest", "derived_from": [{"namespace": list(victim), "key": "m1"}]},
    )
    other = other_tenant(any_dsn, set(buckets(any_dsn, [victim, derived])))
    outcome: dict[str, Any] = {}

    def erase() -> None:
        try:
            outcome["erased"] = any_store.forget(victim)
        except BaseException as exc:  # reported by the main thread
            outcome["error"] = exc

    with psycopg.connect(any_dsn) as blocker:
        blocker.execute(
            "SELECT 1 FROM lgm_memory_items WHERE ns = %s AND key = 'm7' FOR UPDATE",
            (encode_namespace(victim),),
        )
        eraser = threading.Thread(target=erase, daemon=True)
        eraser.start()
        wait_until(lambda: erasure_backend(any_dsn) is not None, "forget waits in its delete")
        held = erasure_backend(any_dsn)
        assert held is not None and held["advisory"] >= 1  # its locks are taken
        latencies = asyncio.run(asyncio.wait_for(tenant_writes(any_dsn, other, 40), WAIT))
        # every write of the other tenant completed while the erasure still held its locks
        assert eraser.is_alive() and erasure_backend(any_dsn) == held
        blocker.rollback()
    eraser.join(WAIT)
    assert not eraser.is_alive() and "error" not in outcome, outcome
    assert outcome["erased"] == 301
    assert len(any_store.search(other, limit=100)) == 40
    assert any_store.search(victim, limit=10) == []
    assert residue(any_dsn, "victim memory number") == {}
    figures.extend("other_tenant_put_seconds_during_held_erasure", latencies)


def test_other_tenant_write_latency_during_a_large_erasure(
    any_dsn: str, any_store: PostgresMemoryStore, figures: Figures
) -> None:
    """Measured, not asserted: the other tenant's ``aput`` latency while a large erasure
    (and its statistics refresh) runs. Asserted: no call fails, the erasure is complete."""
    victim = ("memories", f"victim-{uuid.uuid4().hex[:8]}")
    load(any_store, victim, 3000, "victim")
    for n in range(4):
        load(any_store, ("memories", f"bystander-{n}-{uuid.uuid4().hex[:6]}"), 1500, "bystander")
    other = other_tenant(any_dsn, set(buckets(any_dsn, [victim])))
    outcome: dict[str, Any] = {}

    def erase() -> None:
        began = time.perf_counter()
        outcome["erased"] = any_store.forget(victim)
        outcome["seconds"] = time.perf_counter() - began

    async def during() -> list[float]:
        eraser = threading.Thread(target=erase, daemon=True)
        eraser.start()
        latencies: list[float] = []
        while eraser.is_alive():
            latencies += await tenant_writes(any_dsn, other, 10)
        eraser.join()
        return latencies

    latencies = asyncio.run(asyncio.wait_for(during(), WAIT * 2))
    assert outcome["erased"] == 3000
    assert residue(any_dsn, "victim memory number") == {}
    figures.put(
        "other_tenant_put_during_erasure",
        {
            "erasure_seconds": round(outcome["seconds"], 3),
            "puts": len(latencies),
            "median_seconds": round(statistics.median(latencies), 4) if latencies else None,
            "max_seconds": round(max(latencies), 4) if latencies else None,
        },
    )
    print(f"\nother tenant during erasure: {figures.values['other_tenant_put_during_erasure']}")


def analyze_count(dsn: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT analyze_count FROM pg_stat_user_tables WHERE relname = 'lgm_memory_items'"
        ).fetchone()
    return int(row[0]) if row else 0


def test_a_bulk_loads_statistics_refresh_runs_after_its_batch_commits(
    any_dsn: str, any_store: PostgresMemoryStore
) -> None:
    """A store refreshes the items' statistics once it has written 2,000 rows (bulk loads
    outrun autovacuum). That ``ANALYZE`` ran inside the batch's transaction, holding the
    batch's namespace locks through it (and through waiting for another ``ANALYZE``, e.g. an
    erasure's); it now runs alone after the batch committed — and still runs."""
    before = analyze_count(any_dsn)
    load(any_store, ("memories", f"bulk-{uuid.uuid4().hex[:8]}"), 2100, "bulk")
    deadline = time.monotonic() + WAIT  # the statistics collector reports asynchronously
    while analyze_count(any_dsn) <= before:
        assert time.monotonic() < deadline, "the bulk load never refreshed the statistics"
        time.sleep(0.2)


def test_a_sweep_never_holds_every_tenants_lock_at_once(
    any_dsn: str, any_store: PostgresMemoryStore
) -> None:
    """A TTL sweep locked every namespace with an expired memory for one transaction: while
    it waited or worked, every one of those tenants' writes waited. It now sweeps a few lock
    buckets per transaction. Held in its first part (a row lock on an expired memory there),
    a tenant whose bucket lies in a later part writes meanwhile."""
    tenants = [("memories", f"ttl-{n}-{uuid.uuid4().hex[:6]}") for n in range(40)]
    for tenant in tenants:
        any_store.put(tenant, "old", {"content": "expired tenant memory"})
    with psycopg.connect(any_dsn, autocommit=True) as conn:
        conn.execute(
            "UPDATE lgm_memory_items SET expires_at = now() - interval '1 minute' "
            "WHERE ns = ANY(%s)",
            ([encode_namespace(t) for t in tenants],),
        )
    by_bucket = dict(zip(buckets(any_dsn, tenants), tenants, strict=False))
    assert len(by_bucket) > 8  # several sweep transactions
    first, last = by_bucket[min(by_bucket)], by_bucket[max(by_bucket)]
    outcome: dict[str, Any] = {}

    def sweep() -> None:
        outcome["swept"] = any_store.sweep()

    with psycopg.connect(any_dsn) as blocker:
        blocker.execute(
            "SELECT 1 FROM lgm_memory_items WHERE ns = %s FOR UPDATE", (encode_namespace(first),)
        )
        sweeper = threading.Thread(target=sweep, daemon=True)
        sweeper.start()
        wait_until(lambda: sweep_waits(any_dsn), "the sweep waits in its first part")
        writer = threading.Thread(
            target=lambda: any_store.put(last, "new", {"content": "written meanwhile"}),
            daemon=True,
        )
        writer.start()
        writer.join(WAIT)
        assert not writer.is_alive() and sweeper.is_alive()  # written while the sweep waits
        blocker.rollback()
    sweeper.join(WAIT)
    assert outcome["swept"] == 40
    assert [item.key for item in any_store.search(last)] == ["new"]


def sweep_waits(dsn: str) -> bool:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND query LIKE '%DELETE FROM lgm_memory_items%'"
        ).fetchone()
    return bool(row and row[0])
