"""Fetch LangGraph's store test suites from PyPI sdists and load them with our fixtures.

The pins live in ``langgraph_suites.lock`` (package, version, sha256 of the sdist, test
files). :func:`fetch` runs ``pip download --no-binary :all:`` for the pinned version,
checks the archive's sha256 and extracts the test files (plus the suite's own
``embed_test_utils.py``) into a cache directory outside git. :func:`load_suite` imports
one file unmodified under a private module name, serving its ``from tests.conftest import
...`` / ``from tests.embed_test_utils import ...`` lines from our adapter and the suite's
own helper, and then rebinds the names the adapter replaces (fixtures and the fixture-like
helpers that open a store or read LangGraph's private tables). Nothing else of the test
code changes.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CACHE_ENV",
    "CHECKPOINTER_LOCK_FILE",
    "DESELECT_FILE",
    "LOCK_FILE",
    "Suite",
    "cache_dir",
    "fetch",
    "fetch_tree",
    "load_suite",
    "read_deselect",
    "read_lock",
]

HERE = Path(__file__).resolve().parent
LOCK_FILE = HERE / "langgraph_suites.lock"
CHECKPOINTER_LOCK_FILE = HERE / "checkpointer_suites.lock"
DESELECT_FILE = HERE / "checkpointer_suites.deselect"
CACHE_ENV = "LANGGRAPH_RECALL_COMPAT_CACHE"
HELPER = "tests/embed_test_utils.py"


@dataclass(frozen=True)
class Suite:
    """One pinned sdist and the test files taken from it."""

    package: str
    version: str
    sha256: str
    files: tuple[str, ...]

    @property
    def label(self) -> str:
        """Short name used in test ids, e.g. ``checkpoint-postgres``."""
        return self.package.removeprefix("langgraph-")

    @property
    def archive_prefix(self) -> str:
        return f"{self.package.replace('-', '_')}-{self.version}"


def read_lock(path: Path = LOCK_FILE) -> list[Suite]:
    """The suites pinned in ``langgraph_suites.lock``."""
    suites: list[Suite] = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        package, version, sha256, *files = line.split()
        suites.append(Suite(package, version, sha256, tuple(files)))
    return suites


def read_deselect(path: Path = DESELECT_FILE) -> dict[str, dict[str, str]]:
    """``suite/file -> {test name: reason}`` from a deselect file: one test a line,
    ``suite/file::test_name  reason`` (the reason is what ``docs/`` explains)."""
    listed: dict[str, dict[str, str]] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        where, reason = line.split(None, 1)
        suite_file, test = where.split("::", 1)
        listed.setdefault(suite_file, {})[test] = reason.strip()
    return listed


def cache_dir() -> Path:
    """Where fetched suites live: ``$LANGGRAPH_RECALL_COMPAT_CACHE`` or ``<repo>/.cache``."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else HERE.parent.parent / ".cache" / "langgraph-suites"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


def fetch(suite: Suite, root: Path | None = None) -> Path:
    """Directory holding ``suite``'s test files, downloading the sdist the first time.

    Raises:
        RuntimeError: pip could not download the sdist, or its sha256 is not the pinned one.
    """
    target = (root or cache_dir()) / f"{suite.package}-{suite.version}"
    wanted = [*suite.files, HELPER]
    if all((target / name).is_file() for name in wanted):
        return target
    with tempfile.TemporaryDirectory(prefix="lgm-compat-") as scratch:
        command = [
            sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
            "--no-binary", ":all:", "-d", scratch, f"{suite.package}=={suite.version}",
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        archives = list(Path(scratch).glob("*.tar.gz"))
        if done.returncode != 0 or len(archives) != 1:
            raise RuntimeError(
                f"pip could not download the {suite.package}=={suite.version} sdist "
                f"(exit {done.returncode}): {done.stderr.strip()[-2000:]}"
            )
        archive = archives[0]
        if _sha256(archive) != suite.sha256:
            raise RuntimeError(
                f"{archive.name} has sha256 {_sha256(archive)}, not the pinned {suite.sha256}"
            )
        staging = Path(tempfile.mkdtemp(prefix="suite-", dir=scratch))
        with tarfile.open(archive) as tar:
            for name in wanted:
                member = tar.getmember(f"{suite.archive_prefix}/{name}")
                extracted = tar.extractfile(member)
                assert extracted is not None, member.name
                out = staging / name
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(extracted.read())
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}")
        staging.rename(partial)
        try:
            partial.rename(target)
        except OSError:  # already there (another lock's files, or another session's)
            for name in wanted:  # add what is missing, one atomic rename per file
                if not (target / name).is_file():
                    (target / name).parent.mkdir(parents=True, exist_ok=True)
                    (partial / name).rename(target / name)
            shutil.rmtree(partial, ignore_errors=True)
    return target


