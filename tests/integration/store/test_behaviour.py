"""Plain BaseStore behaviour, identical on LangGraph's InMemoryStore and on our store.

Every test runs on ``InMemoryStore`` (the reference), our store on PG 15 without
pgvector (exact path) and on embedded PG 18 with pgvector, each through the sync and
the async API. Search without a query is compared as sets: InMemoryStore returns
insertion order, ours most-recent-first (documented).
"""

from __future__ import annotations

import pytest
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from tests.integration.store.conftest import Driver

pytestmark = pytest.mark.postgres


async def test_put_get_update_delete(any_store: Driver) -> None:
    ns = ("docs", "u1")
    assert await any_store("get", ns, "k") is None
    await any_store("put", ns, "k", {"content": "first", "n": 1})
    item = await any_store("get", ns, "k")
    assert item.value == {"content": "first", "n": 1}
    assert item.namespace == ns and item.key == "k"
    await any_store("put", ns, "k", {"content": "second", "n": 2})
    updated = await any_store("get", ns, "k")
    assert updated.value == {"content": "second", "n": 2}
    assert updated.updated_at >= item.updated_at
    await any_store("delete", ns, "k")
    assert await any_store("get", ns, "k") is None
    await any_store("delete", ns, "k")  # deleting a missing key is a no-op


async def test_search_scopes_by_segment_prefix(any_store: Driver) -> None:
    await any_store("put", ("a", "b"), "k1", {"content": "one"})
    await any_store("put", ("a", "bc"), "k2", {"content": "two"})
    await any_store("put", ("a", "b", "c"), "k3", {"content": "three"})
    await any_store("put", ("x",), "k4", {"content": "four"})
    keys = {item.key for item in await any_store("search", ("a", "b"))}
    assert keys == {"k1", "k3"}
    assert {item.key for item in await any_store("search", ("a",))} == {"k1", "k2", "k3"}
    assert {item.key for item in await any_store("search", ())} == {"k1", "k2", "k3", "k4"}
    assert await any_store("search", ("a", "b", "c", "d")) == []


FILTER_CASES: list[tuple[dict, set[str]]] = [
    ({"color": "red"}, {"r1", "r9"}),
    ({"color": {"$eq": "blue"}}, {"b3"}),
    ({"color": {"$ne": "red"}}, {"b3", "g10"}),
    ({"n": {"$gt": 3}}, {"r9", "g10"}),
    ({"n": {"$gte": 9}}, {"r9", "g10"}),
    ({"n": {"$lt": 9}}, {"r1", "b3"}),
    ({"n": {"$lte": 3}}, {"r1", "b3"}),
    ({"n": {"$gt": 1, "$lt": 10}}, {"b3", "r9"}),
    ({"color": "red", "n": {"$gt": 5}}, {"r9"}),
    ({"meta": {"tag": "x"}}, {"r1"}),
]


async def test_search_filters(any_store: Driver) -> None:
    ns = ("f",)
    await any_store("put", ns, "r1", {"color": "red", "n": 1, "meta": {"tag": "x"}})
    await any_store("put", ns, "b3", {"color": "blue", "n": 3, "meta": {"tag": "y"}})
    await any_store("put", ns, "r9", {"color": "red", "n": 9})
    await any_store("put", ns, "g10", {"color": "green", "n": 10})
    for filter_, expected in FILTER_CASES:
        found = {item.key for item in await any_store("search", ns, filter=filter_)}
        assert found == expected, filter_


async def test_search_limit_offset_pages_cover_all(any_store: Driver) -> None:
    ns = ("pages",)
    for index in range(7):
        await any_store("put", ns, f"k{index}", {"content": f"item {index}"})
    pages = [await any_store("search", ns, limit=3, offset=offset) for offset in (0, 3, 6)]
    assert [len(page) for page in pages] == [3, 3, 1]
    keys = [item.key for page in pages for item in page]
    assert sorted(keys) == [f"k{index}" for index in range(7)]
    assert await any_store("search", ns, limit=3, offset=7) == []


async def test_list_namespaces(any_store: Driver) -> None:
    for ns in [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("x", "y"),
    ]:
        await any_store("put", ns, "k", {"content": "v"})
    assert await any_store("list_namespaces", prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert await any_store("list_namespaces", suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert await any_store("list_namespaces", prefix=("a", "*", "f")) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
    ]
    assert await any_store("list_namespaces", max_depth=1) == [("a",), ("x",)]
    everything = await any_store("list_namespaces")
    assert len(everything) == 6 and everything == sorted(everything)
    assert await any_store("list_namespaces", limit=2, offset=1) == everything[1:3]


async def test_batch_results_in_order(any_store: Driver) -> None:
    ns = ("batch",)
    await any_store("put", ns, "old", {"content": "kept"})
    results = await any_store(
        "batch",
        [
            GetOp(ns, "old"),
            PutOp(ns, "new", {"content": "fresh"}),
            SearchOp(ns, filter={"content": "kept"}),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ns),)),
            GetOp(ns, "missing"),
        ],
    )
    assert results[0].value == {"content": "kept"}
    assert results[1] is None
    assert [item.key for item in results[2]] == ["old"]
    assert results[3] == [ns]
    assert results[4] is None
    assert (await any_store("get", ns, "new")).value == {"content": "fresh"}


async def test_bad_namespaces_are_rejected(any_store: Driver) -> None:
    for namespace in [("a", ""), ("a.b",), ("langgraph", "x"), ()]:
        with pytest.raises(ValueError):
            await any_store("put", namespace, "k", {"content": "v"})
    assert await any_store("search", ()) == []
