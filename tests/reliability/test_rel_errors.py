"""Which exception a caller gets when a backend goes away, and how fast.

Deterministic counterparts of the fault-injection tests: a lost connection (its backend
terminated) and a server that does not answer at all. The contract (DESIGN §4,
``errors.py``): ``BackendUnavailableError`` — a ``ConnectionError`` and a
``LangGraphRecallError`` whose message names host and port — within 10 s.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph_recall.errors import BackendUnavailableError, LangGraphRecallError
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from tests.graph_helpers import chat_graph
from tests.reliability._figures import Figures
from tests.reliability._servers import OwnedRedis, free_port, terminate_backends
from tests.reliability._workload import thread_config, turn_input
from tests.reliability.conftest import index_config

FAIL_FAST_SECONDS = 10.0


def assert_unavailable(exc: BaseException, where: str) -> None:
    assert isinstance(exc, BackendUnavailableError), type(exc).__mro__
    assert isinstance(exc, ConnectionError) and isinstance(exc, LangGraphRecallError)
    assert where in str(exc), str(exc)


@pytest.mark.postgres
def test_store_reports_lost_connection_as_backend_unavailable(postgres_dsn: str) -> None:
    with psycopg.connect(postgres_dsn, autocommit=True, row_factory=dict_row) as conn:
        store = PostgresMemoryStore(conn, index=index_config())  # type: ignore[arg-type]
        store.setup()
        store.put(("m", "u"), "k", {"content": "hello"})
        assert terminate_backends(postgres_dsn) == 1
        for _ in range(2):  # AdminShutdown first, then "the connection is lost"
            start = time.monotonic()
            with pytest.raises(Exception) as info:
                store.put(("m", "u"), "k2", {"content": "after"})
            assert time.monotonic() - start < FAIL_FAST_SECONDS
            assert_unavailable(info.value, "127.0.0.1")


@pytest.mark.postgres
async def test_async_store_reports_lost_connection_as_backend_unavailable(
    postgres_dsn: str,
) -> None:
    conn = await psycopg.AsyncConnection.connect(
        postgres_dsn, autocommit=True, row_factory=dict_row
    )
    async with conn:
        store = AsyncPostgresMemoryStore(conn, index=index_config())  # type: ignore[arg-type]
        await store.asetup()
        await store.aput(("m", "u"), "k", {"content": "hello"})
        assert terminate_backends(postgres_dsn) == 1
        with pytest.raises(Exception) as info:
            await store.asearch(("m",), query="hello")
        assert_unavailable(info.value, "127.0.0.1")


@pytest.mark.postgres
def test_saver_reports_lost_connection_as_backend_unavailable(postgres_dsn: str) -> None:
    with psycopg.connect(postgres_dsn, autocommit=True, row_factory=dict_row) as conn:
        saver = PostgresSaver(conn)
        saver.setup()
        graph = chat_graph(saver)
        graph.invoke(turn_input("t#0"), thread_config("t"))
        assert terminate_backends(postgres_dsn) == 1
        start = time.monotonic()
        with pytest.raises(BackendUnavailableError) as info:
            graph.invoke(turn_input("t#1"), thread_config("t"))
        assert time.monotonic() - start < FAIL_FAST_SECONDS
        assert_unavailable(info.value, "127.0.0.1")


def _opens(factory: Callable[[], Any]) -> Callable[[], None]:
    def run() -> None:
        with factory():
            pass

    return run


async def _aopens(factory: Callable[[], Any]) -> None:
    async with factory():
        pass


def _time_failure(run: Callable[[], None], budget: float) -> tuple[BaseException | None, float]:
    """Run ``run`` in a daemon thread; return (its exception, seconds) or (None, budget)."""
    outcome: list[BaseException] = []
    start = time.monotonic()

    def target() -> None:
        try:
            run()
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(budget)
    if worker.is_alive():
        return None, budget
    return (outcome[0] if outcome else None), time.monotonic() - start


def _dead_pg(port: int) -> str:
    return f"postgresql://postgres@127.0.0.1:{port}/nowhere"


UNREACHABLE = {
    "postgres_saver": lambda port: _opens(lambda: PostgresSaver.from_conn_string(_dead_pg(port))),
    "redis_saver": lambda port: _opens(
        lambda: RedisSaver.from_conn_string(f"redis://127.0.0.1:{port}/0")
    ),
}


@pytest.mark.parametrize("component", sorted(UNREACHABLE))
def test_unreachable_server_fails_fast_and_names_it(component: str, figures: Figures) -> None:
    port = free_port()
    error, seconds = _time_failure(UNREACHABLE[component](port), FAIL_FAST_SECONDS)
    assert error is not None, f"{component}: no error within {FAIL_FAST_SECONDS}s"
    assert_unavailable(error, str(port))
    figures.extend("unreachable_open_seconds", [seconds])


@pytest.mark.slow
def test_store_unreachable_server_fails_fast_and_names_it() -> None:
    port = free_port()
    run = _opens(lambda: PostgresMemoryStore.from_conn_string(_dead_pg(port), index=index_config()))
    error, _ = _time_failure(run, FAIL_FAST_SECONDS)
    assert error is not None, f"no error within {FAIL_FAST_SECONDS}s"
    assert_unavailable(error, str(port))


async def test_async_savers_unreachable_fail_fast() -> None:
    port = free_port()
    for factory in (
        lambda: AsyncPostgresSaver.from_conn_string(_dead_pg(port)),
        lambda: AsyncRedisSaver.from_conn_string(f"redis://127.0.0.1:{port}/0"),
    ):
        start = time.monotonic()
        with pytest.raises(BackendUnavailableError) as info:
            await _aopens(factory)
        assert time.monotonic() - start < FAIL_FAST_SECONDS
        assert_unavailable(info.value, str(port))


@pytest.mark.redis
def test_redis_lease_backend_down_fails_fast_then_recovers(owned_redis: OwnedRedis) -> None:
    with RedisSaver.from_conn_string(owned_redis.url, prefix="lease") as saver:
        leases = saver.lease_backend()
        held = leases.try_acquire("t", "worker-a", 30.0)
        assert held is not None
        owned_redis.kill()
        start = time.monotonic()
        with pytest.raises(BackendUnavailableError):
            leases.try_acquire("t", "worker-b", 30.0)
        with pytest.raises(BackendUnavailableError):
            leases.renew(held, 30.0)
        assert time.monotonic() - start < FAIL_FAST_SECONDS
        owned_redis.start()
        # the acknowledged lease survived the kill (AOF): its holder renews it -- which
        # stamps it with the restarted server's epoch -- and worker-b still cannot take it
        # (a lease nobody renews after a restart no longer blocks: docs/multi-worker.md)
        assert leases.renew(held, 30.0) is True
        assert leases.try_acquire("t", "worker-b", 30.0) is None
        leases.release(held)
        taken = leases.try_acquire("t", "worker-b", 30.0)
        assert taken is not None and taken.token > held.token
