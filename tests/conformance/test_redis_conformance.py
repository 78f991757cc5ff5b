"""``langgraph-checkpoint-conformance`` against the Redis savers on the real Redis.

Every base capability and the optional ``prune``, ``copy_thread`` and ``delete_for_runs``
capabilities must be detected and pass — for :class:`AsyncRedisSaver` (native async) and
for :class:`RedisSaver` (whose async methods run its sync code in a worker thread, so the
suite exercises the sync code path). Each capability suite gets a fresh saver on a fresh
key prefix (cleaned up by SCAN afterwards).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.report import CapabilityReport, ProgressCallbacks

from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver

pytestmark = pytest.mark.redis

BASE = ("put", "put_writes", "get_tuple", "list", "delete_thread")
EXTENDED = ("prune", "copy_thread", "delete_for_runs")


async def test_async_redis_saver_passes_conformance(redis_url: str, redis_prefix: str) -> None:
    prefixes: list[str] = []

    @checkpointer_test(name="AsyncRedisSaver")
    async def factory() -> AsyncIterator[AsyncRedisSaver]:
        prefix = f"{redis_prefix}:{uuid.uuid4().hex[:6]}"
        prefixes.append(prefix)
        async with AsyncRedisSaver.from_conn_string(redis_url, prefix=prefix) as saver:
            await saver.setup()
            yield saver

    report = await validate(factory, progress=ProgressCallbacks.verbose())
    report.print_report()
    assert_full_conformance(report)
    assert len(prefixes) == len(report.results)


async def test_sync_redis_saver_passes_conformance(redis_url: str, redis_prefix: str) -> None:
    @checkpointer_test(name="RedisSaver")
    async def factory() -> AsyncIterator[RedisSaver]:
        prefix = f"{redis_prefix}:{uuid.uuid4().hex[:6]}"
        with RedisSaver.from_conn_string(redis_url, prefix=prefix) as saver:
            saver.setup()
            yield saver

    report = await validate(factory, progress=ProgressCallbacks.verbose())
    report.print_report()
    assert_full_conformance(report)


def assert_full_conformance(report: CapabilityReport) -> None:
    assert report.passed_all_base(), report.to_dict()
    for capability in BASE:
        assert report.results[capability].tests_passed > 0, capability
    for capability in EXTENDED:
        result = report.results[capability]
        assert result.detected, f"{capability} not detected"
        assert result.passed is True, f"{capability}: {result.failures}"
        assert result.tests_passed > 0 and result.tests_failed == 0
    assert report.conformance_level() == "FULL"


def test_the_server_under_test_is_the_one_configured(redis_url: str) -> None:
    """The Valkey run of CI really runs on Valkey (``$LANGGRAPH_RECALL_TEST_REDIS_SERVER``)."""
    import os

    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        info = client.info("server")
    finally:
        client.close()
    binary = os.path.basename(os.environ.get("LANGGRAPH_RECALL_TEST_REDIS_SERVER", ""))
    if binary.startswith("valkey"):
        assert info.get("server_name") == "valkey" and info.get("valkey_version"), info
    else:
        assert "valkey_version" not in info, info
    assert tuple(int(p) for p in str(info["redis_version"]).split(".")[:2]) >= (6, 2)
