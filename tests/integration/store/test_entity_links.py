"""Entity links in the Postgres store: written with each memory, kept in step with it
(update, delete, TTL sweep, erasure), read only within the search's scope, fused into the
ranking as the ``entity`` term (``explain``), off exactly at weight 0 — on both vector paths.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from langgraph_recall.retrieval import RetrievalConfig
from langgraph_recall.store.postgres import ExplainedSearchItem, PostgresMemoryStore
from tests.integration.store.conftest import index_config

pytestmark = pytest.mark.postgres

ALICE, BOB = ("memories", "alice"), ("memories", "bob")
# Small pools, no recency (scores compare across searches made at different moments): a
# memory only a link reaches stays out of the lexical and vector lists of a 3-result page.
POOLS: dict[str, Any] = {"lexical_candidates": 2, "vector_candidates": 2, "recency_weight": 0.0}


def links(dsn: str) -> set[tuple[str, str, str]]:
    """Every stored link as (namespace, key, entity)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT i.ns, i.key, e.entity FROM lgm_memory_entities e "
            "LEFT JOIN lgm_memory_items i ON i.id = e.id"
        ).fetchall()
    return {(str(ns), str(key), str(entity)) for ns, key, entity in rows}


@pytest.fixture
def open_store(dsn: str) -> Iterator[Any]:
    """A factory of set-up stores on the test's database (closed at the end)."""
    with contextlib.ExitStack() as stack:

        def make(**options: Any) -> PostgresMemoryStore:
            options.setdefault("link_entities", True)
            store: PostgresMemoryStore = stack.enter_context(
                PostgresMemoryStore.from_conn_string(dsn, index=index_config(), **options)
            )
            store.setup()
            return store

        yield make


def _fill(store: PostgresMemoryStore, namespace: tuple[str, ...], distractors: int = 40) -> None:
    # distractors share the query's words, the linked memory shares none of them
    for n in range(distractors):
        store.put(
            namespace, f"d{n}", {"content": f"What does the canteen serve to eat on day {n}?"}
        )
    store.put(namespace, "adopted", {"content": "We adopted a dog called Luna last spring."})
    # what a model's extraction writes: the entity named, not said in the text
    store.put(
        namespace,
        "diet",
        {
            "content": "Grain-free kibble only, twice a day.",
            "entities": [{"name": "Luna", "type": "animal"}],
        },
    )


@pytest.mark.parametrize("backend", ["exact", "pgvector"], indirect=True)
def test_links_follow_each_write_delete_and_erasure(open_store: Any, dsn: str) -> None:
    store = open_store()
    store.put(ALICE, "move", {"content": "Ana moved to Lisbon with Bruno."})
    store.put(ALICE, "given", {"content": "x", "entities": ["ACME Corp", {"name": "Zed"}]})
    store.put(ALICE, "plain", {"content": "nothing to name here"})
    store.put(ALICE, "raw", {"content": "Ana again"}, index=False)
    assert links(dsn) == {
        ("memories.alice.", "move", "ana"),
        ("memories.alice.", "move", "lisbon"),
        ("memories.alice.", "move", "bruno"),
        ("memories.alice.", "given", "acme corp"),
        ("memories.alice.", "given", "zed"),
    }
    store.put(ALICE, "move", {"content": "Ana moved to Porto."})  # update: links follow
    store.put(ALICE, "given", {"content": "x"}, index=False)  # no longer indexed: no links
    assert links(dsn) == {
        ("memories.alice.", "move", "ana"),
        ("memories.alice.", "move", "porto"),
    }
    store.delete(ALICE, "move")
    assert links(dsn) == set()

    store.put(ALICE, "soon", {"content": "Ana met Carla in Oslo."}, ttl=0.01)  # 0.6 s
    store.put(BOB, "stay", {"content": "Bob lives in Oslo."})
    time.sleep(1.0)
    assert store.sweep() == 1
    bobs = {("memories.bob.", "stay", "bob"), ("memories.bob.", "stay", "oslo")}
    assert links(dsn) == bobs

    store.put(ALICE, "again", {"content": "Ana visited Oslo."})
    store.forget(ALICE)
    assert links(dsn) == bobs


@pytest.mark.parametrize("backend", ["exact", "pgvector"], indirect=True)
def test_a_store_that_does_not_link_writes_no_links(open_store: Any, dsn: str) -> None:
    linking, plain = open_store(), open_store(link_entities=False)
    linking.put(ALICE, "move", {"content": "Ana moved to Lisbon."})
    assert {entity for _, _, entity in links(dsn)} == {"ana", "lisbon"}
    plain.put(ALICE, "move", {"content": "Ana moved to Lisbon."})  # a rewrite drops them
    plain.put(ALICE, "other", {"content": "Bruno moved to Porto."})
    assert links(dsn) == set()


@pytest.mark.parametrize("backend", ["exact", "pgvector"], indirect=True)
def test_a_query_reaches_a_memory_only_its_entity_links(open_store: Any) -> None:
    linked = open_store(retrieval=RetrievalConfig(**POOLS, entity_weight=1.0))
    unlinked = open_store(retrieval=RetrievalConfig(**POOLS, entity_weight=0.0))
    _fill(linked, ALICE)
    query = "What does Luna eat?"
    without = unlinked.search(ALICE, query=query, limit=3)
    assert "diet" not in [item.key for item in without]

    found = linked.search(ALICE, query=query, limit=3, explain=True)
    by_key = {item.key: item for item in found}
    assert {"adopted", "diet"} <= set(by_key)
    for item in found:
        assert isinstance(item, ExplainedSearchItem) and item.explanation is not None
        parts = item.explanation
        assert sum(parts.contributions().values()) == pytest.approx(item.score, abs=1e-9)
        linked_here = item.key in ("adopted", "diet")
        assert (parts.entity > 0) == linked_here
        assert parts.entities == (("luna",) if linked_here else ())
        assert parts.entity <= 1.0 + 1e-9
    diet = by_key["diet"].explanation  # type: ignore[attr-defined]
    assert diet.lexical_rank is None and diet.vector_rank is None  # reached by the link alone


