"""The ``respond`` node: your chat model called with the system text first.

The three nodes wired together: the example of ``langgraph_recall.nodes.retrieve``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable

from langgraph_recall._memory.context import NodeContext, messages_of
from langgraph_recall._memory.messages import (
    model_input,
)
from langgraph_recall.nodes._base import MemoryNode, MemoryStats
from langgraph_recall.prompts import DEFAULT_SYSTEM_PROMPT

__all__ = ["RespondNode"]


class RespondNode(MemoryNode):
    """Call a chat model on the conversation with the memory/summary blocks in front.

    Args:
        model: Any LangChain chat model (or a Runnable such as ``model.bind_tools(...)``).
        system_prompt: Prepended system text (``None`` for none).
        stats: Shared :class:`MemoryStats`; each call is counted as ``respond``.

    Example:
        ```python
        from langgraph_recall.nodes import RespondNode
        from langgraph_recall.offline import TemplatedResponder

        out = RespondNode(TemplatedResponder()).invoke({"messages": [("user", "I like tea.")]})
        assert "offline" in out["messages"][0].content
        ```
    """

    node_name = "respond"

    def __init__(
        self,
        model: Runnable[LanguageModelInput, BaseMessage],
        *,
        system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
        messages_key: str = "messages",
        stats: MemoryStats | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        self.model = model
        self.system_prompt = system_prompt
        self.messages_key = messages_key
        self.stats = stats or MemoryStats()

    def _input(self, state: Any) -> list[BaseMessage]:
        messages = messages_of(state, self.messages_key)
        return model_input(messages, system_prompt=self.system_prompt)

    def _run(self, state: Any, ctx: NodeContext) -> dict[str, Any]:
        reply = self.model.invoke(self._input(state), config=ctx.config)
        self.stats.record_llm_call("respond")
        return {self.messages_key: [reply]}

    async def _arun(self, state: Any, ctx: NodeContext) -> dict[str, Any]:
        reply = await self.model.ainvoke(self._input(state), config=ctx.config)
        self.stats.record_llm_call("respond")
        return {self.messages_key: [reply]}
