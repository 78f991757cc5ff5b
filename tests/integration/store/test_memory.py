"""Memory semantics of our store (not part of BaseStore): validity, typed filters, TTL,
history, erasure, decay, hybrid search, and all-or-nothing validation.

Each test runs on PG 15 (exact vector path) and embedded PG 18 (pgvector), sync and async.
"""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone

import psycopg
import pytest

from langgraph_recall.errors import (
    ConfigurationError,
    EmbeddingError,
    InvalidFilterError,
    InvalidNamespaceError,
    InvalidValueError,
)
from langgraph_recall.store.postgres import DecayConfig, acting_as
from tests.integration.store.conftest import Driver, open_store, rows_mentioning

pytestmark = pytest.mark.postgres

UTC = timezone.utc


async def keys(store: Driver, prefix: tuple[str, ...], **kwargs: object) -> set[str]:
    return {item.key for item in await store("search", prefix, **kwargs)}


async def test_validity_interval_and_as_of(ours: Driver) -> None:
    ns = ("memories", "u1")
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    await ours("put", ns, "google", {"content": "I work at Google", "valid_from": t0.isoformat()})
    await ours("put", ns, "tea", {"content": "I like tea"})
    switch = datetime(2025, 6, 1, tzinfo=UTC)
    assert await ours("invalidate", ns, "google", at=switch) is True
    assert await ours("invalidate", ns, "nobody", at=switch) is False
    await ours(
        "put", ns, "microsoft", {"content": "I work at Microsoft", "valid_from": switch.isoformat()}
    )
    assert await keys(ours, ns) == {"tea", "microsoft"}
    assert await keys(ours, ns, as_of=datetime(2024, 6, 1, tzinfo=UTC)) == {"google"}
    assert await keys(ours, ns, as_of=datetime(2023, 1, 1, tzinfo=UTC)) == set()
    assert await keys(ours, ns, include_invalid=True) == {"tea", "microsoft", "google"}
    hits = await ours("search", ns, query="where do I work", as_of=datetime(2024, 6, 1, tzinfo=UTC))
    assert [hit.key for hit in hits] == ["google"]
    item = await ours("get", ns, "google")  # get still returns it, marked invalid
    assert item.value["invalid_at"] == switch.isoformat()


async def test_created_at_survives_updates(ours: Driver) -> None:
    ns = ("memories", "u1")
    await ours("put", ns, "k", {"content": "v1"})
    first = await ours("get", ns, "k")
    await ours("put", ns, "k", {"content": "v2"})
    second = await ours("get", ns, "k")
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at


async def test_typed_and_logical_filters(ours: Driver) -> None:
    ns = ("f",)
    await ours("put", ns, "a", {"n": 9, "day": "2024-03-01", "name": "alpha", "tags": "x"})
    await ours("put", ns, "b", {"n": 10, "day": "2024-12-25T10:00:00+00:00", "name": "beta"})
    await ours("put", ns, "c", {"n": "11", "day": "soon", "name": "gamma", "opt": None})
    cases = [
        ({"n": {"$gte": 10}}, {"b"}),  # numeric, not text: 9 < 10; "11" is a string
        ({"n": {"$lt": 10}}, {"a"}),
        ({"day": {"$gt": "2024-06-01"}}, {"b"}),  # ISO dates compare as timestamps
        ({"day": {"$lte": datetime(2024, 3, 1, tzinfo=UTC)}}, {"a"}),
        ({"name": {"$gt": "b"}}, {"b", "c"}),  # strings as text
        ({"n": {"$in": [9, 11, "11"]}}, {"a", "c"}),
        ({"name": {"$nin": ["alpha", "beta"]}}, {"c"}),
        ({"tags": {"$exists": True}}, {"a"}),
        ({"tags": {"$exists": False}}, {"b", "c"}),
        ({"opt": {"$exists": True}}, {"c"}),
        ({"$or": [{"name": "alpha"}, {"n": {"$gt": 9.5}}]}, {"a", "b"}),
        ({"$and": [{"n": {"$gt": 1}}, {"name": {"$ne": "beta"}}]}, {"a"}),
        ({"$or": [{"$and": [{"name": "gamma"}, {"opt": None}]}, {"n": 9}]}, {"a", "c"}),
    ]
    for filter_, expected in cases:
        assert await keys(ours, ns, filter=filter_) == expected, filter_
    for bad in (
        {"n": {"$regex": "x"}},
        {"$not": {"n": 1}},
        {"n": {"$in": 3}},
        {"n": {"$gt": True}},
    ):
        with pytest.raises(InvalidFilterError):
            await ours("search", ns, filter=bad)


