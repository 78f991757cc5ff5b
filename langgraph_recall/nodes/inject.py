"""The ``inject`` node: the retrieved memories as one ``<memory>…</memory>`` system message
with a stable id, replacing last turn's block.

The three nodes wired together: the example of ``langgraph_recall.nodes.retrieve``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, RemoveMessage, SystemMessage

from langgraph_recall._memory.context import NodeContext, messages_of, state_value
from langgraph_recall._memory.messages import (
    MEMORY_BLOCK_ID,
    render_memory_block,
)
from langgraph_recall.nodes._base import MemoryNode
from langgraph_recall.prompts import DEFAULT_MEMORY_BLOCK_PROMPT

__all__ = ["InjectNode", "block_update"]


def block_update(
    memories: Sequence[Mapping[str, Any]],
    messages: Sequence[BaseMessage],
    prompt: str,
    messages_key: str = "messages",
) -> dict[str, Any]:
    """State update that sets (or removes) the ``<memory>`` block (pure).

    Example:
        ```python
        from langgraph_recall.nodes.inject import MEMORY_BLOCK_ID, block_update

        update = block_update([{"content": "User likes tea."}], [], "<memory>{memories}</memory>")
        assert update["messages"][0].id == MEMORY_BLOCK_ID
        ```
    """
    if not memories:
        if any(m.id == MEMORY_BLOCK_ID for m in messages):
            return {messages_key: [RemoveMessage(id=MEMORY_BLOCK_ID)]}
        return {}
    block = render_memory_block(memories, prompt)
    return {messages_key: [SystemMessage(block, id=MEMORY_BLOCK_ID)]}


class InjectNode(MemoryNode):
    """Put the retrieved memories into the messages as one ``<memory>`` system block.

    The block has a stable message id, so each turn replaces the previous block in place
    instead of piling up; with no memories the old block is removed.

    Args:
        prompt: Block template with ``{memories}`` (default
            :data:`~langgraph_recall.prompts.DEFAULT_MEMORY_BLOCK_PROMPT`).
        messages_key / memories_key: State keys.

    Example:
        ```python
        from langgraph_recall.nodes import InjectNode

        out = InjectNode().invoke({"messages": [], "memories": [{"content": "User likes tea."}]})
        assert "<memory>" in out["messages"][0].content
        ```
    """

    node_name = "inject_memories"

    def __init__(
        self,
        *,
        prompt: str = DEFAULT_MEMORY_BLOCK_PROMPT,
        messages_key: str = "messages",
        memories_key: str = "memories",
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        self.prompt = prompt
        self.messages_key = messages_key
        self.memories_key = memories_key

    def _run(self, state: Any, ctx: NodeContext) -> dict[str, Any]:
        memories = state_value(state, self.memories_key) or []
        messages = messages_of(state, self.messages_key)
        return block_update(memories, messages, self.prompt, self.messages_key)

    async def _arun(self, state: Any, ctx: NodeContext) -> dict[str, Any]:
        return self._run(state, ctx)
