"""Fencing and leases across server state loss, on clusters the tests build themselves.

Principle: **tokens strictly increase across server state loss** -- a server that lost
recent writes (a promoted asynchronous Postgres standby or Redis replica, Redis restarted
from an older RDB snapshot) never hands out a token again and never accepts a late write of
a holder from before the loss -- and **leases recover with the database**: a lease whose
holder died with the old server history never blocks its thread; every thread takes a new
leased turn within 5 s of the promotion.

Each test runs the workload of :mod:`tests.reliability._failover` (runs cut by the failure,
releases lost in the lag window, acquisitions that exist on the old primary only), fails the
server over, and asserts: 0 tokens re-issued, 0 stale writes accepted, every thread usable
within :data:`~tests.reliability._failover.USABLE_DEADLINE` of the promotion (a behavioural
deadline: a dead lease would block its thread for the whole 30 s TTL).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from tests.reliability._clusters import OwnedPostgres, OwnedSentinel, PostgresPair, RedisPair
from tests.reliability._failover import (
    USABLE_DEADLINE,
    After,
    Before,
    aafter_failure,
    after_failure,
    before_failure,
)
from tests.reliability._figures import Figures
from tests.reliability._servers import OwnedRedis
from tests.reliability._workload import thread_config

# serial: its time bounds are measured alone (scripts/test.sh)
pytestmark = [pytest.mark.slow, pytest.mark.failover, pytest.mark.serial]

PER_GROUP = 8


def check(before: Before, after: After, figures: Figures, label: str) -> None:
    figures.add("failover_tokens_tried", before.issued() + after.issued())
    figures.add("failover_tokens_reissued", after.reissued(before))
    figures.add("failover_stale_writes_tried", after.stale_tried)
    figures.add("failover_stale_writes_accepted", after.stale_accepted)
    figures.put(f"failover_usable_after_s[{label}]", round(after.slowest(), 3))
    figures.put(f"failover_turn_done_after_s[{label}]", round(after.slowest_turn(), 3))
    assert sorted(after.turn_after) == sorted(before.threads), (
        f"threads never usable again: {sorted(set(before.threads) - set(after.turn_after))}"
    )
    assert after.reissued(before) == 0
    assert after.stale_tried == len(before.threads) and after.stale_accepted == 0
    assert after.slowest() <= USABLE_DEADLINE, (after.slowest(), after.errors)
    # strictly increasing per thread across the loss
    for thread_id, tokens in after.tokens.items():
        assert min(tokens) > max(before.tokens[thread_id]), thread_id


def lost_turns(saver: Any, before: Before) -> int:
    """Turns acknowledged before the failure that the promoted server does not hold."""
    lost = 0
    for thread_id, turns in before.acked.items():
        state = saver.get_tuple(thread_config(thread_id))
        assert state is not None
        kept = {m.content for m in state.checkpoint["channel_values"]["messages"]}
        lost += sum(1 for text in turns if text not in kept)
    return lost


# --------------------------------------------------------------------------- Postgres


@pytest.mark.postgres
@pytest.mark.parametrize("synchronous", [True, False], ids=["sync-standby", "async-standby"])
def test_promoted_standby_never_reissues_a_token_and_frees_dead_leases(
    synchronous: bool, figures: Figures
) -> None:
    label = f"postgres-{'sync' if synchronous else 'async'}"
    with (
        PostgresPair.running(synchronous=synchronous) as pair,
        PostgresSaver.from_conn_string(pair.dsn, pool_config={"max_size": 8}) as saver,
    ):
        saver.setup()
        lag = (lambda: None) if synchronous else pair.lag
        before = before_failure(saver, "pg", PER_GROUP, lag=lag)
        epoch_before = pair.primary.execute("SELECT lgm_epoch()", dbname=pair.dbname)
        promoted_at = pair.fail_over()
        assert pair.standby is not None
        assert pair.timeline(pair.standby) == 2
        assert pair.standby.execute("SELECT lgm_epoch()", dbname=pair.dbname) != epoch_before
        after = after_failure(saver, before, promoted_at)
        check(before, after, figures, label)
        lost = lost_turns(saver, before)
    figures.put(f"failover_acked_turns_lost[{label}]", lost)
    if synchronous:
        assert lost == 0  # a synchronous standby holds every acknowledged turn
    else:
        assert lost == len(before.groups["late"])  # the lag window, as documented


@pytest.mark.postgres
async def test_promoted_async_standby_through_the_async_saver(figures: Figures) -> None:
    with PostgresPair.running(synchronous=False) as pair:
        with PostgresSaver.from_conn_string(pair.dsn) as saver:
            saver.setup()
            before = before_failure(saver, "apg", PER_GROUP, lag=pair.lag)
        promoted_at = pair.fail_over()
        async with AsyncPostgresSaver.from_conn_string(pair.dsn) as asaver:
            after = await aafter_failure(asaver, before, promoted_at)
        check(before, after, figures, "postgres-async-aio")


# --------------------------------------------------------------------------- Redis


@pytest.mark.redis
def test_promoted_redis_replica_never_reissues_a_token_and_frees_dead_leases(
    figures: Figures,
) -> None:
    prefix = f"fo{uuid.uuid4().hex[:8]}"
    with RedisPair.running() as pair:
        with RedisSaver.from_conn_string(pair.primary.url, prefix=prefix) as saver:
            saver.setup()
            before = before_failure(saver, "redis", PER_GROUP, lag=pair.lag)
        promoted_at = pair.fail_over()
        with RedisSaver.from_conn_string(pair.replica.url, prefix=prefix) as promoted:
            after = after_failure(promoted, before, promoted_at)
        check(before, after, figures, "redis-replica")


@pytest.mark.redis
async def test_redis_restarted_from_an_older_snapshot_never_reissues_a_token(
    figures: Figures,
) -> None:
    """Redis' default persistence (RDB snapshots, no AOF): leases taken after the last
    snapshot are lost by a crash; the restarted server never hands their tokens out again,
    refuses their holders' late writes, and the leases it restored block nothing. Three
    rounds of snapshot / acquire / SIGKILL / restart, the last one through the async saver."""
    prefix = f"rdb{uuid.uuid4().hex[:8]}"
    with OwnedRedis.running(persistence="rdb") as server:
        for round_ in range(3):
            with RedisSaver.from_conn_string(server.url, prefix=prefix) as saver:
                saver.setup()
                before = before_failure(saver, f"r{round_}", PER_GROUP, lag=server.snapshot)
            server.kill()
            server.start()
            restarted_at = time.monotonic()
            if round_ < 2:
                with RedisSaver.from_conn_string(server.url, prefix=prefix) as saver:
                    after = after_failure(saver, before, restarted_at)
            else:
                async with AsyncRedisSaver.from_conn_string(server.url, prefix=prefix) as asaver:
                    after = await aafter_failure(asaver, before, restarted_at)
            check(before, after, figures, f"redis-snapshot-{round_}")


@pytest.mark.redis
def test_sentinel_failover_frees_dead_leases_for_the_same_saver(figures: Figures) -> None:
    """Redis Sentinel promotes the replica by itself; ONE saver on a Sentinel client
    (``Sentinel(...).master_for(...)``) serves before and after: 0 tokens re-issued, 0 late
    writes accepted, every thread leased again within 5 s of the switch."""
    prefix = f"snt{uuid.uuid4().hex[:8]}"
    with RedisPair.running() as pair, OwnedSentinel.watching(pair) as sentinel:
        client = sentinel.client().master_for(sentinel.master_name, socket_timeout=2.0)
        saver = RedisSaver(client, prefix=prefix)
        saver.setup()
        before = before_failure(saver, "snt", PER_GROUP, lag=pair.lag)
        # messages name the server the client reaches, not redis-py's default localhost:6379
        assert f"master {sentinel.master_name!r} (last at 127.0.0.1:{pair.primary.port};" in (
            saver.where
        )
        old = ("127.0.0.1", pair.primary.port)
        crashed_at = time.monotonic()
        pair.crash()
        switched_at = sentinel.wait_failover(old)
        figures.put("failover_sentinel_switch_s", round(switched_at - crashed_at, 3))
        assert sentinel.master_address() == ("127.0.0.1", pair.replica.port)
        after = after_failure(saver, before, switched_at)
        check(before, after, figures, "redis-sentinel")
        assert f"(last at 127.0.0.1:{pair.replica.port};" in saver.where
        assert "6379" not in saver.where
        client.close()


@pytest.mark.parametrize(
    "backend",
    [
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("redis", marks=pytest.mark.redis),
    ],
)
def test_a_crash_restart_frees_the_leases_of_the_runs_it_cut(
    backend: str, figures: Figures
) -> None:
    """No state is lost (WAL; AOF with fsync always), but every connection died with the
    server: the restart is a new epoch, so the leases of the runs it cut block nothing, and
    their holders' late writes are refused once the threads are leased again."""
    if backend == "postgres":
        with OwnedPostgres.running() as server:
            dsn = server.dsn("lgm_owned")
            with PostgresSaver.from_conn_string(dsn) as saver:
                saver.setup()
                before = before_failure(saver, "pgr", PER_GROUP, lag=lambda: None)
                server.stop("immediate")
                server.start()
                restarted_at = time.monotonic()
                after = after_failure(saver, before, restarted_at)
                assert lost_turns(saver, before) == 0
    else:
        prefix = f"aof{uuid.uuid4().hex[:8]}"
        with OwnedRedis.running() as redis_server:
            with RedisSaver.from_conn_string(redis_server.url, prefix=prefix) as saver:
                saver.setup()
                before = before_failure(saver, "aof", PER_GROUP, lag=lambda: None)
            redis_server.kill()
            redis_server.start()
            restarted_at = time.monotonic()
            with RedisSaver.from_conn_string(redis_server.url, prefix=prefix) as saver:
                after = after_failure(saver, before, restarted_at)
                assert lost_turns(saver, before) == 0
    check(before, after, figures, f"{backend}-restart")
