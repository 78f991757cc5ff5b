"""A Postgres that refuses work because of its state gets our errors, on the savers and the
store alike, saying what it means; reads keep working and nothing changes.

* read-only (a hot standby, or ``default_transaction_read_only``): every write is
  ``BackendUnavailableError`` saying "point the DSN at the primary";
* a role without the privilege to write: ``ConfigurationError`` saying to GRANT it.

Before: ``psycopg.errors.ReadOnlySqlTransaction`` / ``InsufficientPrivilege`` escaped raw.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.errors import BackendUnavailableError, ConfigurationError
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from tests.fakes import HashingEmbeddings
from tests.graph_helpers import chat_graph
from tests.reliability._erasure import pg_rows_with
from tests.reliability._workload import thread_config, turn_input

pytestmark = [pytest.mark.postgres]

INDEX: Any = {"dims": 16, "embed": HashingEmbeddings(16)}


def read_only(dsn: str) -> str:
    return make_conninfo(dsn, options="-c default_transaction_read_only=on")


@pytest.fixture
def written(postgres_dsn: str) -> str:
    """A database with a thread and a memory, written normally."""
    with PostgresSaver.from_conn_string(postgres_dsn) as saver:
        saver.setup()
        chat_graph(saver).invoke(turn_input("before"), thread_config("t"))
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=INDEX) as store:
        store.setup()
        store.put(("memories", "u"), "k", {"content": "User likes tea."})
    return postgres_dsn


@pytest.fixture
def reader(written: str) -> Iterator[str]:
    """DSN of a role that may read the tables but write none of them."""
    role = f"lgm_reader_{uuid.uuid4().hex[:8]}"
    name = conninfo_to_dict(written)["dbname"]
    with psycopg.connect(written, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f'GRANT CONNECT ON DATABASE "{name}" TO {role}')
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
        conn.execute(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}")
    try:
        yield make_conninfo(written, user=role)
    finally:
        with psycopg.connect(written, autocommit=True) as conn:
            conn.execute(f"REASSIGN OWNED BY {role} TO CURRENT_USER")
            conn.execute(f"DROP OWNED BY {role}")
            conn.execute(f"DROP ROLE {role}")


def test_a_read_only_server_refuses_writes_with_our_error(written: str) -> None:
    before = pg_rows_with(written, "before")
    dsn = read_only(written)
    with PostgresSaver.from_conn_string(dsn) as saver:
        assert saver.get_tuple(thread_config("t")) is not None
        with pytest.raises(BackendUnavailableError, match="primary"):
            chat_graph(saver).invoke(turn_input("refused"), thread_config("t"))
        with pytest.raises(BackendUnavailableError, match="primary"):
            saver.delete_thread("t")
    with PostgresMemoryStore.from_conn_string(dsn, index=INDEX) as store:
        assert store.get(("memories", "u"), "k") is not None
        with pytest.raises(BackendUnavailableError, match="primary"):
            store.put(("memories", "u"), "k2", {"content": "User likes coffee."})
        with pytest.raises(BackendUnavailableError, match="primary"):
            store.forget(("memories", "u"))
    assert pg_rows_with(written, "before") == before
    assert pg_rows_with(written, "refused") == {} and pg_rows_with(written, "coffee") == {}


async def test_async_classes_on_a_read_only_server(written: str) -> None:
    dsn = read_only(written)
    async with AsyncPostgresSaver.from_conn_string(dsn) as saver:
        assert await saver.aget_tuple(thread_config("t")) is not None
        with pytest.raises(BackendUnavailableError, match="primary"):
            await chat_graph(saver).ainvoke(turn_input("refused"), thread_config("t"))
    async with AsyncPostgresMemoryStore.from_conn_string(dsn, index=INDEX) as store:
        assert (await store.aget(("memories", "u"), "k")) is not None
        with pytest.raises(BackendUnavailableError, match="primary"):
            await store.aput(("memories", "u"), "k2", {"content": "User likes coffee."})


def test_a_role_without_write_privileges_is_a_configuration_error(reader: str) -> None:
    with PostgresSaver.from_conn_string(reader) as saver:
        assert saver.get_tuple(thread_config("t")) is not None
        with pytest.raises(ConfigurationError, match="GRANT"):
            chat_graph(saver).invoke(turn_input("refused"), thread_config("t"))
    with (
        PostgresMemoryStore.from_conn_string(reader, index=INDEX) as store,
        pytest.raises(ConfigurationError, match="GRANT"),
    ):
        store.put(("memories", "u"), "k2", {"content": "User likes coffee."})
