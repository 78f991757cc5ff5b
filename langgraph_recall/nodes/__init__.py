"""Prebuilt memory nodes for any LangGraph ``StateGraph``.

=====================  ==============================================================
node                   what it does
=====================  ==============================================================
:class:`RetrieveNode`  search the store for the latest user turn, keep the best under a
                       token budget (state key ``memories``)
:class:`InjectNode`    one ``<memory>…</memory>`` system block, replaced every turn
:class:`RespondNode`   call your chat model (system text first)
:class:`ExtractNode`   candidates → PII filter → ADD/UPDATE/INVALIDATE/NOOP → store
                       (inline or in the background, ``flush()``)
:class:`SummarizeNode` sliding summary; tool-call groups never split
:class:`ReflectNode`   ``reflection`` memories with ``derived_from`` links
=====================  ==============================================================

:func:`create_memory_tools` builds ``remember`` / ``recall`` / ``forget`` tools for agents
that manage memory themselves; :func:`model_input` orders messages for your own model node.
Every node that uses the store records which threads it ran for which user
(:class:`ThreadLink`; :func:`register_thread` for code outside the nodes), so
:func:`langgraph_recall.forget_user` finds every thread of a user.

All nodes are LangChain Runnables (``invoke`` and ``ainvoke``), take their options as
keywords, read ``user_id``/``thread_id`` from the runtime context (``context=``) or
``config["configurable"]``, and use the graph's store unless given ``store=``.

Example:
    ```python
    from langgraph.graph import START, StateGraph
    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.nodes import (
        ExtractNode,
        InjectNode,
        MemoryState,
        RespondNode,
        RetrieveNode,
    )
    from langgraph_recall.offline import TemplatedResponder

    builder = StateGraph(MemoryState)
    builder.add_sequence([RetrieveNode(), InjectNode(), RespondNode(TemplatedResponder()),
                          ExtractNode()])
    builder.add_edge(START, "retrieve_memories")
    store = InMemoryStore()
    graph = builder.compile(store=store)
    graph.invoke({"messages": [("user", "My name is Zhang San.")]},
                 config={"configurable": {"user_id": "u1", "thread_id": "t1"}})
    hits = store.search(("memories", "user_id:u1"))
    assert hits[0].value["content"] == "User's name is Zhang San."
    ```
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from langgraph_recall._memory.context import DEFAULT_NAMESPACE, NodeContext
from langgraph_recall._memory.messages import (
    MEMORY_BLOCK_ID,
    SUMMARY_BLOCK_ID,
    group_units,
    model_input,
)
from langgraph_recall._memory.registry import ThreadLink, aregister_thread, register_thread
from langgraph_recall.nodes._base import MemoryNode, MemoryStats, user_namespace
from langgraph_recall.nodes.extract import ExtractionJob, ExtractionReport, ExtractNode
from langgraph_recall.nodes.inject import InjectNode
from langgraph_recall.nodes.reflect import ReflectNode
from langgraph_recall.nodes.respond import RespondNode
from langgraph_recall.nodes.retrieve import RetrieveNode
from langgraph_recall.nodes.summarize import SummarizeNode
from langgraph_recall.nodes.tools import create_memory_tools

__all__ = [
    "DEFAULT_NAMESPACE",
    "MEMORY_BLOCK_ID",
    "SUMMARY_BLOCK_ID",
    "ExtractNode",
    "ExtractionJob",
    "ExtractionReport",
    "InjectNode",
    "MemoryContext",
    "MemoryNode",
    "MemoryState",
    "MemoryStats",
    "NodeContext",
    "ReflectNode",
    "RespondNode",
    "RetrieveNode",
    "SummarizeNode",
    "ThreadLink",
    "aregister_thread",
    "create_memory_tools",
    "group_units",
    "model_input",
    "register_thread",
    "user_namespace",
]


class MemoryContext(TypedDict, total=False):
    """Runtime context schema for memory graphs: ``graph.invoke(..., context={"user_id": "u1"})``.

    Pass it as ``StateGraph(..., context_schema=MemoryContext)``; add your own keys by
    subclassing. Identity falls back to ``config["configurable"]`` when absent.
    """

    user_id: str


class MemoryState(TypedDict, total=False):
    """Graph state with the keys the memory nodes use (extend it with your own).

    ``messages`` uses the ``add_messages`` reducer (ids, in-place replacement,
    ``RemoveMessage``); ``memories`` is written by ``retrieve`` and read by ``inject``;
    ``summary`` by ``summarize``; the reports by ``extract`` and ``reflect``.
    """

    messages: Annotated[list[AnyMessage], add_messages]
    memories: list[dict[str, Any]]
    summary: str
    memory_report: dict[str, Any]
    reflection_report: dict[str, Any]
