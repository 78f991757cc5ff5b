"""Official semantics unless we decided otherwise.

Where InMemorySaver, the official Postgres saver and the official Redis saver agree, our
four savers do the same; every remaining difference is a documented decision
(docs/postgres-checkpointer.md, docs/redis-checkpointer.md) and none of them deletes data
a caller asked to keep. Each test is named after the rule it pins:

* a ``put`` whose parent id was never written is stored (``graph.invoke`` with an unknown
  ``checkpoint_id`` runs from scratch); only a parent retention *deleted* is refused;
* a checkpoint naming a value it does not rewrite (not in ``new_versions``) is stored,
  whole;
* ``prune(keep_last=N)`` keeps N per namespace whatever the strategy, ``keep_last=0``
  deletes;
* a Redis client made with ``decode_responses=True`` works;
* integrity refusals reach the caller as our errors on every redis-py (a status reply,
  not error text);
* one timeout bounds a sync call of an async saver whose event loop is stalled.

The differential property over random sequences is in ``test_rel_saver_parity.py``.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import redis
import redis.asyncio
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver
from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph_recall.errors import (
    CheckpointIntegrityError,
    ConfigurationError,
    EventLoopStalledError,
)
from tests.graph_helpers import chat_graph
from tests.reliability._savers import BACKENDS, FLAVORS, Target, async_saver, sync_saver, target

# --------------------------------------------------------------------------- helpers


class Calls:
    """The sync API of a saver of either flavor (async methods run on one private loop)."""

    def __init__(self, saver: Any, loop: asyncio.AbstractEventLoop | None) -> None:
        self.saver, self.loop = saver, loop

    def __getattr__(self, name: str) -> Any:
        if self.loop is None:
            method = getattr(self.saver, name)
            return (lambda *a, **k: list(method(*a, **k))) if name == "list" else method
        method = getattr(self.saver, "a" + name)
        loop = self.loop

        def call(*args: Any, **kwargs: Any) -> Any:
            if name == "list":

                async def collect() -> list[Any]:
                    return [t async for t in method(*args, **kwargs)]

                return loop.run_until_complete(collect())
            return loop.run_until_complete(method(*args, **kwargs))

        return call


@contextmanager
def opened(where: Target, flavor: str, **options: Any) -> Iterator[Calls]:
    if flavor == "sync":
        with sync_saver(where, **options) as saver:
            yield Calls(saver, None)
        return
    loop = asyncio.new_event_loop()
    manager = async_saver(where, **options)
    try:
        saver = loop.run_until_complete(manager.__aenter__())
        try:
            yield Calls(saver, loop)
        finally:
            loop.run_until_complete(manager.__aexit__(None, None, None))
    finally:
        loop.close()


def checkpoint_of(number: int, values: dict[str, Any] | None = None) -> dict[str, Any]:
    checkpoint = empty_checkpoint()
    checkpoint["id"] = f"1f0ce000-0000-6000-8000-{number:012d}"
    checkpoint["channel_values"] = dict(values or {"messages": [f"m{number}"]})
    checkpoint["channel_versions"] = {ch: f"{number:032}.0" for ch in checkpoint["channel_values"]}
    return checkpoint


def config(thread: str, checkpoint_id: str | None = None, ns: str = "") -> dict[str, Any]:
    configurable = {"thread_id": thread, "checkpoint_ns": ns}
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def put_chain(calls: Calls, thread: str, count: int, ns: str = "") -> list[str]:
    """``count`` checkpoints, each the child of the one before; their ids."""
    ids: list[str] = []
    for number in range(1, count + 1):
        checkpoint = checkpoint_of(number)
        parent = ids[-1] if ids else None
        calls.put(config(thread, parent, ns), checkpoint, {"step": number}, dict(
            checkpoint["channel_versions"]
        ))  # fmt: skip
        ids.append(checkpoint["id"])
    return ids


def ids_of(calls: Calls, thread: str, ns: str | None = None) -> list[str]:
    conf: dict[str, Any] = {"configurable": {"thread_id": thread}}
    if ns is not None:
        conf["configurable"]["checkpoint_ns"] = ns
    return [t.checkpoint["id"] for t in calls.list(conf)]


SAVERS = [
    pytest.param(b.values[0], f, marks=b.marks, id=f"{b.values[0]}-{f}")
    for b in BACKENDS
    for f in FLAVORS
]


# --------------------------------------------------------------------------- parents


@pytest.mark.parametrize(("backend", "flavor"), SAVERS)
def test_a_never_written_parent_is_accepted_as_by_every_official_saver(
    backend: str, flavor: str, request: pytest.FixtureRequest
) -> None:
    where = target(backend, request)
    reference = InMemorySaver()
    with opened(where, flavor) as calls:
        for saver in (calls, reference):
            checkpoint = checkpoint_of(7)
            stored = saver.put(
                config("u", "no-such-id"), checkpoint, {}, dict(checkpoint["channel_versions"])
            )
            got = saver.get_tuple(stored)
            assert got is not None and got.checkpoint["channel_values"] == {"messages": ["m7"]}
            assert got.parent_config is not None
            assert got.parent_config["configurable"]["checkpoint_id"] == "no-such-id"
        # an existing thread too: an id that sorts below its checkpoints was never written
        put_chain(calls, "existing", 2)
        checkpoint = checkpoint_of(9)
        calls.put(config("existing", "0-never"), checkpoint, {}, checkpoint["channel_versions"])
        assert ids_of(calls, "existing")[0] == checkpoint["id"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_graph_invoked_at_an_unknown_checkpoint_id_runs_from_scratch(
    backend: str, request: pytest.FixtureRequest
) -> None:
    where = target(backend, request)
    with sync_saver(where) as saver:
        graph = chat_graph(saver)
        unknown = {"configurable": {"thread_id": "u", "checkpoint_id": "no-such-id"}}
        state = graph.invoke({"messages": [("user", "hi")]}, unknown)
        fresh = chat_graph(InMemorySaver()).invoke({"messages": [("user", "hi")]}, unknown)
        assert [m.content for m in state["messages"]] == [m.content for m in fresh["messages"]]
        latest = graph.get_state({"configurable": {"thread_id": "u"}})
        assert [m.content for m in latest.values["messages"]] == [
            m.content for m in fresh["messages"]
        ]


@pytest.mark.parametrize(("backend", "flavor"), SAVERS)
def test_a_late_write_onto_a_pruned_history_is_refused_and_writes_nothing(
    backend: str, flavor: str, request: pytest.FixtureRequest
) -> None:
    """Whole-or-absent for parents that *were* written: a worker still continuing a
    checkpoint ``prune`` (or ``keep_last``, or ``delete_for_runs``) deleted would write a
    child whose history is gone; it is refused, naming the parent and the fix."""
    where = target(backend, request)
    with opened(where, flavor) as calls:
        ids = put_chain(calls, "pruned", 3)
        calls.prune(["pruned"])
        assert ids_of(calls, "pruned") == [ids[2]]
        before = where.dump("pruned")
        late = checkpoint_of(4)
        with pytest.raises(CheckpointIntegrityError, match=rf"parent checkpoint '{ids[1]}' was"):
            calls.put(config("pruned", ids[1]), late, {}, late["channel_versions"])
        assert where.dump("pruned") == before  # nothing written
        calls.put(config("pruned", ids[2]), late, {}, late["channel_versions"])  # the head: ok
        assert ids_of(calls, "pruned") == [late["id"], ids[2]]

        # a run's checkpoints removed by delete_for_runs: its late writes are refused too
        first = checkpoint_of(1)
        calls.put(config("runs"), first, {"run_id": "keep"}, first["channel_versions"])
        second = checkpoint_of(2)
        calls.put(
            config("runs", first["id"]), second, {"run_id": "gone"}, second["channel_versions"]
        )
        calls.delete_for_runs(["gone"])
        with pytest.raises(CheckpointIntegrityError, match="was deleted"):
            calls.put(config("runs", second["id"]), late, {}, late["channel_versions"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_late_write_onto_a_history_keep_last_trimmed_is_refused(
    backend: str, request: pytest.FixtureRequest
) -> None:
    where = target(backend, request)
    with opened(where, "sync", keep_last=2) as calls:
        ids = put_chain(calls, "trimmed", 4)
        assert ids_of(calls, "trimmed") == [ids[3], ids[2]]
        late = checkpoint_of(5)
        with pytest.raises(CheckpointIntegrityError, match="was deleted"):
            calls.put(config("trimmed", ids[0]), late, {}, late["channel_versions"])


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize(("backend", "flavor"), SAVERS)
def test_a_checkpoint_naming_values_it_does_not_rewrite_is_stored_whole(
    backend: str, flavor: str, request: pytest.FixtureRequest
) -> None:
    """``new_versions={}`` with values whose blobs were never written: every official
    saver stores the checkpoint (the old Redis saver refused it). Ours stores it with
    every value it carries, and later puts that reuse those versions find them."""
    where = target(backend, request)
    values = {"messages": ["a", {"b": 1}], "count": 3, "note": "text"}
    with opened(where, flavor) as calls:
        first = checkpoint_of(1, values)
        stored = calls.put(config("b"), first, {}, {})
        got = calls.get_tuple(stored)
        assert got is not None and got.checkpoint["channel_values"] == values
        second = checkpoint_of(2, values)
        second["channel_versions"] = dict(first["channel_versions"])  # nothing changed
        calls.put(stored, second, {}, {})
        got = calls.get_tuple(config("b"))
        assert got is not None and got.checkpoint["id"] == second["id"]
        assert got.checkpoint["channel_values"] == values


# --------------------------------------------------------------------------- prune


@pytest.mark.parametrize(("backend", "flavor"), SAVERS)
def test_prune_keeps_what_the_caller_asked_to_keep(
    backend: str, flavor: str, request: pytest.FixtureRequest
) -> None:
    """The official Redis saver's meaning: ``keep_last=N`` keeps the newest N of each
    namespace, whatever the strategy (it used to keep 1 unless strategy="keep_last");
    ``keep_last=0`` deletes (it used to be a ConfigurationError); fewer than asked is
    never kept."""
    where = target(backend, request)
    with opened(where, flavor) as calls:
        for strategy in ("keep_latest", "keep_last", "delete"):
            thread = f"p-{strategy}"
            root, child = put_chain(calls, thread, 5), put_chain(calls, thread, 4, ns="child")
            calls.prune([thread], strategy=strategy, keep_last=3)
            assert ids_of(calls, thread, "") == root[::-1][:3]
            assert ids_of(calls, thread, "child") == child[::-1][:3]
        calls.prune(["p-keep_latest"])  # no number: the strategy's own (newest one)
        assert len(ids_of(calls, "p-keep_latest", "")) == 1
        calls.prune(["p-keep_last"], keep_last=0)
        assert ids_of(calls, "p-keep_last") == []
        calls.prune(["p-delete"], strategy="delete")
        assert ids_of(calls, "p-delete") == []
        for bad in (-1, True, 1.5, "3"):
            with pytest.raises(ConfigurationError, match="keep_last must be an int >= 0"):
                calls.prune(["p-keep_latest"], keep_last=bad)
        with pytest.raises(ConfigurationError, match="unknown prune strategy"):
            calls.prune(["p-keep_latest"], strategy="keep_oldest")
        assert len(ids_of(calls, "p-keep_latest", "")) == 1  # refusals changed nothing


# --------------------------------------------------------------------------- Redis clients


@pytest.mark.redis
def test_a_client_that_decodes_responses_works_on_the_same_keys(
    redis_url: str, redis_prefix: str
) -> None:
    """The official saver runs with ``decode_responses=True``; so do ours, and a decoding
    and a non-decoding saver read each other's checkpoints (same keys, same bytes)."""
    decoding = redis.Redis.from_url(redis_url, decode_responses=True)
    plain = redis.Redis.from_url(redis_url)
    try:
        saver, other = (
            RedisSaver(decoding, prefix=redis_prefix),
            RedisSaver(plain, prefix=redis_prefix),
        )
        saver.setup()
        graph = chat_graph(saver)
        conf = {"configurable": {"thread_id": "decoded"}}
        graph.invoke({"messages": [("user", "hi ü")]}, conf)
        state = chat_graph(other).get_state(conf)
        assert next(m.content for m in state.values["messages"]) == "hi ü"
        chat_graph(other).invoke({"messages": [("user", "again")]}, conf)
        assert "again" in [m.content for m in graph.get_state(conf).values["messages"]]
        assert len(list(saver.list(conf))) == len(list(other.list(conf))) > 2
        assert "decoded" in {t.config["configurable"]["thread_id"] for t in saver.list(None)}
        saver.copy_thread("decoded", "copy")
        saver.prune(["decoded"], keep_last=1)
        assert len(list(saver.list(conf))) == 1
        assert len(list(other.list({"configurable": {"thread_id": "copy"}}))) > 2
        saver.delete_thread("copy")
        assert list(other.list({"configurable": {"thread_id": "copy"}})) == []
    finally:
        decoding.close()
        plain.close()


