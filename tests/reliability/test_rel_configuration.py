"""Configuration that cannot surprise: one resolver for the DSN, the same outcome on every
class, and a wrong database / role / password named as a configuration error.

Against the real PG 15 server (trust auth) and a private embedded PG 18 whose
``pg_hba.conf`` demands a password (so a bad one really fails).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.embedded import ENV_DSN, resolve_postgres_dsn
from langgraph_recall.errors import (
    BackendUnavailableError,
    ConfigurationError,
    InvalidConnectionStringError,
    LangGraphRecallError,
)
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from tests._hypothesis import thorough
from tests.conftest import POSTGRES_URI, service_missing
from tests.reliability._figures import Figures
from tests.reliability.conftest import index_config


@contextlib.contextmanager
def _sync(factory: Callable[[], Any]) -> Iterator[None]:
    with factory():
        yield


@contextlib.asynccontextmanager
async def _async(factory: Callable[[], Any]) -> AsyncIterator[None]:
    async with factory():
        yield


OPENERS: dict[str, Callable[[str], Any]] = {
    "store": lambda dsn: _sync(
        lambda: PostgresMemoryStore.from_conn_string(dsn, index=index_config())
    ),
    "async_store": lambda dsn: _async(
        lambda: AsyncPostgresMemoryStore.from_conn_string(dsn, index=index_config())
    ),
    "saver": lambda dsn: _sync(lambda: PostgresSaver.from_conn_string(dsn)),
    "async_saver": lambda dsn: _async(lambda: AsyncPostgresSaver.from_conn_string(dsn)),
}


async def _open(kind: str, dsn: str) -> None:
    opened = OPENERS[kind](dsn)
    if kind.startswith("async"):
        async with opened:
            return
    with opened:
        return


def _with(dsn: str, **changes: str) -> str:
    params = conninfo_to_dict(dsn)
    params.update(changes)
    return make_conninfo(**params)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", sorted(OPENERS))
@pytest.mark.parametrize("empty", ["", "   ", "\t\n"])
async def test_an_empty_connection_string_is_the_same_error_on_every_class(
    kind: str, empty: str
) -> None:
    with pytest.raises(InvalidConnectionStringError, match="empty Postgres connection string"):
        await _open(kind, empty)


@pytest.mark.parametrize("kind", sorted(OPENERS))
@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"dbname": "lgm_no_such_database"}, "CREATE DATABASE"),
        ({"user": "lgm_no_such_role"}, "CREATE ROLE"),
    ],
    ids=["missing-database", "missing-role"],
)
async def test_a_wrong_database_or_role_is_a_configuration_error_saying_so(
    kind: str, change: dict[str, str], needle: str, figures: Figures
) -> None:
    with pytest.raises(ConfigurationError) as info:
        await _open(kind, _with(POSTGRES_URI, **change))
    message = str(info.value)
    assert needle in message and "not an outage" in message
    assert "unreachable" not in message and "reconnect" not in message
    assert not isinstance(info.value, BackendUnavailableError)
    figures.add("configuration_errors_named", 1)


async def test_a_password_on_a_trust_server_is_not_an_error(postgres_dsn: str) -> None:
    """trust auth ignores passwords: no false configuration error."""
    await _open("store", _with(postgres_dsn, password="anything"))


def test_the_one_variable_is_the_only_source_and_empty_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for other in ("DATABASE_URL", "POSTGRES_URI", "POSTGRES_DSN", "LANGGRAPH_RECALL_POSTGRES_DSN"):
        monkeypatch.setenv(other, "postgresql://someone-else@elsewhere:5432/theirs")
    monkeypatch.setenv(ENV_DSN, "postgresql://ours@db:5432/app")
    assert resolve_postgres_dsn(None) == "postgresql://ours@db:5432/app"
    assert resolve_postgres_dsn("postgresql://given/x") == "postgresql://given/x"
    monkeypatch.setenv(ENV_DSN, " ")
    with pytest.raises(InvalidConnectionStringError, match=ENV_DSN):
        resolve_postgres_dsn(None)
    with pytest.raises(InvalidConnectionStringError, match=ENV_DSN):
        PostgresMemoryStore.from_conn_string(None, index=index_config()).__enter__()


@settings(max_examples=thorough(40), deadline=None)
@given(st.text(max_size=12))
def test_every_connection_string_gets_one_clear_outcome(text: str) -> None:
    """Property: whatever string is passed, opening the store either works or raises one of
    our errors (never a raw driver error), and the empty/blank ones are always rejected."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    try:
        with PostgresMemoryStore.from_conn_string(
            text, index=index_config(), pool_config={"timeout": 2, "kwargs": {"connect_timeout": 2}}
        ):
            pass
    except LangGraphRecallError as exc:
        if not text.strip():
            assert isinstance(exc, InvalidConnectionStringError)
    else:
        assert text.strip()


async def test_a_busy_pool_is_reported_as_busy_not_unreachable(postgres_dsn: str) -> None:
    """The pool is shared with someone holding all its connections: the store's call fails
    after the pool timeout, saying the server answers and the pool is busy."""
    pool: ConnectionPool[Any] = ConnectionPool(
        postgres_dsn,
        min_size=2,
        max_size=2,
        timeout=0.5,
        kwargs={"autocommit": True, "row_factory": dict_row},
    )
    with pool:
        store = PostgresMemoryStore(pool, index=index_config())
        store.setup()
        held = [pool.getconn(), pool.getconn()]  # another user of the same pool
        try:
            with pytest.raises(BackendUnavailableError) as info:
                store.get(("m",), "k")
        finally:
            for conn in held:
                pool.putconn(conn)
        message = str(info.value)
        assert "busy" in message and "answers" in message and "unreachable" not in message
        assert store.get(("m",), "k") is None  # and it works again once they are back


@pytest.fixture(scope="module")
def password_server() -> Iterator[str]:
    """A private embedded PG 18 whose socket demands a password (scram-sha-256)."""
    from langgraph_recall.embedded import EmbeddedPostgres

    home = Path(tempfile.mkdtemp(prefix="lgm-auth-"))
    server = EmbeddedPostgres(home, cleanup="stop")
    try:
        server.start()
    except Exception as exc:
        shutil.rmtree(home, ignore_errors=True)
        service_missing("embedded Postgres", exc)
        raise
    try:
        with psycopg.connect(server.dsn(), autocommit=True) as admin:
            hba = admin.execute("SHOW hba_file").fetchone()
            assert hba is not None
            admin.execute("CREATE ROLE lgm_auth LOGIN PASSWORD 'right-password'")
            Path(hba[0]).write_text(
                "local all postgres trust\nlocal all all scram-sha-256\n"
                "host all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n"
            )
            admin.execute("SELECT pg_reload_conf()")
        yield _with(server.dsn(), user="lgm_auth", password="right-password")
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.parametrize("kind", sorted(OPENERS))
async def test_a_bad_password_is_a_configuration_error_saying_so(
    password_server: str, kind: str
) -> None:
    dsn = _with(password_server, dbname="postgres")
    with pytest.raises(ConfigurationError, match="password") as info:
        await _open(kind, _with(dsn, password=f"wrong-{uuid.uuid4().hex[:6]}"))
    assert "not an outage" in str(info.value) and "wrong-" not in str(info.value)
    await _open(kind, dsn)  # the right one works
