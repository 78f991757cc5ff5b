"""The test databases (tests/_databases.py): a database given back and taken again is as new.

Every Postgres test runs on a database of :class:`ScratchDatabases`; a database an earlier
test filled is emptied and reused. These tests hold the emptied database against a new one,
on the shared PG 15 and on the embedded PG 18, so a test can never see another's data.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from langgraph_recall.checkpoint.postgres import PostgresSaver
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests._databases import ScratchDatabases, leftovers
from tests.conftest import POSTGRES_URI
from tests.fakes import HashingEmbeddings

pytestmark = pytest.mark.postgres


@pytest.fixture(params=["pg15", "embedded"])
def admin_dsn(request: pytest.FixtureRequest) -> str:
    if request.param == "pg15":
        return POSTGRES_URI
    return str(request.getfixturevalue("embedded_server").dsn())


@pytest.fixture
def supply(admin_dsn: str) -> Iterator[ScratchDatabases]:
    databases = ScratchDatabases(admin_dsn, ahead=0)  # every new one made by take()
    yield databases
    databases.close()


def _dsn(admin_dsn: str, name: str) -> str:
    return make_conninfo(admin_dsn, dbname=name)


def _fill(dsn: str, *, pgvector: bool) -> None:
    """What tests leave behind: the store and saver schemas with rows, a schema of their
    own, a setting, a role's grant, a large object, open sessions."""
    index = {"dims": 8, "embed": HashingEmbeddings(8)}
    with PostgresMemoryStore.from_conn_string(dsn, index=index) as store:  # type: ignore[arg-type]
        store.setup()
        store.put(("memories", "u"), "k", {"content": "The user lives in Lyon."})
    with PostgresSaver.from_conn_string(dsn) as saver:
        saver.setup()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA scratch_extra")
        conn.execute("CREATE TABLE scratch_extra.t (x int)")
        conn.execute("CREATE TYPE public.mood AS ENUM ('ok')")
        conn.execute("SELECT lo_create(0)")
        conn.execute("ALTER DATABASE " + conn.info.dbname + " SET work_mem = '8MB'")
        if pgvector:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        assert leftovers(conn)


def test_a_new_database_holds_nothing_a_test_could_leave(
    supply: ScratchDatabases, admin_dsn: str
) -> None:
    name = supply.take()
    with psycopg.connect(_dsn(admin_dsn, name), autocommit=True) as conn:
        assert leftovers(conn) == []
    supply.give_back(name)


def test_a_filled_database_comes_back_as_new_and_works_again(
    supply: ScratchDatabases, admin_dsn: str, request: pytest.FixtureRequest
) -> None:
    name = supply.take()
    dsn = _dsn(admin_dsn, name)
    _fill(dsn, pgvector=request.node.callspec.params["admin_dsn"] == "embedded")
    lingering = psycopg.connect(dsn, autocommit=True)  # a session its test never closed
    supply.give_back(name)
    supply.settle()
    assert lingering.closed or lingering.broken or _ended(lingering)
    again = supply.take()
    assert again == name  # reused, not made anew
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert leftovers(conn) == []
        assert conn.execute("SHOW synchronous_commit").fetchone() == ("off",)
        assert conn.execute("SHOW work_mem").fetchone() != ("8MB",)
    with PostgresMemoryStore.from_conn_string(
        dsn,
        index={"dims": 8, "embed": HashingEmbeddings(8)},  # type: ignore[typeddict-item]
    ) as store:
        store.setup()
        assert store.search(("memories", "u")) == []
    supply.give_back(again)


def _ended(conn: psycopg.Connection[object]) -> bool:
    try:
        conn.execute("SELECT 1")
    except psycopg.OperationalError:
        return True
    return False


def test_a_database_that_cannot_be_emptied_is_dropped_not_reused(
    supply: ScratchDatabases, admin_dsn: str
) -> None:
    name = supply.take()
    with psycopg.connect(_dsn(admin_dsn, name), autocommit=True) as conn:
        # default privileges outlive every schema: dropping schemas cannot undo them
        conn.execute("ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO PUBLIC")
    supply.give_back(name)
    supply.settle()
    assert supply.take() != name
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        assert (
            admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            is None
        )
