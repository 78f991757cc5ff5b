# unasync: async-only
"""Asyncio Postgres memory store (``psycopg`` async connection or pool).

``sync.py`` is generated from this module by ``scripts/unasync.py``: what the two stores
share is written here once; what only one of them has lives in ``_async_store`` /
``_sync_store``.
"""
# unasync: end
# unasync: sync-only
# """Blocking Postgres memory store (``psycopg`` connection or pool)."""
# unasync: end

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator, Callable, Generator
from typing import Any, TypeVar

import psycopg
from langgraph.store.base import IndexConfig, TTLConfig
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from typing_extensions import Unpack

from langgraph_recall._internal.terminal import printable
from langgraph_recall._pg.dsn import describe_target
from langgraph_recall._pg.errors import STORE, retry_pause, should_retry, translate_error
from langgraph_recall._pg.pool import DEFAULT_POOL_TIMEOUT as POOL_TIMEOUT
from langgraph_recall._pg.pool import (
    STORE_POOL,
    PoolConfig,
    check_connection_settings,
    connection_kwargs,
    note_failure,
    prepare_threshold_of,
)
from langgraph_recall._pg.run_async import abuild_pool, aexecute, aprobe
from langgraph_recall.retrieval import RetrievalConfig
from langgraph_recall.store._embedding import EmbedDocuments, EmbedQueries
from langgraph_recall.store.postgres._async_store import AsyncStoreBase
from langgraph_recall.store.postgres._state import StoreOptions
from langgraph_recall.store.postgres._statements_aio import STORE_PREPARE, execute_isolated
from langgraph_recall.store.postgres._types import Program

__all__ = ["AsyncPostgresMemoryStore"]

T = TypeVar("T")

logger = logging.getLogger("langgraph_recall.store")

AConn = psycopg.AsyncConnection[dict[str, Any]]