async def test_ttl_refresh_and_sweep(ours: Driver) -> None:
    ns = ("ttl",)
    await ours("put", ns, "fresh", {"content": "stays"}, ttl=60)
    past = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    await ours("put", ns, "stale", {"content": "expired already", "expires_at": past})
    assert await ours("get", ns, "stale") is None
    assert await keys(ours, ns) == {"fresh"}
    assert "stale" not in await keys(ours, ns, query="expired already")
    before = _expiry(ours.dsn, "fresh")
    await ours("get", ns, "fresh", refresh_ttl=True)
    after = _expiry(ours.dsn, "fresh")
    assert after[1] > before[1] and after[0] == before[0]  # refreshed, item row untouched
    assert await ours("sweep") == 1
    history = await ours("history", ns, "stale")
    assert [entry.action for entry in history] == ["add", "expire"]
    assert await keys(ours, ns, include_invalid=True) == {"fresh"}


def _expiry(dsn: str, key: str) -> tuple[object, datetime]:
    """(the item row's ctid, its effective expiry: put's ``expires_at`` or a read's refresh)."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT i.ctid::text, greatest(i.expires_at, a.refreshed_until) "
            "FROM lgm_memory_items i LEFT JOIN lgm_memory_access a ON a.id = i.id "
            "WHERE i.key = %s",
            (key,),
        ).fetchone()
    assert row is not None
    return row[0], row[1]


def _expire_put(dsn: str, key: str) -> None:
    """Move the expiry ``key``'s put set into the past (a read's refresh stays as it is)."""
    with psycopg.connect(dsn) as conn:
        conn.execute(
            "UPDATE lgm_memory_items SET expires_at = now() - interval '1 second' WHERE key = %s",
            (key,),
        )


async def test_ttl_refresh_by_reads_outlives_the_put_expiry(ours: Driver) -> None:
    ns = ("ttl",)
    await ours("put", ns, "read", {"content": "a memory that is read"}, ttl=60)
    await ours("put", ns, "idle", {"content": "a memory nobody reads"}, ttl=60)
    assert [hit.key for hit in await ours("search", ns, query="memory that is read", limit=1)] == [
        "read"
    ]
    # the put's expiry passes; the search's refresh keeps "read" alive, "idle" is gone
    _expire_put(ours.dsn, "read")
    _expire_put(ours.dsn, "idle")
    assert await keys(ours, ns) == {"read"}
    assert (await ours("get", ns, "read")) is not None
    assert await ours("sweep") == 1  # idle deleted; read's refresh folded into the item row
    with psycopg.connect(ours.dsn) as conn:
        row = conn.execute(
            "SELECT i.expires_at > now() + interval '59 minutes' FROM lgm_memory_items i "
            "WHERE i.key = 'read'"
        ).fetchone()
    assert row == (True,)
    # a put restarts the TTL: the earlier refresh no longer extends it
    await ours("get", ns, "read", refresh_ttl=True)
    await ours("put", ns, "read", {"content": "a memory that is read, rewritten"}, ttl=60)
    _expire_put(ours.dsn, "read")
    assert await keys(ours, ns) == set()
    assert await ours("sweep") == 1
    history = await ours("history", ns, "read")
    assert [entry.action for entry in history] == ["add", "update", "expire"]


async def test_history_records_every_change_with_actor(ours: Driver) -> None:
    ns = ("memories", "u1")
    with acting_as("extractor"):
        await ours("put", ns, "job", {"content": "works at Google"})
        await ours("put", ns, "job", {"content": "works at Microsoft"})
    await ours("invalidate", ns, "job")
    await ours("delete", ns, "job")
    history = await ours("history", ns, "job")
    assert [entry.action for entry in history] == ["add", "update", "invalidate", "delete"]
    assert history[1].old_text == "works at Google" and history[1].new_text == "works at Microsoft"
    assert [entry.actor for entry in history] == ["extractor", "extractor", None, None]
    assert history[3].old_text == "works at Microsoft"
    assert all(a.at <= b.at for a, b in itertools.pairwise(history))


async def test_forget_erases_items_history_and_derived(ours: Driver) -> None:
    victim, other = ("memories", "zorblax"), ("memories", "zorbla")
    await ours("put", victim, "a", {"content": "zorblax secret plan alpha"})
    await ours("put", victim, "b", {"content": "zorblax hobby quux"})
    await ours("put", victim, "b", {"content": "zorblax hobby quuxes"})
    await ours(
        "put",
        ("reflections", "global"),
        "r",
        {
            "content": "summary of zorblax habits",
            "kind": "reflection",
            "derived_from": [{"namespace": list(victim), "key": "a"}],
        },
    )
    await ours(
        "put",
        ("reflections", "global"),
        "r2",
        {"content": "meta zorblax insight", "derived_from": ["r"]},
    )
    await ours("put", other, "c", {"content": "neighbour keeps this"})
    assert sum(rows_mentioning(ours.dsn, "zorblax").values()) > 0
    erased = await ours("forget", victim)
    assert erased == 4
    assert rows_mentioning(ours.dsn, "zorblax") == dict.fromkeys(
        rows_mentioning(ours.dsn, "zorblax"), 0
    )
    assert await keys(ours, ("memories",)) == {"c"}
    assert await ours("search", ("memories",), query="zorblax secret plan") != []  # neighbour only
    assert {hit.key for hit in await ours("search", ("memories",), query="zorblax")} <= {"c"}
    with pytest.raises(InvalidNamespaceError):
        await ours("forget", ())


async def test_decay_retires_low_value_memories(ours: Driver) -> None:
    ns = ("memories", "u1")
    await ours("put", ns, "trivial", {"content": "ate a sandwich", "importance": 1})
    await ours("put", ns, "vital", {"content": "allergic to peanuts", "importance": 10})
    with psycopg.connect(ours.dsn, autocommit=True) as conn:  # age both by a year
        conn.execute(
            "UPDATE lgm_memory_items SET created_at = created_at - interval '365 days', "
            "updated_at = updated_at - interval '365 days'"
        )
    config = DecayConfig(threshold=0.01, half_life=timedelta(days=90), min_age=timedelta(days=30))
    assert await ours("forget_decayed", ns, config=config) == 1
    assert await keys(ours, ns) == {"vital"}
    assert [e.action for e in await ours("history", ns, "trivial")] == ["add", "invalidate"]
    assert (await ours("get", ns, "trivial")).value["invalid_at"]
    # "vital" was just returned by search (access reinforcement): only a high bar retires it
    strict = DecayConfig(threshold=5.0, half_life=timedelta(days=90), mode="delete")
    assert await ours("forget_decayed", ns, config=strict) == 1
    assert await ours("get", ns, "vital") is None


def _accesses(dsn: str, key: str) -> tuple[int, datetime] | None:
    """(access count, last access) written for ``key``, or ``None`` if none is written."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT a.access_count, a.last_accessed_at FROM lgm_memory_access a "
            "JOIN lgm_memory_items i ON i.id = a.id WHERE i.key = %s",
            (key,),
        ).fetchone()
    return None if row is None else (row[0], row[1])


