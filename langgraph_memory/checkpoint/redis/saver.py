"""Synchronous Redis checkpointer (plain Redis >= 6.2 / Valkey, standalone or cluster)."""

from __future__ import annotations

import asyncio
import builtins
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
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
from redis import Redis
from redis import exceptions as redis_errors
from redis.cluster import RedisCluster
from redis.exceptions import NoScriptError

from langgraph_memory.checkpoint import _config
from langgraph_memory.checkpoint._config import ThreadTTLConfig
from langgraph_memory.checkpoint._threaded import ThreadedAsyncMethods
from langgraph_memory.checkpoint.redis import _codec, _keys
from langgraph_memory.checkpoint.redis._base import (
    CLUSTER_RETRIED_ERRORS,
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_SOCKET_TIMEOUT,
    BaseRedisSaver,
    Command,
    Emit,
    Plan,
    client_defaults,
    client_url_options,
    translate_errors,
    write_context,
)
from langgraph_memory.checkpoint.redis._kept_connections import KeptConnections, pack_command
from langgraph_memory.checkpoint.redis._scripts import SCRIPTS
from langgraph_memory.checkpoint.redis.lease import RedisLeaseBackend
from langgraph_memory.errors import InvalidConnectionStringError

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "DEFAULT_SOCKET_TIMEOUT", "BoundedRedisCluster", "RedisSaver"]

T = TypeVar("T")


class BoundedRedisCluster(RedisCluster):
    """The ``RedisCluster`` ``from_conn_string(cluster=True)`` builds: a timed-out command
    is not retried (:data:`~._base.CLUSTER_RETRIED_ERRORS`), so one timeout bounds a call."""

    ERRORS_ALLOW_RETRY = CLUSTER_RETRIED_ERRORS  # type: ignore[assignment]


