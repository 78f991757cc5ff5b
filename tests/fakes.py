"""Deterministic fakes for tests: the embedder and a chat model without tool calling.

``HashingEmbeddings`` maps each lower-cased word to a signed bucket (md5, stable across
processes) and L2-normalises the sum, so texts sharing words are similar and the same
text always embeds to the same vector.

``TextOnlyChatModel`` is a chat model as small local servers and many providers offer
them: no ``bind_tools``, no ``with_structured_output``, only text. Its replies come from
a function of the input messages; every call is recorded. (Scripted tool-calling models:
``langgraph_recall.offline.ScriptedChatModel``.)
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

_WORD = re.compile(r"[a-z0-9]+")


class HashingEmbeddings(Embeddings):
    """Bag-of-words hashing embedder with ``dims`` dimensions."""

    def __init__(self, dims: int = 64) -> None:
        self.dims = dims
        self.calls: list[tuple[str, int]] = []

    def _embed(self, text: str) -> list[float]:
        vec = [0.0] * self.dims
        for word in _WORD.findall(text.lower()):
            digest = hashlib.md5(word.encode()).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dims
            vec[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vec))
        if norm == 0.0:
            vec[0] = 1.0
            return vec
        return [v / norm for v in vec]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(("documents", len(texts)))
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.calls.append(("query", 1))
        return self._embed(text)


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
