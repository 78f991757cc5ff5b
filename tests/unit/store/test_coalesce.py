"""Concurrent async batches merged into few runs, each caller getting exactly its own outcome."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.base import GetOp, Op, PutOp

from langgraph_recall.errors import InvalidValueError
from langgraph_recall.store._coalesce import Coalescer, Stall
from tests._hypothesis import thorough

# serial: its time bounds are measured alone (scripts/test.sh)
pytestmark = pytest.mark.serial


def _fake_store() -> tuple[list[list[Op]], Any]:
    """A batch runner that answers each op with its own key, failing batches with a "bad" key."""
    runs: list[list[Op]] = []

    async def run(ops: list[Op]) -> list[Any]:
        runs.append(list(ops))
        await asyncio.sleep(0)
        if any(getattr(op, "key", "") == "bad" for op in ops):
            raise InvalidValueError("bad key")
        return [op.key for op in ops]  # type: ignore[union-attr]

    return runs, run


async def test_concurrent_calls_are_merged_not_run_one_by_one() -> None:
    runs, run = _fake_store()
    coalescer = Coalescer(run, max_running=2)
    results = await asyncio.gather(*(coalescer.submit([GetOp(("a",), str(i))]) for i in range(500)))
    assert results == [[str(i)] for i in range(500)]
    assert len(runs) <= 10  # 500 calls, a handful of runs


async def test_a_bad_call_fails_alone_and_the_others_are_run() -> None:
    _runs, run = _fake_store()
    coalescer = Coalescer(run, max_running=1)
    calls = [coalescer.submit([PutOp(("a",), key, {})]) for key in ("x", "bad", "y")]
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    assert outcomes[0] == ["x"] and outcomes[2] == ["y"]
    assert isinstance(outcomes[1], InvalidValueError)


async def test_two_writes_of_one_key_never_share_a_run() -> None:
    runs, run = _fake_store()
    coalescer = Coalescer(run, max_running=1)
    await asyncio.gather(*(coalescer.submit([PutOp(("a",), "same", {"n": i})]) for i in range(5)))
    assert all(sum(isinstance(op, PutOp) for op in ops) == 1 for ops in runs)
    assert [ops[0].value for ops in runs] == [{"n": i} for i in range(5)]  # FIFO


async def test_writes_waiting_on_a_busy_namespace_run_together_next() -> None:
    """Callers that each block on one write (threads calling the sync API) leave a few
    units queued at a time, all in the namespace a running batch writes in: they go
    together into the next batch, not one batch each behind it."""
    runs: list[list[Op]] = []
    release = asyncio.Event()

    async def run(ops: list[Op]) -> list[Any]:
        runs.append(list(ops))
        if len(runs) == 1:
            await release.wait()
        return [op.key for op in ops]  # type: ignore[union-attr]

    coalescer = Coalescer(run, max_running=10)
    first = asyncio.ensure_future(coalescer.submit([PutOp(("a",), "k0", {})]))
    await asyncio.sleep(0.01)
    rest = [
        asyncio.ensure_future(coalescer.submit([PutOp(("a",), f"k{i}", {})])) for i in range(1, 10)
    ]
    await asyncio.sleep(0.01)
    assert coalescer._running == 1  # no drain started for writes it could not take
    release.set()
    assert await asyncio.gather(first, *rest) == [[f"k{i}"] for i in range(10)]
    assert [len(ops) for ops in runs] == [1, 9]


@settings(max_examples=thorough(60), deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["a", "b", "c", "bad", "d"]), min_size=1, max_size=4),
        min_size=1,
        max_size=40,
    ),
    st.integers(1, 4),
    st.integers(1, 12),
)
def test_every_caller_gets_exactly_its_own_outcome(
    units: list[list[str]], max_running: int, max_ops: int
) -> None:
    """Property: however calls are merged (any sizes, conflicts, failures, concurrency),
    a call fails iff its own ops include the bad one, and otherwise gets its own results;
    no run exceeds ``max_ops`` unless one call alone is larger, and no run writes a key twice
    across calls."""

    async def scenario() -> None:
        runs, run = _fake_store()
        coalescer = Coalescer(run, max_running=max_running, max_ops=max_ops)
        calls = [
            coalescer.submit([PutOp(("n",), key, {"unit": n}) for key in keys])
            for n, keys in enumerate(units)
        ]
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
        for keys, outcome in zip(units, outcomes, strict=True):
            if "bad" in keys:
                assert isinstance(outcome, InvalidValueError)
            else:
                assert outcome == keys
        merged = [ops for ops in runs if len(ops) > 0]
        lengths = {len(keys) for keys in units}
        assert all(len(ops) <= max(max_ops, *lengths) for ops in merged)
        for ops in merged:  # writes of one key from different calls never share a run
            writers: dict[str, set[int]] = {}
            for op in ops:
                writers.setdefault(op.key, set()).add(op.value["unit"])  # type: ignore[union-attr,index]
            assert all(len(callers) == 1 for callers in writers.values()), writers

    asyncio.run(scenario())


@settings(max_examples=thorough(60), deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["a1", "a2", "b1", "b2", "c1"]), min_size=1, max_size=3),
        min_size=1,
        max_size=40,
    ),
    st.lists(st.integers(0, 3), min_size=1, max_size=8),
    st.integers(1, 4),
    st.integers(1, 12),
)
def test_writes_of_one_key_run_in_order_and_of_one_namespace_never_in_two_drains_at_once(
    units: list[list[str]], pauses: list[int], max_running: int, max_ops: int
) -> None:
    """Property: whatever the interleaving of the drains (runs that take different times),
    no two runs in flight write in one namespace (a drain never waits on the namespace
    lock another holds), and each key's writes are applied in the order the calls were
    made. Keys ``a1``, ``a2`` live in namespace ``("a",)``, and so on."""

    async def scenario() -> None:
        in_flight: set[str] = set()
        applied: dict[str, list[int]] = {}
        count = 0

        async def run(ops: list[Op]) -> list[Any]:
            nonlocal count
            namespaces = {op.namespace[0] for op in ops if isinstance(op, PutOp)}
            assert in_flight.isdisjoint(namespaces), (in_flight, namespaces)
            in_flight.update(namespaces)
            try:
                for _ in range(pauses[count % len(pauses)]):
                    await asyncio.sleep(0)
                count += 1
                for op in ops:
                    if isinstance(op, PutOp):
                        applied.setdefault(op.key, []).append(op.value["unit"])  # type: ignore[index]
            finally:
                in_flight.difference_update(namespaces)
            return [op.key for op in ops]  # type: ignore[union-attr]

        coalescer = Coalescer(run, max_running=max_running, max_ops=max_ops)
        calls = [
            coalescer.submit([PutOp((key[0],), key, {"unit": n}) for key in dict.fromkeys(keys)])
            for n, keys in enumerate(units)
        ]
        outcomes = await asyncio.gather(*calls)
        assert outcomes == [list(dict.fromkeys(keys)) for keys in units]
        for key, order in applied.items():
            assert order == sorted(order), (key, order)
            assert order == [n for n, keys in enumerate(units) if key in keys]
        assert not coalescer._queued_writes  # every queued write counted out, none left over
        assert (coalescer._running, coalescer._unstarted) == (0, 0)  # every drain ended

    asyncio.run(scenario())


@settings(max_examples=thorough(60), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),
            st.lists(st.sampled_from(["a", "b", "c", "bad", "d"]), min_size=1, max_size=4),
        ),
        min_size=1,
        max_size=40,
    ),
    st.lists(st.integers(0, 30), max_size=6),
    st.integers(1, 4),
    st.integers(1, 12),
)
def test_reads_beside_writes_each_get_their_own_outcome_and_cancelled_calls_never_run(
    units: list[tuple[bool, list[str]]], cancelled: list[int], max_running: int, max_ops: int
) -> None:
    """Property: with reads (their own queue) and writes mixed, every caller still gets
    exactly its own outcome, no run holds more than ``max_ops`` operations unless one call
    alone is larger, and a call cancelled before any drain took it is never run."""

    async def scenario() -> None:
        runs, run = _fake_store()
        coalescer = Coalescer(run, max_running=max_running, max_ops=max_ops)
        tasks = [
            asyncio.ensure_future(
                coalescer.submit(
                    [
                        PutOp(("n",), key, {"unit": n}) if write else GetOp(("n",), key)
                        for key in keys
                    ]
                )
            )
            for n, (write, keys) in enumerate(units)
        ]
        await asyncio.sleep(0)  # every call is queued; no drain has started yet
        gone = {n for n in cancelled if n < len(tasks)}
        for n in gone:
            tasks[n].cancel()
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        for n, ((_write, keys), outcome) in enumerate(zip(units, outcomes, strict=True)):
            if n in gone:
                assert isinstance(outcome, asyncio.CancelledError)
            elif "bad" in keys:
                assert isinstance(outcome, InvalidValueError)
            else:
                assert outcome == keys
        lengths = {len(keys) for _, keys in units}
        assert all(len(ops) <= max(max_ops, *lengths) for ops in runs)
        ran = {op.value["unit"] for ops in runs for op in ops if isinstance(op, PutOp)}  # type: ignore[index]
        assert ran.isdisjoint(gone)  # cancelled before the first drain ran: never run
        assert not coalescer._queued_writes  # taken, failed or cancelled: counted out

    asyncio.run(scenario())


async def test_a_cancelled_caller_does_not_break_the_others() -> None:
    _runs, run = _fake_store()
    coalescer = Coalescer(run, max_running=1)
    first = asyncio.ensure_future(coalescer.submit([GetOp(("a",), "1")]))
    second = asyncio.ensure_future(coalescer.submit([GetOp(("a",), "2")]))
    first.cancel()
    assert await second == ["2"]
    with pytest.raises(asyncio.CancelledError):
        await first


class _Stalled(Exception):
    def __init__(self, stall: Stall) -> None:
        super().__init__(f"stalled ({stall})")
        self.queued = stall.queued
        self.stall = stall


async def test_a_server_that_answers_nothing_fails_every_waiting_call_in_one_timeout() -> None:
    """Hung first batch: the call in flight and every queued call fail after one
    ``stall_timeout`` (+ ε), the queued ones never run, nothing hangs."""
    runs: list[list[Op]] = []

    async def hung(ops: list[Op]) -> list[Any]:
        runs.append(list(ops))
        await asyncio.Event().wait()  # never answers
        raise AssertionError("unreachable")

    coalescer = Coalescer(hung, max_running=1, max_ops=1, stall_timeout=0.2, on_stall=_Stalled)
    loop = asyncio.get_running_loop()
    started = loop.time()
    outcomes = await asyncio.gather(
        *(coalescer.submit([PutOp(("a",), str(i), {"n": i})]) for i in range(5)),
        return_exceptions=True,
    )
    elapsed = loop.time() - started
    assert all(isinstance(o, _Stalled) for o in outcomes), outcomes
    assert [o.queued for o in outcomes if isinstance(o, _Stalled)] == [False] + [True] * 4
    assert len(runs) == 1  # the queued calls left the queue unrun
    assert elapsed < 0.2 + 1.0


async def test_a_long_queue_behind_a_working_server_waits_and_never_stalls() -> None:
    """Each batch answers within the timeout; the last call waits ~6 timeouts in the
    queue and still succeeds: only a server answering nothing fails calls."""
    coalescer: Coalescer

    async def slow(ops: list[Op]) -> list[Any]:
        for _ in range(3):
            await asyncio.sleep(0.02)
            coalescer.progress()
        return [op.key for op in ops]  # type: ignore[union-attr]

    coalescer = Coalescer(slow, max_running=1, max_ops=1, stall_timeout=0.1, on_stall=_Stalled)
    keys = [str(i) for i in range(10)]
    outcomes = await asyncio.gather(*(coalescer.submit([GetOp(("a",), k)]) for k in keys))
    assert outcomes == [[k] for k in keys]


async def test_a_slow_embedder_is_not_a_frozen_server() -> None:
    """A batch whose embedding alone takes several stall timeouts (a loaded machine, a big
    batch) succeeds, and so do the calls queued behind it; a server that answers nothing
    after the embedding still fails them."""
    coalescer: Coalescer
    hang = asyncio.Event()

    async def embed_then_write(ops: list[Op]) -> list[Any]:
        with coalescer.local_work():
            await asyncio.sleep(0.5)  # 5 stall timeouts of embedding
        if any(getattr(op, "key", "") == "hang" for op in ops):
            await hang.wait()  # the database never answers
        return [op.key for op in ops]  # type: ignore[union-attr]

    coalescer = Coalescer(
        embed_then_write, max_running=1, max_ops=1, stall_timeout=0.1, on_stall=_Stalled
    )
    outcomes = await asyncio.gather(*(coalescer.submit([GetOp(("a",), k)]) for k in "xy"))
    assert outcomes == [["x"], ["y"]]
    with pytest.raises(_Stalled):
        await asyncio.wait_for(coalescer.submit([GetOp(("a",), "hang")]), timeout=5)
    hang.set()