async def test_searches_write_access_counts_in_batches(dsn: str, flavour: str) -> None:
    ns = ("memories", "u1")
    started = datetime.now(UTC)
    async with open_store(dsn, flavour, access_flush_interval=3600) as raw:
        store = Driver(raw, flavour, "", dsn)
        await store("put", ns, "tea", {"content": "drinks green tea every morning"})
        await store("put", ns, "bike", {"content": "rides a red bicycle to work"})
        for _ in range(2):
            hits = await store("search", ns, query="green tea", limit=1)
            assert [hit.key for hit in hits] == ["tea"]
        assert _accesses(dsn, "tea") is None  # recorded, not yet written
        await store("flush_access")
        written = _accesses(dsn, "tea")
        assert written is not None and written[0] == 2 and written[1] >= started
        assert _accesses(dsn, "bike") is None
        await store("flush_access")  # nothing pending: nothing changes
        assert _accesses(dsn, "tea") == written
        await store("search", ns, query="green tea", limit=1)
    # closing a store opened with from_conn_string writes what is pending
    assert (_accesses(dsn, "tea") or (0,))[0] == 3


async def test_a_due_access_write_rides_on_the_next_operation(dsn: str, flavour: str) -> None:
    ns = ("memories", "u1")
    async with open_store(dsn, flavour, access_flush_interval=0) as raw:
        store = Driver(raw, flavour, "", dsn)
        await store("put", ns, "tea", {"content": "drinks green tea every morning"})
        await store("search", ns, query="green tea", limit=1)
        assert (_accesses(dsn, "tea") or (0,))[0] == 1  # due at once: the search wrote it
        await store("delete", ns, "tea")
        await store("put", ns, "tea", {"content": "drinks green tea every morning"})
        assert _accesses(dsn, "tea") is None  # the delete took the old counts with it
    with pytest.raises(ConfigurationError, match="access_flush_interval"):
        async with open_store(dsn, flavour, access_flush_interval=float("nan")):
            pass