@pytest.mark.redis
async def test_an_async_client_that_decodes_responses_works(
    redis_url: str, redis_prefix: str
) -> None:
    client = redis.asyncio.Redis.from_url(redis_url, decode_responses=True)
    try:
        saver = AsyncRedisSaver(client, prefix=redis_prefix)
        await saver.setup()
        conf = {"configurable": {"thread_id": "decoded"}}
        state = await chat_graph(saver).ainvoke({"messages": [("user", "hi")]}, conf)
        assert next(m.content for m in state["messages"]) == "hi"
        assert len([t async for t in saver.alist(conf)]) > 2
        await saver.aprune(["decoded"], keep_last=1)
        assert len([t async for t in saver.alist(conf)]) == 1
    finally:
        await client.aclose()


@pytest.mark.redis
async def test_integrity_refusals_reach_the_caller_as_our_errors_through_a_pipeline(
    redis_url: str, redis_prefix: str
) -> None:
    """A new saver's first put is a pipeline (slot registration + the PUT script): the
    refusal used to be parsed from redis-py's pipeline error text, which redis-py 8
    words as a tuple (a ValueError escaped, or a message naming no channel). It is a
    status reply now, read the same on every redis-py."""
    async with AsyncRedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as writer:
        await writer.setup()
        first, second = checkpoint_of(1), checkpoint_of(2)
        await writer.aput(config("p"), first, {}, first["channel_versions"])
        await writer.aput(config("p", first["id"]), second, {}, second["channel_versions"])
        await writer.aprune(["p"])
    for pipelined in (checkpoint_of(3), checkpoint_of(4, {"messages": [1], "x": [2]})):
        # a fresh saver: its first write to a slot is a two-command pipeline
        async with AsyncRedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as saver:
            with pytest.raises(
                CheckpointIntegrityError, match=rf"parent checkpoint '{first['id']}' was"
            ):
                await saver.aput(config("p", first["id"]), pipelined, {}, {})
        async with AsyncRedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as saver:
            thread = f"b-{uuid.uuid4().hex[:6]}"
            stored = await saver.aput(config(thread), pipelined, {}, {})  # values, no blobs
            got = await saver.aget_tuple(stored)
            assert got is not None
            assert got.checkpoint["channel_values"] == pipelined["channel_values"]


