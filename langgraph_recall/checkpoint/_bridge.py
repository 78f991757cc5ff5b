"""Sync checkpointer methods for the *async* savers, run on the saver's event loop.

``AsyncRedisSaver`` and ``AsyncPostgresSaver`` are asynchronous; with this mixin their
sync methods work too when called from another thread than the loop the saver runs on
(e.g. ``graph.invoke`` in a worker thread): each sync call submits its ``a*`` twin to that
loop and waits -- bounded: a loop that runs nothing for ``loop_timeout`` seconds (blocked,
or deadlocked on the waiting thread) fails the call with
:class:`~langgraph_recall.errors.EventLoopStalledError`. On the loop itself (where
waiting would block the loop it needs) the call is refused with
:class:`~langgraph_recall.errors.SyncCallOnEventLoopError`. It is
the reverse of :class:`~langgraph_recall.checkpoint._threaded.ThreadedAsyncMethods`.

Example:
    ```python
    import asyncio
    from typing import Any

    from langgraph_recall.checkpoint._bridge import LoopBridgedSyncMethods
    from langgraph_recall.errors import SyncCallOnEventLoopError


    class BridgedSaver(LoopBridgedSyncMethods):
        sync_twin = "InMemorySaver"

        def __init__(self) -> None:
            super().__init__()
            self.loop = asyncio.get_running_loop()

        async def aget_tuple(self, config: Any) -> None:
            return None


    async def main() -> None:
        saver = BridgedSaver()
        config = {"configurable": {"thread_id": "t"}}
        assert await asyncio.to_thread(saver.get_tuple, config) is None  # another thread
        try:
            saver.get_tuple(config)  # on the loop: refused
        except SyncCallOnEventLoopError:
            pass
        else:
            raise AssertionError("expected SyncCallOnEventLoopError")


    asyncio.run(main())
    ```
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)

from langgraph_recall._internal.loop_bridge import DEFAULT_LOOP_TIMEOUT, run_on_loop
from langgraph_recall.errors import SyncCallOnEventLoopError

__all__ = ["LoopBridgedSyncMethods"]

T = TypeVar("T")


class LoopBridgedSyncMethods(BaseCheckpointSaver[str]):
    """Mixin: each sync checkpointer method runs its ``a*`` twin on :attr:`loop`.

    Put it first in the bases so it overrides the base class's sync methods. The saver
    sets :attr:`loop` (``None`` until known: every sync call is refused then) and names
    its sync sibling in :attr:`sync_twin` for the refusal message. Besides the
    ``BaseCheckpointSaver`` surface it bridges ``prune`` and ``forget_threads`` (both
    savers implement ``aprune`` and ``aforget_threads``); other methods (``sweep`` ...)
    bridge with :meth:`_bridge`.
    """

    loop: asyncio.AbstractEventLoop | None
    """The event loop the saver's async methods run on."""

    sync_twin: ClassVar[str] = "the sync saver"
    """The saver to use instead on the loop (named in the refusal message)."""

    loop_timeout: float = DEFAULT_LOOP_TIMEOUT
    """Seconds a sync call waits while :attr:`loop` runs nothing (a blocked or deadlocked
    loop) before it fails with :class:`~langgraph_recall.errors.EventLoopStalledError`; a
    slow call on a live loop is bounded by the saver's own timeouts instead."""

    def _bridge(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on :attr:`loop` from another thread and return its result.

        Raises:
            SyncCallOnEventLoopError: Called on the loop itself, or the loop is unknown or
                not running (``coro`` is closed unstarted).
            EventLoopStalledError: The loop ran nothing for :attr:`loop_timeout` seconds
                while the call waited (it is cancelled; no thread stays stuck).
        """
        loop = self.loop
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is None or running is loop or not loop.is_running():
            coro.close()
            raise SyncCallOnEventLoopError(
                f"{type(self).__name__}'s sync methods only work from a thread other than "
                "the event loop the saver was created on, while that loop runs; on the loop "
                "use the async methods (ainvoke/astream, `await saver.aget_tuple(...)`), or "
                f"use {self.sync_twin}"
            )
        return run_on_loop(coro, loop, self.loop_timeout, type(self).__name__)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """:meth:`aget_tuple` on the saver's loop (call from another thread)."""
        return self._bridge(self.aget_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """:meth:`alist` on the saver's loop (collected there, then iterated here)."""

        async def collect() -> builtins.list[CheckpointTuple]:
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
        """:meth:`aput` on the saver's loop."""
        return self._bridge(self.aput(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """:meth:`aput_writes` on the saver's loop."""
        self._bridge(self.aput_writes(config, writes, task_id, task_path))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """:meth:`aget_delta_channel_history` on the saver's loop."""
        return self._bridge(self.aget_delta_channel_history(config=config, channels=channels))

    def delete_thread(self, thread_id: str) -> None:
        """:meth:`adelete_thread` on the saver's loop."""
        self._bridge(self.adelete_thread(thread_id))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """:meth:`acopy_thread` on the saver's loop."""
        self._bridge(self.acopy_thread(source_thread_id, target_thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """:meth:`adelete_for_runs` on the saver's loop."""
        self._bridge(self.adelete_for_runs(run_ids))

    async def aprune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: str = "keep_latest",
        keep_last: int | None = None,
    ) -> None:
        """Thin out or delete threads (``checkpoint._config.checked_prune``): the saver's."""
        raise NotImplementedError

    def prune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: str = "keep_latest",
        keep_last: int | None = None,
    ) -> None:
        """:meth:`aprune` on the saver's loop."""
        self._bridge(self.aprune(thread_ids, strategy=strategy, keep_last=keep_last))

    async def aforget_threads(self, thread_ids: Sequence[str]) -> None:
        """Erase threads and what they leave behind: the saver's."""
        raise NotImplementedError

    def forget_threads(self, thread_ids: Sequence[str]) -> None:
        """:meth:`aforget_threads` on the saver's loop."""
        self._bridge(self.aforget_threads(thread_ids))
