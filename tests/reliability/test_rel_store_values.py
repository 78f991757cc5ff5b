"""Every value in range at the door; no raw driver error escapes; invalidate keeps put's rules.

Regression tests of defects outside testing found -- a valid-looking date poisoned a
namespace, raw driver errors came from ``put``/``search``, ``invalidate`` accepted what
``put`` rejects -- and their siblings, on both vector paths (PG 15 exact, embedded PG 18 +
pgvector).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage
from langgraph.store.base import PutOp, SearchOp

from langgraph_recall.errors import (
    ConfigurationError,
    InvalidFilterError,
    InvalidValueError,
    LangGraphRecallError,
)
from langgraph_recall.nodes import ExtractNode, RetrieveNode
from langgraph_recall.store._bounds import MAX_TIME, MIN_TIME
from langgraph_recall.store.postgres import (
    AsyncPostgresMemoryStore,
    DecayConfig,
    PostgresMemoryStore,
)
from tests.reliability._figures import Figures
from tests.reliability._servers import table_snapshot
from tests.reliability.conftest import index_config

pytestmark = [pytest.mark.postgres]

POISON = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"]
LAST = MAX_TIME - timedelta(microseconds=1)
# session time zones at the ends of what Postgres and tzdata have (LMT offsets included)
SESSION_ZONES = ["Pacific/Kiritimati", "Etc/GMT+12", "Asia/Manila", "America/St_Johns"]


def rejected(
    dsn: str, call: Any, error: type[LangGraphRecallError] = InvalidValueError
) -> LangGraphRecallError:
    """``call`` raises ``error`` — ours, from the store's own checks, not a driver error
    translated after the fact — and every table is unchanged."""
    before = table_snapshot(dsn)
    with pytest.raises(error) as info:
        call()
    assert not isinstance(info.value.__cause__, psycopg.Error), info.value
    assert table_snapshot(dsn) == before, "a rejected call changed the database"
    return info.value


def searches_work(store: PostgresMemoryStore, *prefixes: tuple[str, ...]) -> None:
    for prefix in prefixes:
        store.search(prefix)
        store.search(prefix, query="Lyon")
        store.search(prefix, include_invalid=True, query="Lyon")
        store.list_namespaces(prefix=prefix)


def test_a_stated_date_the_store_cannot_keep_never_poisons_a_namespace(
    any_store: PostgresMemoryStore, any_dsn: str, figures: Figures
) -> None:
    """Finding 2: ``ExtractNode`` on "I moved to Lyon on 0001-01-01." at +08:00 stored a BC
    ``valid_from``, and every later search of the namespace (and of its parents, for every
    user) raised ``psycopg.DataError``."""
    any_store.put(("memories", "bystander"), "city", {"content": "Bystander lives in Lyon"})
    node = ExtractNode(store=any_store, namespace=("memories", "{user_id}"))
    turns = [
        ("I moved to Lyon on 0001-01-01.", "2026-01-01T10:00:00+08:00"),
        ("I moved to Paris in May 0000.", "2026-01-02T10:00:00+08:00"),  # was a ValueError
        ("I live in Lisbon now.", "0001-01-01T00:00:00+14:00"),  # the turn time itself
        ("I work at Airbus.", "9999-12-31T23:59:59-14:00"),
    ]
    for text, stamp in turns:
        message = HumanMessage(text, additional_kwargs={"timestamp": stamp})
        report = node.invoke({"messages": [message]}, {"configurable": {"user_id": "u"}})
        assert report["memory_report"]["status"] == "written", report
    searches_work(any_store, ("memories", "user_id:u"), ("memories",), ())
    stored = any_store.search(("memories", "user_id:u"), include_invalid=True, limit=20)
    assert {item.value["content"] for item in stored} >= {"User works at Airbus."}
    for item in stored:  # a date the store cannot keep is no stated date: the turn time
        assert datetime.fromisoformat(item.value["valid_from"]).year >= 2026
    # the direct puts of the finding are rejected on both paths and write nothing
    for value in POISON:
        for field in ("valid_from", "invalid_at", "expires_at"):
            error = rejected(
                any_dsn,
                lambda: any_store.put(
                    ("memories", "user_id:u"),
                    "poison",
                    {"content": "x", field: value},  # noqa: B023
                ),
            )
            assert field in str(error) and "0001-01-02" in str(error)
    searches_work(any_store, ("memories", "user_id:u"), ("memories",))
    figures.add("store_hostile_inputs", len(turns) + 6)


@pytest.mark.parametrize("zone", SESSION_ZONES)
def test_the_edges_of_the_time_range_read_back_in_any_session_time_zone(
    any_dsn: str, zone: str
) -> None:
    """What is accepted always reads back, whatever ``TimeZone`` the user's pool sets."""
    pool = {"kwargs": {"options": f"-c TimeZone={zone}"}}
    with PostgresMemoryStore.from_conn_string(
        any_dsn, index=index_config(), pool_config=pool
    ) as store:
        store.setup()
        ns = ("edges", zone.replace("/", "_"))
        store.put(ns, "first", {"content": "first moment", "valid_from": MIN_TIME})
        store.put(ns, "last", {"content": "last moment", "valid_from": LAST.isoformat()})
        store.put(ns, "open", {"content": "ends late", "valid_from": MIN_TIME, "invalid_at": LAST})
        store.put(ns, "far", {"content": "expires late", "expires_at": LAST})
        assert store.invalidate(ns, "first", at=LAST)
        for key in ("first", "last", "open", "far"):
            item = store.get(ns, key)
            assert item is not None and item.value["content"]
        hits = store.search(ns, query="moment", as_of=LAST, include_invalid=True)
        assert {hit.key for hit in hits} >= {"first", "last"}
        assert {h.key for h in store.search(ns, as_of=MIN_TIME)} == {"first", "open"}
        assert [entry.action for entry in store.history(ns, "first")] == ["add", "invalidate"]
        store.forget(ns)


