"""Fixtures of the reliability suite: a test-owned Redis, a store on the test database,
and the figures recorder behind ``bench/reliability_report.py``.

Figures: tests call ``figures.add("redis_kills", 3)`` / ``figures.put(...)``; when the
environment variable ``LGM_RELIABILITY_FIGURES`` names a file, the session writes them
there as JSON at the end (the report script reads it). Otherwise nothing is written.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langgraph_recall.store.postgres import PostgresMemoryStore
from tests.conftest import service_missing
from tests.fakes import HashingEmbeddings
from tests.reliability._figures import FIGURES_ENV, Figures
from tests.reliability._servers import OwnedRedis, redis_server_binary

DIMS = 32


_FIGURES = Figures()


@pytest.fixture(scope="session")
def figures() -> Iterator[Figures]:
    """The session's figures; written to ``$LGM_RELIABILITY_FIGURES`` at the end."""
    yield _FIGURES
    target = os.environ.get(FIGURES_ENV)
    if target:
        Path(target).write_text(json.dumps(_FIGURES.values, indent=2, sort_keys=True))


def index_config() -> dict[str, Any]:
    return {"dims": DIMS, "embed": HashingEmbeddings(DIMS)}


@pytest.fixture
def owned_redis() -> Iterator[OwnedRedis]:
    """A private durable redis-server (AOF, fsync always) this test may kill."""
    if shutil.which(redis_server_binary()) is None:
        service_missing("redis-server binary", FileNotFoundError(redis_server_binary()))
    try:
        context = OwnedRedis.running()
        server = context.__enter__()
    except Exception as exc:
        service_missing("a test-owned redis-server", exc)
        raise
    try:
        yield server
    finally:
        context.__exit__(None, None, None)


@pytest.fixture
def store(postgres_dsn: str) -> Iterator[PostgresMemoryStore]:
    """Our store (exact vector mode: the shared PG 15) on the test's fresh database."""
    with PostgresMemoryStore.from_conn_string(
        postgres_dsn, index=index_config(), pool_config={"max_size": 4}
    ) as opened:
        opened.setup()
        yield opened


@pytest.fixture(params=["exact", "pgvector"])
def any_dsn(request: pytest.FixtureRequest) -> str:
    """A fresh database on PG 15 without pgvector (``exact``) or embedded PG 18 + pgvector."""
    fixture = "postgres_dsn" if request.param == "exact" else "embedded_dsn"
    return str(request.getfixturevalue(fixture))


@pytest.fixture
def any_store(any_dsn: str) -> Iterator[PostgresMemoryStore]:
    """Our store on ``any_dsn`` (both vector paths), set up, with entity links written (so
    the erasure and isolation checks cover their table too)."""
    with PostgresMemoryStore.from_conn_string(
        any_dsn, index=index_config(), pool_config={"max_size": 4}, link_entities=True
    ) as opened:
        opened.setup()
        yield opened
