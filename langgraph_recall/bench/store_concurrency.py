"""N concurrent ``aput`` / ``asearch`` calls on one async store with a pool of 10: ours vs
LangGraph's ``AsyncPostgresStore``, side by side in one run.

Every call must succeed: the figure is failures (must be 0) and wall time, and the ratio of
our time to LangGraph's. Run: ``python -m langgraph_recall.bench.store_concurrency [--calls 5000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from langgraph_recall.bench._common import embedded_database, temp_database
from langgraph_recall.bench.progress import OnProgress, Progress, print_progress

__all__ = ["ConcurrencyResult", "main", "measure", "run"]

POOL_SIZE = 10
"""Connections per store (``min_size`` 1)."""


@dataclass
class ConcurrencyResult:
    """One store's run: ``calls`` concurrent calls of ``kind``."""

    store: str
    kind: str
    calls: int
    failures: int
    seconds: float
    first_error: str = ""


async def measure(
    name: str, kind: str, calls: int, call: Callable[[int], Awaitable[Any]]
) -> ConcurrencyResult:
    """Start ``calls`` calls at once; count the failures and time the whole."""
    started = time.perf_counter()
    outcomes = await asyncio.gather(*(call(i) for i in range(calls)), return_exceptions=True)
    seconds = time.perf_counter() - started
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    first = f"{type(errors[0]).__name__}: {errors[0]}"[:200] if errors else ""
    return ConcurrencyResult(name, kind, calls, len(errors), seconds, first)


async def _both_kinds(name: str, store: Any, calls: int) -> list[ConcurrencyResult]:
    """``calls`` concurrent ``aput``, then as many ``asearch``, on ``store``."""
    put = await measure(
        name,
        "aput",
        calls,
        lambda i: store.aput(("bench", str(i % 10)), f"k{i}", {"text": f"memory {i}"}),
    )
    search = await measure(
        name,
        "asearch",
        calls,
        lambda i: store.asearch(("bench", str(i % 10)), query=f"memory {i}", limit=5),
    )
    return [put, search]


async def _ours(dsn: str, calls: int) -> list[ConcurrencyResult]:
    from langgraph_recall.bench._common import HashingEmbeddings
    from langgraph_recall.store.postgres import AsyncPostgresMemoryStore

    index: Any = {"dims": 64, "embed": HashingEmbeddings(64), "fields": ["text"]}
    async with AsyncPostgresMemoryStore.from_conn_string(
        dsn, index=index, pool_config={"min_size": 1, "max_size": POOL_SIZE}
    ) as store:
        await store.asetup()
        return await _both_kinds("langgraph-recall", store, calls)


async def _langgraph(dsn: str, calls: int) -> list[ConcurrencyResult]:
    from langgraph.store.postgres import AsyncPostgresStore

    from langgraph_recall.bench._common import HashingEmbeddings

    index: Any = {"dims": 64, "embed": HashingEmbeddings(64), "fields": ["text"]}
    async with AsyncPostgresStore.from_conn_string(
        dsn,
        pool_config={"min_size": 1, "max_size": POOL_SIZE},
        index=index,
    ) as store:
        await store.setup()
        return await _both_kinds("langgraph AsyncPostgresStore", store, calls)


def run(
    calls: int, *, base_dsn: str | None = None, progress: OnProgress = print_progress
) -> list[ConcurrencyResult]:
    """Both stores, each on a fresh database of ``base_dsn`` (needs pgvector, which
    LangGraph's store requires), or of a private embedded Postgres 18 when ``None``."""
    results: list[ConcurrencyResult] = []
    for label, body in (("langgraph-recall", _ours), ("LangGraph AsyncPostgresStore", _langgraph)):
        database = embedded_database() if base_dsn is None else temp_database(base_dsn)
        with database as dsn:
            progress(Progress(f"{label}: {calls} concurrent aput, then asearch (pool of 10)"))
            results += asyncio.run(body(dsn, calls))
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument(
        "--dsn", default=None, help="server with pgvector (default: a private embedded PG 18)"
    )
    args = parser.parse_args(argv)
    results = run(args.calls, base_dsn=args.dsn)
    print(f"{'store':32} {'call':8} {'calls':>6} {'failed':>6} {'seconds':>8}")
    for r in results:
        print(
            f"{r.store:32} {r.kind:8} {r.calls:6d} {r.failures:6d} {r.seconds:8.2f} "
            f" {r.first_error}"
        )
    ours = {r.kind: r for r in results if r.store == "langgraph-recall"}
    theirs = {r.kind: r for r in results if r.store != "langgraph-recall"}
    for kind in ours:
        if kind in theirs and theirs[kind].seconds > 0:
            print(
                f"{kind}: ours / LangGraph's time = {ours[kind].seconds / theirs[kind].seconds:.2f}"
            )


if __name__ == "__main__":
    main()
