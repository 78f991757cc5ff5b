"""Leases that recover with the backend: failed releases are retried, and re-claimed.

A run cut by a failover (or any outage) cannot release its lease: the release raises. The
lease would then block its thread until its TTL ran out. Instead, the lease goes into its
backend's :class:`ReleaseQueue`, and

* a background retrier (a daemon thread for a sync backend, an ``asyncio`` task for an
  async one) releases it as soon as the backend answers again, with backoff;
* the next acquisition of the same thread by this process releases it first -- the worker
  re-claims its own lease instead of waiting for it to expire.

An entry is dropped once its lease must have expired on its own (``ttl`` after it was last
known held), or once the release went through. Releasing is idempotent and checks the
owner and token, so a retried release never frees somebody else's lease.

Example:
    ```python
    from langgraph_recall.lease import InMemoryLeaseBackend, Lease
    from langgraph_recall.lease._recovery import ReleaseQueue

    class Flaky(InMemoryLeaseBackend):
        down = True

        def release(self, lease: Lease) -> None:
            if self.down:
                raise ConnectionError("backend unreachable")
            super().release(lease)

    backend = Flaky()
    lease = backend.try_acquire("chat-1", "worker-a", ttl=30.0)
    queue = ReleaseQueue()
    queue.add(lease, ttl=30.0)  # what release_or_queue does when the release fails
    assert queue.retry_sync(backend) == 0 and len(queue) == 1  # still down: kept
    backend.down = False
    assert queue.retry_sync(backend) == 1  # what the retrier (or the next acquire) does
    assert backend.try_acquire("chat-1", "worker-b", ttl=30.0) is not None
    ```
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langgraph_recall._internal.terminal import printable
from langgraph_recall.errors import LangGraphRecallError
from langgraph_recall.lease._protocol import AsyncLeaseBackend, Lease, LeaseBackend

__all__ = [
    "RETRY_DELAYS",
    "ReleaseQueue",
    "arelease_or_queue",
    "describe_failure",
    "queue_of",
    "release_or_queue",
]

logger = logging.getLogger("langgraph_recall.lease")

RETRY_DELAYS = (0.05, 0.1, 0.2, 0.4, 0.8, 1.0)
"""Pauses (seconds) between the retrier's rounds; the last one repeats."""


@dataclass
class _Pending:
    lease: Lease
    until: float
    """Monotonic time after which the lease has expired on its own."""


