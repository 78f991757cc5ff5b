"""Entry points for the LangGraph server (``langgraph dev``, LangGraph Platform).

``langgraph.json`` names these by import path, so the server runs our graphs on **our**
Postgres checkpointer and memory store instead of its own persistence:

.. code-block:: json

    {
      "dependencies": ["."],
      "graphs": {"memory_agent": "langgraph_recall.graphs.platform:memory_agent"},
      "checkpointer": {"path": "langgraph_recall.graphs.platform.checkpointer"},
      "store": {"path": "langgraph_recall.graphs.platform.store"}
    }

The factories are async context managers: the server enters one per event loop and
closes it at shutdown. Both read the database from ``$LANGGRAPH_RECALL_POSTGRES_URI``
(else the embedded Postgres, :func:`langgraph_recall.embedded.default_dsn`) and run
``setup()`` (idempotent migrations) before the first request. The graphs use a real model
when ``OPENAI_API_KEY`` is set and the offline stand-ins otherwise
(:mod:`langgraph_recall.offline`).

Example:
    ```python
    import asyncio
    import os

    from langgraph_recall.graphs import platform

    os.environ["LANGGRAPH_RECALL_POSTGRES_URI"] = DB_URI  # as langgraph.json's "env" sets it


    async def main() -> None:
        async with platform.checkpointer() as saver, platform.store() as store:
            assert type(saver).__name__ == "AsyncPostgresSaver"
            assert type(store).__name__ == "AsyncPostgresMemoryStore"


    asyncio.run(main())
    ```
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph.state import CompiledStateGraph

from langgraph_recall.embedded import default_dsn, resolve_redis_url
from langgraph_recall.graphs.memory_agent import build_graph
from langgraph_recall.graphs.memory_tools_agent import build_graph as build_memory_tools_graph
from langgraph_recall.offline import ScriptedChatModel, default_chat_model

if TYPE_CHECKING:
    from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver
    from langgraph_recall.checkpoint.redis import AsyncRedisSaver
    from langgraph_recall.store.postgres import AsyncPostgresMemoryStore

__all__ = [
    "ENV_REDIS_PREFIX",
    "ENV_REDIS_URL",
    "checkpointer",
    "memory_agent",
    "memory_tools_agent",
    "redis_checkpointer",
    "store",
]

ENV_REDIS_URL = "LANGGRAPH_RECALL_REDIS_URL"
"""Redis URL of :func:`redis_checkpointer` (default ``redis://127.0.0.1:6379/0``)."""
ENV_REDIS_PREFIX = "LANGGRAPH_RECALL_REDIS_PREFIX"
"""Key prefix of :func:`redis_checkpointer` (default ``lgm``)."""


@asynccontextmanager
async def checkpointer() -> AsyncIterator[AsyncPostgresSaver]:
    """Our :class:`~langgraph_recall.checkpoint.postgres.AsyncPostgresSaver`, set up.

    For ``"checkpointer": {"path": "langgraph_recall.graphs.platform.checkpointer"}``.

    Example:
        ```python
        import asyncio
        import os

        from langgraph_recall.graphs.platform import checkpointer

        os.environ["LANGGRAPH_RECALL_POSTGRES_URI"] = DB_URI


        async def main() -> None:
            async with checkpointer() as saver:
                assert await saver.aget_tuple({"configurable": {"thread_id": "nope"}}) is None


        asyncio.run(main())
        ```
    """
    from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver

    dsn = await asyncio.to_thread(default_dsn)  # may start the embedded server
    async with AsyncPostgresSaver.from_conn_string(dsn) as saver:
        await saver.setup()
        yield saver


@asynccontextmanager
async def redis_checkpointer() -> AsyncIterator[AsyncRedisSaver]:
    """Our :class:`~langgraph_recall.checkpoint.redis.AsyncRedisSaver` on
    ``$LANGGRAPH_RECALL_REDIS_URL`` (plain Redis ≥ 6.2 or Valkey) under the key prefix
    ``$LANGGRAPH_RECALL_REDIS_PREFIX``, set up.

    For ``"checkpointer": {"path": "langgraph_recall.graphs.platform.redis_checkpointer"}``.

    Example:
        ```python
        import asyncio
        import os

        from langgraph_recall.graphs.platform import redis_checkpointer

        os.environ["LANGGRAPH_RECALL_REDIS_URL"] = REDIS_URL


        async def main() -> None:
            async with redis_checkpointer() as saver:
                assert type(saver).__name__ == "AsyncRedisSaver"
                assert await saver.aget_tuple({"configurable": {"thread_id": "nope"}}) is None


        asyncio.run(main())
        ```
    """
    from langgraph_recall.checkpoint.redis import AsyncRedisSaver

    url = resolve_redis_url(None)
    prefix = os.environ.get(ENV_REDIS_PREFIX) or "lgm"
    async with AsyncRedisSaver.from_conn_string(url, prefix=prefix) as saver:
        await saver.setup()
        yield saver


@asynccontextmanager
async def store() -> AsyncIterator[AsyncPostgresMemoryStore]:
    """Our :class:`~langgraph_recall.store.postgres.AsyncPostgresMemoryStore`, set up, with
    the offline default embedder (loaded off the event loop).

    For ``"store": {"path": "langgraph_recall.graphs.platform.store"}``. For another
    embedder, write your own factory the same way and pass ``index={"dims": ..., "embed":
    ...}``.

    Example:
        ```python
        import asyncio
        import os

        from langgraph_recall.graphs.platform import store

        os.environ["LANGGRAPH_RECALL_POSTGRES_URI"] = DB_URI


        async def main() -> None:
            async with store() as memories:
                ns = ("memories", "user_id:u1")
                await memories.aput(ns, "k1", {"content": "User likes tea."})
                hits = await memories.asearch(ns, query="tea")
                assert hits[0].key == "k1"


        asyncio.run(main())
        ```
    """
    from langgraph_recall.embeddings import DEFAULT_EMBEDDING_DIMS, default_embeddings
    from langgraph_recall.store.postgres import AsyncPostgresMemoryStore

    dsn = await asyncio.to_thread(default_dsn)
    embedder = await asyncio.to_thread(default_embeddings)  # reads the model files once
    index: Any = {"dims": DEFAULT_EMBEDDING_DIMS, "embed": embedder}
    async with AsyncPostgresMemoryStore.from_conn_string(dsn, index=index) as memories:
        await memories.asetup()
        yield memories


def _tools_model() -> BaseChatModel:
    model = default_chat_model()
    if model is not None:
        return model
    # Offline: the memory-tools agent needs a tool-calling model; this one only says so.
    return ScriptedChatModel(
        default="Offline mode: set OPENAI_API_KEY to run the memory-tools agent with a model."
    )


memory_agent: CompiledStateGraph[Any, Any, Any, Any] = build_graph(default_chat_model(), store=None)
"""The memory chat agent; the server supplies checkpointer and store at run time."""

memory_tools_agent: CompiledStateGraph[Any, Any, Any, Any] = build_memory_tools_graph(
    _tools_model(), store=None
)
"""The memory-tools agent; the server supplies checkpointer and store at run time."""
