"""Stored vectors: contextual memories embed twice (mean of unit vectors), inner-product search,
and the upgrade of a pgvector schema from cosine to inner product (migration 11)."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator

import numpy as np
import psycopg
import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp

from langgraph_recall.errors import ConfigurationError
from langgraph_recall.store._vector_cache import decode_vector, memory_vector
from langgraph_recall.store.postgres import PostgresMemoryStore
from langgraph_recall.store.postgres._float4_array import Float4Array
from langgraph_recall.store.postgres._migrations import IP_INDEX, MIGRATIONS
from tests.fakes import HashingEmbeddings
from tests.integration.store.conftest import DIMS, Driver, open_store

pytestmark = pytest.mark.postgres

CONTEXT = "Caroline: do you still go swimming with the kids?"
CONTENT = "Melanie: yes, every Sunday at the lake"


def _stored_vector(dsn: str, backend: str, key: str) -> np.ndarray:
    column = "embedding::text" if backend == "pgvector" else "embedding"
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            f"SELECT {column} FROM lgm_memory_items WHERE key = %s", (key,)
        ).fetchone()
    assert row is not None
    if backend == "pgvector":
        return np.array([float(x) for x in row[0].strip("[]").split(",")], dtype=np.float32)
    return decode_vector(bytes(row[0]))


@contextlib.asynccontextmanager
async def _hashing_store(
    dsn: str, flavour: str, backend: str
) -> AsyncIterator[tuple[Driver, HashingEmbeddings]]:
    """Our store on ``dsn`` with the hashing embedder the test recomputes vectors with."""
    embedder = HashingEmbeddings(DIMS)
    async with open_store(dsn, flavour, index={"dims": DIMS, "embed": embedder}) as store:
        yield Driver(store, flavour, backend, dsn), embedder


async def test_contextual_memory_stores_the_mean_of_its_two_unit_vectors(
    dsn: str, flavour: str, backend: str
) -> None:
    async with _hashing_store(dsn, flavour, backend) as (ours, embedder):
        value = {"content": CONTENT, "context": CONTEXT}
        await ours("put", ("m", "u"), "with-context", value, index=["context", "content"])
        await ours("put", ("m", "u"), "plain", {"content": CONTENT})
        whole, alone = embedder.embed_documents([f"{CONTEXT}\n{CONTENT}", CONTENT])
        expected = memory_vector([whole, alone])
        np.testing.assert_allclose(
            _stored_vector(dsn, backend, "with-context"), expected, atol=1e-6
        )
        plain = _stored_vector(dsn, backend, "plain")
        np.testing.assert_allclose(plain, memory_vector([alone]), atol=1e-6)
        assert float(np.linalg.norm(plain)) == pytest.approx(1.0, abs=1e-6)
        # the context makes the memory findable by words only the context holds
        hits = await ours("search", ("m", "u"), query="swimming kids", limit=2)
        assert [hit.key for hit in hits] == ["with-context", "plain"]


async def test_upgrade_normalises_legacy_vectors_and_swaps_the_hnsw_index(
    embedded_dsn: str,
) -> None:
    names = [step.__name__ for step in MIGRATIONS]
    version = names.index("_inner_product_vectors")
    async with open_store(embedded_dsn, "sync") as store:
        store.put(("m", "u"), "a", {"content": "the lake house in Sweden"})
        store.put(("m", "u"), "b", {"content": "a pottery class on Sunday"})
    # roll the schema back to before the migration: cosine index, unnormalised vectors
    with psycopg.connect(embedded_dsn, autocommit=True) as conn:
        conn.execute(f"DROP INDEX {IP_INDEX}")
        conn.execute(
            "CREATE INDEX lgm_memory_items_hnsw ON lgm_memory_items "
            "USING hnsw (embedding vector_cosine_ops)"
        )
        conn.execute("UPDATE lgm_memory_items SET embedding = embedding + embedding")
        conn.execute("DELETE FROM lgm_store_migrations WHERE v = %s", (version,))
    async with open_store(embedded_dsn, "sync") as store:
        assert store.setup_report is not None and store.setup_report.applied == (version,)
        hits = store.search(("m", "u"), query="lake house", limit=1)
        assert [hit.key for hit in hits] == ["a"]
    with psycopg.connect(embedded_dsn) as conn:
        indexes = {
            row[0]
            for row in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'lgm_memory_items'"
            )
        }
        norms = [
            row[0] for row in conn.execute("SELECT vector_norm(embedding) FROM lgm_memory_items")
        ]
    assert IP_INDEX in indexes and "lgm_memory_items_hnsw" not in indexes
    assert norms and all(n == pytest.approx(1.0, abs=1e-5) for n in norms)


def test_float4_arrays_travel_in_binary_and_arrive_exact(postgres_dsn: str) -> None:
    values = np.array([[0.1, -2.5e-8, 3.4e38], [1.0, 0.0, -1.0]], dtype=np.float32)
    with psycopg.connect(postgres_dsn) as conn:
        row = conn.execute(
            "SELECT %(v)s::real[] AS v, %(e)s::real[] AS e",
            {"v": Float4Array(values), "e": Float4Array(np.zeros(0))},
        ).fetchone()
    assert row is not None
    assert np.array(row[0], dtype=np.float32).tolist() == values.ravel().tolist()
    assert row[1] == []


async def test_each_item_of_a_batch_gets_its_own_vector(
    dsn: str, flavour: str, backend: str
) -> None:
    """Vectors travel as one parameter; items without an index take no slot of it."""
    async with _hashing_store(dsn, flavour, backend) as (ours, embedder):
        await ours(
            "batch",
            [
                PutOp(("m", "u"), "a", {"content": "alpha lives in Lisbon"}),
                PutOp(("m", "u"), "b", {"content": "beta is not indexed"}, index=False),
                PutOp(
                    ("m", "u"),
                    "c",
                    {"content": CONTENT, "context": CONTEXT},
                    ["context", "content"],
                ),
                PutOp(("m", "u"), "d", {"content": "delta plays chess"}),
            ],
        )
        alpha, delta, whole, alone = embedder.embed_documents(
            ["alpha lives in Lisbon", "delta plays chess", f"{CONTEXT}\n{CONTENT}", CONTENT]
        )
        np.testing.assert_allclose(
            _stored_vector(dsn, backend, "a"), memory_vector([alpha]), atol=1e-6
        )
        np.testing.assert_allclose(
            _stored_vector(dsn, backend, "c"), memory_vector([whole, alone]), atol=1e-6
        )
        np.testing.assert_allclose(
            _stored_vector(dsn, backend, "d"), memory_vector([delta]), atol=1e-6
        )
        with psycopg.connect(dsn) as conn:
            row = conn.execute("SELECT embedding FROM lgm_memory_items WHERE key = 'b'").fetchone()
        assert row == (None,)


class _SameVector(HashingEmbeddings):
    """Every text gets the same vector: only the lexical signal can order the results."""

    def _embed(self, text: str) -> list[float]:
        return [1.0] + [0.0] * (self.dims - 1)


async def test_a_word_too_common_for_the_lexical_budget_still_ranks_the_vector_candidates(
    dsn: str, flavour: str, backend: str
) -> None:
    """Above ``lexical_budget`` a word picks no candidates itself, yet BM25 scores it."""
    index = {"dims": DIMS, "embed": _SameVector(DIMS)}
    async with open_store(dsn, flavour, index=index, lexical_budget=2) as store:
        ours = Driver(store, flavour, backend, dsn)
        texts = {
            "none-1": "tea with lemon",
            "most": "coffee coffee coffee",
            "trip": "a trip to Lisbon",
            "some": "coffee with milk in the morning at the office",
            "none-2": "a walk in the park",
            "once": "coffee before the long meeting with the whole team about budgets",
        }
        for key, text in texts.items():
            await ours("put", ("m", "u"), key, {"content": text})
        # "lisbon" (1 document) fits the budget of 2, "coffee" (3 more) does not
        hits = await ours("search", ("m", "u"), query="Lisbon coffee", limit=6)
        assert [hit.key for hit in hits][:4] == ["trip", "most", "some", "once"]
        assert {hit.key for hit in hits[4:]} == {"none-1", "none-2"}
        assert hits[3].score is not None and hits[4].score is not None
        assert hits[3].score > hits[4].score


def _out_of_line(dsn: str, dims: int) -> int:
    """Values of at least ``dims`` float4s the items table keeps out of line (in its TOAST
    table): embeddings, the only values of that size here."""
    with psycopg.connect(dsn) as conn:
        toast = conn.execute(
            "SELECT reltoastrelid::regclass::text FROM pg_class WHERE relname = 'lgm_memory_items'"
        ).fetchone()
        assert toast is not None
        row = conn.execute(
            f"SELECT count(*) FROM (SELECT chunk_id FROM {toast[0]} GROUP BY chunk_id "
            "HAVING sum(length(chunk_data)) >= %s) v",
            (4 * dims,),
        ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("dims", [384, 1536])
def test_embeddings_stay_in_their_row_where_they_fit(dsn: str, backend: str, dims: int) -> None:
    """A scope scan reads every embedding of the scope: none may cost a TOAST lookup. Rows
    written while embeddings were kept out of line come back in with ``VACUUM FULL``."""
    embedder = HashingEmbeddings(dims)
    with PostgresMemoryStore.from_conn_string(
        dsn, index={"dims": dims, "embed": embedder}
    ) as store:
        store.setup()
        store.batch(
            [PutOp(("m", "u"), f"k{i}", {"content": f"memory {i} of the lake"}) for i in range(20)]
        )
        assert _out_of_line(dsn, dims) == 0
        assert store.search(("m", "u"), query="memory 7 of the lake")[0].key == "k7"
        with psycopg.connect(dsn, autocommit=True) as conn:  # a row written by an older version
            conn.execute("ALTER TABLE lgm_memory_items ALTER COLUMN embedding SET STORAGE EXTERNAL")
        # a row over the 2 KB at which Postgres starts moving values out
        long = " ".join(f"written before the upgrade, note {i} on lake {i * 7}" for i in range(12))
        store.put(("m", "u"), "old", {"content": long})
        assert _out_of_line(dsn, dims) > 0
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("ALTER TABLE lgm_memory_items ALTER COLUMN embedding SET STORAGE MAIN")
            conn.execute("VACUUM FULL lgm_memory_items")
        assert _out_of_line(dsn, dims) == 0
        assert store.search(("m", "u"), query=long)[0].key == "old"


class _DenseEmbeddings(Embeddings):
    """Dense pseudo-random unit vectors (incompressible), one per text."""

    def __init__(self, dims: int) -> None:
        self.dims = dims

    def _vector(self, text: str) -> list[float]:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
        vector = np.random.default_rng(seed).standard_normal(self.dims)
        return [float(x) for x in vector / np.linalg.norm(vector)]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def test_an_embedding_larger_than_a_page_still_moves_out(postgres_dsn: str) -> None:
    # 12 KB of incompressible float4: no row of a page can hold it
    index = {"dims": 3072, "embed": _DenseEmbeddings(3072)}
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=index) as store:
        store.setup()
        store.put(("m", "u"), "big", {"content": "a memory with a very wide vector"})
        store.put(("m", "u"), "other", {"content": "something else entirely"})
        assert _out_of_line(postgres_dsn, 3072) > 0
        assert store.search(("m", "u"), query="a memory with a very wide vector")[0].key == "big"


def test_an_index_pgvector_cannot_build_is_refused_before_any_migration(embedded_dsn: str) -> None:
    index = {"dims": 3072, "embed": _DenseEmbeddings(3072)}
    with (
        PostgresMemoryStore.from_conn_string(embedded_dsn, index=index) as store,
        pytest.raises(ConfigurationError, match=r"at most 2,000 dimensions.*halfvec"),
    ):
        store.setup()
    with psycopg.connect(embedded_dsn) as conn:
        assert conn.execute("SELECT to_regclass('lgm_memory_items')").fetchone() == (None,)
    halfvec = {**index, "ann_index_config": {"vector_type": "halfvec"}}
    with PostgresMemoryStore.from_conn_string(embedded_dsn, index=halfvec) as store:
        store.setup()
        store.put(("m", "u"), "wide", {"content": "a memory with a very wide vector"})
        assert store.search(("m", "u"), query="a memory with a very wide vector")[0].key == "wide"
