"""Fault injection on Redis: a test-owned, durable redis-server (AOF, fsync always) is
SIGKILLed and restarted on the same port while graphs run on ``RedisSaver`` (through
``with_thread_lease``, so the lease backend is under fire too) and ``AsyncRedisSaver``.

Checked: the SAME saver objects recover after the restart (nothing rebuilt); during the
outage every call fails fast (< 10 s) with ``BackendUnavailableError`` (a
``ConnectionError``); afterwards every thread holds every acknowledged turn, whole and in
order, and no turn is half-written.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph_recall.errors import BackendUnavailableError, LangGraphRecallError
from langgraph_recall.lease import with_thread_lease
from tests.graph_helpers import chat_graph
from tests.reliability._figures import Figures
from tests.reliability._servers import OwnedRedis
from tests.reliability._workload import Ledger, check_thread, run_turns, thread_config, turn_input

# serial: its time bounds are measured alone (scripts/test.sh)
pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.serial]

THREADS = [f"rthread-{i}" for i in range(12)]
KILLS = 3
UP_SECONDS = 0.6
DOWN_SECONDS = 0.4
FAIL_FAST_SECONDS = 10.0


def outage_cycles(server: OwnedRedis, ledger: Ledger, restarts: list[float]) -> None:
    """KILLS × (run UP_SECONDS, SIGKILL, stay down DOWN_SECONDS, restart)."""
    for _ in range(KILLS):
        time.sleep(UP_SECONDS)
        server.kill()
        time.sleep(DOWN_SECONDS)
        server.start()
        restarts.append(time.monotonic())
    time.sleep(UP_SECONDS)


def assert_ledger(ledger: Ledger, figures: Figures, name: str, restarts: list[float]) -> int:
    assert ledger.failure_seconds, "no call failed: the kills did not hit the workload"
    assert max(ledger.failure_seconds) < FAIL_FAST_SECONDS, max(ledger.failure_seconds)
    recovery = [ledger.first_success_after(moment) for moment in restarts]
    assert all(r is not None for r in recovery), "no successful call after a restart"
    figures.add("redis_kills", KILLS)
    figures.extend(f"{name}_recovery_seconds", recovery)
    figures.extend("fail_fast_seconds", [max(ledger.failure_seconds)])
    figures.put(f"{name}_error_types", dict(ledger.error_types))
    figures.add("acknowledged_turns_checked", sum(len(v) for v in ledger.acked.values()))
    return sum(len(v) for v in ledger.acked.values())


def test_sync_saver_and_lease_survive_sigkill(owned_redis: OwnedRedis, figures: Figures) -> None:
    ledger = Ledger()
    restarts: list[float] = []
    with RedisSaver.from_conn_string(owned_redis.url, prefix="rel") as saver:
        saver.setup()
        graph = with_thread_lease(chat_graph(saver), strategy="wait", wait_timeout=5.0, ttl=1.5)
        stop = threading.Event()

        def worker(thread_ids: list[str]) -> None:
            run_turns(graph, thread_ids, ledger, stop, pause=0.02)

        workers = [threading.Thread(target=worker, args=(THREADS[k::4],)) for k in range(4)]
        for w in workers:
            w.start()
        outage_cycles(owned_redis, ledger, restarts)
        stop.set()
        for w in workers:
            w.join(60)
        assert not any(w.is_alive() for w in workers)

        # the same saver and lease backend, no rebuild: one more turn on every thread
        for tid in THREADS:
            text = f"{tid}#final"
            graph.invoke(turn_input(text), thread_config(tid))
            ledger.ok(tid, text)
        # every error was ours: unavailable backend (or lease errors derived from it)
        for error_type in ledger.error_types:
            assert error_type.startswith("langgraph_recall.errors."), ledger.error_types
        assert any("BackendUnavailableError" in t for t in ledger.error_types)
        in_doubt = 0
        for tid in THREADS:
            state = graph.get_state(thread_config(tid)).values
            in_doubt += check_thread(tid, state["messages"], ledger.acked[tid], ledger.failed[tid])
    acked = assert_ledger(ledger, figures, "redis_sync", restarts)
    figures.add("in_doubt_turns", in_doubt)
    assert acked > len(THREADS)


async def test_async_saver_survives_sigkill(owned_redis: OwnedRedis, figures: Figures) -> None:
    ledger = Ledger()
    restarts: list[float] = []
    async with AsyncRedisSaver.from_conn_string(owned_redis.url, prefix="arel") as saver:
        await saver.asetup()
        graph = chat_graph(saver)
        stop = asyncio.Event()

        async def client(tid: str) -> None:
            n = 0
            while not stop.is_set():
                text = f"{tid}#{n}"
                start = time.monotonic()
                try:
                    await graph.ainvoke(turn_input(text), thread_config(tid))
                except Exception as exc:
                    ledger.fail(tid, text, exc, time.monotonic() - start)
                    await asyncio.sleep(0.02)
                else:
                    ledger.ok(tid, text)
                n += 1

        tasks = [asyncio.create_task(client(tid)) for tid in THREADS]
        await asyncio.to_thread(outage_cycles, owned_redis, ledger, restarts)
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), 60)

        for tid in THREADS:
            text = f"{tid}#final"
            await graph.ainvoke(turn_input(text), thread_config(tid))
            ledger.ok(tid, text)
        for error_type in ledger.error_types:
            assert error_type == "langgraph_recall.errors.BackendUnavailableError", (
                ledger.error_types
            )
        in_doubt = 0
        for tid in THREADS:
            state = (await graph.aget_state(thread_config(tid))).values
            in_doubt += check_thread(tid, state["messages"], ledger.acked[tid], ledger.failed[tid])
    assert_ledger(ledger, figures, "redis_async", restarts)
    figures.add("in_doubt_turns", in_doubt)


def test_acknowledged_writes_survive_sigkill_without_traffic(owned_redis: OwnedRedis) -> None:
    """Kill right after the last acknowledged put: with fsync always it is on disk."""
    with RedisSaver.from_conn_string(owned_redis.url, prefix="dur") as saver:
        graph = chat_graph(saver)
        for n in range(5):
            graph.invoke(turn_input(f"d#{n}"), thread_config("d"))
        owned_redis.kill()
        start = time.monotonic()
        with pytest.raises(BackendUnavailableError) as info:
            graph.invoke(turn_input("d#down"), thread_config("d"))
        assert time.monotonic() - start < FAIL_FAST_SECONDS
        assert isinstance(info.value, ConnectionError)
        assert isinstance(info.value, LangGraphRecallError)
        assert "127.0.0.1" in str(info.value)
        owned_redis.start()
        messages = graph.get_state(thread_config("d")).values["messages"]
        check_thread("d", messages, [f"d#{n}" for n in range(5)], ["d#down"])
        assert [m.content for m in messages][-3:] == ["d#4", "a:d#4", "b:d#4"]
