"""Security of the memory store: SQL injection, cross-tenant isolation, complete erasure.

Runs on both vector paths (PG 15 without pgvector → exact search; embedded PG 18 →
pgvector HNSW), because their search SQL differs.

* Injection: hostile text in namespace labels, keys, filter field names and values and
  query text is data, never SQL: the tables stay intact and the payload round-trips.
* Isolation: users whose ids look alike (``u_1``, ``u_10``, ``u%1``, ``u'1``, ``U_1``,
  ``u_1 ``, unicode confusables...) never see each other's memories under any search
  form (query, filter, prefix, list_namespaces, get).
* Erasure: after ``forget`` the user's unique marker text appears in no row of any table
  of the database (items, history, derived memories, anything else).
"""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest
from langgraph.store.base import GetOp, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from langgraph_recall.errors import InvalidFilterError, InvalidNamespaceError
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests.reliability._figures import Figures
from tests.reliability._servers import rows_containing, user_tables
from tests.reliability.conftest import index_config

pytestmark = [pytest.mark.postgres]

PAYLOADS = [
    "'); DROP TABLE lgm_memory_items; --",
    "x'; DELETE FROM lgm_memory_history WHERE 'a'='a",
    '"; TRUNCATE lgm_memory_items CASCADE; --',
    "$$; DROP TABLE lgm_store_meta; $$",
    "u%1",
    "u_1",
    "%",
    "_",
    "\\",
    "\\'",
    "a\\%b",
    "$eq",
    "$ne",
    "*",
    "' OR '1'='1",
    "1; SELECT pg_sleep(10)",
    "e'\\x41'",
    "‘smart’ “quotes”",
    "名前'); --",
]

LOOKALIKE_USERS = [
    "u_1",
    "u_10",
    "u%1",
    "u'1",
    "U_1",
    "u_1 ",
    " u_1",
    "u_",
    "u",
    "u\\1",
    "u＿1",  # FULLWIDTH LOW LINE
    "u_1\u200b",  # zero-width space
    "υ_1",  # GREEK SMALL LETTER UPSILON
    "u_１",  # FULLWIDTH DIGIT ONE
    "u_1\t",
    "u*1",
]


def marker_of(user: str) -> str:
    return "mk" + uuid.uuid5(uuid.NAMESPACE_OID, user).hex[:16]


