"""An agent that manages its own long-term memory with tools: ``remember``, ``recall``,
``forget`` (LangMem's "hot path" style), with the ``<memory>`` block injected each turn.

Graph: ``retrieve → inject → agent ⇄ tools``. The model must support tool calling
(``bind_tools``); tests drive it with a scripted fake model.

Example:
    ```python
    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.graphs import build_memory_tools_graph
    from langgraph_recall.offline import ScriptedChatModel, tool_call_message

    model = ScriptedChatModel(responses=[
        tool_call_message("remember", {"content": "User likes tea.", "slot": "drink"}),
        "Noted!",
    ])
    store = InMemoryStore()
    graph = build_memory_tools_graph(model, store=store)
    out = graph.invoke({"messages": [("user", "I like tea")]},
                       {"configurable": {"user_id": "u1", "thread_id": "t1"}})
    assert out["messages"][-1].content == "Noted!"
    assert store.search(("memories", "user_id:u1"))[0].value["content"] == "User likes tea."
    ```
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.base import BaseStore

from langgraph_recall.extraction import PIIFilter
from langgraph_recall.graphs.memory_agent import attach_extras
from langgraph_recall.nodes import (
    DEFAULT_NAMESPACE,
    InjectNode,
    MemoryContext,
    MemoryState,
    MemoryStats,
    RespondNode,
    RetrieveNode,
)
from langgraph_recall.nodes.tools import create_memory_tools

__all__ = ["TOOLS_SYSTEM_PROMPT", "build_graph"]

TOOLS_SYSTEM_PROMPT = """\
You are a helpful assistant with long-term memory tools. When the user tells you a lasting
fact about themselves (name, city, employer, preferences, instructions), call `remember`
with one third-person sentence and a slot. Call `recall` to look facts up, and `forget` with
a memory id when the user says something is no longer true. Facts you already remember are
listed in the <memory> block."""


def build_graph(
    model: BaseChatModel,
    *,
    store: BaseStore | None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    namespace: tuple[str, ...] = DEFAULT_NAMESPACE,
    pii: PIIFilter | None = None,
    memory_token_budget: int = 500,
    system_prompt: str = TOOLS_SYSTEM_PROMPT,
    stats: MemoryStats | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build and compile the memory-tools agent.

    Args:
        model: A chat model with tool calling.
        store: Long-term memory (``None``: the platform's store at run time).
        checkpointer: Working memory per ``thread_id``.
        namespace: Namespace template shared by the retrieval node and the tools.
        pii: PII filter of ``remember`` (default: refuse text with PII).
        memory_token_budget: Budget of the injected ``<memory>`` block.
        system_prompt: Instructions for using the tools.
        stats: Shared :class:`MemoryStats`; agent calls count as ``respond``.

    Returns:
        The compiled graph (``graph.memory_stats`` holds the call counts).
    """
    stats = stats or MemoryStats()
    tools = create_memory_tools(namespace=namespace, pii=pii)
    agent = RespondNode(
        model.bind_tools(tools), system_prompt=system_prompt, stats=stats, name="agent"
    )
    builder = StateGraph(MemoryState, context_schema=MemoryContext)
    builder.add_sequence(
        [RetrieveNode(namespace=namespace, token_budget=memory_token_budget), InjectNode(), agent]
    )
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "retrieve_memories")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    graph = builder.compile(checkpointer=checkpointer, store=store, name="memory_tools_agent")
    attach_extras(graph, memory_stats=stats)
    return graph
