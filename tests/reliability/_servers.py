"""Test-owned servers and database probes for the reliability suite.

* :class:`OwnedRedis` — a private ``redis-server`` (or the binary named by
  ``$LANGGRAPH_RECALL_TEST_REDIS_SERVER``, e.g. Valkey's) on a free port with its own
  data directory, ``--appendonly yes --appendfsync always`` (every acknowledged write is
  on disk before the reply) or, with ``persistence="rdb"``, Redis' default persistence
  (snapshots only: :meth:`OwnedRedis.snapshot`), optionally a replica of another server;
  a test may SIGKILL, SIGSTOP and restart it on the same port. The shared server on 6379
  is never touched. Replica pairs and Postgres clusters are in
  :mod:`tests.reliability._clusters`.
* :class:`TcpProxy` / :class:`FreezingProxy` — a forwarder that can cut every connection,
  or hold every byte (a replication link that lags).
* :func:`terminate_backends` — ``pg_terminate_backend`` for every backend of ONE
  database (the test's own), from an admin session on another database.
* :func:`table_snapshot` / :func:`rows_containing` — a full text dump of every user
  table (to prove a failed call changed nothing) and a scan of every table and column for
  a marker string (to prove erasure left no residue).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

__all__ = [
    "REDIS_SERVER_ENV",
    "BackendKiller",
    "FreezingProxy",
    "OwnedRedis",
    "TcpProxy",
    "admin_dsn_for",
    "free_port",
    "redis_server_binary",
    "residue",
    "rows_containing",
    "stats_containing",
    "table_snapshot",
    "terminate_backends",
]


REDIS_SERVER_ENV = "LANGGRAPH_RECALL_TEST_REDIS_SERVER"
"""Names the Redis-compatible server binary the tests start (default ``redis-server``;
CI sets it to Valkey's ``valkey-server`` for a second run of the Redis tests)."""


def redis_server_binary() -> str:
    """The server binary test-owned servers run (:data:`REDIS_SERVER_ENV`)."""
    return os.environ.get(REDIS_SERVER_ENV) or "redis-server"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class OwnedRedis:
    """A private, durable ``redis-server`` that tests may kill with SIGKILL and restart.

    Example:
        ```python
        with OwnedRedis.running() as server:
            server.kill()       # SIGKILL: no shutdown, no final fsync
            server.start()      # same port, same AOF: acknowledged writes are back
        ```
    """

    def __init__(
        self,
        workdir: Path,
        port: int | None = None,
        *,
        durable: bool = True,
        persistence: str | None = None,
        replica_of: tuple[str, int] | None = None,
    ) -> None:
        """``persistence``: ``"aof"`` (default when ``durable``), ``"rdb"`` (snapshots
        only, taken by :meth:`snapshot`: what Redis does by default, minus the timer) or
        ``"none"``; ``replica_of``: the ``(host, port)`` this server replicates."""
        self.workdir = workdir
        self.port = port or free_port()
        self.durable = durable
        self.persistence = persistence or ("aof" if durable else "none")
        if self.persistence not in ("aof", "rdb", "none"):
            raise ValueError(f"unknown persistence {self.persistence!r}")
        self.replica_of = replica_of
        self.process: subprocess.Popen[bytes] | None = None
        self.kills = 0
        self.restarts = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @classmethod
    @contextlib.contextmanager
    def running(
        cls,
        *,
        durable: bool = True,
        persistence: str | None = None,
        replica_of: tuple[str, int] | None = None,
    ) -> Iterator[OwnedRedis]:
        """Start a server in a temporary directory; stop it and delete the directory after
        (``durable=False``: no AOF, for a session's plain test server)."""
        with tempfile.TemporaryDirectory(prefix="lgm-redis-") as workdir:
            server = cls(
                Path(workdir), durable=durable, persistence=persistence, replica_of=replica_of
            )
            server.start()
            try:
                yield server
            finally:
                server.stop()

    def start(self, timeout: float = 10.0) -> None:
        """Start (or restart after :meth:`kill`) on the same port and data directory."""
        if self.process is not None and self.process.poll() is None:
            raise RuntimeError("the owned redis-server is already running")
        if self.process is not None:
            self.restarts += 1
        log = open(self.workdir / "redis.log", "ab")  # noqa: SIM115 - owned by the process
        self.process = subprocess.Popen(
            [
                redis_server_binary(),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.workdir),
                "--appendonly",
                "yes" if self.persistence == "aof" else "no",
                "--appendfsync",
                "always",
                "--save",
                "",
                "--dbfilename",
                "dump.rdb",
                "--daemonize",
                "no",
                "--protected-mode",
                "no",
                *(
                    ["--replicaof", self.replica_of[0], str(self.replica_of[1])]
                    if self.replica_of
                    else []
                ),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        self._wait_ready(timeout)

    def _wait_ready(self, timeout: float) -> None:
        import redis

        deadline = time.monotonic() + timeout
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5, socket_timeout=1.0)
        try:
            while True:
                assert self.process is not None
                if self.process.poll() is not None:
                    raise RuntimeError(
                        f"redis-server exited with {self.process.returncode}; see "
                        f"{self.workdir / 'redis.log'}"
                    )
                try:
                    # while the AOF loads the server answers LOADING errors; wait until done
                    if client.ping() and int(client.info("persistence").get("loading", 0)) == 0:
                        return
                except redis.RedisError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server on port {self.port} did not come up")
                time.sleep(0.02)
        finally:
            client.close()

    def client(self, **options: Any) -> Any:
        """A ``redis.Redis`` on this server (the caller closes it)."""
        import redis

        return redis.Redis(port=self.port, socket_timeout=5.0, **options)

    def snapshot(self, timeout: float = 10.0) -> None:
        """``BGSAVE`` and wait until the snapshot is on disk (what ``save`` does on a timer)."""
        client = self.client()
        try:
            before = int(client.lastsave().timestamp())
            time.sleep(1.05)  # LASTSAVE has a one-second resolution
            client.bgsave()
            deadline = time.monotonic() + timeout
            while True:
                info = client.info("persistence")
                if (
                    not info["rdb_bgsave_in_progress"]
                    and int(client.lastsave().timestamp()) > before
                ):
                    if info["rdb_last_bgsave_status"] != "ok":
                        raise RuntimeError("BGSAVE failed")
                    return
                if time.monotonic() > deadline:
                    raise RuntimeError("BGSAVE did not finish")
                time.sleep(0.02)
        finally:
            client.close()

    def kill(self) -> None:
        """SIGKILL the server (no shutdown handler runs) and reap it."""
        assert self.process is not None and self.process.poll() is None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)
        self.kills += 1

    def stop(self) -> None:
        """Terminate the server if it runs (end of test)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def admin_dsn_for(dsn: str) -> tuple[str, str]:
    """``(admin_dsn, dbname)``: a DSN on the ``postgres`` database of the same server."""
    params = conninfo_to_dict(dsn)
    dbname = str(params["dbname"])
    return make_conninfo(**{**params, "dbname": "postgres"}), dbname  # type: ignore[arg-type]


def terminate_backends(dsn: str) -> int:
    """``pg_terminate_backend`` every backend of ``dsn``'s database; returns how many."""
    admin_dsn, dbname = admin_dsn_for(dsn)
    assert dbname.startswith("lgm_test_"), "only ever terminate backends of a test database"
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (dbname,),
        ).fetchall()
    return sum(1 for (done,) in rows if done)


