"""Open any of our four savers on a test's fresh database / key prefix, and dump a thread.

The lease and integrity properties run on every (backend, flavor) pair; the tests get a
:class:`Target` and compare a thread's raw stored state (every row / key of its data, not
its lease bookkeeping) before and after each attempt, so "nothing was written" is checked
on what is stored, not on what a read returns.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
import redis

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph_recall.checkpoint.redis._keys import ThreadKeys

__all__ = ["BACKENDS", "FLAVORS", "Target", "async_saver", "sync_saver", "target"]

BACKENDS = [
    pytest.param("postgres", marks=pytest.mark.postgres),
    pytest.param("redis", marks=pytest.mark.redis),
]
FLAVORS = ["sync", "async"]

_PG_TABLES = {
    "checkpoints": "checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata",
    "checkpoint_blobs": "checkpoint_ns, channel, version, type, blob",
    "checkpoint_writes": "checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob",
}


@dataclass
class Target:
    """Where a test's savers store data: a Postgres DSN or a Redis URL + prefix."""

    backend: str
    dsn: str = ""
    url: str = ""
    prefix: str = ""

    def dump(self, thread_id: str) -> dict[str, Any]:
        """Everything stored for the thread's checkpoints (all namespaces), comparable."""
        if self.backend == "postgres":
            out: dict[str, Any] = {}
            with psycopg.connect(self.dsn, autocommit=True) as conn:
                for table, columns in _PG_TABLES.items():
                    rows = conn.execute(
                        f"SELECT {columns} FROM {table} WHERE thread_id = %s ORDER BY 1, 2, 3",
                        (thread_id,),
                    ).fetchall()
                    out[table] = [tuple(str(v) for v in row) for row in rows]
            return out
        keys = ThreadKeys.build(self.prefix, thread_id)
        client = redis.Redis.from_url(self.url)
        try:
            out = {}
            for key in keys.data:
                if key == keys.fence:
                    continue
                kind = client.type(key)
                if kind == b"hash":
                    out[key] = sorted(client.hgetall(key).items())
                elif kind == b"zset":
                    out[key] = client.zrange(key, 0, -1, withscores=True)
                elif kind != b"none":
                    out[key] = client.get(key)
            return out
        finally:
            client.close()

    def age(self, thread_id: str, seconds: float) -> None:
        """Make a Postgres thread look idle for ``seconds`` (what time does to a TTL sweep)."""
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(
                "UPDATE lgm_thread_activity SET updated_at = now() - make_interval(secs => %s)"
                " WHERE thread_id = %s",
                (seconds, thread_id),
            )


def target(backend: str, request: pytest.FixtureRequest) -> Target:
    """The test's fresh database (``postgres_dsn``) or key prefix (``redis_prefix``)."""
    if backend == "postgres":
        return Target("postgres", dsn=request.getfixturevalue("postgres_dsn"))
    return Target(
        "redis",
        url=request.getfixturevalue("redis_url"),
        prefix=request.getfixturevalue("redis_prefix"),
    )


@contextmanager
def sync_saver(where: Target, **options: Any) -> Iterator[Any]:
    """A set-up ``PostgresSaver`` / ``RedisSaver`` (``options``: ttl, keep_last...)."""
    if where.backend == "postgres":
        with PostgresSaver.from_conn_string(where.dsn, **options) as saver:
            saver.setup()
            yield saver
    else:
        with RedisSaver.from_conn_string(where.url, prefix=where.prefix, **options) as saver:
            saver.setup()
            yield saver


@asynccontextmanager
async def async_saver(where: Target, **options: Any) -> AsyncIterator[Any]:
    """A set-up ``AsyncPostgresSaver`` / ``AsyncRedisSaver``."""
    if where.backend == "postgres":
        async with AsyncPostgresSaver.from_conn_string(where.dsn, **options) as saver:
            await saver.setup()
            yield saver
    else:
        async with AsyncRedisSaver.from_conn_string(
            where.url, prefix=where.prefix, **options
        ) as saver:
            await saver.setup()
            yield saver
