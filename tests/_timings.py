"""Where a test run's time went: the JUnit XML report of a pytest run, summed per module.

``python -m tests._timings REPORT.xml [--top N]`` prints the modules that took longest (the
sum of their tests' setup, call and teardown, as pytest-xdist workers measured them) and the
total per test folder. scripts/test.sh prints it after each pytest stage, so a change that
slows the suite shows in which module it did.
"""

from __future__ import annotations

import argparse
import collections
import xml.etree.ElementTree as ET
from pathlib import Path

__all__ = ["main", "module_seconds"]


def module_seconds(report: Path) -> dict[str, tuple[float, int]]:
    """Seconds and test count per module (``classname`` up to its last dotted part that is a
    file: ``tests.unit.test_x.TestY`` -> ``tests/unit/test_x.py``)."""
    totals: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
    for case in ET.parse(report).iter("testcase"):
        entry = totals[_module_of(case.get("classname", "") or case.get("name", ""))]
        entry[0] += float(case.get("time", 0) or 0)
        entry[1] += 1
    return {module: (seconds, int(count)) for module, (seconds, count) in totals.items()}


def _module_of(classname: str) -> str:
    """``tests.unit.test_x.TestY`` -> ``tests/unit/test_x.py``; a LangGraph suite file
    (``tests.compat.langgraph_suites.lock.exact.checkpoint/test_store.py``) keeps its
    backend and file: ``tests/compat/langgraph_suites.lock::exact::checkpoint/test_store.py``."""
    if ".lock." in classname:
        head, tail = classname.split(".lock.", 1)
        backend, _, suite_file = tail.partition(".")
        return f"{head.replace('.', '/')}.lock::{backend}::{suite_file}"
    parts = classname.split(".")
    while len(parts) > 1 and parts[-1][:1].isupper():  # a test class
        parts.pop()
    return "/".join(parts) + ".py"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    seconds = module_seconds(args.report)
    total = sum(s for s, _ in seconds.values())
    print(f"test time by module ({len(seconds)} modules, {total:.0f} s in all):")
    for module, (spent, count) in sorted(seconds.items(), key=lambda e: -e[1][0])[: args.top]:
        print(f"{spent:8.1f} s {count:5d} tests  {module}")
    folders: dict[str, float] = collections.defaultdict(float)
    for module, (spent, _) in seconds.items():
        folders["/".join(module.split("/")[:2])] += spent
    print(
        "by folder: "
        + ", ".join(f"{f} {s:.0f} s" for f, s in sorted(folders.items(), key=lambda e: -e[1]))
    )


if __name__ == "__main__":
    main()
