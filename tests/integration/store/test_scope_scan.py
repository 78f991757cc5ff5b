"""A small scope's one-statement search ranks exactly as the candidate path does."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_recall.store._namespace import encode_namespace
from langgraph_recall.store.postgres import _sql
from tests._hypothesis import thorough
from tests.integration.store.conftest import Driver, open_store
from tests.integration.store.test_parity import QUERIES, corpus

pytestmark = [pytest.mark.postgres, pytest.mark.embedded]

SCOPE = ("memories", "u1")


@pytest.mark.parametrize("backend", ["pgvector", "exact"])
async def test_scope_scan_agrees_with_candidate_path(
    backend: str, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """On both vector paths, a small scope's one-statement scan returns what the candidate
    path returns for the same searches (keys, scores), invalidated memories included on
    request, another user's never."""
    dsn = request.getfixturevalue("embedded_dsn" if backend == "pgvector" else "postgres_dsn")
    async with open_store(dsn, "sync") as raw:
        store = Driver(raw, "sync", backend, dsn)
        for key, value in corpus().items():
            await store("put", SCOPE, key, value)
        await store("put", ("memories", "u2"), "other", {"content": "jazz in Lyon"})
        await store("invalidate", SCOPE, "k03")
        scans = []
        for query, filter_ in QUERIES:
            scans.append(await store("search", SCOPE, query=query, filter=filter_, limit=5))
        everything = await store("search", SCOPE, query="jazz", include_invalid=True, limit=64)
        assert not raw._large_scopes.contains(encode_namespace(SCOPE))  # type: ignore[attr-defined]
        # a scope above the threshold: the scan sees it and the candidate path answers
        monkeypatch.setattr(_sql, "SCOPE_SCAN_ROWS", 10)
        candidates = []
        for query, filter_ in QUERIES:
            candidates.append(await store("search", SCOPE, query=query, filter=filter_, limit=5))
        assert raw._large_scopes.contains(encode_namespace(SCOPE))  # type: ignore[attr-defined]
        again = await store("search", SCOPE, query="jazz", include_invalid=True, limit=64)
    for scan, candidate in zip(scans, candidates, strict=True):
        assert [hit.key for hit in scan] == [hit.key for hit in candidate]
        assert [hit.score for hit in scan] == pytest.approx(
            [hit.score for hit in candidate], abs=1e-6
        )
        assert len(scan) == 5 and "other" not in [hit.key for hit in scan]
    assert [hit.key for hit in everything] == [hit.key for hit in again]
    assert "k03" in [hit.key for hit in everything]


async def test_empty_scope_answers_nothing(embedded_dsn: str) -> None:
    async with open_store(embedded_dsn, "async") as raw:
        store = Driver(raw, "async", "pgvector", embedded_dsn)
        await store("put", ("memories", "u1"), "k", {"content": "hello"})
        assert await store("search", ("memories", "nobody"), query="hello") == []
        hits = await store("search", ("memories", "u1"), query="hello")
        assert [hit.key for hit in hits] == ["k"]


