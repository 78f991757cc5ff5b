"""Fixtures for the Postgres saver tests: a set-up saver per test on a fresh database."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver


@pytest.fixture
def saver(postgres_dsn: str) -> Iterator[PostgresSaver]:
    """A set-up sync saver on a fresh database (pooled)."""
    with PostgresSaver.from_conn_string(postgres_dsn) as pg_saver:
        pg_saver.setup()
        yield pg_saver


@pytest.fixture
async def async_saver(postgres_dsn: str) -> AsyncIterator[AsyncPostgresSaver]:
    """A set-up async saver on a fresh database (pooled)."""
    async with AsyncPostgresSaver.from_conn_string(postgres_dsn) as pg_saver:
        await pg_saver.setup()
        yield pg_saver
