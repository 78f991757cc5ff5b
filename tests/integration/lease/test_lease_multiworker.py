"""Four uvicorn workers, one database: no turn is lost with our savers + the lease.

40 threads × 5 turns; every turn goes to a random worker (no sticky sessions), the
turns of one thread are sequential, the threads run concurrently. With Postgres or
Redis every thread ends with its 5 turns in order, whichever worker is asked. With
``InMemorySaver`` each worker only knows the turns it served itself, so turns are lost.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from tests.integration.lease.lease_workers import (
    expected_conversation,
    run_conversations,
    start_workers,
)

THREADS = 40
TURNS = 5
WORKERS = 4

pytestmark = pytest.mark.slow


def _assert_every_turn_kept(urls: list[str], tmp_prefix: str, seed: int) -> None:
    run = run_conversations(urls, threads=THREADS, turns=TURNS, seed=seed, prefix=tmp_prefix)
    assert run.statuses == [200] * (THREADS * TURNS)
    spread = [len(workers) for workers in run.workers_per_thread.values()]
    assert sum(spread) / len(spread) > 2  # turns really did hop between workers
    for thread_id, reply in run.last_reply.items():
        expected = expected_conversation(thread_id, TURNS)
        assert reply["messages"] == expected, thread_id
        assert run.lost_turns(thread_id, TURNS) == 0
    with httpx.Client(timeout=30) as client:
        for index, thread_id in enumerate(sorted(run.last_reply)):
            url = urls[index % len(urls)]  # read back through every worker
            stored = client.get(f"{url}/threads/{thread_id}").json()["messages"]
            assert stored == expected_conversation(thread_id, TURNS)


@pytest.mark.postgres
def test_postgres_workers_keep_every_turn(postgres_dsn: str, tmp_path: Path) -> None:
    from langgraph_recall.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(postgres_dsn) as saver:
        saver.setup()
    env = {
        "LANGGRAPH_RECALL_CHECKPOINTER": "postgres",
        "LANGGRAPH_RECALL_POSTGRES_URI": postgres_dsn,
        "LANGGRAPH_RECALL_SKIP_SETUP": "1",
        "LANGGRAPH_RECALL_LEASE": "reject",
    }
    with start_workers(WORKERS, env, tmp_path) as workers:
        _assert_every_turn_kept(workers.urls, "pg", seed=11)


@pytest.mark.redis
def test_redis_workers_keep_every_turn(redis_url: str, redis_prefix: str, tmp_path: Path) -> None:
    env = {
        "LANGGRAPH_RECALL_CHECKPOINTER": "redis",
        "LANGGRAPH_RECALL_REDIS_URL": redis_url,
        "LANGGRAPH_RECALL_REDIS_PREFIX": redis_prefix,
        "LANGGRAPH_RECALL_LEASE": "reject",
    }
    with start_workers(WORKERS, env, tmp_path) as workers:
        _assert_every_turn_kept(workers.urls, "rd", seed=12)


def test_in_memory_saver_loses_turns_across_workers(tmp_path: Path) -> None:
    env = {"LANGGRAPH_RECALL_CHECKPOINTER": "memory", "LANGGRAPH_RECALL_LEASE": "reject"}
    with start_workers(WORKERS, env, tmp_path) as workers:
        run = run_conversations(workers.urls, threads=THREADS, turns=TURNS, seed=13, prefix="mem")
    assert run.statuses == [200] * (THREADS * TURNS)  # every request "succeeded"...
    lost = {t: run.lost_turns(t, TURNS) for t in run.last_reply}
    intact = sorted(t for t, n in lost.items() if n == 0)
    total_lost = sum(lost.values())
    print(
        f"\nInMemorySaver, {WORKERS} workers, {THREADS} threads x {TURNS} turns: "
        f"{total_lost} of {THREADS * TURNS} turns lost, {len(intact)}/{THREADS} threads intact"
    )
    # ...but a thread keeps all its turns only if they happened to land on one worker.
    for thread_id in intact:
        assert len(run.workers_per_thread[thread_id]) == 1
    for thread_id, count in lost.items():
        if len(run.workers_per_thread[thread_id]) > 1:
            assert count > 0, thread_id
    assert total_lost > THREADS * TURNS // 4


def _double_text(urls: list[str], thread_id: str) -> list[httpx.Response]:
    """Send two turns of one thread at the same time, each to a different worker."""

    async def main() -> list[httpx.Response]:
        async with httpx.AsyncClient(timeout=60) as client:
            return list(
                await asyncio.gather(
                    *(
                        client.post(f"{url}/threads/{thread_id}/turns", json={"message": f"m{i}"})
                        for i, url in enumerate(urls[:2])
                    )
                )
            )

    return asyncio.run(main())


def _backend_env(kind: str, request: pytest.FixtureRequest) -> dict[str, str]:
    if kind == "postgres":
        from langgraph_recall.checkpoint.postgres import PostgresSaver

        dsn = request.getfixturevalue("postgres_dsn")
        with PostgresSaver.from_conn_string(dsn) as saver:
            saver.setup()
        return {
            "LANGGRAPH_RECALL_CHECKPOINTER": "postgres",
            "LANGGRAPH_RECALL_POSTGRES_URI": dsn,
            "LANGGRAPH_RECALL_SKIP_SETUP": "1",
        }
    return {
        "LANGGRAPH_RECALL_CHECKPOINTER": "redis",
        "LANGGRAPH_RECALL_REDIS_URL": request.getfixturevalue("redis_url"),
        "LANGGRAPH_RECALL_REDIS_PREFIX": request.getfixturevalue("redis_prefix"),
    }


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("redis", marks=pytest.mark.redis),
    ],
)
def test_double_texting_across_workers(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    env = {**_backend_env(kind, request), "LANGGRAPH_RECALL_REPLY_DELAY": "1.0"}
    reject_env = {**env, "LANGGRAPH_RECALL_LEASE": "reject"}
    wait_env = {**env, "LANGGRAPH_RECALL_LEASE": "wait"}
    with (
        start_workers(2, reject_env, tmp_path / "reject") as rejecting,
        start_workers(2, wait_env, tmp_path / "wait") as waiting,
    ):
        responses = _double_text(rejecting.urls, "dt-reject")
        assert sorted(r.status_code for r in responses) == [200, 409]
        busy = next(r for r in responses if r.status_code == 409)
        assert "'dt-reject' is busy" in busy.json()["detail"]
        stored = httpx.get(f"{rejecting.urls[0]}/threads/dt-reject").json()["messages"]
        assert [m["role"] for m in stored] == ["human", "ai"]

        responses = _double_text(waiting.urls, "dt-wait")
        assert [r.status_code for r in responses] == [200, 200]
        replies = sorted(r.json()["reply"] for r in responses)
        assert [reply[:8] for reply in replies] == ["[turn 1]", "[turn 2]"]
        stored = httpx.get(f"{waiting.urls[1]}/threads/dt-wait").json()["messages"]
        assert [m["role"] for m in stored] == ["human", "ai", "human", "ai"]
        assert stored[1]["content"].endswith(stored[0]["content"])  # no interleaving
        assert stored[3]["content"].endswith(stored[2]["content"])

        assert httpx.delete(f"{waiting.urls[0]}/threads/dt-wait").status_code == 204
        assert httpx.get(f"{waiting.urls[1]}/threads/dt-wait").status_code == 404


@pytest.mark.postgres
def test_uvicorn_multiprocess_workers_keep_every_turn(postgres_dsn: str, tmp_path: Path) -> None:
    """The documented deployment: ``uvicorn graphs.server:app --workers 4``."""
    from psycopg.conninfo import conninfo_to_dict

    from langgraph_recall.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(postgres_dsn) as saver:
        saver.setup()
    env = {
        "LANGGRAPH_RECALL_CHECKPOINTER": "postgres",
        "LANGGRAPH_RECALL_POSTGRES_URI": postgres_dsn,
        "LANGGRAPH_RECALL_SKIP_SETUP": "1",
        "LANGGRAPH_RECALL_LEASE": "wait",
    }
    with start_workers(1, env, tmp_path, uvicorn_workers=WORKERS) as server:
        dbname = conninfo_to_dict(postgres_dsn)["dbname"]
        location = httpx.get(f"{server.urls[0]}/healthz").json()["location"]
        assert location.endswith(f"/{dbname}"), location  # the README's variable was read
        run = run_conversations(server.urls, threads=20, turns=TURNS, seed=14, prefix="uv")
    assert run.statuses == [200] * (20 * TURNS)
    for thread_id, reply in run.last_reply.items():
        assert reply["messages"] == expected_conversation(thread_id, TURNS)
    pids = set().union(*run.workers_per_thread.values())
    print(f"\nuvicorn --workers {WORKERS}: requests served by {len(pids)} worker processes")
