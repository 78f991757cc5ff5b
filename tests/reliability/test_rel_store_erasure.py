"""Erasure is complete: after ``forget(prefix)`` no row of any table, no history row (also of
derived memories elsewhere that were deleted or re-pointed), no derived memory, no entity
link and no planner statistic (``pg_stats``) holds the user's text — on both vector paths.

A regression test, and a hypothesis property over random lineages of
derived memories (puts, re-points, deletes, invalidations, expiries, ANALYZE runs).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg import sql

from langgraph_recall.store.postgres import PostgresMemoryStore
from tests._hypothesis import thorough
from tests.reliability._figures import Figures
from tests.reliability._servers import residue, rows_containing, stats_containing, user_tables
from tests.reliability.conftest import index_config

pytestmark = [pytest.mark.postgres]

VICTIM, BYSTANDER = ("memories", "u_1"), ("memories", "u_10")


def analyze_everything(dsn: str) -> None:
    """What autovacuum (or the store's own periodic ANALYZE) does to planner statistics."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        for schema, name in user_tables(conn):
            conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(schema, name)))


def ref(namespace: tuple[str, ...], key: str) -> dict[str, Any]:
    return {"namespace": list(namespace), "key": key}


def test_forget_erases_deleted_and_repointed_derived_memories_and_statistics(
    any_store: PostgresMemoryStore, any_dsn: str, figures: Figures
) -> None:
    """Finding 5: a derived memory in another namespace that was deleted or re-pointed kept
    its ``add``/``delete`` history rows with the user's text, and after ANALYZE ``pg_stats``
    still quoted the forgotten values."""
    mark, keep = f"mk{uuid.uuid4().hex[:12]}", f"mk{uuid.uuid4().hex[:12]}"
    store = any_store
    # linked to the entities it names: the user's name (given, as a model gives it) and Google
    store.put(VICTIM, "job", {"content": f"{mark} works at Google", "entities": [mark, "Google"]})
    store.put(VICTIM, "gone", {"content": f"{mark} once lived in Rome"})
    store.put(BYSTANDER, "job", {"content": f"{keep} works at Airbus"})
    # deleted: a team digest quoting the user
    store.put(
        ("teams", "t1"),
        "digest",
        {"content": f"digest: {mark}", "derived_from": [ref(VICTIM, "job")]},
    )
    # derived from the digest, which is deleted below: erased with it (transitively)
    store.put(
        ("teams", "t3"),
        "meta",
        {"content": f"meta: {mark}", "derived_from": [ref(("teams", "t1"), "digest")]},
    )
    store.delete(("teams", "t1"), "digest")
    # re-pointed: once derived from the user, now from the bystander only
    store.put(
        ("teams", "t2"),
        "summary",
        {"content": f"summary: {mark}", "derived_from": [ref(VICTIM, "job")]},
    )
    store.invalidate(("teams", "t2"), "summary")
    store.put(
        ("teams", "t2"),
        "summary",
        {"content": f"summary: {keep}", "derived_from": [ref(BYSTANDER, "job")]},
    )
    # derived from a memory of the user that was deleted before the erasure
    store.put(
        ("teams", "t4"),
        "old",
        {"content": f"recalls {mark}", "derived_from": [ref(VICTIM, "gone")]},
    )
    store.delete(VICTIM, "gone")
    store.search(("teams",), query=mark)  # access rows
    analyze_everything(any_dsn)
    before = residue(any_dsn, mark)
    assert any("lgm_memory_history" in table for table in before), before
    assert any("lgm_memory_entities" in table for table in before), before
    assert stats_containing(any_dsn, mark), "ANALYZE should have sampled the user's text"
    assert any("lgm_memory_entities" in column for column in stats_containing(any_dsn, mark))

    erased = store.forget(VICTIM)

    assert residue(any_dsn, mark) == {}, residue(any_dsn, mark)
    assert erased == 3  # job, and the live derived "meta" and "old"
    for namespace, key in ((("teams", "t3"), "meta"), (("teams", "t4"), "old")):
        assert store.get(namespace, key) is None
    summary = store.get(("teams", "t2"), "summary")  # re-pointed: lives on, without the user
    assert summary is not None and keep in summary.value["content"]
    assert store.get(BYSTANDER, "job") is not None and residue(any_dsn, keep)
    figures.add("erasure_runs", 1)
    figures.add("erasure_residue_rows_incl_pg_stats", 0)


def test_erasing_many_users_refreshes_the_statistics_once_at_the_end(
    any_store: PostgresMemoryStore, any_dsn: str
) -> None:
    """``forget(prefix, analyze=False)`` for all but the last user: rows go at once, the
    statistics with the last erasure."""
    marks = {user: f"mk{uuid.uuid4().hex[:12]}" for user in ("a", "b", "c")}
    for user, mark in marks.items():
        for n in range(5):
            any_store.put(("memories", user), f"m{n}", {"content": f"{mark} fact {n}"})
    any_store.put(("memories", "keep"), "m0", {"content": "bystander fact"})
    analyze_everything(any_dsn)
    assert all(stats_containing(any_dsn, mark) for mark in marks.values())
    assert any_store.forget(("memories", "a"), analyze=False) == 5
    assert any_store.forget(("memories", "b"), analyze=False) == 5
    assert rows_containing(any_dsn, marks["a"]) == {} == rows_containing(any_dsn, marks["b"])
    assert any_store.forget(("memories", "c")) == 5
    assert all(residue(any_dsn, mark) == {} for mark in marks.values())
    assert any_store.get(("memories", "keep"), "m0") is not None


