"""Concurrent runs on one thread, crashed and stale workers, deletes — on Postgres and Redis.

Each "worker" is a separate saver (its own connections) on the same database / prefix.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import ExitStack
from typing import Any

import pytest

from langgraph_recall.errors import LeaseLostError, StaleWriteError, ThreadBusyError
from langgraph_recall.lease import FENCE_CONFIG_KEY, Lease, with_thread_lease
from tests.integration.lease.conftest import SaverFactory
from tests.integration.lease.lease_graphs import (
    Recorder,
    async_sleeping_node,
    build_log_graph,
    cfg,
    sleeping_node,
)
from tests.integration.lease.lease_workers import REPO_ROOT

CONCURRENT = 4


def _run_concurrently(graphs: list[Any], thread_id: str) -> list[str]:
    """Invoke each graph once on ``thread_id`` at the same moment; outcome per run."""
    barrier = threading.Barrier(len(graphs))
    outcomes: list[str] = [""] * len(graphs)

    def turn(index: int) -> None:
        barrier.wait()
        try:
            graphs[index].invoke({"log": []}, cfg(thread_id, f"w{index}"))
            outcomes[index] = "ran"
        except ThreadBusyError as exc:
            assert repr(thread_id) in str(exc)
            outcomes[index] = "busy"

    runners = [threading.Thread(target=turn, args=(i,)) for i in range(len(graphs))]
    for runner in runners:
        runner.start()
    for runner in runners:
        runner.join()
    return outcomes


def test_reject_runs_exactly_one_concurrent_turn(savers: SaverFactory) -> None:
    recorder = Recorder()
    with ExitStack() as stack:
        workers = [stack.enter_context(savers.sync()) for _ in range(CONCURRENT)]
        graphs = [
            with_thread_lease(build_log_graph(s, sleeping_node(recorder, 1.0)), ttl=5)
            for s in workers
        ]
        outcomes = _run_concurrently(graphs, "t-reject")
        assert sorted(outcomes) == ["busy"] * (CONCURRENT - 1) + ["ran"]
        winner = f"w{outcomes.index('ran')}"
        assert recorder.events == [f"start {winner}", f"end {winner}"]
        state = graphs[0].get_state(cfg("t-reject"))
        assert state.values["log"] == [winner, "done"]


def test_wait_runs_concurrent_turns_one_after_another(savers: SaverFactory) -> None:
    recorder = Recorder()
    with ExitStack() as stack:
        workers = [stack.enter_context(savers.sync()) for _ in range(CONCURRENT)]
        graphs = [
            with_thread_lease(
                build_log_graph(s, sleeping_node(recorder, 0.2)),
                strategy="wait",
                wait_timeout=20,
                ttl=5,
            )
            for s in workers
        ]
        outcomes = _run_concurrently(graphs, "t-wait")
        assert outcomes == ["ran"] * CONCURRENT
        recorder.assert_not_interleaved()
        order = [e.removeprefix("end ") for e in recorder.events if e.startswith("end ")]
        state = graphs[-1].get_state(cfg("t-wait"))
        assert state.values["log"] == [item for name in order for item in (name, "done")]


async def test_async_reject_and_wait(savers: SaverFactory) -> None:
    recorder = Recorder()
    async with savers.async_() as first, savers.async_() as second, savers.async_() as third:
        workers = [first, second, third]
        rejecting = [
            with_thread_lease(build_log_graph(s, async_sleeping_node(recorder, 1.0)), ttl=5)
            for s in workers
        ]
        outcomes = await asyncio.gather(
            *(g.ainvoke({"log": []}, cfg("a-reject", f"r{i}")) for i, g in enumerate(rejecting)),
            return_exceptions=True,
        )
        assert sum(isinstance(o, ThreadBusyError) for o in outcomes) == len(workers) - 1
        assert sum(isinstance(o, dict) for o in outcomes) == 1

        recorder.events.clear()
        waiting = [
            with_thread_lease(
                build_log_graph(s, async_sleeping_node(recorder, 0.2)),
                strategy="wait",
                wait_timeout=20,
                ttl=5,
            )
            for s in workers
        ]
        results = await asyncio.gather(
            *(g.ainvoke({"log": []}, cfg("a-wait", f"w{i}")) for i, g in enumerate(waiting))
        )
        assert sorted(len(r["log"]) for r in results) == [2, 4, 6]
        recorder.assert_not_interleaved()
        state = await waiting[0].aget_state(cfg("a-wait"))
        order = [e.removeprefix("end ") for e in recorder.events if e.startswith("end ")]
        assert state.values["log"] == [item for name in order for item in (name, "done")]


@pytest.mark.serial  # the TTL is timed
def test_killed_lease_holder_frees_the_thread_after_ttl(savers: SaverFactory) -> None:
    ttl = 1.5
    command = [sys.executable, "-m", "tests.integration.lease.lease_holder", savers.kind]
    command += [savers.url, savers.prefix, "t-killed", str(ttl)]
    holder = subprocess.Popen(
        command,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        line = holder.stdout.readline()  # blocks until the holder is inside its run
        assert line.startswith("RUNNING "), line
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
        killed_at = time.monotonic()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    recorder = Recorder()
    with savers.sync() as saver:
        graph = with_thread_lease(build_log_graph(saver, sleeping_node(recorder, 0)), ttl=5)
        with pytest.raises(ThreadBusyError, match="t-killed"):
            graph.invoke({"log": []}, cfg("t-killed", "survivor"))
        waiting = with_thread_lease(
            build_log_graph(saver, sleeping_node(recorder, 0)), strategy="wait", wait_timeout=10
        )
        waiting.invoke({"log": []}, cfg("t-killed", "survivor"))
        freed_after = time.monotonic() - killed_at
        assert freed_after < ttl + 2.0
        assert graph.get_state(cfg("t-killed")).values["log"] == ["survivor", "done"]
        assert recorder.events == ["start survivor", "end survivor"]


class StalledRenewals:
    """Wraps a real lease backend; ``renew`` hangs until released (a paused/partitioned worker)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.resume = threading.Event()

    def try_acquire(self, thread_id: str, owner: str, ttl: float) -> Lease | None:
        return self.backend.try_acquire(thread_id, owner, ttl)

    def renew(self, lease: Lease, ttl: float) -> bool:
        self.resume.wait(30)
        return bool(self.backend.renew(lease, ttl))

    def release(self, lease: Lease) -> None:
        self.backend.release(lease)


