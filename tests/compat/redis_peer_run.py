"""Run ``redis-developer/langgraph-redis``'s checkpointer tests against our Redis savers.

``python -m tests.compat.redis_peer_run [--tests-from DIR] [pytest args...]``

The official package's sdist ships no tests, so CI takes them from the sdist pinned in
``redis_peer_suite.lock`` (package, version, sha256): ``test-langgraph-checkpoint-redis``,
a PyPI upload of the upstream repository (tests included) with its module renamed to
``langgraph.checkpoint.test_redis``. Its test files were compared, when pinned, with the
upstream repository at the same version: identical but for that rename. The packages
their test files import (their own package, ``redisvl``...) are installed, pinned and
without dependencies, into ``.cache/peer-redis/site``; nothing of theirs is committed.

The run: extract the sdist's ``tests/`` into ``.cache/peer-redis/``, replace their
``conftest.py`` (Docker containers, flushing the shared server) by an empty one, and run
pytest there with :mod:`tests.compat._redis_peer` as plugin (our savers in place of
theirs, a private ``redis-server``, their fixtures) and ``redis_peer.deselect`` (what
stays inapplicable, test by test, with its reason). ``--tests-from DIR`` runs the test
files of a checkout instead (e.g. a newer upstream, read locally).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.compat import _suites

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
LOCK = HERE / "redis_peer_suite.lock"
DESELECT = HERE / "redis_peer.deselect"
CACHE = Path(os.environ.get("LANGGRAPH_RECALL_COMPAT_CACHE") or ROOT / ".cache") / "peer-redis"

NOT_CHECKPOINTER = re.compile(
    r"store|middleware|vectorizer|semantic_search|sentinel|search_limit|issue_99_|issue_128_|"
    r"issue_196_|embed_test_utils|conftest|__init__"
)
"""Their test files of other components (store, middleware, vectorizers, Sentinel)."""


def _lock() -> tuple[tuple[str, str, str], list[str]]:
    suite: tuple[str, str, str] | None = None
    support: list[str] = []
    for line in LOCK.read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "suite":
            suite = (words[1], words[2], words[3])
        elif words[0] == "support":
            support.extend(words[1:])
    assert suite is not None, f"{LOCK.name} names no suite"
    return suite, support


def _pip(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"pip {' '.join(args)} failed: {done.stderr.strip()[-2000:]}")


def install_support(requirements: list[str]) -> Path:
    """Their test files' imports, pinned, without dependencies, in a side directory."""
    site = CACHE / "site"
    marker = site / ".installed"
    wanted = "\n".join(sorted(requirements))
    if marker.is_file() and marker.read_text() == wanted:
        return site
    shutil.rmtree(site, ignore_errors=True)
    _pip("install", "--quiet", "--no-deps", "--target", str(site), *requirements)
    marker.write_text(wanted)
    return site


def prepare(tests: Path) -> Path:
    """A run directory: their test files, an empty conftest, our plugin beside them."""
    run = CACHE / "run"
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(tests, run / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    (run / "tests" / "conftest.py").write_text(
        '"""Their conftest (Docker, flushing the server) is replaced by lgr_redis_peer."""\n'
    )
    (run / "tests" / "__init__.py").touch()
    shutil.copy(HERE / "_redis_peer.py", run / "lgr_redis_peer.py")
    (run / "pytest.ini").write_text(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )
    return run


def main(argv: list[str]) -> int:
    (package, version, sha256), support = _lock()
    if argv[:1] == ["--tests-from"]:
        tests, argv = Path(argv[1]).resolve(), argv[2:]
    else:
        tests = _suites.fetch_tree(package, version, sha256)
    site = install_support(support)
    run = prepare(tests)
    files = sorted(
        f"tests/{path.name}"
        for path in (run / "tests").glob("test_*.py")
        if not NOT_CHECKPOINTER.search(path.name)
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(run), str(site)]),
        "LGR_REDIS_PEER_DESELECT": str(DESELECT),
    }
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "lgr_redis_peer",
        "-q", "--timeout=120", "-o", "addopts=", *files, *argv,
    ]  # fmt: skip
    print(f"==> langgraph-redis's checkpointer tests ({tests}) against our Redis savers")
    return subprocess.run(command, cwd=run, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
