"""Our fixtures for LangGraph's store suites: each replaces one of theirs, same name, same params.

What is replaced (and only this): the ``store`` / ``vector_store`` fixtures, the
fixture-like context managers that open a store (``_create_vector_store``,
``_create_pool_store``), the helpers that read or backdate LangGraph's private ``store``
table (``_expire_now`` & co., rewritten for our schema), and in ``langgraph-checkpoint``'s
suite the ``InMemoryStore`` constructor, which there is the store under test. Every
store opens on a fresh database of the active backend: the PG 15 server (exact vector
search) or the embedded PG 18 (pgvector).

LangGraph's ``default`` / ``pipe`` / ``pool`` connection modes map onto ours: ``default``
is one connection (as LangGraph's), ``pipe`` our ``from_conn_string`` pool (we have no
pipeline mode), ``pool`` ``from_conn_string`` with the suite's ``pool_config``.
"""

from __future__ import annotations

import contextlib
import types
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from langgraph_recall.store._namespace import encode_namespace
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from tests._databases import ScratchDatabases
from tests.conftest import POSTGRES_URI, _dsn_with_db

__all__ = ["Backend", "activate", "additions", "conftest_standin", "replacements"]

STORE_MODES = ["default", "pipe", "pool"]


class Backend:
    """Fresh databases on one server for one test, from the session's supply
    (:class:`tests._databases.ScratchDatabases`: made ahead, dropped behind, in the
    background), given back when the test ends."""

    def __init__(self, name: str, supply: ScratchDatabases, dsn_for: Callable[[str], str]) -> None:
        self.name = name
        self.embeddings: Callable[[], Any] | None = None  # the suite's CharacterEmbeddings
        self.supply = supply
        self.dsn_for = dsn_for
        self.databases: list[str] = []
        self.closers: list[Callable[[], None]] = []

    def new_database(self) -> str:
        name = self.supply.take()
        self.databases.append(name)
        return self.dsn_for(name)

    def close(self) -> None:
        for closer in reversed(self.closers):
            with contextlib.suppress(Exception):
                closer()
        for name in self.databases:
            self.supply.give_back(name)
        self.databases.clear()


_ACTIVE: list[Backend] = []
_DSN: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def active() -> Backend:
    assert _ACTIVE, "no compat backend active (the suite's autouse fixture sets it)"
    return _ACTIVE[-1]


@contextlib.contextmanager
def activate(backend: Backend) -> Iterator[Backend]:
    _ACTIVE.append(backend)
    try:
        yield backend
    finally:
        _ACTIVE.pop()
        backend.close()


def _no_index(backend: Backend) -> dict[str, Any]:
    """For a store LangGraph opens without ``index``: ours always embeds, so it gets the
    suite's own fake embedder (64 dims) instead of the default model (far slower on the
    suites' 60,000-operation tests, and no more faithful to "no index")."""
    assert backend.embeddings is not None
    embeddings = backend.embeddings()
    return {"dims": embeddings.dims, "embed": embeddings}


def _ttl(module: types.ModuleType) -> dict[str, Any]:
    minutes = module.TTL_MINUTES
    return {"default_ttl": minutes, "refresh_on_read": True, "sweep_interval_minutes": minutes / 2}


def _index(
    vector_type: str, distance_type: str, embeddings: Any, fields: list[str] | None
) -> dict[str, Any]:
    return {
        "dims": embeddings.dims,
        "embed": embeddings,
        "ann_index_config": {"vector_type": vector_type},
        "distance_type": distance_type,
        "fields": fields,
    }


# ----------------------------------------------------------------- sync (test_store.py)
@contextlib.contextmanager
def _sync_store(mode: str, dsn: str, **options: Any) -> Iterator[PostgresMemoryStore]:
    if mode == "default":
        with psycopg.connect(dsn, autocommit=True, row_factory=dict_row) as conn:
            store = PostgresMemoryStore(conn, **options)
            _DSN[store] = dsn
            yield store
        return
    pool_config = {"min_size": 1, "max_size": 10} if mode == "pool" else None
    with PostgresMemoryStore.from_conn_string(dsn, pool_config=pool_config, **options) as store:
        _DSN[store] = dsn
        yield store


@pytest.fixture(params=STORE_MODES)
def store(request: pytest.FixtureRequest) -> Iterator[PostgresMemoryStore]:
    """LangGraph's ``store`` fixture on our store (default embedder, the suite's TTL)."""
    dsn = active().new_database()
    ttl, index = _ttl(request.module), _no_index(active())
    with PostgresMemoryStore.from_conn_string(dsn, ttl=ttl, index=index) as first:  # type: ignore[arg-type]
        first.setup()
    with _sync_store(request.param, dsn, ttl=ttl, index=index) as opened:
        opened.start_ttl_sweeper()
        yield opened
        opened.stop_ttl_sweeper()


