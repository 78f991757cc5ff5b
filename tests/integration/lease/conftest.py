"""Fixtures: open several independent savers ("workers") on one Postgres DB or Redis prefix."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import pytest


@dataclass(frozen=True)
class SaverFactory:
    """Opens independent savers on the same database (each one is a separate 'worker')."""

    kind: str
    url: str
    prefix: str = ""

    @contextmanager
    def sync(self) -> Iterator[Any]:
        if self.kind == "postgres":
            from langgraph_recall.checkpoint.postgres import PostgresSaver

            with PostgresSaver.from_conn_string(self.url) as saver:
                saver.setup()
                yield saver
        else:
            from langgraph_recall.checkpoint.redis import RedisSaver

            with RedisSaver.from_conn_string(self.url, prefix=self.prefix) as saver:
                saver.setup()
                yield saver

    @asynccontextmanager
    async def async_(self) -> AsyncIterator[Any]:
        if self.kind == "postgres":
            from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver

            async with AsyncPostgresSaver.from_conn_string(self.url) as saver:
                await saver.setup()
                yield saver
        else:
            from langgraph_recall.checkpoint.redis import AsyncRedisSaver

            async with AsyncRedisSaver.from_conn_string(self.url, prefix=self.prefix) as saver:
                await saver.asetup()
                yield saver


@pytest.fixture(
    params=[
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("redis", marks=pytest.mark.redis),
    ]
)
def savers(request: pytest.FixtureRequest) -> SaverFactory:
    """A :class:`SaverFactory` for each backend (fresh database / key prefix per test)."""
    if request.param == "postgres":
        return SaverFactory("postgres", request.getfixturevalue("postgres_dsn"))
    return SaverFactory(
        "redis", request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix")
    )
