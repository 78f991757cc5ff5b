"""``setup()`` as LangGraph's async store has it, and sweeper intervals checked at the door.

``await store.setup()`` works on ``AsyncPostgresMemoryStore`` (LangGraph's
``AsyncPostgresStore.setup`` is a coroutine), ``store.setup()`` from another thread still
blocks and returns the report; a bad ``sweep_interval_minutes`` is a ``ConfigurationError``
when the store is built (TTL config) or the sweeper is started — never a sweeper that
dies or spins later. A ``halfvec`` store on pgvector keeps float2 embeddings and finds them.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from langgraph_recall.errors import ConfigurationError
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from tests.integration.store.conftest import index_config

INDEX: Any = index_config()
BAD_INTERVALS: list[Any] = [0, -1, math.nan, math.inf, "5", True, [1]]


async def test_await_setup_on_the_async_store(postgres_dsn: str) -> None:
    async with AsyncPostgresMemoryStore.from_conn_string(postgres_dsn, index=INDEX) as store:
        report = await store.setup()
        assert report.vector_mode == "exact"
        again = await asyncio.to_thread(store.setup)  # from a thread: blocks, same report type
        assert again.applied == () and again.vector_mode == "exact"
        await store.aput(("s",), "k", {"content": "after await setup()"})
        assert (await store.aget(("s",), "k")) is not None


@pytest.mark.parametrize("interval", BAD_INTERVALS)
def test_a_bad_sweep_interval_is_a_configuration_error(postgres_dsn: str, interval: Any) -> None:
    bad: Any = {"default_ttl": 1, "sweep_interval_minutes": interval}
    with (
        pytest.raises(ConfigurationError, match="sweep interval"),
        PostgresMemoryStore.from_conn_string(postgres_dsn, index=INDEX, ttl=bad),
    ):
        pass
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=INDEX) as store:
        with pytest.raises(ConfigurationError, match="sweep interval"):
            store.start_ttl_sweeper(interval)
        assert store.stop_ttl_sweeper(timeout=1)


@pytest.mark.parametrize("interval", BAD_INTERVALS)
async def test_a_bad_sweep_interval_is_a_configuration_error_async(
    postgres_dsn: str, interval: Any
) -> None:
    conn = await psycopg.AsyncConnection.connect(
        postgres_dsn, autocommit=True, row_factory=dict_row
    )
    try:
        with pytest.raises(ConfigurationError, match="sweep interval"):
            AsyncPostgresMemoryStore(
                conn, index=INDEX, ttl={"default_ttl": 1, "sweep_interval_minutes": interval}
            )
    finally:
        await conn.close()
    async with AsyncPostgresMemoryStore.from_conn_string(postgres_dsn, index=INDEX) as store:
        with pytest.raises(ConfigurationError, match="sweep interval"):
            await store.start_ttl_sweeper(interval)
        assert await store.stop_ttl_sweeper(timeout=1)


def test_halfvec_keeps_float2_embeddings_and_finds_them(embedded_dsn: str) -> None:
    index: Any = {**INDEX, "ann_index_config": {"vector_type": "halfvec"}}
    with PostgresMemoryStore.from_conn_string(embedded_dsn, index=index) as store:
        assert store.setup().vector_mode == "pgvector"
        store.put(("h",), "tea", {"content": "likes green tea"})
        store.put(("h",), "lyon", {"content": "lives in Lyon"})
        hits = store.search(("h",), query="green tea", limit=1)
        assert [hit.key for hit in hits] == ["tea"]
    with psycopg.connect(embedded_dsn) as conn:
        row = conn.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = 'lgm_memory_items'::regclass AND attname = 'embedding'"
        ).fetchone()
        assert row is not None and row[0].startswith("halfvec(")
        opclasses = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'lgm_memory_items' "
            "AND indexdef LIKE '%hnsw%'"
        ).fetchall()
        assert opclasses and all("halfvec_ip_ops" in r[0] for r in opclasses)
    other: Any = {**INDEX, "ann_index_config": {"vector_type": "vector"}}
    with (
        PostgresMemoryStore.from_conn_string(embedded_dsn, index=other) as store,
        pytest.raises(ConfigurationError, match="halfvec"),
    ):
        store.setup()
    with PostgresMemoryStore.from_conn_string(embedded_dsn, index=INDEX) as store:  # default
        store.setup()
        assert store.vector_type == "halfvec"  # the database's type is adopted
        assert [h.key for h in store.search(("h",), query="Lyon", limit=1)] == ["lyon"]
