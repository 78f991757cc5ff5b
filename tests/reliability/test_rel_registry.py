"""Every Redis thread with checkpoints is listed.

``list(None)`` and ``delete_for_runs`` find threads through the registry. It used to be
written in a separate round trip after a thread's first put, so a connection lost right
after that put's script -- then a retry -- left a thread nobody could list or erase. Now
the put's own script registers the thread in its slot's registry. The property test
drops the connection at a random round trip (before the commands reach Redis, or after:
reply lost), retries the failed call as a user would, and checks that every thread with
data is listed and that ``delete_for_runs`` erases it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.base import empty_checkpoint
from redis import exceptions as redis_errors

from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph_recall.checkpoint.redis._keys import ThreadKeys
from langgraph_recall.errors import BackendUnavailableError
from tests._hypothesis import thorough
from tests.reliability._figures import Figures

pytestmark = pytest.mark.redis

THREADS = ["alpha", "beta", "gamma{1}", "delta"]


class FlakyConnection:
    """Drops the connection of the ``fail_at``-th round trip (0-based) of a saver: before
    its commands are sent, or after they ran (the reply is lost)."""

    def __init__(self, saver: Any, fail_at: int, after_sending: bool) -> None:
        self.saver = saver
        self.fail_at = fail_at
        self.after_sending = after_sending
        self.round_trips = 0
        self.injected = 0
        self.original = saver._send
        if isinstance(saver, AsyncRedisSaver):
            saver._send = self._asend
        else:
            saver._send = self._send

    def _due(self) -> bool:
        due = self.round_trips == self.fail_at
        self.round_trips += 1
        if due:
            self.injected += 1
        return due

    def _send(self, commands: Any) -> Any:
        if not self._due():
            return self.original(commands)
        if self.after_sending:
            self.original(commands)
        raise redis_errors.ConnectionError("connection dropped (injected)")

    async def _asend(self, commands: Any) -> Any:
        if not self._due():
            return await self.original(commands)
        if self.after_sending:
            await self.original(commands)
        raise redis_errors.ConnectionError("connection dropped (injected)")


def checkpoint_args(saver: Any, thread: str, run: str, step: int) -> tuple[Any, ...]:
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": [f"{thread}/{run}/{step}"]}
    cp["channel_versions"] = {"messages": saver.get_next_version(None, None)}
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    metadata = {"source": "loop", "step": step, "run_id": run}
    return config, cp, metadata, dict(cp["channel_versions"])


def with_data(url: str, prefix: str) -> set[str]:
    """Threads that have checkpoints, seen directly in Redis."""
    client = redis.Redis.from_url(url)
    try:
        return {t for t in THREADS if client.exists(ThreadKeys.build(prefix, t).idx)}
    finally:
        client.close()


async def call(saver: Any, name: str, *args: Any) -> Any:
    if isinstance(saver, AsyncRedisSaver):
        method = getattr(saver, "a" + name)
        if name == "list":
            return [t async for t in method(*args)]
        return await method(*args)
    result = getattr(saver, name)(*args)
    return list(result) if name == "list" else result


async def retried(saver: Any, name: str, *args: Any) -> None:
    """The user's retry: a call that lost its connection is made once more."""
    try:
        await call(saver, name, *args)
    except BackendUnavailableError:
        await call(saver, name, *args)


async def listed(saver: Any) -> set[str]:
    try:
        tuples = await call(saver, "list", None)
    except BackendUnavailableError:  # this read hit the dropped connection: read again
        tuples = await call(saver, "list", None)
    return {t.config["configurable"]["thread_id"] for t in tuples}


async def open_saver(stack: contextlib.AsyncExitStack, flavor: str, url: str, prefix: str) -> Any:
    if flavor == "async":
        return await stack.enter_async_context(AsyncRedisSaver.from_conn_string(url, prefix=prefix))
    return stack.enter_context(RedisSaver.from_conn_string(url, prefix=prefix))


