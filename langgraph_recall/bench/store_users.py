"""Store benchmark at multi-user scale: our hybrid search vs LangGraph's ``PostgresStore``.

``--users`` users with ``--per-user`` memories each (plus, with ``--heavy N``, one user
with N memories), every memory in its user's namespace ``("users", <id>, "memories")``.
Both stores get the same data in the same order, on one embedded PostgreSQL 18 +
pgvector server (a database each, HNSW on both). Vectors are precomputed random unit
384-d vectors handed out by a lookup embedder: **embedding is excluded**, only the
stores are measured. Searches go to random users' namespaces (the same users, queries
and order for both stores); ``recall@10`` is the share of the exact vector top-10 (the
user's memories ranked by cosine similarity, computed in numpy) among the ten results.
Ours is hybrid (BM25 + vector, fused), so its recall against the vector-only truth is
not expected to be 1.0; LangGraph's is the HNSW index's recall. The server's shared buffers
are emptied after both loads (PostgreSQL 18), so the first round finds neither store's pages
cached there (the operating system may still hold them) -- without it, the store loaded last
started with its pages cached and the other's evicted.

Bytes per memory: every table and index of the store's database (``pg_total_relation_size``)
over the memories loaded, with our history, statistics and access tables apart.

Run::

    python -m langgraph_recall.bench.store_users --users 2000 --per-user 100 --heavy 400
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from langgraph_recall.bench._common import (
    content_index,
    format_table,
    langgraph_hnsw_index,
    median,
    percentile,
    temp_database,
)
from langgraph_recall.bench.progress import OnProgress, Progress, ProgressBar, print_progress
from langgraph_recall.bench.store import DIMS, PrecomputedEmbeddings, random_texts

__all__ = ["StoreUsersResult", "UsersReport", "format_report", "main", "round_ratios", "run"]

STORES = ("ours", "langgraph")
OUR_SIDE_TABLES = ("lgm_memory_history", "lgm_memory_ns_stats", "lgm_memory_access")


@dataclass
class StoreUsersResult:
    """One store's measurements."""

    name: str
    search_kind: str
    put_per_second: float = 0.0
    search_p50_ms: float = 0.0
    search_p95_ms: float = 0.0
    heavy_first_ms: float | None = None
    heavy_p50_ms: float | None = None
    heavy_recall_at_10: float | None = None
    recall_at_10: float = 0.0
    round_p95_ms: list[float] = field(default_factory=list)
    bytes_per_memory: float = 0.0
    table_bytes: dict[str, int] = field(default_factory=dict)
    error: str | None = None


@dataclass
class UsersReport:
    """The configuration and both stores' results."""

    users: int
    per_user: int
    heavy: int
    memories: int
    queries: int
    results: list[StoreUsersResult] = field(default_factory=list)
    bulk: bool = False
    rounds: int = 1
    cache_emptied: bool = False


def _namespace(user: int) -> tuple[str, ...]:
    return ("users", f"u{user}", "memories")


@contextlib.contextmanager
def _server() -> Iterator[str]:
    import tempfile
    from pathlib import Path

    from langgraph_recall.embedded import EmbeddedPostgres

    with (
        tempfile.TemporaryDirectory(prefix="lgm-bench-users-") as home,
        EmbeddedPostgres(Path(home), cleanup="stop") as server,
    ):
        yield server.dsn()


@contextlib.contextmanager
def _open(name: str, dsn: str, embeddings: PrecomputedEmbeddings) -> Iterator[Any]:
    if name == "ours":
        from langgraph_recall.store.postgres import PostgresMemoryStore

        index = content_index(DIMS, embeddings)
        with PostgresMemoryStore.from_conn_string(dsn, index=index) as store:
            store.setup()
            yield store
        return
    from langgraph.store.postgres import PostgresStore

    with PostgresStore.from_conn_string(dsn, index=langgraph_hnsw_index(DIMS, embeddings)) as store:
        store.setup()
        yield store


def _table_bytes(dsn: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        rows = conn.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')"
        ).fetchall()
    return {str(name): int(size) for name, size in rows}


