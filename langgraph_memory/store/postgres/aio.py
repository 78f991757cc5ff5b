"""Asyncio Postgres memory store (``psycopg`` async connection or pool)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Callable, Generator, Iterable
from typing import Any, TypeVar

import psycopg
from langgraph.store.base import IndexConfig, Op, Result, TTLConfig
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from typing_extensions import Unpack

from langgraph_memory.errors import BackendUnavailableError, SyncCallOnEventLoopError
from langgraph_memory.retrieval import RetrievalConfig
from langgraph_memory.store._coalesce import Coalescer
from langgraph_memory.store._embedding import EmbedDocuments, EmbedQueries
from langgraph_memory.store.postgres._connect import (
    POOL_TIMEOUT,
    check_connection_settings,
    connect_error,
    connection_kwargs,
    describe_target,
    resolve_dsn,
    retry_pause,
    should_retry,
    translate_error,
)
from langgraph_memory.store.postgres._core import MemoryStoreCore, op_list
from langgraph_memory.store.postgres._state import StoreOptions
from langgraph_memory.store.postgres._statements_aio import execute, execute_isolated
from langgraph_memory.store.postgres._types import PoolConfig, Program

__all__ = ["AsyncPostgresMemoryStore"]

T = TypeVar("T")

logger = logging.getLogger("langgraph_memory.store")

AConn = psycopg.AsyncConnection[dict[str, Any]]


class AsyncPostgresMemoryStore(MemoryStoreCore):
    """Asyncio twin of :class:`~langgraph_memory.store.postgres.PostgresMemoryStore`.

    Use the ``a*`` methods from the event loop. The sync methods work from other
    threads (they are scheduled on the store's loop); called on the loop itself they
    raise ``SyncCallOnEventLoopError`` (also an ``asyncio.InvalidStateError``) instead
    of deadlocking.

    Example:
        ```python
        async with AsyncPostgresMemoryStore.from_conn_string(None) as store:
            await store.asetup()
            await store.aput(("memories", "u1"), "k1", {"content": "Lives in Lyon"})
            hits = await store.asearch(("memories", "u1"), query="home town")
        ```
    """

    def __init__(
        self,
        conn: AConn | AsyncConnectionPool[AConn],
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        retrieval: RetrievalConfig | None = None,
        **options: Unpack[StoreOptions],
    ) -> None:
        check_connection_settings(conn)
        super().__init__(index=index, ttl=ttl, retrieval=retrieval, **options)
        self.conn = conn
        self._conn_lock = asyncio.Lock()
        self._sweeper: asyncio.Task[None] | None = None
        self._sweeper_stop: asyncio.Event | None = None
        # Our own calls queue for a connection here instead of timing out in the pool,
        # and concurrent batches are merged (``_coalesce``): never one checkout per call.
        width = conn.max_size if isinstance(conn, AsyncConnectionPool) else 1
        self._slots = asyncio.Semaphore(width)
        self._stall_timeout = float(
            conn.timeout if isinstance(conn, AsyncConnectionPool) else POOL_TIMEOUT
        )
        self._coalescer = Coalescer(
            self._abatch_now,
            max_running=width,
            stall_timeout=self._stall_timeout,
            on_stall=self._stall_error,
        )
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None

    @classmethod
    @contextlib.asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str | None = None,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        retrieval: RetrievalConfig | None = None,
        pool_config: PoolConfig | None = None,
        **options: Unpack[StoreOptions],
    ) -> AsyncIterator[AsyncPostgresMemoryStore]:
        """Open an async pool (autocommit, dict rows, health check) and a store on it.

        Example:
            ```python
            async with AsyncPostgresMemoryStore.from_conn_string(dsn) as store:
                await store.asetup()
            ```
        """
        dsn, target = await asyncio.to_thread(resolve_dsn, conn_string)
        config = pool_config or {}
        kwargs = connection_kwargs(pool_config)
        try:  # fail fast, naming the server, instead of letting the pool retry
            probe = await psycopg.AsyncConnection.connect(
                dsn, connect_timeout=kwargs["connect_timeout"]
            )
            await probe.close()
        except psycopg.Error as exc:
            raise connect_error(target, exc) from exc
        pool: AsyncConnectionPool[AConn] = AsyncConnectionPool(
            dsn,
            min_size=config.get("min_size", 1),
            max_size=config.get("max_size", 10),
            timeout=config.get("timeout", POOL_TIMEOUT),
            kwargs=kwargs,
            check=AsyncConnectionPool.check_connection,
            open=False,
        )
        try:
            await pool.open(wait=True, timeout=config.get("timeout", POOL_TIMEOUT))
        except Exception as exc:
            await pool.close()
            raise BackendUnavailableError(
                f"Postgres at {target} accepted a first connection but the pool could not "
                f"open its connections in time: {exc}"
            ) from exc
        store: AsyncPostgresMemoryStore | None = None
        try:
            store = cls(pool, index=index, ttl=ttl, retrieval=retrieval, **options)
            yield store
        finally:
            if store is not None:
                await store.stop_ttl_sweeper()
                try:
                    await store.aflush_access()
                except Exception as exc:  # closing must not fail over bookkeeping
                    logger.warning("access counts not written at close: %s", exc)
            await pool.close()

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[AConn]:
        if isinstance(self.conn, AsyncConnectionPool):
            async with self.conn.connection() as conn:
                yield conn
        else:
            async with self._conn_lock:
                yield self.conn

    def _target(self) -> str:
        if isinstance(self.conn, AsyncConnectionPool):
            conninfo = self.conn.conninfo
            return describe_target(conninfo_to_dict(conninfo) if isinstance(conninfo, str) else {})
        return describe_target({"host": self.conn.info.host, "port": self.conn.info.port})

    def setup(self) -> Any:
        """:meth:`asetup` when called on an event loop (returns the awaitable, as LangGraph's
        ``AsyncPostgresStore.setup``: ``await store.setup()``); from another thread, blocks
        until the schema is ready and returns the :class:`SetupReport`.

        Example:
            ```python
            report = await store.setup()
            ```
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return super().setup()
        return self.asetup()

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run several operations in one transaction; concurrent calls are merged.

        Calls made while others run wait in a queue and are merged into few transactions
        (see ``_coalesce``); each caller still gets exactly its own results or error.
        """
        return await self._coalescer.submit(op_list(ops))

    def _stall_error(self, queued: bool) -> BackendUnavailableError:
        where = (
            "it waited in the store's queue and was never run"
            if queued
            else "it was sent; if the server resumes, its writes may still be applied"
        )
        return BackendUnavailableError(
            f"Postgres at {self._target()} answered nothing for {self._stall_timeout:g} s "
            f"(the pool's timeout) while this call waited: {where}. Check that the server "
            "is running and reachable."
        )

    async def _abatch_now(self, ops: list[Op]) -> list[Result]:
        return await self._arun(functools.partial(self._batch_program, ops))

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Blocking :meth:`abatch` for other threads (raises on the store's own loop)."""
        self._check_not_on_loop()
        return asyncio.run_coroutine_threadsafe(self.abatch(ops), self._store_loop()).result()

    async def _arun(self, program: Program[T] | Callable[[], Program[T]]) -> T:
        """Run a program; given as a factory, a broken transaction may run again (as in
        ``PostgresMemoryStore._run``)."""
        attempt = 1
        while True:
            committed: list[bool] = []
            try:
                async with self._slots:
                    return await self._arun_unchecked(
                        program if isinstance(program, Generator) else program(), committed
                    )
            except (psycopg.Error, PoolTimeout) as exc:
                if not (committed or isinstance(program, Generator)) and should_retry(exc, attempt):
                    await asyncio.sleep(retry_pause(attempt))
                    attempt += 1
                    continue
                translated = translate_error(self._target(), exc, self.conn)
                if translated is exc:
                    raise
                raise translated from exc

    async def _arun_unchecked(self, program: Program[T], committed: list[bool]) -> T:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        try:
            request = next(program)
        except StopIteration as stop:
            result: T = stop.value
            return result
        async with contextlib.AsyncExitStack() as stack:
            conn: AConn | None = None
            cursor: psycopg.AsyncCursor[dict[str, Any]] | None = None
            transaction: contextlib.AsyncExitStack | None = None
            while True:
                reply: Any
                if isinstance(request, EmbedDocuments):
                    with self._coalescer.local_work():  # the embedder, not the server
                        reply = await self.embeddings.aembed_documents(request.texts)
                elif isinstance(request, EmbedQueries):
                    with self._coalescer.local_work():
                        reply = await asyncio.gather(
                            *(self.embeddings.aembed_query(text) for text in request.texts)
                        )
                else:
                    if conn is None or cursor is None:
                        conn = await stack.enter_async_context(self._connection())
                        cursor = await stack.enter_async_context(conn.cursor())
                    if request.isolated:
                        if transaction is not None:  # commit what the program did so far
                            await transaction.aclose()
                            transaction = None
                            committed.append(True)
                        reply = await execute_isolated(conn, cursor, request)
                    else:
                        if transaction is None:
                            transaction = await stack.enter_async_context(
                                contextlib.AsyncExitStack()
                            )
                            await transaction.enter_async_context(conn.transaction())
                        reply = await execute(conn, cursor, request)
                self._coalescer.progress()  # the server (or the embedder) answered
                try:
                    request = program.send(reply)
                except StopIteration as stop:
                    done: T = stop.value
                    return done

    def _check_not_on_loop(self) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None:
            raise SyncCallOnEventLoopError(
                "synchronous calls on AsyncPostgresMemoryStore would block the event loop; "
                "use the async methods (asetup, aget, aput, asearch, ...) or PostgresMemoryStore"
            )

    def _store_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None or not self._loop.is_running():
            raise SyncCallOnEventLoopError(
                "AsyncPostgresMemoryStore's event loop is not running; call the async "
                "methods from that loop, or use PostgresMemoryStore in synchronous code"
            )
        return self._loop

    def _run(self, program: Program[T] | Callable[[], Program[T]]) -> T:
        self._check_not_on_loop()
        return asyncio.run_coroutine_threadsafe(self._arun(program), self._store_loop()).result()

    async def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> asyncio.Task[None]:
        """Sweep expired memories every ``sweep_interval_minutes`` in an asyncio task.

        As LangGraph's ``AsyncPostgresStore``: returns (at once) the running task; a second
        call returns the same task. Defaults to ``ttl["sweep_interval_minutes"]`` or 5.

        Raises:
            ConfigurationError: the interval is not a positive number of minutes.

        Example:
            ```python
            task = await store.start_ttl_sweeper(1)
            ...
            await store.stop_ttl_sweeper()
            ```
        """
        if self._sweeper is not None and not self._sweeper.done():
            return self._sweeper
        seconds = self._sweep_interval_seconds(sweep_interval_minutes)
        stop = self._sweeper_stop = asyncio.Event()

        async def loop() -> None:
            while True:
                with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), seconds)
                if stop.is_set():
                    return
                try:
                    await self.asweep()
                except Exception:
                    logger.exception("TTL sweep failed; retrying at the next interval")

        self._sweeper = asyncio.get_running_loop().create_task(loop(), name="lgm-ttl-sweeper")
        return self._sweeper

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper task and wait for it (at most ``timeout`` seconds).

        Returns ``True`` when it is stopped (or was not running), ``False`` if ``timeout``
        passed first (it then stops after its current sweep). An interrupted sweep
        rolls back: nothing is half-deleted.

        Example:
            ```python
            assert await store.stop_ttl_sweeper(timeout=5)
            ```
        """
        task = self._sweeper
        if task is None or task.done():
            self._sweeper = None
            return True
        if self._sweeper_stop is not None:
            self._sweeper_stop.set()
        done, _ = await asyncio.wait({task}, timeout=timeout)
        if not done:
            return False
        self._sweeper = None
        return True