async def test_hybrid_search_finds_exact_tokens_and_meaning(ours: Driver) -> None:
    ns = ("memories", "u1")
    facts = {
        "code": "The project code name is XJ-4471",
        "city": "Alice moved to Lyon in 2021",
        "pet": "Alice has a cat named Miso",
        "food": "Alice dislikes mushrooms",
    }
    for key, text in facts.items():
        await ours("put", ns, key, {"content": text})
    hits = await ours("search", ns, query="what is XJ-4471?", limit=2)
    assert hits[0].key == "code" and hits[0].score is not None
    hits = await ours("search", ns, query="cat named Miso", limit=4)
    assert hits[0].key == "pet"
    assert all(hits[i].score >= hits[i + 1].score for i in range(len(hits) - 1))
    page = await ours("search", ns, query="Alice", limit=2, offset=1)
    full = await ours("search", ns, query="Alice", limit=3)
    assert [hit.key for hit in page] == [hit.key for hit in full[1:3]]


async def test_a_date_in_the_query_prefers_memories_from_then(ours: Driver) -> None:
    ns = ("memories", "u1")
    said = {
        "march": ("Ana: We cooked a lentil curry tonight", "2024-03-09T19:00:00+00:00"),
        "may": ("Ana: We cooked a lentil soup tonight", "2024-05-03T19:00:00+00:00"),
        "june": ("Ana: We cooked a lentil stew tonight", "2024-06-20T19:00:00+00:00"),
    }
    for key, (text, when) in said.items():
        await ours("put", ns, key, {"content": text, "valid_from": when})
    dated = await ours("search", ns, query="What did Ana cook on May 3, 2024?", limit=3)
    assert dated[0].key == "may"
    in_june = await ours("search", ns, query="What did Ana cook in June 2024?", limit=3)
    assert in_june[0].key == "june"
    undated = await ours("search", ns, query="What did Ana cook?", limit=3)
    assert {hit.key for hit in undated} == set(said)