def table_names(store: PostgresMemoryStore, dsn: str) -> list[tuple[str, str]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return user_tables(conn)


def dsn_of(store: PostgresMemoryStore) -> str:
    conn = store.conn
    return str(conn.conninfo)  # type: ignore[union-attr]


def test_injection_payloads_are_data_everywhere(
    any_store: PostgresMemoryStore, figures: Figures
) -> None:
    dsn = dsn_of(any_store)
    tables_before = table_names(any_store, dsn)
    any_store.put(("victim", "other"), "keep", {"content": "victim data stays"})
    accepted = 0
    mirror = InMemoryStore()
    for n, payload in enumerate(PAYLOADS):
        namespace = ("inj", payload) if "." not in payload else ("inj", f"p{n}")
        value = {"content": f"payload {n} {payload}", "tag": payload, payload: n}
        any_store.put(namespace, payload, value)
        item = any_store.get(namespace, payload)
        assert item is not None and item.value["tag"] == payload and item.value[payload] == n
        # as filter value, filter key, query text, and all at once
        by_value = any_store.search(("inj",), filter={"tag": payload}, limit=100)
        assert [(hit.namespace, hit.key) for hit in by_value] == [(namespace, payload)]
        if payload.startswith("$"):  # "$..." at field level is an operator: unknown → error
            with pytest.raises(InvalidFilterError):
                any_store.search(("inj",), filter={payload: n}, limit=100)
        else:
            by_key = any_store.search(("inj",), filter={payload: n}, limit=100)
            assert [(hit.namespace, hit.key) for hit in by_key] == [(namespace, payload)]
        by_query = any_store.search(namespace, query=payload, filter={"tag": payload})
        assert [hit.key for hit in by_query] == [payload]
        assert any_store.search(("victim",), query=payload, filter={"tag": payload}) == []
        # "*" is LangGraph's wildcard label in list_namespaces: compare with InMemoryStore
        mirror.put(namespace, payload, value)
        listed = any_store.list_namespaces(prefix=namespace)
        assert listed == mirror.list_namespaces(prefix=namespace)
        assert namespace in listed and all(ns[0] == "inj" for ns in listed)
        accepted += 1
    # nothing was dropped or emptied, no namespace leaked into another
    assert table_names(any_store, dsn) == tables_before
    victim = any_store.get(("victim", "other"), "keep")
    assert victim is not None and victim.value == {"content": "victim data stays"}
    assert len(any_store.search(("inj",), limit=1000)) == accepted
    figures.add("injection_payloads_tried", accepted * 6)


def test_hostile_operators_and_shapes_are_rejected(any_store: PostgresMemoryStore) -> None:
    any_store.put(("ops", "u"), "k", {"content": "x", "n": 1})
    for bad in (
        {"$where": "1=1"},
        {"n": {"$regex": ".*"}},
        {"n": {"$gt": 0, "nested": 1}},
        {"$or": "'); DROP TABLE x; --"},
        {"$and": []},
        {"": 1},
    ):
        with pytest.raises(InvalidFilterError):
            any_store.search(("ops",), filter=bad)
    for bad_namespace in (("ops", "a.b"), ("ops", ""), ("ops", "x\x00y")):
        with pytest.raises(InvalidNamespaceError):
            any_store.put(bad_namespace, "k", {"content": "x"})
        with pytest.raises(InvalidNamespaceError):
            any_store.batch([PutOp(bad_namespace, "k", {"content": "x"})])
    # a hostile NESTED field name is just a path that does not exist
    assert (
        any_store.search(("ops",), filter={"n": {"'); DROP TABLE lgm_memory_items; --": 1}}) == []
    )
    assert [hit.key for hit in any_store.search(("ops",))] == ["k"]


def _seed_users(store: PostgresMemoryStore) -> None:
    ops: list[Any] = []
    for user in LOOKALIKE_USERS:
        for n in range(3):
            ops.append(
                PutOp(
                    ("memories", user),
                    f"m{n}",
                    {
                        "content": f"secret project {marker_of(user)} budget {n} lives in Lyon",
                        "owner": user,
                        "n": n,
                        "kind": "semantic",
                    },
                )
            )
    store.batch(ops)


def _assert_only(hits: list[Any], user: str, form: str) -> int:
    leaks = [hit for hit in hits if hit.namespace != ("memories", user)]
    assert leaks == [], (user, form, [(h.namespace, h.key) for h in leaks])
    return len(hits)


def test_lookalike_tenants_never_see_each_other(
    any_store: PostgresMemoryStore, figures: Figures
) -> None:
    _seed_users(any_store)
    searches = 0
    for user in LOOKALIKE_USERS:
        prefix = ("memories", user)
        other_markers = " ".join(marker_of(u) for u in LOOKALIKE_USERS if u != user)
        forms: dict[str, list[Any]] = {
            "plain": any_store.search(prefix, limit=100),
            "query": any_store.search(prefix, query="secret project Lyon budget", limit=100),
            "query other markers": any_store.search(prefix, query=other_markers, limit=100),
            "filter owner": any_store.search(prefix, filter={"owner": {"$ne": user}}, limit=100),
            "filter in": any_store.search(
                prefix, filter={"owner": {"$in": LOOKALIKE_USERS}}, limit=100
            ),
            "filter or": any_store.search(
                prefix, filter={"$or": [{"n": {"$gte": 0}}, {"owner": {"$exists": True}}]}
            ),
            "offset": any_store.search(prefix, query="Lyon", limit=100, offset=1),
        }
        for form, hits in forms.items():
            _assert_only(hits, user, form)
            searches += 1
        assert len(forms["plain"]) == 3 and len(forms["query"]) == 3
        assert forms["filter owner"] == [] and len(forms["offset"]) == 2
        # a filter that selects another user's memories by value still cannot cross
        for other in LOOKALIKE_USERS:
            if other != user:
                assert any_store.search(prefix, filter={"owner": other}) == []
                searches += 1
        # gets by exact namespace; list_namespaces under the prefix
        assert {any_store.get(prefix, f"m{n}").value["owner"] for n in range(3)} == {user}  # type: ignore[union-attr]
        assert any_store.list_namespaces(prefix=prefix) == [prefix]
        batch = any_store.batch([SearchOp(prefix, None, 100, 0, "Lyon"), GetOp(prefix, "m0")])
        _assert_only(batch[0], user, "batch search")  # type: ignore[arg-type]
        searches += 2
    everyone = any_store.list_namespaces(prefix=("memories",))
    assert sorted(everyone) == sorted(("memories", u) for u in LOOKALIKE_USERS)
    figures.add("isolation_searches", searches)
    figures.add("isolation_leaks", 0)


def test_forget_leaves_no_residue_in_any_table(
    any_store: PostgresMemoryStore, any_dsn: str, figures: Figures
) -> None:
    victim, bystander = "u_1", "u_10"
    mark, keep = marker_of(victim), marker_of(bystander)
    ns, other = ("memories", victim), ("memories", bystander)
    any_store.put(ns, "job", {"content": f"{mark} works at Google", "kind": "semantic"})
    any_store.put(ns, "job", {"content": f"{mark} works at Microsoft", "kind": "semantic"})
    any_store.put(ns, "city", {"content": f"{mark} lives in Lyon", "importance": 8})
    any_store.invalidate(ns, "city")
    any_store.put(ns, "gone", {"content": f"{mark} deleted fact"})
    any_store.delete(ns, "gone")
    any_store.put(
        ns,
        "reflection",
        {"content": f"{mark} changed jobs", "kind": "reflection", "derived_from": ["job"]},
    )
    # derived memories elsewhere (e.g. a shared team space) are erased with the source
    any_store.put(
        ("teams", "t1"),
        "digest",
        {
            "content": f"team digest mentions {mark}",
            "derived_from": [{"namespace": list(ns), "key": "job"}],
        },
    )
    any_store.put(other, "job", {"content": f"{keep} works at Airbus"})
    any_store.search(ns, query=f"{mark} works", limit=5)  # access tracking rows/columns
    assert rows_containing(any_dsn, mark), "the marker should be stored before forget"

    erased = any_store.forget(ns)
    assert erased >= 4  # job, city, reflection, digest
    residue = rows_containing(any_dsn, mark)
    assert residue == {}, residue
    # nothing of the user is retrievable by any route
    assert any_store.search(ns, limit=100) == []
    everything = any_store.search((), query=mark, limit=100)
    assert [hit for hit in everything if mark in str(hit.value)] == []
    assert {hit.namespace for hit in everything} == {other}
    assert any_store.search(("teams",), query=mark, limit=100) == []
    assert any_store.list_namespaces(prefix=ns) == []
    assert any_store.history(ns, "job") == []
    assert any_store.get(ns, "job") is None
    # the look-alike bystander is untouched
    kept = any_store.get(other, "job")
    assert kept is not None and keep in kept.value["content"]
    assert rows_containing(any_dsn, keep)
    figures.add("erasure_runs", 1)
    figures.add("residue_rows", sum(residue.values()))


def test_forget_is_seen_by_another_worker_with_a_warm_cache(
    any_store: PostgresMemoryStore, any_dsn: str
) -> None:
    """A second store instance (another worker process) that searched the user's memories
    before ``forget`` must not return them afterwards (its in-process caches are stale)."""
    victim = ("memories", "u_1")
    mark = marker_of("u_1")
    for n in range(5):
        any_store.put(victim, f"m{n}", {"content": f"{mark} private fact number {n}"})
    any_store.put(("memories", "u_2"), "m0", {"content": "someone else entirely"})
    with PostgresMemoryStore.from_conn_string(any_dsn, index=index_config()) as other_worker:
        warm = other_worker.search(("memories",), query=f"{mark} private fact", limit=10)
        assert {hit.namespace for hit in warm} >= {victim}
        assert any_store.forget(victim) == 5
        for prefix in ((), ("memories",), victim):
            hits = other_worker.search(prefix, query=f"{mark} private fact", limit=10)
            assert [hit for hit in hits if mark in str(hit.value)] == [], prefix
            plain = other_worker.search(prefix, filter={"content": {"$exists": True}}, limit=50)
            assert all(hit.namespace != victim for hit in plain), prefix
        assert other_worker.get(victim, "m0") is None
        assert other_worker.list_namespaces(prefix=victim) == []
    assert rows_containing(any_dsn, mark) == {}
