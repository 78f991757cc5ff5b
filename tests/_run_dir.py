"""One folder a test run's processes share: made by the process that starts the run,
inherited by its pytest-xdist workers (an environment variable), removed at its end.

It is a ``mkdtemp`` opened to every account (0755), not pytest's 0700 ``tmp_path``: run as
root, the embedded Postgres refuses binaries whose parent folders it would have to open to
its own account. ``tests/integration/packaging/_venv.py`` builds the wheel's virtualenv in it
once per run.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

__all__ = ["SHARED_DIR_ENV", "pytest_configure", "pytest_unconfigure"]

SHARED_DIR_ENV = "LANGGRAPH_RECALL_TEST_SHARED_DIR"
_MADE_HERE = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """The run's shared folder (0755, see ``tests/integration/packaging/_venv.py``): made by
    the process that starts the run, inherited by its pytest-xdist workers, removed at its
    end."""
    if hasattr(config, "workerinput") or os.environ.get(SHARED_DIR_ENV):
        return
    shared = tempfile.mkdtemp(prefix="lgm-test-run-")
    os.chmod(shared, 0o755)
    os.environ[SHARED_DIR_ENV] = shared
    config.stash[_MADE_HERE] = shared


def pytest_unconfigure(config: pytest.Config) -> None:
    shared = config.stash.get(_MADE_HERE, None)
    if shared is not None:
        shutil.rmtree(shared, ignore_errors=True)
        os.environ.pop(SHARED_DIR_ENV, None)