async def test_an_update_ranks_above_the_fact_it_updates_unless_the_past_is_asked(
    ours: Driver,
) -> None:
    """The older statement matches the question a little better; the newer one says the
    value changed: it comes first, ``explain`` shows the update term, and a question about
    the original value gets the original first."""
    ns = ("memories", "u1")
    said = {
        "old": ("The dashboard API average response time is 400ms in production", "03-01"),
        "new": ("The dashboard API average response time has now improved to 250ms", "04-12"),
        "deploy": ("I deploy the budget tracker on Fridays", "04-20"),
        "sprint": ("My sprint 2 targets analytics by April 19", "04-02"),
        "login": ("The login page uses Flask-Login sessions", "04-05"),
        "release": ("I tagged release v1.0.0 with 150 commits", "04-21"),
    }
    for key, (text, day) in said.items():
        await ours("put", ns, key, {"content": text, "valid_from": f"2024-{day}T10:00:00+00:00"})
    question = "What is the average response time of the dashboard API?"
    hits = await ours("search", ns, query=question, limit=3, explain=True)
    assert [hit.key for hit in hits][:2] == ["new", "old"]
    parts = {hit.key: hit.explanation for hit in hits}
    assert parts["new"].update > 0 and parts["old"].update == 0
    assert sum(parts["new"].contributions().values()) == pytest.approx(hits[0].score)
    past = await ours("search", ns, query="What was the original " + question[8:], limit=3)
    assert [hit.key for hit in past][:2] == ["old", "new"]


async def test_bad_input_raises_and_writes_nothing(ours: Driver) -> None:
    ns = ("memories", "u1")
    await ours("put", ns, "keep", {"content": "original"})
    bad_values = [
        {"content": float("nan")},
        {"content": 42},
        {"importance": 11},
        {"kind": "gossip"},
        {"valid_from": "yesterday-ish"},
        {"valid_from": "2024-02-01", "invalid_at": "2024-01-01"},
        {"content": "x" * 70_000},
        {"blob": object()},
    ]
    for value in bad_values:
        with pytest.raises(InvalidValueError):
            await ours("put", ns, "keep", value)
    with pytest.raises(InvalidValueError):
        await ours("put", ns, "keep", "not a dict")
    with pytest.raises(InvalidValueError):
        await ours("put", ns, "", {"content": "empty key"})
    from langgraph.store.base import PutOp

    with pytest.raises(InvalidValueError):  # one bad op: the good one is not written either
        await ours(
            "batch",
            [PutOp(ns, "new", {"content": "good"}), PutOp(ns, "keep", {"importance": 0})],
        )
    assert await ours("get", ns, "new") is None
    assert (await ours("get", ns, "keep")).value == {"content": "original"}
    assert [e.action for e in await ours("history", ns, "keep")] == ["add"]


async def test_wrong_embedding_dimensions_write_nothing(dsn: str, flavour: str) -> None:
    from tests.fakes import HashingEmbeddings

    async with open_store(dsn, flavour) as good:
        driver = Driver(good, flavour, "", dsn)
        await driver("put", ("m",), "k", {"content": "fine"})
    async with open_store(dsn, flavour, index={"dims": 64, "embed": HashingEmbeddings(32)}) as bad:
        driver = Driver(bad, flavour, "", dsn)
        with pytest.raises(EmbeddingError):
            await driver("put", ("m",), "k", {"content": "replaced"})
        assert (await driver("get", ("m",), "k")).value == {"content": "fine"}


