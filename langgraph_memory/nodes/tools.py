"""Memory tools for agents that manage memory themselves: ``remember``, ``recall``, ``forget``.

The tools read the store and ``user_id`` from LangGraph's tool runtime (the graph's store
and ``context=`` / ``configurable``), apply the same PII filter and slot-based
supersession as the ``extract`` node, and never hard-delete: ``forget`` closes the
memory's validity interval (history is kept; use the store's ``forget()`` for erasure).

Example:
    ```python
    from langgraph_memory.nodes.tools import create_memory_tools

    remember, recall, forget = create_memory_tools()
    assert [t.name for t in (remember, recall, forget)] == ["remember", "recall", "forget"]
    ```
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt import ToolRuntime
from langgraph.store.base import BaseStore, PutOp

from langgraph_memory._internal.identity import format_namespace
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.extraction.consolidation import plan_writes, rule_decisions
from langgraph_memory.extraction.pii import PIIFilter, find_pii
from langgraph_memory.extraction.types import MEMORY_KINDS, ExistingMemory, MemoryCandidate
from langgraph_memory.nodes._base import is_current, supports_as_of, utc_now
from langgraph_memory.nodes._messages import memory_line
from langgraph_memory.nodes.context import DEFAULT_NAMESPACE

__all__ = ["create_memory_tools"]


def create_memory_tools(
    *,
    store: BaseStore | None = None,
    namespace: tuple[str, ...] = DEFAULT_NAMESPACE,
    pii: PIIFilter | None = None,
) -> list[BaseTool]:
    """Build the ``remember`` / ``recall`` / ``forget`` tools.

    Args:
        store: A ``BaseStore``; default: the graph's store.
        namespace: Namespace template, filled from the runtime context / configurable.
        pii: PII filter for ``remember`` (default: drop text with PII).

    Example:
        ```python
        tools = create_memory_tools(namespace=("memories", "{user_id}"))
        assert tools[1].name == "recall"
        ```
    """
    pii_filter = pii or PIIFilter()

    def resolve(runtime: ToolRuntime) -> tuple[BaseStore, tuple[str, ...]]:
        chosen = store or runtime.store
        if chosen is None:
            raise ConfigurationError(
                "memory tools: no store; pass store=... or compile the graph with store=..."
            )
        return chosen, format_namespace(namespace, context=runtime.context, config=runtime.config)

    def remember(
        content: str,
        runtime: ToolRuntime,
        kind: str = "semantic",
        importance: int = 5,
        slot: str | None = None,
    ) -> str:
        """Store a fact about the user for future conversations.

        Args:
            content: One third-person sentence, e.g. "User lives in Beijing."
            kind: semantic, episodic, procedural or preference.
            importance: 1 (trivia) to 10 (critical).
            slot: The attribute the fact fills ("location", "employer", ...); a newer fact
                with the same slot replaces the older one.
        """
        target, ns = resolve(runtime)
        cleaned = pii_filter.clean(content)
        if cleaned is None:
            found = sorted({m.category for m in find_pii(content)})
            return f"Not stored: the text contains personal data ({', '.join(found)})."
        now = utc_now()
        candidate = MemoryCandidate(
            content=cleaned.strip(),
            kind=kind if kind in MEMORY_KINDS else "semantic",
            importance=max(1, min(10, int(importance))),
            slot=(slot or "").strip().lower() or None,
        )
        neighbours = target.search(ns, query=candidate.content, limit=5)
        if candidate.slot:
            neighbours += target.search(ns, filter={"slot": candidate.slot}, limit=5)
        existing = {
            item.key: ExistingMemory(item.key, dict(item.value), ns, item.score)
            for item in neighbours
            if is_current(item.value, now)
        }
        memories = list(existing.values())
        plan = plan_writes(
            [candidate],
            memories,
            rule_decisions([candidate], memories),
            now=now,
            source={"by": "remember-tool"},
        )
        target.batch([PutOp(ns, w.key, w.value) for w in plan.writes])
        counts = {name: count for name, count in plan.counts.items() if count}
        summary = ", ".join(f"{name} {count}" for name, count in counts.items())
        return f"Remembered ({summary})."

    def recall(query: str, runtime: ToolRuntime, limit: int = 5) -> str:
        """Search the user's long-term memories; returns one line per memory with its id.

        Args:
            query: What to look for.
            limit: Maximum number of memories.
        """
        target, ns = resolve(runtime)
        fetch = limit if supports_as_of(target) else limit * 3
        now = utc_now()
        items = [i for i in target.search(ns, query=query, limit=fetch) if is_current(i.value, now)]
        if not items:
            return "No memories found."
        return "\n".join(f"{item.key}: {memory_line(item.value)[2:]}" for item in items[:limit])

    def forget(memory_id: str, runtime: ToolRuntime) -> str:
        """Mark a memory as no longer true (by the id ``recall`` shows). History is kept.

        Args:
            memory_id: The id before the colon in a ``recall`` line.
        """
        target, ns = resolve(runtime)
        item = target.get(ns, memory_id)
        if item is None or not is_current(item.value, utc_now()):
            return f"No current memory with id {memory_id!r}."
        invalidate: Any = getattr(target, "invalidate", None)
        if callable(invalidate):
            invalidate(ns, memory_id)
        else:
            value = dict(item.value)
            value["invalid_at"] = utc_now().isoformat()
            target.put(ns, memory_id, value)
        return f"Forgot {memory_id}."

    return [
        StructuredTool.from_function(remember, name="remember"),
        StructuredTool.from_function(recall, name="recall"),
        StructuredTool.from_function(forget, name="forget"),
    ]
