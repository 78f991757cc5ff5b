"""The embedded Postgres: reused across processes, pgvector available, env DSN preferred."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from langgraph_recall.embedded import ENV_DSN, SERVER_SETTINGS, EmbeddedPostgres, default_dsn

pytestmark = pytest.mark.embedded


def test_second_process_reuses_the_running_server(embedded_server: EmbeddedPostgres) -> None:
    code = (
        "import sys; from langgraph_recall.embedded import EmbeddedPostgres; "
        "server = EmbeddedPostgres(sys.argv[1]); print(server.start()); server.stop()"
    )
    # as in a container: no XDG_RUNTIME_DIR, and a warning would be an error (platformdirs
    # warned about it on every start, printed to every user of the embedded server)
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    result = subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-c", code, str(embedded_server.home)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=env,
    )
    assert result.stdout.strip().splitlines()[-1] == embedded_server.dsn()
    assert "Warning" not in result.stderr
    # the other process released its handle; ours keeps the server up
    with psycopg.connect(embedded_server.dsn(), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        row = conn.execute("SELECT '[1,0]'::vector <=> '[0,1]'::vector").fetchone()
        assert row is not None and row[0] == pytest.approx(1.0)


def test_default_dsn_prefers_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_DSN, "postgresql://someone@db.example:6543/app")
    assert default_dsn() == "postgresql://someone@db.example:6543/app"


def test_from_conn_string_without_dsn_uses_the_configured_default(
    embedded_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langgraph_recall.store.postgres import PostgresMemoryStore
    from tests.integration.store.conftest import index_config

    monkeypatch.setenv(ENV_DSN, embedded_dsn)
    with PostgresMemoryStore.from_conn_string(None, index=index_config()) as store:  # type: ignore[arg-type]
        report = store.setup()
        assert report.vector_mode == "pgvector" and report.pgvector_version
        assert report.applied == tuple(range(report.schema_version))
        assert store.setup().applied == ()


def test_a_new_data_directory_runs_with_the_server_settings(tmp_path: Path) -> None:
    # shared_buffers needs a restart: a fresh server restarts once after initdb
    with EmbeddedPostgres(tmp_path) as server, psycopg.connect(server.dsn()) as conn:
        for name, value in SERVER_SETTINGS.items():
            row = conn.execute("SELECT current_setting(%s)", (name,)).fetchone()
            assert row is not None and row[0] == value
