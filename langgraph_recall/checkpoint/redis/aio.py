"""The Redis checkpointer :class:`AsyncRedisSaver` (plain Redis >= 6.2 / Valkey, standalone
or cluster). ``saver.py`` is generated from ``aio.py`` by ``scripts/unasync.py``.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import NoScriptError

from langgraph_recall.checkpoint import _config
from langgraph_recall.checkpoint._bridge import LoopBridgedSyncMethods
from langgraph_recall.checkpoint._config import ThreadTTLConfig
from langgraph_recall.checkpoint.redis import _codec, _keys
from langgraph_recall.checkpoint.redis._base import BaseRedisSaver
from langgraph_recall.checkpoint.redis._client import (
    CLUSTER_RETRIED_ERRORS,
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_SOCKET_TIMEOUT,
    client_defaults,
    client_url_options,
    translate_errors,
)
from langgraph_recall.checkpoint.redis._commands import Command, Emit, Plan, write_context
from langgraph_recall.checkpoint.redis._scripts import SCRIPTS
from langgraph_recall.checkpoint.redis.lease import AsyncRedisLeaseBackend
from langgraph_recall.errors import InvalidConnectionStringError
from langgraph_recall.telemetry import length, span

# unasync: sync-only
# import weakref
#
# from redis import exceptions as redis_errors
#
# from langgraph_recall.checkpoint.redis._kept_connections import KeptConnections, pack_command
# unasync: end

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_SOCKET_TIMEOUT",
    "AsyncRedisSaver",
    "BoundedAsyncRedisCluster",
]

_REDIS: dict[str, str | bool | int | float] = {
    "db.system.name": "redis"
}  # the spans' attributes: no thread or user ids

T = TypeVar("T")


class BoundedAsyncRedisCluster(RedisCluster):
    """The ``redis.asyncio.cluster.RedisCluster`` ``from_conn_string(cluster=True)`` builds:
    a timed-out command is not retried (:data:`~._base.CLUSTER_RETRIED_ERRORS`), so one
    timeout bounds a call."""

    # redis-py's attribute is typed by its literal (a tuple of exactly four classes), so
    # mypy would refuse any other tuple of exception classes: hence the cast.
    ERRORS_ALLOW_RETRY = cast("Any", CLUSTER_RETRIED_ERRORS)


class AsyncRedisSaver(LoopBridgedSyncMethods, BaseRedisSaver):
    """LangGraph checkpointer on plain Redis: no RedisJSON/RediSearch needed.

    Each ``aput`` is one Lua script on the thread's hash slot (blobs + checkpoint +
    indexes + TTL + retention + fencing check, atomically) in one round trip;
    ``aget_tuple`` is one script call too. The other half of the checkpointer API comes
    from :class:`LoopBridgedSyncMethods`.

    Args:
        client: ``redis.asyncio.Redis`` or ``redis.asyncio.cluster.RedisCluster``
            (``decode_responses`` either way).
        prefix: Key prefix (default ``"lgm"``).
        ttl: :class:`ThreadTTLConfig` (``{"default_ttl": minutes, "refresh_on_read": bool}``)
            for every key of a thread.
        keep_last: After every ``aput`` the thread's namespace keeps its N newest
            checkpoints (atomically, in the same script).
        serde: Serializer, e.g. an ``EncryptedSerializer``.
        replicas: Acknowledge a checkpoint or pending write only once this many replicas
            hold it (``WAIT`` after the write, on the same connection); a write they do not
            confirm within ``replica_timeout`` seconds (default 1) raises
            :class:`~langgraph_recall.errors.NotReplicatedError`. ``0`` (default): what the
            primary holds. Not on Redis Cluster.
        replica_timeout: Seconds a write waits for its replicas.

    Example:
        ```python
        import uuid

        from langgraph.graph import START, MessagesState, StateGraph

        from langgraph_recall.checkpoint.redis import AsyncRedisSaver

        builder = StateGraph(MessagesState)
        builder.add_node("echo", lambda state: {"messages": [("ai", "hello")]})
        builder.add_edge(START, "echo")
        thread_id = f"example-{uuid.uuid4()}"
        config = {"configurable": {"thread_id": thread_id}}
        async with AsyncRedisSaver.from_conn_string(REDIS_URL, keep_last=20) as saver:
            await saver.setup()
            graph = builder.compile(checkpointer=saver)
            await graph.ainvoke({"messages": [("user", "hi")]}, config)
            assert len([c async for c in saver.alist(config)]) == 3
            await saver.aprune([thread_id], keep_last=1)
            assert len([c async for c in saver.alist(config)]) == 1
            await saver.adelete_thread(thread_id)
        ```
    """

    # unasync: async-only
    sync_twin = "RedisSaver"

    # unasync: end
    def __init__(
        self,
        client: Redis | RedisCluster,
        *,
        prefix: str = "lgm",
        ttl: ThreadTTLConfig | Mapping[str, Any] | None = None,
        keep_last: int | None = None,
        serde: SerializerProtocol | None = None,
        replicas: int = 0,
        replica_timeout: float = 1.0,
    ) -> None:
        super().__init__(
            client,
            prefix=prefix,
            ttl=ttl,
            keep_last=keep_last,
            serde=serde,
            replicas=replicas,
            replica_timeout=replica_timeout,
        )
        # unasync: async-only
        try:
            self.loop = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None  # set by the first call on a loop
        # unasync: end
        # unasync: sync-only
        # # Standalone clients: a lean request path on connections kept out of the client's
        # # pool (see _kept_connections.py); they go back to the pool when the saver is
        # # collected.
        # self._kept = KeptConnections.for_client(client)
        # if self._kept is not None:
        #     weakref.finalize(self, self._kept.close)
        # unasync: end

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
        replicas: int = 0,
        replica_timeout: float = 1.0,
        **client_options: Any,
    ) -> AsyncIterator[AsyncRedisSaver]:
        """Connect to ``url`` (``redis://``, ``rediss://``, ``unix://``), check that the
        server answers, yield a saver and close the client on exit.

        Args:
            url: Redis URL.
            prefix: Key prefix.
            ttl: TTL option (see the class).
            keep_last: Keep-last-N retention per thread and namespace.
            serde: Serializer.
            cluster: Connect with ``RedisCluster`` (``url`` names any node).
            replicas: Acknowledge writes only once this many replicas hold them (see the
                class).
            replica_timeout: Seconds a write waits for its replicas.
            **client_options: Passed to ``from_url``; ``socket_connect_timeout`` and
                ``socket_timeout`` default to 5 s, so one call against a hung server fails
                after 5 s with ``BackendUnavailableError`` (on every redis-py version).

        Raises:
            InvalidConnectionStringError: The URL is malformed.
            BackendUnavailableError: Nothing answers at the URL's host and port.
        """
        where = client_url_options(url)
        options = client_defaults(client_options)
        with translate_errors(where):
            try:
                client: Redis | RedisCluster = (
                    BoundedAsyncRedisCluster.from_url(url, **options)
                    if cluster
                    else Redis.from_url(url, **options)
                )
            except ValueError as exc:
                raise InvalidConnectionStringError(f"invalid Redis URL: {exc}") from exc
        try:
            with translate_errors(where):
                await client.ping()
            yield cls(
                client,
                prefix=prefix,
                ttl=ttl,
                keep_last=keep_last,
                serde=serde,
                replicas=replicas,
                replica_timeout=replica_timeout,
            )
        finally:
            await client.aclose()

    async def setup(self) -> None:
        """Check the server version (>= 6.2), load the Lua scripts and record the key
        layout version. Idempotent; the saver also works without it (scripts load lazily).

        Raises:
            ConfigurationError: The server is older than Redis 6.2.
            MigrationError: The prefix holds data of a newer layout.
        """
        with translate_errors(self.where):
            info = await self._client.info("server")
            schema = await self._client.get(_keys.schema_key(self.prefix))
            finish = self._setup_result(info, schema)
            await self._load_scripts()
        await self._run(self._migrate_registry_plan())
        await self._execute(finish)

    # unasync: async-only
    async def asetup(self) -> None:
        """Alias of :meth:`setup` (``await saver.asetup()``), kept for compatibility."""
        await self.setup()

    # unasync: end
    def lease_backend(self) -> AsyncRedisLeaseBackend:
        """An :class:`AsyncRedisLeaseBackend` on this saver's client and prefix (same
        fencing keys)."""
        return AsyncRedisLeaseBackend(
            self._client, prefix=self.prefix, fence_ttl_ms=self.ttl.ttl_ms
        )

    # ----- BaseCheckpointSaver -------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (or the thread's latest), with pending writes."""
        with span("checkpoint get_tuple", _REDIS) as current:
            thread_id, commands = self._get_commands(config)
            found = self._get_result(thread_id, await self._execute(commands))
            if current is not None:
                current.set_attribute("langgraph_recall.checkpoint.found", found is not None)
            return found

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
                # unasync: async-only
                for item in step.items:
                    yield item
                # unasync: end
                # unasync: sync-only
                # yield from step.items
                # unasync: end
            else:
                reply = await self._execute(step)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint atomically (blobs only for ``new_versions``, and for reused
        values that have no stored blob)."""
        with span("checkpoint put", _REDIS):
            return await self._run(self._put_plan(config, checkpoint, metadata, new_versions))

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes (idempotent per task and index)."""
        attributes = {**_REDIS, "langgraph_recall.checkpoint.writes": length(writes)}
        with span("checkpoint put_writes", attributes):
            await self._execute(self._put_writes_commands(config, writes, task_id, task_path))

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Writes and seed of ``DeltaChannel`` channels along the parent chain, in ONE
        script call (the base class walks it with one ``aget_tuple`` per ancestor)."""
        if not channels:
            return {}
        (rows,) = await self._execute(self._delta_commands(config, channels))
        return _codec.decode_delta_history(self.serde, channels, rows)

    async def aforget_threads(self, thread_ids: Sequence[str]) -> None:
        """Erase threads (:meth:`adelete_thread` each; Redis keeps no statistics). What
        :func:`~langgraph_recall.forget_user` uses."""
        for thread_id in _config.checked_ids(thread_ids):
            await self.adelete_thread(thread_id)

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, blob and write of the thread (all namespaces), its
        fencing counter and lease: no key names the thread after, and late writes from
        older leases are refused."""
        await self._execute(self._delete_thread_commands(thread_id))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata ``run_id`` is listed."""
        await self._run(self._delete_for_runs_plan(run_ids))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, blob and write of one thread to another."""
        await self._run(self._copy_thread_plan(source_thread_id, target_thread_id))

    async def aprune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: str = "keep_latest",
        keep_last: int | None = None,
    ) -> None:
        """Keep the newest checkpoint of each namespace (``"keep_latest"``, plus the
        ancestors a ``DeltaChannel`` needs), the newest ``keep_last`` of each
        (``keep_last=N``, whatever the strategy: the official Redis saver's meaning), or
        nothing (``"delete"``, or ``keep_last=0``: the threads are deleted). Same rules
        as the Postgres savers (``checkpoint._config.checked_prune``)."""
        await self._run(self._prune_plan(thread_ids, strategy, keep_last))

    # ----- I/O -----------------------------------------------------------------------

    async def _load_scripts(self) -> None:
        for source in SCRIPTS.values():
            await self._client.script_load(source)

    async def _send(self, commands: Sequence[Command]) -> builtins.list[Any]:
        # unasync: sync-only
        # if self._kept is not None:
        #     packed = b"".join([pack_command(command.execute_args()) for command in commands])
        #     try:
        #         return self._kept.execute(packed, len(commands))
        #     except redis_errors.ConnectionError:
        #         # A kept connection went stale (server restarted, idle timeout): retry
        #         # once on a fresh one through redis-py. A TimeoutError is NOT retried
        #         # here: a hung server would then cost a second full timeout.
        #         pass
        # unasync: end
        options = self.command_options
        if len(commands) == 1 or self.is_cluster:
            return [
                await self._client.execute_command(*c.execute_args(), **options) for c in commands
            ]
        pipe = self._client.pipeline(transaction=False)
        for command in commands:
            pipe.execute_command(*command.execute_args(), **options)
        return builtins.list(await pipe.execute())

    async def _execute(self, commands: Sequence[Command]) -> builtins.list[Any]:
        # unasync: async-only
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        # unasync: end
        sent = self._durable(commands)
        with translate_errors(self.where, write_context(commands)):
            try:
                replies = await self._send(sent)
            except NoScriptError:
                await self._load_scripts()
                replies = await self._send(sent)
        return self._acknowledged(commands, replies)

    async def _run(self, plan: Plan[T]) -> T:
        reply: Any = None
        while True:
            try:
                step = plan.send(reply)
            except StopIteration as stop:
                return cast("T", stop.value)
            reply = None if isinstance(step, Emit) else await self._execute(step)