async def test_candidate_path_reads_exact_neighbours_of_a_scope_small_beside_the_table(
    embedded_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scope too large for the one-statement scan but small beside the table gets exact
    vector candidates (the scan's own answers), not a filtered HNSW walk through the other
    namespaces; a scope large beside the table (``EXACT_VECTOR_SCALE``) gets the HNSW branch,
    which answers from the scope alone."""
    from langgraph.store.base import PutOp

    async with open_store(embedded_dsn, "sync") as raw:
        store = Driver(raw, "sync", "pgvector", embedded_dsn)
        words = ["jazz", "Lyon", "tea", "climbing", "Python", "garden", "piano", "ramen"]
        ops = [
            PutOp(("memories", f"o{n % 40}"), f"x{n}", {"content": f"{words[n % 8]} note {n}"})
            for n in range(1200)
        ]
        ops += [
            PutOp(SCOPE, f"k{n}", {"content": f"{words[(n * 3) % 8]} and {words[n % 8]} {n}"})
            for n in range(60)
        ]
        raw.batch(ops)
        queries = ["jazz in Lyon", "green tea", "piano lessons", "ramen in Tokyo"]
        scans = [await store("search", SCOPE, query=q, limit=10) for q in queries]
        monkeypatch.setattr(_sql, "SCOPE_SCAN_ROWS", 10)
        exact = [await store("search", SCOPE, query=q, limit=10) for q in queries]
        assert raw._large_scopes.contains(encode_namespace(SCOPE))  # type: ignore[attr-defined]
        monkeypatch.setattr(_sql, "EXACT_VECTOR_SCALE", 0.0)  # the HNSW branch
        approximate = [await store("search", SCOPE, query=q, limit=10) for q in queries]
    for scan, candidate in zip(scans, exact, strict=True):
        assert [hit.key for hit in candidate] == [hit.key for hit in scan]
        assert [hit.score for hit in candidate] == pytest.approx(
            [hit.score for hit in scan], abs=1e-6
        )
    for hits in approximate:
        assert len(hits) == 10 and all(hit.key.startswith("k") for hit in hits)


def _index_loops(plan: Any, index: str) -> list[int]:
    """``Actual Loops`` of every plan node that scans ``index``."""
    found: list[int] = []
    if isinstance(plan, dict):
        if plan.get("Index Name") == index:
            found.append(int(plan["Actual Loops"]))
        for child in plan.values():
            found.extend(_index_loops(child, index))
    elif isinstance(plan, list):
        for child in plan:
            found.extend(_index_loops(child, index))
    return found


async def test_only_one_vector_branch_runs_and_small_scopes_never_walk_the_hnsw_index(
    embedded_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The candidate statement's vector half: the scope's size (a one-time filter) picks
    the exact scan or the HNSW index, and the other branch never executes."""
    import psycopg
    from langgraph.store.base import PutOp

    from langgraph_recall._pg.program import Stmt
    from langgraph_recall.store.postgres import _batch
    from langgraph_recall.store.postgres._migrations import IP_INDEX

    seen: list[Stmt] = []

    def recording(*args: Any, **kwargs: Any) -> Stmt:
        statement = Stmt(*args, **kwargs)
        seen.append(statement)
        return statement

    async with open_store(embedded_dsn, "sync") as raw:
        ops = [PutOp(("memories", "o"), f"x{n}", {"content": f"note {n}"}) for n in range(200)]
        ops += [PutOp(SCOPE, f"k{n}", {"content": f"jazz and tea {n}"}) for n in range(2500)]
        for start in range(0, len(ops), 500):
            raw.batch(ops[start : start + 500])
        with psycopg.connect(embedded_dsn, autocommit=True) as conn:
            conn.execute("ANALYZE lgm_memory_items")
        monkeypatch.setattr(_sql, "SCOPE_SCAN_ROWS", 10)
        monkeypatch.setattr(_batch, "Stmt", recording)
        loops = {}
        for scale in (1e6, 0.0):
            monkeypatch.setattr(_sql, "EXACT_VECTOR_SCALE", scale)
            seen.clear()
            assert len(raw.search(SCOPE, query="jazz", limit=5)) == 5
            [hybrid] = [s for s in seen if "exact_scale" in str(s.sql)]
            with psycopg.connect(embedded_dsn) as conn:
                explain = psycopg.sql.SQL("EXPLAIN (ANALYZE, FORMAT JSON) ")
                statement = psycopg.sql.Composed([explain, hybrid.sql])
                explained = conn.execute(statement, hybrid.params).fetchone()
            assert explained is not None
            loops[scale] = _index_loops(explained[0], IP_INDEX)
    assert loops[1e6] and all(n == 0 for n in loops[1e6]), loops  # planned, never run
    assert any(n > 0 for n in loops[0.0]), loops  # a scope large beside the table: HNSW


WORDS = ["blim", "zorp", "quix", "vant", "drel", "mosk", "trig", "plon"]
"""Made-up words the english configuration keeps as they are: one lexeme per word."""

_DOCS = st.lists(
    st.tuples(
        st.sampled_from(["u1", "u10", "u2", "u1/deeper"]),  # "u10": a prefix, not the scope
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=7),
        st.booleans(),  # invalidated: hidden from search, still a document of the corpus
    ),
    min_size=1,
    max_size=24,
)


def _reference_bm25(
    scope_docs: list[list[str]], doc: list[str], query: list[str], k1: float, b: float
) -> float:
    """BM25 of ``doc`` as the store defines it, over every document of the scope."""
    n = len(scope_docs)
    avgdl = sum(len(d) for d in scope_docs) / max(n, 1)
    score = 0.0
    for word in dict.fromkeys(query):
        tf = doc.count(word)
        if not tf:
            continue
        df = sum(1 for d in scope_docs if word in d)
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / max(avgdl, 1)))
    return score