def fetch_tree(package: str, version: str, sha256: str, subdir: str = "tests") -> Path:
    """The whole ``subdir`` of a pinned sdist (downloaded and sha256-checked the first
    time, cached beside :func:`fetch`'s files): for suites that need their conftest,
    helpers and snapshots as they ship.

    Raises:
        RuntimeError: pip could not download the sdist, or its sha256 is not the pinned one.
    """
    target = cache_dir().parent / "trees" / f"{package}-{version}"
    if (target / subdir).is_dir():
        return target / subdir
    with tempfile.TemporaryDirectory(prefix="lgm-compat-") as scratch:
        command = [
            sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
            "--no-binary", ":all:", "-d", scratch, f"{package}=={version}",
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        archives = list(Path(scratch).glob("*.tar.gz"))
        if done.returncode != 0 or len(archives) != 1:
            raise RuntimeError(
                f"pip could not download the {package}=={version} sdist "
                f"(exit {done.returncode}): {done.stderr.strip()[-2000:]}"
            )
        if _sha256(archives[0]) != sha256:
            raise RuntimeError(
                f"{archives[0].name} has sha256 {_sha256(archives[0])}, not the pinned {sha256}"
            )
        prefix = f"{package.replace('-', '_')}-{version}/{subdir}/"
        staging = Path(scratch) / "out"
        with tarfile.open(archives[0]) as tar:
            for member in tar.getmembers():
                if member.isfile() and member.name.startswith(prefix):
                    out = staging / subdir / member.name.removeprefix(prefix)
                    out.parent.mkdir(parents=True, exist_ok=True)
                    extracted = tar.extractfile(member)
                    assert extracted is not None, member.name
                    out.write_bytes(extracted.read())
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}")
        shutil.move(str(staging), partial)
        try:
            partial.rename(target)
        except OSError:  # another session extracted it meanwhile
            shutil.rmtree(partial, ignore_errors=True)
    return target / subdir


@contextlib.contextmanager
def _borrowed_modules(modules: dict[str, types.ModuleType]) -> Iterator[None]:
    """Serve ``modules`` from ``sys.modules`` while a suite file is imported."""
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name, previous in saved.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous


def _import_file(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_suite(
    path: Path,
    module_name: str,
    conftest: Callable[[types.ModuleType], types.ModuleType],
    replacements: Callable[[types.ModuleType], dict[str, object]],
    additions: Callable[[types.ModuleType], dict[str, object]],
) -> types.ModuleType:
    """Import the suite file at ``path``, rebind ``replacements`` and add ``additions``.

    ``conftest(helper)`` builds the stand-in for the suite's ``tests/conftest.py`` (whose
    fixtures point at LangGraph's docker database) from the suite's own
    ``embed_test_utils`` module. ``replacements(module)`` names what to rebind and
    ``additions(module)`` what to add; a name the file does not define is an error (the
    pinned suite changed: review the adapter), and so is an addition that would shadow
    one of the file's names.
    """
    helper = _import_file(f"{module_name}__embed_test_utils", path.parent / "embed_test_utils.py")
    with _borrowed_modules({"tests.conftest": conftest(helper), "tests.embed_test_utils": helper}):
        module = _import_file(module_name, path)
    rebound, added = replacements(module), additions(module)
    missing = sorted(name for name in rebound if not hasattr(module, name))
    clashing = sorted(name for name in added if hasattr(module, name))
    if missing or clashing:
        raise RuntimeError(
            f"{path.name}: names to replace missing {missing}, additions clashing {clashing}; "
            "the pinned suite changed, review tests/compat/_adapters.py"
        )
    for name, value in {**rebound, **added}.items():
        setattr(module, name, value)
    return module


if __name__ == "__main__":  # scripts/test.sh: fetch before the test run, failing loudly
    # one pip download per sdist, all at once (each is mostly pip starting and asking PyPI)
    pinned_suites = [("LangGraph store suite", pinned) for pinned in read_lock()] + [
        ("checkpointer suite", pinned) for pinned in read_lock(CHECKPOINTER_LOCK_FILE)
    ]
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(pinned_suites) or 1) as pool:
        fetched = [(label, pinned, pool.submit(fetch, pinned)) for label, pinned in pinned_suites]
        for label, pinned, where in fetched:
            print(f"==> {label} {pinned.package}=={pinned.version}: {where.result()}")
