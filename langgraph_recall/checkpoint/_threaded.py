"""Async checkpointer methods for the *sync* savers, run in a worker thread.

``RedisSaver`` and ``PostgresSaver`` are synchronous; with this mixin ``graph.ainvoke``
works on them too (each async call runs the sync method via ``asyncio.to_thread``).
The natively async savers (``AsyncRedisSaver``, ``AsyncPostgresSaver``) are the better
choice inside an async app. ``aprune`` and ``aforget_threads`` run the saver's ``prune``
and ``forget_threads`` (same arguments on both savers).

Example:
    ```python
    import asyncio

    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_recall.checkpoint._threaded import ThreadedAsyncMethods


    class ThreadedSaver(ThreadedAsyncMethods, InMemorySaver):
        pass  # InMemorySaver whose a* methods run its sync ones in a worker thread


    config = {"configurable": {"thread_id": "t"}}
    assert asyncio.run(ThreadedSaver().aget_tuple(config)) is None
    ```
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)

__all__ = ["ThreadedAsyncMethods"]


class ThreadedAsyncMethods(BaseCheckpointSaver[str]):
    """Mixin: each ``a*`` checkpointer method runs its sync twin in a worker thread.

    Put it first in the bases so it overrides the base class's ``NotImplementedError``
    async methods. The saver implements ``prune`` and ``forget_threads`` besides the
    ``BaseCheckpointSaver`` surface.
    """

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """:meth:`get_tuple` in a worker thread (prefer the native async saver in async apps)."""
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """:meth:`list` in a worker thread."""
        rows = await asyncio.to_thread(
            lambda: [*self.list(config, filter=filter, before=before, limit=limit)]
        )
        for row in rows:
            yield row

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """:meth:`put` in a worker thread."""
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """:meth:`put_writes` in a worker thread."""
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """:meth:`get_delta_channel_history` in a worker thread."""
        return await asyncio.to_thread(
            lambda: self.get_delta_channel_history(config=config, channels=channels)
        )

    async def adelete_thread(self, thread_id: str) -> None:
        """:meth:`delete_thread` in a worker thread."""
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """:meth:`copy_thread` in a worker thread."""
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """:meth:`delete_for_runs` in a worker thread."""
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    def prune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: str = "keep_latest",
        keep_last: int | None = None,
    ) -> None:
        """Thin out or delete threads (``checkpoint._config.checked_prune``): the saver's."""
        raise NotImplementedError

    async def aprune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: str = "keep_latest",
        keep_last: int | None = None,
    ) -> None:
        """:meth:`prune` in a worker thread."""
        await asyncio.to_thread(
            lambda: self.prune(thread_ids, strategy=strategy, keep_last=keep_last)
        )

    def forget_threads(self, thread_ids: Sequence[str]) -> None:
        """Erase threads and what they leave behind: the saver's."""
        raise NotImplementedError

    async def aforget_threads(self, thread_ids: Sequence[str]) -> None:
        """:meth:`forget_threads` in a worker thread."""
        await asyncio.to_thread(self.forget_threads, thread_ids)
