"""Postgres checkpointer benchmark: ours vs the official saver, side by side in one run.

(a) Latency: a ``MessagesState`` graph START -> a -> b -> END invoked ``invokes`` times over
    ``threads`` thread ids with our ``PostgresSaver`` (pooled), the official
    ``PostgresSaver`` (``from_conn_string``: one connection) and ``InMemorySaver`` (the
    floor). Rounds are interleaved and the saver order rotates, so noise hits all alike.
    Reports per-invoke median / p95 and ratios. Target: ours <= 1.1x official.
(b) Throughput: ``clients`` asyncio tasks invoke concurrently on ONE saver with a pool of
    ``clients`` connections: our ``AsyncPostgresSaver`` vs the official
    ``AsyncPostgresSaver(pool)`` (which takes an instance lock around every query).
    Reports invokes/s and the ratio. Target: ours >= 1.5x official.

Each saver gets its own fresh temporary database, dropped at the end.

Run::

    python -m langgraph_recall.bench.postgres_saver  # 30 threads, 300 invokes; 8 clients
    python -m langgraph_recall.bench.postgres_saver --invokes 60 --client-invokes 10 --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver as OfficialPostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver as OfficialAsyncPostgresSaver
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from langgraph_recall.bench._common import POSTGRES_URI, percentile, temp_database
from langgraph_recall.bench.checkpointers import build_graph
from langgraph_recall.bench.progress import OnProgress, Progress, ProgressBar, print_progress
from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver

__all__ = [
    "LatencyResult",
    "SaverComparison",
    "ThroughputResult",
    "build_graph",
    "format_report",
    "main",
    "run",
]


OURS = "ours PostgresSaver"
OFFICIAL = "official PostgresSaver"
MEMORY = "InMemorySaver"
OURS_ASYNC = "ours AsyncPostgresSaver"
OFFICIAL_ASYNC = "official AsyncPostgresSaver"


@dataclass
class LatencyResult:
    """Per-invoke latency of one sync saver (milliseconds)."""

    name: str
    median_ms: float = 0.0
    p95_ms: float = 0.0
    ratio_to_official: float = 0.0
    ratio_to_memory: float = 0.0
    invoke_samples: list[float] = field(default_factory=list, repr=False)


@dataclass
class ThroughputResult:
    """Concurrent async throughput of one saver."""

    name: str
    invokes: int = 0
    seconds: float = 0.0
    invokes_per_s: float = 0.0
    ratio_to_official: float = 0.0


@dataclass
class SaverComparison:
    """What :func:`run` returns: its sizes, (a) latency and (b) throughput."""

    config: dict[str, int]
    latency: list[LatencyResult]
    throughput: list[ThroughputResult]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data, without the raw samples."""
        return {
            "config": dict(self.config),
            "latency": [
                {k: v for k, v in asdict(r).items() if k != "invoke_samples"} for r in self.latency
            ],
            "throughput": [asdict(t) for t in self.throughput],
        }


# --------------------------------------------------------------------------- (a) latency


