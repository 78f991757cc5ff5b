"""What only the sync store has: a sweeper thread, and async methods run in worker threads.

:class:`SyncStoreBase` is the base of ``sync.PostgresMemoryStore`` (generated from
``aio.py``); ``_async_store.AsyncStoreBase`` is its async counterpart.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from langgraph_recall._pg.dsn import resolve_dsn
from langgraph_recall.store.postgres._core import MemoryStoreCore
from langgraph_recall.store.postgres._types import Program

__all__ = ["SyncStoreBase"]

T = TypeVar("T")

logger = logging.getLogger("langgraph_recall.store")


class SyncStoreBase(MemoryStoreCore):
    """The sync store's own behaviour (see the module docs)."""

    def _init_own_state(self, width: int, stall_timeout: float) -> None:
        """Called by the store's ``__init__``: ``width`` calls may run at once; a call that
        hears nothing from the server for ``stall_timeout`` seconds fails."""
        del width, stall_timeout  # the sync store merges no batches: it needs neither
        self._sweeper: threading.Thread | None = None
        self._sweeper_stop = threading.Event()
        self._sweeper_done: concurrent.futures.Future[None] | None = None

    @staticmethod
    def _resolve_dsn(conn_string: str | None) -> tuple[str, str]:
        return resolve_dsn(conn_string)

    def _pause(self, seconds: float) -> None:
        time.sleep(seconds)

    def _bind_loop(self) -> None:
        """Nothing to bind: the sync store has no event loop."""

    def _local_work(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def _progress(self) -> None:
        """Nothing to report: the sync store merges no batches."""

    def _embed_queries(self, texts: list[str]) -> list[list[float]]:
        return [self.embeddings.embed_query(text) for text in texts]

    async def _arun(
        self, program: Program[T] | Callable[[], Program[T]], *, read: bool = False
    ) -> T:
        return await asyncio.to_thread(functools.partial(self._run, program, read=read))

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweep expired memories every ``sweep_interval_minutes`` in a daemon thread.

        As LangGraph's ``PostgresStore``: returns a future that completes when the sweeper
        stops; cancelling it stops the sweeper. A second call while it runs returns the
        same future. Defaults to ``ttl["sweep_interval_minutes"]`` or 5 minutes.

        Raises:
            ConfigurationError: the interval is not a positive number of minutes.
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
        """
        if self._sweeper is None:
            return True
        self._sweeper_stop.set()
        self._sweeper.join(timeout)
        stopped = not self._sweeper.is_alive()
        if stopped:
            self._sweeper = None
        return stopped
