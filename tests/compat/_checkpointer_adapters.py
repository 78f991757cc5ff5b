"""Our fixtures for LangGraph's checkpointer suites (``langgraph-checkpoint-postgres``'s
``test_sync.py``, ``test_async.py`` and delta tests): each replaces one of theirs.

What is replaced (and only this): the saver classes under test (``PostgresSaver``,
``AsyncPostgresSaver`` and their deprecated shallow twins) become ours; the fixture-like
context managers that open a saver (``_base_saver``, ``_pool_saver``, ``_pipe_saver``,
``_shallow_saver``) open ours on a fresh database; ``DEFAULT_URI`` (their docker
database) is a fresh database of the PG 15 server for each test. Nothing else of the
test code changes.

LangGraph's connection modes map onto ours: ``base`` is one connection (as theirs),
``pool`` their ``ConnectionPool``, ``pipe`` our ``from_conn_string`` pool (we have no
pipeline mode), ``shallow`` -- LangGraph's deprecated latest-only saver -- our saver with
``keep_last=1`` (the replacement our docs name for it).
"""

from __future__ import annotations

import atexit
import contextlib
import types
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from tests._databases import create_database
from tests.conftest import POSTGRES_URI, _dsn_with_db

__all__ = ["additions", "conftest_standin", "replacements"]


_TEMPLATE: list[str] = []
"""The session's template database: our checkpoint schema set up once (``setup()``), so a
fresh database is a file copy (the savers' own ``setup()`` then finds it current)."""


def _template() -> str:
    if not _TEMPLATE:
        name = f"lgm_compat_tpl_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(POSTGRES_URI, autocommit=True) as admin:
            create_database(admin, name)
        with PostgresSaver.from_conn_string(_dsn_with_db(POSTGRES_URI, name)) as saver:
            saver.setup()
        _TEMPLATE.append(name)
        atexit.register(_drop, [name])
    return _TEMPLATE[0]


