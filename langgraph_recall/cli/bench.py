"""``langgraph-recall bench``: the package's benchmarks, side by side, in one table.

The benchmarks ship in the wheel (:mod:`langgraph_recall.bench`): ``checkpointers`` (our
Redis/Postgres savers against InMemory, SQLite and the official Postgres saver),
``postgres_saver`` (ours vs the official saver: latency and concurrent throughput), ``store``
(search latency / put throughput), ``locomo`` (LoCoMo retrieval quality) and ``beam`` (BEAM
retrieval quality, instructions and updates in the model's context). ``locomo-qa``
(end-to-end LoCoMo QA with an LLM judge, :mod:`langgraph_recall.bench.locomo_qa`) needs a chat
model, so ``all`` never runs it; run it on its own: ``langgraph-recall bench locomo-qa
--limit-conversations 1``. Each is called through its typed ``run(..., progress=...)`` function,
whose :class:`langgraph_recall.bench.progress.Progress` events drive one progress bar per
benchmark; its result is normalised into a :class:`BenchResult` (tables + a plot spec) for the
results table, ``--json`` and ``--plot``.

A benchmark whose optional dependency is missing says which one (:class:`CliError`).

``run_benchmarks(["checkpointers"], quick=True)`` runs one benchmark and
``render(results)`` prints its tables (``langgraph-recall bench checkpointers --quick``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from langgraph_recall.cli._console import CliError, Console, format_table

if TYPE_CHECKING:  # the benchmark modules are imported when a benchmark runs
    from langgraph_recall.bench.beam import BeamReport
    from langgraph_recall.bench.checkpointers import SaverResult
    from langgraph_recall.bench.locomo import LocomoReport
    from langgraph_recall.bench.postgres_saver import SaverComparison
    from langgraph_recall.bench.progress import OnProgress
    from langgraph_recall.bench.store import StoreResult
    from langgraph_recall.bench.store_users import UsersReport

__all__ = [
    "BENCHES",
    "QA_BENCH",
    "BenchResult",
    "Table",
    "cmd_bench",
    "run_benchmarks",
    "to_plain",
]

BENCHES = ("checkpointers", "postgres_saver", "store", "locomo", "beam")
"""Benchmark modules of ``bench/``, in the order ``all`` runs them."""
STORE_USERS = "store_users"
"""The multi-user store benchmark (``bench store-users``): hours at full size, never in ``all``."""
DATA_BENCHES = ("locomo", "beam")
"""Benchmarks that read a data set (``--data DIR`` is given to the ones named)."""
QA_BENCH = "locomo-qa"
"""The end-to-end QA benchmark (``bench/locomo_qa.py``): needs a model, never in ``all``."""
QA_QUICK = {"limit_conversations": 1, "limit_questions": 20}

QUICK: dict[str, dict[str, Any]] = {
    "checkpointers": {"threads": 5, "invokes": 30, "put_get": 10},
    "postgres_saver": {
        "threads": 5,
        "invokes": 30,
        "clients": 4,
        "client_invokes": 5,
        "repeats": 1,
    },
    "store": {"sizes": [2000], "queries": 20},
    "store_users": {"users": 20, "per_user": 50, "heavy": 200, "queries": 30, "rounds": 2},
    "locomo": {
        "limit_conversations": 1,
        "limit_questions": 30,
        "retrievers": ("ours-pgvector", "bm25-stemmed"),
        "ingest_turns": 30,
    },
    "beam": {"limit_chats": 1, "limit_questions": 6},
}
"""Keyword arguments of each benchmark's ``run`` for ``--quick``."""


@dataclass
class Table:
    """One results table."""

    title: str
    header: list[str]
    rows: list[list[Any]]


