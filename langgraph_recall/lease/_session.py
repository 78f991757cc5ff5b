"""I/O shells of the lease wrapper: acquire, renew in the background, release.

:func:`held_lease` (sync, renewal on a daemon thread) and :func:`aheld_lease`
(async, renewal on an ``asyncio`` task) are the only places that talk to a lease
backend. Both follow the same steps; the decisions come from
:mod:`langgraph_recall.lease._policy`:

1. acquire (``reject``: one attempt; ``wait``: bounded backoff until ``wait_timeout``),
2. renew every ``renew_every`` seconds while the run lasts; when the lease is lost,
   ask LangGraph to stop the run at the next step (``RunControl.request_drain``),
3. release in ``finally`` (a failed release is queued and retried when the backend answers
   again: :mod:`langgraph_recall.lease._recovery`) and turn a drained / fenced-out run into
   ``LeaseLostError``.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import random
import secrets
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from langgraph_recall.errors import (
    BackendUnavailableError,
    LeaseLostError,
    StaleWriteError,
    ThreadBusyError,
    TransientError,
)
from langgraph_recall.lease._policy import (
    DRAIN_REASON_PREFIX,
    LeaseOptions,
    RenewalVerdict,
    backoff_delays,
    busy_message,
    lost_message,
    renewal_verdict,
)
from langgraph_recall.lease._protocol import AsyncLeaseBackend, Lease, LeaseBackend
from langgraph_recall.lease._recovery import (
    arelease_or_queue,
    describe_failure,
    queue_of,
    release_or_queue,
)

__all__ = [
    "LeaseRun",
    "ThreadedAsyncLeaseBackend",
    "aacquire",
    "acquire",
    "aheld_lease",
    "held_lease",
    "new_owner_id",
]

logger = logging.getLogger("langgraph_recall.lease")

_BACKEND_DOWN = (BackendUnavailableError, TransientError)
"""Acquisition failures the ``wait`` strategy rides out (the backend may be failing over)."""

_RUN_CONTROL: Any = getattr(importlib.import_module("langgraph.runtime"), "RunControl", None)
_GRAPH_DRAINED: Any = getattr(importlib.import_module("langgraph.errors"), "GraphDrained", None)


def new_owner_id() -> str:
    """A unique, unguessable lease owner id: this host and process (handy in backend dumps),
    then 128 random bits. (With the owner id a retried acquisition gets its lease back, so
    it is a secret of the acquisition like the token.)"""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(16)}"


def _jitter() -> Iterator[float]:
    return iter(random.random, -1.0)


@dataclass
class LeaseRun:
    """One run's view of its lease: the lease, the run control, and whether it was lost.

    Attributes:
        lease: The held lease (its ``token`` goes into the run config).
        control: The ``RunControl`` passed to the graph (``None`` on LangGraph versions
            without cooperative drain); the renewer drains it when the lease is lost.
        lost_reason: Why the lease was lost, or ``None`` while it is held.
    """

    lease: Lease
    control: Any = None
    lost_reason: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def mark_lost(self, reason: str) -> None:
        """Record the loss and ask the graph to stop before its next step."""
        with self._lock:
            if self.lost_reason is not None:
                return
            self.lost_reason = reason
        logger.warning("lease on thread %r lost: %s", self.lease.thread_id, reason)
        if self.control is not None:
            self.control.request_drain(DRAIN_REASON_PREFIX + reason)


def make_control(supplied: Any) -> Any:
    """The caller's ``RunControl`` if given, else a fresh one (``None`` if unsupported)."""
    if supplied is not None:
        return supplied
    return _RUN_CONTROL() if _RUN_CONTROL is not None else None


def _lost_error(run: LeaseRun, exc: BaseException) -> LeaseLostError | None:
    """The ``LeaseLostError`` to raise instead of ``exc``, or ``None`` to re-raise ``exc``."""
    drained = _GRAPH_DRAINED is not None and isinstance(exc, _GRAPH_DRAINED)
    if drained and not str(getattr(exc, "reason", "")).startswith(DRAIN_REASON_PREFIX):
        return None  # the caller's own drain request
    if drained or isinstance(exc, StaleWriteError):
        reason = run.lost_reason or f"a write was fenced out: {exc}"
        return LeaseLostError(lost_message(run.lease.thread_id, reason))
    return None