def _drop(names: list[str]) -> None:
    with psycopg.connect(POSTGRES_URI, autocommit=True) as admin:
        for name in names:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Databases:
    """Fresh databases on the PG 15 server (copies of the schema template), dropped when
    the test ends."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def new(self) -> str:
        name = f"lgm_compat_{uuid.uuid4().hex[:12]}"
        template = _template()
        with psycopg.connect(POSTGRES_URI, autocommit=True) as admin:
            create_database(admin, name, template=template)
        self.names.append(name)
        return _dsn_with_db(POSTGRES_URI, name)

    def drop(self) -> None:
        _drop(self.names)


_ACTIVE: list[Databases] = []


def _fresh_dsn() -> str:
    assert _ACTIVE, "no compat databases active (the suite's autouse fixture opens them)"
    return _ACTIVE[-1].new()


# ------------------------------------------------------------------------ sync savers
@contextlib.contextmanager
def _base_saver() -> Iterator[PostgresSaver]:
    with psycopg.connect(_fresh_dsn(), autocommit=True, row_factory=dict_row) as conn:
        saver = PostgresSaver(conn)
        saver.setup()
        yield saver


@contextlib.contextmanager
def _pool_saver() -> Iterator[PostgresSaver]:
    kwargs = {"autocommit": True, "row_factory": dict_row}
    with ConnectionPool(_fresh_dsn(), max_size=10, kwargs=kwargs) as pool:  # type: ignore[arg-type]
        saver = PostgresSaver(pool)  # type: ignore[arg-type]
        saver.setup()
        yield saver


@contextlib.contextmanager
def _pipe_saver() -> Iterator[PostgresSaver]:
    with PostgresSaver.from_conn_string(_fresh_dsn()) as saver:
        saver.setup()
        yield saver


@contextlib.contextmanager
def _shallow_saver() -> Iterator[PostgresSaver]:
    with PostgresSaver.from_conn_string(_fresh_dsn(), keep_last=1) as saver:
        saver.setup()
        yield saver


class ShallowPostgresSaver(PostgresSaver):
    """``ShallowPostgresSaver(conn)``: ours keeping the newest checkpoint per namespace."""

    def __init__(self, conn: Any, **options: Any) -> None:
        super().__init__(conn, keep_last=1, **options)


# ----------------------------------------------------------------------- async savers
@contextlib.asynccontextmanager
async def _abase_saver() -> AsyncIterator[AsyncPostgresSaver]:
    conn = await psycopg.AsyncConnection.connect(
        _fresh_dsn(), autocommit=True, row_factory=dict_row
    )
    async with conn:
        saver = AsyncPostgresSaver(conn)
        await saver.setup()
        yield saver


@contextlib.asynccontextmanager
async def _apool_saver() -> AsyncIterator[AsyncPostgresSaver]:
    kwargs = {"autocommit": True, "row_factory": dict_row}
    async with AsyncConnectionPool(_fresh_dsn(), max_size=10, kwargs=kwargs) as pool:  # type: ignore[arg-type]
        saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        await saver.setup()
        yield saver


@contextlib.asynccontextmanager
async def _apipe_saver() -> AsyncIterator[AsyncPostgresSaver]:
    async with AsyncPostgresSaver.from_conn_string(_fresh_dsn()) as saver:
        await saver.setup()
        yield saver


@contextlib.asynccontextmanager
async def _ashallow_saver() -> AsyncIterator[AsyncPostgresSaver]:
    async with AsyncPostgresSaver.from_conn_string(_fresh_dsn(), keep_last=1) as saver:
        await saver.setup()
        yield saver


class AsyncShallowPostgresSaver(AsyncPostgresSaver):
    """``AsyncShallowPostgresSaver(conn)``: ours keeping the newest checkpoint per namespace."""

    def __init__(self, conn: Any, **options: Any) -> None:
        super().__init__(conn, keep_last=1, **options)


# ------------------------------------------------------------------------ the mapping
def conftest_standin(helper: types.ModuleType) -> types.ModuleType:
    """What the suites import from their ``tests/conftest.py`` (their docker database's
    URIs: read only by the replaced helpers, and per test rebound to a fresh database)."""
    module = types.ModuleType("tests.conftest")
    module.DEFAULT_URI = POSTGRES_URI  # type: ignore[attr-defined]
    module.DEFAULT_POSTGRES_URI = POSTGRES_URI  # type: ignore[attr-defined]
    module.VECTOR_TYPES = ["vector", "halfvec"]  # type: ignore[attr-defined]
    module.CharacterEmbeddings = helper.CharacterEmbeddings  # type: ignore[attr-defined]
    return module


_SYNC = {
    "PostgresSaver": PostgresSaver,
    "ShallowPostgresSaver": ShallowPostgresSaver,
    "_base_saver": _base_saver,
    "_pool_saver": _pool_saver,
    "_pipe_saver": _pipe_saver,
    "_shallow_saver": _shallow_saver,
}
_ASYNC = {
    "AsyncPostgresSaver": AsyncPostgresSaver,
    "AsyncShallowPostgresSaver": AsyncShallowPostgresSaver,
    "_base_saver": _abase_saver,
    "_pool_saver": _apool_saver,
    "_pipe_saver": _apipe_saver,
    "_shallow_saver": _ashallow_saver,
}
_FILES: dict[str, dict[str, object]] = {
    "test_sync.py": _SYNC,
    "test_async.py": _ASYNC,
    "test_conformance_delta.py": {"AsyncPostgresSaver": AsyncPostgresSaver},
    "test_delta_pagination.py": {
        "PostgresSaver": PostgresSaver,
        "AsyncPostgresSaver": AsyncPostgresSaver,
    },
    "test_delta_plain_value_seed.py": {"AsyncPostgresSaver": AsyncPostgresSaver},
}


def replacements(suite: str, filename: str) -> Callable[[types.ModuleType], dict[str, object]]:
    """The names rebound in one suite file (see the module docstring)."""

    def for_module(module: types.ModuleType) -> dict[str, object]:
        del module
        if suite == "checkpoint-postgres" and filename in _FILES:
            return dict(_FILES[filename])
        raise RuntimeError(f"no adapter for {suite}/{filename}; add one to tests/compat")

    return for_module


def additions(suite: str, backend: Any) -> Callable[[types.ModuleType], dict[str, object]]:
    """What every suite file gains: an autouse fixture giving the test fresh databases
    (``DEFAULT_URI`` is one of them) and dropping them afterwards."""
    del suite, backend

    @pytest.fixture(autouse=True)
    def _lgm_compat_databases(
        request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
    ) -> Iterator[None]:
        databases = Databases()
        _ACTIVE.append(databases)
        try:
            if hasattr(request.module, "DEFAULT_URI"):
                monkeypatch.setattr(request.module, "DEFAULT_URI", databases.new())
            yield
        finally:
            _ACTIVE.pop()
            databases.drop()

    def for_module(module: types.ModuleType) -> dict[str, object]:
        del module
        return {"_lgm_compat_databases": _lgm_compat_databases}

    return for_module