def _latency(uri: str, threads: int, invokes: int, progress: OnProgress) -> list[LatencyResult]:
    rounds = max(1, invokes // threads)
    with contextlib.ExitStack() as stack:
        ours = stack.enter_context(
            PostgresSaver.from_conn_string(stack.enter_context(temp_database(uri)))
        )
        ours.setup()
        official = stack.enter_context(
            OfficialPostgresSaver.from_conn_string(stack.enter_context(temp_database(uri)))
        )
        official.setup()
        graphs: dict[str, Any] = {
            OURS: build_graph(ours),
            OFFICIAL: build_graph(official),
            MEMORY: build_graph(InMemorySaver()),
        }
        samples: dict[str, list[float]] = {name: [] for name in graphs}
        names = list(graphs)
        # warm-up: one invoke per saver on a throwaway thread
        for graph in graphs.values():
            graph.invoke({"messages": [HumanMessage("warm")]}, {"configurable": {"thread_id": "w"}})
        for r in range(rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                graph = graphs[name]
                for t in range(threads):
                    config = {"configurable": {"thread_id": f"t{t}"}}
                    start = time.perf_counter()
                    graph.invoke({"messages": [HumanMessage(f"turn {r}")]}, config)
                    samples[name].append((time.perf_counter() - start) * 1000)
            progress(Progress("(a) sync invokes, 3 savers", (r + 1) * threads, rounds * threads))
    medians = {name: statistics.median(s) for name, s in samples.items()}
    return [
        LatencyResult(
            name=name,
            median_ms=medians[name],
            p95_ms=percentile(s, 0.95),
            ratio_to_official=medians[name] / medians[OFFICIAL],
            ratio_to_memory=medians[name] / medians[MEMORY],
            invoke_samples=s,
        )
        for name, s in samples.items()
    ]


# --------------------------------------------------------------------------- (b) throughput


@contextlib.asynccontextmanager
async def _official_async(dsn: str, size: int) -> AsyncIterator[OfficialAsyncPostgresSaver]:
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        dsn,
        min_size=size,
        max_size=size,
        open=False,
        kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": 0},
    )
    await pool.open(wait=True)
    try:
        yield OfficialAsyncPostgresSaver(pool)
    finally:
        await pool.close()


@contextlib.asynccontextmanager
async def _ours_async(dsn: str, size: int) -> AsyncIterator[AsyncPostgresSaver]:
    async with AsyncPostgresSaver.from_conn_string(
        dsn, pool_config={"min_size": size, "max_size": size}
    ) as saver:
        yield saver


async def _throughput_one(
    name: str,
    opener: Callable[[str, int], contextlib.AbstractAsyncContextManager[Any]],
    dsn: str,
    clients: int,
    per_client: int,
    count: Callable[[int], None],
) -> ThroughputResult:
    async with opener(dsn, clients) as saver:
        await saver.setup()
        graph = build_graph(saver)
        warm = {"configurable": {"thread_id": f"{name}-warm"}}
        await graph.ainvoke({"messages": [HumanMessage("warm")]}, warm)
        done = 0

        async def client(c: int) -> None:
            nonlocal done
            for i in range(per_client):
                config = {"configurable": {"thread_id": f"{name}-c{c}-{i % 4}"}}
                await graph.ainvoke({"messages": [HumanMessage(f"turn {i}")]}, config)
                done += 1
                count(done)

        start = time.perf_counter()
        await asyncio.gather(*(client(c) for c in range(clients)))
        seconds = time.perf_counter() - start
    total = clients * per_client
    return ThroughputResult(name, total, seconds, total / seconds)


async def _throughput(
    uri: str, clients: int, per_client: int, repeats: int, progress: OnProgress
) -> list[ThroughputResult]:
    best: dict[str, ThroughputResult] = {}
    openers: dict[str, Callable[[str, int], contextlib.AbstractAsyncContextManager[Any]]] = {
        OFFICIAL_ASYNC: _official_async,
        OURS_ASYNC: _ours_async,
    }
    total = repeats * len(openers) * clients * per_client
    finished = 0
    with contextlib.ExitStack() as stack:
        dsns = {name: stack.enter_context(temp_database(uri)) for name in openers}
        for rep in range(repeats):
            order = list(openers) if rep % 2 == 0 else list(reversed(openers))
            for name in order:
                offset = finished

                def count(done: int, offset: int = offset) -> None:
                    progress(Progress(f"(b) {clients} async clients", offset + done, total))

                result = await _throughput_one(
                    name, openers[name], dsns[name], clients, per_client, count
                )
                finished += clients * per_client
                if name not in best or result.invokes_per_s > best[name].invokes_per_s:
                    best[name] = result
    for result in best.values():
        result.ratio_to_official = result.invokes_per_s / best[OFFICIAL_ASYNC].invokes_per_s
    return [best[OURS_ASYNC], best[OFFICIAL_ASYNC]]


# --------------------------------------------------------------------------- entry points


def run(
    *,
    uri: str = POSTGRES_URI,
    threads: int = 30,
    invokes: int = 300,
    clients: int = 8,
    client_invokes: int = 40,
    repeats: int = 2,
    progress: OnProgress = print_progress,
) -> SaverComparison:
    """Run both benchmarks and return their results (:func:`format_report` prints them).

    Example:
        ```python
        from langgraph_recall.bench.postgres_saver import run

        comparison = run(uri=DB_URI, threads=2, invokes=4, clients=2, client_invokes=2, repeats=1)
        print(comparison.latency[0].ratio_to_official)
        ```

    Args:
        uri: Admin DSN; each saver gets a temporary database on its server.
        threads: Thread ids the sync invokes cycle through.
        invokes: Sync invokes per saver (a).
        clients: Concurrent async clients, and the pool size (b).
        client_invokes: Invokes per client (b).
        repeats: Throughput repeats; the best is kept (b).
        progress: Receives the :class:`~langgraph_recall.bench.progress.Progress` events.
    """
    progress(Progress(f"Postgres checkpointer benchmark on {uri.split('@')[-1]}"))
    latency = _latency(uri, threads, invokes, progress)
    throughput = asyncio.run(_throughput(uri, clients, client_invokes, repeats, progress))
    config = {
        "threads": threads,
        "invokes": invokes,
        "clients": clients,
        "client_invokes": client_invokes,
        "repeats": repeats,
    }
    return SaverComparison(config, latency, throughput)


def format_report(comparison: SaverComparison) -> str:
    """The two tables and the targets, as text."""
    config = comparison.config
    threads, clients = config["threads"], config["clients"]
    rounds = max(1, config["invokes"] // threads)
    lines = [
        f"(a) per-invoke latency, {threads} threads x {rounds} rounds",
        f"  {'saver':<28} {'median ms':>10} {'p95 ms':>8} {'vs official':>12} {'vs memory':>10}",
    ]
    for r in comparison.latency:
        lines.append(
            f"  {r.name:<28} {r.median_ms:>10.2f} {r.p95_ms:>8.2f} "
            f"{r.ratio_to_official:>11.2f}x {r.ratio_to_memory:>9.2f}x"
        )
    lines.append(f"(b) {clients} concurrent async clients on one saver, pool of {clients}")
    lines.append(
        f"  {'saver':<28} {'invokes':>8} {'seconds':>8} {'invokes/s':>10} {'vs official':>12}"
    )
    for t in comparison.throughput:
        lines.append(
            f"  {t.name:<28} {t.invokes:>8} {t.seconds:>8.2f} {t.invokes_per_s:>10.1f} "
            f"{t.ratio_to_official:>11.2f}x"
        )
    ours_latency = next(r for r in comparison.latency if r.name == OURS).ratio_to_official
    ours_throughput = comparison.throughput[0].ratio_to_official
    lines.append(
        f"  targets: latency ours/official {ours_latency:.2f}x (<= 1.10x), "
        f"throughput ours/official {ours_throughput:.2f}x (>= 1.50x)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (``python -m langgraph_recall.bench.postgres_saver``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--uri", default=POSTGRES_URI, help="admin DSN (temp DBs are created)")
    parser.add_argument("--threads", type=int, default=30)
    parser.add_argument("--invokes", type=int, default=300, help="sync invokes per saver")
    parser.add_argument("--clients", type=int, default=8, help="concurrent async clients")
    parser.add_argument("--client-invokes", type=int, default=40, help="invokes per client")
    parser.add_argument("--repeats", type=int, default=2, help="throughput repeats (best kept)")
    parser.add_argument("--json", dest="json_path", default=None, help="write results here")
    args = parser.parse_args(argv)
    with ProgressBar("postgres_saver") as bar:
        comparison = run(
            uri=args.uri,
            threads=args.threads,
            invokes=args.invokes,
            clients=args.clients,
            client_invokes=args.client_invokes,
            repeats=args.repeats,
            progress=bar,
        )
    print(format_report(comparison))
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as fh:
            json.dump(comparison.to_json(), fh, indent=2)
        print(f"  wrote {args.json_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
