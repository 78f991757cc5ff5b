"""The per-namespace BM25 statistics stay exact through every kind of write; no lexicon."""

from __future__ import annotations

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp

from langgraph_recall.store.postgres import PostgresMemoryStore
from tests._hypothesis import thorough
from tests.integration.store.conftest import index_config

pytestmark = [pytest.mark.postgres]

_WRITES = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "a/c"]),
        st.sampled_from(["k1", "k2", "k3"]),
        st.one_of(
            st.none(),  # a delete
            st.just({"note": "no content"}),  # a value without indexed text: no document
            st.lists(st.sampled_from(["blim", "zorp", "quix"]), min_size=1, max_size=5).map(
                lambda words: {"content": " ".join(words)}
            ),
        ),
    ),
    min_size=1,
    max_size=12,
)


def namespace_statistics(dsn: str) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """``lgm_memory_ns_stats`` as kept, and as a recount of the items says it should be."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        kept = conn.execute("SELECT ns, n_docs, total_len FROM lgm_memory_ns_stats ORDER BY 1")
        recount = conn.execute(
            "SELECT ns, count(*), sum(doc_len) FROM lgm_memory_items "
            "WHERE tsv IS NOT NULL GROUP BY 1 ORDER BY 1"
        )
        return kept.fetchall(), recount.fetchall()


def test_namespace_statistics_equal_a_recount_after_any_writes(postgres_dsn: str) -> None:
    """Property: after any sequence of puts (new, overwritten with other text, with no
    indexed text), deletes and batches of them, ``lgm_memory_ns_stats`` holds each
    namespace's document count and total length exactly, and no row for a namespace
    without documents; the per-lexeme table of earlier versions is gone."""
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=index_config()) as store:
        store.setup()
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            assert conn.execute("SELECT to_regclass('lgm_memory_lexicon')").fetchone() == (None,)

        @settings(max_examples=thorough(60))
        @given(writes=_WRITES, batched=st.booleans())
        def check(writes: list[tuple[str, str, dict[str, str] | None]], batched: bool) -> None:
            ops = [PutOp(tuple(ns.split("/")), key, value) for ns, key, value in writes]
            if batched:
                store.batch(ops)
            else:
                for op in ops:
                    store.batch([op])
            kept, recounted = namespace_statistics(postgres_dsn)
            assert kept == recounted

        check()
