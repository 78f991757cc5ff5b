"""Shared shell of the memory nodes: the Runnable base class and its store/identity
resolution, LLM-call accounting, and store reads that honour validity on any ``BaseStore``
(what the nodes share with the middleware and the erasure is in
:mod:`langgraph_recall._memory.context`).

Example:
    ```python
    from langgraph_recall.nodes._base import MemoryStats

    stats = MemoryStats()
    stats.record_llm_call("extract")
    assert stats.snapshot()["llm_calls"] == {"extract": 1}
    ```
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config
from langgraph.store.base import BaseStore, SearchItem, SearchOp

from langgraph_recall._internal.identity import format_namespace
from langgraph_recall._memory.context import DEFAULT_NAMESPACE, NodeContext
from langgraph_recall.extraction.dates import parse_iso_datetime
from langgraph_recall.telemetry import span

__all__ = [
    "Clock",
    "MemoryNode",
    "MemoryStats",
    "is_current",
    "items_to_memories",
    "search_ops",
    "user_namespace",
]

Clock = Callable[[], datetime]


def user_namespace(
    user_id: str | int,
    template: tuple[str, ...] = DEFAULT_NAMESPACE,
    **identity: Any,
) -> tuple[str, ...]:
    """The namespace the memory nodes use for ``user_id`` under ``template`` -- what to
    pass to ``store.search`` / ``store.get`` yourself. Each placeholder's label names its
    field (``user_id:42``), so no layout's namespace of one user is a prefix of another
    user's; values are encoded reversibly (``.``, ``%`` and ``*`` become ``%2E``, ``%25``,
    ``%2A``), so ids like ``alice@example.com`` or ``org.team/user`` stay one label and
    never collide.

    Example:
        ```python
        from langgraph_recall.nodes import user_namespace

        assert user_namespace("u1") == ("memories", "user_id:u1")
        assert user_namespace("ann@example.com") == ("memories", "user_id:ann@example%2Ecom")
        assert user_namespace("u1", ("orgs", "{org}", "{user_id}"), org="acme.io") == (
            "orgs", "org:acme%2Eio", "user_id:u1")
        ```
    """
    return format_namespace(template, context={**identity, "user_id": user_id}, config=None)


def is_current(value: Mapping[str, Any], at: datetime) -> bool:
    """True when a memory value is valid at ``at`` (``valid_from <= at < invalid_at``, not
    expired). Used to filter stores that do not support ``as_of``.

    Example:
        ```python
        from langgraph_recall._memory.context import utc_now
        from langgraph_recall.nodes._base import is_current

        now = utc_now()
        assert not is_current({"invalid_at": "2000-01-01T00:00:00+00:00"}, now)
        ```
    """

    def moment(name: str) -> datetime | None:
        parsed = parse_iso_datetime(value.get(name))
        if parsed is not None and parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        return parsed

    start, end, expires = moment("valid_from"), moment("invalid_at"), moment("expires_at")
    if start is not None and start > at:
        return False
    if end is not None and end <= at:
        return False
    return not (expires is not None and expires <= at)


def search_ops(
    namespace: tuple[str, ...], queries: Sequence[tuple[str | None, dict[str, Any] | None, int]]
) -> list[SearchOp]:
    """``SearchOp`` s for ``(query, filter, limit)`` triples (one ``store.batch`` round trip).

    Example:
        ```python
        from langgraph_recall.nodes._base import search_ops

        ops = search_ops(("m", "u"), [("tea", None, 5)])
        assert ops[0].query == "tea" and ops[0].limit == 5
        ```
    """
    return [
        SearchOp(namespace_prefix=namespace, filter=flt, limit=limit, query=query)
        for query, flt, limit in queries
    ]


class MemoryStats:
    """Thread-safe counters shared by memory nodes: LLM calls per purpose and memory events.

    Example:
        ```python
        from langgraph_recall.nodes import MemoryStats

        stats = MemoryStats()
        stats.add(added=2)
        assert stats.snapshot()["events"]["added"] == 2
        ```
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._llm_calls: dict[str, int] = {}
        self._events: dict[str, int] = {}

    def record_llm_call(self, purpose: str, count: int = 1) -> None:
        """Count ``count`` model calls made for ``purpose`` (respond, extract, ...)."""
        with self._lock:
            self._llm_calls[purpose] = self._llm_calls.get(purpose, 0) + count

    def add(self, **events: int) -> None:
        """Add to event counters (added, invalidated, pii_dropped, turns_skipped, ...)."""
        with self._lock:
            for name, count in events.items():
                self._events[name] = self._events.get(name, 0) + count

    @property
    def total_llm_calls(self) -> int:
        """All model calls counted so far."""
        with self._lock:
            return sum(self._llm_calls.values())

    def snapshot(self) -> dict[str, dict[str, int]]:
        """A copy: ``{"llm_calls": {...}, "events": {...}}``."""
        with self._lock:
            return {"llm_calls": dict(self._llm_calls), "events": dict(self._events)}


