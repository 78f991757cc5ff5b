"""What only the async store has: merged batches, sync calls bridged onto its loop, a task sweeper.

:class:`AsyncStoreBase` is the base of ``aio.AsyncPostgresMemoryStore``; its sync twin
``_sync_store.SyncStoreBase`` holds what only the sync store has. Everything the two stores
share is written once in ``aio.py`` (``sync.py`` is generated from it).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, TypeVar

from langgraph.store.base import Op, Result

from langgraph_recall._internal.loop_bridge import DEFAULT_LOOP_TIMEOUT, run_on_loop
from langgraph_recall._pg.dsn import resolve_dsn
from langgraph_recall.errors import BackendUnavailableError, SyncCallOnEventLoopError
from langgraph_recall.store._coalesce import Coalescer, Stall
from langgraph_recall.store.postgres._core import MemoryStoreCore, op_list, reads_only
from langgraph_recall.store.postgres._types import Program

__all__ = ["AsyncStoreBase", "stall_message"]

T = TypeVar("T")

logger = logging.getLogger("langgraph_recall.store")


def stall_message(target: str, stall: Stall, timeout: float) -> str:
    """What a call that gave up waiting reports: what was measured, not a guess.

    A call that waited in the store's own queue says so (it never reached the server and
    nothing of it was applied); the server is named silent only for the time no call of
    this store got an answer; a process that woke up late says it was starved itself.

    Example:
        ```python
        from langgraph_recall.store._coalesce import Stall
        from langgraph_recall.store.postgres._async_store import stall_message

        stall = Stall(queued=True, waited=5.3, silent=5.0, running=10, capacity=10, queue=31)
        text = stall_message("db:5432", stall, 5.0)
        assert "waited 5.3 s in this store's queue for a free connection" in text
        assert "answered nothing" not in text and "Check that the server" not in text
        ```
    """
    if stall.queued:
        what = (
            f"this call waited {stall.waited:.1f} s in this store's queue for a free "
            f"connection of its pool and was never run (nothing of it was sent or applied): all "
            f"{stall.running} of {stall.capacity} connections stayed busy with calls that "
            f"got no answer from Postgres at {target} for {stall.silent:.1f} s "
            f"({stall.queue} calls still queued)"
        )
    else:
        what = (
            f"this call was sent to Postgres at {target} and waited {stall.waited:.1f} s; "
            f"neither it nor any of the {stall.running} calls of this store running beside "
            f"it got an answer for {stall.silent:.1f} s (if the server resumes, its writes "
            "may still be applied)"
        )
    starved = (
        f" This process itself ran {stall.late:.1f} s late: it was short of CPU or its "
        "event loop was blocked, so answers may have come without being read."
        if stall.late >= 0.5
        else ""
    )
    return (
        f"gave up after the pool's timeout of {timeout:g} s: {what}.{starved} The statements "
        "in flight are slow or blocked (a lock held by another session, a loaded server or "
        "client machine; pg_stat_activity shows them) or the server is unreachable; raise "
        "pool_config['timeout'] to wait longer."
    )


class AsyncStoreBase(MemoryStoreCore):
    """The async store's own behaviour (see the module docs)."""

    loop_timeout: float = DEFAULT_LOOP_TIMEOUT
    """Seconds a sync call waits while the store's loop runs nothing (blocked, or
    deadlocked on the waiting thread) before it fails with ``EventLoopStalledError``."""

    def _init_own_state(self, width: int, stall_timeout: float) -> None:
        """Called by the store's ``__init__``: ``width`` calls may run at once; a call that
        hears nothing from the server for ``stall_timeout`` seconds fails."""
        self._sweeper: asyncio.Task[None] | None = None
        self._sweeper_stop: asyncio.Event | None = None
        # Concurrent batches are merged (``_coalesce``): never one checkout per call.
        self._stall_timeout = stall_timeout
        self._coalescer = Coalescer(
            self._abatch_now,
            max_running=width,
            stall_timeout=stall_timeout,
            on_stall=self._stall_error,
        )
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None

    @staticmethod
    async def _aresolve_dsn(conn_string: str | None) -> tuple[str, str]:
        return await asyncio.to_thread(resolve_dsn, conn_string)

    async def _apause(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def _bind_loop(self) -> None:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()

    def _local_work(self) -> contextlib.AbstractContextManager[None]:
        """Around the embedder's work (the server is not stalled meanwhile)."""
        return self._coalescer.local_work()

    def _progress(self) -> None:
        """The server (or the embedder) answered."""
        self._coalescer.progress()

    async def _aembed_queries(self, texts: list[str]) -> list[list[float]]:
        return list(await asyncio.gather(*(self.embeddings.aembed_query(text) for text in texts)))

    def setup(self) -> Any:
        """:meth:`asetup` when called on an event loop (returns the awaitable, as LangGraph's
        ``AsyncPostgresStore.setup``: ``await store.setup()``); from another thread, blocks
        until the schema is ready and returns the :class:`SetupReport`.
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

    def _stall_error(self, stall: Stall) -> BackendUnavailableError:
        return BackendUnavailableError(stall_message(self._target(), stall, self._stall_timeout))

    async def _abatch_now(self, ops: list[Op]) -> list[Result]:
        program = functools.partial(self._batch_program, ops)
        return await self._arun(program, read=reads_only(ops))

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Blocking :meth:`abatch` for other threads (raises on the store's own loop)."""
        self._check_not_on_loop()
        return self._wait(self.abatch(ops))

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

    def _run(self, program: Program[T] | Callable[[], Program[T]], *, read: bool = False) -> T:
        self._check_not_on_loop()
        return self._wait(self._arun(program, read=read))

    def _wait(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the store's loop and wait, bounded by ``loop_timeout`` of loop
        inactivity (:class:`~langgraph_recall.errors.EventLoopStalledError`)."""
        try:
            loop = self._store_loop()
        except SyncCallOnEventLoopError:
            coro.close()
            raise
        return run_on_loop(coro, loop, self.loop_timeout, type(self).__name__)

    async def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> asyncio.Task[None]:
        """Sweep expired memories every ``sweep_interval_minutes`` in an asyncio task.

        As LangGraph's ``AsyncPostgresStore``: returns (at once) the running task; a second
        call returns the same task. Defaults to ``ttl["sweep_interval_minutes"]`` or 5.

        Raises:
            ConfigurationError: the interval is not a positive number of minutes.
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
