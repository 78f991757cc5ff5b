"""``langgraph-checkpoint-conformance`` against our Postgres savers on the real server.

Every base capability and every extended one (prune, copy_thread, delete_for_runs) must
be detected and pass, for both twins. The suite drives the async methods; on the sync
``PostgresSaver`` those run its sync methods in a worker thread, so both classes' own code
is what passes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import (
    BASE_CAPABILITIES,
    EXTENDED_CAPABILITIES,
)
from langgraph.checkpoint.conformance.report import ProgressCallbacks

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver

pytestmark = pytest.mark.postgres


async def test_async_postgres_saver_passes_full_conformance(postgres_dsn: str) -> None:
    @checkpointer_test(name="langgraph_recall.AsyncPostgresSaver")
    async def factory() -> AsyncIterator[AsyncPostgresSaver]:
        async with AsyncPostgresSaver.from_conn_string(postgres_dsn) as saver:
            await saver.setup()
            yield saver

    await _passes_fully(factory)


async def test_sync_postgres_saver_passes_full_conformance(postgres_dsn: str) -> None:
    @checkpointer_test(name="langgraph_recall.PostgresSaver")
    async def factory() -> AsyncIterator[PostgresSaver]:
        with PostgresSaver.from_conn_string(postgres_dsn) as saver:
            saver.setup()
            yield saver

    await _passes_fully(factory)


async def _passes_fully(factory: Any) -> None:
    report = await validate(factory, progress=ProgressCallbacks.verbose())
    report.print_report()

    assert report.passed_all_base(), report.to_dict()
    for capability in sorted(BASE_CAPABILITIES | EXTENDED_CAPABILITIES, key=lambda c: c.value):
        result = report.results[capability.value]
        assert result.detected, f"{capability.value} not detected"
        assert result.passed is True, (capability.value, result.failures)
        assert result.tests_passed > 0 and result.tests_failed == 0, capability.value
    for name in ("prune", "copy_thread", "delete_for_runs"):
        assert report.results[name].tests_passed >= 7, name
    assert report.conformance_level() == "FULL"
