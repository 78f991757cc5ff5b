"""An MCP server over the memory store: one user's memories as tools, over stdio.

``langgraph-recall mcp --user ID`` (the ``mcp`` extra, the official ``mcp`` Python SDK)
serves these tools, every one scoped to the user given at start — the namespace
``("memories", "user_id:<id>")`` the memory nodes use, so an MCP client and a LangGraph
agent share the same memories:

* ``recall(query, limit=5)``: hybrid search, best first;
* ``remember(content, kind="semantic", importance=None)``: store a memory, returns its key;
* ``forget(key)``: delete one memory of this user;
* ``list_memories(limit=20)``: the most recently updated memories.

Input is validated like the store's ``put``/``search``; a refused call comes back as a
tool error naming the problem. No tool takes a namespace or a user id, so a client cannot
reach another user's memories.

Example:
    ```python
    import asyncio

    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.mcp_server import MemoryTools

    tools = MemoryTools(InMemoryStore(), "ann")
    key = asyncio.run(tools.remember("Ann likes tea.", kind="preference"))
    assert [m["key"] for m in asyncio.run(tools.list_memories())] == [key]
    ```
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

from langgraph.store.base import BaseStore, SearchItem

from langgraph_recall.errors import ConfigurationError, InvalidNamespaceError, InvalidValueError
from langgraph_recall.nodes import user_namespace
from langgraph_recall.store._values import MEMORY_KINDS, validate_key

__all__ = ["MAX_LIMIT", "MemoryTools", "build_server"]

MAX_LIMIT = 100
T = TypeVar("T")


def _limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidValueError(f"limit must be an int from 1 to {MAX_LIMIT}, got {limit!r}")
    return limit


def _memory(item: SearchItem) -> dict[str, Any]:
    value = item.value
    return {
        "key": item.key,
        "content": value.get("content"),
        "kind": value.get("kind"),
        "importance": value.get("importance"),
        "valid_from": value.get("valid_from"),
        "updated_at": item.updated_at.isoformat(),
        "score": item.score,
    }


@dataclass
class MemoryTools:
    """The tools' logic on any ``BaseStore`` (async methods), for one user."""

    store: BaseStore
    user_id: str

    def __post_init__(self) -> None:
        self.namespace = user_namespace(self.user_id)

    async def recall(self, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """Search this user's memories for ``query``; best first."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidValueError("query must be non-empty text")
        items = await self.store.asearch(self.namespace, query=query, limit=_limit(limit))
        return [_memory(item) for item in items]

    async def remember(
        self, content: str, kind: str = "semantic", importance: int | None = None
    ) -> str:
        """Store a memory for this user; returns its key."""
        if not isinstance(content, str) or not content.strip():
            raise InvalidValueError("content must be non-empty text")
        if kind not in MEMORY_KINDS:
            raise InvalidValueError(f"kind must be one of {sorted(MEMORY_KINDS)}, got {kind!r}")
        value: dict[str, Any] = {"content": content, "kind": kind, "source": {"by": "mcp"}}
        if importance is not None:
            value["importance"] = importance
        key = uuid.uuid4().hex
        await self.store.aput(self.namespace, key, value)
        return key

    async def forget(self, key: str) -> bool:
        """Delete one memory of this user; ``False`` when it does not exist."""
        validate_key(key)
        if await self.store.aget(self.namespace, key) is None:
            return False
        await self.store.adelete(self.namespace, key)
        return True

    async def list_memories(self, limit: int = 20) -> list[dict[str, Any]]:
        """This user's memories, most recently updated first."""
        items = await self.store.asearch(self.namespace, limit=_limit(limit))
        return [_memory(item) for item in items]


def build_server(tools: MemoryTools) -> Any:
    """An ``mcp`` ``MCPServer`` exposing ``tools`` (needs the ``mcp`` extra)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from langgraph_recall._version import __version__

    async def refused(call: Awaitable[T]) -> T:
        """A bad argument is the client's to correct: its message goes back as a tool error
        (a backend failure stays an unexpected one, its details in the server's log)."""
        try:
            return await call
        except (InvalidValueError, InvalidNamespaceError, ConfigurationError) as exc:
            raise ToolError(str(exc)) from exc

    server = MCPServer(
        name="langgraph-recall",
        version=__version__,
        instructions="Long-term memory of one user: recall before answering, remember "
        "lasting facts and preferences, forget what the user asks you to forget.",
    )

    @server.tool(description="Search the user's memories; best matches first.")
    async def recall(query: str, limit: int = 5) -> list[dict[str, Any]]:
        return await refused(tools.recall(query, limit))

    @server.tool(
        description="Remember a lasting fact, preference or instruction of the user. kind: "
        "semantic, episodic, procedural, preference or reflection; importance 1-10."
    )
    async def remember(content: str, kind: str = "semantic", importance: int | None = None) -> str:
        return await refused(tools.remember(content, kind, importance))

    @server.tool(description="Forget (delete) one memory of the user by its key.")
    async def forget(key: str) -> bool:
        return await refused(tools.forget(key))

    @server.tool(description="List the user's memories, most recently updated first.")
    async def list_memories(limit: int = 20) -> list[dict[str, Any]]:
        return await refused(tools.list_memories(limit))

    return server
