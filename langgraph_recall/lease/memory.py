"""A process-local lease backend, for single-process apps and tests.

It serialises runs of one ``thread_id`` among the threads and tasks of **one**
process. It cannot coordinate several worker processes: use the lease backend of
``langgraph_recall.checkpoint.redis`` or ``.postgres`` for that.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from langgraph_recall.lease._protocol import Lease
from langgraph_recall.lease._tokens import CLOCK_BASE_MS, next_token, secret_part

__all__ = ["InMemoryLeaseBackend"]


@dataclass
class _Holder:
    owner: str
    token: int
    expires_at: float


class InMemoryLeaseBackend:
    """Leases and fencing tokens kept in a dict, guarded by a lock (sync and async API).

    Tokens follow the layout of the database backends (:mod:`~langgraph_recall.lease._tokens`):
    random low digits, strictly increasing per thread.

    Args:
        clock: Monotonic clock in seconds (injectable for tests).

    Example:
        ```python
        from langgraph_recall.lease.memory import InMemoryLeaseBackend

        backend = InMemoryLeaseBackend()
        lease = backend.try_acquire("chat-1", "worker-a", ttl=10.0)
        assert lease is not None and backend.current_token("chat-1") == lease.token
        assert backend.try_acquire("chat-1", "worker-b", ttl=10.0) is None
        backend.release(lease)
        assert backend.try_acquire("chat-1", "worker-b", ttl=10.0).token > lease.token
        ```
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._holders: dict[str, _Holder] = {}
        self._tokens: dict[str, int] = {}

    def _next(self, thread_id: str) -> int:
        now_ms = int(time.time() * 1000) - CLOCK_BASE_MS
        token = next_token(self._tokens.get(thread_id), now_ms=now_ms, secret=secret_part())
        self._tokens[thread_id] = token
        return token

    def try_acquire(self, thread_id: str, owner: str, ttl: float) -> Lease | None:
        """Take the lease if it is free or expired; ``None`` if someone else holds it."""
        with self._lock:
            now = self._clock()
            holder = self._holders.get(thread_id)
            if holder is not None and holder.expires_at > now:
                if holder.owner == owner:  # a retried acquisition gets its lease back
                    holder.expires_at = now + ttl
                    return Lease(thread_id=thread_id, owner=owner, token=holder.token)
                return None
            token = self._next(thread_id)
            self._tokens[thread_id] = token
            self._holders[thread_id] = _Holder(owner=owner, token=token, expires_at=now + ttl)
            return Lease(thread_id=thread_id, owner=owner, token=token)

    def renew(self, lease: Lease, ttl: float) -> bool:
        """Extend a held, unexpired lease; ``False`` if it was lost."""
        with self._lock:
            now = self._clock()
            holder = self._holders.get(lease.thread_id)
            if holder is None or holder.token != lease.token or holder.expires_at <= now:
                return False
            holder.expires_at = now + ttl
            return True

    def release(self, lease: Lease) -> None:
        """Give the lease up if ``lease`` still holds it (no-op otherwise)."""
        with self._lock:
            holder = self._holders.get(lease.thread_id)
            if holder is not None and holder.token == lease.token:
                del self._holders[lease.thread_id]

    def current_token(self, thread_id: str) -> int:
        """The thread's latest fencing token (0 if never leased)."""
        with self._lock:
            return self._tokens.get(thread_id, 0)

    def advance(self, thread_id: str) -> int:
        """Invalidate any lease on ``thread_id`` (e.g. on delete); returns the new token."""
        with self._lock:
            token = self._next(thread_id)
            self._holders.pop(thread_id, None)
            return token

    async def atry_acquire(self, thread_id: str, owner: str, ttl: float) -> Lease | None:
        """Async :meth:`try_acquire` (never blocks on I/O)."""
        return self.try_acquire(thread_id, owner, ttl)

    async def arenew(self, lease: Lease, ttl: float) -> bool:
        """Async :meth:`renew`."""
        return self.renew(lease, ttl)

    async def arelease(self, lease: Lease) -> None:
        """Async :meth:`release`."""
        self.release(lease)
