"""A checkpoint is whole or absent.

A read never returns a checkpoint missing a channel value it was written with: it
returns the checkpoint whole, nothing, or raises ``CheckpointIntegrityError``. A ``put``
stores every value its checkpoint carries (a reused value whose blob vanished is written
again); a ``put`` whose parent retention deleted raises ``CheckpointIntegrityError`` and
writes nothing. The property test drives random sequences of puts, pending writes,
TTL expiry, evictions, sweeps, keep-last retention, prune and dropped connections through
every saver and checks every read against a model of what the writer wrote.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import END, START, MessagesState, StateGraph
from redis import exceptions as redis_errors

from langgraph_recall.checkpoint.redis._keys import ThreadKeys
from langgraph_recall.errors import BackendUnavailableError, CheckpointIntegrityError
from langgraph_recall.lease import with_thread_lease
from tests._hypothesis import thorough
from tests.reliability._figures import Figures
from tests.reliability._savers import BACKENDS, Target, async_saver, sync_saver, target
from tests.reliability._servers import terminate_backends
from tests.reliability._workload import thread_config, turn_input

# --------------------------------------------------------------------------- regressions


def slow_turn_graph(saver: Any, pause: float, during: Any = None) -> Any:
    """START -> a -> slow -> b -> END: ``slow`` waits ``pause`` s (and calls ``during``)."""

    def answer(name: str) -> Any:
        def node(state: MessagesState) -> dict[str, Any]:
            return {"messages": [AIMessage(content=f"{name}:{state['messages'][0].content}")]}

        return node

    def slow(state: MessagesState) -> dict[str, Any]:
        time.sleep(pause)
        if during is not None:
            during()
        return {"messages": [AIMessage(content="slow")]}

    builder = StateGraph(MessagesState)
    builder.add_node("a", answer("a"))
    builder.add_node("slow", slow)
    builder.add_node("b", answer("b"))
    builder.add_edge(START, "a")
    builder.add_edge("a", "slow")
    builder.add_edge("slow", "b")
    builder.add_edge("b", END)
    return builder.compile(checkpointer=saver)


def contents(graph: Any, config: dict[str, Any]) -> list[str]:
    return [str(m.content) for m in graph.get_state(config).values.get("messages", [])]


FULL_TURN = ["hello", "a:hello", "slow", "b:hello"]


@pytest.mark.redis
def test_a_checkpoint_is_whole_or_absent_after_redis_ttl_expiry_mid_turn(
    redis_url: str, redis_prefix: str
) -> None:
    """Finding 3: ttl below the turn's length. The keys expire mid-turn; the next put used
    to write a checkpoint whose blobs were gone and get_state returned the state without
    them. The put now stores every value its checkpoint carries (the values it reuses are
    written again), as the official saver does: the turn's checkpoints are whole. A leased
    turn keeps its thread alive however long it runs."""
    where = Target("redis", url=redis_url, prefix=redis_prefix)
    with sync_saver(where, ttl={"default_ttl": 1 / 60}) as saver:  # one second
        graph = slow_turn_graph(saver, pause=1.4)
        config = thread_config("expiring")
        state = graph.invoke(turn_input("hello"), config)
        assert [str(m.content) for m in state["messages"]] == FULL_TURN
        assert contents(graph, config) == FULL_TURN  # whole, not half-written

        leased = with_thread_lease(slow_turn_graph(saver, pause=1.4), ttl=2.0)
        state = leased.invoke(turn_input("hello"), thread_config("kept-alive"))
        assert [str(m.content) for m in state["messages"]] == FULL_TURN
        assert contents(graph, thread_config("kept-alive"))[-1] == "b:hello"


@pytest.mark.postgres
def test_a_checkpoint_is_whole_or_absent_after_a_postgres_sweep_mid_turn(
    postgres_dsn: str,
) -> None:
    """Finding 3 on Postgres: sweep() deletes an idle-looking thread while its turn runs
    (no lease). The turn's next put stores every value it carries (the swept blobs it
    reuses are written again): the thread holds whole checkpoints, never half a state.
    Under a lease the sweep skips the thread and nothing of it is lost."""
    where = Target("postgres", dsn=postgres_dsn)
    with sync_saver(where, ttl={"default_ttl": 1}) as saver:

        def sweep_now(thread: str) -> Any:
            def run() -> None:
                where.age(thread, 3600)
                saver.sweep()

            return run

        graph = slow_turn_graph(saver, pause=0, during=sweep_now("swept"))
        # durability="sync": the turn's earlier puts are committed when the sweep runs
        graph.invoke(turn_input("hello"), thread_config("swept"), durability="sync")
        assert contents(graph, thread_config("swept")) == FULL_TURN
        # every stored checkpoint reads whole (a missing blob would raise here): the two
        # written after the sweep, slow's and b's, each with the messages it carried
        stored = [
            [str(m.content) for m in t.checkpoint["channel_values"]["messages"]]
            for t in saver.list(thread_config("swept"))
        ]
        assert stored == [FULL_TURN, FULL_TURN[:3]]

        leased = with_thread_lease(slow_turn_graph(saver, pause=0, during=sweep_now("leased")))
        state = leased.invoke(turn_input("hello"), thread_config("leased"), durability="sync")
        assert [str(m.content) for m in state["messages"]][-1] == "b:hello"
        assert contents(graph, thread_config("leased")) == FULL_TURN
        assert len(list(saver.list(thread_config("leased")))) == 5  # nothing swept


@pytest.mark.redis
def test_a_checkpoint_is_whole_or_absent_after_a_redis_key_is_evicted(
    redis_url: str, redis_prefix: str
) -> None:
    """An evicted (or separately expired) blob hash: the read raises, naming the channel,
    instead of returning the conversation without its messages."""
    where = Target("redis", url=redis_url, prefix=redis_prefix)
    with sync_saver(where) as saver:
        graph = slow_turn_graph(saver, pause=0)
        config = thread_config("evicted")
        graph.invoke(turn_input("hello"), config)
        raw = redis.Redis.from_url(redis_url)
        raw.delete(ThreadKeys.build(redis_prefix, "evicted").blobs)
        raw.close()
        with pytest.raises(
            CheckpointIntegrityError, match=r"'messages'.*'evicted'|'evicted'.*'messages'"
        ):
            graph.get_state(config)
        with pytest.raises(CheckpointIntegrityError):
            list(saver.list(config))
        saver.delete_thread("evicted")  # the documented way out
        graph.invoke(turn_input("again"), config)
        assert contents(graph, config)[0] == "again"


# --------------------------------------------------------------------------- the property

CHANNELS = ("messages", "ctx", "count", "flag")
"""messages: a growing list (a blob), ctx: a dict that rarely changes (a reused blob),
count: an int (inline on Postgres), flag: a channel that is sometimes emptied."""

KINDS = ["put"] * 6 + ["writes", "begin", "expire", "evict", "sweep", "prune", "crash"]
"""Op kinds, drawn evenly: most steps write."""

PARAMS: dict[str, st.SearchStrategy[tuple[Any, ...]]] = {
    "put": st.tuples(st.sets(st.sampled_from(CHANNELS)), st.booleans()),
    "evict": st.tuples(st.sampled_from(["blobs", "refs", "cp", "idx", "w"])),
    "crash": st.tuples(st.booleans()),
}
OPS = st.lists(
    st.sampled_from(KINDS).flatmap(
        lambda kind: PARAMS.get(kind, st.just(())).map(lambda args: (kind, *args))
    ),
    min_size=3,
    max_size=14,
)
PROPERTY = settings(
    max_examples=thorough(30),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)


@dataclass
class Writer:
    """What the writer has written: the model the reads are checked against."""

    thread: str
    head: dict[str, Any] | None = None
    values: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    expected: dict[str, dict[str, Any]] = field(default_factory=dict)
    steps: int = 0


class Run:
    """One op sequence on one saver (sync or async), checking every read."""

    def __init__(self, saver: Any, where: Target, thread: str, figures: Figures) -> None:
        self.saver = saver
        self.where = where
        self.is_async = type(saver).__name__.startswith("Async")
        self.writer = Writer(thread)
        self.figures = figures
        self.reads = 0
        self.fail_next: bool | None = None  # inject a dropped connection (after sending?)

    async def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.is_async:
            method = getattr(self.saver, "a" + name)
            if name == "list":
                return [t async for t in method(*args, **kwargs)]
            return await method(*args, **kwargs)
        result = getattr(self.saver, name)(*args, **kwargs)
        return list(result) if name == "list" else result

    # ----- ops

    async def put(self, changed: set[str], empty_flag: bool) -> None:
        w = self.writer
        values = dict(w.values)
        new_versions: dict[str, str] = {}
        w.steps += 1
        for channel in CHANNELS:
            fresh = channel not in w.versions
            if not (fresh or channel in changed):
                continue
            if channel == "flag" and empty_flag:
                values.pop("flag", None)
            elif channel == "messages":
                values["messages"] = [*values.get("messages", []), f"m{w.steps}"]
            elif channel == "ctx":
                values["ctx"] = {"step": w.steps}
            elif channel == "count":
                values["count"] = w.steps
            else:
                values["flag"] = [w.steps]
            version = self.saver.get_next_version(w.versions.get(channel), None)
            new_versions[channel] = version
        versions = {**w.versions, **new_versions}
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = dict(values)
        checkpoint["channel_versions"] = dict(versions)
        config = w.head or thread_config(w.thread)
        try:
            stored = await self.call(
                "put", config, checkpoint, {"source": "loop", "step": w.steps}, new_versions
            )
        except CheckpointIntegrityError:
            assert await self.absent(checkpoint["id"]), "a refused put wrote something"
            await self.begin()
            return
        except BackendUnavailableError:
            # in doubt: written whole or not at all
            w.expected[checkpoint["id"]] = values
            await self.begin()
            return
        w.expected[checkpoint["id"]] = values
        w.head, w.values, w.versions = stored, values, versions

    async def writes(self) -> None:
        if self.writer.head is not None:
            with contextlib.suppress(BackendUnavailableError):
                await self.call("put_writes", self.writer.head, [("messages", ["w"])], "task")

    async def begin(self) -> None:
        """A new turn: continue from the stored head (as LangGraph's loop does)."""
        w = self.writer
        try:
            head = await self.call("get_tuple", thread_config(w.thread))
        except CheckpointIntegrityError:
            await self.call("delete_thread", w.thread)  # the documented way out
            head = None
        except BackendUnavailableError:
            return
        if head is None:
            w.head, w.values, w.versions = None, {}, {}
            return
        w.head = head.config
        w.values = dict(head.checkpoint["channel_values"])
        w.versions = {k: str(v) for k, v in head.checkpoint["channel_versions"].items()}

    async def expire(self) -> None:
        """What a TTL does: the thread's keys expire (Redis), or it is swept as idle."""
        if self.where.backend == "redis":
            raw = redis.Redis.from_url(self.where.url)
            for key in ThreadKeys.build(self.where.prefix, self.writer.thread).data:
                raw.pexpire(key, 1)
            raw.close()
            await asyncio.sleep(0.01)
        else:
            self.where.age(self.writer.thread, 3600)
            await self.call("sweep")

    async def evict(self, part: str) -> None:
        """What maxmemory eviction does to one key (Redis only)."""
        if self.where.backend == "redis":
            keys = ThreadKeys.build(self.where.prefix, self.writer.thread)
            raw = redis.Redis.from_url(self.where.url)
            raw.delete(
                {
                    "blobs": keys.blobs,
                    "refs": keys.refs,
                    "cp": keys.cp,
                    "idx": keys.idx,
                    "w": keys.writes,
                }[part]
            )
            raw.close()

    async def sweep(self) -> None:
        if self.where.backend == "postgres":
            await self.call("sweep")  # TTL retention (keep_last=2 is applied by each put)

    async def prune(self) -> None:
        await self.call("prune", [self.writer.thread])

    async def crash(self, after_sending: bool) -> None:
        """Drop the connection: Postgres backends are terminated; on Redis the next call's
        connection fails before its commands reach the server, or after (reply lost)."""
        if self.where.backend == "postgres":
            await asyncio.to_thread(terminate_backends, self.where.dsn)
        else:
            self.inject_once(after_sending)

    def inject_once(self, after_sending: bool) -> None:
        saver = self.saver
        original = saver._send

        if self.is_async:

            async def failing(commands: Any) -> Any:
                saver._send = original
                if after_sending:
                    await original(commands)
                raise redis_errors.ConnectionError("connection dropped (injected)")

        else:

            def failing(commands: Any) -> Any:  # type: ignore[misc]
                saver._send = original
                if after_sending:
                    original(commands)
                raise redis_errors.ConnectionError("connection dropped (injected)")

        saver._send = failing

    # ----- checks

    async def absent(self, checkpoint_id: str) -> bool:
        config = {"configurable": {"thread_id": self.writer.thread, "checkpoint_id": checkpoint_id}}
        try:
            return await self.call("get_tuple", config) is None
        except CheckpointIntegrityError:
            return False

    def whole(self, tup: Any) -> None:
        cid = tup.checkpoint["id"]
        self.reads += 1
        expected = self.writer.expected.get(cid)
        assert expected is not None, f"a checkpoint nobody wrote: {cid}"
        assert tup.checkpoint["channel_values"] == expected, (
            f"checkpoint {cid} is not whole: {tup.checkpoint['channel_values']} != {expected}"
        )

    async def check_reads(self) -> None:
        thread = self.writer.thread
        configs = [thread_config(thread)] + [
            {"configurable": {"thread_id": thread, "checkpoint_id": cid}}
            for cid in self.writer.expected
        ]
        for config in configs:
            try:
                tup = await self.call("get_tuple", config)
            except (CheckpointIntegrityError, BackendUnavailableError):
                continue
            if tup is not None:
                self.whole(tup)
        try:
            for tup in await self.call("list", thread_config(thread)):
                self.whole(tup)
        except (CheckpointIntegrityError, BackendUnavailableError):
            pass

    async def run(self, ops: list[tuple[Any, ...]]) -> None:
        for op in ops:
            # a dropped connection fails the call that hit it, nothing else
            with contextlib.suppress(BackendUnavailableError):
                await getattr(self, op[0])(*op[1:])
            await self.check_reads()
        self.figures.add("whole_or_absent_sequences")
        self.figures.add("whole_or_absent_ops", len(ops))
        self.figures.add("whole_or_absent_reads", self.reads)
        self.figures.add("whole_or_absent_partial_reads", 0)  # any partial read fails above


def saver_options(backend: str) -> dict[str, Any]:
    return {"keep_last": 2} if backend == "redis" else {"keep_last": 2, "ttl": {"default_ttl": 1}}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_checkpoint_is_whole_or_absent_sync(
    backend: str, request: pytest.FixtureRequest, figures: Figures
) -> None:
    where = target(backend, request)
    examples = iter(range(10_000))
    with sync_saver(where, **saver_options(backend)) as saver:

        @PROPERTY
        @given(ops=OPS)
        def check(ops: list[tuple[Any, ...]]) -> None:
            thread = f"whole-{next(examples)}"
            asyncio.run(Run(saver, where, thread, figures).run(ops))

        check()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_checkpoint_is_whole_or_absent_async(
    backend: str, request: pytest.FixtureRequest, figures: Figures
) -> None:
    where = target(backend, request)
    examples = iter(range(10_000))

    async def one(ops: list[tuple[Any, ...]], thread: str) -> None:
        async with async_saver(where, **saver_options(backend)) as saver:
            await Run(saver, where, thread, figures).run(ops)

    @PROPERTY
    @given(ops=OPS)
    def check(ops: list[tuple[Any, ...]]) -> None:
        asyncio.run(one(ops, f"whole-{next(examples)}"))

    check()