def test_no_raw_driver_error_escapes_the_calls_of_finding_9(
    any_store: PostgresMemoryStore, any_dsn: str, figures: Figures
) -> None:
    """Finding 9: a ~1.2 MB user message reached ``search`` (``ProgramLimitExceeded``); ``put``
    with ``ttl=1e300`` / ``"5"``, ``kind=[...]`` and ``n=10**5000``, and a filter nested 2,000
    deep raised raw driver/builtin errors."""
    ns = ("memories", "user_id:u")
    any_store.put(ns, "city", {"content": "User lives in Lyon", "kind": "semantic"})
    # user text reaches queries: it is cut to the bound, never an error
    message = "Where do I live? " + "Lyon " * 250_000  # ~1.25 MB
    out = RetrieveNode(store=any_store).invoke(
        {"messages": [("user", message)]}, {"configurable": {"user_id": "u"}}
    )
    assert [m["content"] for m in out["memories"]] == ["User lives in Lyon"]
    assert any_store.search(ns, query=message)[0].key == "city"
    assert any_store.search(ns, query="Lyon\x00 \ud800")[0].key == "city"  # NUL, surrogate
    calls: list[tuple[Any, type[LangGraphRecallError]]] = [
        (lambda: any_store.put(ns, "k", {"content": "x"}, ttl=1e300), InvalidValueError),
        (lambda: any_store.put(ns, "k", {"content": "x"}, ttl="5"), InvalidValueError),  # type: ignore[arg-type]
        (lambda: any_store.put(ns, "k", {"content": "x"}, ttl=10**400), InvalidValueError),
        (lambda: any_store.put(ns, "k", {"content": "x", "kind": [1]}), InvalidValueError),
        (lambda: any_store.put(ns, "k", {"content": "x", "kind": {}}), InvalidValueError),
        (lambda: any_store.put(ns, "k", {"content": "x", "n": 10**5000}), InvalidValueError),
        (
            lambda: any_store.put(ns, "k", {"content": "x", "deep": _nested(2000)}),
            InvalidValueError,
        ),
        (lambda: any_store.search(ns, filter=_deep_filter(2000)), InvalidFilterError),
        (lambda: any_store.search(ns, filter={"n": {"$gt": 10**5000}}), InvalidFilterError),
        (lambda: any_store.search(ns, filter={"n": 10**5000}), InvalidFilterError),
        (lambda: any_store.put(ns, "k", {"content": "x"}, index="content"), InvalidValueError),  # type: ignore[arg-type]
        (lambda: any_store.list_namespaces(limit="5"), InvalidValueError),  # type: ignore[arg-type]
        (lambda: any_store.list_namespaces(max_depth=1.5), InvalidValueError),  # type: ignore[arg-type]
        (lambda: any_store.forget_decayed(ns, config="x"), ConfigurationError),  # type: ignore[arg-type]
        (lambda: any_store.invalidate(ns, "city", at="soon"), InvalidValueError),  # type: ignore[arg-type]
        (lambda: any_store.batch(5), InvalidValueError),  # type: ignore[arg-type]
    ]
    for call, error in calls:
        rejected(any_dsn, call, error)
    # the indexed text must fit a tsvector (1 MiB): a store allowing big values says so
    with PostgresMemoryStore.from_conn_string(
        any_dsn, index=index_config(), max_value_bytes=4 * 1024 * 1024
    ) as big:
        words = " ".join(str(n) for n in range(200_000))  # ~1.3 MB, ~2.3x as a tsvector
        error = rejected(any_dsn, lambda: big.put(ns, "k", {"content": words}))
        assert "full-text search indexes at most" in str(error)
        big.put(ns, "k", {"content": words}, index=False)  # stored, not indexed
        assert big.get(ns, "k").value["content"] == words  # type: ignore[union-attr]
    # huge limits/offsets with a query on the pgvector path (hnsw.ef_search is at most 1000)
    for kwargs in ({"offset": 10**20}, {"limit": 10**6}, {"offset": 5000, "limit": 5000}):
        assert len(any_store.search(ns, query="Lyon", **kwargs)) <= 1  # type: ignore[arg-type]
    figures.add("store_hostile_inputs", len(calls) + 7)


