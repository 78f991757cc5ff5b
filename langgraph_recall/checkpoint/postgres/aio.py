"""The Postgres checkpointer :class:`AsyncPostgresSaver`.

The saver is written once, in ``aio.py`` (async); ``sync.py`` is generated from it by
``scripts/unasync.py``.
"""

# ruff: noqa: I001  (the unasync blocks keep the imports in their own order)
from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Any, TypeVar

# unasync: async-only
import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress

# unasync: end
# unasync: sync-only
# import threading
# from collections.abc import Iterator, Mapping, Sequence
# from contextlib import contextmanager
# unasync: end
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from psycopg import AsyncCursor
from psycopg.pq import TransactionStatus
from psycopg.rows import DictRow, dict_row

from langgraph_recall.telemetry import length, span
from langgraph_recall._pg.durability import SYNC_SETTINGS, check_replicas, checked_replicas_option
from langgraph_recall._pg.pool import DEFAULT_CONNECT_TIMEOUT, PoolConfig
from langgraph_recall.checkpoint import _config, _guard
from langgraph_recall.checkpoint._config import ThreadTTLConfig
from langgraph_recall.checkpoint.postgres import _common, _read, _retention, _sql
from langgraph_recall.checkpoint.postgres._retention import SweepResult
from langgraph_recall.errors import ConfigurationError

# unasync: async-only
from langgraph_recall._pg.run_async import (
    AsyncConn,
    AsyncConnector,
    abehind_pooler,
    abuild_pool,
    aprobe,
    arun_program,
)
from langgraph_recall.checkpoint._bridge import LoopBridgedSyncMethods
from langgraph_recall.checkpoint.postgres.lease import AsyncPostgresLeaseBackend

# unasync: end
# unasync: sync-only
# from langgraph_recall._pg.run_sync import SyncConn, SyncConnector, build_pool, probe
# from langgraph_recall._pg.run_sync import behind_pooler, run_program
# from langgraph_recall.checkpoint._threaded import ThreadedAsyncMethods
# from langgraph_recall.checkpoint.postgres._retention import ThreadedSweep
# from langgraph_recall.checkpoint.postgres.lease import PostgresLeaseBackend
# unasync: end

__all__ = ["AsyncPostgresSaver"]

_PG: dict[str, str | bool | int | float] = {
    "db.system.name": "postgresql"
}  # the spans' attributes: no thread or user ids

logger = logging.getLogger(__name__)

R = TypeVar("R")


# unasync: async-only
class _SaverBase(LoopBridgedSyncMethods):
    """The sync methods of ``AsyncPostgresSaver``: bridged onto its loop."""

    sync_twin = "PostgresSaver"
    loop: asyncio.AbstractEventLoop  # known from construction (made on a running loop)


# unasync: end
# unasync: sync-only
# class _SaverBase(ThreadedSweep, ThreadedAsyncMethods):
#     """The ``a*`` methods of ``PostgresSaver``: its sync ones, in a worker thread."""
# unasync: end


