"""What LangGraph's suites found, pinned on both backends: explained scores, index options,
the TTL sweeper's LangGraph signatures."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Iterator
from typing import Any

import pytest

from langgraph_recall.errors import ConfigurationError, EmbeddingError
from langgraph_recall.retrieval import RetrievalConfig
from langgraph_recall.store.postgres import (
    AsyncPostgresMemoryStore,
    ExplainedSearchItem,
    PostgresMemoryStore,
)
from tests.fakes import HashingEmbeddings

DIMS = 32
DOCS = {
    "tea": {"content": "Zhang drinks green tea every morning", "importance": 7},
    "lyon": {"content": "Zhang moved to Lyon in May 2024", "importance": 9},
    "cat": {"content": "The cat is called Miso", "importance": 3},
    "work": {"content": "Zhang works on the Falcon project", "importance": 5},
}


@pytest.fixture(params=["exact", "pgvector"])
def dsn(request: pytest.FixtureRequest) -> str:
    return str(
        request.getfixturevalue("postgres_dsn" if request.param == "exact" else "embedded_dsn")
    )


class NonUnitEmbeddings(HashingEmbeddings):
    """Vectors of length 3: fine for cosine, not for inner product."""

    def _embed(self, text: str) -> list[float]:
        return [3.0 * x for x in super()._embed(text)]


@pytest.fixture
def filled(dsn: str) -> Iterator[PostgresMemoryStore]:
    config = RetrievalConfig(access_weight=0.1)  # every term of the formula in play
    index: Any = {"dims": DIMS, "embed": HashingEmbeddings(DIMS)}
    with PostgresMemoryStore.from_conn_string(
        dsn, index=index, retrieval=config, access_flush_interval=3600
    ) as store:
        store.setup()
        for key, value in DOCS.items():
            store.put(("m", "u1"), key, value)
        yield store


QUERIES = ["green tea", "where did Zhang move in May 2024", "Falcon", "pets"]


@pytest.mark.parametrize("query", QUERIES)
def test_explained_components_add_up_to_the_score(filled: PostgresMemoryStore, query: str) -> None:
    plain = filled.search(("m",), query=query, limit=10)
    explained = filled.search(("m",), query=query, limit=10, explain=True)
    assert [i.key for i in explained] == [i.key for i in plain]  # recency moves on: approx
    assert [i.score for i in explained] == pytest.approx([i.score for i in plain], abs=1e-6)
    assert explained and all(isinstance(i, ExplainedSearchItem) for i in explained)
    for item in explained:
        parts = item.explanation
        assert parts is not None and item.score == parts.score
        assert sum(parts.contributions().values()) == pytest.approx(parts.score, abs=1e-12)
        assert parts.similarity is not None and -1.0 <= parts.similarity <= 1.0
    assert explained[0].dict()["explanation"]["score"] == explained[0].score


def test_explain_on_a_search_without_query_has_no_explanation(
    filled: PostgresMemoryStore,
) -> None:
    items = filled.search(("m",), explain=True)
    assert len(items) == 4 and all(i.score is None and i.explanation is None for i in items)  # type: ignore[attr-defined]


def test_explanations_are_the_same_on_exact_and_pgvector(
    postgres_dsn: str, embedded_dsn: str
) -> None:
    """The same memories, queries and clock give the same ranking and the same terms."""
    seen: list[list[tuple[str, float, float]]] = []
    for dsn in (postgres_dsn, embedded_dsn):
        index: Any = {"dims": DIMS, "embed": HashingEmbeddings(DIMS)}
        with PostgresMemoryStore.from_conn_string(
            dsn, index=index, retrieval=RetrievalConfig(recency_weight=0.0)
        ) as store:
            store.setup()
            store.batch([])
            for key, value in DOCS.items():
                store.put(("m", "u1"), key, value)
            rows = []
            for query in QUERIES:
                for item in store.search(("m",), query=query, explain=True):
                    assert item.explanation is not None  # type: ignore[attr-defined]
                    rows.append((item.key, item.score, item.explanation.similarity))  # type: ignore[attr-defined]
            seen.append(rows)
    exact, pgvector = seen
    assert [key for key, _, _ in exact] == [key for key, _, _ in pgvector]
    for (_, score_a, sim_a), (_, score_b, sim_b) in zip(exact, pgvector, strict=True):
        assert score_a == pytest.approx(score_b, abs=1e-5)
        assert sim_a == pytest.approx(sim_b, abs=1e-5)


@pytest.mark.parametrize("distance_type", ["inner_product", "l2"])
def test_a_distance_type_is_honoured_or_the_write_fails_whole(dsn: str, distance_type: str) -> None:
    unit: Any = {"dims": DIMS, "embed": HashingEmbeddings(DIMS), "distance_type": distance_type}
    cosine: Any = {"dims": DIMS, "embed": HashingEmbeddings(DIMS)}
    with PostgresMemoryStore.from_conn_string(dsn, index=cosine) as reference:
        reference.setup()
        for key, value in DOCS.items():
            reference.put(("ref",), key, value)
        expected = [(i.key, i.score) for i in reference.search(("ref",), query="Zhang tea")]
    with PostgresMemoryStore.from_conn_string(dsn, index=unit) as store:
        for key, value in DOCS.items():
            store.put(("m",), key, value)
        got = [(i.key, i.score) for i in store.search(("m",), query="Zhang tea")]
    assert [key for key, _ in got] == [key for key, _ in expected]  # unit vectors: as cosine
    assert [score for _, score in got] == pytest.approx([score for _, score in expected], abs=1e-6)
    skewed: Any = {"dims": DIMS, "embed": NonUnitEmbeddings(DIMS), "distance_type": distance_type}
    with PostgresMemoryStore.from_conn_string(dsn, index=skewed) as store:
        with pytest.raises(EmbeddingError, match="unit-length"):
            store.put(("m",), "tea", {"content": "replaced"})
        assert store.get(("m",), "tea").value == DOCS["tea"]  # type: ignore[union-attr]


def test_unsupported_index_options_fail_at_construction(postgres_dsn: str) -> None:
    index: Any = {
        "dims": DIMS,
        "embed": HashingEmbeddings(DIMS),
        "ann_index_config": {"vector_type": "bit"},
    }
    with (
        pytest.raises(ConfigurationError, match="bit"),
        PostgresMemoryStore.from_conn_string(postgres_dsn, index=index),
    ):
        pass


async def test_async_ttl_sweeper_has_langgraphs_signatures(dsn: str) -> None:
    index: Any = {"dims": DIMS, "embed": HashingEmbeddings(DIMS)}
    async with AsyncPostgresMemoryStore.from_conn_string(dsn, index=index) as store:
        await store.asetup()
        task = await asyncio.wait_for(store.start_ttl_sweeper(0.01), timeout=2)
        assert isinstance(task, asyncio.Task) and not task.done()
        assert await store.start_ttl_sweeper() is task  # already running: the same task
        assert await asyncio.wait_for(store.stop_ttl_sweeper(timeout=5), timeout=6) is True
        assert task.done() and await store.stop_ttl_sweeper() is True
        with pytest.raises(ConfigurationError, match="positive"):
            await store.start_ttl_sweeper(-1)


def test_sync_ttl_sweeper_has_langgraphs_signatures(dsn: str) -> None:
    index: Any = {"dims": DIMS, "embed": HashingEmbeddings(DIMS)}
    with PostgresMemoryStore.from_conn_string(dsn, index=index) as store:
        store.setup()
        future = store.start_ttl_sweeper(0.01)
        assert isinstance(future, concurrent.futures.Future) and not future.done()
        assert store.start_ttl_sweeper() is future
        assert store.stop_ttl_sweeper(timeout=5) is True
        assert future.result(timeout=1) is None
        again = store.start_ttl_sweeper(0.01)
        again.cancel()  # cancelling the future stops the sweeper, as in LangGraph
        assert store.stop_ttl_sweeper(timeout=5) is True
        with pytest.raises(ConfigurationError, match="number of minutes"):
            store.start_ttl_sweeper("5")  # type: ignore[arg-type]