# ---------------------------------------------------------------- property over lineages

SOURCES = [(VICTIM, "v0"), (VICTIM, "v1"), (BYSTANDER, "b0"), (BYSTANDER, "b1")]
DERIVED = [
    (("teams", "t1"), "d0"),
    (("teams", "t1"), "d1"),
    (("teams", "t2"), "d2"),
    (("shared",), "d3"),
]
EVERY = SOURCES + DERIVED
MEMORY = st.sampled_from(EVERY)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("source"), st.sampled_from(SOURCES)),
        st.tuples(
            st.just("derive"),
            st.sampled_from(DERIVED),
            st.lists(MEMORY, min_size=1, max_size=3, unique=True),
        ),
        st.tuples(st.just("delete"), MEMORY),
        st.tuples(st.just("invalidate"), MEMORY),
        st.tuples(st.just("expire"), MEMORY),
        st.tuples(st.just("analyze")),
    ),
    min_size=1,
    max_size=14,
)


@dataclass
class Model:
    """What the test knows: each live memory's owners (whose text it quotes) and every
    source any version of a memory was derived from."""

    owners: dict[tuple[tuple[str, ...], str], set[str]] = field(default_factory=dict)
    ever: dict[tuple[tuple[str, ...], str], set[tuple[tuple[str, ...], str]]] = field(
        default_factory=dict
    )

    def reaches_victim(
        self, memory: tuple[tuple[str, ...], str], seen: frozenset[Any] = frozenset()
    ) -> bool:
        if memory[0] == VICTIM:
            return True
        return any(
            source not in seen and self.reaches_victim(source, seen | {memory})
            for source in self.ever.get(memory, ())
        )


def apply(
    store: PostgresMemoryStore, model: Model, op: tuple[Any, ...], marks: dict[str, str], dsn: str
) -> None:
    kind = op[0]
    if kind == "source":
        (namespace, key) = op[1]
        owner = "victim" if namespace == VICTIM else "bystander"
        store.put(namespace, key, {"content": f"{marks[owner]} fact {key}"})
        model.owners[op[1]] = {owner}
    elif kind == "derive":
        memory, sources = op[1], [s for s in op[2] if s in model.owners and s != op[1]]
        if not sources:
            return
        owners = set().union(*(model.owners[s] for s in sources))
        text = " ".join(marks[o] for o in sorted(owners))
        value = {"content": f"derived {text}", "derived_from": [ref(*s) for s in sources]}
        store.put(memory[0], memory[1], value)
        model.owners[memory] = owners
        model.ever.setdefault(memory, set()).update(sources)
    elif kind == "delete":
        store.delete(*op[1])
        model.owners.pop(op[1], None)
    elif kind == "invalidate":
        if op[1] in model.owners:
            store.invalidate(*op[1])
    elif kind == "expire" and op[1] in model.owners:
        item = store.get(*op[1])
        assert item is not None
        past = datetime.now(timezone.utc) - timedelta(seconds=1)
        store.put(op[1][0], op[1][1], {**item.value, "expires_at": past})
        store.sweep()
        model.owners.pop(op[1], None)
    elif kind == "analyze":
        analyze_everything(dsn)


@pytest.fixture(params=["exact", "pgvector"])
def lineage_dsn(request: pytest.FixtureRequest) -> str:
    return str(
        request.getfixturevalue("postgres_dsn" if request.param == "exact" else "embedded_dsn")
    )


@pytest.mark.slow
@settings(
    max_examples=thorough(25),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=OPS)
def test_no_lineage_of_derived_memories_survives_erasure(
    lineage_dsn: str, ops: list[tuple[Any, ...]], figures: Figures
) -> None:
    marks = {"victim": f"mk{uuid.uuid4().hex[:12]}", "bystander": f"mk{uuid.uuid4().hex[:12]}"}
    model = Model()
    with PostgresMemoryStore.from_conn_string(
        lineage_dsn, index=index_config(), link_entities=True
    ) as store:
        store.setup()
        for namespace in {ns for ns, _ in EVERY}:  # examples share the database: start empty
            store.forget(namespace)
        for op in ops:
            apply(store, model, op, marks, lineage_dsn)
        analyze_everything(lineage_dsn)
        survivors = [m for m in model.owners if not model.reaches_victim(m)]
        store.forget(VICTIM)
        left = residue(lineage_dsn, marks["victim"])
        figures.add("erasure_runs", 1)
        figures.add("erasure_residue_rows_incl_pg_stats", sum(left.values()))
        assert left == {}, (left, ops)
        for memory in survivors:  # nothing that never came from the user is erased
            assert store.get(*memory) is not None, (memory, ops)
