"""``SummaryMiddleware``: the sliding summary of :class:`~langgraph_recall.nodes.SummarizeNode`
for ``create_agent``.

Before each model call the node's plan runs on the conversation: when it passes
``trigger_fraction`` of ``max_tokens``, older messages are folded into a running summary
and **removed from the state** (checkpoints stop growing); an ``AIMessage`` with tool calls
and its ``ToolMessage`` s are kept or folded together, never split. The summary stands at
the front of the state as one system message (stable id) and is moved into the request's
system message on every model call.

Example:
    ```python
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_recall.middleware import SummaryMiddleware
    from langgraph_recall.offline import ScriptedChatModel

    agent = create_agent(ScriptedChatModel(default="ok " * 60), tools=[],
                         middleware=[SummaryMiddleware(max_tokens=400, keep_turns=1)],
                         checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}
    for i in range(6):
        out = agent.invoke({"messages": [("user", f"question {i} " * 30)]}, config)
    assert out["messages"][0].id == "langgraph-recall:summary-block"
    ```
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AnyMessage, BaseMessage
from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime

from langgraph_recall._memory.context import messages_of
from langgraph_recall.middleware._core import lift_blocks, summary_rewrite
from langgraph_recall.middleware.memory import current_config
from langgraph_recall.nodes import ExtractNode, MemoryStats, SummarizeNode

__all__ = ["SummaryMiddleware"]


class SummaryMiddleware(AgentMiddleware[AgentState[Any], Any]):
    """Fold old messages into a running summary; tool-call groups are never split.

    Args:
        model: Chat model writing the summary (``None``: deterministic extractive summary,
            no model call).
        max_tokens / trigger_fraction / keep_turns / max_summary_tokens: As in
            :class:`~langgraph_recall.nodes.SummarizeNode`.
        extract: An :class:`~langgraph_recall.nodes.ExtractNode` run on the overflow before
            it is folded (e.g. ``MemoryMiddleware(...).extract``), so facts said long ago
            still reach long-term memory.
        stats: Shared stats (summary model calls count as ``summarize``).
        summarize: A configured :class:`~langgraph_recall.nodes.SummarizeNode` instead.

    Example:
        ```python
        from langgraph_recall.middleware.summary import SummaryMiddleware

        middleware = SummaryMiddleware(max_tokens=2000, keep_turns=3)
        assert middleware.summarize.max_tokens == 2000
        ```
    """

    def __init__(
        self,
        model: Runnable[LanguageModelInput, BaseMessage] | None = None,
        *,
        max_tokens: int = 4000,
        trigger_fraction: float = 0.8,
        keep_turns: int = 2,
        max_summary_tokens: int | None = None,
        extract: ExtractNode | None = None,
        stats: MemoryStats | None = None,
        summarize: SummarizeNode | None = None,
    ) -> None:
        self.summarize = summarize or SummarizeNode(
            model=model,
            max_tokens=max_tokens,
            trigger_fraction=trigger_fraction,
            keep_turns=keep_turns,
            max_summary_tokens=max_summary_tokens,
            extract=extract,
            stats=stats,
        )
        self.tools = []

    def _rewrite(self, state: AgentState[Any], update: dict[str, Any]) -> dict[str, Any] | None:
        key = self.summarize.messages_key
        if not update.get(key):
            return None
        return {key: summary_rewrite(messages_of(state, key), update[key])}

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Fold the overflow when the conversation is over budget (a state update)."""
        return self._rewrite(state, self.summarize.invoke(state, current_config()))

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async :meth:`before_model`."""
        return self._rewrite(state, await self.summarize.ainvoke(state, current_config()))

    @staticmethod
    def _lifted(request: ModelRequest[Any]) -> ModelRequest[Any]:
        system, messages = lift_blocks(request.system_message, request.messages)
        if len(messages) == len(request.messages):
            return request
        return request.override(system_message=system, messages=cast("list[AnyMessage]", messages))

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        """Send the summary in the system message (providers want system text first)."""
        return handler(self._lifted(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """Async :meth:`wrap_model_call`."""
        return await handler(self._lifted(request))