@dataclass
class BenchResult:
    """One benchmark's normalised result.

    Attributes:
        name: Module name in ``bench/``.
        title: What was measured.
        tables: Results tables.
        plot: ``{"labels": [...], "series": {name: [values]}, "ylabel": str}``.
        seconds: Wall time.
        error: Why it failed (``None`` if it ran).
        raw: The benchmark's own result, converted to plain JSON data.
    """

    name: str
    title: str = ""
    tables: list[Table] = field(default_factory=list)
    plot: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None
    raw: Any = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form (what ``--json`` writes and :func:`plot_results` takes)."""
        plain: dict[str, Any] = to_plain(dataclasses.asdict(self))
        return plain


def to_plain(value: Any) -> Any:
    """Dataclasses, tuples, paths, datetimes → plain JSON data; ``*_samples`` lists dropped.

    Example:
        ```python
        from langgraph_recall.cli.bench import to_plain

        assert to_plain({"a": (1, 2), "x_samples": [1]}) == {"a": [1, 2]}
        ```
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items() if not str(k).endswith("_samples")}
    if isinstance(value, list | tuple | set):
        return [to_plain(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


@contextlib.contextmanager
def _bench_dependencies() -> Iterator[None]:
    """Turn a missing dependency of a benchmark into a :class:`CliError` that names it."""
    try:
        yield
    except ModuleNotFoundError as exc:
        raise CliError(
            f"the benchmarks need {exc.name}, which is not installed: "
            'pip install "langgraph-recall[all]"'
        ) from exc


# --------------------------------------------------------------------------- adapters


def _run_checkpointers(options: Mapping[str, Any], progress: OnProgress) -> list[SaverResult]:
    from langgraph_recall.bench import checkpointers

    return checkpointers.run(**options, progress=progress)


def _run_postgres_saver(options: Mapping[str, Any], progress: OnProgress) -> SaverComparison:
    from langgraph_recall.bench import postgres_saver

    return postgres_saver.run(**options, progress=progress)


def _run_store(options: Mapping[str, Any], progress: OnProgress) -> list[StoreResult]:
    from langgraph_recall.bench import store

    return store.run(**options, progress=progress)


def _run_store_users(options: Mapping[str, Any], progress: OnProgress) -> UsersReport:
    from langgraph_recall.bench import store_users

    return store_users.run(**options, progress=progress)


def _run_locomo(options: Mapping[str, Any], progress: OnProgress) -> LocomoReport:
    from langgraph_recall.bench import locomo

    return locomo.run(**options, progress=progress)


def _run_beam(options: Mapping[str, Any], progress: OnProgress) -> BeamReport:
    from langgraph_recall.bench import beam

    return beam.run(**options, progress=progress)


def _normalise_checkpointers(raw: Sequence[SaverResult], result: BenchResult) -> None:
    rows: list[list[Any]] = []
    labels: list[str] = []
    ratios: list[float] = []
    for r in raw:
        if r.skipped:
            rows.append([r.name, None, None, None, None, None, f"skipped: {r.skipped}"[:60]])
            continue
        rows.append(
            [
                r.name,
                r.invoke_median_ms,
                r.invoke_p95_ms,
                r.invoke_ratio,
                r.put_get_median_ms,
                r.put_get_ratio,
                "",
            ]
        )
        labels.append(r.name)
        ratios.append(r.invoke_ratio)
    result.title = "Checkpointers: graph invoke and 51-message put+get (ratios to InMemorySaver)"
    header = ["saver", "invoke ms", "p95 ms", "x memory", "put+get ms", "x memory", "note"]
    result.tables.append(Table("", header, rows))
    result.plot = {
        "labels": labels,
        "title": "checkpointers: graph invoke",
        "series": {"invoke x InMemorySaver": ratios},
        "ylabel": "x InMemorySaver (lower is better)",
    }


def _normalise_postgres_saver(raw: SaverComparison, result: BenchResult) -> None:
    latency, throughput = raw.latency, raw.throughput
    result.title = "Postgres saver: ours vs official (latency, concurrent async throughput)"
    result.tables.append(
        Table(
            "latency",
            ["saver", "median ms", "p95 ms", "x official", "x memory"],
            [
                [r.name, r.median_ms, r.p95_ms, r.ratio_to_official, r.ratio_to_memory]
                for r in latency
            ],
        )
    )
    result.tables.append(
        Table(
            "throughput",
            ["saver", "invokes", "seconds", "invokes/s", "x official"],
            [
                [t.name, t.invokes, t.seconds, t.invokes_per_s, t.ratio_to_official]
                for t in throughput
            ],
        )
    )
    result.plot = {
        "labels": [t.name for t in throughput],
        "title": "Postgres savers: concurrent async",
        "series": {"invokes/s": [t.invokes_per_s for t in throughput]},
        "ylabel": "invokes/s (higher is better)",
    }


def _normalise_locomo(raw: LocomoReport, result: BenchResult) -> None:
    categories = sorted({c for r in raw.results for c in r.by_category})
    header = ["retriever", "R@5", "R@10", "MRR", *(f"c{c} R@5" for c in categories), "note"]
    rows: list[list[Any]] = []
    labels: list[str] = []
    r5: list[float] = []
    r10: list[float] = []
    for r in raw.results:
        if r.error:
            rows.append([r.name, None, None, None, *([None] * len(categories)), r.error[:60]])
            continue
        overall = r.overall
        by_cat = [r.by_category[c].recall_at_5 if r.by_category[c].n else None for c in categories]
        rows.append([r.name, overall.recall_at_5, overall.recall_at_10, overall.mrr, *by_cat, ""])
        labels.append(r.name)
        r5.append(overall.recall_at_5)
        r10.append(overall.recall_at_10)
    result.title = (
        f"LoCoMo turn retrieval: {len(raw.conversations)} conversation(s), "
        f"{raw.questions} questions"
    )
    result.tables.append(Table("", header, rows))
    speeds = raw.ingest
    if speeds:  # the ingest cost of the previous loader and of the episodic path
        result.tables.append(
            Table(
                "Ingest cost (same turns, each path on its own uncached embedder)",
                ["write path", "turns", "seconds", "turns/s", "texts embedded/memory"],
                [
                    [s.path, s.turns, s.seconds, s.turns_per_second, s.texts_per_memory]
                    for s in speeds
                ],
            )
        )
    result.plot = {
        "labels": labels,
        "title": "LoCoMo retrieval",
        "series": {"Recall@5": r5, "Recall@10": r10},
        "ylabel": "percent (higher is better)",
    }


def _normalise_store(raw: Sequence[StoreResult], result: BenchResult) -> None:
    reference = {s.size: s for r in raw if r.name == "ours-pgvector" for s in r.sizes}
    rows: list[list[Any]] = []
    labels: list[str] = []
    p95: list[float] = []
    for r in raw:
        if r.error:
            rows.append([r.name, r.search_kind, None, None, None, None, None, r.error[:60]])
            continue
        for s in r.sizes:
            ref = reference.get(s.size)
            ratio = s.search_p95_ms / ref.search_p95_ms if ref and ref.search_p95_ms else None
            rows.append(
                [
                    r.name,
                    r.search_kind,
                    s.size,
                    s.put_per_second,
                    s.search_p50_ms,
                    s.search_p95_ms,
                    ratio,
                    "",
                ]
            )
            labels.append(f"{r.name} @{s.size:,}")
            p95.append(s.search_p95_ms)
    header = ["store", "search", "memories", "puts/s", "p50 ms", "p95 ms", "p95 x ours", "note"]
    result.title = "Store: batched puts and search latency in one namespace (embedding excluded)"
    result.tables.append(Table("", header, rows))
    result.plot = {
        "title": "store: search p95",
        "labels": labels,
        "series": {"search p95 ms": p95},
        "ylabel": "ms (lower is better)",
    }


def _normalise_store_users(raw: UsersReport, result: BenchResult) -> None:
    from langgraph_recall.bench.store_users import ratios, report_rows, round_ratios

    header, rows = report_rows(raw)
    result.title = (
        f"Store at multi-user scale: {raw.users:,} users x {raw.per_user} memories"
        + (f" + one with {raw.heavy}" if raw.heavy else "")
        + ", ours (hybrid) vs LangGraph's PostgresStore (vector-only), HNSW on both, "
        f"embedding excluded, {raw.queries} searches x {raw.rounds} rounds side by side"
        + ("; loaded in bulk, each HNSW index built after the load" if raw.bulk else "")
    )
    result.tables.append(Table("", header, rows))
    found = ratios(raw)
    if found:
        result.tables.append(
            Table("ours / langgraph", list(found), [[round(v, 2) for v in found.values()]])
        )
        by_round = round_ratios(raw)
        if len(by_round) > 1:
            result.tables.append(
                Table(
                    "ours / langgraph p95, round by round",
                    [f"round {n}" for n in range(1, len(by_round) + 1)],
                    [[round(v, 2) for v in by_round]],
                )
            )
    ran = [r for r in raw.results if r.error is None]
    result.plot = {
        "labels": [r.name for r in ran],
        "title": "store at multi-user scale: search p95",
        "series": {"search p95 ms": [r.search_p95_ms for r in ran]},
        "ylabel": "ms (lower is better)",
    }


def _normalise_beam(raw: BeamReport, result: BenchResult) -> None:
    from langgraph_recall.bench.beam import report_rows

    header, rows = report_rows(raw)
    ingest = raw.ingest
    result.title = (
        f"BEAM turn retrieval: {len(raw.chats)} chat(s), {raw.questions} questions "
        f"(ours: {ingest.episodes} episodes + {ingest.facts} extracted memories from "
        f"{ingest.messages} messages, {ingest.evidence_lost} evidence messages not stored)"
    )
    result.tables.append(Table("", header, rows))
    ran = [r for r in raw.results if r.error is None]
    result.plot = {
        "labels": [r.name for r in ran],
        "title": "BEAM retrieval",
        "series": {
            "Recall@5": [r.overall.recall_at_5 for r in ran],
            "Recall@10": [r.overall.recall_at_10 for r in ran],
        },
        "ylabel": "percent (higher is better)",
    }
    for r in raw.results:
        if r.error:
            result.tables.append(Table(f"{r.name} failed", ["error"], [[r.error[:200]]]))


_Raw = TypeVar("_Raw")
_Adapter = Callable[[Mapping[str, Any], "OnProgress", "BenchResult"], None]


def _adapter(
    run: Callable[[Mapping[str, Any], OnProgress], _Raw],
    normalise: Callable[[_Raw, BenchResult], None],
) -> _Adapter:
    """One benchmark for :func:`run_benchmarks`: run it, keep its raw result, make tables."""

    def adapted(options: Mapping[str, Any], progress: OnProgress, result: BenchResult) -> None:
        raw = run(options, progress)
        result.raw = to_plain(raw)
        normalise(raw, result)

    return adapted


_ADAPTERS: dict[str, _Adapter] = {
    "checkpointers": _adapter(_run_checkpointers, _normalise_checkpointers),
    "postgres_saver": _adapter(_run_postgres_saver, _normalise_postgres_saver),
    "store": _adapter(_run_store, _normalise_store),
    "store_users": _adapter(_run_store_users, _normalise_store_users),
    "locomo": _adapter(_run_locomo, _normalise_locomo),
    "beam": _adapter(_run_beam, _normalise_beam),
}


def run_benchmarks(
    names: Sequence[str],
    *,
    quick: bool = False,
    verbose: bool = False,
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[BenchResult]:
    """Run the named benchmarks (``"all"`` = every one) and return their results.

    A benchmark that fails is reported with ``error`` set; the others still run.

    Args:
        names: Benchmarks from :data:`BENCHES`, or ``"all"``.
        quick: Use the :data:`QUICK` sizes.
        verbose: Also print the benchmarks' own progress lines.
        options: Per-benchmark keyword arguments of its ``run``, over the :data:`QUICK`
            sizes (e.g. ``{"locomo": {"retrievers": ["bm25-stemmed"]}}``); one that ``run``
            does not take fails that benchmark (its ``error``).

    Raises:
        CliError: An unknown benchmark, or a dependency of it not installed.
    """
    selected = list(BENCHES) if not names or "all" in names else list(dict.fromkeys(names))
    for name in selected:
        if name not in _ADAPTERS:
            raise CliError(f"unknown benchmark {name!r}; choose from {', '.join(BENCHES)} or all")
    with _bench_dependencies():
        for name in selected:
            importlib.import_module(f"langgraph_recall.bench.{name}")
        from langgraph_recall.bench.progress import ProgressBar
    results: list[BenchResult] = []
    for name in selected:
        result = BenchResult(name=name)
        kwargs: dict[str, Any] = dict(QUICK[name]) if quick else {}
        kwargs.update((options or {}).get(name, {}))
        started = time.perf_counter()
        try:
            with ProgressBar(name, verbose=verbose) as bar:
                _ADAPTERS[name](kwargs, bar, result)
        except Exception as exc:  # one failing benchmark must not hide the others
            result.error = f"{type(exc).__name__}: {exc}"
        result.seconds = time.perf_counter() - started
        results.append(result)
    return results


def render(results: Sequence[BenchResult]) -> str:
    """The results as text: one titled table per benchmark table.

    Example:
        ```python
        from langgraph_recall.cli.bench import BenchResult, Table, render

        table = Table("latency", ["saver", "ms"], [["ours", 1.5]])
        text = render([BenchResult("checkpointers", "savers", tables=[table], seconds=2.0)])
        assert "## checkpointers: savers" in text and "ours" in text
        ```
    """
    out: list[str] = []
    for result in results:
        out.append(f"## {result.name}: {result.title}  ({result.seconds:.1f}s)")
        if result.error:
            out.append(f"   FAILED: {result.error}")
        for table in result.tables:
            if table.title:
                out.append(f"   {table.title}")
            out += ["   " + line for line in format_table(table.header, table.rows).splitlines()]
        out.append("")
    return "\n".join(out)


def run_locomo_qa(args: Any, *, verbose: bool = False) -> BenchResult:
    """Run ``bench/locomo_qa.py`` with the CLI's options; its two tables as a result.

    Raises:
        CliError: No model configured (``OPENAI_API_KEY``), ``langchain-openai`` missing,
            bad options, or a dependency not installed.
    """
    with _bench_dependencies():
        from langgraph_recall.bench import locomo_qa
        from langgraph_recall.bench.progress import ProgressBar
    limits = {key: getattr(args, key, None) for key in ("limit_conversations", "limit_questions")}
    if getattr(args, "quick", False):
        limits = {k: v if v is not None else QA_QUICK[k] for k, v in limits.items()}
    result = BenchResult(name=QA_BENCH)
    started = time.perf_counter()
    try:
        with ProgressBar(QA_BENCH, verbose=verbose) as bar:
            raw = locomo_qa.run_openai(
                Path(args.data) if args.data else None,
                model=args.model,
                judge_model=args.judge_model,
                methods=locomo_qa.split_methods(args.methods),
                limit_conversations=limits["limit_conversations"],
                limit_questions=limits["limit_questions"],
                postgres=args.postgres,
                cache=Path(args.cache),
                token_budget=args.token_budget,
                episodic=args.episodic,
                package_prompt=args.package_prompt,
                workers=args.workers,
                progress=bar,
            )
    except (RuntimeError, ValueError, FileNotFoundError) as exc:
        raise CliError(str(exc)) from exc
    result.seconds = time.perf_counter() - started
    result.raw = to_plain(raw)
    result.title = (
        f"LoCoMo QA: {len(raw.conversations)} conversation(s), {raw.questions} questions, "
        f"model {raw.model}, judge {raw.judge_model}"
    )
    result.tables = [
        Table("scores", list(locomo_qa.SCORE_HEADER), locomo_qa.score_rows(raw)),
        Table("costs", list(locomo_qa.COST_HEADER), locomo_qa.cost_rows(raw)),
    ]
    result.plot = {
        "labels": [m.name for m in raw.methods],
        "title": "LoCoMo QA",
        "series": {"J": [m.overall.j for m in raw.methods]},
        "ylabel": "J percent (higher is better)",
    }
    return result


def cmd_bench(args: Any, console: Console | None = None) -> int:
    """``langgraph-recall bench [checkpointers|postgres_saver|store|locomo|all]`` handler;
    ``bench locomo-qa`` runs the QA benchmark alone."""
    out = console or Console()
    names = [STORE_USERS if n == "store-users" else n for n in (args.which or ["all"])]
    if QA_BENCH in names:
        if names != [QA_BENCH]:
            raise CliError(f"run {QA_BENCH} on its own (it needs a chat model)")
        out.heading(f"langgraph-recall bench {QA_BENCH}")
        results = [run_locomo_qa(args, verbose=args.verbose)]
        out.heading("Results")
        out.lines(render(results))
        out.line(
            "   (scores come from the model and judge named above; nothing is measured without one)"
        )
        if args.json:
            qa_payload = {"quick": args.quick, "benches": [r.as_dict() for r in results]}
            Path(args.json).write_text(json.dumps(qa_payload, indent=2), encoding="utf-8")
            out.ok(f"wrote {args.json}")
        return 0
    for name in names:
        if name != "all" and name not in (*BENCHES, STORE_USERS):
            raise CliError(
                f"unknown benchmark {name!r}; choose from {', '.join(BENCHES)}, all or {QA_BENCH}"
            )
    size = "quick sizes" if args.quick else "full sizes (use --quick for a short run)"
    out.heading(f"langgraph-recall bench: {', '.join(names)} ({size})")
    data = getattr(args, "data", None)
    selected = BENCHES if "all" in names else tuple(names)
    readers = [name for name in DATA_BENCHES if name in selected]
    if data and len(readers) > 1:
        raise CliError(
            f"--data names one data set, but {' and '.join(readers)} each read their own: "
            "run them one at a time (`bench locomo --data DIR`, `bench beam --data DIR`) or "
            "set LANGGRAPH_RECALL_LOCOMO_DIR / LANGGRAPH_RECALL_BEAM_DIR"
        )
    options: dict[str, dict[str, Any]] = (
        {name: {"data_dir": Path(data)} for name in readers} if data else {}
    )
    scale = {
        key: getattr(args, key)
        for key in ("users", "per_user", "heavy", "rounds", "bulk")
        if getattr(args, key, None) is not None
    }
    if scale:
        options.setdefault(STORE_USERS, {}).update(scale)
    results = run_benchmarks(names, quick=args.quick, verbose=args.verbose, options=options)
    out.heading("Results")
    out.lines(render(results))
    payload = [r.as_dict() for r in results]
    if args.json:
        Path(args.json).write_text(
            json.dumps({"quick": args.quick, "benches": payload}, indent=2), encoding="utf-8"
        )
        out.ok(f"wrote {args.json}")
    if args.plot:
        from langgraph_recall.cli.plots import plot_results

        out.ok(f"wrote {plot_results(payload, args.plot)}")
    failed = [r.name for r in results if r.error]
    if failed:
        out.warn(f"failed: {', '.join(failed)}")
        return 1
    return 0
