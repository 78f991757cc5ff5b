"""Concurrent async batches merged into few runs, each caller getting exactly its own outcome."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.base import GetOp, Op, PutOp

from langgraph_memory.errors import InvalidValueError
from langgraph_memory.store.postgres._coalesce import Coalescer


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


@settings(max_examples=60, deadline=None)
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


async def test_a_cancelled_caller_does_not_break_the_others() -> None:
    _runs, run = _fake_store()
    coalescer = Coalescer(run, max_running=1)
    first = asyncio.ensure_future(coalescer.submit([GetOp(("a",), "1")]))
    second = asyncio.ensure_future(coalescer.submit([GetOp(("a",), "2")]))
    first.cancel()
    assert await second == ["2"]
    with pytest.raises(asyncio.CancelledError):
        await first
