"""Run ``redis-developer/langgraph-redis``'s checkpointer tests against our Redis savers.

A pytest plugin (``-p tests.compat._redis_peer``) for a run of their test files with
their ``conftest.py`` replaced by this one's fixtures (only fixtures change): it

* starts a private ``redis-server`` on a free port for the session (their tests flush the
  whole server between tests: never the shared one), serving their ``redis_url``,
  ``client`` and ``async_client`` fixtures and their autouse ``clear_redis``;
* puts our savers, with their constructor signature (``RedisSaver(redis_url, *,
  redis_client=, connection_args=, ttl=, checkpoint_prefix=...)``, ``from_conn_string``,
  ``async with``), in place of theirs in their package's modules before any test file
  imports them -- the classes under test are ours; their shallow savers become ours
  with ``keep_last=1``.

Their package stays importable (tests import its helpers and private modules; those
tests are listed as inapplicable in ``redis_peer.deselect`` with the reason). Run by
``scripts/test_peer_suites.sh``.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import redis
import redis.asyncio

from langgraph_recall.checkpoint.redis import AsyncRedisSaver as OurAsyncRedisSaver
from langgraph_recall.checkpoint.redis import RedisSaver as OurRedisSaver

__all__ = ["AsyncRedisSaver", "AsyncShallowRedisSaver", "RedisSaver", "ShallowRedisSaver"]

PREFIX = "checkpoint"
"""Our key prefix in their runs (their default ``checkpoint_prefix``)."""


def _prefix(checkpoint_prefix: str | None) -> str:
    return checkpoint_prefix or PREFIX


class RedisSaver(OurRedisSaver):
    """Ours, built the way their ``RedisSaver`` is."""

    @property
    def _redis(self) -> Any:
        """Their tests' handle on the client (a fixture's; what they then read of their
        own key layout stays theirs)."""
        return self.client

    @_redis.setter
    def _redis(self, client: Any) -> None:  # their tests wrap the client to inject faults
        self._client = client

    _keep_last: int | None = None

    def __init__(
        self,
        redis_url: str | None = None,
        *,
        redis_client: Any = None,
        connection_args: dict[str, Any] | None = None,
        ttl: dict[str, Any] | None = None,
        checkpoint_prefix: str | None = None,
        checkpoint_write_prefix: str | None = None,
        **_ignored: Any,
    ) -> None:
        if redis_client is None:
            if not redis_url:
                raise ValueError("Either redis_url or redis_client must be provided")
            redis_client = redis.Redis.from_url(redis_url, **(connection_args or {}))
            self._owns = True
        else:
            self._owns = False
        super().__init__(
            redis_client, prefix=_prefix(checkpoint_prefix), ttl=ttl, keep_last=self._keep_last
        )

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(  # type: ignore[override]
        cls, redis_url: str | None = None, **options: Any
    ) -> Iterator[RedisSaver]:
        saver = cls(redis_url, **options)
        try:
            saver.setup()
            yield saver
        finally:
            saver.close()

    def close(self) -> None:
        if self._owns:
            self.client.close()

    def __enter__(self) -> RedisSaver:
        self.setup()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncRedisSaver(OurAsyncRedisSaver):
    """Ours, built the way their ``AsyncRedisSaver`` is (also outside a running loop)."""

    @property
    def _redis(self) -> Any:
        """Their tests' handle on the client (a fixture's; what they then read of their
        own key layout stays theirs)."""
        return self.client

    @_redis.setter
    def _redis(self, client: Any) -> None:  # their tests wrap the client to inject faults
        self._client = client

    _keep_last: int | None = None

    def __init__(
        self,
        redis_url: str | None = None,
        *,
        redis_client: Any = None,
        connection_args: dict[str, Any] | None = None,
        ttl: dict[str, Any] | None = None,
        checkpoint_prefix: str | None = None,
        checkpoint_write_prefix: str | None = None,
        **_ignored: Any,
    ) -> None:
        if redis_client is None:
            if not redis_url:
                raise ValueError("Either redis_url or redis_client must be provided")
            redis_client = redis.asyncio.Redis.from_url(redis_url, **(connection_args or {}))
            self._owns = True
        else:
            self._owns = False
        super().__init__(
            redis_client, prefix=_prefix(checkpoint_prefix), ttl=ttl, keep_last=self._keep_last
        )

    @classmethod
    @contextlib.asynccontextmanager
    async def from_conn_string(  # type: ignore[override]
        cls, redis_url: str | None = None, **options: Any
    ) -> AsyncIterator[AsyncRedisSaver]:
        async with cls(redis_url, **options) as saver:
            yield saver

    async def __aenter__(self) -> AsyncRedisSaver:
        self.loop = asyncio.get_running_loop()
        await self.setup()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._owns:
            await self.client.aclose()


class ShallowRedisSaver(RedisSaver):
    """Their latest-only saver: ours keeping one checkpoint per namespace."""

    _keep_last = 1


class AsyncShallowRedisSaver(AsyncRedisSaver):
    """Their latest-only async saver: ours keeping one checkpoint per namespace."""

    _keep_last = 1


_OURS = {
    "RedisSaver": RedisSaver,
    "AsyncRedisSaver": AsyncRedisSaver,
    "ShallowRedisSaver": ShallowRedisSaver,
    "AsyncShallowRedisSaver": AsyncShallowRedisSaver,
}
_THEIR_MODULES = tuple(
    f"langgraph.checkpoint.{package}{module}"
    for package in ("redis", "test_redis")  # test_redis: the sdist CI takes the tests from
    for module in ("", ".aio", ".shallow", ".ashallow")
)


def _put_ours_in_place() -> None:
    import importlib

    for name in _THEIR_MODULES:
        with contextlib.suppress(ImportError):
            module = importlib.import_module(name)
            for attr, ours in _OURS.items():
                if hasattr(module, attr):
                    setattr(module, attr, ours)


_put_ours_in_place()


# --------------------------------------------------------------------------- fixtures
def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _PrivateServer:
    """A ``redis-server`` on a free port, started on first use, stopped at exit."""

    def __init__(self) -> None:
        self.url = ""
        self.port = 0

    def start(self) -> str:
        if self.url:
            return self.url
        binary = os.environ.get("LANGGRAPH_RECALL_TEST_REDIS_SERVER") or shutil.which(
            "redis-server"
        )
        assert binary, "redis-server is needed for langgraph-redis's suite"
        self.port = _free_port()
        workdir = tempfile.mkdtemp(prefix="lgr-peer-redis-")
        process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", workdir],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip

        def stop() -> None:
            process.terminate()
            process.wait(10)
            shutil.rmtree(workdir, ignore_errors=True)

        atexit.register(stop)
        url = f"redis://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis.from_url(url).ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.url = url
        return url


SERVER = _PrivateServer()


class RedisContainer:
    """Stand-in for ``testcontainers.redis.RedisContainer`` (their tests start Docker
    containers; here every "container" is the run's private server)."""

    def __init__(self, image: str = "redis:8", **_options: Any) -> None:
        self.image = image

    def start(self) -> RedisContainer:
        SERVER.start()
        return self

    def stop(self, *args: Any, **kwargs: Any) -> None:
        return None

    def __enter__(self) -> RedisContainer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def get_container_host_ip(self) -> str:
        return "127.0.0.1"

    def get_exposed_port(self, port: int) -> int:
        del port
        SERVER.start()
        return SERVER.port

    def get_client(self, **kwargs: Any) -> redis.Redis:
        return redis.Redis.from_url(SERVER.start(), **kwargs)


def _serve_testcontainers() -> None:
    import sys
    import types

    if "testcontainers" in sys.modules:
        return
    package = types.ModuleType("testcontainers")
    module = types.ModuleType("testcontainers.redis")
    module.RedisContainer = RedisContainer  # type: ignore[attr-defined]
    package.redis = module  # type: ignore[attr-defined]
    sys.modules["testcontainers"], sys.modules["testcontainers.redis"] = package, module


_serve_testcontainers()


class _Compose:
    """Stand-in for their session's ``DockerCompose``: every service is the private server."""

    def get_service_host_and_port(self, service: str, port: int) -> tuple[str, int]:
        del service, port
        SERVER.start()
        return "127.0.0.1", SERVER.port


@pytest.fixture(scope="session")
def redis_container() -> _Compose:
    return _Compose()


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The run's private Redis (their tests flush it between tests)."""
    return SERVER.start()


# --------------------------------------------------------------------------- deselection
DESELECT_ENV = "LGR_REDIS_PEER_DESELECT"
_NOT_RUN: dict[str, int] = {}


def _deselected() -> dict[str, str]:
    """``file::test -> reason`` from the deselect file (``langgraph-redis/`` prefix off)."""
    path = os.environ.get(DESELECT_ENV)
    listed: dict[str, str] = {}
    if not path:
        return listed
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if line and not line.startswith("#"):
                where, reason = line.split(None, 1)
                listed[where.removeprefix("langgraph-redis/")] = reason
    return listed


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    listed = _deselected()
    kept, dropped = [], []
    for item in items:
        name = getattr(item, "originalname", item.name)
        reason = listed.get(f"{item.path.name}::{name}")
        if reason is None:
            kept.append(item)
        else:
            dropped.append(item)
            _NOT_RUN[reason] = _NOT_RUN.get(reason, 0) + 1
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _NOT_RUN:
        title = "langgraph-redis's tests not run (docs/redis-checkpointer.md)"
        terminalreporter.write_sep("-", title)
        for reason, count in sorted(_NOT_RUN.items(), key=lambda entry: -entry[1]):
            terminalreporter.write_line(f"{count:4d}  {reason}")


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    conn = redis.Redis.from_url(redis_url)
    yield conn
    conn.close()


@pytest.fixture
async def async_client(redis_url: str) -> AsyncIterator[redis.asyncio.Redis]:
    conn = redis.asyncio.Redis.from_url(redis_url)
    yield conn
    await conn.aclose()


@pytest.fixture(autouse=True)
def clear_redis(redis_url: str) -> None:
    """Their autouse flush, on the private server only."""
    conn = redis.Redis.from_url(redis_url)
    conn.flushall()
    conn.close()
