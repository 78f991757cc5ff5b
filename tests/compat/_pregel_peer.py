"""Our savers as the ``sync_checkpointer`` / ``async_checkpointer`` fixtures of LangGraph's
own graph tests (``langgraph``'s ``tests/``: pregel sync/async, interrupts, time travel,
subgraphs, durability, delta channels).

Imported at the end of their ``conftest.py`` (by ``pregel_peer_run.py``), so these two
fixtures replace theirs -- the only change: ``PostgresSaver`` / ``RedisSaver`` for the
sync tests, ``AsyncPostgresSaver`` / ``AsyncRedisSaver`` for the async ones. Postgres
savers open on a fresh database (a copy of a template holding our schema), Redis savers
on a fresh key prefix of the test server, removed afterwards. Their names come from
``secrets``, never ``uuid.uuid4``: their ``deterministic_uuids`` fixture mocks that, and a
fixture drawing from it would shift the ids the test expects.
"""

from __future__ import annotations

import atexit
import os
import secrets
from collections.abc import AsyncIterator, Iterator
from typing import Any

import psycopg
import pytest
import redis
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver

POSTGRES_URI = os.environ.get(
    "LANGGRAPH_RECALL_TEST_POSTGRES_URI", "postgresql://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("LANGGRAPH_RECALL_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

_TEMPLATE: list[str] = []


def _dsn(name: str) -> str:
    params = conninfo_to_dict(POSTGRES_URI)
    params["dbname"] = name
    return make_conninfo(**params)  # type: ignore[arg-type]


def _drop(name: str) -> None:
    with psycopg.connect(POSTGRES_URI, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _fresh_database() -> str:
    if not _TEMPLATE:
        name = f"lgm_pregel_tpl_{secrets.token_hex(6)}"
        with psycopg.connect(POSTGRES_URI, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        with PostgresSaver.from_conn_string(_dsn(name)) as saver:
            saver.setup()
        _TEMPLATE.append(name)
        atexit.register(_drop, name)
    name = f"lgm_pregel_{secrets.token_hex(6)}"
    with psycopg.connect(POSTGRES_URI, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{_TEMPLATE[0]}"')
    return name


def _forget_prefix(prefix: str) -> None:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        for start in range(0, len(keys), 500):
            client.delete(*keys[start : start + 500])
    finally:
        client.close()


@pytest.fixture(scope="function", params=["recall_postgres", "recall_redis"])
def sync_checkpointer(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "recall_postgres":
        name = _fresh_database()
        try:
            with PostgresSaver.from_conn_string(_dsn(name)) as saver:
                yield saver
        finally:
            _drop(name)
        return
    prefix = f"lgmpregel{secrets.token_hex(5)}"
    try:
        with RedisSaver.from_conn_string(REDIS_URL, prefix=prefix) as saver:
            saver.setup()
            yield saver
    finally:
        _forget_prefix(prefix)


@pytest.fixture(scope="function", params=["recall_postgres_aio", "recall_redis_aio"])
async def async_checkpointer(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    if request.param == "recall_postgres_aio":
        name = _fresh_database()
        try:
            async with AsyncPostgresSaver.from_conn_string(_dsn(name)) as saver:
                yield saver
        finally:
            _drop(name)
        return
    prefix = f"lgmpregel{secrets.token_hex(5)}"
    try:
        async with AsyncRedisSaver.from_conn_string(REDIS_URL, prefix=prefix) as saver:
            await saver.setup()
            yield saver
    finally:
        _forget_prefix(prefix)
