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

    python -m bench.postgres_saver                       # 30 threads, 300 invokes; 8 clients
    python -m bench.postgres_saver --invokes 60 --client-invokes 10 --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import psycopg
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver as OfficialPostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver as OfficialAsyncPostgresSaver
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from bench.checkpointers import build_graph
from langgraph_memory.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver

__all__ = ["LatencyResult", "ThroughputResult", "build_graph", "main", "run"]

POSTGRES_URI = os.environ.get(
    "LANGGRAPH_MEMORY_BENCH_POSTGRES_URI", "postgresql://postgres@127.0.0.1:5432/postgres"
)

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
    samples: list[float] = field(default_factory=list, repr=False)


@dataclass
class ThroughputResult:
    """Concurrent async throughput of one saver."""

    name: str
    invokes: int = 0
    seconds: float = 0.0
    invokes_per_s: float = 0.0
    ratio_to_official: float = 0.0


Emit = Callable[[str], None]


class _Reporter:
    """Progress and table output: a terminal bar, or lines to a callback (e.g. the CLI)."""

    def __init__(self, emit: Emit | None) -> None:
        self.emit = emit

    def line(self, text: str = "") -> None:
        (self.emit or print)(text)

    def progress(self, label: str, done: int, total: int) -> None:
        if self.emit is not None:
            if done == total or done % max(1, total // 10) == 0:
                self.emit(f"  {label}: {done}/{total}")
            return
        _progress_bar(label, done, total)


def _progress_bar(label: str, done: int, total: int) -> None:
    if done < total and done % max(1, total // 30):
        return
    width = 30
    filled = width * done // max(total, 1)
    end = "\n" if done >= total else ""
    print(f"\r  {label:<32} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}", end=end)
    sys.stdout.flush()


@contextlib.contextmanager
def _temp_database(base_uri: str) -> Iterator[str]:
    params = conninfo_to_dict(base_uri)
    name = f"lgm_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base_uri, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_conninfo(**{**params, "dbname": name})  # type: ignore[arg-type]
    finally:
        with psycopg.connect(base_uri, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# --------------------------------------------------------------------------- (a) latency


def _latency(uri: str, threads: int, invokes: int, out: _Reporter) -> list[LatencyResult]:
    rounds = max(1, invokes // threads)
    with contextlib.ExitStack() as stack:
        ours = stack.enter_context(
            PostgresSaver.from_conn_string(stack.enter_context(_temp_database(uri)))
        )
        ours.setup()
        official = stack.enter_context(
            OfficialPostgresSaver.from_conn_string(stack.enter_context(_temp_database(uri)))
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
            out.progress("(a) sync invokes, 3 savers", (r + 1) * threads, rounds * threads)
    medians = {name: statistics.median(s) for name, s in samples.items()}
    return [
        LatencyResult(
            name=name,
            median_ms=medians[name],
            p95_ms=_percentile(s, 0.95),
            ratio_to_official=medians[name] / medians[OFFICIAL],
            ratio_to_memory=medians[name] / medians[MEMORY],
            samples=s,
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
    progress: Callable[[int], None],
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
                progress(done)

        start = time.perf_counter()
        await asyncio.gather(*(client(c) for c in range(clients)))
        seconds = time.perf_counter() - start
    total = clients * per_client
    return ThroughputResult(name, total, seconds, total / seconds)


async def _throughput(
    uri: str, clients: int, per_client: int, repeats: int, out: _Reporter
) -> list[ThroughputResult]:
    best: dict[str, ThroughputResult] = {}
    openers: dict[str, Callable[[str, int], contextlib.AbstractAsyncContextManager[Any]]] = {
        OFFICIAL_ASYNC: _official_async,
        OURS_ASYNC: _ours_async,
    }
    total = repeats * len(openers) * clients * per_client
    finished = 0
    with contextlib.ExitStack() as stack:
        dsns = {name: stack.enter_context(_temp_database(uri)) for name in openers}
        for rep in range(repeats):
            order = list(openers) if rep % 2 == 0 else list(reversed(openers))
            for name in order:
                offset = finished

                def progress(done: int, offset: int = offset) -> None:
                    out.progress(f"(b) {clients} async clients", offset + done, total)

                result = await _throughput_one(
                    name, openers[name], dsns[name], clients, per_client, progress
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
    json_path: str | None = None,
    progress: Emit | None = None,
) -> dict[str, Any]:
    """Run both benchmarks, print the tables and return the results (also as JSON).

    Example:
        ```python
        results = run(invokes=60, client_invokes=10)
        print(results["latency"][0]["ratio_to_official"])
        ```

    Args:
        progress: Receives progress and table lines instead of stdout (e.g. a CLI sink).
    """
    out = _Reporter(progress)
    out.line(f"Postgres checkpointer benchmark on {uri.split('@')[-1]}")
    latency = _latency(uri, threads, invokes, out)
    throughput = asyncio.run(_throughput(uri, clients, client_invokes, repeats, out))
    out.line()
    out.line(f"(a) per-invoke latency, {threads} threads x {max(1, invokes // threads)} rounds")
    out.line(
        f"  {'saver':<28} {'median ms':>10} {'p95 ms':>8} {'vs official':>12} {'vs memory':>10}"
    )
    for r in latency:
        out.line(
            f"  {r.name:<28} {r.median_ms:>10.2f} {r.p95_ms:>8.2f} "
            f"{r.ratio_to_official:>11.2f}x {r.ratio_to_memory:>9.2f}x"
        )
    out.line(f"(b) {clients} concurrent async clients on one saver, pool of {clients}")
    out.line(f"  {'saver':<28} {'invokes':>8} {'seconds':>8} {'invokes/s':>10} {'vs official':>12}")
    for t in throughput:
        out.line(
            f"  {t.name:<28} {t.invokes:>8} {t.seconds:>8.2f} {t.invokes_per_s:>10.1f} "
            f"{t.ratio_to_official:>11.2f}x"
        )
    ours_latency = next(r for r in latency if r.name == OURS).ratio_to_official
    ours_throughput = throughput[0].ratio_to_official
    out.line(
        f"  targets: latency ours/official {ours_latency:.2f}x (<= 1.10x), "
        f"throughput ours/official {ours_throughput:.2f}x (>= 1.50x)"
    )
    results = {
        "config": {
            "threads": threads,
            "invokes": invokes,
            "clients": clients,
            "client_invokes": client_invokes,
            "repeats": repeats,
        },
        "latency": [{k: v for k, v in asdict(r).items() if k != "samples"} for r in latency],
        "throughput": [asdict(t) for t in throughput],
    }
    if json_path:
        with open(json_path, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
        out.line(f"  wrote {json_path}")
    return results


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (``python -m bench.postgres_saver``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--uri", default=POSTGRES_URI, help="admin DSN (temp DBs are created)")
    parser.add_argument("--threads", type=int, default=30)
    parser.add_argument("--invokes", type=int, default=300, help="sync invokes per saver")
    parser.add_argument("--clients", type=int, default=8, help="concurrent async clients")
    parser.add_argument("--client-invokes", type=int, default=40, help="invokes per client")
    parser.add_argument("--repeats", type=int, default=2, help="throughput repeats (best kept)")
    parser.add_argument("--json", dest="json_path", default=None, help="write results here")
    args = parser.parse_args(argv)
    run(
        uri=args.uri,
        threads=args.threads,
        invokes=args.invokes,
        clients=args.clients,
        client_invokes=args.client_invokes,
        repeats=args.repeats,
        json_path=args.json_path,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