@pytest.mark.parametrize("path", ["exact", "pgvector"])
async def test_the_async_store_checks_values_at_the_same_door(
    path: str, request: pytest.FixtureRequest
) -> None:
    dsn = str(request.getfixturevalue("postgres_dsn" if path == "exact" else "embedded_dsn"))
    async with AsyncPostgresMemoryStore.from_conn_string(dsn, index=index_config()) as store:
        await store.asetup()
        ns = ("memories", "u")
        await store.aput(ns, "city", {"content": "User lives in Lyon", "valid_from": "2024-01-01"})
        before = table_snapshot(dsn)
        for call in (
            lambda: store.aput(ns, "p", {"content": "x", "valid_from": POISON[0]}),
            lambda: store.aput(ns, "p", {"content": "x"}, ttl=1e300),
            lambda: store.asearch(ns, filter=_deep_filter(2000)),
            lambda: store.asearch(ns, as_of=datetime(1, 1, 1, tzinfo=timezone.utc)),
            lambda: store.ainvalidate(ns, "city", at=datetime(2020, 1, 1, tzinfo=timezone.utc)),
            lambda: store.abatch([PutOp(ns, "p", {"content": "x", "n": 10**5000})]),
        ):
            with pytest.raises(LangGraphRecallError) as info:
                await call()
            assert not isinstance(info.value.__cause__, psycopg.Error)
        assert table_snapshot(dsn) == before
        hits = await store.asearch(ns, query="Lyon " * 100_000)
        assert [hit.key for hit in hits] == ["city"]


def test_invalidate_keeps_the_interval_rule_put_keeps(
    any_store: PostgresMemoryStore, any_dsn: str
) -> None:
    """Finding 11: ``invalidate(at=2020)`` on a memory valid from 2024 returned True, and
    writing the value back with ``put`` then raised. Every write path keeps one rule:
    ``valid_from <= invalid_at``, and every accepted value can be written back."""
    ns = ("memories", "u")
    any_store.put(ns, "job", {"content": "User works at Google", "valid_from": "2024-01-01"})
    early = datetime(2020, 1, 1, tzinfo=timezone.utc)
    error = rejected(any_dsn, lambda: any_store.invalidate(ns, "job", at=early))
    assert "valid_from" in str(error)
    # a put that sets invalid_at alone is checked against the stored valid_from (or now)
    rejected(any_dsn, lambda: any_store.put(ns, "job", {"content": "x", "invalid_at": early}))
    rejected(any_dsn, lambda: any_store.put(ns, "new", {"content": "x", "invalid_at": early}))
    rejected(any_dsn, lambda: any_store.invalidate(ns, "job", at=MAX_TIME))
    assert not any_store.invalidate(ns, "missing", at=early)  # absent: False, as before
    # a future end of validity is fine, reads back, and writes back unchanged
    later = datetime(2030, 6, 1, tzinfo=timezone.utc)
    assert any_store.invalidate(ns, "job", at=later)
    value = any_store.get(ns, "job").value  # type: ignore[union-attr]
    assert datetime.fromisoformat(value["invalid_at"]) == later
    any_store.put(ns, "job", value)
    assert any_store.get(ns, "job").value == value  # type: ignore[union-attr]
    assert [
        h.key for h in any_store.search(ns, as_of=datetime(2029, 1, 1, tzinfo=timezone.utc))
    ] == ["job"]
    assert any_store.search(ns, as_of=later) == []
    # a memory stored without valid_from, invalidated now, writes back unchanged (the row
    # proposed for insertion used to start now, after its invalid_at: a CHECK violation)
    any_store.put(ns, "city", {"content": "User lives in Lyon"})
    assert any_store.invalidate(ns, "city")
    city = any_store.get(ns, "city").value  # type: ignore[union-attr]
    any_store.put(ns, "city", city)
    any_store.put(ns, "city", {**city, "expires_at": later})
    assert any_store.get(ns, "city").value["invalid_at"] == city["invalid_at"]  # type: ignore[union-attr]
    # an invalid_at later than the stored valid_from is accepted without one in the value
    any_store.put(ns, "job", {"content": "User works at Google", "invalid_at": later})
    assert any_store.invalidate(ns, "job", at=datetime(2025, 1, 1, tzinfo=timezone.utc))
    assert [entry.action for entry in any_store.history(ns, "job")][-1] == "invalidate"


