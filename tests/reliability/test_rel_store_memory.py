"""Bounded memory: the exact path's in-process vector cache holds (about) the live rows only.

A regression test: after 5 rounds of 2,000 puts + deletes the cache held
10,000 vectors of 0 live rows, all scored by every search. Rows leave the table in many
ways — this process's deletes, another worker's deletes and ``forget``, TTL expiry swept by
someone else, decay — and the cache must forget them all (it reconciles against the
scope's live count, which triggers keep exact).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest
from langgraph.store.base import PutOp

from langgraph_recall.store._vector_cache import RECONCILE_DEAD_FRACTION, RECONCILE_MIN_DEAD
from langgraph_recall.store.postgres import DecayConfig, PostgresMemoryStore
from tests.fakes import HashingEmbeddings
from tests.reliability._figures import Figures

pytestmark = [pytest.mark.postgres]

DIMS = 384  # a real embedder's width: a leak of 2,000 rows is 3 MB here
ROUNDS, PER_ROUND, BASE = 5, 2000, 300
SCOPES = [(), ("soak",), ("soak", "u")]


def _open(dsn: str) -> PostgresMemoryStore:
    return PostgresMemoryStore.from_conn_string(  # type: ignore[return-value]
        dsn, index={"dims": DIMS, "embed": HashingEmbeddings(DIMS)}, pool_config={"max_size": 2}
    )


@pytest.fixture
def two_workers(postgres_dsn: str) -> Iterator[tuple[PostgresMemoryStore, PostgresMemoryStore]]:
    with _open(postgres_dsn) as searcher, _open(postgres_dsn) as other:
        searcher.setup()
        yield searcher, other


def cached(store: PostgresMemoryStore, scope: tuple[str, ...]) -> tuple[int, int]:
    cache = store._caches.get("".join(label + "." for label in scope))
    return len(cache), cache.nbytes


def bound(live: int) -> int:
    return live + max(RECONCILE_MIN_DEAD, live // RECONCILE_DEAD_FRACTION)


def remove(
    round_: int,
    searcher: PostgresMemoryStore,
    other: PostgresMemoryStore,
    keys: list[tuple[tuple[str, ...], str]],
) -> None:
    """Remove a round's rows, each round by another route (``other`` is another worker)."""
    if round_ == 0:  # the searching worker deletes them itself
        searcher.batch([PutOp(ns, key, None) for ns, key in keys])
    elif round_ == 1:  # another worker erases the namespaces
        for n in range(7):
            other.forget(("soak", f"w{n}"))
    elif round_ == 2:  # they expire and another worker's sweeper removes them
        past = datetime.now(timezone.utc) - timedelta(seconds=1)
        expired = {"content": "expired", "expires_at": past}
        other.batch([PutOp(ns, key, expired) for ns, key in keys])
        assert other.sweep() == len(keys)
    elif round_ == 3:  # decay deletes them (an invalidated row stays: it is live)
        assert other.invalidate(("soak", "u"), "base0")
        config = DecayConfig(threshold=2.0, min_age=timedelta(0), mode="delete")
        for n in range(7):
            other.forget_decayed(("soak", f"w{n}"), config=config)
    else:  # another worker deletes them
        other.batch([PutOp(ns, key, None) for ns, key in keys])


def test_exact_cache_memory_stays_flat_whoever_removes_the_rows(
    two_workers: tuple[PostgresMemoryStore, PostgresMemoryStore], figures: Figures
) -> None:
    searcher, other = two_workers
    base = [PutOp(("soak", "u"), f"base{n}", {"content": f"lasting fact {n}"}) for n in range(BASE)]
    searcher.batch(base)
    held: list[int] = []  # bytes of every scope's cache after each round
    for round_ in range(ROUNDS):
        words = f"round{round_} fact"
        puts = [
            PutOp(("soak", f"w{n % 7}"), f"r{round_}-{n}", {"content": f"{words} {n}"})
            for n in range(PER_ROUND)
        ]
        searcher.batch(puts)
        for scope in SCOPES:
            assert searcher.search(scope, query=words, limit=5)  # the cache takes them in
        assert searcher._caches.rows() >= 2 * PER_ROUND
        remove(round_, searcher, other, [(op.namespace, op.key) for op in puts])
        for scope in SCOPES:
            hits = searcher.search(scope, query=words, limit=5)
            assert all(hit.key.startswith("base") for hit in hits), (round_, scope, hits)
            rows, nbytes = cached(searcher, scope)
            assert rows <= bound(BASE), (round_, scope, rows)
            assert nbytes <= (2 * bound(BASE) + 64) * (DIMS * 4 + 8), (round_, scope, nbytes)
        held.append(searcher._caches.nbytes)
    # flat: the last round holds what the first did (the old cache grew by 3 MB per round
    # and scope here: 10,000 dead rows per scope after 5 rounds)
    assert max(held) <= held[0] * 1.25 + 64 * DIMS * 4, held
    rows = sum(cached(searcher, scope)[0] for scope in SCOPES)
    figures.put(
        "exact_cache_soak",
        {
            "rounds": ROUNDS,
            "rows_put_and_removed": ROUNDS * PER_ROUND,
            "live_rows_per_scope": BASE,
            "cached_rows_all_scopes": rows,
            "cache_bytes_per_round": held,
        },
    )
