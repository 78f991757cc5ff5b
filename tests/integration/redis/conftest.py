"""Fixtures for the Redis checkpointer tests: savers on a fresh key prefix, a throwaway
3-node Redis Cluster, and a one-off standalone server that tests may kill."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator

import pytest
import redis
from redis_saver_helpers import LocalServer, free_ports, start_server, wait_ping

from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from tests.reliability._servers import redis_server_binary


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
        await instance.setup()
        yield instance


@pytest.fixture
def own_redis_server() -> Iterator[LocalServer]:
    """A private standalone redis-server (tests may stop it)."""
    if shutil.which(redis_server_binary()) is None:
        pytest.fail(f"{redis_server_binary()} is not installed (needed for the Redis tests)")
    (port,) = free_ports(1)
    with tempfile.TemporaryDirectory(prefix="lgm-redis-") as workdir:
        server = LocalServer(port, start_server(port, workdir))
        try:
            wait_ping(port)
            yield server
        finally:
            server.stop()


@pytest.fixture(scope="module")
def redis_cluster_nodes(redis_cluster_servers: list[LocalServer]) -> list[tuple[str, int]]:
    """``(host, port)`` of the nodes of :func:`redis_cluster_servers`."""
    return [("127.0.0.1", server.port) for server in redis_cluster_servers]


@pytest.fixture(scope="module")
def redis_cluster_servers() -> Iterator[list[LocalServer]]:
    """A fresh 3-primary Redis Cluster on loopback (own ports and temp dirs), torn down after."""
    if shutil.which(redis_server_binary()) is None or shutil.which("redis-cli") is None:
        pytest.fail("redis-server/redis-cli are not installed (needed for the cluster test)")
    ports = free_ports(3, with_bus=True)
    servers: list[LocalServer] = []
    with tempfile.TemporaryDirectory(prefix="lgm-cluster-") as root:
        try:
            for port in ports:
                workdir = os.path.join(root, str(port))
                os.makedirs(workdir)
                process = start_server(
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
                wait_ping(port)
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
            yield servers
        finally:
            for server in servers:
                server.stop()
