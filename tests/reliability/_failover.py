"""The lease workload the failover tests run before and after a server loses its state.

Before the failure (on the old primary, or before the snapshot is restored), three groups of
threads:

* ``cut``: a worker holds the lease and wrote a fenced turn; its run is cut by the failure
  (the lease is never released) -- its holder died with the old primary;
* ``released``: leased, a turn written, the lease released *in the lag window* (with an
  asynchronous replica the release is lost: the lease reappears as held);
* ``late``: worker A acquires *in the lag window* (the token exists on the old primary only)
  and writes a fenced turn; after the failure, A's late write must be refused.

After the failure (on the promoted server), every thread gets a fresh leased turn
(``strategy="reject"``: a thread blocked by a dead lease shows as ``ThreadBusyError``,
retried until it passes); we measure when each thread became usable, collect every token
issued, and then replay the late writes of every earlier holder with its old token.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from langgraph_recall.errors import (
    BackendUnavailableError,
    StaleWriteError,
    ThreadBusyError,
    TransientError,
)
from langgraph_recall.lease import FENCE_CONFIG_KEY, Lease, with_thread_lease
from tests.graph_helpers import chat_graph
from tests.reliability._workload import thread_config, turn_input

__all__ = [
    "After",
    "Before",
    "RecordingBackend",
    "aafter_failure",
    "after_failure",
    "before_failure",
]

USABLE_DEADLINE = 5.0
"""Every thread must take a new leased turn within this many seconds of the promotion."""

GIVE_UP = 40.0
"""How long the measurement keeps trying a thread (beyond the deadline, to report how late)."""

_RETRIED = (ThreadBusyError, BackendUnavailableError, TransientError)


def fenced(thread_id: str, token: int) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, FENCE_CONFIG_KEY: token}}


class RecordingBackend:
    """A lease backend (sync or async) that records every token it hands out."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.issued: list[tuple[str, int, float]] = []
        """(thread, token, monotonic time the lease was granted)."""
        self._lock = threading.Lock()

    def _record(self, lease: Lease | None) -> Lease | None:
        if lease is not None:
            with self._lock:
                self.issued.append((lease.thread_id, lease.token, time.monotonic()))
        return lease

    def try_acquire(self, thread_id: str, owner: str, ttl: float) -> Lease | None:
        return self._record(self.inner.try_acquire(thread_id, owner, ttl))

    def renew(self, lease: Lease, ttl: float) -> bool:
        return bool(self.inner.renew(lease, ttl))

    def release(self, lease: Lease) -> None:
        self.inner.release(lease)

    async def atry_acquire(self, thread_id: str, owner: str, ttl: float) -> Lease | None:
        return self._record(await self.inner.atry_acquire(thread_id, owner, ttl))

    async def arenew(self, lease: Lease, ttl: float) -> bool:
        return bool(await self.inner.arenew(lease, ttl))

    async def arelease(self, lease: Lease) -> None:
        await self.inner.arelease(lease)


@dataclass
class Before:
    """What the workload did before the failure."""

    groups: dict[str, list[str]]
    tokens: dict[str, set[int]] = field(default_factory=dict)
    """Every token issued per thread before the failure."""
    holders: dict[str, int] = field(default_factory=dict)
    """Thread -> token of an earlier holder that will attempt a late write."""
    acked: dict[str, list[str]] = field(default_factory=dict)
    """Thread -> the turns acknowledged before the failure."""

    @property
    def threads(self) -> list[str]:
        return [t for group in self.groups.values() for t in group]

    def issued(self) -> int:
        return sum(len(v) for v in self.tokens.values())


def before_failure(saver: Any, prefix: str, per_group: int, *, lag: Callable[[], None]) -> Before:
    """Run the three groups on ``saver``; ``lag()`` opens the lag window."""
    groups = {
        g: [f"{prefix}-{g}-{i}" for i in range(per_group)] for g in ("cut", "released", "late")
    }
    before = Before(groups)
    backend = saver.lease_backend()
    graph = chat_graph(saver)

    def lease_and_turn(thread_id: str, owner: str) -> Lease:
        lease = backend.try_acquire(thread_id, owner, 30.0)
        assert lease is not None, thread_id
        before.tokens.setdefault(thread_id, set()).add(lease.token)
        text = f"{owner} on {thread_id}"
        graph.invoke(turn_input(text), fenced(thread_id, lease.token))
        before.acked.setdefault(thread_id, []).append(text)
        return lease

    for thread_id in groups["cut"]:
        before.holders[thread_id] = lease_and_turn(thread_id, "cut-worker").token
    released = [lease_and_turn(t, "released-worker") for t in groups["released"]]
    lag()
    for lease in released:
        backend.release(lease)
        before.holders[lease.thread_id] = lease.token
    for thread_id in groups["late"]:
        before.holders[thread_id] = lease_and_turn(thread_id, "worker-a").token
    return before