@pytest.mark.parametrize("backend", ["exact", "pgvector"], indirect=True)
def test_weight_zero_ranks_exactly_as_a_store_without_links(open_store: Any) -> None:
    """The same memories, written with links and searched at weight 0, and written without
    links: the same results with the same scores."""
    weightless = open_store(retrieval=RetrievalConfig(**POOLS, entity_weight=0.0))
    never = open_store(link_entities=False, retrieval=RetrievalConfig(**POOLS, entity_weight=0))
    _fill(weightless, ALICE)
    _fill(never, BOB)
    for query in ("What does Luna eat?", "Where was Luna adopted?", "canteen day 3", "Luna"):
        for limit in (3, 50):
            a = [(i.key, i.score) for i in weightless.search(ALICE, query=query, limit=limit)]
            b = [(i.key, i.score) for i in never.search(BOB, query=query, limit=limit)]
            assert a and a == b, query


@pytest.mark.parametrize("backend", ["exact", "pgvector"], indirect=True)
def test_one_users_entities_never_reach_or_weigh_another_users_search(open_store: Any) -> None:
    """Bob's results and scores are the same whether or not Alice's memories name the
    entities of his query (no lift, no candidate, no change of rarity)."""
    store = open_store(retrieval=RetrievalConfig(**POOLS, entity_weight=1.0, entity_hops=2))
    _fill(store, BOB)
    queries = ("What does Luna eat?", "Did Luna go to Lisbon with Ana?")
    before = {q: [(i.key, i.score) for i in store.search(BOB, query=q, limit=10)] for q in queries}
    for n in range(30):
        store.put(
            ALICE,
            f"a{n}",
            {
                "content": f"Luna and Ana flew to Lisbon, trip {n}.",
                "entities": ["Luna", "Ana", "Lisbon", f"Trip {n}"],
            },
        )
    for query in queries:
        after = store.search(BOB, query=query, limit=10, explain=True)
        assert all(item.namespace == BOB for item in after)
        assert [(i.key, i.score) for i in after] == before[query]
        alice = store.search(ALICE, query=query, limit=10)
        assert all(item.namespace == ALICE for item in alice)


@pytest.mark.parametrize("backend", ["exact", "pgvector"], indirect=True)
def test_two_hops_reach_what_a_linked_memory_names(open_store: Any) -> None:
    one = open_store(retrieval=RetrievalConfig(**POOLS, entity_weight=0.3, entity_hops=1))
    two = open_store(retrieval=RetrievalConfig(**POOLS, entity_weight=0.3, entity_hops=2))
    _fill(one, ALICE)
    one.put(
        ALICE,
        "bridge",
        {"content": "Luna stays with Marta when we travel.", "entities": ["Luna", "Marta"]},
    )
    one.put(
        ALICE, "far", {"content": "Marta lives next to the old harbour.", "entities": ["Marta"]}
    )
    query = "Who looks after Luna?"
    near = {i.key: i for i in one.search(ALICE, query=query, limit=60, explain=True)}
    assert near["far"].explanation.entity == 0.0  # type: ignore[attr-defined]
    reached = {i.key: i for i in two.search(ALICE, query=query, limit=60, explain=True)}
    far = reached["far"].explanation  # type: ignore[attr-defined]
    assert far.entities == ("marta",)
    assert 0 < far.entity < reached["bridge"].explanation.entity  # type: ignore[attr-defined]


@pytest.mark.parametrize("backend", ["exact", "pgvector"], indirect=True)
def test_links_respect_the_search_filter_and_validity(open_store: Any) -> None:
    store = open_store(retrieval=RetrievalConfig(**POOLS, entity_weight=1.0))
    _fill(store, ALICE)
    query = "What does Luna eat?"
    assert "diet" in [i.key for i in store.search(ALICE, query=query, limit=3)]
    store.invalidate(ALICE, "diet")
    assert "diet" not in [i.key for i in store.search(ALICE, query=query, limit=60)]
    assert "diet" in [
        i.key for i in store.search(ALICE, query=query, limit=3, include_invalid=True)
    ]
    store.put(
        ALICE,
        "diet",
        {"content": "Grain-free kibble only, twice a day.", "entities": ["Luna"], "source": "vet"},
    )
    assert "diet" in [i.key for i in store.search(ALICE, query=query, limit=3)]
    not_vet = store.search(ALICE, query=query, limit=3, filter={"source": {"$ne": "vet"}})
    assert "diet" not in [i.key for i in not_vet] and "adopted" in [i.key for i in not_vet]


def test_a_weight_on_a_store_that_writes_no_links_is_refused(dsn: str) -> None:
    """Links are off by default; an entity weight on such a store would never fire, so
    the store refuses it at construction, naming the option to set."""
    from langgraph_recall.errors import ConfigurationError

    weighted = RetrievalConfig(entity_weight=0.3)
    with pytest.raises(ConfigurationError, match="link_entities=True"):  # noqa: SIM117
        with PostgresMemoryStore.from_conn_string(dsn, index=index_config(), retrieval=weighted):
            pass
    with PostgresMemoryStore.from_conn_string(dsn, index=index_config()) as store:
        store.setup()
        assert store.link_entities is False
        store.put(("memories", "u1"), "pet", {"content": "Luna eats grain-free kibble."})
        assert links(dsn) == set()  # nothing linked by default