def test_stale_worker_cannot_overwrite_the_newer_state(savers: SaverFactory) -> None:
    recorder = Recorder()
    gate = threading.Event()
    with savers.sync() as saver_a, savers.sync() as saver_b:
        stalled = StalledRenewals(saver_a.lease_backend())
        worker_a = with_thread_lease(
            build_log_graph(saver_a, sleeping_node(recorder, 0, gate)),
            stalled,
            ttl=0.6,
            renew_every=0.2,
        )
        errors: list[BaseException] = []

        def run_a() -> None:
            try:
                worker_a.invoke({"log": []}, cfg("t-stale", "A"))
            except BaseException as exc:
                errors.append(exc)

        runner = threading.Thread(target=run_a)
        runner.start()
        while "start A" not in recorder.events:
            time.sleep(0.01)
        time.sleep(0.8)  # A's lease expires while A is paused
        worker_b = with_thread_lease(
            build_log_graph(saver_b, sleeping_node(recorder, 0)), strategy="wait", wait_timeout=5
        )
        worker_b.invoke({"log": []}, cfg("t-stale", "B"))  # B takes the thread over
        gate.set()
        stalled.resume.set()
        runner.join(timeout=30)
        assert len(errors) == 1 and isinstance(errors[0], LeaseLostError), errors
        assert "'t-stale'" in str(errors[0])
        assert worker_b.get_state(cfg("t-stale")).values["log"] == ["B", "done"]


def test_write_with_an_old_token_is_refused(savers: SaverFactory) -> None:
    with savers.sync() as saver:
        leases = saver.lease_backend()
        old = leases.try_acquire("t-token", "worker-a", 0.3)
        assert old is not None
        time.sleep(0.5)
        new = leases.try_acquire("t-token", "worker-b", 5)
        assert new is not None and new.token > old.token
        graph = build_log_graph(saver, sleeping_node(Recorder(), 0))
        fresh = cfg("t-token", "B")
        fresh["configurable"][FENCE_CONFIG_KEY] = new.token
        graph.invoke({"log": []}, fresh)
        stale = cfg("t-token", "A")
        stale["configurable"][FENCE_CONFIG_KEY] = old.token
        with pytest.raises(StaleWriteError):
            graph.invoke({"log": []}, stale)
        assert graph.get_state(cfg("t-token")).values["log"] == ["B", "done"]
        assert leases.renew(old, 5) is False
        leases.release(new)


