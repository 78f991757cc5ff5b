"""Reads on a hot standby, with the store's defaults.

Principle: **bookkeeping never fails a read.** A search records access counts and refreshes
TTLs after it answers (in transactions of their own); on a hot standby those writes are
refused (read-only), and they used to fail every search about a second after the first.
The store now notices the read-only server, keeps answering, and says once that access
counts and TTL refreshes are not recorded there.
"""

from __future__ import annotations

import logging
import time

import pytest

from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from tests.reliability._clusters import PostgresPair
from tests.reliability.conftest import index_config

pytestmark = [pytest.mark.serial, pytest.mark.slow, pytest.mark.failover, pytest.mark.postgres]

NS = ("memories", "user_id:u")


def test_searches_on_a_hot_standby_work_with_the_defaults(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with PostgresPair.running(synchronous=False) as pair:
        assert pair.standby is not None
        with PostgresMemoryStore.from_conn_string(pair.dsn, index=index_config()) as primary:
            primary.setup()
            primary.put(NS, "city", {"content": "User lives in Lyon"}, ttl=60)
        pair.caught_up()
        replica_dsn = pair.standby.dsn(pair.dbname)
        caplog.set_level(logging.WARNING, logger="langgraph_recall")
        with PostgresMemoryStore.from_conn_string(replica_dsn, index=index_config()) as replica:
            for _ in range(6):  # across several access flushes (every second by default)
                hits = replica.search(NS, query="Where does the user live? Lyon")
                assert [hit.key for hit in hits] == ["city"]
                assert replica.get(NS, "city", refresh_ttl=True) is not None
                time.sleep(0.3)
            replica.flush_access()
        warnings = [r for r in caplog.records if "read-only" in r.getMessage()]
        assert len(warnings) == 1, [r.getMessage() for r in caplog.records]


async def test_the_async_store_reads_on_a_hot_standby_too() -> None:
    with PostgresPair.running(synchronous=False) as pair:
        assert pair.standby is not None
        async with AsyncPostgresMemoryStore.from_conn_string(
            pair.dsn, index=index_config()
        ) as primary:
            await primary.setup()
            await primary.aput(NS, "city", {"content": "User lives in Lyon"})
        pair.caught_up()
        async with AsyncPostgresMemoryStore.from_conn_string(
            pair.standby.dsn(pair.dbname), index=index_config(), access_flush_interval=0
        ) as replica:
            for _ in range(3):
                hits = await replica.asearch(NS, query="Lyon")
                assert [hit.key for hit in hits] == ["city"]
            await replica.aflush_access()
