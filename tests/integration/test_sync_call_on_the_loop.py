"""The same misuse, the same error: a sync method of an async saver or store called on its
own event loop raises ``SyncCallOnEventLoopError`` on all three async classes -- one of our
``ConfigurationError``s and an ``asyncio.InvalidStateError`` (what LangGraph's async classes
raise). Before: ``InvalidStateError`` on two of them, ``ConfigurationError`` on the third."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver
from langgraph_recall.checkpoint.redis import AsyncRedisSaver
from langgraph_recall.errors import ConfigurationError, SyncCallOnEventLoopError
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore
from tests.fakes import HashingEmbeddings

pytestmark = [pytest.mark.postgres, pytest.mark.redis]


def _refused(call: Any) -> SyncCallOnEventLoopError:
    with pytest.raises(SyncCallOnEventLoopError) as caught:
        call()
    assert isinstance(caught.value, ConfigurationError)
    assert isinstance(caught.value, asyncio.InvalidStateError)
    assert "thread" in str(caught.value) or "async" in str(caught.value)
    return caught.value


async def test_every_async_class_refuses_a_sync_call_on_its_loop_the_same_way(
    postgres_dsn: str, redis_url: str, redis_prefix: str
) -> None:
    config: Any = {"configurable": {"thread_id": "t"}}
    async with AsyncPostgresSaver.from_conn_string(postgres_dsn) as pg:
        await pg.setup()
        _refused(lambda: pg.get_tuple(config))
    async with AsyncRedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as rs:
        await rs.asetup()
        _refused(lambda: rs.get_tuple(config))
    index: Any = {"dims": 8, "embed": HashingEmbeddings(8)}
    async with AsyncPostgresMemoryStore.from_conn_string(postgres_dsn, index=index) as store:
        await store.asetup()
        _refused(lambda: store.get(("a",), "k"))
        assert await store.aget(("a",), "k") is None  # the async twin works
