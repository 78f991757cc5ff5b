"""No write path around a lease.

While worker A holds the lease on thread ``t``, only A's fencing token writes ``t``:
whichever method, wrapper, derived runnable or second graph object worker B uses, and
whether B calls the saver directly. The check lives in the savers' write statement /
script, so the property test does not trust a list of wrapped methods: it *enumerates*
the public methods of a compiled graph and of the lease wrapper (a new LangGraph method
fails the test until it is classified here), drives every write-capable one from B, and
compares the thread's raw stored state before and after each attempt.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import StateUpdate

from langgraph_recall.errors import (
    ConfigurationError,
    LeaseLostError,
    StaleWriteError,
    ThreadBusyError,
)
from langgraph_recall.lease import (
    FENCE_CONFIG_KEY,
    InMemoryLeaseBackend,
    ThreadLeasedGraph,
    with_thread_lease,
)
from tests.graph_helpers import chat_graph
from tests.reliability._figures import Figures
from tests.reliability._savers import BACKENDS, Target, async_saver, sync_saver, target
from tests.reliability._workload import thread_config, turn_input

THREAD = "leased-thread"
B_INPUT = turn_input("from worker B")
B_EDIT = {"messages": [HumanMessage(content="B's edit")]}

# --------------------------------------------------------------------------- graph methods

SyncDriver = Callable[[Any, dict[str, Any]], Any]
AsyncDriver = Callable[[Any, dict[str, Any]], Awaitable[Any]]


def _v3_output(g: Any, cfg: dict[str, Any]) -> Any:
    return g.stream_events(B_INPUT, cfg, version="v3").output


DERIVED: dict[str, Callable[[Any], Any]] = {
    "with_retry": lambda g: g.with_retry(stop_after_attempt=2, wait_exponential_jitter=False),
    "with_fallbacks": lambda g: g.with_fallbacks([g]),
    "with_config": lambda g: g.with_config(tags=["b"]),
    "with_listeners": lambda g: g.with_listeners(on_end=lambda run: None),
    "with_types": lambda g: g.with_types(input_type=dict),
    "bind": lambda g: g.bind(),
    "map": lambda g: g.map(),
    "pipe": lambda g: g.pipe(RunnableLambda(lambda out: out)),
    "pick": lambda g: g.pick("messages"),
    "assign": lambda g: g.assign(extra=RunnableLambda(lambda _: 1)),
    "as_tool": lambda g: g.as_tool(name="chat", arg_types={"messages": list}),
    "copy": lambda g: g.copy(),
}
"""Runnables derived from a graph; each is run (``invoke`` / ``ainvoke``) as worker B."""


def _derived(name: str, run: str) -> Any:
    """Derive ``name`` from the graph, then ``run`` (``invoke``/``ainvoke``) it."""
    given = [B_INPUT] if name == "map" else B_INPUT
    return lambda g, cfg: getattr(DERIVED[name](g), run)(given, cfg)


SYNC_DRIVERS: dict[str, SyncDriver] = {
    "invoke": lambda g, cfg: g.invoke(B_INPUT, cfg),
    "stream": lambda g, cfg: list(g.stream(B_INPUT, cfg)),
    "batch": lambda g, cfg: g.batch([B_INPUT], cfg),
    "batch_as_completed": lambda g, cfg: list(g.batch_as_completed([B_INPUT], cfg)),
    "transform": lambda g, cfg: list(g.transform(iter([B_INPUT]), cfg)),
    "stream_events": _v3_output,
    "update_state": lambda g, cfg: g.update_state(cfg, B_EDIT, as_node="b"),
    "bulk_update_state": lambda g, cfg: g.bulk_update_state(cfg, [[StateUpdate(B_EDIT, "b")]]),
    **{name: _derived(name, "invoke") for name in DERIVED},
}


async def _collect(iterator: Any) -> list[Any]:
    return [item async for item in iterator]


async def _av3_output(g: Any, cfg: dict[str, Any]) -> Any:
    run = await g.astream_events(B_INPUT, cfg, version="v3")
    return await run.output()


async def _alisteners(g: Any, cfg: dict[str, Any]) -> Any:
    async def on_end(run: Any) -> None:
        return None

    return await g.with_alisteners(on_end=on_end).ainvoke(B_INPUT, cfg)


ASYNC_DRIVERS: dict[str, AsyncDriver] = {
    "ainvoke": lambda g, cfg: g.ainvoke(B_INPUT, cfg),
    "astream": lambda g, cfg: _collect(g.astream(B_INPUT, cfg)),
    "abatch": lambda g, cfg: g.abatch([B_INPUT], cfg),
    "abatch_as_completed": lambda g, cfg: _collect(g.abatch_as_completed([B_INPUT], cfg)),
    "atransform": lambda g, cfg: _collect(g.atransform(_agen(B_INPUT), cfg)),
    "astream_events": lambda g, cfg: _collect(g.astream_events(B_INPUT, cfg, version="v2")),
    "astream_events v3": _av3_output,
    "astream_log": lambda g, cfg: _collect(g.astream_log(B_INPUT, cfg)),
    "aupdate_state": lambda g, cfg: g.aupdate_state(cfg, B_EDIT, as_node="b"),
    "abulk_update_state": lambda g, cfg: g.abulk_update_state(cfg, [[StateUpdate(B_EDIT, "b")]]),
    "with_alisteners": _alisteners,
    # everything derived, run asynchronously too
    **{name: _derived(name, "ainvoke") for name in DERIVED},
}


async def _agen(item: Any) -> Any:
    yield item


NOT_THREAD_WRITES = {
    # reads and descriptions
    **dict.fromkeys(
        [
            "get_state",
            "aget_state",
            "get_state_history",
            "aget_state_history",
            "get_graph",
            "aget_graph",
            "get_subgraphs",
            "aget_subgraphs",
            "get_name",
            "get_input_schema",
            "get_output_schema",
            "get_input_jsonschema",
            "get_output_jsonschema",
            "get_config_jsonschema",
            "get_context_jsonschema",
            "config_schema",
            "get_prompts",
            "validate",
        ],
        "read",
    ),
    # the node cache (keyed by node input), not any thread's checkpoints
    "clear_cache": "node cache",
    "aclear_cache": "node cache",
    # compile-time assembly of the graph object itself
    "attach_node": "graph assembly",
    "attach_edge": "graph assembly",
    "attach_branch": "graph assembly",
}


def public_methods(obj: Any) -> set[str]:
    """Public callables of ``obj`` (the lease wrapper: its own and the graph's it forwards)."""
    names = {n for n in dir(obj) if not n.startswith("_")}
    if isinstance(obj, ThreadLeasedGraph):
        names |= {n for n in dir(obj.graph) if not n.startswith("_")}
    return {
        n for n in names if callable(getattr(obj, n, None)) and not inspect.isclass(getattr(obj, n))
    }


def test_every_public_graph_method_is_classified() -> None:
    """A new LangGraph / LangChain method must be driven below, or declared not a write."""
    graph = chat_graph(InMemorySaver())
    leased = with_thread_lease(graph, InMemoryLeaseBackend())
    driven = set(SYNC_DRIVERS) | {n for n in ASYNC_DRIVERS if " " not in n}
    for obj in (graph, leased):
        unknown = public_methods(obj) - driven - set(NOT_THREAD_WRITES)
        assert not unknown, f"classify {sorted(unknown)} in test_rel_leases.py"


# --------------------------------------------------------------------------- saver methods

SAVER_NOT_WRITES = {
    **dict.fromkeys(
        [
            "get",
            "aget",
            "get_tuple",
            "aget_tuple",
            "list",
            "alist",
            "get_delta_channel_history",
            "aget_delta_channel_history",
            "get_next_version",
            "lease_backend",
            "setup",
            "asetup",
            "with_allowlist",
        ],
        "read / factory / schema",
    ),
    **dict.fromkeys(
        [
            "delete_thread",
            "adelete_thread",
            "delete_for_runs",
            "adelete_for_runs",
            "forget_threads",
            "aforget_threads",
        ],
        "erasure: never refused, fences the holder out (test_erasure_always_wins)",
    ),
    **dict.fromkeys(
        ["sweep", "asweep", "start_sweeper", "stop_sweeper"],
        "background retention: never touches a leased thread (test_sweep_...)",
    ),
}


def saver_drivers(
    saver: Any, head: dict[str, Any], token: int, other: str
) -> dict[str, Callable[[], Any]]:
    """Direct saver writes B could make to the leased thread's head (sync and async);
    ``token`` is the holder's, so B's guesses next to it are tried too."""
    cfg = {k: v for k, v in head["configurable"].items() if k != FENCE_CONFIG_KEY}

    def checkpoint() -> Any:
        cp = empty_checkpoint()
        cp["channel_values"] = {"messages": ["B"]}
        cp["channel_versions"] = {"messages": saver.get_next_version(None, None)}
        return cp

    def put_args(token: int | None = None) -> tuple[Any, ...]:
        config = {"configurable": {**cfg}}
        if token is not None:
            config["configurable"][FENCE_CONFIG_KEY] = token
        cp = checkpoint()
        return config, cp, {"source": "update", "step": 99}, dict(cp["channel_versions"])

    def writes_args(token: int | None = None) -> tuple[Any, ...]:
        config = {"configurable": {**cfg}}
        if token is not None:
            config["configurable"][FENCE_CONFIG_KEY] = token
        return config, [("messages", ["B"])], "task-b"

    return {
        "put": lambda: saver.put(*put_args()),
        "put_writes": lambda: saver.put_writes(*writes_args()),
        "copy_thread": lambda: saver.copy_thread(other, THREAD),
        "copy_thread (empty source)": lambda: saver.copy_thread("no-such-thread", THREAD),
        "prune": lambda: saver.prune([THREAD]),
        "aput": lambda: saver.aput(*put_args()),
        "aput_writes": lambda: saver.aput_writes(*writes_args()),
        "acopy_thread": lambda: saver.acopy_thread(other, THREAD),
        "acopy_thread (empty source)": lambda: saver.acopy_thread("no-such-thread", THREAD),
        "aprune": lambda: saver.aprune([THREAD]),
        # a guessed token is no way around the lease either
        "put (token - 1)": lambda: saver.put(*put_args(token - 1)),
        "put (token + 1)": lambda: saver.put(*put_args(token + 1)),
        "put_writes (token + 1)": lambda: saver.put_writes(*writes_args(token + 1)),
        "aput (token - 1)": lambda: saver.aput(*put_args(token - 1)),
        "aput_writes (token - 1)": lambda: saver.aput_writes(*writes_args(token - 1)),
    }


def test_every_public_saver_method_is_classified() -> None:
    from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
    from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver

    driven = {"put", "put_writes", "copy_thread", "prune"}
    driven |= {f"a{name}" for name in driven}
    for cls in (PostgresSaver, AsyncPostgresSaver, RedisSaver, AsyncRedisSaver):
        names = {
            n
            for n, v in inspect.getmembers(cls)
            if not n.startswith("_") and callable(v) and not inspect.isclass(v)
        }
        unknown = names - driven - set(SAVER_NOT_WRITES) - {"from_conn_string"}
        assert not unknown, f"classify {cls.__name__}.{sorted(unknown)} in test_rel_leases.py"


# --------------------------------------------------------------------------- the property


WRAPPER_REFUSES = {"wrapper.stream_events", "wrapper.stream_events (astream_events v3)"}
"""What the lease wrapper declines to run at all (LangGraph drives these after the call)."""


class Attempts:
    """Drives each path from worker B and checks it was refused and wrote nothing."""

    def __init__(self, where: Target, figures: Figures) -> None:
        self.where = where
        self.figures = figures
        self.tried: list[str] = []
        self.through: list[str] = []

    def refused(self, label: str, exc: BaseException | None, before: Any) -> None:
        self.tried.append(label)
        after = self.where.dump(THREAD)
        if exc is None or after != before:
            self.through.append(label)
        expected: tuple[type[BaseException], ...] = (ThreadBusyError, StaleWriteError)
        if label in WRAPPER_REFUSES:
            expected = (ConfigurationError,)
        assert exc is not None, f"{label} was not refused"
        assert isinstance(exc, expected), f"{label}: {type(exc).__name__}: {exc}"
        assert after == before, f"{label} changed the leased thread"

    def record(self) -> None:
        self.figures.add("lease_bypass_paths_tried", len(self.tried))
        self.figures.add("lease_bypass_writes_through", len(self.through))
        assert self.through == []


def worker_b_objects(saver: Any) -> dict[str, Any]:
    """B's ways in: the graph object A runs (bare), a second graph compiled on the same
    saver, and B's own lease wrapper around it."""
    second = chat_graph(saver)
    return {
        "second graph": second,
        "wrapper": with_thread_lease(second, strategy="reject", ttl=30.0),
    }


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_write_path_around_a_lease_sync(
    backend: str, request: pytest.FixtureRequest, figures: Figures
) -> None:
    where = target(backend, request)
    with sync_saver(where) as saver:
        graph_a = chat_graph(saver)
        graph_a.invoke(turn_input("other thread"), thread_config("other"))
        lease = saver.lease_backend().try_acquire(THREAD, "worker-a", ttl=120.0)
        assert lease is not None
        fenced = {"configurable": {"thread_id": THREAD, FENCE_CONFIG_KEY: lease.token}}
        graph_a.invoke(turn_input("A#1"), fenced)
        head = saver.get_tuple(thread_config(THREAD))
        assert head is not None

        attempts = Attempts(where, figures)
        objects = {"graph A runs": graph_a, **worker_b_objects(saver)}
        for obj_name, obj in objects.items():
            prefix = "wrapper." if isinstance(obj, ThreadLeasedGraph) else f"{obj_name}."
            for name, drive in SYNC_DRIVERS.items():
                before = where.dump(THREAD)
                try:
                    drive(obj, thread_config(THREAD))
                except Exception as exc:
                    attempts.refused(prefix + name, exc, before)
                else:
                    attempts.refused(prefix + name, None, before)
        for name, write in saver_drivers(saver, head.config, lease.token, "other").items():
            if name.startswith("a"):
                continue  # the saver's async twins: test_..._async
            before = where.dump(THREAD)
            try:
                write()
            except Exception as exc:
                attempts.refused("saver." + name, exc, before)
            else:
                attempts.refused("saver." + name, None, before)
        attempts.record()

        # the holder still writes, and its thread holds exactly its own turns
        graph_a.invoke(turn_input("A#2"), fenced)
        humans = [
            m.content for m in graph_a.get_state(fenced).values["messages"] if m.type == "human"
        ]
        assert humans == ["A#1", "A#2"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_no_write_path_around_a_lease_async(
    backend: str, request: pytest.FixtureRequest, figures: Figures
) -> None:
    where = target(backend, request)
    async with async_saver(where) as saver:
        graph_a = chat_graph(saver)
        await graph_a.ainvoke(turn_input("other thread"), thread_config("other"))
        lease = await saver.lease_backend().atry_acquire(THREAD, "worker-a", ttl=120.0)
        assert lease is not None
        fenced = {"configurable": {"thread_id": THREAD, FENCE_CONFIG_KEY: lease.token}}
        await graph_a.ainvoke(turn_input("A#1"), fenced)
        head = await saver.aget_tuple(thread_config(THREAD))
        assert head is not None

        attempts = Attempts(where, figures)
        objects = {"graph A runs": graph_a, **worker_b_objects(saver)}
        for obj_name, obj in objects.items():
            prefix = "wrapper." if isinstance(obj, ThreadLeasedGraph) else f"{obj_name}."
            for name, drive in ASYNC_DRIVERS.items():
                if prefix == "wrapper." and name == "astream_events v3":
                    name = "stream_events (astream_events v3)"
                before = await asyncio.to_thread(where.dump, THREAD)
                try:
                    await drive(obj, thread_config(THREAD))
                except Exception as exc:
                    attempts.refused(prefix + name, exc, before)
                else:
                    attempts.refused(prefix + name, None, before)
        for name, write in saver_drivers(saver, head.config, lease.token, "other").items():
            if not name.startswith("a"):
                continue  # the sync methods of an async saver: from other threads only
            before = await asyncio.to_thread(where.dump, THREAD)
            try:
                await write()
            except Exception as exc:
                attempts.refused("saver." + name, exc, before)
            else:
                attempts.refused("saver." + name, None, before)
        attempts.record()

        await graph_a.ainvoke(turn_input("A#2"), fenced)
        state = await graph_a.aget_state(fenced)
        assert [m.content for m in state.values["messages"] if m.type == "human"] == ["A#1", "A#2"]


# --------------------------------------------------------------------------- regressions


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_write_path_around_a_lease_with_retry_and_bulk_update_state(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """Finding 1 as reported: while A's leased run is going, B's ``with_retry().invoke``
    and ``bulk_update_state`` on the wrapper both wrote the thread and A's next write
    overwrote them."""
    where = target(backend, request)
    with sync_saver(where) as saver:
        a = with_thread_lease(chat_graph(saver), ttl=30.0)
        b = with_thread_lease(chat_graph(saver), ttl=30.0)
        config = thread_config("t")
        a.invoke(turn_input("A#1"), config)
        holder = saver.lease_backend().try_acquire("t", "worker-a", ttl=30.0)  # A mid-run
        assert holder is not None
        before = where.dump("t")
        with pytest.raises(ThreadBusyError, match="'t'"):
            b.with_retry(stop_after_attempt=2, wait_exponential_jitter=False).invoke(
                turn_input("B"), config
            )
        with pytest.raises(ThreadBusyError):
            b.bulk_update_state(config, [[StateUpdate(B_EDIT, "b")]])
        with pytest.raises(ThreadBusyError, match="with_thread_lease"):  # the bare graph too
            b.graph.with_retry(stop_after_attempt=2, wait_exponential_jitter=False).invoke(
                turn_input("B"), config
            )
        assert where.dump("t") == before
        saver.lease_backend().release(holder)
        a.invoke(turn_input("A#2"), config)
        humans = [m.content for m in a.get_state(config).values["messages"] if m.type == "human"]
        assert humans == ["A#1", "A#2"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_erasure_always_wins_over_a_lease(backend: str, request: pytest.FixtureRequest) -> None:
    """delete_thread / delete_for_runs are never refused by a lease; they fence the holder
    out, so the holder's next write is refused and the erasure is not undone."""
    where = target(backend, request)
    with sync_saver(where) as saver:
        graph = chat_graph(saver)
        leases = saver.lease_backend()
        for erase in ("delete_thread", "delete_for_runs", "forget_threads"):
            thread = f"erased-by-{erase}"
            lease = leases.try_acquire(thread, "worker-a", ttl=30.0)
            assert lease is not None
            fenced = {"configurable": {"thread_id": thread, FENCE_CONFIG_KEY: lease.token}}
            graph.invoke(turn_input("secret"), {**fenced, "metadata": {"run_id": f"run-{thread}"}})
            if erase == "delete_thread":
                saver.delete_thread(thread)
            elif erase == "forget_threads":
                saver.forget_threads([thread])
            else:
                saver.delete_for_runs([f"run-{thread}"])
            assert saver.get_tuple(thread_config(thread)) is None
            with pytest.raises(StaleWriteError, match="fencing token"):
                graph.invoke(turn_input("late"), fenced)
            assert saver.get_tuple(thread_config(thread)) is None
            assert leases.renew(lease, 30.0) is False
            # the thread is free again: a new lease gets a newer token
            fresh = leases.try_acquire(thread, "worker-b", ttl=30.0)
            assert fresh is not None and fresh.token > lease.token
            leases.release(fresh)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_holder_fenced_out_mid_run_gets_lease_lost(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """Under the wrapper, a delete mid-run stops the holder with LeaseLostError."""
    where = target(backend, request)
    with sync_saver(where) as saver:

        def erased_mid_run(state: MessagesState) -> dict[str, Any]:
            saver.delete_thread("doomed")  # another worker's erasure, mid-turn
            return {"messages": []}

        builder = StateGraph(MessagesState)
        builder.add_node("erase", erased_mid_run)
        builder.add_edge(START, "erase")
        builder.add_edge("erase", END)
        leased = with_thread_lease(builder.compile(checkpointer=saver), ttl=30.0)
        with pytest.raises(LeaseLostError, match="doomed"):
            leased.invoke(turn_input("x"), thread_config("doomed"))
        assert saver.get_tuple(thread_config("doomed")) is None


@pytest.mark.postgres
def test_sweep_never_touches_a_leased_thread(postgres_dsn: str) -> None:
    """Background retention (TTL and keep-last sweeps) skips a thread with a live lease."""
    where = Target("postgres", dsn=postgres_dsn)
    with sync_saver(where, ttl={"default_ttl": 1}, keep_last=1) as saver:
        graph = chat_graph(saver)
        lease = saver.lease_backend().try_acquire("busy", "worker-a", ttl=60.0)
        assert lease is not None
        fenced = {"configurable": {"thread_id": "busy", FENCE_CONFIG_KEY: lease.token}}
        graph.invoke(turn_input("one"), fenced)
        graph.invoke(turn_input("two"), fenced)
        where.age("busy", 3600)
        before = where.dump("busy")
        result = saver.sweep()
        assert result.expired_threads == [] and result.pruned_checkpoints == 0
        assert where.dump("busy") == before
        saver.lease_backend().release(lease)
        assert saver.sweep().expired_threads == ["busy"]
