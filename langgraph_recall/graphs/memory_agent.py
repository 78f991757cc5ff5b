"""A chat agent with long-term memory: retrieve → inject → respond → extract, plus a
sliding summary of long conversations (and optional reflection).

``build_graph(model, store=...)`` returns a compiled graph with state key ``messages``.
Without a model (``model=None``) it runs offline: the deterministic
:class:`~langgraph_recall.offline.TemplatedResponder` answers and the
:class:`~langgraph_recall.extraction.RuleBasedExtractor` extracts — neither is an LLM.

Example:
    ```python
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.graphs import build_graph

    agent = build_graph(None, store=InMemoryStore(), checkpointer=InMemorySaver())
    config = {"configurable": {"user_id": "u1", "thread_id": "t1"}}
    agent.invoke({"messages": [("user", "My name is Zhang San.")]}, config)
    config = {"configurable": {"user_id": "u1", "thread_id": "t2"}}
    reply = agent.invoke({"messages": [("user", "What's my name?")]}, config)
    assert reply["messages"][-1].content == "Your name is Zhang San (from memory)."
    ```
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from langgraph_recall.extraction import (
    MemoryExtractor,
    PIIFilter,
    RuleBasedExtractor,
    extractor_for,
)
from langgraph_recall.nodes import (
    DEFAULT_NAMESPACE,
    ExtractNode,
    InjectNode,
    MemoryContext,
    MemoryState,
    MemoryStats,
    ReflectNode,
    RespondNode,
    RetrieveNode,
    SummarizeNode,
)
from langgraph_recall.offline import TemplatedResponder
from langgraph_recall.prompts import DEFAULT_SYSTEM_PROMPT

__all__ = ["aflush", "build_graph", "flush"]


def build_graph(
    model: BaseChatModel | None,
    *,
    store: BaseStore | None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    extractor: MemoryExtractor | None = None,
    extraction: Literal["inline", "background", "off"] = "inline",
    namespace: tuple[str, ...] = DEFAULT_NAMESPACE,
    memory_token_budget: int = 500,
    retrieve_limit: int = 10,
    max_tokens: int = 4000,
    trigger_fraction: float = 0.8,
    keep_turns: int = 2,
    summary_model: BaseChatModel | None = None,
    extract_overflow: bool = False,
    pii: PIIFilter | None = None,
    min_importance: int = 3,
    reflect_threshold: float | None = None,
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
    stats: MemoryStats | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build and compile the memory chat agent.

    Graph: ``summarize → retrieve → inject → respond → extract [→ reflect]``.

    Args:
        model: The chat model; ``None`` → offline :class:`TemplatedResponder`.
        store: Long-term memory (``None``: the platform's store is used at run time).
        checkpointer: Working memory per ``thread_id``.
        extractor: Default: :class:`LLMExtractor` on ``model``, or the rule-based one
            offline.
        extraction: ``"inline"`` (in the turn), ``"background"`` (off the response path;
            call :func:`flush` / :func:`aflush` to wait) or ``"off"``.
        namespace: Namespace template of the memories.
        memory_token_budget / retrieve_limit: Retrieval budget.
        max_tokens / trigger_fraction / keep_turns: Sliding-summary settings.
        summary_model: Model for summaries (default: ``model``; offline: extractive).
        extract_overflow: Also mine folded messages for memories (useful with
            ``extraction="off"``).
        pii: PII filter of extraction (default: drop memories containing PII).
        min_importance: Candidates below this importance are not stored.
        reflect_threshold: Add a reflection node with this importance threshold.
        system_prompt: System prompt of the responder.
        stats: Shared :class:`MemoryStats` (default: a new one, ``graph.memory_stats``).

    Returns:
        The compiled graph; it also carries ``memory_stats``, ``extract_node``,
        ``flush()`` and ``aflush()``.
    """
    stats = stats or MemoryStats()
    responder = model if model is not None else TemplatedResponder()
    if extractor is None:
        # model=None is the documented offline mode: the rules, chosen on purpose
        extractor = extractor_for(model, who="build_graph") if model else RuleBasedExtractor()
    extract = ExtractNode(
        extractor=extractor,
        namespace=namespace,
        pii=pii or PIIFilter(),
        min_importance=min_importance,
        background=extraction == "background",
        stats=stats,
    )
    summarize = SummarizeNode(
        model=summary_model or model,
        max_tokens=max_tokens,
        trigger_fraction=trigger_fraction,
        keep_turns=keep_turns,
        extract=extract if extract_overflow else None,
        stats=stats,
    )
    builder = StateGraph(MemoryState, context_schema=MemoryContext)
    steps: list[Any] = [
        summarize,
        RetrieveNode(namespace=namespace, limit=retrieve_limit, token_budget=memory_token_budget),
        InjectNode(),
        RespondNode(responder, system_prompt=system_prompt, stats=stats),
    ]
    if extraction != "off":
        steps.append(extract)
    if reflect_threshold is not None:
        steps.append(
            ReflectNode(model=model, namespace=namespace, threshold=reflect_threshold, stats=stats)
        )
    builder.add_sequence(steps)
    builder.add_edge(START, summarize.label)
    builder.add_edge(steps[-1].label, END)
    compiled = builder.compile(checkpointer=checkpointer, store=store, name="memory_agent")
    attach_extras(
        compiled,
        memory_stats=stats,
        extract_node=extract,
        flush=extract.flush,
        aflush=extract.aflush,
    )
    return compiled


def attach_extras(compiled: CompiledStateGraph[Any, Any, Any, Any], **extras: Any) -> None:
    """Give a compiled graph extra public attributes (``graph.memory_stats`` …)."""
    vars(compiled).update(extras)


def _extract_nodes(compiled: Any) -> list[ExtractNode]:
    return [node.bound for node in compiled.nodes.values() if isinstance(node.bound, ExtractNode)]


def flush(compiled: Any, timeout: float | None = None) -> None:
    """Wait for background extraction of every ``ExtractNode`` in a compiled graph.

    Example:
        ```python
        from langgraph.store.memory import InMemoryStore

        from langgraph_recall.graphs import build_graph, flush

        store = InMemoryStore()
        agent = build_graph(None, store=store, extraction="background")
        agent.invoke({"messages": [("user", "I live in Lisbon.")]},
                     {"configurable": {"user_id": "u1", "thread_id": "t1"}})
        flush(agent)  # the memory is in the store now
        assert [m.value["content"] for m in store.search(("memories", "user_id:u1"))] == [
            "User lives in Lisbon."
        ]
        ```
    """
    for node in _extract_nodes(compiled):
        node.flush(timeout)


async def aflush(compiled: Any) -> None:
    """Await background extraction of every ``ExtractNode`` in a compiled graph.

    Example:
        ```python
        import asyncio

        from langgraph.store.memory import InMemoryStore

        from langgraph_recall.graphs import aflush, build_graph


        async def main() -> None:
            store = InMemoryStore()
            agent = build_graph(None, store=store, extraction="background")
            await agent.ainvoke({"messages": [("user", "I live in Lisbon.")]},
                                {"configurable": {"user_id": "u1", "thread_id": "t1"}})
            await aflush(agent)
            assert len(await store.asearch(("memories", "user_id:u1"))) == 1

        asyncio.run(main())
        ```
    """
    for node in _extract_nodes(compiled):
        await node.aflush()
