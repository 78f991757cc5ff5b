"""Deterministic fakes for tests: the embedder and a chat model without tool calling.

``HashingEmbeddings`` is the benchmarks' deterministic embedder
(:class:`langgraph_recall.bench._common.HashingEmbeddings`): texts sharing words are
similar and the same text always embeds to the same vector.

``TextOnlyChatModel`` is a chat model as small local servers and many providers offer
them: no ``bind_tools``, no ``with_structured_output``, only text. Its replies come from
a function of the input messages; every call is recorded. (Scripted tool-calling models:
``langgraph_recall.offline.ScriptedChatModel``.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from langgraph_recall.bench._common import HashingEmbeddings

__all__ = ["HashingEmbeddings", "TextOnlyChatModel"]


class TextOnlyChatModel(BaseChatModel):
    """Replies with ``reply(messages)`` as plain text; cannot call tools (a test double)."""

    reply: Callable[[list[BaseMessage]], str]
    calls: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "text-only-fake"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.reply(messages)))])
