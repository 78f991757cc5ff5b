"""Asynchronous Postgres checkpointer: :class:`AsyncPostgresSaver`."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Coroutine, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from datetime import timedelta
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver as _OfficialAsyncPostgresSaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from psycopg import AsyncCursor
from psycopg.pq import TransactionStatus
from psycopg.rows import DictRow, dict_row

from langgraph_memory._pg.pool import PoolConfig
from langgraph_memory._pg.run_async import (
    AsyncConn,
    AsyncConnector,
    abuild_pool,
    aprobe,
    arun_program,
)
from langgraph_memory.checkpoint import _config, _guard
from langgraph_memory.checkpoint.postgres import _common, _read, _retention, _sql
from langgraph_memory.checkpoint.postgres._retention import SweepResult
from langgraph_memory.checkpoint.postgres.lease import AsyncPostgresLeaseBackend
from langgraph_memory.errors import ConfigurationError, SyncCallOnEventLoopError

__all__ = ["AsyncPostgresSaver"]

logger = logging.getLogger(__name__)

R = TypeVar("R")


class AsyncPostgresSaver(_OfficialAsyncPostgresSaver):
    """Async Postgres checkpointer for production: pooled, lock-free, retention, fencing.

    The async twin of :class:`~langgraph_memory.checkpoint.postgres.PostgresSaver` (same
    options, same tables). Construct it inside a running event loop; its sync methods
    may be called from other threads only.

    Args:
        conn: An ``AsyncConnectionPool`` (recommended) or ``AsyncConnection``
            (``autocommit=True``, ``row_factory=dict_row``).
        serde: Serializer for channel values and writes.
        ttl: Delete threads idle for longer than this (seconds or ``timedelta``) on sweep.
        keep_last: Keep only the newest N checkpoints per thread and namespace on sweep.

    Example:
        ```python
        from langgraph_memory.checkpoint.postgres import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(dsn) as saver:
            await saver.setup()
            graph = builder.compile(checkpointer=saver)
            await graph.ainvoke(inputs, {"configurable": {"thread_id": "t1"}})
        ```
    """

    def __init__(
        self,
        conn: AsyncConn,
        *,
        serde: SerializerProtocol | None = None,
        ttl: float | timedelta | None = None,
        keep_last: int | None = None,
    ) -> None:
        connector = AsyncConnector(conn)
        super().__init__(conn, None, serde)
        connector.lock = self.lock
        self._connector = connector
        self.ttl = _common.retention_seconds(ttl, "ttl")
        self.keep_last = _common.check_keep_last(keep_last)
        self._sweeper: asyncio.Task[None] | None = None

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
        ttl: float | timedelta | None = None,
        keep_last: int | None = None,
        sweep_interval: float | timedelta | None = None,
        connect_timeout: int = _common.DEFAULT_CONNECT_TIMEOUT,
    ) -> AsyncIterator[AsyncPostgresSaver]:
        """Build a saver on a correctly configured async pool, closed on exit.

        Same arguments as ``PostgresSaver.from_conn_string``.

        Raises:
            InvalidConnectionStringError: The DSN is malformed.
            BackendUnavailableError: The server cannot be reached (message names host:port).

        Example:
            ```python
            async with AsyncPostgresSaver.from_conn_string(
                dsn, pool_config={"max_size": 16}, prepare_threshold=None
            ) as saver:
                await saver.setup()
            ```
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
            saver = cls(pool, serde=serde, ttl=ttl, keep_last=keep_last)
            if sweep_interval is not None:
                saver.start_sweeper(sweep_interval)
            yield saver
        finally:
            if saver is not None:
                await saver.stop_sweeper()
            await pool.close()

    @asynccontextmanager
    async def _cursor(self, *, pipeline: bool = False) -> AsyncIterator[AsyncCursor[DictRow]]:
        async with self._connector.cursor(transaction=pipeline, pipeline=pipeline) as cur:
            yield cur

    async def asetup(self) -> None:
        """:meth:`setup` under the name ``AsyncRedisSaver`` and the async store also take
        (``await saver.setup()`` is LangGraph's spelling; both do the same)."""
        await self.setup()

    async def setup(self) -> None:
        """Create or migrate the tables; works inside or outside a transaction.

        See ``PostgresSaver.setup``.

        Example:
            ```python
            await saver.setup()
            ```
        """
        async with self._connector.connection() as conn:
            status = conn.info.transaction_status
            in_transaction = not conn.autocommit or status != TransactionStatus.IDLE
            async with conn.cursor(row_factory=dict_row) as cur:
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

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint atomically (fenced if the config carries a lease token).

        Raises:
            StaleWriteError: The fencing token is stale; nothing was written.
        """
        program, next_config = _common.put_program(self, config, checkpoint, metadata, new_versions)
        await self._connector.run(program)
        return next_config

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes atomically and idempotently (fenced like ``aput``)."""
        await self._connector.run(
            _common.put_writes_program(self, config, writes, task_id, task_path)
        )

    async def aforget_threads(self, thread_ids: Sequence[str]) -> None:
        """Erase threads: delete them in one transaction and resample the checkpoint
        tables' planner statistics (see ``PostgresSaver.forget_threads``)."""
        ids = _config.checked_ids(thread_ids)
        if ids:
            await self._connector.run(_common.forget_threads_program(ids))

    def forget_threads(self, thread_ids: Sequence[str]) -> None:
        """Sync bridge to :meth:`aforget_threads` (call from a non-loop thread)."""
        self._bridge(self.aforget_threads(thread_ids))

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
        keep_last: int = 1,
    ) -> None:
        """Prune threads; see ``PostgresSaver.prune`` (DeltaChannel-safe)."""
        ids = _retention.check_prune_args(thread_ids, strategy, keep_last)
        if not ids:
            return
        if strategy == "delete":
            await self._connector.run(_common.delete_threads_program(ids))
            return
        keep = 1 if strategy == "keep_latest" else keep_last
        busy = []
        for thread_id in ids:
            program = _retention.keep_last_program(thread_id, keep)
            if await self._connector.run(program, pipeline=False) is None:
                busy.append(thread_id)
        if busy:  # the others are pruned; a leased thread is only changed by its holder
            raise _guard.busy_error(busy[0] if len(busy) == 1 else busy, "prune")

    async def asweep(self) -> SweepResult:
        """Apply retention once; see ``PostgresSaver.sweep``.

        Example:
            ```python
            result = await saver.asweep()
            ```
        """
        result = SweepResult()
        ttl, keep_last = self.ttl, self.keep_last
        if ttl is not None:
            for _ in range(_retention.MAX_SWEEP_BATCHES):
                expired = await self._connector.run(_retention.sweep_ttl_program(ttl))
                result.expired_threads.extend(expired)
                if len(expired) < _common.SWEEP_BATCH:
                    break
        if keep_last is not None:
            for _ in range(_retention.MAX_SWEEP_BATCHES):
                dirty = await self._connector.run(_retention.dirty_threads_program())
                for thread_id in dirty:
                    program = _retention.keep_last_program(
                        thread_id, keep_last, mark_swept=True, wait=False
                    )
                    # None: leased or being written -- it stays dirty for the next sweep
                    pruned = await self._connector.run(program, pipeline=False)
                    result.pruned_checkpoints += pruned or 0
                if len(dirty) < _common.SWEEP_BATCH:
                    break
        return result

    def start_sweeper(self, interval: float | timedelta = 300.0) -> None:
        """Run :meth:`asweep` every ``interval`` (first after one interval) as an asyncio task.

        Example:
            ```python
            saver.start_sweeper(60)
            ...
            await saver.stop_sweeper()
            ```
        """
        if self.ttl is None and self.keep_last is None:
            raise ConfigurationError("nothing to sweep: create the saver with ttl= or keep_last=")
        seconds = _common.retention_seconds(interval, "sweep interval")
        assert seconds is not None
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
        """Cancel the background sweeper (no-op if not running).

        Example:
            ```python
            await saver.stop_sweeper()
            ```
        """
        task, self._sweeper = self._sweeper, None
        if task is not None:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task

    def lease_backend(self) -> AsyncPostgresLeaseBackend:
        """An :class:`AsyncPostgresLeaseBackend` on this saver's pool/connection.

        Example:
            ```python
            lease = await saver.lease_backend().atry_acquire("thread-1", "worker-a", 30)
            ```
        """
        return AsyncPostgresLeaseBackend(self.conn, lock=self.lock)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """List checkpoints, newest first; the connection is returned before yielding.

        Example:
            ```python
            async for tup in saver.alist({"configurable": {"thread_id": "t1"}}, limit=5):
                print(tup.checkpoint["id"])
            ```
        """
        args = _common.list_args(config, filter, before, limit)
        rows = [
            t
            async for t in super().alist(
                args.config, filter=args.filter, before=args.before, limit=args.limit
            )
        ]
        for row in rows:
            yield row

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (or the thread's latest), with pending writes.

        Ids are ``str()``-ed like LangGraph does (see ``PostgresSaver.get_tuple``).

        Raises:
            ConfigurationError: ``thread_id`` is missing or not storable text.

        Example:
            ```python
            tup = await saver.aget_tuple({"configurable": {"thread_id": "t1"}})
            ```
        """
        config = _config.normalized_config(config)
        query, args = _read.get_tuple_query(config)
        async with self._connector.cursor() as cur:
            await cur.execute(query, args)
            row = await cur.fetchone()
            if row is None:
                return None
            if _read.needs_sends_migration(row):
                parent = [row["parent_checkpoint_id"]]
                await cur.execute(self.SELECT_PENDING_SENDS_SQL, (args[0], parent))
                _read.migrate_sends(self, row, await cur.fetchone())
        # decoded after the connection went back to the pool
        return await self._load_checkpoint_tuple(row)

    async def _load_checkpoint_tuple(self, value: DictRow) -> CheckpointTuple:
        """Decode a row; small pending writes on the loop (no thread hop), large in a thread."""
        if _read.pending_writes_size(value) > _read.INLINE_DECODE_BYTES:
            return await super()._load_checkpoint_tuple(value)
        return _read.checkpoint_tuple(self, value)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """``DeltaChannel`` writes and seed along the parent chain (config validated first)."""
        return await super().aget_delta_channel_history(
            config=_config.normalized_config(config),
            channels=_config.checked_channels(channels),
        )

    # ----------------------------------------------------------------- sync bridges

    def _bridge(self, coro: Coroutine[Any, Any, R]) -> R:
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop or not self.loop.is_running():
            coro.close()
            raise SyncCallOnEventLoopError(
                "AsyncPostgresSaver's sync methods only work from a thread other than the "
                "event loop the saver was created on, while that loop runs; on the loop use "
                "the async methods (ainvoke/astream, `await saver.aget_tuple(...)`), or use "
                "PostgresSaver"
            )
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Sync bridge to :meth:`aget_tuple` (call from a non-loop thread)."""
        return self._bridge(self.aget_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Sync bridge to :meth:`alist` (call from a non-loop thread)."""

        async def collect() -> list[CheckpointTuple]:
            found = self.alist(config, filter=filter, before=before, limit=limit)
            return [item async for item in found]

        return iter(self._bridge(collect()))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Sync bridge to :meth:`aput` (call from a non-loop thread)."""
        return self._bridge(self.aput(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Sync bridge to :meth:`aput_writes` (call from a non-loop thread)."""
        self._bridge(self.aput_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        """Sync bridge to :meth:`adelete_thread` (call from a non-loop thread)."""
        self._bridge(self.adelete_thread(thread_id))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Sync bridge to :meth:`aget_delta_channel_history` (call from a non-loop thread)."""
        return self._bridge(self.aget_delta_channel_history(config=config, channels=channels))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Sync bridge to :meth:`acopy_thread` (call from a non-loop thread)."""
        self._bridge(self.acopy_thread(source_thread_id, target_thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Sync bridge to :meth:`adelete_for_runs` (call from a non-loop thread)."""
        self._bridge(self.adelete_for_runs(run_ids))

    def prune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: str = "keep_latest",
        keep_last: int = 1,
    ) -> None:
        """Sync bridge to :meth:`aprune` (call from a non-loop thread)."""
        self._bridge(self.aprune(thread_ids, strategy=strategy, keep_last=keep_last))

    def sweep(self) -> SweepResult:
        """Sync bridge to :meth:`asweep` (call from a non-loop thread)."""
        return self._bridge(self.asweep())