@dataclass
class After:
    """What happened after the failure."""

    usable_after: dict[str, float] = field(default_factory=dict)
    """Thread -> seconds from the promotion until a new lease on it was granted (the thread
    is usable: nothing blocks it any more)."""
    turn_after: dict[str, float] = field(default_factory=dict)
    """Thread -> seconds from the promotion until its new leased turn was acknowledged
    (includes the harness' own queueing on a loaded machine)."""
    errors: dict[str, int] = field(default_factory=dict)
    """Error type -> how often a post-failure turn had to be retried."""
    tokens: dict[str, set[int]] = field(default_factory=dict)
    stale_tried: int = 0
    stale_accepted: int = 0

    def reissued(self, before: Before) -> int:
        """Tokens issued after the failure that had been issued before (same thread, or any)."""
        earlier = set().union(*before.tokens.values()) if before.tokens else set()
        return sum(1 for tokens in self.tokens.values() for token in tokens if token in earlier)

    def issued(self) -> int:
        return sum(len(v) for v in self.tokens.values())

    def slowest(self) -> float:
        return max(self.usable_after.values())

    def slowest_turn(self) -> float:
        return max(self.turn_after.values())


def _collect(after: After, backend: RecordingBackend, promoted_at: float) -> None:
    for thread_id, token, granted_at in backend.issued:
        after.tokens.setdefault(thread_id, set()).add(token)
        first = after.usable_after.get(thread_id)
        if first is None or granted_at - promoted_at < first:
            after.usable_after[thread_id] = granted_at - promoted_at


def after_failure(saver: Any, before: Before, promoted_at: float, *, workers: int = 8) -> After:
    """New leased turns on every thread (measured), then every earlier holder's late write."""
    after = After()
    backend = RecordingBackend(saver.lease_backend())
    graph = with_thread_lease(chat_graph(saver), backend, strategy="reject", ttl=30.0)
    lock = threading.Lock()

    def usable(thread_id: str) -> None:
        while time.monotonic() - promoted_at < GIVE_UP:
            try:
                graph.invoke(turn_input(f"after on {thread_id}"), thread_config(thread_id))
            except _RETRIED as exc:
                with lock:
                    after.errors[type(exc).__name__] = after.errors.get(type(exc).__name__, 0) + 1
                time.sleep(0.05)
                continue
            with lock:
                after.turn_after[thread_id] = time.monotonic() - promoted_at
            return

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(usable, before.threads))
    _collect(after, backend, promoted_at)
    bare = chat_graph(saver)
    for thread_id, token in before.holders.items():
        after.stale_tried += 1
        try:
            bare.invoke(turn_input(f"late write on {thread_id}"), fenced(thread_id, token))
        except StaleWriteError:
            continue
        after.stale_accepted += 1
    return after


async def aafter_failure(saver: Any, before: Before, promoted_at: float) -> After:
    """Async :func:`after_failure` (``ainvoke``, the async saver's own lease backend)."""
    after = After()
    backend = RecordingBackend(saver.lease_backend())
    graph = with_thread_lease(chat_graph(saver), backend, strategy="reject", ttl=30.0)

    async def usable(thread_id: str) -> None:
        while time.monotonic() - promoted_at < GIVE_UP:
            try:
                await graph.ainvoke(turn_input(f"after on {thread_id}"), thread_config(thread_id))
            except _RETRIED as exc:
                after.errors[type(exc).__name__] = after.errors.get(type(exc).__name__, 0) + 1
                await asyncio.sleep(0.05)
                continue
            after.turn_after[thread_id] = time.monotonic() - promoted_at
            return

    await asyncio.gather(*(usable(t) for t in before.threads))
    _collect(after, backend, promoted_at)
    bare = chat_graph(saver)
    for thread_id, token in before.holders.items():
        after.stale_tried += 1
        try:
            await bare.ainvoke(turn_input(f"late write on {thread_id}"), fenced(thread_id, token))
        except StaleWriteError:
            continue
        after.stale_accepted += 1
    return after