def test_delete_is_not_undone_by_a_late_write(savers: SaverFactory) -> None:
    recorder = Recorder()
    gate = threading.Event()
    with savers.sync() as saver_a, savers.sync() as saver_b:
        plain = with_thread_lease(build_log_graph(saver_a, sleeping_node(recorder, 0)))
        plain.invoke({"log": []}, cfg("t-del", "first"))
        slow = with_thread_lease(
            build_log_graph(saver_a, sleeping_node(recorder, 0, gate)), ttl=5, renew_every=4
        )
        errors: list[BaseException] = []

        def late_run() -> None:
            try:
                slow.invoke({"log": []}, cfg("t-del", "late"))
            except BaseException as exc:
                errors.append(exc)

        runner = threading.Thread(target=late_run)
        runner.start()
        while "start late" not in recorder.events:
            time.sleep(0.01)
        saver_b.delete_thread("t-del")  # another worker deletes the thread mid-run
        gate.set()
        runner.join(timeout=30)
        assert len(errors) == 1 and isinstance(errors[0], LeaseLostError), errors
        assert isinstance(errors[0].__cause__, StaleWriteError)
        assert saver_b.get_tuple(cfg("t-del")) is None
        assert list(saver_b.list(cfg("t-del"))) == []
        plain.invoke({"log": []}, cfg("t-del", "again"))  # the thread starts over cleanly
        assert plain.get_state(cfg("t-del")).values["log"] == ["again", "done"]


async def test_async_delete_is_not_undone_by_a_late_write(savers: SaverFactory) -> None:
    async with savers.async_() as saver_a, savers.async_() as saver_b:
        started = asyncio.Event()
        proceed = asyncio.Event()

        async def work(state: Any) -> dict[str, list[str]]:
            started.set()
            await proceed.wait()
            return {"log": ["late"]}

        slow = with_thread_lease(build_log_graph(saver_a, work), ttl=5, renew_every=4)
        task = asyncio.create_task(slow.ainvoke({"log": []}, cfg("a-del")))
        await asyncio.wait_for(started.wait(), 10)
        await saver_b.adelete_thread("a-del")
        proceed.set()
        with pytest.raises(LeaseLostError, match="'a-del'"):
            await task
        assert await saver_b.aget_tuple(cfg("a-del")) is None


class AsyncStalledRenewals:
    """Async twin of :class:`StalledRenewals`."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.resume = asyncio.Event()

    async def atry_acquire(self, thread_id: str, owner: str, ttl: float) -> Lease | None:
        return await self.backend.atry_acquire(thread_id, owner, ttl)

    async def arenew(self, lease: Lease, ttl: float) -> bool:
        await self.resume.wait()
        return bool(await self.backend.arenew(lease, ttl))

    async def arelease(self, lease: Lease) -> None:
        await self.backend.arelease(lease)


async def test_async_stale_worker_cannot_overwrite_the_newer_state(savers: SaverFactory) -> None:
    async with savers.async_() as saver_a, savers.async_() as saver_b:
        started = asyncio.Event()
        proceed = asyncio.Event()

        async def paused(state: Any) -> dict[str, list[str]]:
            started.set()
            await proceed.wait()
            return {"log": ["A"]}

        stalled = AsyncStalledRenewals(saver_a.lease_backend())
        worker_a = with_thread_lease(
            build_log_graph(saver_a, paused), stalled, ttl=0.6, renew_every=0.2
        )
        task = asyncio.create_task(worker_a.ainvoke({"log": []}, cfg("a-stale")))
        await asyncio.wait_for(started.wait(), 10)
        await asyncio.sleep(0.8)  # A's lease expires while A is paused
        worker_b = with_thread_lease(
            build_log_graph(saver_b, async_sleeping_node(Recorder(), 0)),
            strategy="wait",
            wait_timeout=5,
        )
        await worker_b.ainvoke({"log": []}, cfg("a-stale", "B"))
        proceed.set()
        stalled.resume.set()
        with pytest.raises(LeaseLostError, match="'a-stale'"):
            await task
        state = await worker_b.aget_state(cfg("a-stale"))
        assert state.values["log"] == ["B", "done"]