class BackendKiller:
    """Background thread: terminate every backend of one database every ``every`` seconds.

    Example:
        ```python
        with BackendKiller(dsn, rounds=10, every=0.2) as killer:
            ...  # run the workload
        assert killer.terminated > 0
        ```
    """

    def __init__(self, dsn: str, *, rounds: int, every: float) -> None:
        self.dsn = dsn
        self.rounds = rounds
        self.every = every
        self.terminated = 0
        self.rounds_done = 0
        self.round_times: list[float] = []
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        for _ in range(self.rounds):
            time.sleep(self.every)
            self.terminated += terminate_backends(self.dsn)
            self.round_times.append(time.monotonic())
            self.rounds_done += 1

    def __enter__(self) -> BackendKiller:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._thread.join(60)

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()


def user_tables(conn: psycopg.Connection[Any]) -> list[tuple[str, str]]:
    """Every ordinary table outside the system schemas as ``(schema, name)``."""
    rows = conn.execute(
        "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relkind IN ('r', 'p', 'm') "
        "AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') "
        "ORDER BY 1, 2"
    ).fetchall()
    return [(str(schema), str(name)) for schema, name in rows]


def table_snapshot(dsn: str, *, ignore_columns: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Every row of every user table as sorted JSON text (``ignore_columns`` dropped).

    Two equal snapshots mean nothing was written in between (counters like access
    counts can be ignored by name).
    """
    snapshot: dict[str, Any] = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        for schema, name in user_tables(conn):
            table = sql.Identifier(schema, name)
            rows = conn.execute(
                sql.SQL("SELECT to_jsonb(t) AS r FROM {} t").format(table)
            ).fetchall()
            cleaned = []
            for (row,) in rows:
                for column in ignore_columns:
                    row.pop(column, None)
                cleaned.append(repr(sorted(row.items())))
            snapshot[f"{schema}.{name}"] = sorted(cleaned)
    return snapshot


def rows_containing(dsn: str, marker: str) -> dict[str, int]:
    """Rows of every user table whose text form contains ``marker`` (case-insensitive).

    The whole row is cast to text, so every column — JSONB values, history, ``tsvector``
    lexemes, derived tables — is scanned. Returns ``{table: count}`` for tables with hits.
    """
    hits: dict[str, int] = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        for schema, name in user_tables(conn):
            table = sql.Identifier(schema, name)
            count = conn.execute(
                sql.SQL(
                    "SELECT count(*) FROM {} t WHERE strpos(lower(t::text), lower(%s)) > 0"
                ).format(table),
                (marker,),
            ).fetchone()
            if count and count[0]:
                hits[f"{schema}.{name}"] = int(count[0])
    return hits


def stats_containing(dsn: str, marker: str) -> dict[str, int]:
    """Planner statistics (``pg_stats``: most common values and elements, histogram bounds)
    of every user table that quote ``marker`` (case-insensitive), as ``{table.column: 1}``.

    ``ANALYZE`` copies sampled values into ``pg_statistic``; rows deleted since stay quoted
    there until the next ``ANALYZE`` of the table. A ``bytea`` value (checkpoint blobs) is
    quoted in hex, so the marker's UTF-8 hex counts too.
    """
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT schemaname, tablename, attname FROM pg_stats, LATERAL (SELECT lower("
            "concat_ws(' ', most_common_vals::text, histogram_bounds::text, "
            "most_common_elems::text)) AS quoted) q "
            "WHERE schemaname NOT IN ('pg_catalog', 'information_schema') AND ("
            "strpos(quoted, lower(%s)) > 0 OR strpos(quoted, %s) > 0)",
            (marker, marker.encode().hex()),
        ).fetchall()
    return {f"{schema}.{table}.{column}": 1 for schema, table, column in rows}


def residue(dsn: str, marker: str) -> dict[str, int]:
    """Rows of any table and planner statistics still holding ``marker`` (empty: none)."""
    return {**rows_containing(dsn, marker), **stats_containing(dsn, marker)}


def environment_flag(name: str) -> bool:
    """True when the environment variable ``name`` is set to a truthy value."""
    value = os.environ.get(name, "")
    return bool(value) and value.lower() not in {"0", "false", "no"}


class TcpProxy:
    """A test-owned TCP forwarder in front of a shared server, to simulate its outage.

    :meth:`cut` drops every proxied connection and stops listening (new connections are
    refused, as when the server is down); :meth:`restore` listens again on the same port.
    The server behind it is never touched.

    Example:
        ```python
        with TcpProxy.running(("127.0.0.1", 5432)) as proxy:
            dsn = f"postgresql://postgres@127.0.0.1:{proxy.port}/db"
            proxy.cut()
            proxy.restore()
        ```
    """

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.port = free_port()
        self.cuts = 0
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()

    @classmethod
    @contextlib.contextmanager
    def running(cls, upstream: tuple[str, int]) -> Iterator[TcpProxy]:
        proxy = cls(upstream)
        proxy.restore()
        try:
            yield proxy
        finally:
            proxy.cut()

    def restore(self) -> None:
        """Listen (again) on :attr:`port` and forward new connections upstream."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        """Refuse new connections and reset every open one."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
            self.cuts += 1
        with self._lock:
            doomed, self._sockets = self._sockets, set()
        for sock in doomed:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream, timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._listener is not listener:  # cut meanwhile
                    client.close()
                    server.close()
                    return
                self._sockets.update((client, server))
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _before_forward(self) -> None:
        """Called before each chunk is forwarded (a subclass may hold it there)."""

    @property
    def address(self) -> tuple[str, int]:
        """Where clients connect: ``("127.0.0.1", port)``."""
        return ("127.0.0.1", self.port)

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                self._before_forward()
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


class FreezingProxy(TcpProxy):
    """:class:`TcpProxy` that can hold every byte (:meth:`freeze`) until :meth:`thaw`.

    In front of a replication link it makes a replica lag: the primary acknowledges writes
    the replica never receives. ``freeze``, then :meth:`cut` (drop what is held) and
    ``thaw`` loses them for good -- an asynchronous replica's lag window at a failover.
    """

    def __init__(self, upstream: tuple[str, int]) -> None:
        super().__init__(upstream)
        self.thawed = threading.Event()
        self.thawed.set()

    def freeze(self) -> None:
        """Hold every byte from now on."""
        self.thawed.clear()

    def thaw(self) -> None:
        """Forward again (whatever is still held on live connections goes through)."""
        self.thawed.set()

    def _before_forward(self) -> None:
        self.thawed.wait()