# --------------------------------------------------------------------------- regression


@pytest.mark.parametrize("flavor", ["sync", "async"])
async def test_every_thread_is_listed_after_its_first_put_lost_its_reply(
    flavor: str, redis_url: str, redis_prefix: str
) -> None:
    """Finding 12 as reported: a failure right after a thread's first PUT script, then a
    retry, left the thread out of list(None) and delete_for_runs."""
    async with contextlib.AsyncExitStack() as stack:
        saver = await open_saver(stack, flavor, redis_url, redis_prefix)
        FlakyConnection(saver, fail_at=0, after_sending=True)  # the first put's reply is lost
        with pytest.raises(BackendUnavailableError):
            await call(saver, "put", *checkpoint_args(saver, "alpha", "run-1", 0))
        await call(saver, "put", *checkpoint_args(saver, "alpha", "run-1", 1))  # the retry
        assert await listed(saver) == {"alpha"}
        await call(saver, "delete_for_runs", ["run-1"])
        assert with_data(redis_url, redis_prefix) == set()
        assert await listed(saver) == set()


# --------------------------------------------------------------------------- the property

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("put"), st.sampled_from(THREADS), st.sampled_from(["r1", "r2"])),
        st.tuples(st.just("put"), st.sampled_from(THREADS), st.sampled_from(["r1", "r2"])),
        st.tuples(st.just("copy_thread"), st.sampled_from(THREADS), st.sampled_from(THREADS)),
        st.tuples(st.just("delete_thread"), st.sampled_from(THREADS)),
        st.tuples(st.just("delete_for_runs"), st.sampled_from(["r1", "r2"])),
        st.tuples(st.just("prune"), st.sampled_from(THREADS)),
        st.just(("list",)),
    ),
    min_size=1,
    max_size=10,
)
PROPERTY = settings(
    max_examples=thorough(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    database=None,
)


async def run_ops(saver: Any, ops: list[tuple[Any, ...]], url: str, prefix: str) -> None:
    for step, op in enumerate(ops):
        kind = op[0]
        if kind == "put":
            await retried(saver, "put", *checkpoint_args(saver, op[1], op[2], step))
        elif kind == "copy_thread":
            if op[1] != op[2]:
                await retried(saver, "copy_thread", op[1], op[2])
        elif kind in ("delete_thread", "prune"):
            await retried(saver, kind, op[1] if kind == "delete_thread" else [op[1]])
        elif kind == "delete_for_runs":
            await retried(saver, kind, [op[1]])
        else:
            await listed(saver)
        assert with_data(url, prefix) <= await listed(saver), (step, op)
    # and erasure by run id reaches every thread
    await retried(saver, "delete_for_runs", ["r1", "r2"])
    assert with_data(url, prefix) == set()


@pytest.mark.parametrize("flavor", ["sync", "async"])
def test_every_thread_with_checkpoints_is_listed_whatever_round_trip_fails(
    flavor: str, redis_url: str, redis_prefix: str, figures: Figures
) -> None:
    examples = iter(range(100_000))

    async def one(ops: list[tuple[Any, ...]], fail_at: int, after: bool) -> None:
        prefix = f"{redis_prefix}:{next(examples)}"
        async with contextlib.AsyncExitStack() as stack:
            saver = await open_saver(stack, flavor, redis_url, prefix)
            flaky = FlakyConnection(saver, fail_at, after)
            await run_ops(saver, ops, redis_url, prefix)
        figures.add("registry_failures_injected", flaky.injected)
        figures.add("registry_invisible_threads", 0)  # any invisible thread fails above

    @PROPERTY
    @given(ops=OPS, fail_at=st.integers(min_value=0, max_value=12), after=st.booleans())
    def check(ops: list[tuple[Any, ...]], fail_at: int, after: bool) -> None:
        asyncio.run(one(ops, fail_at, after))

    check()
