"""The lease wrapper on real LangGraph graphs with the process-local lease backend."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Annotated, Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

from langgraph_recall import with_thread_lease as top_level_with_thread_lease
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


def _append(left: list[str], right: list[str]) -> list[str]:
    return [*left, *right]


class LogState(TypedDict):
    log: Annotated[list[str], _append]


class FencedInMemorySaver(InMemorySaver):
    """InMemorySaver that refuses writes whose fencing token is not the current one."""

    def __init__(self, backend: InMemoryLeaseBackend) -> None:
        super().__init__()
        self.backend = backend

    def _check(self, config: RunnableConfig) -> None:
        configurable = config.get("configurable", {})
        token = configurable.get(FENCE_CONFIG_KEY)
        thread_id = str(configurable["thread_id"])
        if token is not None and token != self.backend.current_token(thread_id):
            raise StaleWriteError(f"token {token} is stale for thread {thread_id!r}")

    def put(self, config: RunnableConfig, *args: Any, **kwargs: Any) -> RunnableConfig:
        self._check(config)
        return super().put(config, *args, **kwargs)

    def put_writes(self, config: RunnableConfig, *args: Any, **kwargs: Any) -> None:
        self._check(config)
        super().put_writes(config, *args, **kwargs)

    def lease_backend(self) -> InMemoryLeaseBackend:
        return self.backend


class Recorder:
    """Shared, thread-safe start/end markers of node executions."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.lock = threading.Lock()

    def mark(self, event: str) -> None:
        with self.lock:
            self.events.append(event)


def build_graph(
    checkpointer: InMemorySaver,
    recorder: Recorder,
    *,
    pause: float = 0.0,
    gate: threading.Event | None = None,
) -> Any:
    def work(state: LogState, config: RunnableConfig) -> dict[str, list[str]]:
        name = config["configurable"].get("run_name", "run")
        token = config["configurable"].get(FENCE_CONFIG_KEY)
        recorder.mark(f"start {name}")
        if gate is not None:
            gate.wait(10)
        time.sleep(pause)
        recorder.mark(f"end {name}")
        return {"log": [f"{name} token={ordinal(token)}"]}

    def after(state: LogState) -> dict[str, list[str]]:
        recorder.mark("after")
        return {"log": ["after"]}

    builder = StateGraph(LogState)
    builder.add_node("work", work)
    builder.add_node("after", after)
    builder.add_edge(START, "work")
    builder.add_edge("work", "after")
    return builder.compile(checkpointer=checkpointer)


def cfg(thread_id: str, run_name: str = "run") -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id, "run_name": run_name}}


def assert_not_interleaved(events: list[str]) -> None:
    """Every ``start X`` is followed directly by ``end X`` (ignoring ``after`` markers)."""
    core = [e for e in events if e != "after"]
    for start, end in zip(core[::2], core[1::2], strict=True):
        assert start.startswith("start ") and end == "end " + start.removeprefix("start ")


ORDINALS: dict[int, int] = {}
"""Each token the test backends issued -> its position among its thread's tokens (1, 2, ...):
tokens carry random digits, the runs log their token's position."""


def ordinal(token: Any) -> Any:
    return ORDINALS.get(token, token)


class SignallingBackend(InMemoryLeaseBackend):
    """In-memory backend that signals when it refuses a renewal (and numbers its tokens)."""

    def __init__(self) -> None:
        super().__init__()
        self.refused = threading.Event()
        self.issued: dict[str, int] = {}

    def _next(self, thread_id: str) -> int:
        token = super()._next(thread_id)
        self.issued[thread_id] = self.issued.get(thread_id, 0) + 1
        ORDINALS[token] = self.issued[thread_id]
        return token

    def current_ordinal(self, thread_id: str) -> int:
        return ordinal(self.current_token(thread_id))

    def renew(self, lease: Any, ttl: float) -> bool:
        renewed = super().renew(lease, ttl)
        if not renewed:
            self.refused.set()
        return renewed


@pytest.fixture
def backend() -> SignallingBackend:
    return SignallingBackend()


def test_top_level_export_is_the_lease_wrapper() -> None:
    assert top_level_with_thread_lease is with_thread_lease


def test_checkpointer_without_lease_backend_is_a_configuration_error() -> None:
    graph = build_graph(InMemorySaver(), Recorder())
    with pytest.raises(ConfigurationError, match=r"InMemorySaver has no lease backend.*RedisSaver"):
        with_thread_lease(graph)
    builder = StateGraph(LogState)
    builder.add_node("n", lambda s: {"log": []})
    builder.add_edge(START, "n")
    with pytest.raises(ConfigurationError, match="compiled with a checkpointer"):
        with_thread_lease(builder.compile())
    with pytest.raises(ConfigurationError, match="not a lease backend"):
        with_thread_lease(graph, backend=object())  # type: ignore[arg-type]