def _load(
    name: str,
    store: Any,
    dsn: str,
    puts: Iterator[Any],
    total: int,
    batch_size: int,
    bulk: bool,
    progress: OnProgress,
) -> None:
    """Load ``puts``: ``batch`` calls, or (``bulk``) each store's fastest route with the
    HNSW index built once after the load -- ours: ``bulk_load(rebuild_index=True)``;
    LangGraph's store has no bulk path, so its own HNSW index is dropped for the load and
    re-created from its definition (``pg_indexes``) with the same index memory."""
    from langgraph_recall.store.postgres._bulk import batches_of

    def loaded(done: int) -> None:
        progress(Progress(f"{name}: loading", done, total))

    if bulk and name == "ours":
        store.bulk_load(puts, batch_size=1000, rebuild_index=True, progress=loaded)
        return
    indexes: list[tuple[str, str]] = []
    if bulk:
        import psycopg
        from psycopg import sql

        with psycopg.connect(dsn, autocommit=True) as conn:
            indexes = [
                (str(n), str(d))
                for n, d in conn.execute(
                    "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' "
                    "AND indexdef ILIKE '%USING hnsw%'"
                ).fetchall()
            ]
            for index_name, _ in indexes:
                conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(index_name)))
    done = 0
    for batch in batches_of(puts, batch_size):
        store.batch(batch)
        done += len(batch)
        loaded(done)
    if indexes:
        import psycopg

        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("SET maintenance_work_mem = '2GB'")
            for _, definition in indexes:
                conn.execute(definition)


def run(
    *,
    users: int = 2000,
    per_user: int = 100,
    heavy: int = 0,
    queries: int = 300,
    rounds: int = 3,
    batch_size: int = 500,
    stores: Sequence[str] = STORES,
    seed: int = 5,
    bulk: bool = False,
    progress: OnProgress = print_progress,
) -> UsersReport:
    """Load both stores with the same memories and time searches in random users' scopes.

    The stores are loaded one after the other into a database each and then searched
    side by side: each query goes to both, one right after the other, the order
    alternating from query to query, ``rounds`` times over the whole query list. Both
    stores thus meet the same moments of the machine (another process's burst, the
    server's checkpoint), which a run of one store's searches and then the other's does
    not give; the ratio of each round is reported beside the ratio over all rounds.

    Args:
        users: Users with ``per_user`` memories each.
        per_user: Memories per user.
        heavy: Memories of one extra user (0: none); its first search (after the other
            users' timed searches: a store that has been serving, not one that has just
            finished a load), that search's recall@10 against the exact top 10, and the p50 of
            ten more are reported.
        queries: Timed searches per round (after 10 warm-up searches), spread over random
            users.
        rounds: Passes over the queries (each store answers ``queries * rounds`` timed
            searches).
        batch_size: Puts per ``batch`` call (in user order).
        stores: ``ours`` and/or ``langgraph``.
        seed: Seed of the query choice.
        bulk: Load each store by its fastest route, the HNSW index built once after the
            load (see ``_load``); else ``batch`` calls into a maintained index.
        progress: Receives the progress events.
    """
    from langgraph.store.base import PutOp

    owners = [u for u in range(users) for _ in range(per_user)] + [users] * heavy
    texts = random_texts(len(owners))
    embeddings = PrecomputedEmbeddings()
    embeddings.register(texts)
    rng = random.Random(seed)
    asked: list[tuple[int, str]] = []
    for _ in range(queries + 10):
        user = rng.randrange(users)
        source = texts[user * per_user + rng.randrange(per_user)]
        words = source.rstrip(".").split()
        asked.append((user, " ".join(rng.sample(words, min(4, len(words))))))
    embeddings.register([q for _, q in asked])
    vectors = embeddings.matrix(texts)
    truth: list[set[str]] = []
    for user, query in asked[10:]:
        own = np.arange(user * per_user, (user + 1) * per_user)
        sims = vectors[own] @ np.asarray(embeddings.embed_query(query), dtype=np.float32)
        truth.append({f"m{own[j]}" for j in np.argsort(-sims)[:10]})
    heavy_query = " ".join(texts[-1].rstrip(".").split()[:4]) if heavy else ""
    heavy_truth: set[str] = set()
    if heavy:
        own = np.arange(users * per_user, len(owners))
        sims = vectors[own] @ np.asarray(embeddings.embed_query(heavy_query))
        heavy_truth = {f"m{own[j]}" for j in np.argsort(-sims)[:10]}
    report = UsersReport(users, per_user, heavy, len(owners), queries, bulk=bulk, rounds=rounds)
    with _server() as admin, contextlib.ExitStack() as opened:
        serving: dict[str, Any] = {}
        for name in stores:
            result = StoreUsersResult(name, "hybrid" if name == "ours" else "vector")
            report.results.append(result)
            try:
                dsn = opened.enter_context(temp_database(admin))
                store = opened.enter_context(_open(name, dsn, embeddings))
                started = time.perf_counter()
                puts = (
                    PutOp(_namespace(owners[i]), f"m{i}", {"content": texts[i]})
                    for i in range(len(owners))
                )
                _load(name, store, dsn, puts, len(owners), batch_size, bulk, progress)
                result.put_per_second = len(owners) / (time.perf_counter() - started)
                progress(Progress(f"{name}: {len(owners):,} memories loaded"))
                result.table_bytes = _table_bytes(dsn)
                result.bytes_per_memory = sum(result.table_bytes.values()) / len(owners)
                for user, query in asked[:10]:
                    store.search(_namespace(user), query=query, limit=10)
                serving[name] = store
            except Exception as exc:  # one store failing must not hide the other
                _failed(result, exc, progress)
        report.cache_emptied = _empty_shared_buffers(admin)
        by_name = {r.name: r for r in report.results}
        samples: dict[str, list[list[float]]] = {name: [] for name in serving}
        for round_number in range(rounds):
            for name in serving:
                samples[name].append([])
            for position, ((user, query), exact) in enumerate(zip(asked[10:], truth, strict=True)):
                order = list(serving) if position % 2 == 0 else list(reversed(serving))
                for name in order:
                    if by_name[name].error is not None:
                        continue
                    try:
                        began = time.perf_counter()
                        found = serving[name].search(_namespace(user), query=query, limit=10)
                        samples[name][-1].append((time.perf_counter() - began) * 1000)
                    except Exception as exc:
                        _failed(by_name[name], exc, progress)
                        continue
                    if round_number == 0:
                        hits = len(exact & {item.key for item in found})
                        by_name[name].recall_at_10 += hits / (10 * max(len(truth), 1))
            progress(Progress("searches, both stores side by side", round_number + 1, rounds))
        for name, store in serving.items():
            result = by_name[name]
            if result.error is not None:
                continue
            every = [ms for one_round in samples[name] for ms in one_round]
            result.search_p50_ms = median(every)
            result.search_p95_ms = percentile(every, 0.95)
            result.round_p95_ms = [percentile(one_round, 0.95) for one_round in samples[name]]
            if heavy:
                try:
                    _time_heavy(result, store, _namespace(users), heavy_query, heavy_truth)
                except Exception as exc:
                    _failed(result, exc, progress)
                    continue
            progress(
                Progress(
                    f"{name}: search p50 {result.search_p50_ms:.2f} ms, "
                    f"p95 {result.search_p95_ms:.2f} ms"
                )
            )
    return report