@contextlib.contextmanager
def _create_vector_store(
    vector_type: str,
    distance_type: str,
    fake_embeddings: Any,
    text_fields: list[str] | None = None,
    enable_ttl: bool = True,
) -> Iterator[PostgresMemoryStore]:
    dsn = active().new_database()
    with PostgresMemoryStore.from_conn_string(
        dsn,
        index=_index(vector_type, distance_type, fake_embeddings, text_fields),  # type: ignore[arg-type]
        ttl={"default_ttl": 2, "refresh_on_read": True} if enable_ttl else None,
    ) as opened:
        _DSN[opened] = dsn
        opened.setup()
        with psycopg.connect(dsn, autocommit=True) as conn:  # as theirs: setup is idempotent
            conn.execute("DROP TABLE IF EXISTS lgm_store_migrations")
        opened.setup()
        yield opened


def _sync_vector_store_fixture(module: types.ModuleType) -> Any:
    @pytest.fixture(params=module._vector_params, ids=lambda p: f"{p[0]}_{p[1]}")
    def vector_store(
        request: pytest.FixtureRequest, fake_embeddings: Any
    ) -> Iterator[PostgresMemoryStore]:
        vector_type, distance_type, enable_ttl = request.param
        with _create_vector_store(
            vector_type, distance_type, fake_embeddings, enable_ttl=enable_ttl
        ) as opened:
            yield opened

    return vector_store


# Helpers that read LangGraph's private table, on ours (expiry = the later of the row's
# expires_at and a read's refresh, which we keep on the access row).
_EFFECTIVE_EXPIRY = """
SELECT greatest(i.expires_at, a.refreshed_until) AS expires_at
FROM lgm_memory_items i LEFT JOIN lgm_memory_access a ON a.id = i.id
WHERE i.ns = %s AND i.key = %s"""
_BACKDATE = """
WITH item AS (
    UPDATE lgm_memory_items SET expires_at = now() - interval '1 minute'
    WHERE ns = %s AND key = %s RETURNING id)
UPDATE lgm_memory_access a SET refreshed_until = NULL FROM item WHERE a.id = item.id"""
_COUNT = "SELECT count(*) AS n FROM lgm_memory_items WHERE ns = %s AND key = %s"


def _query(store: Any, statement: str, ns: tuple[str, ...], key: str) -> list[dict[str, Any]]:
    with psycopg.connect(_DSN[store], autocommit=True, row_factory=dict_row) as conn:
        cursor = conn.execute(statement, (encode_namespace(tuple(ns)), key))
        return cursor.fetchall() if cursor.description else []


def _expire_now(store: Any, ns: tuple[str, ...], key: str) -> None:
    _query(store, _BACKDATE, ns, key)


def _row_exists(store: Any, ns: tuple[str, ...], key: str) -> bool:
    return bool(_query(store, _COUNT, ns, key)[0]["n"] == 1)


def _stored_expires_at(store: Any, ns: tuple[str, ...], key: str) -> Any:
    return _query(store, _EFFECTIVE_EXPIRY, ns, key)[0]["expires_at"]


async def _aexpire_now(store: Any, ns: tuple[str, ...], key: str) -> None:
    _expire_now(store, ns, key)


async def _arow_exists(store: Any, ns: tuple[str, ...], key: str) -> bool:
    return _row_exists(store, ns, key)


async def _astored_expires_at(store: Any, ns: tuple[str, ...], key: str) -> Any:
    return _stored_expires_at(store, ns, key)


# ----------------------------------------------------------- async (test_async_store.py)
@contextlib.asynccontextmanager
async def _async_store(mode: str, dsn: str, **options: Any) -> AsyncIterator[Any]:
    if mode == "default":
        conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True, row_factory=dict_row)
        async with conn:
            store = AsyncPostgresMemoryStore(conn, **options)
            _DSN[store] = dsn
            yield store
        return
    pool_config = {"min_size": 1, "max_size": 10} if mode == "pool" else None
    async with AsyncPostgresMemoryStore.from_conn_string(
        dsn, pool_config=pool_config, **options
    ) as store:
        _DSN[store] = dsn
        yield store


