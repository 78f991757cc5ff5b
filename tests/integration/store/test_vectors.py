"""Stored vectors: contextual memories embed twice (mean of unit vectors), inner-product search,
and the upgrade of a pgvector schema from cosine to inner product (migration 11)."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest

from langgraph_memory.store.postgres._exact import decode_vector, memory_vector
from langgraph_memory.store.postgres._migrations import IP_INDEX, MIGRATIONS
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


async def test_contextual_memory_stores_the_mean_of_its_two_unit_vectors(
    dsn: str, flavour: str, backend: str
) -> None:
    embedder = HashingEmbeddings(DIMS)
    async with open_store(dsn, flavour, index={"dims": DIMS, "embed": embedder}) as store:
        ours = Driver(store, flavour, backend, dsn)
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
    version = len(MIGRATIONS) - 1
    assert MIGRATIONS[version].__name__ == "_inner_product_vectors"
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
