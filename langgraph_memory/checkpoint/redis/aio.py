"""Asynchronous Redis checkpointer: the async twin of :class:`RedisSaver`."""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from redis.asyncio import Redis as AsyncRedis
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.exceptions import NoScriptError

from langgraph_memory.checkpoint import _config
from langgraph_memory.checkpoint._bridge import LoopBridgedSyncMethods
from langgraph_memory.checkpoint._config import ThreadTTLConfig
from langgraph_memory.checkpoint.redis import _codec, _keys
from langgraph_memory.checkpoint.redis._base import (
    CLUSTER_RETRIED_ERRORS,
    BaseRedisSaver,
    Command,
    Emit,
    Plan,
    client_defaults,
    client_url_options,
    translate_errors,
    write_context,
)
from langgraph_memory.checkpoint.redis._scripts import SCRIPTS
from langgraph_memory.checkpoint.redis.lease import AsyncRedisLeaseBackend
from langgraph_memory.errors import InvalidConnectionStringError

__all__ = ["AsyncRedisSaver", "BoundedAsyncRedisCluster"]

T = TypeVar("T")


class BoundedAsyncRedisCluster(AsyncRedisCluster):
    """The async ``RedisCluster`` ``from_conn_string(cluster=True)`` builds: a timed-out
    command is not retried, so one timeout bounds a call (see ``BoundedRedisCluster``)."""

    ERRORS_ALLOW_RETRY = CLUSTER_RETRIED_ERRORS  # type: ignore[assignment]


