"""Fixtures for node integration tests: our PostgresMemoryStore (sync and async) on a fresh
database of the real Postgres server, with the deterministic hashing embedder."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from tests.fakes import HashingEmbeddings


def index_config() -> dict[str, Any]:
    return {"dims": 64, "embed": HashingEmbeddings(64)}


@pytest.fixture
def memory_store(postgres_dsn: str) -> Iterator[PostgresMemoryStore]:
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=index_config()) as store:
        store.setup()
        yield store


@pytest.fixture
async def amemory_store(postgres_dsn: str) -> AsyncIterator[AsyncPostgresMemoryStore]:
    async with AsyncPostgresMemoryStore.from_conn_string(
        postgres_dsn, index=index_config()
    ) as store:
        await store.asetup()
        yield store