# --------------------------------------------------------------------------- the sync bridge


def _loop_in_thread() -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    return loop, thread


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_timeout_bounds_a_sync_call_whose_event_loop_is_stalled(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """The sync bridge of an async saver waited on its loop without a bound: a blocked or
    deadlocked loop left the calling thread stuck forever. Now the call fails after one
    ``loop_timeout`` in which the loop ran nothing, says whether it had started, and the
    loop carries on (the cancelled call never runs) once unblocked."""
    where = target(backend, request)
    loop, thread = _loop_in_thread()
    manager = async_saver(where)
    saver = asyncio.run_coroutine_threadsafe(manager.__aenter__(), loop).result(30)
    try:
        assert isinstance(saver, (AsyncRedisSaver, AsyncPostgresSaver))
        saver.loop_timeout = 0.3
        checkpoint = checkpoint_of(1)
        assert saver.get_tuple(config("stall")) is None  # a live loop answers
        release = threading.Event()
        loop.call_soon_threadsafe(release.wait)  # the loop now waits for this thread
        with pytest.raises(EventLoopStalledError, match="nothing was applied"):
            saver.put(config("stall"), checkpoint, {}, checkpoint["channel_versions"])
        release.set()
        assert saver.get_tuple(config("stall")) is None  # the cancelled put never ran

        # a call the loop started, then the loop blocks: it may or may not have applied
        class BlockingSerde(type(saver.serde)):  # type: ignore[misc]
            def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
                if obj == ["block"]:
                    release.wait()
                return super().dumps_typed(obj)

        release.clear()
        saver.serde = BlockingSerde()
        blocking = checkpoint_of(2, {"messages": ["block"]})
        with pytest.raises(EventLoopStalledError, match="may or may not have been applied"):
            saver.put(config("stall"), blocking, {}, blocking["channel_versions"])
        release.set()
        saver.get_tuple(config("stall"))  # the loop answers again
    finally:
        release.set()
        asyncio.run_coroutine_threadsafe(manager.__aexit__(None, None, None), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
    assert not thread.is_alive()


@pytest.mark.postgres
def test_a_stored_checkpoint_without_channel_values_reads_as_empty(postgres_dsn: str) -> None:
    """What the official suite checks by patching its saver's private loader: a row whose
    checkpoint has no ``channel_values`` key (written by older code) reads back with
    ``channel_values == {}`` instead of raising."""
    import psycopg

    with opened(Target("postgres", dsn=postgres_dsn), "sync") as calls:
        checkpoint = empty_checkpoint()
        stored = calls.put(config("old"), checkpoint, {}, {})
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute("UPDATE checkpoints SET checkpoint = checkpoint - 'channel_values'")
        got = calls.get_tuple(stored)
        assert got is not None and got.checkpoint["channel_values"] == {}
        assert [t.checkpoint["channel_values"] for t in calls.list(config("old"))] == [{}]
