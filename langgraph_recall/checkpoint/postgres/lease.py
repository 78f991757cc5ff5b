"""Per-thread leases with fencing tokens in Postgres (table ``lgm_thread_leases``).

A lease row is taken with one compare-and-set statement (``INSERT ... ON CONFLICT DO UPDATE
... WHERE <not live> RETURNING token``), so two workers can never both hold a thread. A
token is the thread's sequence -- floored at the server clock, so a promoted standby that
lost the latest rows never repeats one -- followed by six secret digits this worker draws;
each row records the server epoch (system identifier + timeline) it was taken under, and a
lease from an ended epoch leaves its thread free at once (see
:mod:`~langgraph_recall.checkpoint.postgres._lease_sql`). ``delete_thread`` drops the
thread's lease row with its data. The acquisition first takes the thread's exclusive advisory lock,
so it waits for writes in flight and every later write sees it. The savers' write guard (in
the same statement as each write) refuses a write without the holder's token while the lease
is live, and one whose token is not current (see :mod:`langgraph_recall.checkpoint._guard`).
The table and the guard are created by
``PostgresSaver.setup()`` / ``AsyncPostgresSaver.setup()``.
"""

from __future__ import annotations

import asyncio
import threading

from langgraph_recall._pg.run_async import AsyncConn, AsyncConnector
from langgraph_recall._pg.run_sync import SyncConn, SyncConnector
from langgraph_recall.checkpoint.postgres import _common, _sql
from langgraph_recall.lease import Lease
from langgraph_recall.lease._tokens import secret_part

__all__ = ["AsyncPostgresLeaseBackend", "PostgresLeaseBackend"]


def _acquisition(thread_id: str, owner: str, ttl: float) -> dict[str, object]:
    """``ACQUIRE_LEASE``'s parameters; the new token's secret digits are drawn here, from
    this worker's CSPRNG (never by the server, whose ``random()`` is not one)."""
    return {"thread": thread_id, "owner": owner, "ttl": float(ttl), "secret": secret_part()}


class PostgresLeaseBackend:
    """Synchronous :class:`~langgraph_recall.lease._protocol.LeaseBackend` on Postgres.

    Args:
        conn: A ``ConnectionPool`` or ``Connection`` (``autocommit=True``), usually the
            saver's: use ``saver.lease_backend()``.
        lock: Lock shared with a saver using the same single connection.

    Example:
        ```python
        import uuid

        from langgraph_recall.checkpoint.postgres import PostgresSaver

        thread_id = f"thread-{uuid.uuid4()}"
        with PostgresSaver.from_conn_string(DB_URI) as saver:
            saver.setup()
            leases = saver.lease_backend()
            lease = leases.try_acquire(thread_id, owner="worker-a", ttl=30.0)
            assert lease is not None
            try:
                # another worker is refused while the lease is held
                assert leases.try_acquire(thread_id, owner="worker-b", ttl=30.0) is None
            finally:
                leases.release(lease)
        ```
    """

    def __init__(self, conn: SyncConn, *, lock: threading.Lock | None = None) -> None:
        self._connector = SyncConnector(conn, lock)

    def try_acquire(self, thread_id: str, owner: str, ttl: float) -> Lease | None:
        """Take the lease if free or expired; ``None`` if another owner holds it."""
        _common.check_lease_args(thread_id, owner, ttl)
        with self._connector.cursor() as cur:
            cur.execute(_sql.ACQUIRE_LEASE, _acquisition(thread_id, owner, ttl))
            row = cur.fetchone()
        return None if row is None else Lease(thread_id, owner, int(row["token"]))

    def renew(self, lease: Lease, ttl: float) -> bool:
        """Extend the lease; ``False`` if it was taken over or the thread was deleted."""
        _common.check_lease_args(lease.thread_id, lease.owner, ttl)
        with self._connector.cursor() as cur:
            cur.execute(_sql.RENEW_LEASE, (float(ttl), lease.thread_id, lease.owner, lease.token))
            return cur.fetchone() is not None

    def release(self, lease: Lease) -> None:
        """Free the lease if ``lease`` still holds it (no-op otherwise)."""
        with self._connector.cursor() as cur:
            cur.execute(_sql.RELEASE_LEASE, (lease.thread_id, lease.owner, lease.token))


class AsyncPostgresLeaseBackend:
    """Asynchronous :class:`~langgraph_recall.lease._protocol.AsyncLeaseBackend` on Postgres.

    Args:
        conn: An ``AsyncConnectionPool`` or ``AsyncConnection`` (``autocommit=True``),
            usually the saver's: use ``saver.lease_backend()``.
        lock: Lock shared with a saver using the same single connection.

    Example:
        ```python
        import uuid

        from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(DB_URI) as saver:
            await saver.setup()
            leases = saver.lease_backend()
            lease = await leases.atry_acquire(f"thread-{uuid.uuid4()}", "worker-a", ttl=30.0)
            assert lease is not None
            await leases.arelease(lease)
        ```
    """

    def __init__(self, conn: AsyncConn, *, lock: asyncio.Lock | None = None) -> None:
        self._connector = AsyncConnector(conn, lock)

    async def atry_acquire(self, thread_id: str, owner: str, ttl: float) -> Lease | None:
        """Async :meth:`PostgresLeaseBackend.try_acquire`."""
        _common.check_lease_args(thread_id, owner, ttl)
        async with self._connector.cursor() as cur:
            await cur.execute(_sql.ACQUIRE_LEASE, _acquisition(thread_id, owner, ttl))
            row = await cur.fetchone()
        return None if row is None else Lease(thread_id, owner, int(row["token"]))

    async def arenew(self, lease: Lease, ttl: float) -> bool:
        """Async :meth:`PostgresLeaseBackend.renew`."""
        _common.check_lease_args(lease.thread_id, lease.owner, ttl)
        async with self._connector.cursor() as cur:
            await cur.execute(
                _sql.RENEW_LEASE, (float(ttl), lease.thread_id, lease.owner, lease.token)
            )
            return await cur.fetchone() is not None

    async def arelease(self, lease: Lease) -> None:
        """Async :meth:`PostgresLeaseBackend.release`."""
        async with self._connector.cursor() as cur:
            await cur.execute(_sql.RELEASE_LEASE, (lease.thread_id, lease.owner, lease.token))