class AsyncPostgresMemoryStore(AsyncStoreBase):
    # unasync: async-only
    """Asyncio twin of :class:`~langgraph_recall.store.postgres.PostgresMemoryStore`.

    Use the ``a*`` methods from the event loop. The sync methods work from other
    threads (they are scheduled on the store's loop); called on the loop itself they
    raise ``SyncCallOnEventLoopError`` (also an ``asyncio.InvalidStateError``) instead
    of deadlocking.

    Example:
        ```python
        import asyncio

        from langchain_core.embeddings import DeterministicFakeEmbedding

        from langgraph_recall.store.postgres import AsyncPostgresMemoryStore

        async def main() -> None:
            index = {"dims": 384, "embed": DeterministicFakeEmbedding(size=384)}
            async with AsyncPostgresMemoryStore.from_conn_string(DB_URI, index=index) as store:
                await store.asetup()
                await store.aput(("memories", "u1"), "k1", {"content": "Lives in Lyon"})
                hits = await store.asearch(("memories", "u1"), query="home town", explain=True)
                print(hits[0].key, hits[0].explanation.similarity)

        asyncio.run(main())
        ```
    """

    # unasync: end
    # unasync: sync-only
    # """Long-term memory on Postgres: a LangGraph ``BaseStore`` with hybrid search.
    #
    # Pass a pool (recommended) or a connection opened with ``autocommit=True`` and
    # ``row_factory=dict_row``; or use :meth:`from_conn_string`. Pooled use takes no
    # instance-wide lock. The async methods (``aget``, ``asearch``, ...) run the blocking
    # code in a worker thread so they never block an event loop.
    #
    # Example:
    #     ```python
    #     from langchain_core.embeddings import DeterministicFakeEmbedding
    #
    #     from langgraph_recall.store.postgres import PostgresMemoryStore
    #
    #     index = {"dims": 384, "embed": DeterministicFakeEmbedding(size=384)}
    #     with PostgresMemoryStore.from_conn_string(DB_URI, index=index) as store:
    #         store.setup()
    #         store.put(("memories", "u1"), "k1", {"content": "Lives in Lyon", "kind": "semantic"})
    #         hits = store.search(("memories", "u1"), query="home town", explain=True)
    #         print(hits[0].key, hits[0].explanation.similarity)
    #     ```
    # """
    # unasync: end

    def __init__(
        self,
        conn: AConn | AsyncConnectionPool[AConn],
        *,
        read_conn: AConn | AsyncConnectionPool[AConn] | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        retrieval: RetrievalConfig | None = None,
        **options: Unpack[StoreOptions],
    ) -> None:
        """A store on ``conn``; call ``setup`` once before use.

        Args:
            conn: A pool (recommended) or one connection, opened with ``autocommit=True``
                and ``row_factory=dict_row``.
            read_conn: The same, on a hot standby: batches that only read (``get``,
                ``search``, ``list_namespaces``) run there; writes, ``setup`` and the
                bookkeeping reads leave behind (access counts, TTL refreshes) run on
                ``conn``. The standby answers with what it has replayed: a read right
                after a write may not see it.
            index: Embedder and dimensions (``None``: the package's default embedder).
            ttl: LangGraph's ``TTLConfig`` (minutes).
            retrieval: Ranking weights (:class:`~langgraph_recall.retrieval.RetrievalConfig`).
            **options: Tuning knobs, see :class:`~langgraph_recall.store.postgres.StoreOptions`.
        """
        check_connection_settings(conn)
        if read_conn is not None:
            check_connection_settings(read_conn)
        width = conn.max_size if isinstance(conn, AsyncConnectionPool) else 1
        stall_timeout = float(
            conn.timeout if isinstance(conn, AsyncConnectionPool) else POOL_TIMEOUT
        )
        super().__init__(index=index, ttl=ttl, retrieval=retrieval, **options)
        self._init_own_state(width, stall_timeout)
        self.conn = conn
        self.read_conn = read_conn
        self._conn_lock = asyncio.Lock()
        self._read_lock = asyncio.Lock()
        # Our own calls queue here for a pooled connection instead of timing out in the pool.
        self._slots = asyncio.Semaphore(width)

    @classmethod
    @contextlib.asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str | None = None,
        *,
        read_dsn: str | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        retrieval: RetrievalConfig | None = None,
        pool_config: PoolConfig | None = None,
        **options: Unpack[StoreOptions],
    ) -> AsyncIterator[AsyncPostgresMemoryStore]:
        # unasync: async-only
        """Open an async pool (autocommit, dict rows, health check) and a store on it.

        ``conn_string=None`` uses ``$LANGGRAPH_RECALL_POSTGRES_URI`` or the embedded
        Postgres. ``pool_config`` sets ``min_size``/``max_size``/``timeout``/``kwargs``.
        ``read_dsn``: a hot standby for the batches that only read (a second pool, same
        ``pool_config``; see ``read_conn``).
        """
        # unasync: end
        # unasync: sync-only
        # """Open a connection pool (autocommit, dict rows, health check) and a store on it.
        #
        # ``conn_string=None`` uses ``$LANGGRAPH_RECALL_POSTGRES_URI`` or the embedded
        # Postgres. ``pool_config`` sets ``min_size``/``max_size``/``timeout``/``kwargs``.
        # ``read_dsn``: a hot standby for the batches that only read (a second pool, same
        # ``pool_config``; see ``read_conn``).
        # """
        # unasync: end
        dsn, _ = await cls._aresolve_dsn(conn_string)
        timeout = connection_kwargs(pool_config)["connect_timeout"]
        await aprobe(dsn, timeout, (pool_config or {}).get("kwargs"))  # fail fast, naming it
        threshold = prepare_threshold_of(pool_config)
        if read_dsn is not None:
            await aprobe(read_dsn, timeout, (pool_config or {}).get("kwargs"))
        pool = await abuild_pool(dsn, pool_config, threshold, timeout, STORE_POOL)
        read_pool = None
        store: AsyncPostgresMemoryStore | None = None
        try:
            if read_dsn is not None:
                read_pool = await abuild_pool(read_dsn, pool_config, threshold, timeout, STORE_POOL)
            store = cls(
                pool, read_conn=read_pool, index=index, ttl=ttl, retrieval=retrieval, **options
            )
            yield store
        finally:
            if store is not None:
                await store.stop_ttl_sweeper()
                try:
                    await store.aflush_access()
                except Exception as exc:  # closing must not fail over bookkeeping
                    logger.warning("access counts not written at close: %s", printable(exc))
            if read_pool is not None:
                await read_pool.close()
            await pool.close()

    def _source(self, read: bool) -> AConn | AsyncConnectionPool[AConn]:
        """Where a statement runs: the standby for a reading batch's reads, if there is one."""
        return self.read_conn if read and self.read_conn is not None else self.conn

    @contextlib.asynccontextmanager
    async def _connection(self, read: bool = False) -> AsyncIterator[AConn]:
        source = self._source(read)
        if isinstance(source, AsyncConnectionPool):
            async with source.connection() as conn:
                yield conn
        else:
            async with self._read_lock if source is not self.conn else self._conn_lock:
                yield source

    def _target(self, read: bool = False) -> str:
        source = self._source(read)
        if isinstance(source, AsyncConnectionPool):
            conninfo = source.conninfo
            return describe_target(conninfo_to_dict(conninfo) if isinstance(conninfo, str) else {})
        return describe_target({"host": source.info.host, "port": source.info.port})

    async def _arun(
        self, program: Program[T] | Callable[[], Program[T]], *, read: bool = False
    ) -> T:
        """Run a program; given as a factory, a transaction the server broke as a deadlock
        victim or serialization failure runs again (bounded, see ``should_retry``) as long
        as none of its writes was committed. ``read``: a batch that only reads, whose
        statements run on ``read_conn`` (if any) but for the isolated bookkeeping."""
        attempt = 1
        while True:
            committed: list[bool] = []
            on_standby = [False]  # where the last statement ran: the error names that server
            try:
                async with self._slots:
                    return await self._arun_unchecked(
                        program if isinstance(program, Generator) else program(),
                        committed,
                        read,
                        on_standby,
                    )
            except (psycopg.Error, PoolTimeout) as exc:
                if not (committed or isinstance(program, Generator)) and should_retry(exc, attempt):
                    await self._apause(retry_pause(attempt))
                    attempt += 1
                    continue
                source = self._source(on_standby[0])
                note_failure(source, exc)
                translated = translate_error(self._target(on_standby[0]), exc, STORE, source)
                if translated is exc:
                    raise
                raise translated from exc

    async def _arun_unchecked(
        self, program: Program[T], committed: list[bool], read: bool, on_standby: list[bool]
    ) -> T:
        self._bind_loop()
        try:
            request = next(program)
        except StopIteration as stop:
            result: T = stop.value
            return result
        async with contextlib.AsyncExitStack() as stack:
            standby = read and self.read_conn is not None
            conn: AConn | None = None
            cursor: psycopg.AsyncCursor[dict[str, Any]] | None = None
            transaction: contextlib.AsyncExitStack | None = None
            # a reading batch on a standby writes its bookkeeping on the primary
            primary: tuple[AConn, psycopg.AsyncCursor[dict[str, Any]]] | None = None
            while True:
                reply: Any
                if isinstance(request, EmbedDocuments):
                    with self._local_work():  # the embedder, not the server
                        reply = await self.embeddings.aembed_documents(request.texts)
                elif isinstance(request, EmbedQueries):
                    with self._local_work():
                        reply = await self._aembed_queries(request.texts)
                elif request.isolated and standby:
                    on_standby[0] = False
                    if primary is None:
                        own = await stack.enter_async_context(self._connection())
                        primary = (own, await stack.enter_async_context(own.cursor()))
                    reply = await execute_isolated(*primary, request)
                else:
                    on_standby[0] = standby
                    if conn is None or cursor is None:
                        conn = await stack.enter_async_context(self._connection(standby))
                        cursor = await stack.enter_async_context(conn.cursor())
                    if request.isolated:
                        if transaction is not None:  # commit what the program did so far
                            await transaction.aclose()
                            transaction = None
                            committed.append(True)
                        reply = await execute_isolated(conn, cursor, request)
                    elif request.alone and transaction is None and conn.autocommit:
                        # one statement outside a transaction: its own implicit one, in
                        # one round trip; prepared unless the connection prepares nothing
                        # (a transaction pooler)
                        prepare = bool(request.prepare) and conn.prepare_threshold is not None
                        reply = await aexecute(
                            cursor, dataclasses.replace(request, prepare=prepare)
                        )
                    else:
                        if transaction is None:
                            transaction = await stack.enter_async_context(
                                contextlib.AsyncExitStack()
                            )
                            await transaction.enter_async_context(conn.transaction())
                        reply = await aexecute(cursor, request, prepare=STORE_PREPARE)
                self._progress()
                try:
                    request = program.send(reply)
                except StopIteration as stop:
                    done: T = stop.value
                    return done
