"""Transient server errors never escape raw; a broken transaction is retried, bounded.

The server itself raises the errors (a trigger on ``lgm_memory_items`` that fails the first
N writes with a given SQLSTATE, or a real lock held by another session): a deadlock victim
or serialization failure is run again up to ``TRANSACTION_ATTEMPTS`` times and then is a
:class:`TransientError`, as are a ``lock_timeout``, a ``statement_timeout`` and a cancelled
query, with nothing written. On both stores, PG 15 (exact) and embedded PG 18 (pgvector).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from langgraph_recall._pg.errors import TRANSACTION_ATTEMPTS
from langgraph_recall.errors import LangGraphRecallError, TransientError
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from langgraph_recall.store.postgres._migrations import GLOBAL_LOCK, LOCK_CLASS
from tests.reliability.conftest import index_config

NS = ("t", "u")
INDEX: Any = index_config()


def _fail_writes(dsn: str, sqlstate: str, times: int) -> None:
    """Make the next ``times`` item writes fail on the server with ``sqlstate``."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS t_failures (left_over integer, code text)")
        conn.execute("DELETE FROM t_failures")
        conn.execute("INSERT INTO t_failures VALUES (%s, %s)", (times, sqlstate))
        conn.execute(
            """
CREATE OR REPLACE FUNCTION t_fail() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE code text;
BEGIN
    -- counted by a sequence: a rollback does not undo nextval()
    SELECT f.code INTO code FROM t_failures f WHERE f.left_over > nextval('t_seq');
    IF code IS NOT NULL THEN
        RAISE EXCEPTION 'injected %', code USING ERRCODE = code;
    END IF;
    RETURN NEW;
END $$"""
        )
        conn.execute("DROP SEQUENCE IF EXISTS t_seq")
        conn.execute("CREATE SEQUENCE t_seq MINVALUE 0 START 0")
        conn.execute("DROP TRIGGER IF EXISTS t_fail ON lgm_memory_items")
        conn.execute(
            "CREATE TRIGGER t_fail BEFORE INSERT ON lgm_memory_items "
            "FOR EACH ROW EXECUTE FUNCTION t_fail()"
        )


def _attempts(dsn: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT last_value, is_called FROM t_seq").fetchone()
    assert row is not None
    return int(row[0]) + 1 if row[1] else 0


def _items(dsn: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM lgm_memory_items").fetchone()
    return int(row[0]) if row else 0


@pytest.fixture
def sync_store(any_dsn: str) -> Iterator[PostgresMemoryStore]:
    with PostgresMemoryStore.from_conn_string(any_dsn, index=INDEX) as store:
        store.setup()
        yield store


@pytest.mark.parametrize("sqlstate", ["40P01", "40001"])
def test_a_broken_transaction_runs_again_and_then_succeeds(
    any_dsn: str, sync_store: PostgresMemoryStore, sqlstate: str
) -> None:
    _fail_writes(any_dsn, sqlstate, TRANSACTION_ATTEMPTS - 1)
    sync_store.put(NS, "k", {"content": "written on the last attempt"})
    assert _attempts(any_dsn) == TRANSACTION_ATTEMPTS
    item = sync_store.get(NS, "k")
    assert item is not None and item.value["content"] == "written on the last attempt"
    assert [entry.action for entry in sync_store.history(NS, "k")] == ["add"]  # once


@pytest.mark.parametrize("sqlstate", ["40P01", "40001"])
def test_retries_are_bounded_then_a_transient_error_with_nothing_written(
    any_dsn: str, sync_store: PostgresMemoryStore, sqlstate: str
) -> None:
    _fail_writes(any_dsn, sqlstate, 100)
    with pytest.raises(TransientError, match=sqlstate) as caught:
        sync_store.put(NS, "k", {"content": "never written"})
    assert not isinstance(caught.value, psycopg.Error)
    assert _attempts(any_dsn) == TRANSACTION_ATTEMPTS
    assert _items(any_dsn) == 0


@pytest.mark.parametrize("sqlstate", ["55P03", "57014"])
def test_timeouts_and_cancels_are_transient_errors_and_not_retried(
    any_dsn: str, sync_store: PostgresMemoryStore, sqlstate: str
) -> None:
    _fail_writes(any_dsn, sqlstate, 100)
    with pytest.raises(TransientError, match=sqlstate):
        sync_store.put(NS, "k", {"content": "never written"})
    assert _attempts(any_dsn) == 1  # a timeout the user set bounds the call: not run again
    assert _items(any_dsn) == 0


async def test_the_async_store_translates_and_retries_the_same_way(any_dsn: str) -> None:
    async with AsyncPostgresMemoryStore.from_conn_string(any_dsn, index=INDEX) as store:
        await store.asetup()
        _fail_writes(any_dsn, "40P01", TRANSACTION_ATTEMPTS - 1)
        await store.aput(NS, "k", {"content": "written on the last attempt"})
        assert _attempts(any_dsn) == TRANSACTION_ATTEMPTS
        _fail_writes(any_dsn, "40001", 100)
        with pytest.raises(TransientError):
            await store.aput(NS, "j", {"content": "never written"})
        assert _items(any_dsn) == 1


def test_a_real_lock_timeout_and_statement_timeout_are_transient_errors(any_dsn: str) -> None:
    """Another session holds the store-wide lock exclusively (as a ``forget`` would) while
    the store's sessions have a 100 ms ``lock_timeout`` / ``statement_timeout``."""
    for setting in ("lock_timeout", "statement_timeout"):
        with PostgresMemoryStore.from_conn_string(
            any_dsn,
            index=INDEX,
            pool_config={"kwargs": {"options": f"-c {setting}=100"}},
        ) as store:
            store.setup()
            held, release = threading.Event(), threading.Event()

            def hold(held: threading.Event, release: threading.Event) -> None:
                with psycopg.connect(any_dsn) as conn:
                    conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, GLOBAL_LOCK))
                    held.set()
                    release.wait(10)

            holder = threading.Thread(target=hold, args=(held, release))
            holder.start()
            try:
                assert held.wait(5)
                started = time.monotonic()
                with pytest.raises(TransientError) as caught:
                    store.put(NS, "k", {"content": "waits for the lock"})
                assert time.monotonic() - started < 2
                assert isinstance(caught.value, LangGraphRecallError)
            finally:
                release.set()
                holder.join()
            assert store.get(NS, "k") is None
            store.put(NS, "k", {"content": "once the lock is free"})  # the store still works
            store.delete(NS, "k")