class ReleaseQueue:
    """The failed releases of one backend (thread-safe)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._items: dict[tuple[str, str, int], _Pending] = {}
        self.retrying = False
        """Whether a retrier is running for this queue."""

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def add(self, lease: Lease, ttl: float) -> None:
        """Queue ``lease`` (its release just failed); it expires ``ttl`` seconds from now."""
        with self._lock:
            self._items[(lease.thread_id, lease.owner, lease.token)] = _Pending(
                lease, self._clock() + ttl
            )

    def put_back(self, lease: Lease, until: float) -> None:
        """Re-queue a lease whose release failed again (keeping its expiry)."""
        with self._lock:
            key = (lease.thread_id, lease.owner, lease.token)
            self._items.setdefault(key, _Pending(lease, until))

    def retry_sync(self, backend: LeaseBackend, thread_id: str | None = None) -> int:
        """Release the queued leases now; returns how many went through."""
        done = 0
        pending = self._snapshot(thread_id)
        for lease, until in pending:
            try:
                backend.release(lease)
            except Exception:
                self.put_back(lease, until)
            else:
                done += 1
        return done

    async def retry_async(self, backend: AsyncLeaseBackend, thread_id: str | None = None) -> int:
        """Async :meth:`retry_sync`."""
        done = 0
        for lease, until in self._snapshot(thread_id):
            try:
                await backend.arelease(lease)
            except Exception:
                self.put_back(lease, until)
            else:
                done += 1
        return done

    def _snapshot(self, thread_id: str | None) -> list[tuple[Lease, float]]:
        """Remove and return the queued leases (of ``thread_id`` only, if given) that may
        still be held, with their expiry; expired ones are dropped."""
        now = self._clock()
        with self._lock:
            out = []
            for key, item in list(self._items.items()):
                if item.until <= now:
                    del self._items[key]
                elif thread_id is None or item.lease.thread_id == thread_id:
                    out.append((item.lease, item.until))
                    del self._items[key]
            return out


_QUEUES: weakref.WeakKeyDictionary[Any, ReleaseQueue] = weakref.WeakKeyDictionary()
_QUEUES_LOCK = threading.Lock()
_TASKS: set[asyncio.Task[None]] = set()


def queue_of(backend: object) -> ReleaseQueue:
    """The release queue of ``backend`` (created on first use, lives as long as it; a
    backend that cannot be weakly referenced gets a queue of its own per call)."""
    with _QUEUES_LOCK:
        try:
            queue = _QUEUES.get(backend)
            if queue is None:
                queue = _QUEUES[backend] = ReleaseQueue()
        except TypeError:
            return ReleaseQueue()
        return queue


def describe_failure(exc: BaseException) -> str:
    """What a log line says about a backend failure: our own errors' messages (they never
    carry a token or a password; control characters of any text they quote are shown as
    escapes), only the type of anything else."""
    if isinstance(exc, LangGraphRecallError):
        return printable(f"{type(exc).__name__}: {exc}")
    return type(exc).__name__


def _log_failure(lease: Lease, exc: BaseException) -> None:
    logger.warning(
        "releasing the lease on %r failed (%s); it is retried when the backend answers "
        "again, and this process's next run of the thread re-claims it",
        lease.thread_id,
        describe_failure(exc),
    )


def release_or_queue(backend: LeaseBackend, lease: Lease, ttl: float) -> None:
    """Release ``lease``; if that fails, queue it and make sure a retrier runs."""
    try:
        backend.release(lease)
    except Exception as exc:
        _log_failure(lease, exc)
        queue = queue_of(backend)
        queue.add(lease, ttl)
        _start_thread_retrier(backend, queue)


def _start_thread_retrier(backend: LeaseBackend, queue: ReleaseQueue) -> None:
    with _QUEUES_LOCK:
        if queue.retrying:
            return
        queue.retrying = True

    def run() -> None:
        round_ = 0
        try:
            while len(queue):
                time.sleep(RETRY_DELAYS[min(round_, len(RETRY_DELAYS) - 1)])
                round_ += 1
                if queue.retry_sync(backend):
                    logger.info("released leases left over by an outage")
        finally:
            with _QUEUES_LOCK:
                queue.retrying = False

    threading.Thread(target=run, name="lease-release-retrier", daemon=True).start()


async def arelease_or_queue(backend: AsyncLeaseBackend, lease: Lease, ttl: float) -> None:
    """Async :func:`release_or_queue` (the retrier is a task on the running loop)."""
    try:
        await backend.arelease(lease)
    except Exception as exc:
        _log_failure(lease, exc)
        queue = queue_of(backend)
        queue.add(lease, ttl)
        _start_task_retrier(backend, queue)


def _start_task_retrier(backend: AsyncLeaseBackend, queue: ReleaseQueue) -> None:
    with _QUEUES_LOCK:
        if queue.retrying:
            return
        queue.retrying = True

    async def run() -> None:
        round_ = 0
        try:
            while len(queue):
                await asyncio.sleep(RETRY_DELAYS[min(round_, len(RETRY_DELAYS) - 1)])
                round_ += 1
                if await queue.retry_async(backend):
                    logger.info("released leases left over by an outage")
        finally:
            with _QUEUES_LOCK:
                queue.retrying = False

    task = asyncio.get_running_loop().create_task(run(), name="lease-release-retrier")
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)
