"""Store fixtures: one driver per backend × API flavour, for the shared behavioural suite.

``backend`` is ``memory`` (LangGraph's ``InMemoryStore``, the reference for plain
``BaseStore`` semantics), ``exact`` (our store on the shared PG 15 without pgvector) or
``pgvector`` (our store on embedded PG 18 + pgvector); ``flavour`` is ``sync`` or
``async``. :class:`Driver` calls ``store.<name>`` or ``await store.a<name>`` so a test
body is written once.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from tests.fakes import HashingEmbeddings

DIMS = 64


def index_config() -> dict[str, Any]:
    """The deterministic fake embedder used by every store test."""
    return {"dims": DIMS, "embed": HashingEmbeddings(DIMS)}


class Driver:
    """Calls a store's sync or async method by one name."""

    def __init__(self, store: BaseStore, flavour: str, backend: str, dsn: str = "") -> None:
        self.store = store
        self.flavour = flavour
        self.backend = backend
        self.dsn = dsn

    async def __call__(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.flavour == "async":
            return await getattr(self.store, "a" + name)(*args, **kwargs)
        return getattr(self.store, name)(*args, **kwargs)


@contextlib.asynccontextmanager
async def open_store(dsn: str, flavour: str, **options: Any) -> AsyncIterator[BaseStore]:
    """Open, set up and yield one of our stores on ``dsn``."""
    options.setdefault("index", index_config())
    if flavour == "async":
        async with AsyncPostgresMemoryStore.from_conn_string(dsn, **options) as astore:
            await astore.asetup()
            yield astore
    else:
        with PostgresMemoryStore.from_conn_string(dsn, **options) as store:
            store.setup()
            yield store


@pytest.fixture(params=["exact", "pgvector"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["sync", "async"])
def flavour(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def dsn(backend: str, request: pytest.FixtureRequest) -> str:
    """Fresh database of the requested backend."""
    fixture = "postgres_dsn" if backend == "exact" else "embedded_dsn"
    return str(request.getfixturevalue(fixture))


@pytest.fixture
async def ours(dsn: str, flavour: str, backend: str) -> AsyncIterator[Driver]:
    """Our store (sync or async) on a fresh database of ``backend``."""
    async with open_store(dsn, flavour) as store:
        yield Driver(store, flavour, backend, dsn)


@pytest.fixture(params=["memory", "exact", "pgvector"])
async def any_store(request: pytest.FixtureRequest, flavour: str) -> AsyncIterator[Driver]:
    """InMemoryStore or ours, for the behavioural suite shared with LangGraph's reference."""
    backend = str(request.param)
    if backend == "memory":
        yield Driver(InMemoryStore(index=index_config()), flavour, backend)  # type: ignore[arg-type]
        return
    fixture = "postgres_dsn" if backend == "exact" else "embedded_dsn"
    dsn = str(request.getfixturevalue(fixture))
    async with open_store(dsn, flavour) as store:
        yield Driver(store, flavour, backend, dsn)


def rows_mentioning(dsn: str, marker: str) -> dict[str, int]:
    """Count, per table of the database, the rows whose text form contains ``marker``."""
    import psycopg
    from psycopg import sql

    found: dict[str, int] = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_type = 'BASE TABLE' "
            "AND table_schema NOT IN ('pg_catalog', 'information_schema')"
        ).fetchall()
        for schema, table in tables:
            count = conn.execute(
                sql.SQL("SELECT count(*) FROM {} t WHERE t::text ILIKE %s").format(
                    sql.Identifier(schema, table)
                ),
                (f"%{marker}%",),
            ).fetchone()
            assert count is not None
            found[f"{schema}.{table}"] = int(count[0])
    return found
