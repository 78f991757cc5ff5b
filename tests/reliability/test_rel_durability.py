"""Durability you choose: writes acknowledged only once replicas hold them.

Principle: **an acknowledged turn survives a failover when the saver was asked for it.**
With asynchronous replication a promoted replica lacks whatever the link still held: every
turn acknowledged in the lag window is gone (measured: the whole window). ``RedisSaver(...,
replicas=1)`` sends ``WAIT`` after each checkpoint and pending write on the same connection
and acknowledges only what a replica confirmed: with the link frozen the turn fails with
``NotReplicatedError`` instead of being acknowledged and lost.
"""

from __future__ import annotations

import uuid

import pytest
import redis

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph_recall.errors import ConfigurationError, NotReplicatedError
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests.graph_helpers import chat_graph
from tests.reliability._clusters import PostgresPair, RedisPair
from tests.reliability._figures import Figures
from tests.reliability._workload import thread_config, turn_input
from tests.reliability.conftest import index_config

pytestmark = [pytest.mark.serial, pytest.mark.slow, pytest.mark.failover]

TURNS = 8


def kept_turns(saver: RedisSaver, thread_id: str) -> set[str]:
    state = saver.get_tuple(thread_config(thread_id))
    if state is None:
        return set()
    return {m.content for m in state.checkpoint["channel_values"]["messages"]}


@pytest.mark.redis
@pytest.mark.parametrize("replicas", [0, 1], ids=["primary-only", "one-replica"])
def test_no_acknowledged_turn_is_lost_when_the_saver_waits_for_a_replica(
    replicas: int, figures: Figures
) -> None:
    prefix = f"dur{uuid.uuid4().hex[:8]}"
    acked: dict[str, list[str]] = {}
    refused = 0
    with RedisPair.running() as pair:
        with RedisSaver.from_conn_string(
            pair.primary.url, prefix=prefix, replicas=replicas, replica_timeout=2.0
        ) as saver:
            saver.setup()
            graph = chat_graph(saver)
            for i in range(TURNS):  # replicated at once: the link is up
                thread_id = f"up-{i}"
                graph.invoke(turn_input(f"turn {thread_id}"), thread_config(thread_id))
                acked.setdefault(thread_id, []).append(f"turn {thread_id}")
            pair.lag()
            for i in range(TURNS):  # the lag window
                thread_id = f"lag-{i}"
                try:
                    graph.invoke(turn_input(f"turn {thread_id}"), thread_config(thread_id))
                except NotReplicatedError as exc:
                    assert "0 of the 1 replica(s)" in str(exc) and pair.primary.url.split("//")[
                        1
                    ].split("/")[0] in str(exc)
                    refused += 1
                else:
                    acked.setdefault(thread_id, []).append(f"turn {thread_id}")
        pair.fail_over()
        with RedisSaver.from_conn_string(pair.replica.url, prefix=prefix) as promoted:
            lost = sum(
                1
                for thread_id, turns in acked.items()
                for text in turns
                if text not in kept_turns(promoted, thread_id)
            )
    label = "replicas-1" if replicas else "replicas-0"
    figures.put(f"durability_acked_turns_lost[redis-{label}]", lost)
    figures.put(f"durability_turns_refused[redis-{label}]", refused)
    if replicas:
        assert lost == 0 and refused == TURNS and len(acked) == TURNS
    else:  # what the option is for: the lag window's acknowledged turns are gone
        assert refused == 0 and lost == TURNS


@pytest.mark.redis
async def test_the_async_saver_waits_for_its_replicas_too() -> None:
    prefix = f"adur{uuid.uuid4().hex[:8]}"
    with RedisPair.running() as pair:
        async with AsyncRedisSaver.from_conn_string(
            pair.primary.url, prefix=prefix, replicas=1, replica_timeout=2.0
        ) as saver:
            await saver.asetup()
            graph = chat_graph(saver)
            await graph.ainvoke(turn_input("replicated"), thread_config("a"))
            pair.lag()
            with pytest.raises(NotReplicatedError):
                await graph.ainvoke(turn_input("not replicated"), thread_config("b"))


def test_the_option_is_checked(postgres_dsn: str) -> None:
    with PostgresSaver.from_conn_string(postgres_dsn) as ours:
        for bad in (-1, True, 2.0):
            with pytest.raises(ConfigurationError, match="replicas"):
                PostgresSaver(ours.conn, replicas=bad)  # type: ignore[arg-type]
            with pytest.raises(ConfigurationError, match="replicas"):
                PostgresMemoryStore(ours.conn, index=index_config(), replicas=bad)  # type: ignore[arg-type]
    client = redis.Redis()
    for bad in (-1, 1.5, True, "1"):
        with pytest.raises(ConfigurationError, match="replicas"):
            RedisSaver(client, replicas=bad)  # type: ignore[arg-type]
    for timeout in (0, -1, float("nan"), 10_000):
        with pytest.raises(ConfigurationError, match="replica_timeout"):
            RedisSaver(client, replicas=1, replica_timeout=timeout)


# --------------------------------------------------------------------------- Postgres


@pytest.mark.postgres
def test_postgres_components_check_at_setup_that_commits_wait_for_their_replicas() -> None:
    """On Postgres the server decides what a commit waits for; ``replicas=N`` makes
    ``setup()`` refuse a server whose commits would be acknowledged without N standbys
    (the acknowledged-turn figures with a synchronous standby are in test_rel_failover)."""
    with PostgresPair.running(synchronous=True) as pair:
        with PostgresSaver.from_conn_string(pair.dsn, replicas=1) as saver:
            saver.setup()  # synchronous_standby_names = 'standby', synchronous_commit = on
        with PostgresMemoryStore.from_conn_string(
            pair.dsn, index=index_config(), replicas=1
        ) as store:
            store.setup()
        with (
            PostgresSaver.from_conn_string(pair.dsn, replicas=2) as saver,
            pytest.raises(ConfigurationError, match=r"wait for 1 standby.*FIRST 2"),
        ):
            saver.setup()
        local = {"kwargs": {"options": "-c synchronous_commit=local"}}
        with (
            PostgresMemoryStore.from_conn_string(
                pair.dsn, index=index_config(), replicas=1, pool_config=local
            ) as store,
            pytest.raises(ConfigurationError, match="synchronous_commit = 'local'"),
        ):
            store.setup()


@pytest.mark.postgres
async def test_an_asynchronous_standby_is_refused_when_replicas_are_required() -> None:
    with PostgresPair.running(synchronous=False) as pair:
        async with AsyncPostgresSaver.from_conn_string(pair.dsn, replicas=1) as saver:
            with pytest.raises(ConfigurationError, match="synchronous_standby_names = ''"):
                await saver.setup()
