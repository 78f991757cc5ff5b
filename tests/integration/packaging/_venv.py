"""The package as users get it: our wheel in a fresh virtualenv, and ``langgraph dev``.

The fixture is registered for every integration test in ``tests/integration/conftest.py``
(one install per test run, shared by the README, server and notebook tests and by every
pytest-xdist worker).

``installed_venv`` (session) builds the release from this checkout as CI and a maintainer
do (``python -m build``: the sdist, then the wheel built from that sdist) and installs it
into a new virtualenv with exactly the README's server install line, **by name**
(``pip install "langgraph-recall[all]" "langgraph-cli[inmem]" --find-links DIST``; the
dependencies come from the package indexes pip is configured with). pip's install report
proves that the name a user types resolved to the wheel we built (not to a distribution of
that name on an index); pip's cache makes a second run fast. ``langgraph_dev`` starts the LangGraph
dev server of that virtualenv on a free loopback port (no browser, no reload, no tunnel,
analytics and tracing off) and stops it — its whole process group — afterwards.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests._run_dir import SHARED_DIR_ENV
from tests.integration.packaging._readme import pip_install_line

ROOT = Path(__file__).resolve().parents[3]
SERVER_START_TIMEOUT = 120.0


@dataclass(frozen=True)
class InstalledVenv:
    """A virtualenv with our release installed by name from the folder it was built in."""

    root: Path
    wheel: Path
    sdist: Path
    requirements: tuple[str, ...]
    report: dict[str, Any]
    """pip's ``--report`` of the install (what was installed, from where)."""
    seconds: float

    @property
    def dist(self) -> Path:
        """The folder of the built sdist and wheel."""
        return self.wheel.parent

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    def tool(self, name: str) -> Path:
        return self.root / "bin" / name

    def pip_install(self, *requirements: str) -> None:
        """Install more into the virtualenv (e.g. what Jupyter needs to run a kernel)."""
        _run([str(self.python), "-m", "pip", "install", "--quiet", "--no-compile", *requirements])


def _run(command: list[str], **kwargs: object) -> None:
    result = subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload]
    if result.returncode != 0:
        raise AssertionError(
            f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout[-3000:]}\n"
            f"{result.stderr[-3000:]}"
        )


@pytest.fixture(scope="session")
def installed_venv() -> InstalledVenv:
    """Build the sdist and wheel and install them by name (+ the README's extras and
    langgraph-cli[inmem]) -- once per test run: the first process to need it builds it
    under a lock in the run's shared folder, the others (pytest-xdist workers) reuse it.
    ``scripts/test.sh`` starts that build before the tests (``python -m
    tests.integration.packaging._venv``), so it overlaps with mypy and the first modules.

    That folder is a ``mkdtemp`` opened to every account (0755), not pytest's 0700
    ``tmp_path``: run as root, the embedded Postgres refuses binaries whose parent folders
    it would have to open to its own account. It is removed when the run ends."""
    return ensure_installed(Path(os.environ[SHARED_DIR_ENV]) / "wheel-venv")


def ensure_installed(base: Path) -> InstalledVenv:
    """The virtualenv in ``base``: built there unless another process already did (under
    the lock ``{base}.lock``; a build that failed elsewhere is started again)."""
    with open(f"{base}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            recorded = base / "installed.json"
            if recorded.exists():
                return _from_json(json.loads(recorded.read_text()))
            if base.exists():  # a build that failed in another process: start again
                shutil.rmtree(base)
            base.mkdir()
            venv = _install(base)
            recorded.write_text(json.dumps(_to_json(venv)))
            return venv
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _to_json(venv: InstalledVenv) -> dict[str, Any]:
    return {
        "root": str(venv.root),
        "wheel": str(venv.wheel),
        "sdist": str(venv.sdist),
        "requirements": list(venv.requirements),
        "report": venv.report,
        "seconds": venv.seconds,
    }


def _from_json(data: dict[str, Any]) -> InstalledVenv:
    return InstalledVenv(
        Path(data["root"]),
        Path(data["wheel"]),
        Path(data["sdist"]),
        tuple(data["requirements"]),
        data["report"],
        data["seconds"],
    )


def build_release(dist: Path) -> tuple[Path, Path]:
    """``python -m build`` of the checkout into ``dist``: ``(sdist, wheel)``; the wheel is
    built from the sdist, so a file missing from the sdist fails here."""
    _run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)])
    (sdist,) = dist.glob("langgraph_recall-*.tar.gz")
    (wheel,) = dist.glob("langgraph_recall-*.whl")
    return sdist, wheel


def _install(base: Path) -> InstalledVenv:
    started = time.monotonic()
    sdist, wheel = build_release(base / "dist")
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    requirements = pip_install_line((ROOT / "README.md").read_text(), "langgraph-cli[inmem]")
    assert [r for r in requirements if r.startswith("langgraph-recall")] == [
        "langgraph-recall[all]"
    ], requirements
    report = base / "pip-report.json"
    _run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-compile",
            "--find-links",
            str(wheel.parent),
            "--report",
            str(report),
            *requirements,
        ]
    )
    seconds = time.monotonic() - started
    print(f"\nbuild + fresh virtualenv (pip install {' '.join(requirements)}): {seconds:.1f} s")
    return InstalledVenv(
        venv, wheel, sdist, tuple(requirements), json.loads(report.read_text()), seconds
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_env(extra: Mapping[str, str]) -> dict[str, str]:
    """The environment of code run from the wheel: offline, nothing of the repository."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "LANGSMITH_", "LANGCHAIN_", "PYTHON", "VIRTUAL_ENV"))
    }
    env.update(
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGSMITH_TRACING="false",
        LANGCHAIN_TRACING_V2="false",
        PYTHONSAFEPATH="1",
    )
    env.update(extra)
    return env


@contextlib.contextmanager
def langgraph_dev(
    venv: InstalledVenv, cwd: Path, env: Mapping[str, str], log_dir: Path
) -> Iterator[str]:
    """Serve ``cwd``'s ``langgraph.json`` with ``langgraph dev``; yields the base URL (the
    server's output goes to ``log_dir``, shown when it fails)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (log_dir / f"langgraph-dev-{port}.log").open("w")
    command = [
        str(venv.tool("langgraph")),
        "dev",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-browser",
        "--no-reload",
    ]
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=server_env(env),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            if process.poll() is not None:
                raise AssertionError(f"langgraph dev exited: {Path(log.name).read_text()[-4000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/ok", timeout=2.0).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"langgraph dev did not answer: {Path(log.name).read_text()[-4000:]}"
                )
            time.sleep(0.5)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        log.close()


if __name__ == "__main__":  # scripts/test.sh: build the run's virtualenv ahead of the tests
    ensure_installed(Path(os.environ[SHARED_DIR_ENV]) / "wheel-venv")
