"""The ``summarize`` node: sliding-summary compression of the message list.

When the conversation passes ``trigger_fraction`` of ``max_tokens``, the last
``keep_turns`` turns stay verbatim and everything older is folded into a running summary
(incremental: old summary + overflow → new summary). Folded messages are removed from
state with ``RemoveMessage`` so checkpoints stop growing; the summary lives in one system
message with a stable id (and in ``summary_key``). An ``AIMessage`` with tool calls and
its ``ToolMessage`` s are never separated, and the current turn (the last user message
and everything after it) is never folded: when the kept turns alone exceed the budget,
their tool results are shortened first (oldest first, to ``tool_result_chars`` with a
marker line), then older kept turns are folded. Optionally an ``ExtractNode`` mines the
overflow for long-term memories before it is folded.

Example:
    ```python
    from langchain_core.messages import AIMessage, HumanMessage

    from langgraph_recall.nodes import SummarizeNode

    msgs = []
    for i in range(20):
        msgs += [HumanMessage(f"question {i} " * 20, id=f"h{i}"),
                 AIMessage(f"answer {i} " * 20, id=f"a{i}")]
    out = SummarizeNode(max_tokens=600, keep_turns=2).invoke({"messages": msgs})
    assert out["summary"] and len(out["messages"]) > 1
    ```
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import BaseMessage, HumanMessage, RemoveMessage, SystemMessage
from langchain_core.runnables import Runnable
from langgraph.store.base import BaseStore

from langgraph_recall._memory.context import NodeContext, messages_of
from langgraph_recall._memory.messages import (
    DEFAULT_TOOL_RESULT_CHARS,
    SUMMARY_BLOCK_ID,
    SummaryPlan,
    TokenCounter,
    count_tokens,
    offline_summary,
    plan_summary,
)
from langgraph_recall._memory.registry import (
    ThreadLink,
    aregister_thread,
    node_thread_link,
    register_thread,
)
from langgraph_recall.errors import ConfigurationError
from langgraph_recall.extraction.llm import format_transcript
from langgraph_recall.extraction.rules import message_text
from langgraph_recall.nodes._base import MemoryNode, MemoryStats
from langgraph_recall.nodes.extract import ExtractNode
from langgraph_recall.prompts import DEFAULT_SUMMARY_BLOCK_PROMPT, DEFAULT_SUMMARY_PROMPT
from langgraph_recall.prompts.encoding import encode_block

__all__ = ["SummarizeNode"]


class SummarizeNode(MemoryNode):
    """Fold old messages into a running summary when the conversation grows too long.

    Args:
        model: Chat model writing the summary; ``None`` uses a deterministic extractive
            summary (offline mode, no model call).
        max_tokens: Token budget of the conversation (blocks excluded, summary included).
        trigger_fraction: Summarise when over this fraction of ``max_tokens`` (0 < f ≤ 1).
        keep_turns: Turns (from a user message on) kept verbatim; fewer if they do not fit
            (never fewer than the current turn; ``0`` keeps just the current turn).
        tool_result_chars: A kept tool result is cut to this many characters (with a
            marker line) when the kept turns alone exceed the budget, oldest first.
        max_summary_tokens: Upper bound of the summary (it is clipped to this).
        prompt / block_prompt: Override the summary prompt and the summary block template.
        extract: An :class:`ExtractNode` run on the overflow before folding (so facts
            said long ago still reach long-term memory).
        stats: Shared stats; summary model calls count as ``summarize``.
        token_counter: Token counter (default: LangChain's approximate counter).
        messages_key / summary_key: State keys.

    Example:
        ```python
        from langgraph_recall.nodes.summarize import SummarizeNode

        node = SummarizeNode(max_tokens=2000)
        assert node.invoke({"messages": [("user", "hi")]}) == {}
        ```
    """

    node_name = "summarize_conversation"

    def __init__(
        self,
        *,
        model: Runnable[LanguageModelInput, BaseMessage] | None = None,
        max_tokens: int = 4000,
        trigger_fraction: float = 0.8,
        keep_turns: int = 2,
        tool_result_chars: int = DEFAULT_TOOL_RESULT_CHARS,
        max_summary_tokens: int | None = None,
        prompt: str = DEFAULT_SUMMARY_PROMPT,
        block_prompt: str = DEFAULT_SUMMARY_BLOCK_PROMPT,
        extract: ExtractNode | None = None,
        stats: MemoryStats | None = None,
        token_counter: TokenCounter = count_tokens,
        messages_key: str = "messages",
        summary_key: str = "summary",
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        if max_tokens < 50:
            raise ConfigurationError("SummarizeNode: max_tokens must be at least 50")
        if not 0 < trigger_fraction <= 1:
            raise ConfigurationError("SummarizeNode: trigger_fraction must be in (0, 1]")
        if max_summary_tokens is not None and not 20 <= max_summary_tokens < max_tokens:
            raise ConfigurationError(
                "SummarizeNode: max_summary_tokens must be >= 20 and below max_tokens"
            )
        if keep_turns < 0:
            raise ConfigurationError("SummarizeNode: keep_turns must be >= 0")
        if tool_result_chars < 1:
            raise ConfigurationError("SummarizeNode: tool_result_chars must be >= 1")
        self.model = model
        self.max_tokens = max_tokens
        self.trigger_fraction = trigger_fraction
        self.keep_turns = keep_turns
        self.tool_result_chars = tool_result_chars
        self.max_summary_tokens = max_summary_tokens or max(20, max_tokens // 5)
        self.prompt = prompt
        self.block_prompt = block_prompt
        self.extract = extract
        self.stats = stats or MemoryStats()
        self.token_counter = token_counter
        self.messages_key = messages_key
        self.summary_key = summary_key

    # -- pure -------------------------------------------------------------------------
    @staticmethod
    def previous_summary(messages: list[BaseMessage]) -> str:
        """The running summary stored on the summary block (empty if none)."""
        for message in messages:
            if message.id == SUMMARY_BLOCK_ID and isinstance(message, SystemMessage):
                return str(message.additional_kwargs.get("summary", ""))
        return ""

    def _block(self, summary: str) -> SystemMessage:
        return SystemMessage(
            self.block_prompt.format(summary=encode_block(summary)),
            id=SUMMARY_BLOCK_ID,
            additional_kwargs={"summary": summary},
        )

    def _plan(self, messages: list[BaseMessage]) -> SummaryPlan | None:
        return plan_summary(
            messages,
            max_tokens=self.max_tokens,
            trigger_fraction=self.trigger_fraction,
            keep_turns=self.keep_turns,
            summary_tokens=self.max_summary_tokens,
            token_counter=self.token_counter,
            tool_result_chars=self.tool_result_chars,
        )

    def _clip(self, summary: str) -> str:
        """Clip the summary so its block fits ``max_summary_tokens``."""
        summary = summary.strip()
        while summary and self.token_counter([self._block(summary)]) > self.max_summary_tokens:
            words = summary.removeprefix("… ").split()
            if len(words) <= 1:
                return ""
            summary = "… " + " ".join(words[max(1, len(words) // 8) :])
        return summary

    def _summary_request(self, previous: str, plan: SummaryPlan) -> list[BaseMessage]:
        words = max(10, int(self.max_summary_tokens * 0.6))
        text = self.prompt.format(
            summary=encode_block(previous) if previous.strip() else "(none yet)",
            messages=format_transcript(plan.fold),
            max_words=words,
        )
        return [HumanMessage(text)]

    def _update(self, plan: SummaryPlan, summary: str | None) -> dict[str, Any]:
        """The state update: removals + new summary block (when something was folded)
        and the shortened tool results (replacing the originals by id)."""
        if summary is None:
            return {self.messages_key: list(plan.shrunk)}
        summary = self._clip(summary)
        removals: list[BaseMessage] = [RemoveMessage(id=str(m.id)) for m in plan.fold if m.id]
        return {
            self.messages_key: [*removals, self._block(summary), *plan.shrunk],
            self.summary_key: summary,
        }

    def _check_ids(self, plan: SummaryPlan) -> None:
        if any(not m.id for m in [*plan.fold, *plan.shrunk]):
            raise ConfigurationError(
                "SummarizeNode: messages need ids to be removed; use the add_messages reducer "
                "(MessagesState / MemoryState assign ids)"
            )

    # -- I/O --------------------------------------------------------------------------
    def _link(self, ctx: NodeContext) -> tuple[BaseStore, ThreadLink | None] | None:
        """Where and what to record when this node uses the store (overflow extraction)."""
        store = (self.extract.store or ctx.store) if self.extract is not None else None
        if self.extract is None or store is None:
            return None
        return store, node_thread_link(ctx, [self.extract.namespace], self.label)

    def _run(self, state: Any, ctx: NodeContext) -> dict[str, Any]:
        if (target := self._link(ctx)) is not None:
            register_thread(*target)
        messages = messages_of(state, self.messages_key)
        plan = self._plan(messages)
        if plan is None:
            return {}
        self._check_ids(plan)
        if not plan.fold:
            return self._update(plan, None)
        if self.extract is not None:
            self.extract.process(plan.fold, ctx)
        previous = self.previous_summary(messages)
        if self.model is None:
            words = max(10, int(self.max_summary_tokens * 0.6))
            return self._update(plan, offline_summary(previous, plan.fold, max_words=words))
        reply = self.model.invoke(self._summary_request(previous, plan))
        self.stats.record_llm_call("summarize")
        return self._update(plan, message_text(reply))

    async def _arun(self, state: Any, ctx: NodeContext) -> dict[str, Any]:
        if (target := self._link(ctx)) is not None:
            await aregister_thread(*target)
        messages = messages_of(state, self.messages_key)
        plan = self._plan(messages)
        if plan is None:
            return {}
        self._check_ids(plan)
        if not plan.fold:
            return self._update(plan, None)
        if self.extract is not None:
            await self.extract.aprocess(plan.fold, ctx)
        previous = self.previous_summary(messages)
        if self.model is None:
            words = max(10, int(self.max_summary_tokens * 0.6))
            return self._update(plan, offline_summary(previous, plan.fold, max_words=words))
        reply = await self.model.ainvoke(self._summary_request(previous, plan))
        self.stats.record_llm_call("summarize")
        return self._update(plan, message_text(reply))