class AsyncRedisSaver(LoopBridgedSyncMethods, BaseRedisSaver):
    """Async LangGraph checkpointer on plain Redis (same storage as :class:`RedisSaver`).

    The sync methods also work when called from another thread than the event loop
    the saver runs on (e.g. ``graph.invoke`` in a worker thread), like the official
    ``AsyncPostgresSaver``.

    Args:
        client: ``redis.asyncio.Redis`` or ``redis.asyncio.cluster.RedisCluster``.
        prefix: Key prefix (default ``"lgm"``).
        ttl: ``{"default_ttl": minutes, "refresh_on_read": bool}`` for every key of a thread.
        keep_last: Keep only the newest N checkpoints per thread and namespace.
        serde: Serializer, e.g. an ``EncryptedSerializer``.

    Example:
        ```python
        from langgraph_memory.checkpoint.redis import AsyncRedisSaver

        async with AsyncRedisSaver.from_conn_string("redis://localhost:6379/0") as saver:
            await saver.setup()
            graph = builder.compile(checkpointer=saver)
            config = {"configurable": {"thread_id": "1"}}
            await graph.ainvoke({"messages": [("user", "hi")]}, config)
        ```
    """

    sync_twin = "RedisSaver"

    def __init__(
        self,
        client: AsyncRedis | AsyncRedisCluster,
        *,
        prefix: str = "lgm",
        ttl: ThreadTTLConfig | Mapping[str, Any] | None = None,
        keep_last: int | None = None,
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(client, prefix=prefix, ttl=ttl, keep_last=keep_last, serde=serde)
        try:
            self.loop = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        url: str,
        *,
        prefix: str = "lgm",
        ttl: ThreadTTLConfig | Mapping[str, Any] | None = None,
        keep_last: int | None = None,
        serde: SerializerProtocol | None = None,
        cluster: bool = False,
        **client_options: Any,
    ) -> AsyncIterator[AsyncRedisSaver]:
        """Async twin of :meth:`RedisSaver.from_conn_string`.

        Raises:
            InvalidConnectionStringError: The URL is malformed.
            BackendUnavailableError: Nothing answers at the URL's host and port.

        Example:
            ```python
            async with AsyncRedisSaver.from_conn_string("redis://localhost:6379/0") as saver:
                await saver.setup()
            ```
        """
        where = client_url_options(url)
        options = client_defaults(client_options)
        try:
            client: AsyncRedis | AsyncRedisCluster = (
                BoundedAsyncRedisCluster.from_url(url, **options)
                if cluster
                else AsyncRedis.from_url(url, **options)
            )
        except ValueError as exc:
            raise InvalidConnectionStringError(f"invalid Redis URL: {exc}") from exc
        try:
            with translate_errors(where):
                await client.ping()
            yield cls(client, prefix=prefix, ttl=ttl, keep_last=keep_last, serde=serde)
        finally:
            await client.aclose()

    async def setup(self) -> None:
        """Async :meth:`RedisSaver.setup`: ``await saver.setup()``, like every async saver.

        Raises:
            ConfigurationError: The server is older than Redis 6.2.
            MigrationError: The prefix holds data of a newer layout.

        Example:
            ```python
            async with AsyncRedisSaver.from_conn_string("redis://localhost:6379/0") as saver:
                await saver.setup()
            ```
        """
        with translate_errors(self.where):
            info = await self._client.info("server")
            schema = await self._client.get(_keys.schema_key(self.prefix))
            finish = self._setup_result(info, schema)
            await self._load_scripts()
        await self._run(self._migrate_registry_plan())
        await self._execute(finish)

    async def asetup(self) -> None:
        """Alias of :meth:`setup` (``await saver.asetup()``), kept for compatibility."""
        await self.setup()

    def lease_backend(self) -> AsyncRedisLeaseBackend:
        """An :class:`AsyncRedisLeaseBackend` on this saver's client and prefix."""
        return AsyncRedisLeaseBackend(
            self._client, prefix=self.prefix, fence_ttl_ms=self.ttl.ttl_ms
        )

    # ----- BaseCheckpointSaver (async) -------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (or the thread's latest), with pending writes."""
        thread_id, commands = self._get_commands(config)
        return self._get_result(thread_id, await self._execute(commands))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Checkpoints newest first; ``filter`` matches metadata on any key (all must match)."""
        plan = self._list_plan(config, filter, before, limit)
        reply: Any = None
        while True:
            try:
                step = plan.send(reply)
            except StopIteration:
                return
            if isinstance(step, Emit):
                reply = None
                for item in step.items:
                    yield item
            else:
                reply = await self._execute(step)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint atomically (blobs only for ``new_versions``)."""
        commands, next_config = self._put_commands(config, checkpoint, metadata, new_versions)
        await self._execute(commands)
        self._after_put(config)
        return next_config

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes (idempotent per task and index)."""
        await self._execute(self._put_writes_commands(config, writes, task_id, task_path))

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Async :meth:`RedisSaver.get_delta_channel_history` (one script call)."""
        if not channels:
            return {}
        (rows,) = await self._execute(self._delta_commands(config, channels))
        return _codec.decode_delta_history(self.serde, channels, rows)

    async def aforget_threads(self, thread_ids: Sequence[str]) -> None:
        """Erase threads (:meth:`adelete_thread` each; Redis keeps no statistics)."""
        for thread_id in _config.checked_ids(thread_ids):
            await self.adelete_thread(thread_id)

    def forget_threads(self, thread_ids: Sequence[str]) -> None:
        """Sync bridge of :meth:`aforget_threads`."""
        self._bridge(self.aforget_threads(thread_ids))

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete the thread (all namespaces) with its fencing counter and lease."""
        await self._execute(self._delete_thread_commands(thread_id))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata ``run_id`` is listed."""
        await self._run(self._delete_for_runs_plan(run_ids))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, blob and write of one thread to another."""
        await self._run(self._copy_thread_plan(source_thread_id, target_thread_id))

    async def aprune(
        self, thread_ids: Sequence[str], *, strategy: str = "keep_latest", keep_last: int = 1
    ) -> None:
        """Async :meth:`RedisSaver.prune` (``"keep_latest"``, ``"keep_last"``, ``"delete"``)."""
        await self._run(self._prune_plan(thread_ids, strategy, keep_last))

    # ----- sync bridges beyond BaseCheckpointSaver (LoopBridgedSyncMethods has the rest)

    def prune(
        self, thread_ids: Sequence[str], *, strategy: str = "keep_latest", keep_last: int = 1
    ) -> None:
        """Sync bridge of :meth:`aprune`."""
        self._bridge(self.aprune(thread_ids, strategy=strategy, keep_last=keep_last))

    # ----- I/O -------------------------------------------------------------------------

    async def _load_scripts(self) -> None:
        for source in SCRIPTS.values():
            await self._client.script_load(source)

    async def _send(self, commands: Sequence[Command]) -> builtins.list[Any]:
        if len(commands) == 1 or self.is_cluster:
            return [await self._client.execute_command(*c.wire()) for c in commands]
        pipe = self._client.pipeline(transaction=False)
        for command in commands:
            pipe.execute_command(*command.wire())
        return await pipe.execute()  # type: ignore[no-any-return]

    async def _execute(self, commands: Sequence[Command]) -> builtins.list[Any]:
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        with translate_errors(self.where, write_context(commands)):
            try:
                return await self._send(commands)
            except NoScriptError:
                await self._load_scripts()
                return await self._send(commands)

    async def _run(self, plan: Plan[T]) -> T:
        reply: Any = None
        while True:
            try:
                step = plan.send(reply)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            reply = None if isinstance(step, Emit) else await self._execute(step)
