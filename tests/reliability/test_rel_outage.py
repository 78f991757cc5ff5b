"""Postgres outage (server unreachable, not just backends terminated): a test-owned TCP
proxy in front of the shared server drops every connection and refuses new ones, then
comes back. The shared server itself is never touched.

Checked: during the outage the saver and the store fail with ``BackendUnavailableError``
within their pool timeout; after it the SAME objects work again; acknowledged turns and
memories are intact. The default pool timeouts fail within 10 s too (they took 10 s and
30 s before that was fixed).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from langgraph_recall.checkpoint.postgres import PostgresSaver
from langgraph_recall.errors import BackendUnavailableError
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests.graph_helpers import chat_graph
from tests.reliability._figures import Figures
from tests.reliability._servers import TcpProxy, admin_dsn_for
from tests.reliability._workload import check_thread, thread_config, turn_input
from tests.reliability.conftest import index_config

# serial: its time bounds are measured alone (scripts/test.sh)
pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.serial]

FAIL_FAST_SECONDS = 10.0
OUTAGE_SECONDS = 3.0
RECOVERY_BUDGET = 20.0


@pytest.fixture
def proxied_dsn(postgres_dsn: str) -> Iterator[tuple[TcpProxy, str]]:
    """The test database reached through a test-owned proxy that can cut the link."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    params = conninfo_to_dict(postgres_dsn)
    admin_dsn_for(postgres_dsn)  # asserts it is a test database
    upstream = (str(params.get("host", "127.0.0.1")), int(params.get("port", 5432)))
    with TcpProxy.running(upstream) as proxy:
        params.update(host="127.0.0.1", port=str(proxy.port))
        yield proxy, make_conninfo(**params)  # type: ignore[arg-type]


def until_success(call: Callable[[], Any], budget: float) -> float:
    """Retry ``call`` until it succeeds; seconds it took (fails the test past ``budget``)."""
    start = time.monotonic()
    while True:
        try:
            call()
        except BackendUnavailableError:
            assert time.monotonic() - start < budget, "no recovery within the budget"
            time.sleep(0.1)
        else:
            return time.monotonic() - start


def test_outage_fails_fast_and_same_objects_recover(
    proxied_dsn: tuple[TcpProxy, str], figures: Figures
) -> None:
    proxy, dsn = proxied_dsn
    short = {"timeout": 2.0}
    with (
        PostgresSaver.from_conn_string(dsn, pool_config=short) as saver,
        PostgresMemoryStore.from_conn_string(dsn, index=index_config(), pool_config=short) as store,
    ):
        saver.setup()
        store.setup()
        graph = chat_graph(saver)
        acked = []
        for n in range(3):
            graph.invoke(turn_input(f"o#{n}"), thread_config("o"))
            acked.append(f"o#{n}")
            store.put(("outage", "u1"), f"m{n}", {"content": f"memory {n}"})

        proxy.cut()
        cut_at = time.monotonic()
        failures: list[tuple[str, float]] = []
        failed_turns = []
        n = 3
        while time.monotonic() - cut_at < OUTAGE_SECONDS:
            for name, call in (
                ("saver", lambda: graph.invoke(turn_input(f"o#{n}"), thread_config("o"))),  # noqa: B023
                ("store put", lambda: store.put(("outage", "u1"), "down", {"content": "x"})),
                ("store search", lambda: store.search(("outage",), query="memory")),
            ):
                start = time.monotonic()
                with pytest.raises(BackendUnavailableError) as info:
                    call()
                failures.append((name, time.monotonic() - start))
                assert isinstance(info.value, ConnectionError)
                assert str(proxy.port) in str(info.value)
            failed_turns.append(f"o#{n}")
            n += 1
        proxy.restore()
        recovery = until_success(
            lambda: graph.invoke(turn_input("o#after"), thread_config("o")), RECOVERY_BUDGET
        )
        store_recovery = until_success(
            lambda: store.put(("outage", "u1"), "after", {"content": "after"}), RECOVERY_BUDGET
        )
        acked.append("o#after")
        messages = graph.get_state(thread_config("o")).values["messages"]
        check_thread("o", messages, acked, failed_turns)
        keys = sorted(item.key for item in store.search(("outage",), limit=100))
        assert keys == ["after", "m0", "m1", "m2"]  # the put attempted during the outage: absent

    assert max(seconds for _, seconds in failures) < FAIL_FAST_SECONDS
    figures.add("pg_outages", 1)
    figures.extend("fail_fast_seconds", [max(seconds for _, seconds in failures)])
    figures.extend("postgres_recovery_seconds", [recovery, store_recovery])


def test_outage_fails_fast_with_default_pool_settings(
    proxied_dsn: tuple[TcpProxy, str],
) -> None:
    from tests.reliability.test_rel_errors import _time_failure

    proxy, dsn = proxied_dsn
    with (
        PostgresSaver.from_conn_string(dsn) as saver,
        PostgresMemoryStore.from_conn_string(dsn, index=index_config()) as store,
    ):
        saver.setup()
        store.setup()
        graph = chat_graph(saver)
        graph.invoke(turn_input("d#0"), thread_config("d"))
        proxy.cut()
        for call in (
            lambda: graph.invoke(turn_input("d#1"), thread_config("d")),
            lambda: store.search(("outage",), query="memory"),
        ):
            # a little under the bound, so a failure at the pool timeout (10.0 s) cannot race it
            error, _ = _time_failure(call, FAIL_FAST_SECONDS - 0.5)
            assert isinstance(error, BackendUnavailableError), error