async def _async_store_fixture(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """LangGraph's async ``store`` fixture on our async store."""
    dsn = active().new_database()
    ttl, index = _ttl(request.module), _no_index(active())
    async with AsyncPostgresMemoryStore.from_conn_string(dsn, ttl=ttl, index=index) as first:  # type: ignore[arg-type]
        await first.asetup()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS lgm_store_migrations")
        await first.asetup()
    async with _async_store(request.param, dsn, ttl=ttl, index=index) as opened:
        await opened.start_ttl_sweeper()
        yield opened
        await opened.stop_ttl_sweeper()


@contextlib.asynccontextmanager
async def _acreate_vector_store(
    vector_type: str,
    distance_type: str,
    fake_embeddings: Any,
    text_fields: list[str] | None = None,
) -> AsyncIterator[Any]:
    dsn = active().new_database()
    async with AsyncPostgresMemoryStore.from_conn_string(
        dsn,
        index=_index(vector_type, distance_type, fake_embeddings, text_fields),  # type: ignore[arg-type]
    ) as opened:
        _DSN[opened] = dsn
        await opened.asetup()
        yield opened


@contextlib.asynccontextmanager
async def _create_pool_store() -> AsyncIterator[Any]:
    dsn = active().new_database()
    async with AsyncPostgresMemoryStore.from_conn_string(
        dsn,
        pool_config={"min_size": 1, "max_size": 1},
        index=_no_index(active()),  # type: ignore[arg-type]
    ) as opened:
        _DSN[opened] = dsn
        await opened.asetup()
        yield opened


def _async_vector_store_fixture(module: types.ModuleType) -> Any:
    combos = [
        (vector_type, distance_type)
        for vector_type in module.VECTOR_TYPES
        for distance_type in (
            ["hamming"] if vector_type == "bit" else ["l2", "inner_product", "cosine"]
        )
    ]

    @pytest.fixture(params=combos, ids=lambda p: f"{p[0]}_{p[1]}")
    async def vector_store(request: pytest.FixtureRequest, fake_embeddings: Any) -> Any:
        vector_type, distance_type = request.param
        async with _acreate_vector_store(vector_type, distance_type, fake_embeddings) as opened:
            yield opened

    return vector_store


# --------------------------------------------------- langgraph-checkpoint's test_store.py
class StoreUnderTest(PostgresMemoryStore):
    """Stand-in for ``InMemoryStore(**options)``: our store on a fresh database.

    A class (not a factory function) because the suite spies on ``InMemoryStore.batch``.
    """

    def __init__(self, **options: Any) -> None:
        backend = active()
        dsn = backend.new_database()
        pool: ConnectionPool[Any] = ConnectionPool(
            dsn,
            min_size=1,
            max_size=4,
            kwargs={"autocommit": True, "row_factory": dict_row},
            open=True,
        )
        backend.closers.append(pool.close)
        options.setdefault("index", _no_index(backend))
        super().__init__(pool, **options)
        backend.closers.append(self.stop_ttl_sweeper)
        _DSN[self] = dsn
        self.setup()


# ------------------------------------------------------------------------ the mapping
def conftest_standin(helper: types.ModuleType) -> types.ModuleType:
    """What the suites import from their ``tests/conftest.py``."""
    module = types.ModuleType("tests.conftest")
    module.DEFAULT_URI = POSTGRES_URI  # type: ignore[attr-defined]  # read only by replaced fixtures
    module.VECTOR_TYPES = ["vector", "halfvec"]  # type: ignore[attr-defined]
    module.CharacterEmbeddings = helper.CharacterEmbeddings  # type: ignore[attr-defined]
    return module


def replacements(suite: str, filename: str) -> Callable[[types.ModuleType], dict[str, object]]:
    """The names rebound in one suite file (see the module docstring)."""

    def for_module(module: types.ModuleType) -> dict[str, object]:
        if (suite, filename) == ("checkpoint-postgres", "test_store.py"):
            return {
                "store": store,
                "vector_store": _sync_vector_store_fixture(module),
                "_create_vector_store": _create_vector_store,
                "_expire_now": _expire_now,
                "_row_exists": _row_exists,
                "_stored_expires_at": _stored_expires_at,
            }
        if (suite, filename) == ("checkpoint-postgres", "test_async_store.py"):
            return {
                "store": pytest.fixture(params=STORE_MODES, name="store")(_async_store_fixture),
                "vector_store": _async_vector_store_fixture(module),
                "_create_vector_store": _acreate_vector_store,
                "_create_pool_store": _create_pool_store,
                "_aexpire_now": _aexpire_now,
                "_arow_exists": _arow_exists,
                "_astored_expires_at": _astored_expires_at,
            }
        if (suite, filename) == ("checkpoint", "test_store.py"):
            return {"InMemoryStore": StoreUnderTest}
        raise RuntimeError(f"no adapter for {suite}/{filename}; add one to tests/compat")

    return for_module


def additions(
    suite: str, make_backend: Callable[[pytest.FixtureRequest], Backend]
) -> Callable[[types.ModuleType], dict[str, object]]:
    """What every suite file gains: an autouse fixture opening the backend its stores use,
    and (checkpoint-postgres) the ``fake_embeddings`` fixture of the suite's conftest."""

    @pytest.fixture(autouse=True)
    def _lgm_compat_backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
        backend = make_backend(request)
        backend.embeddings = lambda: request.module.CharacterEmbeddings(dims=64)
        with activate(backend) as active_backend:
            yield active_backend

    def for_module(module: types.ModuleType) -> dict[str, object]:
        added: dict[str, object] = {"_lgm_compat_backend": _lgm_compat_backend}
        if suite == "checkpoint-postgres":  # as in their conftest.py

            @pytest.fixture
            def fake_embeddings() -> Any:
                return module.CharacterEmbeddings(dims=500)

            added["fake_embeddings"] = fake_embeddings
        return added

    return for_module


def exact_backend(request: pytest.FixtureRequest) -> Backend:
    """PG 15 (no pgvector): the store's exact path."""
    supply = request.getfixturevalue("postgres_databases")
    return Backend("exact", supply, lambda name: _dsn_with_db(POSTGRES_URI, name))


def pgvector_backend(request: pytest.FixtureRequest) -> Backend:
    """The session's embedded PG 18 with pgvector."""
    server = request.getfixturevalue("embedded_server")
    return Backend("pgvector", request.getfixturevalue("embedded_databases"), server.dsn)