async def test_ttl_sweeper_runs_in_background(ours: Driver) -> None:
    import asyncio

    ns = ("ttl", "sweeper")
    past = (datetime.now(UTC) - timedelta(seconds=1)).isoformat()
    await ours("put", ns, "gone", {"content": "short lived", "expires_at": past})
    if ours.flavour == "async":
        task = await ours.store.start_ttl_sweeper(0.002)  # type: ignore[attr-defined]
        assert isinstance(task, asyncio.Task) and not task.done()
    else:
        ours.store.start_ttl_sweeper(0.002)  # type: ignore[attr-defined]
    try:
        for _ in range(100):
            await asyncio.sleep(0.05)
            if [e.action for e in await ours("history", ns, "gone")][-1:] == ["expire"]:
                break
        assert [e.action for e in await ours("history", ns, "gone")] == ["add", "expire"]
    finally:
        if ours.flavour == "async":
            assert await ours.store.stop_ttl_sweeper(timeout=5)  # type: ignore[attr-defined]
        else:
            assert ours.store.stop_ttl_sweeper(timeout=5)  # type: ignore[attr-defined]


async def test_async_store_sync_methods_work_off_loop_and_refuse_on_loop(
    dsn: str, backend: str
) -> None:
    import asyncio

    from tests.integration.store.conftest import open_store

    async with open_store(dsn, "async") as store:
        await store.aput(("m",), "k", {"content": "from the loop"})
        item = await asyncio.to_thread(store.get, ("m",), "k")  # another thread: scheduled
        assert item is not None and item.value == {"content": "from the loop"}
        with pytest.raises(asyncio.InvalidStateError):
            store.get(("m",), "k")  # on the loop itself: refused, not deadlocked


def test_single_connections_must_be_autocommit_with_dict_rows(postgres_dsn: str) -> None:
    from psycopg.rows import dict_row

    from langgraph_recall.errors import ConfigurationError
    from langgraph_recall.store.postgres import PostgresMemoryStore
    from tests.integration.store.conftest import index_config

    with psycopg.connect(postgres_dsn) as conn, pytest.raises(ConfigurationError):
        PostgresMemoryStore(conn, index=index_config())  # type: ignore[arg-type]
    with psycopg.connect(postgres_dsn, autocommit=True, row_factory=dict_row) as conn:
        store = PostgresMemoryStore(conn, index=index_config())  # type: ignore[arg-type]
        assert store.setup().vector_mode == "exact"
        store.put(("m", "u"), "k", {"content": "over one connection"})
        assert [hit.key for hit in store.search(("m",), query="connection")] == ["k"]


async def test_concurrent_writers_and_readers_share_one_store(ours: Driver) -> None:
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    async def worker(index: int) -> None:
        ns = ("memories", f"w{index % 3}")
        for step in range(10):
            await ours("put", ns, f"k{index}-{step}", {"content": f"worker {index} note {step}"})
            hits = await ours("search", ns, query=f"worker {index} note", limit=3)
            assert all(hit.namespace == ns for hit in hits)

    if ours.flavour == "async":
        await asyncio.gather(*(worker(index) for index in range(8)))
    else:
        with ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(asyncio.run, worker(index)) for index in range(8)]
            for future in futures:
                future.result()
    assert len(await ours("search", ("memories",), limit=1000)) == 80
    for index in range(3):
        assert len(await ours("search", ("memories", f"w{index}"), limit=1000)) == 10 * len(
            range(index, 8, 3)
        )


async def test_default_ttl_from_ttl_config(dsn: str, flavour: str) -> None:
    from tests.integration.store.conftest import open_store

    async with open_store(dsn, flavour, ttl={"default_ttl": 30, "refresh_on_read": False}) as raw:
        store = Driver(raw, flavour, "", dsn)
        await store("put", ("t",), "default", {"content": "expires by default"})
        await store("put", ("t",), "forever", {"content": "kept"}, ttl=None)
        await store("get", ("t",), "default")  # refresh_on_read=False: expiry unchanged
        with psycopg.connect(dsn) as conn:
            rows = dict(
                conn.execute(
                    "SELECT key, extract(epoch FROM expires_at - updated_at) FROM lgm_memory_items"
                ).fetchall()
            )
        assert rows["forever"] is None
        assert float(rows["default"]) == pytest.approx(30 * 60, abs=5)
