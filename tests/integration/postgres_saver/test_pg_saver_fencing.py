"""Lease backend (compare-and-set, tokens) and fencing of writes in put/put_writes."""

from __future__ import annotations

import time

import psycopg
import pytest
from pg_saver_helpers import count_rows, thread, turn

from langgraph_recall.checkpoint.postgres import (
    AsyncPostgresLeaseBackend,
    AsyncPostgresSaver,
    PostgresLeaseBackend,
    PostgresSaver,
)
from langgraph_recall.errors import ConfigurationError, StaleWriteError
from langgraph_recall.lease._protocol import FENCE_CONFIG_KEY, AsyncLeaseBackend, LeaseBackend
from tests.graph_helpers import chat_graph

pytestmark = pytest.mark.postgres


def test_lease_compare_and_set_and_tokens(saver: PostgresSaver) -> None:
    leases = saver.lease_backend()
    assert isinstance(leases, PostgresLeaseBackend) and isinstance(leases, LeaseBackend)

    first = leases.try_acquire("t", "worker-a", ttl=30)
    assert first is not None and first.token >= 1 and first.owner == "worker-a"
    assert leases.try_acquire("t", "worker-b", ttl=30) is None  # held
    assert leases.renew(first, ttl=30) is True
    assert leases.try_acquire("other", "worker-b", ttl=30) is not None  # per thread

    leases.release(first)
    second = leases.try_acquire("t", "worker-b", ttl=30)
    assert second is not None and second.token > first.token
    assert leases.renew(first, ttl=30) is False  # old holder lost it
    leases.release(first)  # not the holder: no-op
    assert leases.try_acquire("t", "worker-c", ttl=30) is None

    # expiry: a lease not renewed can be taken over, with a higher token
    short = leases.try_acquire("exp", "worker-a", ttl=0.2)
    assert short is not None
    time.sleep(0.3)
    assert leases.renew(short, ttl=30) is True  # expired but nobody took it yet
    time.sleep(0.0)
    leases.release(short)
    again = leases.try_acquire("exp", "worker-a", ttl=0.2)
    assert again is not None
    time.sleep(0.3)
    taker = leases.try_acquire("exp", "worker-b", ttl=30)
    assert taker is not None and taker.token > again.token
    assert leases.renew(again, ttl=30) is False

    with pytest.raises(ConfigurationError, match="ttl"):
        leases.try_acquire("t", "x", ttl=0)
    with pytest.raises(ConfigurationError, match="owner"):
        leases.try_acquire("t", "", ttl=1)


def test_delete_thread_frees_the_lease_and_fences_the_holder_out(saver: PostgresSaver) -> None:
    leases = saver.lease_backend()
    lease = leases.try_acquire("t", "worker-a", ttl=30)
    assert lease is not None
    saver.delete_thread("t")
    assert leases.renew(lease, ttl=30) is False
    after = leases.try_acquire("t", "worker-b", ttl=30)
    assert after is not None and after.token > lease.token


def test_delete_thread_leaves_nothing_naming_the_thread(saver: PostgresSaver) -> None:
    """Erasure is complete: the lease row goes with the thread (tokens come from one
    sequence, so no tombstone is needed to keep the next token above the old ones)."""
    dsn = saver.conn.conninfo  # type: ignore[union-attr]
    graph = chat_graph(saver)
    leases = saver.lease_backend()
    lease = leases.try_acquire("zhang-private-thread", "worker-a", ttl=30)
    assert lease is not None
    config = thread("zhang-private-thread", **{FENCE_CONFIG_KEY: lease.token})
    graph.invoke(turn("hello"), config)
    saver.delete_thread("zhang-private-thread")
    with psycopg.connect(dsn) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            )
        ]
        left = {
            table: conn.execute(
                f"SELECT count(*) FROM {table} t WHERE t::text LIKE %s",
                ("%zhang-private-thread%",),
            ).fetchone()[0]  # type: ignore[index]
            for table in tables
        }
    assert {t: n for t, n in left.items() if n} == {}
    with pytest.raises(StaleWriteError):  # the old holder is still fenced out
        graph.invoke(turn("late"), config)
    assert saver.get_tuple(thread("zhang-private-thread")) is None
    fresh = leases.try_acquire("zhang-private-thread", "worker-b", ttl=30)
    assert fresh is not None and fresh.token > lease.token