def _empty_shared_buffers(admin: str) -> bool:
    """Evict every page from the server's shared buffers (``pg_buffercache_evict_all``,
    PostgreSQL 18) before the timed rounds: the store loaded last would otherwise start
    with its own pages cached and the other's evicted by its load. False where the server
    cannot."""
    import psycopg

    try:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
            conn.execute("SELECT pg_buffercache_evict_all()")
    except psycopg.Error:
        return False
    return True


def _failed(result: StoreUsersResult, exc: Exception, progress: OnProgress) -> None:
    result.error = f"{type(exc).__name__}: {exc}"
    progress(Progress(f"{result.name} failed: {result.error}"))


def _time_heavy(
    result: StoreUsersResult, store: Any, namespace: tuple[str, ...], query: str, truth: set[str]
) -> None:
    """The heavy user's first search, its recall@10, and the p50 of ten more."""
    began = time.perf_counter()
    first = store.search(namespace, query=query, limit=10)
    result.heavy_first_ms = (time.perf_counter() - began) * 1000
    result.heavy_recall_at_10 = len(truth & {item.key for item in first}) / 10
    again = []
    for _ in range(10):
        began = time.perf_counter()
        store.search(namespace, query=query, limit=10)
        again.append((time.perf_counter() - began) * 1000)
    result.heavy_p50_ms = median(again)


