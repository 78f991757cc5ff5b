"""``langgraph-memory bench``: the repository's benchmarks, side by side, in one table.

The benchmarks live in the top-level ``bench/`` package of a source checkout (they are
not part of the wheel): ``checkpointers`` (our Redis/Postgres savers against InMemory,
SQLite and the official Postgres saver), ``postgres_saver`` (ours vs the official saver:
latency and concurrent throughput), ``store`` (search latency / put throughput) and
``locomo`` (LoCoMo retrieval quality). ``locomo-qa`` (end-to-end LoCoMo QA with an LLM
judge, :mod:`bench.locomo_qa`) needs a chat model, so ``all`` never runs it; run it on its
own: ``langgraph-memory bench locomo-qa --limit-conversations 1``. Each is called through
its ``run(...)`` function; its result is normalised into a :class:`BenchResult` (tables
+ a plot spec) for the results table, ``--json`` and ``--plot``.

Example:
    ```python
    from langgraph_memory.cli.bench import run_benchmarks
    from langgraph_memory.cli.plots import plot_results

    results = run_benchmarks(["checkpointers"], quick=True)
    plot_results([r.as_dict() for r in results], "bench.png")
    ```
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import inspect
import io
import json
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from langgraph_memory.cli._console import CliError, Console, format_table

__all__ = [
    "BENCHES",
    "QA_BENCH",
    "BenchResult",
    "Table",
    "bench_root",
    "cmd_bench",
    "run_benchmarks",
    "to_plain",
]

BENCHES = ("checkpointers", "postgres_saver", "store", "locomo")
"""Benchmark modules of ``bench/``, in the order ``all`` runs them."""
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
    "locomo": {
        "limit_conversations": 1,
        "limit_questions": 30,
        "retrievers": ("ours-pgvector", "bm25-stemmed"),
        "ingest_turns": 30,
    },
}
"""Keyword arguments of each ``run`` for ``--quick`` (only those ``run`` accepts are passed)."""


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
        return to_plain(dataclasses.asdict(self))  # type: ignore[no-any-return]


def to_plain(value: Any) -> Any:
    """Dataclasses, tuples, paths, datetimes → plain JSON data; ``*_samples`` lists dropped.

    Example:
        ```python
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


def bench_root() -> Path:
    """The source checkout holding ``bench/``: the parent of the ``langgraph_memory`` package
    (an editable install), else a checkout whose ``bench`` package is importable (e.g. a
    wheel install with the checkout on ``sys.path``, as the benchmarks notebook does).

    Raises:
        CliError: Not a source checkout (e.g. installed from a wheel).

    Example:
        ```python
        print(bench_root())  # e.g. /home/me/langgraph-memory
        ```
    """
    import importlib.util

    import langgraph_memory

    def checkout(root: Path) -> bool:
        return (root / "bench" / "__init__.py").is_file() and (root / "pyproject.toml").is_file()

    root = Path(langgraph_memory.__file__).resolve().parent.parent
    if not checkout(root):
        spec = importlib.util.find_spec("bench")
        if spec is not None and spec.origin is not None:
            found = Path(spec.origin).resolve().parent.parent
            root = found if checkout(found) else root
    if not checkout(root):
        raise CliError(
            "`langgraph-memory bench` runs the benchmarks of a source checkout, but this "
            f"langgraph_memory is installed from {root} without bench/. Clone the repository "
            "and install it editable: pip install -e '.[dev]'"
        )
    return root


def _load(name: str) -> ModuleType:
    if name == QA_BENCH:
        name = "locomo_qa"
    elif name not in BENCHES:
        raise CliError(f"unknown benchmark {name!r}; choose from {', '.join(BENCHES)} or all")
    root = str(bench_root())
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        return importlib.import_module(f"bench.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"bench.{name}":
            raise CliError(f"bench/{name}.py is not in this checkout yet") from exc
        raise CliError(
            f"bench.{name} needs {exc.name}, which is not installed: pip install -e '.[dev]'"
        ) from exc


def _accepted(function: Callable[..., Any], options: Mapping[str, Any]) -> dict[str, Any]:
    parameters = inspect.signature(function).parameters
    return {k: v for k, v in options.items() if k in parameters}


# --------------------------------------------------------------------------- progress


class _ProgressSink(io.TextIOBase):
    """A text stream that turns a benchmark's progress lines into a tqdm bar."""

    _FRACTION = re.compile(r"(\d+)\s*/\s*(\d+)")

    def __init__(self, label: str, *, verbose: bool, stream: Any) -> None:
        self.verbose = verbose
        self.stream = stream
        self.lines: list[str] = []
        self._buffer = ""
        self._bar: Any = None
        self.label = label
        if not getattr(stream, "isatty", lambda: False)():
            print(f"{label}: running…", file=stream, flush=True)
            return
        try:
            from tqdm import tqdm

            self._bar = tqdm(
                total=None,
                desc=label,
                file=stream,
                leave=True,
                dynamic_ncols=True,
                bar_format="{desc}: {n_fmt}/{total_fmt} |{bar}| {elapsed} {postfix}",
            )
        except ImportError:  # pragma: no cover - tqdm is a dev dependency
            print(f"{label}: running…", file=stream, flush=True)

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._buffer += text
        while "\n" in self._buffer:
            line, self._buffer = self._buffer.split("\n", 1)
            self.line(line)
        return len(text)

    def line(self, line: str) -> None:
        """Handle one progress line (also usable as a ``progress=`` callback)."""
        line = line.rstrip("\r")
        if not line.strip():
            return
        self.lines.append(line)
        if self._bar is None:
            match = self._FRACTION.search(line)
            if self.verbose or (match and match[1] == match[2]):
                print(f"{self.label}: {line.strip()}", file=self.stream, flush=True)
            return
        if self.verbose:
            self._bar.write(line, file=self.stream)
        match = self._FRACTION.search(line)
        if match and int(match[2]) > 0:
            done, total = int(match[1]), int(match[2])
            if self._bar.total != total:
                self._bar.reset(total=total)
            self._bar.n = min(done, total)
        if match or "   " not in line.strip():  # not a row of the benchmark's own table
            self._bar.set_postfix_str(line.strip()[:50], refresh=True)

    def close(self) -> None:
        if self._buffer:
            self.line(self._buffer)
            self._buffer = ""
        if self._bar is not None:
            self._bar.close()
        super().close()


@contextlib.contextmanager
def _captured(label: str, *, verbose: bool) -> Iterator[_ProgressSink]:
    sink = _ProgressSink(label, verbose=verbose, stream=sys.stderr)
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            yield sink
    finally:
        sink.close()


# --------------------------------------------------------------------------- adapters


def _checkpointers(module: ModuleType, options: dict[str, Any], sink: _ProgressSink) -> Any:
    return module.run(**_accepted(module.run, {**options, "progress": sink.line}))


def _normalise_checkpointers(raw: Any, result: BenchResult) -> None:
    rows, labels, ratios = [], [], []
    for r in raw:
        if getattr(r, "skipped", None):
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


def _normalise_postgres_saver(raw: Any, result: BenchResult) -> None:
    latency = raw.get("latency", [])
    throughput = raw.get("throughput", [])
    result.title = "Postgres saver: ours vs official (latency, concurrent async throughput)"
    result.tables.append(
        Table(
            "latency",
            ["saver", "median ms", "p95 ms", "x official", "x memory"],
            [
                [
                    r["name"],
                    r["median_ms"],
                    r["p95_ms"],
                    r["ratio_to_official"],
                    r["ratio_to_memory"],
                ]
                for r in latency
            ],
        )
    )
    result.tables.append(
        Table(
            "throughput",
            ["saver", "invokes", "seconds", "invokes/s", "x official"],
            [
                [t["name"], t["invokes"], t["seconds"], t["invokes_per_s"], t["ratio_to_official"]]
                for t in throughput
            ],
        )
    )
    result.plot = {
        "labels": [t["name"] for t in throughput],
        "title": "Postgres savers: concurrent async",
        "series": {"invokes/s": [t["invokes_per_s"] for t in throughput]},
        "ylabel": "invokes/s (higher is better)",
    }


def _locomo(module: ModuleType, options: dict[str, Any], sink: _ProgressSink) -> Any:
    return module.run(**_accepted(module.run, {**options, "report": sink.line}))


def _normalise_locomo(raw: Any, result: BenchResult) -> None:
    categories = sorted({c for r in raw.results for c in r.by_category})
    header = ["retriever", "R@5", "R@10", "MRR", *(f"c{c} R@5" for c in categories), "note"]
    rows, labels, r5, r10 = [], [], [], []
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
    speeds = list(getattr(raw, "ingest", []) or [])
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


def _normalise_store(raw: Any, result: BenchResult) -> None:
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


def _generic_tables(raw: Any, result: BenchResult) -> None:
    """Tables from any list of records (or a dict of such lists), for benchmarks without
    a dedicated adapter."""
    plain = to_plain(raw)
    groups = plain if isinstance(plain, dict) else {"": plain}
    for title, records in groups.items():
        if not (isinstance(records, list) and records and isinstance(records[0], dict)):
            continue
        header = [k for k, v in records[0].items() if not isinstance(v, dict | list)]
        rows = [[record.get(k) for k in header] for record in records]
        result.tables.append(Table(str(title), header, rows))
        if not result.plot:
            label_key = header[0]
            number = next(
                (k for k in header if "ratio" in k or "p95" in k),
                next((k for k in header[1:] if isinstance(records[0].get(k), int | float)), None),
            )
            if number is not None:
                result.plot = {
                    "title": result.name,
                    "labels": [str(r.get(label_key)) for r in records],
                    "series": {number: [r.get(number) for r in records]},
                    "ylabel": number,
                }
    result.title = result.title or f"{result.name} benchmark"


def _generic_run(module: ModuleType, options: dict[str, Any], sink: _ProgressSink) -> Any:
    callbacks = {"progress": sink.line, "report": sink.line}
    return module.run(**_accepted(module.run, {**options, **callbacks}))


_RUNNERS: dict[str, Callable[[ModuleType, dict[str, Any], _ProgressSink], Any]] = {
    "checkpointers": _checkpointers,
    "locomo": _locomo,
}
_NORMALISERS: dict[str, Callable[[Any, BenchResult], None]] = {
    "checkpointers": _normalise_checkpointers,
    "postgres_saver": _normalise_postgres_saver,
    "store": _normalise_store,
    "locomo": _normalise_locomo,
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
        options: Per-benchmark keyword overrides of ``run`` (e.g.
            ``{"locomo": {"retrievers": ["bm25-stemmed"]}}``); unknown keywords are ignored.

    Example:
        ```python
        [result] = run_benchmarks(["checkpointers"], quick=True)
        print(result.tables[0].rows)
        ```
    """
    selected = list(BENCHES) if not names or "all" in names else list(dict.fromkeys(names))
    modules = {name: _load(name) for name in selected}
    results: list[BenchResult] = []
    for name, module in modules.items():
        result = BenchResult(name=name)
        kwargs: dict[str, Any] = dict(QUICK.get(name, {})) if quick else {}
        kwargs.update((options or {}).get(name, {}))
        started = time.perf_counter()
        try:
            with _captured(name, verbose=verbose) as sink:
                raw = _RUNNERS.get(name, _generic_run)(module, kwargs, sink)
            result.raw = to_plain(raw)
            _NORMALISERS.get(name, _generic_tables)(raw, result)
        except Exception as exc:  # one failing benchmark must not hide the others
            result.error = f"{type(exc).__name__}: {exc}"
        result.seconds = time.perf_counter() - started
        results.append(result)
    return results


def render(results: Sequence[BenchResult]) -> str:
    """The results as text: one titled table per benchmark table.

    Example:
        ```python
        print(render(run_benchmarks(["checkpointers"], quick=True)))
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
            bad options, or not a source checkout.
    """
    module = _load(QA_BENCH)
    result = BenchResult(name=QA_BENCH)
    options = {key: getattr(args, key, None) for key in ("limit_conversations", "limit_questions")}
    if getattr(args, "quick", False):
        options = {k: v if v is not None else QA_QUICK[k] for k, v in options.items()}
    qa_args = argparse.Namespace(
        data=Path(args.data) if args.data else module.locomo.DEFAULT_DATA_DIR,
        model=args.model,
        judge_model=args.judge_model,
        methods=args.methods,
        postgres=args.postgres,
        cache=Path(args.cache),
        token_budget=args.token_budget,
        episodic=args.episodic,
        package_prompt=args.package_prompt,
        workers=args.workers,
        **options,
    )
    started = time.perf_counter()
    try:
        with _captured(QA_BENCH, verbose=verbose) as sink:
            raw = module.run_from_args(qa_args, report=sink.line)
    except (RuntimeError, ValueError, FileNotFoundError) as exc:
        raise CliError(str(exc)) from exc
    result.seconds = time.perf_counter() - started
    result.raw = to_plain(raw)
    result.title = (
        f"LoCoMo QA: {len(raw.conversations)} conversation(s), {raw.questions} questions, "
        f"model {raw.model}, judge {raw.judge_model}"
    )
    result.tables = [
        Table("scores", list(module.SCORE_HEADER), module.score_rows(raw)),
        Table("costs", list(module.COST_HEADER), module.cost_rows(raw)),
    ]
    result.plot = {
        "labels": [m.name for m in raw.methods],
        "title": "LoCoMo QA",
        "series": {"J": [m.overall.j for m in raw.methods]},
        "ylabel": "J percent (higher is better)",
    }
    return result


def cmd_bench(args: Any, console: Console | None = None) -> int:
    """``langgraph-memory bench [checkpointers|postgres_saver|store|locomo|all]`` handler;
    ``bench locomo-qa`` runs the QA benchmark alone."""
    out = console or Console()
    names = list(args.which or ["all"])
    if QA_BENCH in names:
        if names != [QA_BENCH]:
            raise CliError(f"run {QA_BENCH} on its own (it needs a chat model)")
        out.heading(f"langgraph-memory bench {QA_BENCH}")
        results = [run_locomo_qa(args, verbose=args.verbose)]
        out.heading("Results")
        out.line(render(results))
        out.line(
            "   (scores come from the model and judge named above; nothing is measured without one)"
        )
        if args.json:
            qa_payload = {"quick": args.quick, "benches": [r.as_dict() for r in results]}
            Path(args.json).write_text(json.dumps(qa_payload, indent=2), encoding="utf-8")
            out.ok(f"wrote {args.json}")
        return 0
    for name in names:
        if name != "all" and name not in BENCHES:
            raise CliError(
                f"unknown benchmark {name!r}; choose from {', '.join(BENCHES)}, all or {QA_BENCH}"
            )
    size = "quick sizes" if args.quick else "full sizes (use --quick for a short run)"
    out.heading(f"langgraph-memory bench: {', '.join(names)} ({size})")
    results = run_benchmarks(names, quick=args.quick, verbose=args.verbose)
    out.heading("Results")
    out.line(render(results))
    payload = [r.as_dict() for r in results]
    if args.json:
        Path(args.json).write_text(
            json.dumps({"quick": args.quick, "benches": payload}, indent=2), encoding="utf-8"
        )
        out.ok(f"wrote {args.json}")
    if args.plot:
        from langgraph_memory.cli.plots import plot_results

        out.ok(f"wrote {plot_results(payload, args.plot)}")
    failed = [r.name for r in results if r.error]
    if failed:
        out.warn(f"failed: {', '.join(failed)}")
        return 1
    return 0
