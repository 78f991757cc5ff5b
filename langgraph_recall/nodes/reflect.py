"""The ``reflect`` node: synthesise higher-level memories once enough importance piled up.

Generative-Agents style: the importance of memories recorded since the last reflection
is summed; when it reaches ``threshold`` the node writes up to ``max_insights`` memories of
kind ``reflection`` with ``derived_from`` links to the keys they came from, then moves its
cursor (a small record in ``cursor_namespace``). With a model, insights come from one
structured-output call; without one, a deterministic profile is built per memory kind.

Example:
    ```python
    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.nodes import ReflectNode

    store = InMemoryStore()
    for i, fact in enumerate(["User likes tea.", "User likes green tea.", "User lives in Oslo."]):
        store.put(("memories", "user_id:u1"), f"k{i}", {"content": fact, "importance": 9})
    out = ReflectNode(store=store, threshold=20).invoke(
        {"messages": []}, config={"configurable": {"user_id": "u1"}})
    assert out["reflection_report"]["written"] >= 1
    ```
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, SearchItem, SearchOp
from pydantic import BaseModel, Field

from langgraph_recall._memory.context import (
    DEFAULT_NAMESPACE,
    NodeContext,
    store_default_ttl,
    utc_now,
)
from langgraph_recall._memory.registry import (
    USER_META_TEMPLATE,
    ThreadLink,
    abatch_with_link,
    batch_with_link,
    node_thread_link,
)
from langgraph_recall.errors import ConfigurationError
from langgraph_recall.extraction.dates import parse_iso_datetime
from langgraph_recall.extraction.pii import PIIFilter
from langgraph_recall.extraction.structured import StructuredCaller
from langgraph_recall.nodes._base import Clock, MemoryNode, MemoryStats, is_current
from langgraph_recall.prompts import DEFAULT_REFLECTION_PROMPT
from langgraph_recall.prompts.encoding import encode_inline

__all__ = [
    "Insight",
    "ReflectNode",
    "ReflectionOutput",
    "derived_importance",
    "offline_insights",
]

_CURSOR_KEY = "reflection-cursor"
_DEFAULT_PII = PIIFilter()


class Insight(BaseModel):
    """One synthesised insight and the numbers of the memories supporting it."""

    content: str
    sources: list[int] = Field(default_factory=list)


class ReflectionOutput(BaseModel):
    """Structured output of the reflection call."""

    insights: list[Insight] = Field(default_factory=list)


def derived_importance(sources: Sequence[Mapping[str, Any]]) -> int:
    """Importance of a memory derived from ``sources``: the **lowest** of theirs.

    A reflection quotes or paraphrases its sources, so it must never rank above the least
    important text it carries: taking the highest would let a trivial memory (or one
    written to be quoted) ride on an important neighbour.

    Example:
        ```python
        from langgraph_recall.nodes.reflect import derived_importance

        assert derived_importance([{"importance": 9}, {"importance": 2}]) == 2
        assert derived_importance([{}]) == 5  # unrated memories count as 5
        ```
    """
    ratings = [_importance(source) for source in sources]
    return min(ratings) if ratings else 1


def _importance(value: Mapping[str, Any]) -> int:
    raw = value.get("importance")
    try:
        rating = int(float(raw)) if raw is not None and raw != "" else 5
    except (TypeError, ValueError, OverflowError):
        rating = 5
    return max(1, min(10, rating))


def offline_insights(memories: Sequence[dict[str, Any]], max_insights: int) -> list[Insight]:
    """Deterministic reflection: one profile line per memory kind (most important first).

    Example:
        ```python
        from langgraph_recall.nodes.reflect import offline_insights

        mems = [{"content": "User likes tea.", "kind": "preference", "importance": 5}]
        assert offline_insights(mems, 3)[0].content == "User's preferences: User likes tea."
        ```
    """
    by_kind: dict[str, list[int]] = {}
    for index, memory in enumerate(memories):
        by_kind.setdefault(str(memory.get("kind") or "semantic"), []).append(index)
    insights: list[Insight] = []
    labels = {
        "semantic": "profile",
        "preference": "preferences",
        "procedural": "instructions",
        "episodic": "recent events",
    }
    for kind, indexes in sorted(by_kind.items(), key=lambda kv: -len(kv[1])):
        ordered = sorted(indexes, key=lambda i: -float(memories[i].get("importance") or 5))[:6]
        facts = " ".join(str(memories[i].get("content", "")).strip() for i in ordered)
        insights.append(
            Insight(content=f"User's {labels.get(kind, kind)}: {facts}", sources=ordered)
        )
    return insights[:max_insights]


class ReflectNode(MemoryNode):
    """Write ``reflection`` memories when accumulated importance passes ``threshold``.

    Args:
        model: Any chat model (structured output, tool calling or JSON in its text);
            ``None`` → :func:`offline_insights`.
        store / namespace: Where the memories are (default ``("memories", "{user_id}")``).
        cursor_namespace: Where the last-reflection time is kept (outside ``namespace`` so
            it never shows up in memory search).
        threshold: Sum of importance of new memories that triggers a reflection.
        lookback: How many recent memories are read.
        max_insights: Insights written per reflection.
        prompt: Overrides :data:`~langgraph_recall.prompts.DEFAULT_REFLECTION_PROMPT`.
        stats: Shared stats; model calls count as ``reflect``.
        pii: PII filter applied to insights (default: drop insights containing PII).
        report_key: State key of the per-call report.

    Example:
        ```python
        from langgraph_recall.nodes.reflect import ReflectNode

        node = ReflectNode(threshold=50)
        assert node.threshold == 50
        ```
    """

    node_name = "reflect_memories"

    def __init__(
        self,
        *,
        model: BaseChatModel | None = None,
        store: BaseStore | None = None,
        namespace: tuple[str, ...] = DEFAULT_NAMESPACE,
        cursor_namespace: tuple[str, ...] = USER_META_TEMPLATE,
        threshold: float = 30.0,
        lookback: int = 50,
        max_insights: int = 3,
        prompt: str = DEFAULT_REFLECTION_PROMPT,
        stats: MemoryStats | None = None,
        report_key: str = "reflection_report",
        pii: PIIFilter | None = _DEFAULT_PII,
        clock: Clock = utc_now,
        name: str | None = None,
    ) -> None:
        super().__init__(store=store, name=name)
        if threshold <= 0 or lookback < 1 or max_insights < 1:
            raise ConfigurationError(
                "ReflectNode: threshold must be > 0, lookback and max_insights >= 1"
            )
        self.model = model
        self.namespace = namespace
        self.cursor_namespace = cursor_namespace
        self.threshold = threshold
        self.lookback = lookback
        self.max_insights = max_insights
        self.prompt = prompt
        self.stats = stats or MemoryStats()
        self.report_key = report_key
        self.pii = pii
        self.clock = clock
        self._structured: StructuredCaller[ReflectionOutput] | None = None

    def _caller(self) -> StructuredCaller[ReflectionOutput]:
        """Structured answers from any chat model (tool calling, else JSON from text)."""
        assert self.model is not None
        if self._structured is None:
            self._structured = StructuredCaller(self.model, ReflectionOutput)
        return self._structured

    # -- pure -------------------------------------------------------------------------
    def _fresh(
        self, items: Sequence[SearchItem], cursor: datetime | None, now: datetime
    ) -> list[tuple[str, dict[str, Any]]]:
        fresh: list[tuple[str, dict[str, Any]]] = []
        for item in items:
            value = dict(item.value)
            if value.get("kind") == "reflection" or not is_current(value, now):
                continue
            recorded = parse_iso_datetime(value.get("recorded_at")) or item.created_at
            if cursor is not None and recorded is not None and recorded <= cursor:
                continue
            fresh.append((item.key, value))
        return fresh

    def _request(self, memories: Sequence[dict[str, Any]]) -> list[HumanMessage]:
        lines = "\n".join(
            f"{i}: {encode_inline(m.get('content', ''))}" for i, m in enumerate(memories)
        )
        return [HumanMessage(self.prompt.format(memories=lines, max_insights=self.max_insights))]

    def _writes(
        self,
        namespace: tuple[str, ...],
        cursor_ns: tuple[str, ...],
        fresh: Sequence[tuple[str, dict[str, Any]]],
        insights: Sequence[Insight],
        now: datetime,
        ttl: float | None = None,
    ) -> list[PutOp]:
        ops: list[PutOp] = []
        for insight in insights[: self.max_insights]:
            sources = [fresh[i] for i in insight.sources if 0 <= i < len(fresh)]
            content = insight.content.strip()
            if not content or not sources:
                continue
            value: dict[str, Any] = {
                "content": content,
                "kind": "reflection",
                "importance": derived_importance([v for _, v in sources]),
                "valid_from": now.isoformat(),
                "recorded_at": now.isoformat(),
                "derived_from": [key for key, _ in sources],
            }
            screened = value if self.pii is None else self.pii.screen(value).value
            if screened is not None:  # the gate every written value passes
                ops.append(PutOp(namespace, uuid.uuid4().hex, screened, ttl=ttl))
        cursor_value = {"content": "reflection cursor", "last_reflection_at": now.isoformat()}
        ops.append(PutOp(cursor_ns, _CURSOR_KEY, cursor_value, index=False))
        return ops

    def _report(self, fresh: Sequence[Any], total: float, ops: Sequence[PutOp]) -> dict[str, Any]:
        written = max(0, len(ops) - 1) if ops else 0
        return {
            self.report_key: {
                "new_memories": len(fresh),
                "accumulated_importance": total,
                "threshold": self.threshold,
                "written": written,
                "keys": [op.key for op in ops[:-1]] if ops else [],
            }
        }

    @staticmethod
    def _total(fresh: Sequence[tuple[str, dict[str, Any]]]) -> float:
        return float(sum(float(v.get("importance") or 5) for _, v in fresh))

    # -- I/O --------------------------------------------------------------------------
    def _reads(
        self, ctx: NodeContext
    ) -> tuple[BaseStore, tuple[str, ...], tuple[str, ...], list[Op], ThreadLink | None]:
        store = ctx.require_store(self.label)
        namespace, cursor_ns = ctx.namespace(self.namespace), ctx.namespace(self.cursor_namespace)
        ops: list[Op] = [GetOp(cursor_ns, _CURSOR_KEY), SearchOp(namespace, limit=self.lookback)]
        link = node_thread_link(ctx, [self.namespace, self.cursor_namespace], self.label)
        return store, namespace, cursor_ns, ops, link

    def _fresh_of(self, results: list[Any], now: datetime) -> list[tuple[str, dict[str, Any]]]:
        cursor_item, items = results
        cursor = parse_iso_datetime(
            (cursor_item.value if isinstance(cursor_item, Item) else {}).get("last_reflection_at")
        )
        return self._fresh(items or [], cursor, now)

    def _run(self, state: Any, ctx: NodeContext) -> dict[str, Any]:
        store, namespace, cursor_ns, reads, link = self._reads(ctx)
        now = self.clock()
        results, link_write = batch_with_link(store, reads, link)
        fresh = self._fresh_of(results, now)
        total = self._total(fresh)
        extra = [link_write] if link_write is not None else []
        if total < self.threshold:
            if extra:
                store.batch(extra)
            return self._report(fresh, total, [])
        memories = [value for _, value in fresh]
        if self.model is None:
            insights = offline_insights(memories, self.max_insights)
        else:
            output = self._caller().invoke(self._request(memories))
            self.stats.record_llm_call("reflect")
            insights = output.insights
        ops = self._writes(namespace, cursor_ns, fresh, insights, now, store_default_ttl(store))
        store.batch([*ops, *extra])
        return self._report(fresh, total, ops)

    async def _arun(self, state: Any, ctx: NodeContext) -> dict[str, Any]:
        store, namespace, cursor_ns, reads, link = self._reads(ctx)
        now = self.clock()
        results, link_write = await abatch_with_link(store, reads, link)
        fresh = self._fresh_of(results, now)
        total = self._total(fresh)
        extra = [link_write] if link_write is not None else []
        if total < self.threshold:
            if extra:
                await store.abatch(extra)
            return self._report(fresh, total, [])
        memories = [value for _, value in fresh]
        if self.model is None:
            insights = offline_insights(memories, self.max_insights)
        else:
            output = await self._caller().ainvoke(self._request(memories))
            self.stats.record_llm_call("reflect")
            insights = output.insights
        ops = self._writes(namespace, cursor_ns, fresh, insights, now, store_default_ttl(store))
        await store.abatch([*ops, *extra])
        return self._report(fresh, total, ops)