@pytest.mark.parametrize("path", ["exact", "exact-candidates", "scan", "candidates"])
def test_bm25_statistics_are_those_of_the_scope_on_every_path(
    path: str, request: pytest.FixtureRequest
) -> None:
    """Property: on every search path (the exact path's scan and candidates, pgvector's
    one-statement scan and candidates), a result's raw BM25 is the reference BM25 over
    exactly the scope's documents -- its document frequencies, count and average length
    counted over every row under the scope, invalidated ones included, none of a sibling
    namespace whose name only starts the same ("u10" beside "u1")."""
    from langgraph.store.base import PutOp

    from langgraph_recall.store.postgres import PostgresMemoryStore
    from tests.integration.store.conftest import index_config

    exact = path.startswith("exact")
    dsn = request.getfixturevalue("postgres_dsn" if exact else "embedded_dsn")
    examples = iter(range(10**6))
    with PostgresMemoryStore.from_conn_string(dsn, index=index_config()) as store:
        store.setup()
        k1, b = store.retrieval.bm25_k1, store.retrieval.bm25_b

        @settings(max_examples=thorough(40))
        @given(docs=_DOCS, query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))
        def check(docs: list[tuple[str, list[str], bool]], query: list[str]) -> None:
            root = ("bm25", str(next(examples)))
            ops = [
                PutOp((*root, *where.split("/")), f"d{n}", {"content": " ".join(words)})
                for n, (where, words, _) in enumerate(docs)
            ]
            store.batch(ops)
            for n, (where, _, invalid) in enumerate(docs):
                if invalid:
                    store.invalidate((*root, *where.split("/")), f"d{n}")
            scope = (*root, "u1")
            in_scope = [words for where, words, _ in docs if where.split("/")[0] == "u1"]
            with pytest.MonkeyPatch.context() as patch:
                if path.endswith("candidates"):
                    patch.setattr(_sql, "SCOPE_SCAN_ROWS", 0)
                hits = store.search(scope, query=" ".join(query), limit=50, explain=True)
            large = store._large_scopes.contains(encode_namespace(scope))  # type: ignore[attr-defined]
            assert large == (path.endswith("candidates") and bool(in_scope))  # (empty: no rows)
            by_key = {f"d{n}": words for n, (_, words, _) in enumerate(docs)}
            visible = {
                f"d{n}"
                for n, (where, _, invalid) in enumerate(docs)
                if where.split("/")[0] == "u1" and not invalid
            }
            assert {hit.key for hit in hits} <= visible
            for hit in hits:
                assert hit.explanation is not None
                expected = _reference_bm25(in_scope, by_key[hit.key], query, k1, b)
                assert (hit.explanation.bm25 or 0.0) == pytest.approx(expected, rel=1e-6, abs=1e-9)

        check()
