"""Run LangGraph's own checkpointer-parametrised graph tests with our four savers.

``python -m tests.compat.pregel_peer_run [pytest args...]``

``langgraph``'s sdist ships its ``tests/``; ``pregel_peer_suite.lock`` pins the version
(the one installed: the tests exercise that code) and its sha256, and the files whose
tests take the ``sync_checkpointer`` / ``async_checkpointer`` fixtures (``-k recall``
selects the tests parametrised by our savers; ``pregel_peer.deselect`` lists what is not run,
with its reason). They run
unmodified with those two fixtures replaced by ours (:mod:`tests.compat._pregel_peer`,
imported at the end of their ``conftest.py``) and ``NO_DOCKER=true`` (their caches and
stores in memory / SQLite). ``syrupy`` (their snapshots) is installed, pinned, into a
side directory. Nothing of theirs is committed; everything is cached in ``.cache/``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.compat import _suites

HERE = Path(__file__).resolve().parent
LOCK = HERE / "pregel_peer_suite.lock"
DESELECT = HERE / "pregel_peer.deselect"
CACHE = _suites.cache_dir().parent / "peer-langgraph"


def _lock() -> tuple[_suites.Suite, list[str]]:
    suite: _suites.Suite | None = None
    support: list[str] = []
    for line in LOCK.read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "suite":
            suite = _suites.Suite(words[1], words[2], words[3], tuple(words[4:]))
        elif words[0] == "support":
            support.extend(words[1:])
    assert suite is not None, f"{LOCK.name} names no suite"
    return suite, support


def main(argv: list[str]) -> int:
    suite, support = _lock()
    tests = _suites.fetch_tree(suite.package, suite.version, suite.sha256)
    site = CACHE / "site"
    marker = site / ".installed"
    if not marker.is_file() or marker.read_text() != " ".join(support):
        shutil.rmtree(site, ignore_errors=True)
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
             str(site), *support],
            capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"pip could not install {support}: {done.stderr[-2000:]}")
        marker.write_text(" ".join(support))
    run = CACHE / "run"
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(tests, run / "tests")
    shutil.copy(HERE / "_pregel_peer.py", run / "lgr_pregel_peer.py")
    with (run / "tests" / "conftest.py").open("a") as conftest:
        conftest.write(
            "\n\n# langgraph-recall: our savers as the checkpointer fixtures (only change)\n"
            "from lgr_pregel_peer import async_checkpointer, sync_checkpointer  # noqa\n"
        )
    (run / "pytest.ini").write_text(
        "[pytest]\nasyncio_mode = strict\n"  # theirs: anyio (pytest.mark.anyio), not pytest-asyncio
    )
    files = [name for name in suite.files if name.startswith("tests/test_")]
    not_run = [
        line.split()[0]
        for line in DESELECT.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    selection = "recall" + (f" and not ({' or '.join(not_run)})" if not_run else "")
    env = {
        **os.environ,
        "NO_DOCKER": "true",
        "PYTHONPATH": os.pathsep.join([str(run), str(site)]),
    }
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--timeout=300",
        "-o", "addopts=", "-k", selection, *files, *argv,
    ]  # fmt: skip
    print(f"==> LangGraph {suite.version}'s graph tests with our savers as checkpointers")
    return subprocess.run(command, cwd=run, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