def _current_runtime() -> Any:
    """LangGraph's ``Runtime`` of the running graph, or ``None`` outside a graph."""
    try:
        from langgraph.runtime import get_runtime

        return get_runtime()
    except (RuntimeError, KeyError, LookupError):
        return None


class MemoryNode(Runnable[Any, dict[str, Any]]):
    """Base class: a LangChain ``Runnable`` (sync + async) for ``StateGraph.add_node``.

    Subclasses implement ``_run(state, ctx)`` and ``_arun(state, ctx)`` returning the state
    update. The store comes from the ``store=`` argument, else from the graph
    (``compile(store=...)``); identity from the runtime context, else ``configurable``.
    """

    node_name = "memory_node"

    def __init__(self, *, store: BaseStore | None = None, name: str | None = None) -> None:
        self.store = store
        self.label: str = name or self.node_name
        self.name = self.label
        self.__name__ = self.label  # StateGraph.add_sequence names nodes by __name__

    def _context(self, config: RunnableConfig) -> NodeContext:
        runtime = _current_runtime()
        store = self.store
        if store is None and runtime is not None:
            store = runtime.store
        context = runtime.context if runtime is not None else None
        return NodeContext(store=store, context=context, config=config)

    def _run(self, state: Any, ctx: NodeContext) -> dict[str, Any]:
        raise NotImplementedError

    async def _arun(self, state: Any, ctx: NodeContext) -> dict[str, Any]:
        raise NotImplementedError

    def _invoke(
        self, state: Any, run_manager: CallbackManagerForChainRun, config: RunnableConfig
    ) -> dict[str, Any]:
        with span(f"memory_node {self.label}", {"langgraph_recall.node": self.label}):
            return self._run(state, self._context(config))

    async def _ainvoke(
        self, state: Any, run_manager: AsyncCallbackManagerForChainRun, config: RunnableConfig
    ) -> dict[str, Any]:
        with span(f"memory_node {self.label}", {"langgraph_recall.node": self.label}):
            return await self._arun(state, self._context(config))

    def invoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Run the node on a state (inside or outside a graph)."""
        return self._call_with_config(self._invoke, input, ensure_config(config))

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Async :meth:`invoke`."""
        return await self._acall_with_config(self._ainvoke, input, ensure_config(config))


def items_to_memories(items: Sequence[SearchItem]) -> list[dict[str, Any]]:
    """Search results as plain dicts for the ``memories`` state key.

    Example:
        ```python
        from langgraph_recall.nodes._base import items_to_memories

        assert items_to_memories([]) == []
        ```
    """
    memories: list[dict[str, Any]] = []
    for item in items:
        value = dict(item.value)
        memory = {
            "key": item.key,
            "namespace": list(item.namespace),
            "content": str(value.get("content", "")),
            "kind": value.get("kind") or "semantic",
            "importance": value.get("importance"),
            "valid_from": value.get("valid_from"),
            "invalid_at": value.get("invalid_at"),
            "slot": value.get("slot"),
            "score": item.score,
        }
        memories.append(memory)
    return memories
