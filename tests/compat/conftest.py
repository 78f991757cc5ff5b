"""Run LangGraph's own store and checkpointer test suites against ours.

``checkpointer_suites.lock`` pins ``langgraph-checkpoint-postgres``'s saver suites
(``test_sync.py``, ``test_async.py``, the delta tests): collected once, on the PG 15 server,
with their fixtures swapped for ours (``_checkpointer_adapters``); what is not run is listed
with its reason in ``checkpointer_suites.deselect``. The store suites:

``langgraph_suites.lock`` pins the PyPI sdists whose ``tests/`` hold the suites. At
collection this conftest fetches them (``_suites.fetch``: pip, sha256-checked, cached
outside git) and collects every pinned file twice — on the PG 15 server (our exact
vector path) and on the embedded PG 18 with pgvector — with LangGraph's fixtures swapped
for ours (``_adapters``). The test code itself runs unmodified.

Tests of LangGraph's private helpers (``NOT_A_STORE_TEST``) and tests of what our store
deliberately does otherwise (``DOCUMENTED_DECISIONS``, each listed with its reason in
``docs/store.md``) are deselected here, and the session summary counts them; everything
else must pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.compat import _adapters, _checkpointer_adapters, _suites

BACKENDS = {"exact": _adapters.exact_backend, "pgvector": _adapters.pgvector_backend}

# Tests of LangGraph's own code paths, not of a store's behaviour: they pass or fail the
# same whatever store is plugged in, so they are not run (nor counted).
NOT_A_STORE_TEST = {
    "checkpoint-postgres/test_store.py": {
        "test_escape_like_literal": "tests LangGraph's private LIKE-escaping helper",
        "test_namespace_match_pattern": "tests LangGraph's private LIKE-pattern helper",
        "test_nonnull_migrations": "reads PostgresStore.MIGRATIONS (LangGraph's SQL)",
    },
    "checkpoint-postgres/test_async_store.py": {
        "test_abatch_uses_single_pool_checkout": (
            "counts calls of LangGraph's private _ainternal.get_connection"
        ),
    },
    "checkpoint/test_store.py": {
        "test_dedupe_ops_maps_repeated_reads_and_puts_to_one_op": "tests LangGraph's _dedupe_ops",
        "test_get_text_at_path": "tests LangGraph's get_text_at_path helper",
        "test_get_text_at_path_with_non_dict_mapping": "tests LangGraph's get_text_at_path",
        "test_validate_op_namespace_rejects_invalid_labels": (
            "tests LangGraph's _validate_op_namespace"
        ),
        "test_validate_op_namespace_allows_empty_prefix_and_wildcards": (
            "tests LangGraph's _validate_op_namespace"
        ),
    },
}


# LangGraph's tests of what our store deliberately does otherwise: each difference is a
# decision listed with its reason in docs/store.md ("LangGraph's own store suites"). They
# are not run (nothing is marked xfail); the session's summary says how many and why.
DOCUMENTED_DECISIONS = {
    "checkpoint-postgres/test_store.py": {
        "test_scores": "SearchItem.score is the fused score, not the similarity",
        "test_embed_with_path_sync": "one vector per memory over its joined fields",
        "test_embed_with_path_operation_config": "one vector per memory over its joined fields",
        "test_omit_expired_disabled_preserves_expired_rows": "expired memories never return",
        "test_omit_expired_search_pagination": "the test body writes LangGraph's `store` table",
    },
    "checkpoint-postgres/test_async_store.py": {
        "test_embed_with_path": "one vector per memory over its joined fields",
        "test_omit_expired_disabled_preserves_expired_rows": "expired memories never return",
        "test_omit_expired_search_pagination": "the test body writes LangGraph's `store` table",
    },
    "checkpoint/test_store.py": {
        "test_embed_with_path": "one vector per memory over its joined fields",
    },
}


# LangGraph's checkpointer suites (checkpointer_suites.lock): what is not run is listed
# test by test, with its reason, in checkpointer_suites.deselect.
CHECKPOINTER_NOT_RUN = _suites.read_deselect()


def _not_run_because(suite_file: str, item: pytest.Item) -> str | None:
    name = getattr(item, "originalname", item.name)
    reason = NOT_A_STORE_TEST.get(suite_file, {}).get(name)
    if reason is None:
        reason = DOCUMENTED_DECISIONS.get(suite_file, {}).get(name)
    if reason is None:
        reason = CHECKPOINTER_NOT_RUN.get(suite_file, {}).get(name)
    return reason


_NOT_RUN: dict[str, int] = {}


class SuiteModule(pytest.Module):
    """One fetched suite file, imported with our fixtures for one backend."""

    suite: str
    filename: str
    backend: str
    adapter: Any = _adapters

    def _getobj(self) -> Any:
        module_name = f"lgm_compat_{self.backend}_{self.suite}_{self.filename}".replace(
            "-", "_"
        ).removesuffix(".py")
        return _suites.load_suite(
            self.path,
            module_name,
            self.adapter.conftest_standin,
            self.adapter.replacements(self.suite, self.filename),
            self.adapter.additions(self.suite, BACKENDS.get(self.backend)),
        )


class LockFile(pytest.File):
    """``langgraph_suites.lock``: yields one :class:`SuiteModule` per file and backend
    (``checkpointer_suites.lock``: per file, on the PG 15 server)."""

    def collect(self) -> Iterable[pytest.Module]:
        checkpointers = self.path.name == _suites.CHECKPOINTER_LOCK_FILE.name
        backends = ["pg15"] if checkpointers else list(BACKENDS)
        for suite in _suites.read_lock(self.path):
            root = _suites.fetch(suite)
            for name in suite.files:
                for backend in backends:
                    filename = Path(name).name
                    module = SuiteModule.from_parent(
                        self,
                        path=root / name,
                        name=f"{backend}::{suite.label}/{filename}",
                        nodeid=f"{self.nodeid}::{backend}::{suite.label}/{filename}",
                    )
                    module.suite, module.filename, module.backend = suite.label, filename, backend
                    if checkpointers:
                        module.adapter = _checkpointer_adapters
                    yield module


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name in (_suites.LOCK_FILE.name, _suites.CHECKPOINTER_LOCK_FILE.name):
        return LockFile.from_parent(parent, path=file_path)
    return None


# LangGraph's tests that load the server for a minute (10,000 concurrent operations): beside
# another test process on 2 cores, the server can answer later than the store's 5 s stall
# bound, so they run in the serial stage (scripts/test.sh), alone, as they always did.
SERIAL = {"test_large_batches", "test_large_batches_async"}
# LangGraph's TTL tests sleep ~17 s each for their items to expire and compute next to nothing:
# they run beside the serial lanes, several at a time, not in a parallel-stage worker's slot.
WAITS = {"test_store_ttl"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    deselected: list[pytest.Item] = []
    kept: list[pytest.Item] = []
    for item in items:
        module = item.getparent(SuiteModule)
        reason = _not_run_because(f"{module.suite}/{module.filename}", item) if module else None
        name = getattr(item, "originalname", item.name)
        if module is not None and name in SERIAL:
            item.add_marker(pytest.mark.serial)
        if module is not None and name in WAITS:
            item.add_marker(pytest.mark.waits)
        if reason is None:
            kept.append(item)
        else:
            deselected.append(item)
            _NOT_RUN[reason] = _NOT_RUN.get(reason, 0) + 1
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _NOT_RUN:
        terminalreporter.write_sep(
            "-", "LangGraph's suites: tests not run (docs/store.md, docs/*-checkpointer.md)"
        )
        for reason, count in sorted(_NOT_RUN.items(), key=lambda entry: -entry[1]):
            terminalreporter.write_line(f"{count:4d}  {reason}")
