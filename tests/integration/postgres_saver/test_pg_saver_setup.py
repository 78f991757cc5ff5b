"""setup() inside/outside transactions, migrations, pool configuration and connection errors."""

from __future__ import annotations

import socket
import threading
import time

import psycopg
import pytest
from langgraph.checkpoint.postgres.base import MIGRATIONS as OFFICIAL_MIGRATIONS
from pg_saver_helpers import thread, turn
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PoolConfig, PostgresSaver
from langgraph_recall.checkpoint.postgres._sql import LGM_MIGRATIONS
from langgraph_recall.errors import (
    BackendUnavailableError,
    ConfigurationError,
    InvalidConnectionStringError,
    MigrationError,
)
from tests.graph_helpers import chat_graph

pytestmark = pytest.mark.postgres

OUR_TABLES = {"lgm_checkpoint_migrations", "lgm_thread_leases", "lgm_thread_activity"}
ALL_TABLES = {"checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations"}


def tables(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
    return {r[0] for r in rows}


def versions(dsn: str, table: str) -> list[int]:
    with psycopg.connect(dsn) as conn:
        return [r[0] for r in conn.execute(f"SELECT v FROM {table} ORDER BY v").fetchall()]


def indexes(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = 'public'")
        return {r[0] for r in rows.fetchall()}


def test_setup_records_every_migration_and_is_idempotent(postgres_dsn: str) -> None:
    with PostgresSaver.from_conn_string(postgres_dsn) as saver:
        saver.setup()
        saver.setup()
    assert tables(postgres_dsn) >= ALL_TABLES | OUR_TABLES
    assert versions(postgres_dsn, "checkpoint_migrations") == list(range(len(OFFICIAL_MIGRATIONS)))
    assert versions(postgres_dsn, "lgm_checkpoint_migrations") == list(range(len(LGM_MIGRATIONS)))
    assert {"checkpoints_thread_id_idx", "lgm_checkpoints_run_id_idx"} <= indexes(postgres_dsn)


def test_setup_inside_an_explicit_transaction_commits_or_rolls_back(postgres_dsn: str) -> None:
    with psycopg.connect(postgres_dsn, autocommit=True, row_factory=dict_row) as conn:
        with pytest.raises(RuntimeError, match="abort provisioning"), conn.transaction():
            PostgresSaver(conn).setup()  # CREATE INDEX CONCURRENTLY would fail here
            conn.execute("CREATE TABLE tenant_marker (x int)")
            raise RuntimeError("abort provisioning")
        assert not (ALL_TABLES | OUR_TABLES) & tables(postgres_dsn)

        with conn.transaction():
            saver = PostgresSaver(conn)
            saver.setup()
            conn.execute("CREATE TABLE tenant_marker (x int)")
        assert ALL_TABLES | OUR_TABLES | {"tenant_marker"} <= tables(postgres_dsn)
        assert "checkpoint_writes_thread_id_idx" in indexes(postgres_dsn)
        graph = chat_graph(saver)
        graph.invoke(turn("hi"), thread("tx"))
        assert graph.get_state(thread("tx")).values["messages"][-1].content == "b:hi"


def test_setup_on_a_non_autocommit_connection(postgres_dsn: str) -> None:
    with psycopg.connect(postgres_dsn, autocommit=False, row_factory=dict_row) as conn:
        PostgresSaver(conn).setup()
        conn.commit()
    assert versions(postgres_dsn, "lgm_checkpoint_migrations")[-1] == len(LGM_MIGRATIONS) - 1


async def test_async_setup_inside_a_transaction(postgres_dsn: str) -> None:
    async with (
        await psycopg.AsyncConnection.connect(
            postgres_dsn, autocommit=True, row_factory=dict_row
        ) as conn,
        conn.transaction(),
    ):
        await AsyncPostgresSaver(conn).setup()
    assert tables(postgres_dsn) >= ALL_TABLES | OUR_TABLES


@pytest.mark.parametrize("threshold", [None, 0])
def test_prepare_threshold_reaches_pooled_connections(
    postgres_dsn: str, threshold: int | None
) -> None:
    # one connection, so the session that ran the graph is the one inspected
    with PostgresSaver.from_conn_string(
        postgres_dsn, prepare_threshold=threshold, pool_config={"min_size": 1, "max_size": 1}
    ) as saver:
        saver.setup()
        graph = chat_graph(saver)
        for i in range(3):
            graph.invoke(turn(f"m{i}"), thread("bouncer"))
        assert len(graph.get_state(thread("bouncer")).values["messages"]) == 9
        pool = saver.conn
        assert isinstance(pool, ConnectionPool)
        with pool.connection() as conn:
            assert conn.prepare_threshold == threshold
            assert conn.autocommit is True
            row = conn.execute("SELECT count(*) AS n FROM pg_prepared_statements").fetchone()
    assert row is not None
    if threshold is None:  # PgBouncer transaction pooling: no server-side statements
        assert row["n"] == 0
    else:
        assert row["n"] > 0


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_server_down_names_host_and_port_quickly() -> None:
    port = _closed_port()
    start = time.monotonic()
    with (
        pytest.raises(BackendUnavailableError, match=f"127.0.0.1:{port}") as info,
        PostgresSaver.from_conn_string(f"postgresql://postgres@127.0.0.1:{port}/x"),
    ):
        pass
    assert time.monotonic() - start < 10
    assert isinstance(info.value, ConnectionError)


async def test_async_server_down_names_host_and_port() -> None:
    port = _closed_port()
    with pytest.raises(BackendUnavailableError, match=f"127.0.0.1:{port}"):
        async with AsyncPostgresSaver.from_conn_string(f"postgresql://u@127.0.0.1:{port}/x"):
            pass


@pytest.mark.parametrize(
    "dsn",
    ["mysql://root@localhost/db", "not a dsn", "postgresql://u@localhost:99999/db", ""],
)
def test_malformed_dsn_is_rejected(dsn: str) -> None:
    with pytest.raises(InvalidConnectionStringError) as info, PostgresSaver.from_conn_string(dsn):
        pass
    assert isinstance(info.value, ValueError)
    assert "postgresql://" in str(info.value) or "port" in str(info.value)


def test_bad_options_are_rejected(postgres_dsn: str) -> None:
    with pytest.raises(ConfigurationError, match="ttl"):
        PostgresSaver.from_conn_string(postgres_dsn, ttl=-1).__enter__()  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="keep_last"):
        PostgresSaver.from_conn_string(postgres_dsn, keep_last=0).__enter__()
    with pytest.raises(ConfigurationError, match="pipeline"):
        PostgresSaver.from_conn_string(postgres_dsn, pipeline=True).__enter__()
    with pytest.raises(ConfigurationError, match="Connection"):
        PostgresSaver("postgresql://not-a-connection")  # type: ignore[arg-type]


def test_missing_setup_is_a_clear_migration_error(postgres_dsn: str) -> None:
    with PostgresSaver.from_conn_string(postgres_dsn) as saver:
        graph = chat_graph(saver)
        with pytest.raises(MigrationError, match=r"saver\.setup\(\)"):
            graph.invoke(turn("too early"), thread("t"))
        saver.setup()
        graph.invoke(turn("now"), thread("t"))
        assert graph.get_state(thread("t")).values["messages"][-1].content == "b:now"


def test_list_returns_its_connection_before_yielding(postgres_dsn: str) -> None:
    pool_config: PoolConfig = {"min_size": 1, "max_size": 1, "timeout": 3}
    with PostgresSaver.from_conn_string(postgres_dsn, pool_config=pool_config) as saver:
        saver.setup()
        graph = chat_graph(saver)
        graph.invoke(turn("x"), thread("one-conn"))
        # a consumer that queries while iterating needs the (only) connection back
        parents = [
            saver.get_tuple(t.parent_config) if t.parent_config else None
            for t in saver.list(thread("one-conn"))
        ]
        assert len(parents) == 4 and parents[-1] is None
        assert all(p is not None for p in parents[:-1])


def test_concurrent_setup_from_several_workers(postgres_dsn: str) -> None:
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            with PostgresSaver.from_conn_string(postgres_dsn) as saver:
                saver.setup()
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    workers = [threading.Thread(target=worker) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert errors == []
    assert versions(postgres_dsn, "checkpoint_migrations") == list(range(len(OFFICIAL_MIGRATIONS)))
    assert versions(postgres_dsn, "lgm_checkpoint_migrations") == list(range(len(LGM_MIGRATIONS)))
