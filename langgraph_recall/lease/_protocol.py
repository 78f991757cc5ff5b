"""The contract between the per-thread lease wrapper and the backends that store leases.

A *lease* gives one worker the exclusive right to run a ``thread_id`` for ``ttl``
seconds (renewed while the run lasts). Each successful acquisition returns a
**fencing token**: an integer that strictly increases per thread, carries random digits
nobody else can guess (:mod:`langgraph_recall.lease._tokens`), and is never handed out
twice, not even by a server that lost recent writes. While a graph runs
under a lease, the token travels in ``config["configurable"][FENCE_CONFIG_KEY]``; our
checkpointers then check, *atomically with the write*, that the token is still the
thread's current one and raise :class:`~langgraph_recall.errors.StaleWriteError`
(writing nothing) otherwise. ``delete_thread`` advances the thread's token too, so a
late write from a worker that started before the delete cannot resurrect the thread.

Every lease also records the *epoch* of the server it was taken or last renewed on (the
server's history: Postgres' system identifier and timeline, Redis' run id). A lease whose
epoch is gone -- the server restarted from a snapshot or a replica was promoted since -- no
longer makes its thread busy: its holder's connection died with that history.

Backends: ``langgraph_recall.checkpoint.redis`` (a lease key and a token key per thread,
in Lua) and ``langgraph_recall.checkpoint.postgres`` (a lease row updated with
compare-and-set).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

__all__ = ["FENCE_CONFIG_KEY", "AsyncLeaseBackend", "Lease", "LeaseBackend"]

FENCE_CONFIG_KEY = "__lgm_fence__"
"""``configurable`` key holding the fencing token of the lease a run holds.

The ``__`` prefix keeps LangGraph from copying it into checkpoint metadata."""


@dataclass(frozen=True)
class Lease:
    """A held lease on one thread.

    ``owner`` and ``token`` are the holder's secrets (with them one can renew, release or
    write through the lease), so the ``repr`` never shows them.

    Attributes:
        thread_id: The leased thread.
        owner: Unique, unguessable id of the holder (one per acquisition).
        token: Fencing token; strictly increasing per thread across acquisitions and
            deletes, with random low digits.

    Example:
        ```python
        from langgraph_recall.lease import Lease

        lease = Lease("chat-1", "host:1:secret-owner", 123_456_789)
        assert "123456789" not in repr(lease) and "secret-owner" not in repr(lease)
        ```
    """

    thread_id: str
    owner: str = field(repr=False)
    token: int = field(repr=False)

    def __repr__(self) -> str:
        return f"Lease(thread_id={self.thread_id!r}, owner=<hidden>, token=<hidden>)"


@runtime_checkable
class LeaseBackend(Protocol):
    """Synchronous lease storage (implemented by each checkpointer backend)."""

    def try_acquire(self, thread_id: str, owner: str, ttl: float) -> Lease | None:
        """Take the lease if it is free or expired; ``None`` if someone else holds it."""
        ...

    def renew(self, lease: Lease, ttl: float) -> bool:
        """Extend a held lease; ``False`` if it was lost (expired and taken, or deleted)."""
        ...

    def release(self, lease: Lease) -> None:
        """Give the lease up if still held by ``lease.owner`` (no-op otherwise)."""
        ...


@runtime_checkable
class AsyncLeaseBackend(Protocol):
    """Asynchronous twin of :class:`LeaseBackend`."""

    async def atry_acquire(self, thread_id: str, owner: str, ttl: float) -> Lease | None:
        """Async :meth:`LeaseBackend.try_acquire`."""
        ...

    async def arenew(self, lease: Lease, ttl: float) -> bool:
        """Async :meth:`LeaseBackend.renew`."""
        ...

    async def arelease(self, lease: Lease) -> None:
        """Async :meth:`LeaseBackend.release`."""
        ...
