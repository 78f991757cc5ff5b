"""One lock order: no mix of concurrent store calls can deadlock (a property, not a case).

Hypothesis draws, for six workers at once, sequences of ``put`` (with and without TTL),
``delete``, multi-namespace ``batch`` writes, ``search`` (with and without query),
``invalidate``, ``sweep``, ``forget``, ``forget_decayed`` and ``flush_access`` on a few
overlapping namespaces (``("p", a)`` under ``("p",)``, ``("p", a, b)`` under ``("p", a)``)
and keys, with access counts flushed on every call and TTLs refreshed by every read. The
workers run together: three threads on one sync store, three tasks on one async store (its
coalescer merges their calls into multi-namespace transactions), two pools on one
database, as two processes would. Every call must succeed, and the server must count no
deadlock (``pg_stat_database.deadlocks``), on PG 15 (exact) and embedded PG 18 (pgvector).

Without the ordered namespace locks of ``_migrations._lock_order`` this failed about every
other run with ``DeadlockDetected`` on ``lgm_memory_ns_stats`` (an upsert's statistics
triggers and a delete's, in opposite orders).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import psycopg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp

from langgraph_recall.store.postgres import (
    AsyncPostgresMemoryStore,
    DecayConfig,
    PostgresMemoryStore,
)
from tests._hypothesis import thorough
from tests.reliability._figures import Figures
from tests.reliability.conftest import index_config

NAMESPACES = [("p", "a"), ("p", "b"), ("p", "a", "x"), ("p", "b", "y")]
PREFIXES = [("p",), ("p", "a"), ("p", "b"), ("p", "a", "x")]
KEYS = ["k0", "k1", "k2"]
WORKERS = 6


@dataclass(frozen=True)
class Call:
    """One drawn store call."""

    kind: str
    namespace: tuple[str, ...]
    key: str
    other: tuple[str, ...]
    prefix: tuple[str, ...]
    ttl: float | None


calls = st.builds(
    Call,
    kind=st.sampled_from(
        [
            "put",
            "put",
            "put",
            "delete",
            "delete",
            "batch",
            "batch",
            "search",
            "search_query",
            "invalidate",
            "sweep",
            "forget",
            "decay",
            "flush",
        ]
    ),
    namespace=st.sampled_from(NAMESPACES),
    key=st.sampled_from(KEYS),
    other=st.sampled_from(NAMESPACES),
    prefix=st.sampled_from(PREFIXES),
    ttl=st.sampled_from([None, None, 0.002, 1.0]),  # 0.002 min: expired by the next sweep
)


def _value(call: Call) -> dict[str, Any]:
    return {"content": f"memory {call.key} of {'/'.join(call.namespace)}", "importance": 3}


# decay everything older than 0 s, whatever its score: every call of it changes rows
DECAY = DecayConfig(threshold=1e9, min_age=timedelta(0))


def _sync_call(store: PostgresMemoryStore, call: Call) -> Any:
    if call.kind == "put":
        return store.put(call.namespace, call.key, _value(call), ttl=call.ttl)
    if call.kind == "delete":
        return store.delete(call.namespace, call.key)
    if call.kind == "batch":  # writes of two namespaces (and a delete) in one transaction
        return store.batch(
            [
                PutOp(call.other, call.key, _value(call)),
                PutOp(call.namespace, call.key, _value(call), ttl=call.ttl),
                PutOp(call.other, KEYS[(KEYS.index(call.key) + 1) % len(KEYS)], None),
            ]
        )
    if call.kind == "search":
        return store.search(call.prefix, limit=5)
    if call.kind == "search_query":
        return store.search(call.prefix, query="memory of p", limit=5)
    if call.kind == "invalidate":
        return store.invalidate(call.namespace, call.key)
    if call.kind == "sweep":
        return store.sweep()
    if call.kind == "forget":
        return store.forget(call.prefix, analyze=call.ttl is None)
    if call.kind == "decay":
        return store.forget_decayed(call.prefix, config=DECAY)
    return store.flush_access()


async def _async_call(store: AsyncPostgresMemoryStore, call: Call) -> Any:
    if call.kind == "put":
        return await store.aput(call.namespace, call.key, _value(call), ttl=call.ttl)
    if call.kind == "delete":
        return await store.adelete(call.namespace, call.key)
    if call.kind == "batch":
        return await store.abatch(
            [
                PutOp(call.other, call.key, _value(call)),
                PutOp(call.namespace, call.key, _value(call), ttl=call.ttl),
                PutOp(call.other, KEYS[(KEYS.index(call.key) + 1) % len(KEYS)], None),
            ]
        )
    if call.kind == "search":
        return await store.asearch(call.prefix, limit=5)
    if call.kind == "search_query":
        return await store.asearch(call.prefix, query="memory of p", limit=5)
    if call.kind == "invalidate":
        return await store.ainvalidate(call.namespace, call.key)
    if call.kind == "sweep":
        return await store.asweep()
    if call.kind == "forget":
        return await store.aforget(call.prefix, analyze=call.ttl is None)
    if call.kind == "decay":
        return await store.aforget_decayed(call.prefix, config=DECAY)
    return await store.aflush_access()


def _deadlocks(dsn: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    return int(row[0]) if row else 0


@settings(
    max_examples=thorough(12),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plans=st.lists(st.lists(calls, min_size=5, max_size=25), min_size=WORKERS, max_size=WORKERS))
def test_no_mix_of_concurrent_calls_deadlocks_or_fails(
    any_dsn: str, figures: Figures, plans: list[list[Call]]
) -> None:
    before = _deadlocks(any_dsn)
    options: dict[str, Any] = {
        "index": index_config(),
        "ttl": {"default_ttl": None, "refresh_on_read": True},
        "access_flush_interval": 0,
        "pool_config": {"min_size": 1, "max_size": 4},
    }

    async def main() -> list[Any]:
        async with AsyncPostgresMemoryStore.from_conn_string(any_dsn, **options) as astore:
            await astore.asetup()
            with PostgresMemoryStore.from_conn_string(any_dsn, **options) as store:

                def thread_worker(plan: list[Call]) -> list[Any]:
                    return [_sync_call(store, call) for call in plan]

                async def task_worker(plan: list[Call]) -> list[Any]:
                    # each call on its own task: concurrent calls of one worker get merged
                    return await asyncio.gather(*(_async_call(astore, call) for call in plan))

                half = WORKERS // 2
                outcomes: list[Any] = await asyncio.gather(
                    *(asyncio.to_thread(thread_worker, plan) for plan in plans[:half]),
                    *(task_worker(plan) for plan in plans[half:]),
                    return_exceptions=True,
                )
                return outcomes

    outcomes = asyncio.run(main())
    failures = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    assert failures == [], f"{len(failures)} workers failed, first: {failures[0]!r}"
    deadlocks = _deadlocks(any_dsn) - before
    figures.add("store_lock_order_calls", sum(len(plan) for plan in plans))
    figures.add("store_lock_order_deadlocks", deadlocks)
    assert deadlocks == 0