def test_decay_never_closes_an_interval_before_it_opens_nor_underflows(
    any_store: PostgresMemoryStore, any_dsn: str
) -> None:
    """Siblings of finding 11 in ``forget_decayed``: invalidating "now" a memory valid only
    from next year; ``power(0.5, age / half_life)`` underflowing for a short half-life."""
    ns = ("memories", "u")
    any_store.put(ns, "plan", {"content": "Moves to Paris", "valid_from": "2030-01-01"})
    any_store.put(ns, "old", {"content": "Liked jazz", "importance": 1})
    with psycopg.connect(any_dsn, autocommit=True) as conn:  # a memory touched long ago
        conn.execute(
            "UPDATE lgm_memory_items SET created_at = now() - interval '3 years', "
            "updated_at = now() - interval '3 years'"
        )
    config = DecayConfig(threshold=0.5, half_life=timedelta(hours=1), min_age=timedelta(0))
    assert any_store.forget_decayed(ns, config=config) == 1  # "old" only; 26,000 half-lives
    assert any_store.get(ns, "plan").value.get("invalid_at") is None  # type: ignore[union-attr]
    for bad in (
        lambda: DecayConfig(threshold=float("nan")),
        lambda: DecayConfig(min_age=timedelta(days=10**6)),
        lambda: DecayConfig(half_life=5),  # type: ignore[arg-type]
        lambda: DecayConfig(kinds="semantic"),  # type: ignore[arg-type]
    ):
        with pytest.raises(ConfigurationError):
            bad()


def test_setup_repairs_times_written_before_the_bounds(
    any_store: PostgresMemoryStore, any_dsn: str
) -> None:
    """A namespace poisoned by an earlier version (a BC ``valid_from`` written before the
    door checked it) becomes readable again after ``setup()`` (migration 13)."""
    ns = ("memories", "u")
    any_store.put(ns, "city", {"content": "User lives in Lyon"})
    with psycopg.connect(any_dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE lgm_memory_items DROP CONSTRAINT lgm_memory_items_times")
        conn.execute(
            "UPDATE lgm_memory_items SET valid_from = '0001-01-01 00:00:00+14'::timestamptz, "
            "invalid_at = '0001-01-01 00:00:00+14'::timestamptz - interval '1 day'"
        )
        conn.execute("DELETE FROM lgm_store_migrations WHERE v >= 13")
    with pytest.raises(LangGraphRecallError):  # what users of the old version saw, translated
        any_store.search(ns, include_invalid=True)
    assert 13 in any_store.setup().applied
    hits = any_store.search(ns, include_invalid=True)
    assert [hit.key for hit in hits] == ["city"]
    assert any_store.search(ns) == []  # it was never valid, and still is not
    with (
        psycopg.connect(any_dsn, autocommit=True) as conn,
        pytest.raises(psycopg.errors.CheckViolation),
    ):
        conn.execute("UPDATE lgm_memory_items SET valid_from = '0001-01-01 00:00:00+14'")


def test_mixed_batches_are_checked_whole(any_store: PostgresMemoryStore, any_dsn: str) -> None:
    ns = ("memories", "u")
    good = PutOp(ns, "a", {"content": "fine"})
    for bad in (
        PutOp(ns, "b", {"content": "x", "valid_from": POISON[1]}),
        PutOp(ns, "b", {"content": "x"}, ttl=float("inf")),
        SearchOp(ns, query=None, filter=_deep_filter(500)),
        SearchOp(ns, limit="3"),  # type: ignore[arg-type]
    ):
        rejected(any_dsn, lambda: any_store.batch([good, bad]), LangGraphRecallError)  # noqa: B023
    assert any_store.get(ns, "a") is None


def _nested(depth: int) -> Any:
    node: Any = "leaf"
    for _ in range(depth):
        node = {"a": node}
    return node


def _deep_filter(depth: int) -> dict[str, Any]:
    filter_: dict[str, Any] = {"kind": "semantic"}
    for _ in range(depth):
        filter_ = {"$and": [filter_]}
    return filter_