class AsyncPostgresSaver(_SaverBase):
    """Postgres checkpointer for production: pooled, lock-free, with retention and fencing.

    Same tables and migrations as ``langgraph-checkpoint-postgres`` (data written by either
    saver is readable by the other), plus ``prune`` (DeltaChannel-safe), ``copy_thread``,
    ``delete_for_runs``, TTL retention with :meth:`asweep`, keep-last-N per put, per-thread lease
    fencing, and a :meth:`setup` that also works inside a transaction. With a pool, calls
    run concurrently (no instance lock) and a dropped connection is replaced on the next
    call; a single connection is shared under a lock and cannot reconnect.

    The sync and async savers are twins (same options, same tables). The async saver is
    constructed inside a running event loop, and its sync methods may be called from other
    threads only; the sync saver runs its ``a*`` methods in a worker thread.

    Args:
        conn: A connection pool (recommended) or a single connection (``AsyncConnectionPool``
            / ``AsyncConnection``), opened with ``autocommit=True`` and ``row_factory=dict_row``.
        serde: Serializer for channel values and writes (e.g. an ``EncryptedSerializer``).
        ttl: ``{"default_ttl": minutes}`` (a ``ThreadTTLConfig``, as on the Redis savers):
            :meth:`asweep` deletes threads idle (no write) for longer. ``refresh_on_read``
            is refused (idle time counts from the last write).
        keep_last: Keep only the newest N checkpoints per thread and namespace: every put
            trims the namespace it writes, in its transaction (``DeltaChannel`` chains are
            kept long enough), as on the Redis savers.
        replicas: Acknowledge a write only once this many standbys hold it: :meth:`setup`
            checks that the server's commits wait for them (``synchronous_standby_names``,
            ``synchronous_commit``) and raises ``ConfigurationError`` saying what to set if
            not. ``0`` (default): whatever the server does.
    """

    def __init__(
        self,
        conn: AsyncConn,
        *,
        serde: SerializerProtocol | None = None,
        ttl: ThreadTTLConfig | None = None,
        keep_last: int | None = None,
        replicas: int = 0,
    ) -> None:
        self._connector = AsyncConnector(conn)
        super().__init__(serde=serde)
        self.conn = conn
        self.lock = self._connector.lock
        self.ttl = _common.thread_ttl_seconds(ttl)
        self.keep_last = _common.check_keep_last(keep_last)
        self.replicas = checked_replicas_option(replicas)
        # unasync: async-only
        self.loop = asyncio.get_running_loop()
        self._sweeper: asyncio.Task[None] | None = None
        # unasync: end
        # unasync: sync-only
        # self._sweeper: threading.Thread | None = None
        # self._sweeper_stop = threading.Event()
        # unasync: end

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str,
        *,
        pipeline: bool = False,
        serde: SerializerProtocol | None = None,
        pool_config: PoolConfig | None = None,
        prepare_threshold: int | None = 0,
        ttl: ThreadTTLConfig | None = None,
        keep_last: int | None = None,
        sweep_interval: float | timedelta | None = None,
        connect_timeout: int = DEFAULT_CONNECT_TIMEOUT,
        replicas: int = 0,
    ) -> AsyncIterator[AsyncPostgresSaver]:
        """Build a saver on a correctly configured connection pool, closed on exit.

        Args:
            conn_string: libpq DSN or ``postgresql://`` URI.
            pipeline: Unsupported with a pool (kept for signature compatibility).
            serde: Serializer for values and writes.
            pool_config: Pool sizes and timeouts (:class:`PoolConfig`).
            prepare_threshold: psycopg ``prepare_threshold``; ``None`` disables server-side
                prepared statements (the pool does so by itself on connections that go
                through a pooler such as PgBouncer in transaction mode).
            ttl: ``{"default_ttl": minutes}``: threads idle longer are deleted by :meth:`asweep`.
            keep_last: Checkpoints kept per thread/namespace (applied by every put).
            sweep_interval: If set, run :meth:`asweep` in the background this often.
            connect_timeout: Seconds to wait for the server when connecting.
            replicas: Standbys a commit must wait for (checked by :meth:`setup`).

        Raises:
            InvalidConnectionStringError: The DSN is malformed.
            BackendUnavailableError: The server cannot be reached (message names host:port).
        """
        if pipeline:
            raise ConfigurationError(
                "pipeline=True needs a single connection; from_conn_string builds a pool "
                "(each write already runs pipelined in one transaction)"
            )
        await aprobe(conn_string, connect_timeout, (pool_config or {}).get("kwargs"))
        pool = await abuild_pool(conn_string, pool_config, prepare_threshold, connect_timeout)
        saver = None
        try:
            saver = cls(pool, serde=serde, ttl=ttl, keep_last=keep_last, replicas=replicas)
            if sweep_interval is not None:
                saver.start_sweeper(sweep_interval)
            yield saver
        finally:
            if saver is not None:
                await saver.stop_sweeper()
            await pool.close()

    def get_next_version(self, current: str | None, channel: None) -> str:
        """The channel version after ``current``, in the official saver's format."""
        return _read.next_version(current)

    # unasync: async-only
    async def asetup(self) -> None:
        """:meth:`setup` under the name ``AsyncRedisSaver`` and the async store also take
        (``await saver.setup()`` is LangGraph's spelling; both do the same)."""
        await self.setup()

    # unasync: end
    async def setup(self) -> None:
        """Create or migrate the tables (official migrations first, then ours).

        Idempotent and safe to call from several workers at once (advisory lock). Inside
        an open transaction (a connection with ``autocommit=False`` or an explicit
        ``conn.transaction()``) the ``CREATE INDEX CONCURRENTLY`` steps run as plain
        ``CREATE INDEX`` so everything commits or rolls back with that transaction; so they
        do behind a pooler (PgBouncer), where a session lock taken in one transaction could
        stay held on a server connection another transaction never reaches.
        """
        async with self._connector.connection() as conn:
            status = conn.info.transaction_status
            in_transaction = not conn.autocommit or status != TransactionStatus.IDLE
            in_transaction = in_transaction or await abehind_pooler(conn)
            async with conn.cursor(row_factory=dict_row) as cur:
                if self.replicas:
                    await cur.execute(SYNC_SETTINGS)
                    settings = await cur.fetchone()
                    assert settings is not None
                    check_replicas(
                        self._connector.target,
                        self.replicas,
                        settings["commit_mode"],
                        settings["standby_names"],
                    )
                if in_transaction:
                    async with conn.transaction():
                        await self._take_migration_lock(cur, _sql.TRY_MIGRATION_XACT_LOCK)
                        await arun_program(cur, _common.setup_program(in_transaction=True))
                    return
                await self._take_migration_lock(cur, _sql.TRY_MIGRATION_LOCK)
                try:
                    await arun_program(cur, _common.setup_program(in_transaction=False))
                finally:
                    await cur.execute(_sql.MIGRATION_UNLOCK, (_sql.MIGRATION_LOCK_KEY,))

    async def _take_migration_lock(self, cur: AsyncCursor[DictRow], sql: str) -> None:
        deadline = time.monotonic() + _common.MIGRATION_LOCK_TIMEOUT
        while True:
            await cur.execute(sql, (_sql.MIGRATION_LOCK_KEY,))
            row = await cur.fetchone()
            if row is not None and row["locked"]:
                return
            if time.monotonic() > deadline:
                raise _common.migration_lock_timed_out(self._connector.target)
            await asyncio.sleep(_common.MIGRATION_LOCK_POLL)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (or the thread's latest), with pending writes.

        ``thread_id`` / ``checkpoint_ns`` / ``checkpoint_id`` are ``str()``-ed like LangGraph
        does, so ``{"thread_id": 5}`` reads the thread ``"5"``.

        Raises:
            ConfigurationError: ``thread_id`` is missing or not storable text.
        """
        with span("checkpoint get_tuple", _PG) as current:
            program = _read.get_tuple_program(self.serde, _config.normalized_config(config))
            async with self._connector.cursor() as cur:
                row = await arun_program(cur, program)
            if current is not None:
                current.set_attribute("langgraph_recall.checkpoint.found", row is not None)
            return None if row is None else await self._decoded(row)

    async def _decoded(self, row: DictRow) -> CheckpointTuple:
        """Decode a row (after the connection went back to the pool)."""
        # unasync: async-only
        if _read.pending_writes_size(row) > _read.INLINE_DECODE_BYTES:  # not on the loop
            return await asyncio.to_thread(_read.checkpoint_tuple, self.serde, row)
        # unasync: end
        return _read.checkpoint_tuple(self.serde, row)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """List checkpoints, newest first (metadata ``filter``, ``before``, ``limit``).

        Rows are fetched and the connection returned before the first tuple is yielded, so a
        slow consumer never holds a pooled connection (or the single-connection lock).
        """
        args = _common.list_args(config, filter, before, limit)
        program = _read.list_program(self.serde, args.config, args.filter, args.before, args.limit)
        async with self._connector.cursor() as cur:
            rows = await arun_program(cur, program)
        for row in rows:
            yield await self._decoded(row)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """``DeltaChannel`` writes and seed along the parent chain (config validated first)."""
        program = _read.delta_history_program(
            self.serde, _config.normalized_config(config), _config.checked_channels(channels)
        )
        async with self._connector.cursor() as cur:
            return await arun_program(cur, program)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint atomically (fenced if the config carries a lease token).

        Raises:
            StaleWriteError: The config's fencing token is no longer the thread's current
                one; nothing was written.
        """
        with span("checkpoint put", _PG):
            missing = await self._put_once(config, checkpoint, metadata, new_versions)
            if missing:  # reused values with no stored blob: store them from the checkpoint
                widened = _common.widened_versions(checkpoint, new_versions, missing)
                if await self._put_once(config, checkpoint, metadata, widened):
                    raise AssertionError("a put that reuses nothing reported a missing blob")
            return _common.put_config(config, checkpoint)

    async def _put_once(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Sequence[str]:
        """One attempt of :meth:`aput`: the reused channels whose blob is missing (then
        nothing was written), or ``[]`` once stored."""
        program, next_config = _common.put_program(
            self.serde, config, checkpoint, metadata, new_versions
        )
        if self.keep_last is not None:
            written = next_config["configurable"]
            program = _retention.put_keeping_last(
                program, written["thread_id"], written["checkpoint_ns"], self.keep_last
            )
        return await self._connector.run(program)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes atomically and idempotently (fenced like a put)."""
        with span(
            "checkpoint put_writes", {**_PG, "langgraph_recall.checkpoint.writes": length(writes)}
        ):
            await self._connector.run(
                _common.put_writes_program(self.serde, config, writes, task_id, task_path)
            )

    async def aforget_threads(self, thread_ids: Sequence[str]) -> None:
        """Erase threads: delete them (as a thread delete does) in one transaction and
        resample the checkpoint tables' planner statistics (``ANALYZE``), so nothing of
        them is left in any row or in ``pg_stats``. What :func:`~langgraph_recall.forget_user`
        uses; costs one ``ANALYZE`` of the checkpoint tables (sampled, bounded)."""
        ids = _config.checked_ids(thread_ids)
        if ids:
            await self._connector.run(_common.forget_threads_program(ids))

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete a thread (all namespaces) with its lease, atomically; a holder's later
        writes are refused."""
        thread_id = _config.checked_thread_id(thread_id)
        await self._connector.run(_common.delete_threads_program([thread_id]))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread's whole history (checkpoints, blobs, writes; all namespaces)."""
        source = _config.checked_thread_id(source_thread_id)
        target = _config.checked_thread_id(target_thread_id)
        await self._connector.run(_common.copy_thread_program(source, target))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes and unreferenced blobs) of runs."""
        ids = _config.checked_ids(run_ids, "run_ids")
        if ids:
            await self._connector.run(_common.delete_for_runs_program(ids))

    async def aprune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: str = "keep_latest",
        keep_last: int | None = None,
    ) -> None:
        """Prune threads: keep the newest checkpoint of each namespace (``"keep_latest"``),
        the newest ``keep_last`` of each (``keep_last=N``, whatever the strategy, as on
        the official Redis saver), or nothing (``"delete"``, or ``keep_last=0``: the
        threads are deleted).

        Keeping is per namespace and ``DeltaChannel``-safe: ancestors (with their writes)
        back to the nearest stored snapshot of each delta channel are kept too, and only
        blobs no kept checkpoint references are deleted. Each thread is pruned in its own
        REPEATABLE READ transaction. Deleting also advances the fencing tokens.
        """
        ids, keep = _retention.check_prune_args(thread_ids, strategy, keep_last)
        if not ids:
            return
        if keep == 0:
            await self._connector.run(_common.delete_threads_program(ids))
            return
        busy = []
        for thread_id in ids:
            program = _retention.keep_last_program(thread_id, keep)
            if await self._connector.run(program, pipeline=False) is None:
                busy.append(thread_id)
        if busy:  # the others are pruned; a leased thread is only changed by its holder
            raise _guard.busy_error(busy[0] if len(busy) == 1 else busy, "prune")

    async def asweep(self) -> SweepResult:
        """Apply the TTL once: delete the threads idle (no write) longer than ``ttl``, except
        a thread with a live lease or a write in flight. (``keep_last`` needs no sweep:
        every put applies it.)"""
        result = SweepResult()
        if self.ttl is not None:
            for _ in range(_retention.MAX_SWEEP_BATCHES):
                expired = await self._connector.run(_retention.sweep_ttl_program(self.ttl))
                result.expired_threads.extend(expired)
                if len(expired) < _common.SWEEP_BATCH:
                    break
        return result

    def lease_backend(self) -> AsyncPostgresLeaseBackend:
        """An :class:`AsyncPostgresLeaseBackend` on this saver's pool/connection."""
        return AsyncPostgresLeaseBackend(self.conn, lock=self.lock)

    # ----------------------------------------------------------------- background sweeper
    # unasync: async-only

    def start_sweeper(self, interval: float | timedelta = 300.0) -> None:
        """Run :meth:`asweep` every ``interval`` (first after one interval) as an asyncio task."""
        seconds = self._sweep_interval(interval)
        if self._sweeper is not None and not self._sweeper.done():
            return

        async def loop() -> None:
            while True:
                await asyncio.sleep(seconds)
                try:
                    await self.asweep()
                except Exception:
                    logger.warning("checkpoint retention sweep failed", exc_info=True)

        self._sweeper = self.loop.create_task(loop(), name="lgm-postgres-sweeper")

    async def stop_sweeper(self) -> None:
        """Cancel the background sweeper (no-op if not running)."""
        task, self._sweeper = self._sweeper, None
        if task is not None:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task

    # unasync: end
    # unasync: sync-only
    #
    # def start_sweeper(self, interval: float | timedelta = 300.0) -> None:
    #     """Run :meth:`sweep` every ``interval`` (first after one interval) in a daemon thread."""
    #     seconds = self._sweep_interval(interval)
    #     if self._sweeper is not None and self._sweeper.is_alive():
    #         return
    #     self._sweeper_stop = stop = threading.Event()
    #
    #     def loop() -> None:
    #         while not stop.wait(seconds):
    #             try:
    #                 self.sweep()
    #             except Exception:
    #                 logger.warning("checkpoint retention sweep failed", exc_info=True)
    #
    #     self._sweeper = threading.Thread(target=loop, name="lgm-postgres-sweeper", daemon=True)
    #     self._sweeper.start()
    #
    # def stop_sweeper(self, timeout: float = 10.0) -> None:
    #     """Stop the background sweeper (no-op if not running)."""
    #     self._sweeper_stop.set()
    #     if self._sweeper is not None:
    #         self._sweeper.join(timeout)
    #         self._sweeper = None
    #
    # unasync: end
    def _sweep_interval(self, interval: float | timedelta) -> float:
        if self.ttl is None:
            raise ConfigurationError(
                "nothing to sweep: create the saver with ttl={'default_ttl': minutes} "
                "(keep_last= is applied by every put, it needs no sweeper)"
            )
        seconds = _common.retention_seconds(interval, "sweep interval")
        assert seconds is not None
        return seconds

    # unasync: async-only
    def sweep(self) -> SweepResult:
        """Sync bridge to :meth:`asweep` (call from a non-loop thread)."""
        return self._bridge(self.asweep())

    # unasync: end