def test_stale_token_write_is_rejected_and_writes_nothing(saver: PostgresSaver) -> None:
    dsn = saver.conn.conninfo  # type: ignore[union-attr]
    graph = chat_graph(saver)
    leases = saver.lease_backend()
    old = leases.try_acquire("fenced", "worker-a", ttl=0.1)
    assert old is not None
    graph.invoke(turn("first"), thread("fenced", **{FENCE_CONFIG_KEY: old.token}))
    rows_before = count_rows(dsn, "checkpoints", "fenced")
    writes_before = count_rows(dsn, "checkpoint_writes", "fenced")

    time.sleep(0.2)
    new = leases.try_acquire("fenced", "worker-b", ttl=30)
    assert new is not None and new.token > old.token

    with pytest.raises(StaleWriteError, match="fencing token"):
        graph.invoke(turn("late"), thread("fenced", **{FENCE_CONFIG_KEY: old.token}))
    assert count_rows(dsn, "checkpoints", "fenced") == rows_before
    assert count_rows(dsn, "checkpoint_writes", "fenced") == writes_before
    messages = graph.get_state(thread("fenced")).values["messages"]
    assert [m.content for m in messages] == ["first", "a:first", "b:first"]

    # direct put_writes with the stale token is rejected too
    head = saver.get_tuple(thread("fenced"))
    assert head is not None
    stale_cfg = {"configurable": {**head.config["configurable"], FENCE_CONFIG_KEY: old.token}}
    with pytest.raises(StaleWriteError):
        saver.put_writes(stale_cfg, [("messages", [])], task_id="t1")  # type: ignore[arg-type]
    assert count_rows(dsn, "checkpoint_writes", "fenced") == writes_before

    graph.invoke(turn("current"), thread("fenced", **{FENCE_CONFIG_KEY: new.token}))
    assert graph.get_state(thread("fenced")).values["messages"][-1].content == "b:current"


def test_late_write_after_delete_cannot_resurrect_thread(saver: PostgresSaver) -> None:
    dsn = saver.conn.conninfo  # type: ignore[union-attr]
    graph = chat_graph(saver)
    lease = saver.lease_backend().try_acquire("gone", "worker-a", ttl=30)
    assert lease is not None
    config = thread("gone", **{FENCE_CONFIG_KEY: lease.token})
    graph.invoke(turn("hello"), config)
    saver.delete_thread("gone")
    with pytest.raises(StaleWriteError):
        graph.invoke(turn("late"), config)
    assert count_rows(dsn, "checkpoints", "gone") == 0
    assert count_rows(dsn, "checkpoint_blobs", "gone") == 0
    assert saver.get_tuple(thread("gone")) is None


def test_fence_token_must_be_an_int(saver: PostgresSaver) -> None:
    graph = chat_graph(saver)
    with pytest.raises(ConfigurationError, match="fencing token"):
        graph.invoke(turn("x"), thread("bad", **{FENCE_CONFIG_KEY: "7"}))


async def test_async_leases_and_fencing(async_saver: AsyncPostgresSaver) -> None:
    leases = async_saver.lease_backend()
    assert isinstance(leases, AsyncPostgresLeaseBackend)
    assert isinstance(leases, AsyncLeaseBackend)
    lease = await leases.atry_acquire("at", "w1", 30)
    assert lease is not None and lease.token >= 1
    assert await leases.atry_acquire("at", "w2", 30) is None
    assert await leases.arenew(lease, 30) is True

    graph = chat_graph(async_saver)
    await graph.ainvoke(turn("hi"), thread("at", **{FENCE_CONFIG_KEY: lease.token}))
    await async_saver.adelete_thread("at")
    with pytest.raises(StaleWriteError):
        await graph.ainvoke(turn("late"), thread("at", **{FENCE_CONFIG_KEY: lease.token}))
    assert await async_saver.aget_tuple(thread("at")) is None
    assert await leases.arenew(lease, 30) is False
    await leases.arelease(lease)
    fresh = await leases.atry_acquire("at", "w2", 30)
    assert fresh is not None and fresh.token > lease.token


def test_upgrade_drops_the_tombstones_of_deleted_threads_and_keeps_tokens_rising(
    saver: PostgresSaver,
) -> None:
    """A database from before the token sequence: its tombstones (rows kept for deleted
    threads, naming them) go at ``setup()``; a live lease survives, and every later token
    is above every token issued before the upgrade."""
    from langgraph_recall.checkpoint.postgres import _sql

    dsn = saver.conn.conninfo  # type: ignore[union-attr]
    first_new = next(i for i, m in enumerate(_sql.LGM_MIGRATIONS) if "lgm_lease_tokens" in m)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP SEQUENCE lgm_lease_tokens")
        conn.execute("DELETE FROM lgm_checkpoint_migrations WHERE v >= %s", (first_new,))
        conn.execute(
            "INSERT INTO lgm_thread_leases VALUES "
            "('erased-long-ago', '', 41, '-infinity'), "
            "('held', 'worker-a', 957, now() + interval '1 hour')"
        )
    saver.setup()
    with psycopg.connect(dsn) as conn:
        left = conn.execute("SELECT thread_id, token FROM lgm_thread_leases").fetchall()
    assert left == [("held", 957)]
    leases = saver.lease_backend()
    assert leases.try_acquire("held", "worker-b", ttl=30) is None
    fresh = leases.try_acquire("erased-long-ago", "worker-b", ttl=30)
    assert fresh is not None and fresh.token > 957


async def test_asetup_is_setup_under_the_async_name(async_saver: AsyncPostgresSaver) -> None:
    """``await saver.asetup()`` (as on AsyncRedisSaver and the async store) migrates like
    ``await saver.setup()``: idempotent, and leases work after it."""
    await async_saver.asetup()
    await async_saver.setup()
    lease = await async_saver.lease_backend().atry_acquire("after-asetup", "w", 5)
    assert lease is not None