def ratios(report: UsersReport) -> dict[str, float]:
    """Ours over LangGraph's: p50, p95, bytes per memory (missing stores: no entry)."""
    by_name = {r.name: r for r in report.results if r.error is None}
    ours, theirs = by_name.get("ours"), by_name.get("langgraph")
    if ours is None or theirs is None:
        return {}
    return {
        "p50": ours.search_p50_ms / theirs.search_p50_ms,
        "p95": ours.search_p95_ms / theirs.search_p95_ms,
        "bytes_per_memory": ours.bytes_per_memory / theirs.bytes_per_memory,
    }


def round_ratios(report: UsersReport) -> list[float]:
    """Ours over LangGraph's p95, round by round (the spread says how far to trust it)."""
    by_name = {r.name: r for r in report.results if r.error is None}
    ours, theirs = by_name.get("ours"), by_name.get("langgraph")
    if ours is None or theirs is None:
        return []
    return [a / b for a, b in zip(ours.round_p95_ms, theirs.round_p95_ms, strict=False) if b]


def report_rows(report: UsersReport) -> tuple[list[str], list[list[Any]]]:
    """One row per store: latency, recall and disk."""
    header = [
        "store",
        "search",
        "puts/s",
        "p50 ms",
        "p95 ms",
        "heavy first ms",
        "heavy recall@10",
        "recall@10",
        "bytes/memory",
        "of which history/stats/access",
        "note",
    ]
    rows: list[list[Any]] = []
    for r in report.results:
        side = "/".join(f"{r.table_bytes.get(t, 0) / report.memories:.0f}" for t in OUR_SIDE_TABLES)
        rows.append(
            [
                r.name,
                r.search_kind,
                round(r.put_per_second),
                round(r.search_p50_ms, 2),
                round(r.search_p95_ms, 2),
                None if r.heavy_first_ms is None else round(r.heavy_first_ms, 1),
                None if r.heavy_recall_at_10 is None else round(r.heavy_recall_at_10, 2),
                round(r.recall_at_10, 3),
                round(r.bytes_per_memory),
                side if r.name == "ours" else "",
                (r.error or "")[:60],
            ]
        )
    return header, rows


def format_report(report: UsersReport) -> str:
    """The results table with the ratios under it."""
    header, rows = report_rows(report)
    text = [[("" if c is None else str(c)) for c in row] for row in rows]
    found = ratios(report)
    lines = [
        f"Store at multi-user scale: {report.users:,} users x {report.per_user} memories"
        + (f" + one user with {report.heavy}" if report.heavy else "")
        + f" = {report.memories:,} memories; {report.queries} searches x {report.rounds} "
        "rounds, each query to both stores in turn; embedded PostgreSQL "
        "+ pgvector (HNSW on both), precomputed vectors: embedding excluded; loaded "
        + (
            "in bulk, each HNSW index built after the load (puts/s include the build)"
            if report.bulk
            else "by batch puts into a maintained HNSW index"
        )
        + (
            "; the server's shared buffers emptied before the first round"
            if report.cache_emptied
            else ""
        ),
        "",
        format_table(header, text),
    ]
    if found:
        lines.append(
            "\nours / langgraph: p50 {p50:.2f}x, p95 {p95:.2f}x, bytes per memory "
            "{bytes_per_memory:.2f}x".format(**found)
        )
        by_round = round_ratios(report)
        if len(by_round) > 1:
            lines.append("p95 round by round: " + ", ".join(f"{r:.2f}x" for r in by_round))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point (``python -m langgraph_recall.bench.store_users``)."""
    parser = argparse.ArgumentParser(
        prog="python -m langgraph_recall.bench.store_users", description=__doc__
    )
    parser.add_argument("--users", type=int, default=2000)
    parser.add_argument("--per-user", type=int, default=100)
    parser.add_argument("--heavy", type=int, default=0)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--rounds", type=int, default=3, help="passes over the queries, both stores in turn"
    )
    parser.add_argument("--stores", default=",".join(STORES))
    parser.add_argument(
        "--bulk",
        action="store_true",
        help="load with the HNSW index built after the load (ours: bulk_load)",
    )
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args(argv)
    with ProgressBar("store_users") as bar:
        report = run(
            users=args.users,
            per_user=args.per_user,
            heavy=args.heavy,
            queries=args.queries,
            rounds=args.rounds,
            bulk=args.bulk,
            stores=[s.strip() for s in args.stores.split(",") if s.strip()],
            progress=bar,
        )
    print(format_report(report))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(asdict(report), handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
