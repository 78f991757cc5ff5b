"""Synchronous Postgres checkpointer: :class:`PostgresSaver`."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.postgres import PostgresSaver as _OfficialPostgresSaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from psycopg import Cursor
from psycopg.pq import TransactionStatus
from psycopg.rows import DictRow, dict_row

from langgraph_memory._pg.pool import PoolConfig
from langgraph_memory._pg.run_sync import SyncConn, SyncConnector, build_pool, probe, run_program
from langgraph_memory.checkpoint import _config, _guard
from langgraph_memory.checkpoint._threaded import ThreadedAsyncMethods
from langgraph_memory.checkpoint.postgres import _common, _read, _retention, _sql
from langgraph_memory.checkpoint.postgres._retention import SweepResult
from langgraph_memory.checkpoint.postgres.lease import PostgresLeaseBackend
from langgraph_memory.errors import ConfigurationError

__all__ = ["PostgresSaver"]

logger = logging.getLogger(__name__)


class PostgresSaver(ThreadedAsyncMethods, _OfficialPostgresSaver):
    """Postgres checkpointer for production: pooled, lock-free, with retention and fencing.

    Same tables and migrations as ``langgraph-checkpoint-postgres`` (data written by either
    class is readable by the other), plus ``prune`` (DeltaChannel-safe), ``copy_thread``,
    ``delete_for_runs``, TTL / keep-last-N retention with :meth:`sweep`, per-thread lease
    fencing, and a :meth:`setup` that also works inside a transaction. With a pool, calls
    run concurrently (no instance lock) and a dropped connection is replaced on the next
    call; a single ``Connection`` is shared under a lock and cannot reconnect.

    Args:
        conn: A ``psycopg_pool.ConnectionPool`` (recommended) or a ``psycopg.Connection``,
            opened with ``autocommit=True`` and ``row_factory=dict_row``.
        serde: Serializer for channel values and writes (e.g. an ``EncryptedSerializer``).
        ttl: Delete threads idle for longer than this (seconds or ``timedelta``) on sweep.
        keep_last: Keep only the newest N checkpoints per thread and namespace on sweep.

    Example:
        ```python
        from langgraph_memory.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string("postgresql://postgres@localhost/app") as saver:
            saver.setup()
            graph = builder.compile(checkpointer=saver)
        ```
    """

    def __init__(
        self,
        conn: SyncConn,
        *,
        serde: SerializerProtocol | None = None,
        ttl: float | timedelta | None = None,
        keep_last: int | None = None,
    ) -> None:
        connector = SyncConnector(conn)
        super().__init__(conn, None, serde)
        connector.lock = self.lock
        self._connector = connector
        self.ttl = _common.retention_seconds(ttl, "ttl")
        self.keep_last = _common.check_keep_last(keep_last)
        self._sweeper: threading.Thread | None = None
        self._sweeper_stop = threading.Event()

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        pipeline: bool = False,
        pool_config: PoolConfig | None = None,
        prepare_threshold: int | None = 0,
        serde: SerializerProtocol | None = None,
        ttl: float | timedelta | None = None,
        keep_last: int | None = None,
        sweep_interval: float | timedelta | None = None,
        connect_timeout: int = _common.DEFAULT_CONNECT_TIMEOUT,
    ) -> Iterator[PostgresSaver]:
        """Build a saver on a correctly configured connection pool, closed on exit.

        Args:
            conn_string: libpq DSN or ``postgresql://`` URI.
            pipeline: Unsupported with a pool (kept for signature compatibility).
            pool_config: Pool sizes and timeouts (:class:`PoolConfig`).
            prepare_threshold: psycopg ``prepare_threshold``; ``None`` disables server-side
                prepared statements (required behind PgBouncer in transaction mode).
            serde: Serializer for values and writes.
            ttl: Thread TTL for :meth:`sweep` (seconds or ``timedelta``).
            keep_last: Checkpoints kept per thread/namespace by :meth:`sweep`.
            sweep_interval: If set, run :meth:`sweep` in a background thread this often.
            connect_timeout: Seconds to wait for the server when connecting.

        Raises:
            InvalidConnectionStringError: The DSN is malformed.
            BackendUnavailableError: The server cannot be reached (message names host:port).

        Example:
            ```python
            with PostgresSaver.from_conn_string(dsn, prepare_threshold=None) as saver:
                saver.setup()
            ```
        """
        if pipeline:
            raise ConfigurationError(
                "pipeline=True needs a single connection; from_conn_string builds a pool "
                "(each write already runs pipelined in one transaction)"
            )
        probe(conn_string, connect_timeout, (pool_config or {}).get("kwargs"))
        pool = build_pool(conn_string, pool_config, prepare_threshold, connect_timeout)
        saver = None
        try:
            saver = cls(pool, serde=serde, ttl=ttl, keep_last=keep_last)
            if sweep_interval is not None:
                saver.start_sweeper(sweep_interval)
            yield saver
        finally:
            if saver is not None:
                saver.stop_sweeper()
            pool.close()

    @contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[Cursor[DictRow]]:
        # Pooled: no instance lock. ``pipeline=True`` means "one atomic round of writes".
        with self._connector.cursor(transaction=pipeline, pipeline=pipeline) as cur:
            yield cur

    def setup(self) -> None:
        """Create or migrate the tables (official migrations first, then ours).

        Idempotent and safe to call from several workers at once (advisory lock). Inside
        an open transaction (a connection with ``autocommit=False`` or an explicit
        ``conn.transaction()``) the ``CREATE INDEX CONCURRENTLY`` steps run as plain
        ``CREATE INDEX`` so everything commits or rolls back with that transaction.

        Example:
            ```python
            with conn.transaction():
                PostgresSaver(conn).setup()
            ```
        """
        with self._connector.connection() as conn:
            status = conn.info.transaction_status
            in_transaction = not conn.autocommit or status != TransactionStatus.IDLE
            with conn.cursor(row_factory=dict_row) as cur:
                if in_transaction:
                    with conn.transaction():
                        self._take_migration_lock(cur, _sql.TRY_MIGRATION_XACT_LOCK)
                        run_program(cur, _common.setup_program(in_transaction=True))
                    return
                self._take_migration_lock(cur, _sql.TRY_MIGRATION_LOCK)
                try:
                    run_program(cur, _common.setup_program(in_transaction=False))
                finally:
                    cur.execute(_sql.MIGRATION_UNLOCK, (_sql.MIGRATION_LOCK_KEY,))

    def _take_migration_lock(self, cur: Cursor[DictRow], sql: str) -> None:
        deadline = time.monotonic() + _common.MIGRATION_LOCK_TIMEOUT
        while True:
            cur.execute(sql, (_sql.MIGRATION_LOCK_KEY,))
            row = cur.fetchone()
            if row is not None and row["locked"]:
                return
            if time.monotonic() > deadline:
                raise _common.migration_lock_timed_out(self._connector.target)
            time.sleep(_common.MIGRATION_LOCK_POLL)

    def put(
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
        program, next_config = _common.put_program(self, config, checkpoint, metadata, new_versions)
        self._connector.run(program)
        return next_config

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes atomically and idempotently (fenced like ``put``)."""
        self._connector.run(_common.put_writes_program(self, config, writes, task_id, task_path))

    def forget_threads(self, thread_ids: Sequence[str]) -> None:
        """Erase threads: delete them (as :meth:`delete_thread`) in one transaction and
        resample the checkpoint tables' planner statistics (``ANALYZE``), so nothing of
        them is left in any row or in ``pg_stats``. What :func:`~langgraph_memory.forget_user`
        uses; costs one ``ANALYZE`` of the checkpoint tables (sampled, bounded).

        Example:
            ```python
            saver.forget_threads(["thread-1", "thread-2"])
            ```
        """
        ids = _config.checked_ids(thread_ids)
        if ids:
            self._connector.run(_common.forget_threads_program(ids))

    async def aforget_threads(self, thread_ids: Sequence[str]) -> None:
        """:meth:`forget_threads` in a worker thread."""
        await asyncio.to_thread(self.forget_threads, thread_ids)

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread (all namespaces) with its lease, atomically; a holder's later
        writes are refused.

        Example:
            ```python
            saver.delete_thread("thread-1")
            ```
        """
        thread_id = _config.checked_thread_id(thread_id)
        self._connector.run(_common.delete_threads_program([thread_id]))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread's whole history (checkpoints, blobs, writes; all namespaces).

        Example:
            ```python
            saver.copy_thread("thread-1", "thread-1-fork")
            ```
        """
        source = _config.checked_thread_id(source_thread_id)
        target = _config.checked_thread_id(target_thread_id)
        self._connector.run(_common.copy_thread_program(source, target))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes and unreferenced blobs) of runs.

        Example:
            ```python
            saver.delete_for_runs([run_id])
            ```
        """
        ids = _config.checked_ids(run_ids, "run_ids")
        if ids:
            self._connector.run(_common.delete_for_runs_program(ids))

    def prune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: str = "keep_latest",
        keep_last: int = 1,
    ) -> None:
        """Prune threads: ``"keep_latest"``, ``"keep_last"`` (newest ``keep_last``) or ``"delete"``.

        Keeping is per namespace and ``DeltaChannel``-safe: ancestors (with their writes)
        back to the nearest stored snapshot of each delta channel are kept too, and only
        blobs no kept checkpoint references are deleted. Each thread is pruned in its own
        REPEATABLE READ transaction. ``"delete"`` also advances the fencing tokens.

        Example:
            ```python
            saver.prune(["thread-1"], strategy="keep_last", keep_last=5)
            ```
        """
        ids = _retention.check_prune_args(thread_ids, strategy, keep_last)
        if not ids:
            return
        if strategy == "delete":
            self._connector.run(_common.delete_threads_program(ids))
            return
        keep = 1 if strategy == "keep_latest" else keep_last
        busy = []
        for thread_id in ids:
            program = _retention.keep_last_program(thread_id, keep)
            if self._connector.run(program, pipeline=False) is None:
                busy.append(thread_id)
        if busy:  # the others are pruned; a leased thread is only changed by its holder
            raise _guard.busy_error(busy[0] if len(busy) == 1 else busy, "prune")

    def sweep(self) -> SweepResult:
        """Apply retention once: delete threads idle past ``ttl``, trim to ``keep_last``.

        Example:
            ```python
            result = PostgresSaver(pool, ttl=3600, keep_last=20).sweep()
            print(result.expired_threads, result.pruned_checkpoints)
            ```
        """
        result = SweepResult()
        ttl, keep_last = self.ttl, self.keep_last
        if ttl is not None:
            for _ in range(_retention.MAX_SWEEP_BATCHES):
                expired = self._connector.run(_retention.sweep_ttl_program(ttl))
                result.expired_threads.extend(expired)
                if len(expired) < _common.SWEEP_BATCH:
                    break
        if keep_last is not None:
            for _ in range(_retention.MAX_SWEEP_BATCHES):
                dirty = self._connector.run(_retention.dirty_threads_program())
                for thread_id in dirty:
                    program = _retention.keep_last_program(
                        thread_id, keep_last, mark_swept=True, wait=False
                    )
                    # None: leased or being written -- it stays dirty for the next sweep
                    pruned = self._connector.run(program, pipeline=False)
                    result.pruned_checkpoints += pruned or 0
                if len(dirty) < _common.SWEEP_BATCH:
                    break
        return result

    def start_sweeper(self, interval: float | timedelta = 300.0) -> None:
        """Run :meth:`sweep` every ``interval`` (first after one interval) in a daemon thread.

        Example:
            ```python
            saver.start_sweeper(timedelta(minutes=5))
            ```
        """
        if self.ttl is None and self.keep_last is None:
            raise ConfigurationError("nothing to sweep: create the saver with ttl= or keep_last=")
        seconds = _common.retention_seconds(interval, "sweep interval")
        if self._sweeper is not None and self._sweeper.is_alive():
            return
        self._sweeper_stop = stop = threading.Event()

        def loop() -> None:
            while not stop.wait(seconds):
                try:
                    self.sweep()
                except Exception:
                    logger.warning("checkpoint retention sweep failed", exc_info=True)

        self._sweeper = threading.Thread(target=loop, name="lgm-postgres-sweeper", daemon=True)
        self._sweeper.start()

    def stop_sweeper(self, timeout: float = 10.0) -> None:
        """Stop the background sweeper (no-op if not running).

        Example:
            ```python
            saver.stop_sweeper()
            ```
        """
        self._sweeper_stop.set()
        if self._sweeper is not None:
            self._sweeper.join(timeout)
            self._sweeper = None

    def lease_backend(self) -> PostgresLeaseBackend:
        """A :class:`PostgresLeaseBackend` on this saver's pool/connection.

        Example:
            ```python
            lease = saver.lease_backend().try_acquire("thread-1", "worker-a", ttl=30)
            ```
        """
        return PostgresLeaseBackend(self.conn, lock=self.lock)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """List checkpoints, newest first (metadata ``filter``, ``before``, ``limit``).

        Rows are fetched and the connection returned before the first tuple is yielded, so a
        slow consumer never holds a pooled connection (or the single-connection lock).

        Example:
            ```python
            for tup in saver.list({"configurable": {"thread_id": "t1"}}, limit=5):
                print(tup.checkpoint["id"])
            ```
        """
        args = _common.list_args(config, filter, before, limit)
        rows = [
            *super().list(args.config, filter=args.filter, before=args.before, limit=args.limit)
        ]
        yield from rows

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (or the thread's latest), with pending writes.

        ``thread_id`` / ``checkpoint_ns`` / ``checkpoint_id`` are ``str()``-ed like LangGraph
        does, so ``{"thread_id": 5}`` reads the thread ``"5"``.

        Raises:
            ConfigurationError: ``thread_id`` is missing or not storable text.

        Example:
            ```python
            tup = saver.get_tuple({"configurable": {"thread_id": "t1"}})
            ```
        """
        config = _config.normalized_config(config)
        query, args = _read.get_tuple_query(config)
        with self._connector.cursor() as cur:
            cur.execute(query, args)
            row = cur.fetchone()
            if row is None:
                return None
            if _read.needs_sends_migration(row):
                cur.execute(self.SELECT_PENDING_SENDS_SQL, (args[0], [row["parent_checkpoint_id"]]))
                _read.migrate_sends(self, row, cur.fetchone())
        return _read.checkpoint_tuple(self, row)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """``DeltaChannel`` writes and seed along the parent chain (config validated first)."""
        return super().get_delta_channel_history(
            config=_config.normalized_config(config),
            channels=_config.checked_channels(channels),
        )

    # ----------------------------------------------------------------- async API
    # The other a* methods come from ThreadedAsyncMethods (sync ones in a worker thread,
    # so graph.ainvoke works); AsyncPostgresSaver is the native async saver.

    async def aprune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: str = "keep_latest",
        keep_last: int = 1,
    ) -> None:
        """:meth:`prune` in a worker thread."""
        await asyncio.to_thread(
            lambda: self.prune(thread_ids, strategy=strategy, keep_last=keep_last)
        )

    async def asweep(self) -> SweepResult:
        """:meth:`sweep` in a worker thread."""
        return await asyncio.to_thread(self.sweep)
