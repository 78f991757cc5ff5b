"""Shared fixtures: real Postgres and Redis, one fresh database / key prefix per test.

Service URLs come from ``LANGGRAPH_RECALL_TEST_POSTGRES_URI`` and
``LANGGRAPH_RECALL_TEST_REDIS_URL`` (defaults: the machine's local servers). When a
service is down the test is skipped locally, but **fails** when
``LANGGRAPH_RECALL_REQUIRE_SERVICES=1`` or ``CI`` is set, so CI never skips silently.

``LANGGRAPH_RECALL_TEST_REDIS_SERVER=/path/to/valkey-server`` runs the Redis tests on
another Redis-compatible server: the session starts that binary on a free port (its own
temporary directory, nothing persisted) and every ``redis_url`` points at it; the
test-owned servers of the fault tests run the same binary.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# No hypothesis deadlines: a deadline is a timing assert, and on a loaded 2-core machine an
# example's first run (imports, caches) can take longer than any sane bound. Speed is
# measured by the benchmarks (bench/), never by the tests.
settings.register_profile("langgraph-recall", deadline=None)
settings.load_profile("langgraph-recall")

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


@pytest.fixture
def postgres_dsn() -> Iterator[str]:
    """DSN of a fresh, empty database on the real Postgres server, dropped afterwards."""
    import psycopg

    name = f"lgm_test_{uuid.uuid4().hex[:12]}"
    try:
        admin = psycopg.connect(POSTGRES_URI, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        service_missing(f"Postgres at {POSTGRES_URI}", exc)
        raise
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _dsn_with_db(POSTGRES_URI, name)
    finally:
        with psycopg.connect(POSTGRES_URI, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


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
