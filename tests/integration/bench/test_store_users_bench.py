"""The multi-user store benchmark in a small configuration: both stores, ratios printed.

Timings on a shared machine are reported, never asserted."""

from __future__ import annotations

import argparse

import pytest

from langgraph_recall.bench import store_users
from langgraph_recall.cli.bench import run_benchmarks

pytestmark = pytest.mark.postgres


def test_small_configuration_compares_both_stores(capsys: pytest.CaptureFixture[str]) -> None:
    report = store_users.run(
        users=6, per_user=30, heavy=40, queries=12, rounds=2, progress=lambda _: None
    )
    assert report.memories == 6 * 30 + 40
    by_name = {r.name: r for r in report.results}
    assert set(by_name) == {"ours", "langgraph"}
    for result in report.results:
        assert result.error is None, result.error
        assert result.search_p50_ms > 0 and result.search_p95_ms >= result.search_p50_ms
        assert len(result.round_p95_ms) == 2 and all(ms > 0 for ms in result.round_p95_ms)
        assert result.heavy_first_ms is not None and result.bytes_per_memory > 0
        assert 0.0 <= result.recall_at_10 <= 1.0
        assert result.heavy_recall_at_10 is not None and 0.0 <= result.heavy_recall_at_10 <= 1.0
    # LangGraph's vector-only search over 30 memories finds the exact top-10
    assert by_name["langgraph"].recall_at_10 > 0.9
    # our side tables are measured (history and lexical statistics)
    assert by_name["ours"].table_bytes.get("lgm_memory_history", 0) > 0
    text = store_users.format_report(report)
    assert "embedding excluded" in text and "ours / langgraph: p50" in text
    assert "12 searches x 2 rounds" in text and "p95 round by round: " in text
    # neither store starts the first round with its pages in the server's cache
    assert report.cache_emptied and "shared buffers emptied before the first round" in text
    assert len(store_users.round_ratios(report)) == 2
    print(text)
    assert set(store_users.ratios(report)) == {"p50", "p95", "bytes_per_memory"}


def test_bulk_configuration_loads_both_stores_and_rebuilds_their_indexes() -> None:
    report = store_users.run(
        users=4, per_user=40, heavy=0, queries=12, bulk=True, progress=lambda _: None
    )
    by_name = {r.name: r for r in report.results}
    assert all(r.error is None for r in report.results), [r.error for r in report.results]
    assert by_name["langgraph"].recall_at_10 > 0.9  # its HNSW index, re-created, answers
    assert by_name["ours"].recall_at_10 > 0.5
    assert "in bulk, each HNSW index built after the load" in store_users.format_report(report)


def test_cli_runs_it_by_name_with_its_scale() -> None:
    from langgraph_recall.cli.bench import STORE_USERS, cmd_bench

    results = run_benchmarks(
        [STORE_USERS], options={STORE_USERS: {"users": 3, "per_user": 12, "heavy": 0, "queries": 4}}
    )
    assert results[0].error is None, results[0].error
    assert results[0].tables[1].title == "ours / langgraph"
    args = argparse.Namespace(
        which=["store-users"],
        quick=True,
        verbose=False,
        json=None,
        plot=None,
        data=None,
        users=2,
        per_user=12,
        heavy=None,
        bulk=True,
    )
    assert cmd_bench(args) == 0
