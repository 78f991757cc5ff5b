"""The ``retrieve`` node: memories for the model's context.

``retrieve`` searches the store with the latest user turn (+ recent context) and keeps
the best memories under a token budget (state key ``memories``); ``inject`` then renders
them and ``respond`` calls the model (``nodes/inject.py``, ``nodes/respond.py``).

Example:
    ```python
    from langgraph.graph import START, StateGraph
    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.nodes import InjectNode, MemoryState, RespondNode, RetrieveNode
    from langgraph_recall.offline import TemplatedResponder

    builder = StateGraph(MemoryState)
    builder.add_node(RetrieveNode())
    builder.add_node(InjectNode())
    builder.add_node(RespondNode(TemplatedResponder()))
    builder.add_edge(START, "retrieve_memories")
    builder.add_edge("retrieve_memories", "inject_memories")
    builder.add_edge("inject_memories", "respond")
    graph = builder.compile(store=InMemoryStore())
    out = graph.invoke({"messages": [("user", "hi")]},
                       config={"configurable": {"user_id": "u1"}})
    assert out["messages"][-1].type == "ai"
    ```
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from langgraph.store.base import BaseStore, SearchItem, SearchOp

from langgraph_recall._internal.terminal import printable
from langgraph_recall._memory.blend import blend_within_budget, merge_ranked
from langgraph_recall._memory.context import DEFAULT_NAMESPACE, NodeContext, messages_of, utc_now
from langgraph_recall._memory.messages import (
    DEFAULT_MAX_QUERY_CHARS,
    TokenCounter,
    build_query,
    count_tokens,
    select_within_budget,
)
from langgraph_recall._memory.registry import (
    ThreadLink,
    abatch_with_link,
    batch_with_link,
    node_thread_link,
)
from langgraph_recall.episodes._plan import EpisodeConfig
from langgraph_recall.errors import ConfigurationError
from langgraph_recall.nodes._base import Clock, MemoryNode, is_current, items_to_memories
from langgraph_recall.nodes.inject import block_update
from langgraph_recall.prompts import DEFAULT_MEMORY_BLOCK_PROMPT
from langgraph_recall.retrieval._profile import profile_items
from langgraph_recall.store._capabilities import store_supports

__all__ = ["STANDING_KINDS", "RetrieveNode", "explain_lines", "standing_first"]

STANDING_KINDS = ("procedural", "preference")
"""Kinds of memory brought into the context on every turn, whatever the user asks: standing
instructions ("always format code with syntax highlighting") and stable preferences."""

logger = logging.getLogger(__name__)


class RetrieveNode(MemoryNode):
    """Search long-term memory for the latest user turn; keep the best under a token budget.

    Args:
        store: A ``BaseStore``; default: the graph's store (``compile(store=...)``).
        namespace: Namespace template, filled from the runtime context / configurable.
        limit: How many search results to consider.
        token_budget: Max tokens of the memory lines kept (approximate count).
        context_messages: Earlier user messages added to the query.
        max_query_chars: The query is cut to this many characters (the latest message's
            beginning first), so a huge user message never reaches the store whole.
        filter: Extra store filter (e.g. ``{"kind": "preference"}``).
        messages_key / memories_key: State keys read / written.
        token_counter: Token counter for the budget.
        clock: Current time (validity filtering on stores without ``as_of``).
        inject: Also write the ``<memory>`` block into the messages (retrieve + inject in
            one node, for graphs whose state has only ``messages``, e.g. ``MessagesState``).
        prompt: Block template when ``inject=True``.
        explain: ``True`` (this module's logger) or a ``logging.Logger``: log, at INFO,
            one line per memory kept with the terms of its score (lexical, vector,
            recency, importance, access, time match; see :func:`explain_lines`). On a
            store whose ``search`` takes ``explain`` (``PostgresMemoryStore``) the
            search asks for them; on others only the score is logged.
        always: How many standing memories (kinds :data:`STANDING_KINDS`: instructions
            and preferences) join the context on every turn, whatever the query — the
            most important first, the newest first among equals — so "Always format code
            with syntax highlighting" applies to "show me a login feature". ``0`` turns
            this off; so does a ``filter`` that names kinds.
        always_budget: Max tokens of those standing memories (their own budget: they do
            not take the room of the query-ranked memories).
        profile: How many profile facts (name, home, work, diet, tools, preferences:
            :data:`~langgraph_recall.retrieval._profile.PROFILE_SLOTS`, one per slot) join the
            context on every turn, first, whatever the query. ``0`` (default) turns it off.
        profile_budget: Max tokens of the profile facts (their own budget).
        episodes: An :class:`~langgraph_recall.episodes.EpisodeConfig`: search facts and
            ``episodic`` memories side by side (``limit`` facts, ``retrieve_limit``
            episodes, one store round trip), merge them by score and keep them under
            ``token_budget``, episodes taking at most ``token_share`` of it. ``None``
            (default): one search over every memory.

    Example:
        ```python
        from langgraph.store.memory import InMemoryStore

        from langgraph_recall.nodes import RetrieveNode

        store = InMemoryStore()
        store.put(("memories", "user_id:u1"), "k", {"content": "User likes tea."})
        out = RetrieveNode(store=store).invoke(
            {"messages": [("user", "what do I like?")]},
            config={"configurable": {"user_id": "u1"}})
        assert out["memories"][0]["content"] == "User likes tea."
        ```
    """

    node_name = "retrieve_memories"

    def __init__(
        self,
        *,
        store: BaseStore | None = None,
        namespace: tuple[str, ...] = DEFAULT_NAMESPACE,
        limit: int = 10,
        token_budget: int = 500,
        context_messages: int = 1,
        max_query_chars: int = DEFAULT_MAX_QUERY_CHARS,
        filter: dict[str, Any] | None = None,
        messages_key: str = "messages",
        memories_key: str = "memories",
        token_counter: TokenCounter = count_tokens,
        clock: Clock = utc_now,
        inject: bool = False,
        prompt: str = DEFAULT_MEMORY_BLOCK_PROMPT,
        explain: bool | logging.Logger = False,
        always: int = 5,
        always_budget: int = 200,
        episodes: EpisodeConfig | None = None,
        profile: int = 0,
        profile_budget: int = 120,
        name: str | None = None,
    ) -> None:
        super().__init__(store=store, name=name)
        if episodes is not None and not isinstance(episodes, EpisodeConfig):
            raise ConfigurationError("RetrieveNode: episodes must be an EpisodeConfig or None")
        self.episodes = episodes
        if limit < 1 or token_budget < 1:
            raise ConfigurationError("RetrieveNode: limit and token_budget must be >= 1")
        if always < 0 or always_budget < 1:
            raise ConfigurationError("RetrieveNode: always must be >= 0, always_budget >= 1")
        if max_query_chars < 16:
            raise ConfigurationError("RetrieveNode: max_query_chars must be >= 16")
        if profile < 0 or profile_budget < 1:
            raise ConfigurationError("RetrieveNode: profile must be >= 0, profile_budget >= 1")
        self.profile = profile
        self.profile_budget = profile_budget
        self.namespace = namespace
        self.always = always
        self.always_budget = always_budget
        self.limit = limit
        self.token_budget = token_budget
        self.context_messages = context_messages
        self.max_query_chars = max_query_chars
        self.filter = filter
        self.messages_key = messages_key
        self.memories_key = memories_key
        self.token_counter = token_counter
        self.clock = clock
        self.inject = inject
        self.prompt = prompt
        self.explain_logger: logging.Logger | None = (
            explain if isinstance(explain, logging.Logger) else logger if explain else None
        )

    def _prepare(
        self, state: Any, ctx: NodeContext
    ) -> tuple[BaseStore, list[SearchOp], ThreadLink | None]:
        messages = messages_of(state, self.messages_key)
        query = build_query(
            messages, context_messages=self.context_messages, max_chars=self.max_query_chars
        )
        store = ctx.require_store(self.label)
        namespace = ctx.namespace(self.namespace)
        ops = []
        if query:
            spare = 1 if store_supports(store, "as_of") else 3
            if self.episodes is None:
                ops.append(
                    self._search_op(store, namespace, self.filter, self.limit * spare, query)
                )
            else:
                facts, episodes = _split_filters(self.filter)
                ops.append(self._search_op(store, namespace, facts, self.limit * spare, query))
                if self.episodes.retrieve_limit:
                    limit = self.episodes.retrieve_limit * spare
                    ops.append(self._search_op(store, namespace, episodes, limit, query))
        ops += [
            SearchOp(namespace, filter={**(self.filter or {}), "kind": kind}, limit=pool)
            for kind, pool in self._standing_pools()
        ]
        if self.profile:
            ops.append(SearchOp(namespace, filter=self._profile_filter(store), limit=500))
        return store, ops, node_thread_link(ctx, [self.namespace], self.label)

    @staticmethod
    def _profile_filter(store: BaseStore) -> dict[str, Any]:
        if store_supports(store, "as_of"):  # our store: slotted memories only
            return {"slot": {"$exists": True}}
        return {"kind": {"$ne": "episodic"}}

    def _standing_pools(self) -> list[tuple[str, int]]:
        """``(kind, how many to fetch)`` of the standing searches (none when off)."""
        if not self.always or (self.filter and "kind" in self.filter):
            return []
        return [(kind, self.always * 4) for kind in STANDING_KINDS]

    def _search_op(
        self,
        store: BaseStore,
        namespace: tuple[str, ...],
        filter: dict[str, Any] | None,
        limit: int,
        query: str,
    ) -> Any:
        if self.explain_logger is not None and store_supports(store, "explain"):
            from langgraph_recall.store.postgres import MemorySearchOp

            return MemorySearchOp(namespace, filter, limit, 0, query, explain=True)
        return SearchOp(namespace, filter=filter, limit=limit, query=query)

    def _current(self, store: BaseStore, results: Any, limit: int) -> list[SearchItem]:
        items: list[SearchItem] = list(results or [])
        if not store_supports(store, "as_of"):
            now = self.clock()
            items = [item for item in items if is_current(item.value, now)][:limit]
        return items

    def _finish(self, state: Any, store: BaseStore, results: Sequence[Any]) -> dict[str, Any]:
        profile_memories: list[dict[str, Any]] = []
        if self.profile:
            results, found = list(results)[:-1], results[-1]
            chosen = profile_items(self._current(store, found, 500), limit=self.profile)
            profile_memories = select_within_budget(
                items_to_memories(chosen),
                token_budget=self.profile_budget,
                token_counter=self.token_counter,
            )
        pools = self._standing_pools()
        ranked_results = list(results)[: len(results) - len(pools)] if pools else list(results)
        pooled = [item for items in results[len(ranked_results) :] for item in (items or [])]
        standing = standing_first(self._current(store, pooled, len(pooled)), limit=self.always)
        standing_memories = select_within_budget(
            items_to_memories(standing),
            token_budget=self.always_budget,
            token_counter=self.token_counter,
        )
        memories = self._ranked(store, ranked_results)
        first = profile_memories + [
            m
            for m in standing_memories
            if (tuple(m["namespace"]), m["key"])
            not in {(tuple(p["namespace"]), p["key"]) for p in profile_memories}
        ]
        shown = {(tuple(m["namespace"]), m["key"]) for m in first}
        memories = first + [m for m in memories if (tuple(m["namespace"]), m["key"]) not in shown]
        update: dict[str, Any] = {self.memories_key: memories}
        if self.inject:
            messages = messages_of(state, self.messages_key)
            update.update(block_update(memories, messages, self.prompt, self.messages_key))
        return update

    def _ranked(self, store: BaseStore, results: Sequence[Any]) -> list[dict[str, Any]]:
        """The query-ranked memories kept under ``token_budget``."""
        if self.episodes is None:
            found = [self._current(store, results[0] if results else None, self.limit)]
            memories = select_within_budget(
                items_to_memories(found[0]),
                token_budget=self.token_budget,
                token_counter=self.token_counter,
            )
        else:
            limits = (self.limit, self.episodes.retrieve_limit)
            found = [
                self._current(store, items, limit)
                for items, limit in zip(results, limits, strict=False)
            ]
            memories = blend_within_budget(
                merge_ranked(*(items_to_memories(items) for items in found)),
                token_budget=self.token_budget,
                episode_share=self.episodes.token_share,
                token_counter=self.token_counter,
            )
        if self.explain_logger is not None:
            kept = [m["key"] for m in memories]
            for line in explain_lines([item for items in found for item in items], kept):
                self.explain_logger.info("%s %s", self.label, line)
        return memories

    def _run(self, state: Any, ctx: NodeContext) -> dict[str, Any]:
        store, ops, link = self._prepare(state, ctx)
        results, put = batch_with_link(store, ops, link)
        if put is not None:
            store.batch([put])
        return self._finish(state, store, results)

    async def _arun(self, state: Any, ctx: NodeContext) -> dict[str, Any]:
        store, ops, link = self._prepare(state, ctx)
        results, put = await abatch_with_link(store, ops, link)
        if put is not None:
            await store.abatch([put])
        return self._finish(state, store, results)


def standing_first(items: Sequence[SearchItem], *, limit: int) -> list[SearchItem]:
    """The standing memories to show (pure): the most important first, the newest first
    among equals, each once, at most ``limit``.

    Example:
        ```python
        from datetime import datetime, timedelta, timezone

        from langgraph.store.base import SearchItem

        from langgraph_recall.nodes.retrieve import standing_first

        now = datetime.now(timezone.utc)
        def item(key, importance, age):
            value = {"content": key, "kind": "procedural", "importance": importance}
            return SearchItem(("m",), key, value, now, now - timedelta(days=age))
        found = [item("old", 7, 9), item("new", 7, 1), item("minor", 3, 0)]
        assert [i.key for i in standing_first(found, limit=2)] == ["new", "old"]
        ```
    """

    def rank(item: SearchItem) -> tuple[float, float]:
        importance = item.value.get("importance")
        weight = float(importance) if isinstance(importance, (int, float)) else 0.0
        return (-weight, -item.updated_at.timestamp())

    unique = {(tuple(i.namespace), i.key): i for i in reversed(items)}
    return sorted(unique.values(), key=rank)[:limit]


def explain_lines(items: Sequence[SearchItem], keys: Sequence[str]) -> list[str]:
    """One log line per item whose key is in ``keys`` (in ``keys`` order): its score and,
    for an ``ExplainedSearchItem``, each term of it (pure). Stored text (key, content) is
    written through :func:`~langgraph_recall._internal.terminal.printable`: a control
    character in a memory shows as its escape, it cannot act on a terminal tailing the log.

    Example:
        ```python
        from datetime import datetime, timezone

        from langgraph.store.base import SearchItem

        from langgraph_recall.nodes.retrieve import explain_lines

        now = datetime.now(timezone.utc)
        item = SearchItem(("m", "u1"), "k1", {"content": "User likes tea."}, now, now, 0.5)
        assert explain_lines([item], ["k1"])[0].startswith("key=k1 score=0.5000")
        ```
    """
    by_key = {item.key: item for item in items}
    lines: list[str] = []
    for key in keys:
        item = by_key.get(key)
        if item is None:
            continue
        score = "none" if item.score is None else f"{item.score:.4f}"
        parts = getattr(item, "explanation", None)
        terms = (
            " ".join(f"{name}={value:.4f}" for name, value in parts.contributions().items())
            if parts is not None
            else "(no breakdown: the store has no explain)"
        )
        content = printable(" ".join(str(item.value.get("content", "")).split())[:80])
        lines.append(f'key={printable(key)} score={score} {terms} content="{content}"')
    return lines


def _split_filters(
    extra: dict[str, Any] | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fact search's and the episode search's filters, each with the caller's."""
    facts: dict[str, Any] = {"kind": {"$ne": "episodic"}}
    episodes: dict[str, Any] = {"kind": "episodic"}
    if extra:
        if "kind" in extra:  # the caller chose kinds: both searches keep their choice
            return dict(extra), {**extra, "kind": extra["kind"]}
        facts, episodes = {**extra, **facts}, {**extra, **episodes}
    return facts, episodes
