"""Checkpointer benchmark: the same LangGraph graph on several savers, side by side.

A ``MessagesState`` graph START -> a -> b -> END (each node appends a message) is invoked
``invokes`` times over ``threads`` thread ids on every saver, interleaved per round (the
saver order rotates each round) so machine noise hits all of them alike. A second table
times a direct ``put`` + ``get_tuple`` of a 51-message checkpoint. Ratios are to
``InMemorySaver`` (the floor) from the same run.

Savers: ``InMemorySaver``, our ``RedisSaver``, the official ``PostgresSaver`` (fresh temp
database), ``SqliteSaver`` (temp file) and, if importable, our Postgres saver.

Run::

    python -m langgraph_recall.bench.checkpointers  # 30 threads, 300 invokes per saver
    python -m langgraph_recall.bench.checkpointers --invokes 60 --json results.json

Services: ``LANGGRAPH_RECALL_BENCH_REDIS_URL`` (default ``redis://127.0.0.1:6379/0``) and
``LANGGRAPH_RECALL_BENCH_POSTGRES_URI`` (default ``postgresql://postgres@127.0.0.1:5432/postgres``);
a saver whose service is down is reported as skipped.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from langgraph_recall.bench._common import temp_database
from langgraph_recall.bench.progress import OnProgress, Progress, ProgressBar, print_progress

__all__ = ["SaverResult", "build_graph", "main", "run"]

REDIS_URL = os.environ.get("LANGGRAPH_RECALL_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")

SaverFactory = Callable[[], contextlib.AbstractContextManager[BaseCheckpointSaver[Any]]]


@dataclass
class SaverResult:
    """Timings of one saver (milliseconds)."""

    name: str
    invoke_median_ms: float = 0.0
    invoke_p95_ms: float = 0.0
    invoke_ratio: float = 0.0
    put_get_median_ms: float = 0.0
    put_get_ratio: float = 0.0
    skipped: str | None = None
    invoke_samples: list[float] = field(default_factory=list, repr=False)
    put_get_samples: list[float] = field(default_factory=list, repr=False)


def build_graph(checkpointer: BaseCheckpointSaver[Any]) -> Any:
    """START -> a -> b -> END on ``MessagesState``; each node appends one AI message."""

    def node_a(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(content=f"a saw {len(state['messages'])} messages")]}

    def node_b(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(content=f"b saw {len(state['messages'])} messages")]}

    builder = StateGraph(MessagesState)
    builder.add_node("a", node_a)
    builder.add_node("b", node_b)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", END)
    return builder.compile(checkpointer=checkpointer)


# ----- saver factories --------------------------------------------------------------------


@contextlib.contextmanager
def _in_memory() -> Iterator[BaseCheckpointSaver[Any]]:
    yield InMemorySaver()


@contextlib.contextmanager
def _our_redis() -> Iterator[BaseCheckpointSaver[Any]]:
    import redis

    from langgraph_recall.checkpoint.redis import RedisSaver

    prefix = f"lgmbench{uuid.uuid4().hex[:8]}"
    with RedisSaver.from_conn_string(REDIS_URL, prefix=prefix) as saver:
        saver.setup()
        try:
            yield saver
        finally:
            client = redis.Redis.from_url(REDIS_URL)
            keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
            for start in range(0, len(keys), 500):
                client.delete(*keys[start : start + 500])
            client.close()


@contextlib.contextmanager
def _official_postgres() -> Iterator[BaseCheckpointSaver[Any]]:
    from langgraph.checkpoint.postgres import PostgresSaver

    with temp_database() as dsn, PostgresSaver.from_conn_string(dsn) as saver:
        saver.setup()
        yield saver


@contextlib.contextmanager
def _our_postgres() -> Iterator[BaseCheckpointSaver[Any]]:
    from langgraph_recall.checkpoint.postgres import PostgresSaver

    with temp_database() as dsn, PostgresSaver.from_conn_string(dsn) as saver:
        saver.setup()
        yield saver


@contextlib.contextmanager
def _sqlite() -> Iterator[BaseCheckpointSaver[Any]]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    with (
        tempfile.TemporaryDirectory() as tmp,
        SqliteSaver.from_conn_string(os.path.join(tmp, "bench.sqlite")) as saver,
    ):
        saver.setup()
        yield saver


def _our_postgres_available() -> bool:
    try:
        import langgraph_recall.checkpoint.postgres  # noqa: F401
    except ImportError:
        return False
    return True


def default_savers() -> dict[str, SaverFactory]:
    """Name -> factory of every saver the benchmark compares (InMemorySaver first)."""
    savers: dict[str, SaverFactory] = {
        "InMemorySaver": _in_memory,
        "RedisSaver (ours)": _our_redis,
        "PostgresSaver (official)": _official_postgres,
        "SqliteSaver": _sqlite,
    }
    if _our_postgres_available():
        savers["PostgresSaver (ours)"] = _our_postgres
    return savers


# ----- measurement ------------------------------------------------------------------------


def _percentile(samples: Sequence[float], fraction: float) -> float:
    ordered = sorted(samples)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def _big_checkpoint(saver: BaseCheckpointSaver[Any], n_messages: int = 51) -> tuple[Any, ...]:
    checkpoint = empty_checkpoint()
    messages = [
        (HumanMessage if i % 2 == 0 else AIMessage)(content=f"message {i} " + "x" * 200)
        for i in range(n_messages)
    ]
    version = saver.get_next_version(None, None)
    checkpoint["channel_values"] = {"messages": messages}
    checkpoint["channel_versions"] = {"messages": version}
    return checkpoint, {"messages": version}


def _time_put_get(saver: BaseCheckpointSaver[Any], thread_id: str) -> float:
    checkpoint, versions = _big_checkpoint(saver)
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    started = time.perf_counter()
    stored = saver.put(config, checkpoint, {"source": "loop", "step": 1}, versions)
    loaded = saver.get_tuple(stored)
    elapsed = (time.perf_counter() - started) * 1000
    if loaded is None or len(loaded.checkpoint["channel_values"]["messages"]) != 51:
        raise RuntimeError(f"{type(saver).__name__} lost the 51-message checkpoint")
    return elapsed


def run(
    *,
    threads: int = 30,
    invokes: int = 300,
    put_get: int = 100,
    savers: dict[str, SaverFactory] | None = None,
    progress: OnProgress = print_progress,
) -> list[SaverResult]:
    """Run the benchmark and return one :class:`SaverResult` per saver (InMemory first).

    Args:
        threads: Distinct ``thread_id`` values the invokes cycle through.
        invokes: Graph invocations per saver.
        put_get: Direct put + get_tuple rounds of a 51-message checkpoint per saver.
        savers: Name -> context-manager factory; default :func:`default_savers`.
        progress: Receives the :class:`~langgraph_recall.bench.progress.Progress` events.
    """
    factories = savers if savers is not None else default_savers()
    results = {name: SaverResult(name=name) for name in factories}
    with contextlib.ExitStack() as stack:
        graphs: dict[str, Any] = {}
        active: dict[str, BaseCheckpointSaver[Any]] = {}
        for name, factory in factories.items():
            try:
                saver = stack.enter_context(factory())
            except Exception as exc:  # a missing service skips that saver, loudly
                results[name].skipped = f"{type(exc).__name__}: {exc}"
                progress(Progress(f"skip {name}: {results[name].skipped}"))
                continue
            active[name] = saver
            graphs[name] = build_graph(saver)
        run_id = uuid.uuid4().hex[:6]
        names = list(graphs)
        for name in names:  # warm-up: connections, prepared statements, script cache
            for i in range(3):
                graphs[name].invoke(
                    {"messages": [HumanMessage(content="warm up")]},
                    {"configurable": {"thread_id": f"warm-{run_id}-{i}"}},
                )
        progress(
            Progress(f"invoking the graph {invokes}x over {threads} threads on {len(names)} savers")
        )
        step = max(1, invokes // 10)
        for i in range(invokes):
            config = {"configurable": {"thread_id": f"bench-{run_id}-{i % threads}"}}
            turn = {"messages": [HumanMessage(content=f"turn {i}")]}
            for name in names[i % len(names) :] + names[: i % len(names)]:
                started = time.perf_counter()
                graphs[name].invoke(turn, config)
                results[name].invoke_samples.append((time.perf_counter() - started) * 1000)
            if (i + 1) % step == 0:
                progress(Progress("invokes", i + 1, invokes))
        progress(Progress(f"put + get_tuple of a 51-message checkpoint, {put_get}x per saver"))
        for i in range(put_get):
            for name in names[i % len(names) :] + names[: i % len(names)]:
                sample = _time_put_get(active[name], f"big-{run_id}-{i % threads}")
                results[name].put_get_samples.append(sample)
    floor = results[names[0]] if names else None
    for result in results.values():
        if result.skipped:
            continue
        result.invoke_median_ms = statistics.median(result.invoke_samples)
        result.invoke_p95_ms = _percentile(result.invoke_samples, 0.95)
        result.put_get_median_ms = statistics.median(result.put_get_samples)
        if floor is not None and floor.invoke_samples:
            result.invoke_ratio = result.invoke_median_ms / statistics.median(floor.invoke_samples)
            result.put_get_ratio = result.put_get_median_ms / statistics.median(
                floor.put_get_samples
            )
    return list(results.values())


def format_table(results: Sequence[SaverResult]) -> str:
    """A plain-text table of the results."""
    header = (
        f"{'saver':<26} {'invoke median':>14} {'p95':>9} {'vs InMemory':>12} "
        f"{'51-msg put+get':>15} {'vs InMemory':>12}"
    )
    lines = [header, "-" * len(header)]
    for r in results:
        if r.skipped:
            lines.append(f"{r.name:<26} skipped ({r.skipped})")
            continue
        lines.append(
            f"{r.name:<26} {r.invoke_median_ms:>11.2f} ms {r.invoke_p95_ms:>6.2f} ms "
            f"{r.invoke_ratio:>11.2f}x {r.put_get_median_ms:>12.2f} ms {r.put_get_ratio:>11.2f}x"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (``python -m langgraph_recall.bench.checkpointers``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=30)
    parser.add_argument("--invokes", type=int, default=300, help="graph invokes per saver")
    parser.add_argument("--put-get", type=int, default=100, help="51-message put+get rounds")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    with ProgressBar("checkpointers") as bar:
        results = run(
            threads=args.threads, invokes=args.invokes, put_get=args.put_get, progress=bar
        )
    load_after = os.getloadavg()[0]
    print(format_table(results))
    print(f"(machine load average {load_before:.1f} -> {load_after:.1f} on {os.cpu_count()} CPUs)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            payload = [
                {k: v for k, v in asdict(r).items() if not k.endswith("_samples")} for r in results
            ]
            json.dump(
                {
                    "threads": args.threads,
                    "invokes": args.invokes,
                    "load_average": [load_before, load_after],
                    "results": payload,
                },
                handle,
                indent=2,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
