"""Fixtures for the Redis checkpointer tests: savers on a fresh key prefix, a throwaway
3-node Redis Cluster, and a one-off standalone server that tests may kill."""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest
import redis

from langgraph_memory.checkpoint.redis import AsyncRedisSaver, RedisSaver


def scan_keys(client: redis.Redis, prefix: str) -> list[bytes]:
    """Every key under ``prefix`` (SCAN, as the tests never use KEYS either)."""
    return sorted(client.scan_iter(match=f"{prefix}*", count=1000))


@pytest.fixture
def raw_redis(redis_url: str) -> Iterator[redis.Redis]:
    """A plain client on the test server, for inspecting keys."""
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
def saver(redis_url: str, redis_prefix: str) -> Iterator[RedisSaver]:
    """A set-up :class:`RedisSaver` on a fresh prefix."""
    with RedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as instance:
        instance.setup()
        yield instance


@pytest.fixture
async def async_saver(redis_url: str, redis_prefix: str) -> AsyncIterator[AsyncRedisSaver]:
    """A set-up :class:`AsyncRedisSaver` on a fresh prefix."""
    async with AsyncRedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as instance:
        await instance.asetup()
        yield instance


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports(count: int, *, with_bus: bool = False) -> list[int]:
    """``count`` free loopback ports (and free ``port + 10000`` cluster-bus ports)."""
    ports: list[int] = []
    while len(ports) < count:
        port = random.randint(20000, 29999)
        if port in ports or not _port_free(port):
            continue
        if with_bus and not _port_free(port + 10000):
            continue
        ports.append(port)
    return ports


def _start_server(port: int, workdir: str, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            shutil.which("redis-server") or "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            workdir,
            *extra,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _wait_ping(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            redis.Redis(port=port, socket_connect_timeout=0.5).ping()
            return
        except redis.RedisError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@dataclass
class LocalServer:
    """A redis-server process this test suite owns."""

    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def own_redis_server() -> Iterator[LocalServer]:
    """A private standalone redis-server (tests may stop it)."""
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not installed (needed for the Redis tests)")
    (port,) = free_ports(1)
    with tempfile.TemporaryDirectory(prefix="lgm-redis-") as workdir:
        server = LocalServer(port, _start_server(port, workdir))
        try:
            _wait_ping(port)
            yield server
        finally:
            server.stop()


@pytest.fixture(scope="module")
def redis_cluster_nodes() -> Iterator[list[tuple[str, int]]]:
    """A fresh 3-primary Redis Cluster on loopback (own ports and temp dirs), torn down after."""
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        pytest.fail("redis-server/redis-cli are not installed (needed for the cluster test)")
    ports = free_ports(3, with_bus=True)
    servers: list[LocalServer] = []
    with tempfile.TemporaryDirectory(prefix="lgm-cluster-") as root:
        try:
            for port in ports:
                workdir = os.path.join(root, str(port))
                os.makedirs(workdir)
                process = _start_server(
                    port,
                    workdir,
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    os.path.join(workdir, "nodes.conf"),
                    "--cluster-node-timeout",
                    "5000",
                )
                servers.append(LocalServer(port, process))
            for port in ports:
                _wait_ping(port)
            subprocess.run(
                [
                    shutil.which("redis-cli") or "redis-cli",
                    "--cluster",
                    "create",
                    *[f"127.0.0.1:{p}" for p in ports],
                    "--cluster-replicas",
                    "0",
                    "--cluster-yes",
                ],
                check=True,
                capture_output=True,
                timeout=60,
            )
            deadline = time.monotonic() + 30
            while True:
                infos = [redis.Redis(port=p).cluster("info") for p in ports]
                if all(info.get("cluster_state") == "ok" for info in infos):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"cluster did not become ready: {infos}")
                time.sleep(0.1)
            yield [("127.0.0.1", p) for p in ports]
        finally:
            for server in servers:
                server.stop()