class RedisSaver(ThreadedAsyncMethods, BaseRedisSaver):
    """LangGraph checkpointer on plain Redis: no RedisJSON/RediSearch needed.

    Each ``put`` is one Lua script on the thread's hash slot (blobs + checkpoint +
    indexes + TTL + retention + fencing check, atomically) in one round trip;
    ``get_tuple`` is one script call too. The async methods run the sync ones in a worker
    thread, so ``ainvoke`` works; async apps should prefer :class:`AsyncRedisSaver`.

    Args:
        client: ``redis.Redis`` or ``redis.cluster.RedisCluster`` (``decode_responses=False``).
        prefix: Key prefix (default ``"lgm"``).
        ttl: ``{"default_ttl": minutes, "refresh_on_read": bool}`` for every key of a thread.
        keep_last: Keep only the newest N checkpoints per thread and namespace.
        serde: Serializer, e.g. an ``EncryptedSerializer``.

    Example:
        ```python
        from langgraph_memory.checkpoint.redis import RedisSaver

        with RedisSaver.from_conn_string("redis://localhost:6379/0", keep_last=20) as saver:
            saver.setup()
            graph = builder.compile(checkpointer=saver)
            graph.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "1"}})
        ```
    """

    def __init__(
        self,
        client: Redis | RedisCluster,
        *,
        prefix: str = "lgm",
        ttl: ThreadTTLConfig | Mapping[str, Any] | None = None,
        keep_last: int | None = None,
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(client, prefix=prefix, ttl=ttl, keep_last=keep_last, serde=serde)
        # Standalone clients: a lean request path on connections of the client's pool
        # (see _kept_connections.py); they go back to the pool when the saver is collected.
        self._kept = KeptConnections.for_client(client)
        if self._kept is not None:
            weakref.finalize(self, self._kept.close)

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        url: str,
        *,
        prefix: str = "lgm",
        ttl: ThreadTTLConfig | Mapping[str, Any] | None = None,
        keep_last: int | None = None,
        serde: SerializerProtocol | None = None,
        cluster: bool = False,
        **client_options: Any,
    ) -> Iterator[RedisSaver]:
        """Connect to ``url`` (``redis://``, ``rediss://``, ``unix://``), check that the
        server answers, yield a saver and close the client on exit.

        Args:
            url: Redis URL.
            prefix: Key prefix.
            ttl: TTL option (see the class).
            keep_last: Keep-last-N retention per thread and namespace.
            serde: Serializer.
            cluster: Connect with ``RedisCluster`` (``url`` names any node).
            **client_options: Passed to ``from_url``; ``socket_connect_timeout`` and
                ``socket_timeout`` default to 5 s, so one call against a hung server fails
                after 5 s with ``BackendUnavailableError`` (on every redis-py version).

        Raises:
            InvalidConnectionStringError: The URL is malformed.
            BackendUnavailableError: Nothing answers at the URL's host and port.

        Example:
            ```python
            with RedisSaver.from_conn_string("redis://localhost:6379/0") as saver:
                saver.setup()
            ```
        """
        where = client_url_options(url)
        options = client_defaults(client_options)
        with translate_errors(where):
            try:
                client: Redis | RedisCluster = (
                    BoundedRedisCluster.from_url(url, **options)
                    if cluster
                    else Redis.from_url(url, **options)
                )
            except ValueError as exc:
                raise InvalidConnectionStringError(f"invalid Redis URL: {exc}") from exc
        try:
            with translate_errors(where):
                client.ping()
            yield cls(client, prefix=prefix, ttl=ttl, keep_last=keep_last, serde=serde)
        finally:
            client.close()

    def setup(self) -> None:
        """Check the server version (>= 6.2), load the Lua scripts and record the key
        layout version. Idempotent; the saver also works without it (scripts load lazily).

        Raises:
            ConfigurationError: The server is older than Redis 6.2.
            MigrationError: The prefix holds data of a newer layout.
        """
        with translate_errors(self.where):
            info = self._client.info("server")
            schema = self._client.get(_keys.schema_key(self.prefix))
            finish = self._setup_result(info, schema)
            self._load_scripts()
        self._run(self._migrate_registry_plan())
        self._execute(finish)

    def lease_backend(self) -> RedisLeaseBackend:
        """A :class:`RedisLeaseBackend` on this saver's client and prefix (same fencing keys).

        Example:
            ```python
            lease = saver.lease_backend().try_acquire("thread-1", "worker-a", ttl=30.0)
            ```
        """
        return RedisLeaseBackend(self._client, prefix=self.prefix, fence_ttl_ms=self.ttl.ttl_ms)

    # ----- BaseCheckpointSaver -------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (or the thread's latest), with pending writes."""
        thread_id, commands = self._get_commands(config)
        return self._get_result(thread_id, self._execute(commands))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first; ``filter`` matches metadata on any key (all must match)."""
        return self._stream(self._list_plan(config, filter, before, limit))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint atomically (blobs only for ``new_versions``)."""
        commands, next_config = self._put_commands(config, checkpoint, metadata, new_versions)
        self._execute(commands)
        self._after_put(config)
        return next_config

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes (idempotent per task and index)."""
        self._execute(self._put_writes_commands(config, writes, task_id, task_path))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Writes and seed of ``DeltaChannel`` channels along the parent chain, in ONE
        script call (the base class walks it with one ``get_tuple`` per ancestor)."""
        if not channels:
            return {}
        (rows,) = self._execute(self._delta_commands(config, channels))
        return _codec.decode_delta_history(self.serde, channels, rows)

    def forget_threads(self, thread_ids: Sequence[str]) -> None:
        """Erase threads (:meth:`delete_thread` each; Redis keeps no statistics). What
        :func:`~langgraph_memory.forget_user` uses."""
        for thread_id in _config.checked_ids(thread_ids):
            self.delete_thread(thread_id)

    async def aforget_threads(self, thread_ids: Sequence[str]) -> None:
        """:meth:`forget_threads` in a worker thread."""
        await asyncio.to_thread(self.forget_threads, thread_ids)

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, blob and write of the thread (all namespaces), its
        fencing counter and lease: no key names the thread after, and late writes from
        older leases are refused."""
        self._execute(self._delete_thread_commands(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata ``run_id`` is listed."""
        self._run(self._delete_for_runs_plan(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, blob and write of one thread to another."""
        self._run(self._copy_thread_plan(source_thread_id, target_thread_id))

    def prune(
        self, thread_ids: Sequence[str], *, strategy: str = "keep_latest", keep_last: int = 1
    ) -> None:
        """``"keep_latest"``: keep the newest checkpoint per namespace (plus the ancestors
        a ``DeltaChannel`` needs); ``"keep_last"``: the newest ``keep_last`` (likewise);
        ``"delete"``: delete the threads. Same strategies and arguments as the Postgres
        savers.

        Example:
            ```python
            saver.prune(["thread-1"], strategy="keep_last", keep_last=5)
            ```
        """
        self._run(self._prune_plan(thread_ids, strategy, keep_last))

    # ----- async API (runs the sync methods in a worker thread) ---------------------

    async def aprune(
        self, thread_ids: Sequence[str], *, strategy: str = "keep_latest", keep_last: int = 1
    ) -> None:
        """:meth:`prune` in a worker thread."""
        await asyncio.to_thread(
            lambda: self.prune(thread_ids, strategy=strategy, keep_last=keep_last)
        )

    # ----- I/O -----------------------------------------------------------------------

    def _load_scripts(self) -> None:
        for source in SCRIPTS.values():
            self._client.script_load(source)

    def _send(self, commands: Sequence[Command]) -> builtins.list[Any]:
        if self._kept is not None:
            packed = b"".join([pack_command(command.wire()) for command in commands])
            try:
                return self._kept.execute(packed, len(commands))
            except redis_errors.ConnectionError:
                # A kept connection went stale (server restarted, idle timeout): retry once
                # on a fresh one through redis-py. A TimeoutError is NOT retried here: a
                # hung server would then cost a second full timeout.
                pass
        if len(commands) == 1 or self.is_cluster:
            return [self._client.execute_command(*c.wire()) for c in commands]
        pipe = self._client.pipeline(transaction=False)
        for command in commands:
            pipe.execute_command(*command.wire())
        return builtins.list(pipe.execute())

    def _execute(self, commands: Sequence[Command]) -> builtins.list[Any]:
        with translate_errors(self.where, write_context(commands)):
            try:
                return self._send(commands)
            except NoScriptError:
                self._load_scripts()
                return self._send(commands)

    def _run(self, plan: Plan[T]) -> T:
        reply: Any = None
        while True:
            try:
                step = plan.send(reply)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            reply = None if isinstance(step, Emit) else self._execute(step)

    def _stream(self, plan: Plan[None]) -> Iterator[CheckpointTuple]:
        reply: Any = None
        while True:
            try:
                step = plan.send(reply)
            except StopIteration:
                return
            if isinstance(step, Emit):
                reply = None
                yield from step.items
            else:
                reply = self._execute(step)
