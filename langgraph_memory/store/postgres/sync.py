"""Blocking Postgres memory store (``psycopg`` connection or pool)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Generator, Iterator
from typing import Any, TypeVar

import psycopg
from langgraph.store.base import IndexConfig, TTLConfig
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout
from typing_extensions import Unpack

from langgraph_memory.errors import BackendUnavailableError
from langgraph_memory.retrieval import RetrievalConfig
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
from langgraph_memory.store.postgres._core import MemoryStoreCore
from langgraph_memory.store.postgres._state import StoreOptions
from langgraph_memory.store.postgres._statements_sync import execute, execute_isolated
from langgraph_memory.store.postgres._types import PoolConfig, Program

__all__ = ["PostgresMemoryStore"]

T = TypeVar("T")

logger = logging.getLogger("langgraph_memory.store")

Conn = psycopg.Connection[dict[str, Any]]


class PostgresMemoryStore(MemoryStoreCore):
    """Long-term memory on Postgres: a LangGraph ``BaseStore`` with hybrid search.

    Pass a pool (recommended) or a connection opened with ``autocommit=True`` and
    ``row_factory=dict_row``; or use :meth:`from_conn_string`. Pooled use takes no
    instance-wide lock. The async methods (``aget``, ``asearch``, ...) run the blocking
    code in a worker thread so they never block an event loop.

    Example:
        ```python
        with PostgresMemoryStore.from_conn_string(None) as store:  # embedded Postgres
            store.setup()
            store.put(("memories", "u1"), "k1", {"content": "Lives in Lyon", "kind": "semantic"})
            hits = store.search(("memories", "u1"), query="where does the user live?")
        ```
    """

    def __init__(
        self,
        conn: Conn | ConnectionPool[Conn],
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        retrieval: RetrievalConfig | None = None,
        **options: Unpack[StoreOptions],
    ) -> None:
        check_connection_settings(conn)
        super().__init__(index=index, ttl=ttl, retrieval=retrieval, **options)
        self.conn = conn
        self._conn_lock = threading.Lock()
        # Our own calls queue here for a pooled connection instead of timing out in the pool.
        self._slots = threading.Semaphore(conn.max_size if isinstance(conn, ConnectionPool) else 1)
        self._sweeper: threading.Thread | None = None
        self._sweeper_stop = threading.Event()
        self._sweeper_done: concurrent.futures.Future[None] | None = None

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(
        cls,
        conn_string: str | None = None,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        retrieval: RetrievalConfig | None = None,
        pool_config: PoolConfig | None = None,
        **options: Unpack[StoreOptions],
    ) -> Iterator[PostgresMemoryStore]:
        """Open a connection pool (autocommit, dict rows, health check) and a store on it.

        ``conn_string=None`` uses ``$LANGGRAPH_MEMORY_POSTGRES_URI`` or the embedded
        Postgres. ``pool_config`` sets ``min_size``/``max_size``/``timeout``/``kwargs``.

        Example:
            ```python
            with PostgresMemoryStore.from_conn_string("postgresql://localhost/db") as store:
                store.setup()
            ```
        """
        dsn, target = resolve_dsn(conn_string)
        config = pool_config or {}
        kwargs = connection_kwargs(pool_config)
        try:  # fail fast, naming the server, instead of letting the pool retry
            psycopg.connect(dsn, connect_timeout=kwargs["connect_timeout"]).close()
        except psycopg.Error as exc:
            raise connect_error(target, exc) from exc
        pool: ConnectionPool[Conn] = ConnectionPool(
            dsn,
            min_size=config.get("min_size", 1),
            max_size=config.get("max_size", 10),
            timeout=config.get("timeout", POOL_TIMEOUT),
            kwargs=kwargs,
            check=ConnectionPool.check_connection,
            open=False,
        )
        try:
            pool.open(wait=True, timeout=config.get("timeout", POOL_TIMEOUT))
        except Exception as exc:
            pool.close()
            raise BackendUnavailableError(
                f"Postgres at {target} accepted a first connection but the pool could not "
                f"open its connections in time: {exc}"
            ) from exc
        try:
            store = cls(pool, index=index, ttl=ttl, retrieval=retrieval, **options)
            yield store
        finally:
            if "store" in locals():
                store.stop_ttl_sweeper()
                try:
                    store.flush_access()
                except Exception as exc:  # closing must not fail over bookkeeping
                    logger.warning("access counts not written at close: %s", exc)
            pool.close()

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Conn]:
        if isinstance(self.conn, ConnectionPool):
            with self.conn.connection() as conn:
                yield conn
        else:
            with self._conn_lock:
                yield self.conn

    def _target(self) -> str:
        if isinstance(self.conn, ConnectionPool):
            conninfo = self.conn.conninfo
            return describe_target(conninfo_to_dict(conninfo) if isinstance(conninfo, str) else {})
        return describe_target({"host": self.conn.info.host, "port": self.conn.info.port})

    def _run(self, program: Program[T] | Callable[[], Program[T]]) -> T:
        """Run a program; given as a factory, a transaction the server broke as a deadlock
        victim or serialization failure runs again (bounded, see ``should_retry``) as long
        as none of its writes was committed."""
        attempt = 1
        while True:
            committed: list[bool] = []
            try:
                with self._slots:
                    return self._run_unchecked(
                        program if isinstance(program, Generator) else program(), committed
                    )
            except (psycopg.Error, PoolTimeout) as exc:
                if not (committed or isinstance(program, Generator)) and should_retry(exc, attempt):
                    time.sleep(retry_pause(attempt))
                    attempt += 1
                    continue
                translated = translate_error(self._target(), exc, self.conn)
                if translated is exc:
                    raise
                raise translated from exc

    def _run_unchecked(self, program: Program[T], committed: list[bool]) -> T:
        try:
            request = next(program)
        except StopIteration as stop:
            result: T = stop.value
            return result
        with contextlib.ExitStack() as stack:
            conn: Conn | None = None
            cursor: psycopg.Cursor[dict[str, Any]] | None = None
            transaction: contextlib.ExitStack | None = None
            while True:
                reply: Any
                if isinstance(request, EmbedDocuments):
                    reply = self.embeddings.embed_documents(request.texts)
                elif isinstance(request, EmbedQueries):
                    reply = [self.embeddings.embed_query(text) for text in request.texts]
                else:
                    if conn is None or cursor is None:
                        conn = stack.enter_context(self._connection())
                        cursor = stack.enter_context(conn.cursor())
                    if request.isolated:
                        if transaction is not None:  # commit what the program did so far
                            transaction.close()
                            transaction = None
                            committed.append(True)
                        reply = execute_isolated(conn, cursor, request)
                    else:
                        if transaction is None:
                            transaction = stack.enter_context(contextlib.ExitStack())
                            transaction.enter_context(conn.transaction())
                        reply = execute(conn, cursor, request)
                try:
                    request = program.send(reply)
                except StopIteration as stop:
                    done: T = stop.value
                    return done

    async def _arun(self, program: Program[T] | Callable[[], Program[T]]) -> T:
        return await asyncio.to_thread(self._run, program)

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweep expired memories every ``sweep_interval_minutes`` in a daemon thread.

        As LangGraph's ``PostgresStore``: returns a future that completes when the sweeper
        stops; cancelling it stops the sweeper. A second call while it runs returns the
        same future. Defaults to ``ttl["sweep_interval_minutes"]`` or 5 minutes.

        Raises:
            ConfigurationError: the interval is not a positive number of minutes.

        Example:
            ```python
            store.start_ttl_sweeper(1)
            ...
            store.stop_ttl_sweeper(timeout=5)
            ```
        """
        if self._sweeper is not None and self._sweeper.is_alive() and self._sweeper_done:
            return self._sweeper_done
        seconds = self._sweep_interval_seconds(sweep_interval_minutes)
        stop = self._sweeper_stop = threading.Event()
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        done.add_done_callback(lambda future: stop.set() if future.cancelled() else None)

        def loop() -> None:
            while not stop.wait(seconds):
                try:
                    self.sweep()
                except Exception:
                    logger.exception("TTL sweep failed; retrying at the next interval")
            if not done.done():
                done.set_result(None)

        self._sweeper = threading.Thread(target=loop, name="lgm-ttl-sweeper", daemon=True)
        self._sweeper_done = done
        self._sweeper.start()
        return done

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread and wait for it (at most ``timeout`` seconds).

        Returns ``True`` when it is no longer running, ``False`` if ``timeout`` passed
        first (it then stops after its current sweep).

        Example:
            ```python
            assert store.stop_ttl_sweeper(timeout=5)
            ```
        """
        if self._sweeper is None:
            return True
        self._sweeper_stop.set()
        self._sweeper.join(timeout)
        stopped = not self._sweeper.is_alive()
        if stopped:
            self._sweeper = None
        return stopped
