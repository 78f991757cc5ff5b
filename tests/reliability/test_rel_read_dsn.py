"""A store with ``read_dsn``: batches that only read run on the hot standby, the rest on the
primary.

Principle: **one store object, two servers, each statement where it belongs.** Reads
(``get``, ``search``, ``list_namespaces``) answer from the standby -- proved by freezing the
replication link: a memory written through the store is then invisible to its own reads
and visible to a store on the primary, until the link thaws. Writes, ``setup`` and the
bookkeeping a read leaves behind (access counts) go to the primary, so nothing is refused
as read-only. A standby that is down is named in the error, and writes go on.
"""

from __future__ import annotations

import logging

import pytest

from langgraph_recall.errors import BackendUnavailableError
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from tests.reliability._clusters import PostgresPair
from tests.reliability.conftest import index_config

pytestmark = [pytest.mark.serial, pytest.mark.slow, pytest.mark.failover, pytest.mark.postgres]

NS = ("memories", "user_id:u")


def test_reads_answer_from_the_standby_and_writes_go_to_the_primary(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="langgraph_recall")
    with PostgresPair.running(synchronous=False) as pair:
        assert pair.standby is not None
        standby = pair.standby.dsn(pair.dbname)
        with (
            PostgresMemoryStore.from_conn_string(
                pair.dsn, read_dsn=standby, index=index_config(), access_flush_interval=0
            ) as store,
            PostgresMemoryStore.from_conn_string(pair.dsn, index=index_config()) as primary_only,
        ):
            store.setup()
            store.put(NS, "city", {"content": "User lives in Lyon"})
            pair.caught_up()
            assert [hit.key for hit in store.search(NS, query="Where does the user live?")] == [
                "city"
            ]
            pair.lag()  # the standby receives nothing from now on
            store.put(NS, "job", {"content": "User works at Acme as a welder"})
            assert store.get(NS, "job") is None  # read on the standby: not replayed yet
            assert "job" not in {hit.key for hit in store.search(NS, query="welder Acme")}
            assert store.list_namespaces() == [NS]
            assert primary_only.get(NS, "job") is not None  # it was written, on the primary
            store.flush_access()
            (counted,) = pair.primary.execute(
                "SELECT count(*) FROM lgm_memory_access WHERE access_count > 0",
                dbname=pair.dbname,
            )[0]
            assert counted >= 1  # the searches' access counts were written on the primary
            pair.proxy.thaw()
            pair.caught_up()
            assert store.get(NS, "job") is not None
            assert "job" in {hit.key for hit in store.search(NS, query="welder Acme")}
    refused = [r.getMessage() for r in caplog.records if "read-only" in r.getMessage()]
    assert refused == []  # no bookkeeping was sent to the standby


def test_a_standby_that_is_down_is_named_and_writes_go_on() -> None:
    with PostgresPair.running(synchronous=False) as pair:
        assert pair.standby is not None
        with PostgresMemoryStore.from_conn_string(
            pair.dsn,
            read_dsn=pair.standby.dsn(pair.dbname),
            index=index_config(),
            pool_config={"timeout": 3.0, "max_size": 2},
        ) as store:
            store.setup()
            pair.standby.stop("immediate")
            with pytest.raises(BackendUnavailableError) as failed:
                store.search(NS, query="anything")
            message = str(failed.value)
            assert f"Postgres at 127.0.0.1:{pair.standby.port}" in message
            assert "answers" not in message and "unreachable" in message
            store.put(NS, "still", {"content": "Writes reach the primary"})
            (n,) = pair.primary.execute(
                "SELECT count(*) FROM lgm_memory_items WHERE key = 'still'", dbname=pair.dbname
            )[0]
            assert n == 1


async def test_the_async_store_reads_from_its_standby_too() -> None:
    with PostgresPair.running(synchronous=False) as pair:
        assert pair.standby is not None
        async with AsyncPostgresMemoryStore.from_conn_string(
            pair.dsn, read_dsn=pair.standby.dsn(pair.dbname), index=index_config()
        ) as store:
            await store.asetup()
            await store.aput(NS, "city", {"content": "User lives in Lyon"})
            pair.caught_up()
            pair.lag()
            await store.aput(NS, "pet", {"content": "User has a cat"})
            assert await store.aget(NS, "pet") is None
            assert await store.aget(NS, "city") is not None
            pair.proxy.thaw()
            pair.caught_up()
            assert await store.aget(NS, "pet") is not None