# ---------------------------------------------------------------------------- sync shell


def acquire(
    backend: LeaseBackend,
    thread_id: str,
    options: LeaseOptions,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> Lease:
    """Take the lease on ``thread_id`` following ``options.strategy``.

    First, a lease of this thread that this process failed to release (an outage cut its
    run) is released: the worker re-claims its own lease instead of waiting for it. With
    ``wait``, a backend that does not answer (a failover in progress) is retried like a
    busy thread until ``wait_timeout``.

    Raises:
        ThreadBusyError: The thread stayed busy (at once for ``reject``).
        BackendUnavailableError: The backend did not answer (``wait``: until the deadline).
    """
    owner = new_owner_id()
    queue = queue_of(backend)
    if len(queue):
        queue.retry_sync(backend, thread_id)
    if options.strategy != "wait":
        lease = backend.try_acquire(thread_id, owner, options.ttl)
        if lease is not None:
            return lease
        raise ThreadBusyError(busy_message(thread_id, "reject", 0.0))
    started = time.monotonic()
    failure: Exception | None = None
    for delay in (0.0, *backoff_delays(options.wait_timeout, jitter=_jitter())):
        if delay:
            sleep(delay)
        try:
            lease = backend.try_acquire(thread_id, owner, options.ttl)
        except _BACKEND_DOWN as exc:
            failure = exc
            continue
        if lease is not None:
            return lease
        failure = None
    if failure is not None:
        raise failure
    raise ThreadBusyError(busy_message(thread_id, "wait", time.monotonic() - started))


def _judge_renewal(
    run: LeaseRun, renewed: bool | None, last_renewed_at: float, options: LeaseOptions
) -> float | None:
    """Apply one renewal outcome: the new "last held" time, or ``None`` once lost."""
    now = time.monotonic()
    verdict = renewal_verdict(
        renewed=renewed, now=now, last_renewed_at=last_renewed_at, ttl=options.ttl
    )
    if verdict is RenewalVerdict.HELD:
        return now
    if verdict is RenewalVerdict.RETRY:
        return last_renewed_at
    run.mark_lost(
        "the backend refused the renewal: the lease expired or its server failed over or "
        "restarted, and another worker took the thread; or the thread was deleted"
        if renewed is False
        else f"could not renew for {options.ttl:g}s"
    )
    return None


def _renew_loop(
    backend: LeaseBackend, run: LeaseRun, options: LeaseOptions, stop: threading.Event
) -> None:
    last_renewed_at = time.monotonic()
    while not stop.wait(options.renew_every):
        try:
            renewed: bool | None = backend.renew(run.lease, options.ttl)
        except Exception as exc:  # the verdict decides whether a failure is fatal
            logger.warning(
                "renewing the lease on %r failed (%s)", run.lease.thread_id, describe_failure(exc)
            )
            renewed = None
        if stop.is_set():
            return  # the run ended while this renewal was in flight
        held_at = _judge_renewal(run, renewed, last_renewed_at, options)
        if held_at is None:
            return
        last_renewed_at = held_at


@contextmanager
def held_lease(
    backend: LeaseBackend, thread_id: str, options: LeaseOptions, control: Any = None
) -> Iterator[LeaseRun]:
    """Hold the lease on ``thread_id`` for the duration of the ``with`` block.

    Renewal runs on a daemon thread; a lost lease drains the run and the block's
    ``GraphDrained`` / ``StaleWriteError`` becomes :class:`LeaseLostError`.
    """
    run = LeaseRun(lease=acquire(backend, thread_id, options), control=make_control(control))
    stop = threading.Event()
    renewer = threading.Thread(
        target=_renew_loop,
        args=(backend, run, options, stop),
        name=f"lease-renewer-{thread_id}",
        daemon=True,
    )
    renewer.start()
    try:
        yield run
    except BaseException as exc:
        replacement = _lost_error(run, exc)
        if replacement is not None:
            raise replacement from exc
        raise
    finally:
        stop.set()
        renewer.join(timeout=options.ttl)  # a renewal hung on the network must not hang the run
        # a failed release is queued and retried (never masks the run's own outcome)
        release_or_queue(backend, run.lease, options.ttl)


# --------------------------------------------------------------------------- async shell


class ThreadedAsyncLeaseBackend:
    """Runs a synchronous :class:`LeaseBackend` in worker threads for async callers.

    Example:
        ```python
        from langgraph_recall.lease import InMemoryLeaseBackend
        from langgraph_recall.lease._session import ThreadedAsyncLeaseBackend

        backend = ThreadedAsyncLeaseBackend(InMemoryLeaseBackend())
        lease = await backend.atry_acquire("chat-1", "me", ttl=10.0)
        assert lease is not None and await backend.atry_acquire("chat-1", "you", ttl=10.0) is None
        ```
    """

    def __init__(self, backend: LeaseBackend) -> None:
        self.backend = backend

    async def atry_acquire(self, thread_id: str, owner: str, ttl: float) -> Lease | None:
        """Async :meth:`LeaseBackend.try_acquire` in a thread."""
        return await asyncio.to_thread(self.backend.try_acquire, thread_id, owner, ttl)

    async def arenew(self, lease: Lease, ttl: float) -> bool:
        """Async :meth:`LeaseBackend.renew` in a thread."""
        return await asyncio.to_thread(self.backend.renew, lease, ttl)

    async def arelease(self, lease: Lease) -> None:
        """Async :meth:`LeaseBackend.release` in a thread."""
        await asyncio.to_thread(self.backend.release, lease)


async def aacquire(backend: AsyncLeaseBackend, thread_id: str, options: LeaseOptions) -> Lease:
    """Async :func:`acquire`."""
    owner = new_owner_id()
    queue = queue_of(backend)
    if len(queue):
        await queue.retry_async(backend, thread_id)
    if options.strategy != "wait":
        lease = await backend.atry_acquire(thread_id, owner, options.ttl)
        if lease is not None:
            return lease
        raise ThreadBusyError(busy_message(thread_id, "reject", 0.0))
    started = time.monotonic()
    failure: Exception | None = None
    for delay in (0.0, *backoff_delays(options.wait_timeout, jitter=_jitter())):
        if delay:
            await asyncio.sleep(delay)
        try:
            lease = await backend.atry_acquire(thread_id, owner, options.ttl)
        except _BACKEND_DOWN as exc:
            failure = exc
            continue
        if lease is not None:
            return lease
        failure = None
    if failure is not None:
        raise failure
    raise ThreadBusyError(busy_message(thread_id, "wait", time.monotonic() - started))


async def _arenew_loop(
    backend: AsyncLeaseBackend, run: LeaseRun, options: LeaseOptions, stop: asyncio.Event
) -> None:
    last_renewed_at = time.monotonic()
    while True:
        try:
            await asyncio.wait_for(stop.wait(), timeout=options.renew_every)
            return
        except asyncio.TimeoutError:
            pass
        try:
            renewed: bool | None = await backend.arenew(run.lease, options.ttl)
        except Exception as exc:  # the verdict decides whether a failure is fatal
            logger.warning(
                "renewing the lease on %r failed (%s)", run.lease.thread_id, describe_failure(exc)
            )
            renewed = None
        if stop.is_set():
            return  # the run ended while this renewal was in flight
        held_at = _judge_renewal(run, renewed, last_renewed_at, options)
        if held_at is None:
            return
        last_renewed_at = held_at


@asynccontextmanager
async def aheld_lease(
    backend: AsyncLeaseBackend, thread_id: str, options: LeaseOptions, control: Any = None
) -> AsyncIterator[LeaseRun]:
    """Async :func:`held_lease`; renewal runs on an ``asyncio`` task."""
    run = LeaseRun(lease=await aacquire(backend, thread_id, options), control=make_control(control))
    stop = asyncio.Event()
    renewer = asyncio.create_task(
        _arenew_loop(backend, run, options, stop), name=f"lease-renewer-{thread_id}"
    )
    try:
        yield run
    except BaseException as exc:
        replacement = _lost_error(run, exc)
        if replacement is not None:
            raise replacement from exc
        raise
    finally:
        stop.set()
        try:
            # a renewal hung on the network must not hang the run: cancel it after ttl
            await asyncio.wait_for(renewer, timeout=options.ttl)
        except asyncio.TimeoutError:
            logger.warning("lease renewal on %r did not stop within ttl", thread_id)
        finally:
            await arelease_or_queue(backend, run.lease, options.ttl)