def test_invoke_needs_thread_id(backend: InMemoryLeaseBackend) -> None:
    graph = with_thread_lease(build_graph(InMemorySaver(), Recorder()), backend)
    with pytest.raises(ConfigurationError, match="thread_id"):
        graph.invoke({"log": []}, {"configurable": {}})


def test_invoke_injects_increasing_tokens_and_releases(backend: InMemoryLeaseBackend) -> None:
    saver = FencedInMemorySaver(backend)
    graph = with_thread_lease(build_graph(saver, Recorder()))  # backend from the checkpointer
    assert isinstance(graph, ThreadLeasedGraph)
    graph.invoke({"log": []}, cfg("t1", "first"))
    graph.invoke({"log": []}, cfg("t1", "second"))
    state = graph.get_state(cfg("t1"))  # passthrough
    assert state.values["log"] == ["first token=1", "after", "second token=2", "after"]
    assert FENCE_CONFIG_KEY not in state.metadata
    assert backend.try_acquire("t1", "probe", 1.0) is not None  # released after the run


def test_reject_runs_exactly_one_of_concurrent_turns(backend: InMemoryLeaseBackend) -> None:
    recorder = Recorder()
    graph = with_thread_lease(build_graph(InMemorySaver(), recorder, pause=0.8), backend)
    outcomes: list[str] = []
    barrier = threading.Barrier(4)

    def turn(i: int) -> None:
        barrier.wait()
        try:
            graph.invoke({"log": []}, cfg("busy", f"r{i}"))
            outcomes.append("ran")
        except ThreadBusyError as exc:
            assert "'busy'" in str(exc)
            outcomes.append("busy")

    workers = [threading.Thread(target=turn, args=(i,)) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert sorted(outcomes) == ["busy", "busy", "busy", "ran"]
    assert len(graph.get_state(cfg("busy")).values["log"]) == 2
    graph.invoke({"log": []}, cfg("other"))  # other threads are never blocked


def test_wait_serialises_concurrent_turns(backend: InMemoryLeaseBackend) -> None:
    recorder = Recorder()
    inner = build_graph(InMemorySaver(), recorder, pause=0.05)
    graph = with_thread_lease(inner, backend, strategy="wait", wait_timeout=10)
    results = graph.batch([{"log": []}] * 5, [cfg("q", f"r{i}") for i in range(5)])
    assert len(results) == 5
    assert_not_interleaved(recorder.events)
    log = graph.get_state(cfg("q")).values["log"]
    assert len(log) == 10 and log.count("after") == 5


def test_wait_gives_up_after_wait_timeout(backend: InMemoryLeaseBackend) -> None:
    graph = with_thread_lease(
        build_graph(InMemorySaver(), Recorder()), backend, strategy="wait", wait_timeout=0.3
    )
    holder = backend.try_acquire("held", "someone-else", ttl=30)
    assert holder is not None
    started = time.monotonic()
    with pytest.raises(ThreadBusyError, match=r"still busy after waiting 0\.\d+s"):
        graph.invoke({"log": []}, cfg("held"))
    assert 0.3 <= time.monotonic() - started < 2.0


def test_lease_lost_mid_run_stops_before_next_step(backend: SignallingBackend) -> None:
    recorder = Recorder()
    gate = threading.Event()
    graph = with_thread_lease(
        build_graph(InMemorySaver(), recorder, gate=gate), backend, ttl=0.6, renew_every=0.1
    )
    runner_error: list[BaseException] = []

    def run() -> None:
        try:
            graph.invoke({"log": []}, cfg("lost"))
        except BaseException as exc:
            runner_error.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    while "start run" not in recorder.events:
        time.sleep(0.01)
    backend.advance("lost")  # e.g. the thread was deleted by another worker
    assert backend.refused.wait(10)  # the renewer notices within renew_every
    gate.set()
    worker.join()
    assert len(runner_error) == 1 and isinstance(runner_error[0], LeaseLostError)
    assert "'lost'" in str(runner_error[0]) and "refused the renewal" in str(runner_error[0])
    assert "after" not in recorder.events  # drained before the next step


def test_stale_write_becomes_lease_lost(backend: InMemoryLeaseBackend) -> None:
    recorder = Recorder()
    gate = threading.Event()
    saver = FencedInMemorySaver(backend)
    graph = with_thread_lease(build_graph(saver, recorder, gate=gate), ttl=30)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            graph.invoke({"log": []}, cfg("fenced"))
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    while "start run" not in recorder.events:
        time.sleep(0.01)
    backend.advance("fenced")  # renewal period (10 s) is far away: the write is fenced first
    gate.set()
    worker.join()
    assert isinstance(errors[0], LeaseLostError)
    assert isinstance(errors[0].__cause__, StaleWriteError)
    assert graph.get_state(cfg("fenced")).values.get("log", []) == []


def test_stream_holds_the_lease_until_closed(backend: InMemoryLeaseBackend) -> None:
    graph = with_thread_lease(build_graph(InMemorySaver(), Recorder()), backend)
    stream = graph.stream({"log": []}, cfg("s"), stream_mode="updates")
    first = next(stream)
    assert "work" in first
    with pytest.raises(ThreadBusyError):
        graph.invoke({"log": []}, cfg("s"))
    stream.close()
    graph.invoke({"log": []}, cfg("s"))  # released on close


def test_update_state_runs_under_the_lease(backend: InMemoryLeaseBackend) -> None:
    saver = FencedInMemorySaver(backend)
    graph = with_thread_lease(build_graph(saver, Recorder()))
    graph.invoke({"log": []}, cfg("u"))
    graph.update_state(cfg("u"), {"log": ["edited"]}, as_node="after")
    assert graph.get_state(cfg("u")).values["log"][-1] == "edited"
    assert backend.current_ordinal("u") == 2
    holder = backend.try_acquire("u", "other", 30)
    assert holder is not None
    with pytest.raises(ThreadBusyError):
        graph.update_state(cfg("u"), {"log": ["x"]})


async def test_async_reject_and_wait(backend: InMemoryLeaseBackend) -> None:
    recorder = Recorder()
    inner = build_graph(InMemorySaver(), recorder, pause=0.1)
    reject = with_thread_lease(inner, backend)
    outcomes = await asyncio.gather(
        *(reject.ainvoke({"log": []}, cfg("a", f"r{i}")) for i in range(3)),
        return_exceptions=True,
    )
    assert sum(isinstance(o, ThreadBusyError) for o in outcomes) == 2
    assert sum(isinstance(o, dict) for o in outcomes) == 1

    recorder.events.clear()
    wait = with_thread_lease(inner, backend, strategy="wait", wait_timeout=10)
    results = await wait.abatch([{"log": []}] * 3, [cfg("b", f"w{i}") for i in range(3)])
    assert [len(r["log"]) for r in sorted(results, key=lambda r: len(r["log"]))] == [2, 4, 6]
    assert_not_interleaved(recorder.events)
    chunks = [c async for c in wait.astream({"log": []}, cfg("b"), stream_mode="updates")]
    assert [next(iter(c)) for c in chunks] == ["work", "after"]


async def test_async_lease_lost_mid_run(backend: SignallingBackend) -> None:
    recorder = Recorder()
    gate = threading.Event()
    graph = with_thread_lease(
        build_graph(InMemorySaver(), recorder, gate=gate), backend, ttl=0.3, renew_every=0.05
    )
    task = asyncio.create_task(graph.ainvoke({"log": []}, cfg("al")))
    while "start run" not in recorder.events:
        await asyncio.sleep(0.01)
    backend.advance("al")
    assert await asyncio.to_thread(backend.refused.wait, 10)
    gate.set()
    with pytest.raises(LeaseLostError, match="'al'"):
        await task
    assert "after" not in recorder.events


class SyncOnlyBackend:
    """Exposes only the synchronous protocol of an in-memory backend."""

    def __init__(self, inner: InMemoryLeaseBackend) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def try_acquire(self, thread_id: str, owner: str, ttl: float) -> Any:
        self.calls.append(f"acquire {threading.current_thread() is threading.main_thread()}")
        return self.inner.try_acquire(thread_id, owner, ttl)

    def renew(self, lease: Any, ttl: float) -> bool:
        return self.inner.renew(lease, ttl)

    def release(self, lease: Any) -> None:
        self.calls.append("release")
        self.inner.release(lease)


class AsyncOnlyBackend:
    def __init__(self, inner: InMemoryLeaseBackend) -> None:
        self.inner = inner

    async def atry_acquire(self, thread_id: str, owner: str, ttl: float) -> Any:
        return self.inner.try_acquire(thread_id, owner, ttl)

    async def arenew(self, lease: Any, ttl: float) -> bool:
        return self.inner.renew(lease, ttl)

    async def arelease(self, lease: Any) -> None:
        self.inner.release(lease)


async def test_sync_only_backend_serves_async_runs_in_threads(
    backend: InMemoryLeaseBackend,
) -> None:
    sync_only = SyncOnlyBackend(backend)
    graph = with_thread_lease(build_graph(InMemorySaver(), Recorder()), sync_only)
    result = await graph.ainvoke({"log": []}, cfg("so"))
    assert result["log"] == ["run token=1", "after"]
    assert sync_only.calls == ["acquire False", "release"]  # off the event loop's thread


def test_async_only_backend_refuses_sync_runs(backend: InMemoryLeaseBackend) -> None:
    graph = with_thread_lease(build_graph(InMemorySaver(), Recorder()), AsyncOnlyBackend(backend))
    with pytest.raises(ConfigurationError, match="async-only; call ainvoke"):
        graph.invoke({"log": []}, cfg("ao"))


def test_derived_runnables_stay_leased_and_stream_events_refuses(
    backend: InMemoryLeaseBackend,
) -> None:
    graph = with_thread_lease(build_graph(InMemorySaver(), Recorder()), backend)
    configured = graph.with_config(recursion_limit=10)
    assert isinstance(configured, ThreadLeasedGraph)
    assert isinstance(graph.copy(), ThreadLeasedGraph)
    holder = backend.try_acquire("wc", "other", 30)
    assert holder is not None
    runs = {
        "with_config": lambda: configured.invoke({"log": []}, cfg("wc")),
        "with_retry": lambda: graph.with_retry(stop_after_attempt=2).invoke({"log": []}, cfg("wc")),
        "with_fallbacks": lambda: graph.with_fallbacks([graph]).invoke({"log": []}, cfg("wc")),
        "pipe": lambda: (graph | (lambda out: out)).invoke({"log": []}, cfg("wc")),
        "map": lambda: graph.map().invoke([{"log": []}], cfg("wc")),
        "transform": lambda: list(graph.transform(iter([{"log": []}]), cfg("wc"))),
        "batch_as_completed": lambda: list(graph.batch_as_completed([{"log": []}], cfg("wc"))),
    }
    for name, run in runs.items():
        with pytest.raises(ThreadBusyError):
            run()
            pytest.fail(f"{name} ran without the lease")
    with pytest.raises(ConfigurationError, match=r"stream_events\(\) would run the graph outside"):
        graph.stream_events({"log": []}, cfg("wc"))
    assert graph.get_graph().nodes.keys() >= {"work", "after"}  # descriptions pass through
    assert graph.get_name() == graph.graph.get_name()


async def test_astream_events_runs_under_the_lease(backend: InMemoryLeaseBackend) -> None:
    graph = with_thread_lease(build_graph(InMemorySaver(), Recorder()), backend)
    names = [
        event["name"]
        async for event in graph.astream_events({"log": []}, cfg("ev"), version="v2")
        if event["event"] == "on_chain_end"
    ]
    assert {"work", "after"} <= set(names)
    assert backend.current_ordinal("ev") == 1
    with pytest.raises(ConfigurationError, match="version='v3'"):
        async for _ in graph.astream_events({"log": []}, cfg("ev"), version="v3"):
            pass


class FlakyRenewals(SyncOnlyBackend):
    """Renewals fail with a connection error (the backend became unreachable)."""

    def renew(self, lease: Any, ttl: float) -> bool:
        self.calls.append("renew")
        raise ConnectionError("backend unreachable")


def test_renewals_failing_for_ttl_lose_the_lease(backend: InMemoryLeaseBackend) -> None:
    recorder = Recorder()
    flaky = FlakyRenewals(backend)
    graph = with_thread_lease(
        build_graph(InMemorySaver(), recorder, pause=0.8), flaky, ttl=0.4, renew_every=0.1
    )
    with pytest.raises(LeaseLostError, match=r"could not renew for 0\.4s"):
        graph.invoke({"log": []}, cfg("flaky"))
    assert flaky.calls.count("renew") >= 3  # retried before giving up
    assert flaky.calls[-1] == "release"
    assert "after" not in recorder.events


def test_thread_id_bound_with_with_config_is_used(backend: InMemoryLeaseBackend) -> None:
    graph = with_thread_lease(build_graph(InMemorySaver(), Recorder()), backend)
    bound = graph.with_config(configurable={"thread_id": "bound"})
    bound.invoke({"log": []})
    assert backend.current_ordinal("bound") == 1
    assert graph.get_state(cfg("bound")).values["log"] == ["run token=1", "after"]


class HangingRenewals(SyncOnlyBackend):
    """The first renewal never returns (a half-open connection without socket timeout)."""

    def __init__(self, inner: InMemoryLeaseBackend) -> None:
        super().__init__(inner)
        self.unblock = threading.Event()

    def renew(self, lease: Any, ttl: float) -> bool:
        self.unblock.wait(30)
        return False


def test_a_hung_renewal_does_not_hang_the_run(backend: InMemoryLeaseBackend) -> None:
    hanging = HangingRenewals(backend)
    graph = with_thread_lease(
        build_graph(InMemorySaver(), Recorder(), pause=0.3), hanging, ttl=0.5, renew_every=0.1
    )
    results: list[Any] = []
    runner = threading.Thread(target=lambda: results.append(graph.invoke({"log": []}, cfg("h"))))
    runner.start()
    runner.join(timeout=10)
    hanging.unblock.set()
    assert not runner.is_alive()
    assert results[0]["log"] == ["run token=1", "after"]
    assert hanging.calls[-1] == "release"
