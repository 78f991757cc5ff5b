"""Test-built replication clusters: a Postgres 15 primary + streaming standby, and a Redis
primary + replica, each on free ports in a private temporary directory, no Docker.

* :class:`OwnedPostgres` — one Postgres server from the distribution's binaries
  (``$LANGGRAPH_RECALL_TEST_PG_BIN``, default Debian's ``/usr/lib/postgresql/15/bin``),
  run as the ``postgres`` OS user when the tests run as root (Postgres refuses root):
  ``initdb``, start, stop (``immediate`` = a crash), ``pg_basebackup`` a standby, promote.
* :class:`PostgresPair` — primary + hot standby streaming through a :class:`FreezingProxy`
  (so the standby can be made to lag: the primary acknowledges commits the standby never
  receives; pausing replay with ``pg_wal_replay_pause()`` or ``recovery_min_apply_delay``
  would not do: a promotion replays every WAL record the standby has received),
  synchronous (``synchronous_standby_names``) or asynchronous. :meth:`fail_over` crashes
  the primary, drops what the link still holds when the standby lags, and promotes
  the standby; :attr:`dsn` is a libpq multi-host DSN (``target_session_attrs=read-write``),
  what a deployment behind a failover manager uses.
* :class:`RedisPair` — primary + replica (:class:`OwnedRedis`) linked through a proxy in
  the same way; :meth:`fail_over` kills the primary and promotes the replica
  (``REPLICAOF NO ONE``, what Sentinel does).
* :class:`OwnedSentinel` — a Redis Sentinel watching a :class:`RedisPair`, which fails it
  over by itself once the primary dies (down after 500 ms, quorum 1).
* :class:`OwnedPgBouncer` — PgBouncer (Debian's package) in transaction mode in front of a
  Postgres server, as deployments run it.

Later HA tests (pool hygiene, replicas, Sentinel, durability) build on these.

Example:
    ```python
    with PostgresPair.running(synchronous=False) as pair:
        pair.lag()               # the standby stops receiving WAL
        ...                      # commits acknowledged by the primary only
        promoted_at = pair.fail_over()
    ```
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.reliability._servers import FreezingProxy, OwnedRedis, free_port, redis_server_binary

__all__ = [
    "PG_BIN_ENV",
    "OwnedPgBouncer",
    "OwnedPostgres",
    "OwnedSentinel",
    "PostgresPair",
    "RedisPair",
    "pg_binaries",
    "require_cluster_binaries",
]

PG_BIN_ENV = "LANGGRAPH_RECALL_TEST_PG_BIN"
"""Directory of the Postgres server binaries the cluster tests run (default Debian's PG 15)."""

_DEFAULT_PG_BIN = "/usr/lib/postgresql/15/bin"


def pg_binaries() -> Path:
    """The directory holding ``initdb``, ``pg_ctl`` and ``pg_basebackup``."""
    return Path(os.environ.get(PG_BIN_ENV) or _DEFAULT_PG_BIN)


def require_cluster_binaries(kind: str) -> None:
    """Fail (never skip: CI provides them) when the binaries a cluster needs are missing."""
    if kind == "postgres":
        missing = [
            b for b in ("initdb", "pg_ctl", "pg_basebackup") if not (pg_binaries() / b).exists()
        ]
        if missing:
            pytest.fail(
                f"Postgres binaries {missing} not found in {pg_binaries()} (set ${PG_BIN_ENV})"
            )
    elif shutil.which(redis_server_binary()) is None:
        pytest.fail(f"{redis_server_binary()} not found on PATH")


def _as_postgres(args: list[str]) -> list[str]:
    """``args`` run as the ``postgres`` OS user when we are root (Postgres refuses root)."""
    if os.geteuid() != 0:
        return args
    return ["runuser", "-u", "postgres", "--", *args]


def _give_to_postgres(path: Path) -> None:
    if os.geteuid() == 0:
        entry = pwd.getpwnam("postgres")
        os.chown(path, entry.pw_uid, entry.pw_gid)


class OwnedPostgres:
    """One test-owned Postgres server (data directory under ``workdir``)."""

    def __init__(self, workdir: Path, name: str, port: int | None = None) -> None:
        self.workdir = workdir
        self.name = name
        self.port = port or free_port()
        self.datadir = workdir / name
        self.log = workdir / f"{name}.log"

    @classmethod
    @contextlib.contextmanager
    def running(cls, dbname: str = "lgm_owned") -> Iterator[OwnedPostgres]:
        """One server (no standby) in a private temporary directory, with ``dbname``."""
        require_cluster_binaries("postgres")
        workdir = Path(tempfile.mkdtemp(prefix="lgm-pg-"))
        _give_to_postgres(workdir)
        server = cls(workdir, "server")
        try:
            server.initdb()
            server.start()
            server.execute(f"CREATE DATABASE {dbname}")
            yield server
        finally:
            server.stop("immediate")
            shutil.rmtree(workdir, ignore_errors=True)

    def dsn(self, dbname: str = "postgres") -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={dbname}"

    def _run(self, *args: str, timeout: float = 120.0) -> str:
        done = subprocess.run(
            _as_postgres([str(pg_binaries() / args[0]), *args[1:]]),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.workdir,
        )
        if done.returncode != 0:
            log = self.log.read_text()[-3000:] if self.log.exists() else ""
            raise RuntimeError(f"{args[0]} failed: {done.stderr or done.stdout}\n{log}")
        return done.stdout

    def initdb(self, **settings: Any) -> None:
        """Create the cluster: trust auth on 127.0.0.1 (replication too), WAL for standbys."""
        self._run(
            "initdb",
            "-D",
            str(self.datadir),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        )
        conf = {
            "listen_addresses": "'127.0.0.1'",
            "unix_socket_directories": f"'{self.workdir}'",
            "wal_level": "replica",
            "max_wal_senders": 8,
            "hot_standby": "on",
            "fsync": "off",  # a crash here is the server's, not the machine's
            "shared_buffers": "'32MB'",
            "max_connections": 60,
            "wal_receiver_status_interval": "'100ms'",
            **settings,
        }
        with open(self.datadir / "postgresql.conf", "a") as handle:
            handle.writelines(f"{key} = {value}\n" for key, value in conf.items())
        with open(self.datadir / "pg_hba.conf", "a") as handle:
            handle.write("host replication all 127.0.0.1/32 trust\n")

    def start(self) -> None:
        self._run(
            "pg_ctl",
            "-D",
            str(self.datadir),
            "-l",
            str(self.log),
            "-w",
            "-t",
            "60",
            "-o",
            f"-p {self.port}",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        """``mode="immediate"``: a crash (no checkpoint, no goodbye to clients)."""
        with contextlib.suppress(RuntimeError):
            self._run("pg_ctl", "-D", str(self.datadir), "-m", mode, "-w", "stop")

    def promote(self) -> None:
        self._run("pg_ctl", "-D", str(self.datadir), "-w", "-t", "60", "promote")

    def standby_of(self, primary_host: str, primary_port: int, *, name: str) -> OwnedPostgres:
        """A hot standby of this server, streaming from ``primary_host:primary_port``."""
        standby = OwnedPostgres(self.workdir, name)
        self._run(
            "pg_basebackup",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "-D",
            str(standby.datadir),
            "-X",
            "stream",
            "-R",
            "--no-sync",
            "-c",
            "fast",
        )
        with open(standby.datadir / "postgresql.auto.conf", "a") as handle:
            handle.write(
                f"primary_conninfo = 'host={primary_host} port={primary_port} user=postgres "
                f"application_name={name}'\n"
            )
        return standby

    def execute(self, statement: str, *params: Any, dbname: str = "postgres") -> list[Any]:
        with psycopg.connect(self.dsn(dbname), autocommit=True, connect_timeout=5) as conn:
            cur = conn.execute(statement, params or None)
            return cur.fetchall() if cur.description else []


class PostgresPair:
    """A primary and a streaming hot standby (through a :class:`FreezingProxy`)."""

    def __init__(self, workdir: Path, *, synchronous: bool) -> None:
        self.workdir = workdir
        self.synchronous = synchronous
        self.primary = OwnedPostgres(workdir, "primary")
        self.proxy = FreezingProxy(("127.0.0.1", self.primary.port))
        self.standby: OwnedPostgres | None = None
        self.promoted = False
        self.dbname = "lgm_failover"

    @classmethod
    @contextlib.contextmanager
    def running(cls, *, synchronous: bool) -> Iterator[PostgresPair]:
        require_cluster_binaries("postgres")
        workdir = Path(tempfile.mkdtemp(prefix="lgm-pgpair-"))
        _give_to_postgres(workdir)
        pair = cls(workdir, synchronous=synchronous)
        try:
            pair._build()
            yield pair
        finally:
            pair.proxy.thaw()
            pair.proxy.cut()
            for server in (pair.primary, pair.standby):
                if server is not None:
                    server.stop("immediate")
            shutil.rmtree(workdir, ignore_errors=True)

    def _build(self) -> None:
        self.primary.initdb()
        self.primary.start()
        self.primary.execute(f"CREATE DATABASE {self.dbname}")
        self.proxy.restore()
        self.standby = self.primary.standby_of("127.0.0.1", self.proxy.port, name="standby")
        self.standby.start()
        if self.synchronous:  # only once the standby exists: every commit waits for it
            self.primary.execute("ALTER SYSTEM SET synchronous_standby_names = 'standby'")
            self.primary.execute("SELECT pg_reload_conf()")
        self.wait_streaming()

    @property
    def dsn(self) -> str:
        """Both servers, the writable one chosen at connect time (what a client of a failover
        manager uses)."""
        assert self.standby is not None
        return (
            f"host=127.0.0.1,127.0.0.1 port={self.primary.port},{self.standby.port} "
            f"user=postgres dbname={self.dbname} target_session_attrs=read-write "
            "connect_timeout=2"
        )

    def wait_streaming(self, timeout: float = 30.0) -> None:
        """Until the standby streams (and, if synchronous, is the sync standby)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rows = self.primary.execute(
                "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby' "
                "AND state = 'streaming'"
            )
            if rows and (not self.synchronous or rows[0][0] == "sync"):
                return
            if rows:
                # A standby counts as synchronous once it has confirmed a flush; an idle
                # primary sends it WAL to confirm only every ~15 s. One commit that does not
                # wait for it (it is not sync yet) gives it something to confirm now.
                self.primary.execute("SET synchronous_commit = local; SELECT txid_current()")
            time.sleep(0.05)
        raise RuntimeError("the standby did not start streaming")

    def caught_up(self, timeout: float = 30.0) -> None:
        """Until the standby has replayed everything the primary wrote."""
        assert self.standby is not None
        (target,) = self.primary.execute("SELECT pg_current_wal_lsn()::text")[0]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            (ok,) = self.standby.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", target)[0]
            if ok:
                return
            time.sleep(0.02)
        raise RuntimeError("the standby did not catch up")

    def lag(self) -> None:
        """From now on the standby receives nothing (asynchronous replication only)."""
        if self.synchronous:
            raise RuntimeError("a synchronous standby cannot lag: every commit waits for it")
        self.caught_up()
        self.proxy.freeze()

    def fail_over(self) -> float:
        """Crash the primary, lose what the link still holds, promote the standby; returns
        the monotonic time the promotion completed."""
        assert self.standby is not None
        self.primary.stop("immediate")
        self.proxy.cut()
        self.proxy.thaw()
        self.standby.promote()
        self.promoted = True
        return time.monotonic()

    def timeline(self, server: OwnedPostgres) -> int:
        (tli,) = server.execute(
            "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int"
        )[0]
        return int(tli)


class RedisPair:
    """A Redis primary and a replica that replicates through a :class:`FreezingProxy`."""

    def __init__(self, primary: OwnedRedis, replica: OwnedRedis, proxy: FreezingProxy) -> None:
        self.primary = primary
        self.replica = replica
        self.proxy = proxy

    @classmethod
    @contextlib.contextmanager
    def running(cls, *, persistence: str = "none") -> Iterator[RedisPair]:
        require_cluster_binaries("redis")
        with contextlib.ExitStack() as stack:
            primary = stack.enter_context(OwnedRedis.running(persistence=persistence))
            proxy = stack.enter_context(FreezingProxy.running(("127.0.0.1", primary.port)))
            replica = stack.enter_context(
                OwnedRedis.running(persistence=persistence, replica_of=proxy.address)
            )
            stack.callback(proxy.thaw)
            pair = cls(primary, replica, proxy)
            pair.wait_linked()
            yield pair

    def wait_linked(self, timeout: float = 30.0) -> None:
        """Until the replica is in sync with the primary."""
        client = self.replica.client()
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                info = client.info("replication")
                if info.get("master_link_status") == "up":
                    self.caught_up()
                    return
                time.sleep(0.05)
        finally:
            client.close()
        raise RuntimeError("the replica did not link to the primary")

    def caught_up(self, timeout: float = 30.0) -> None:
        """Until the replica has applied everything the primary wrote (``WAIT 1``)."""
        client = self.primary.client()
        try:
            if int(client.execute_command("WAIT", 1, int(timeout * 1000))) < 1:
                raise RuntimeError("the replica did not catch up")
        finally:
            client.close()

    def lag(self) -> None:
        """From now on the replica receives nothing."""
        self.caught_up()
        self.proxy.freeze()

    def crash(self) -> None:
        """Kill the primary and lose what the link still holds (a failover manager promotes)."""
        self.primary.kill()
        self.proxy.cut()
        self.proxy.thaw()

    def fail_over(self) -> float:
        """:meth:`crash`, then promote the replica by hand; returns the monotonic time the
        promotion completed."""
        self.crash()
        client = self.replica.client()
        try:
            client.execute_command("REPLICAOF", "NO", "ONE")
            while client.info("replication")["role"] != "master":
                time.sleep(0.01)
        finally:
            client.close()
        return time.monotonic()


class OwnedSentinel:
    """One Redis Sentinel (``redis-server --sentinel``) watching a :class:`RedisPair`'s
    primary as ``master_name``, quick to act: down after 500 ms, quorum 1."""

    def __init__(self, workdir: Path, primary_port: int, master_name: str = "lgm") -> None:
        self.workdir = workdir
        self.port = free_port()
        self.master_name = master_name
        self.config = workdir / "sentinel.conf"
        self.config.write_text(
            f"port {self.port}\nbind 127.0.0.1\ndir {workdir}\n"
            f"sentinel monitor {master_name} 127.0.0.1 {primary_port} 1\n"
            f"sentinel down-after-milliseconds {master_name} 500\n"
            f"sentinel failover-timeout {master_name} 5000\n"
        )
        self.process: subprocess.Popen[bytes] | None = None

    @classmethod
    @contextlib.contextmanager
    def watching(cls, pair: RedisPair) -> Iterator[OwnedSentinel]:
        with tempfile.TemporaryDirectory(prefix="lgm-sentinel-") as workdir:
            sentinel = cls(Path(workdir), pair.primary.port)
            sentinel.start()
            try:
                sentinel.wait_for_replica()
                yield sentinel
            finally:
                sentinel.stop()

    def start(self) -> None:
        log = open(self.workdir / "sentinel.log", "ab")  # noqa: SIM115 - owned by the process
        self.process = subprocess.Popen(
            [redis_server_binary(), str(self.config), "--sentinel"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()

    def client(self) -> Any:
        """A ``redis.sentinel.Sentinel`` on this sentinel."""
        from redis.sentinel import Sentinel

        return Sentinel([("127.0.0.1", self.port)], socket_timeout=1.0)

    def master_address(self) -> tuple[str, int] | None:
        import redis

        probe = redis.Redis(port=self.port, socket_timeout=1.0, decode_responses=True)
        try:
            reply = probe.execute_command("SENTINEL", "get-master-addr-by-name", self.master_name)
        except redis.RedisError:
            return None
        finally:
            probe.close()
        return (str(reply[0]), int(reply[1])) if reply else None

    def wait_for_replica(self, timeout: float = 30.0) -> None:
        """Until the sentinel knows the primary and its replica (it can fail over)."""
        import redis

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            probe = redis.Redis(port=self.port, socket_timeout=1.0, decode_responses=True)
            try:
                if probe.execute_command("SENTINEL", "replicas", self.master_name):
                    return
            except redis.RedisError:
                pass
            finally:
                probe.close()
            time.sleep(0.1)
        raise RuntimeError("the sentinel did not discover the replica")

    def wait_failover(self, old: tuple[str, int], timeout: float = 30.0) -> float:
        """Until the sentinel names another master than ``old``; the monotonic time then."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            current = self.master_address()
            if current is not None and current != old:
                return time.monotonic()
            time.sleep(0.02)
        raise RuntimeError("the sentinel did not fail over")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


class OwnedPgBouncer:
    """PgBouncer in ``pool_mode`` (default transaction) in front of the server at
    ``host:port``, on a free port, run as the ``postgres`` OS user (it refuses root)."""

    def __init__(self, workdir: Path, host: str, port: int, pool_mode: str) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.config = workdir / "pgbouncer.ini"
        self.config.write_text(
            "[databases]\n"
            f"* = host={host} port={port} user=postgres\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\nunix_socket_dir =\n"
            f"auth_type = any\npool_mode = {pool_mode}\nmax_client_conn = 500\n"
            "default_pool_size = 4\n"
            f"logfile = {workdir / 'pgbouncer.log'}\npidfile = {workdir / 'pgbouncer.pid'}\n"
            "ignore_startup_parameters = extra_float_digits,options\n"
        )
        _give_to_postgres(self.config)

    @classmethod
    @contextlib.contextmanager
    def running(
        cls, host: str = "127.0.0.1", port: int = 5432, pool_mode: str = "transaction"
    ) -> Iterator[OwnedPgBouncer]:
        binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
        if not Path(binary).exists():
            pytest.fail("pgbouncer not found (apt-get install pgbouncer; scripts/services.sh)")
        workdir = Path(tempfile.mkdtemp(prefix="lgm-pgbouncer-"))
        _give_to_postgres(workdir)
        bouncer = cls(workdir, host, port, pool_mode)
        user = ["-u", "postgres"] if os.geteuid() == 0 else []
        process = subprocess.Popen(
            [binary, *user, str(bouncer.config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            bouncer._wait_ready(process)
            yield bouncer
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            shutil.rmtree(workdir, ignore_errors=True)

    def dsn(self, dbname: str) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={dbname}"

    def _wait_ready(self, process: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                log = self.workdir / "pgbouncer.log"
                text = log.read_text() if log.exists() else ""
                raise RuntimeError(f"pgbouncer exited ({process.returncode}): {text[-2000:]}")
            try:
                with psycopg.connect(self.dsn("postgres"), connect_timeout=2) as conn:
                    conn.execute("SELECT 1")
                return
            except psycopg.Error:
                time.sleep(0.1)
        raise RuntimeError("pgbouncer did not accept connections")
