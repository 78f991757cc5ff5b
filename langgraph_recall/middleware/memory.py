"""``MemoryMiddleware``: long-term memory for ``langchain.agents.create_agent``.

Before every model call it searches the store for the latest user turn
(:class:`~langgraph_recall.nodes.RetrieveNode`) and adds the ``<memory>`` block to the
**model request's** system message — never to the conversation state, so checkpoints hold
only what was said. After the agent's turn it runs
:class:`~langgraph_recall.nodes.ExtractNode` (same extractor, PII filter and
ADD/UPDATE/INVALIDATE/NOOP consolidation as the graph nodes), inline or in the background,
with the model it is given — or, given none, with the agent's own model (the model of the
first model call it wraps, ``ModelRequest.model``).
Identity comes from the runtime context (``agent.invoke(..., context={"user_id": ...})``)
or ``config["configurable"]``, as in the nodes.

Example:
    ```python
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.extraction import RuleBasedExtractor
    from langgraph_recall.middleware import MemoryMiddleware
    from langgraph_recall.offline import ScriptedChatModel

    model = ScriptedChatModel(default="Nice to meet you!")  # answers; does not extract
    memory = MemoryMiddleware(extractor=RuleBasedExtractor())
    agent = create_agent(model, tools=[], middleware=[memory],
                         store=InMemoryStore(), checkpointer=InMemorySaver())
    agent.invoke({"messages": [("user", "My name is Zhang San.")]},
                 {"configurable": {"user_id": "u1", "thread_id": "t1"}})
    agent.invoke({"messages": [("user", "What's my name?")]},
                 {"configurable": {"user_id": "u1", "thread_id": "t2"}})
    assert "Zhang San" in model.calls[-1][0].text  # in the request's system message
    ```
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from langgraph_recall._memory.messages import render_memory_block
from langgraph_recall.episodes import EpisodeConfig
from langgraph_recall.errors import ConfigurationError
from langgraph_recall.extraction import MemoryExtractor, RuleBasedExtractor, extractor_for
from langgraph_recall.middleware._core import append_system_text
from langgraph_recall.nodes import (
    DEFAULT_NAMESPACE,
    ExtractionReport,
    ExtractNode,
    MemoryStats,
    RetrieveNode,
)
from langgraph_recall.prompts import DEFAULT_MEMORY_BLOCK_PROMPT

__all__ = ["MemoryMiddleware", "current_config"]


def current_config() -> RunnableConfig:
    """The config of the running graph node (``{}`` outside one).

    Example:
        ```python
        from langgraph_recall.middleware.memory import current_config

        assert current_config() == {}
        ```
    """
    from langgraph.config import get_config

    try:
        return get_config()
    except RuntimeError:
        return {}


def _require_store(node_store: BaseStore | None, runtime: Runtime[Any] | None, who: str) -> None:
    if node_store is None and (runtime is None or runtime.store is None):
        raise ConfigurationError(
            f"{who}: no store. Pass create_agent(..., store=...) (or "
            "create_react_agent(..., store=...)), or give the middleware store=..."
        )


class MemoryMiddleware(AgentMiddleware[AgentState[Any], Any]):
    """Retrieve before each model call, inject into the request, extract after the turn.

    Args:
        model: Chat model for LLM extraction/consolidation. ``None`` (and no
            ``extractor``): the agent's model, taken from the first model call
            (``ModelRequest.model``) — the offline
            :class:`~langgraph_recall.offline.TemplatedResponder` gets the rule-based
            extractor; if the first turn ends before any model call, the rule-based
            extractor is kept, with a WARNING once per process.
        store: A ``BaseStore``; default: the agent's (``create_agent(..., store=...)``).
        namespace: Namespace template of the memories (default
            ``("memories", "{user_id}")``).
        extraction: ``"inline"`` (before the turn returns), ``"background"`` (off the
            response path; :meth:`flush` / :meth:`aflush` wait) or ``"off"``.
        extractor: Any :class:`~langgraph_recall.extraction.MemoryExtractor`.
        stats: Shared :class:`~langgraph_recall.nodes.MemoryStats`.
        retrieve: A configured :class:`~langgraph_recall.nodes.RetrieveNode` (limit,
            token budget, filter...); its namespace and store win over the above.
        extract: A configured :class:`~langgraph_recall.nodes.ExtractNode` (PII policy,
            ``min_importance``, ``on_error``...); its namespace and store win.
        prompt: Template of the block, with ``{memories}``.
        episodes: An :class:`~langgraph_recall.episodes.EpisodeConfig`: also keep every
            user turn as an ``episodic`` memory with its neighbouring turns as context,
            and retrieve facts and episodes side by side under the token budget (given
            to the default ``retrieve`` / ``extract`` nodes; configured nodes keep theirs).

    Example:
        ```python
        from langgraph_recall.middleware.memory import MemoryMiddleware

        middleware = MemoryMiddleware(extraction="background")
        assert middleware.extract is not None and middleware.extract.background
        ```
    """

    def __init__(
        self,
        model: BaseChatModel | None = None,
        *,
        store: BaseStore | None = None,
        namespace: tuple[str, ...] = DEFAULT_NAMESPACE,
        extraction: Literal["inline", "background", "off"] = "inline",
        extractor: MemoryExtractor | None = None,
        stats: MemoryStats | None = None,
        retrieve: RetrieveNode | None = None,
        extract: ExtractNode | None = None,
        prompt: str = DEFAULT_MEMORY_BLOCK_PROMPT,
        episodes: EpisodeConfig | None = None,
    ) -> None:
        if extraction not in ("inline", "background", "off"):
            raise ConfigurationError(
                "MemoryMiddleware: extraction must be 'inline', 'background' or 'off'"
            )
        self.stats = stats or MemoryStats()
        self.retrieve = retrieve or RetrieveNode(
            store=store, namespace=namespace, episodes=episodes
        )
        self.extract: ExtractNode | None = None
        self._adopt_lock = threading.Lock()
        self._adopts_agent_model = (
            extraction != "off" and extract is None and model is None and extractor is None
        )
        if extraction != "off":
            self.extract = extract or ExtractNode(
                model=model,
                # until the agent's model is known: the rule-based extractor, chosen silently
                extractor=RuleBasedExtractor() if self._adopts_agent_model else extractor,
                store=store,
                namespace=namespace,
                background=extraction == "background",
                stats=self.stats,
                episodes=episodes,
            )
        self.prompt = prompt
        self.tools = []

    # -- the extraction model: the one given, else the agent's -------------------------
    def _adopt(self, model: BaseChatModel | None) -> None:
        """Extract with ``model`` from now on, if this middleware was given no model
        (only the first call counts; later ones return at once)."""
        if not self._adopts_agent_model:
            return
        with self._adopt_lock:
            if not self._adopts_agent_model or self.extract is None:
                return
            usable = model if isinstance(model, BaseChatModel) else None
            self.extract.extractor = extractor_for(usable, who=type(self).__name__)
            self._adopts_agent_model = False

    # -- before the model: memories into the request ---------------------------------
    def _query_state(self, request: ModelRequest[Any]) -> dict[str, Any]:
        self._adopt(request.model)
        _require_store(self.retrieve.store, request.runtime, type(self).__name__)
        return {self.retrieve.messages_key: request.messages}

    def _with_memories(
        self, request: ModelRequest[Any], found: Mapping[str, Any]
    ) -> ModelRequest[Any]:
        memories = found.get(self.retrieve.memories_key) or []
        if not memories:
            return request
        block = render_memory_block(memories, self.prompt)
        return request.override(system_message=append_system_text(request.system_message, block))

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        """Search memories for the request's latest user turn; call the model with them."""
        found = self.retrieve.invoke(self._query_state(request), current_config())
        return handler(self._with_memories(request, found))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """Async :meth:`wrap_model_call`."""
        found = await self.retrieve.ainvoke(self._query_state(request), current_config())
        return await handler(self._with_memories(request, found))

    # -- after the turn: extraction --------------------------------------------------
    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Extract memories from the turn (no state update: the report is on
        :attr:`last_report`)."""
        if self.extract is not None:
            self._adopt(None)  # no model call before the first turn's end: the rules
            _require_store(self.extract.store, runtime, type(self).__name__)
            self.extract.invoke(state, current_config())
        return None

    async def aafter_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async :meth:`after_agent`."""
        if self.extract is not None:
            self._adopt(None)  # no model call before the first turn's end: the rules
            _require_store(self.extract.store, runtime, type(self).__name__)
            await self.extract.ainvoke(state, current_config())
        return None

    # -- background control ------------------------------------------------------------
    @property
    def last_report(self) -> ExtractionReport | None:
        """The latest turn's :class:`~langgraph_recall.nodes.ExtractionReport` (``None``
        before the first finished extraction, or with ``extraction="off"``)."""
        return self.extract.last_report if self.extract is not None else None

    def flush(self, timeout: float | None = None) -> list[ExtractionReport]:
        """Wait for background extraction started by ``invoke``; re-raise a failure."""
        return self.extract.flush(timeout) if self.extract is not None else []

    async def aflush(self) -> list[ExtractionReport]:
        """Await background extraction started by ``ainvoke`` (and ``invoke``)."""
        return await self.extract.aflush() if self.extract is not None else []

    def close(self) -> None:
        """Wait for pending extraction and stop the background worker."""
        if self.extract is not None:
            self.extract.close()
