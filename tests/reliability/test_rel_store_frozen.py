"""One timeout bounds a queued async store call against a server that stops answering.

A test-owned TCP forwarder in front of the shared PG 15 stops forwarding bytes (connections
stay open and accepted, nothing answers: a frozen server, as after SIGSTOP; the server
itself is never touched). Calls of ``AsyncPostgresMemoryStore`` — the one in flight and
those queued behind it in the coalescer — fail with ``BackendUnavailableError`` within the
pool's timeout + ε, the queued ones are never run, and once the server answers again the
store works without a restart.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from langgraph_recall.errors import BackendUnavailableError
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore
from tests.reliability._figures import Figures
from tests.reliability._servers import FreezingProxy
from tests.reliability.conftest import index_config

# serial: its time bounds are measured alone (scripts/test.sh)
pytestmark = pytest.mark.serial

TIMEOUT = 1.0
EPSILON = 1.5


async def test_queued_calls_to_a_frozen_server_fail_within_one_timeout(
    postgres_dsn: str, figures: Figures
) -> None:
    params = conninfo_to_dict(postgres_dsn)
    upstream = (str(params.get("host") or "127.0.0.1"), int(params.get("port") or 5432))
    with FreezingProxy.running(upstream) as proxy:
        dsn = make_conninfo(postgres_dsn, host="127.0.0.1", port=proxy.port)
        index: Any = index_config()
        async with AsyncPostgresMemoryStore.from_conn_string(
            dsn, index=index, pool_config={"min_size": 2, "max_size": 2, "timeout": TIMEOUT}
        ) as store:
            await store.asetup()
            await store.aput(("f",), "before", {"content": "written before the freeze"})
            proxy.thawed.clear()
            try:
                started = time.monotonic()
                outcomes = await asyncio.gather(
                    *(store.aput(("f",), f"k{i}", {"content": f"frozen {i}"}) for i in range(50)),
                    *(store.asearch(("f",), query="frozen", limit=3) for _ in range(50)),
                    return_exceptions=True,
                )
                elapsed = time.monotonic() - started
            finally:
                proxy.thawed.set()
            errors = [o for o in outcomes if isinstance(o, BaseException)]
            assert len(errors) == len(outcomes), [o for o in outcomes if o not in errors][:3]
            assert all(isinstance(e, BackendUnavailableError) for e in errors), errors[:3]
            never_run = [e for e in errors if "never run" in str(e)]
            assert never_run  # the queue was failed, not drained into the frozen server
            assert elapsed < TIMEOUT + EPSILON, elapsed
            # the server answers again: the store works, and no queued call was written
            await store.aput(("f",), "after", {"content": "written after the thaw"})
            keys = {item.key for item in await store.asearch(("f",), limit=1000)}
            assert {"before", "after"} <= keys
            assert len(keys - {"before", "after"}) <= len(errors) - len(never_run)
    figures.extend(
        "store_frozen_server",
        [
            {
                "calls": len(outcomes),
                "failed_in_s": round(elapsed, 2),
                "timeout_s": TIMEOUT,
                "never_run": len(never_run),
            }
        ],
    )
