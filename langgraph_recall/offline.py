"""Offline stand-ins for a chat model — deterministic and clearly **not** LLMs.

* :class:`TemplatedResponder` answers a few question shapes ("What's my name?", "Which
  city am I in?", "Where do I work?", "What do I like?", "What do you know about me?")
  from the ``<memory>`` block that the ``inject`` node puts into the model input, and
  labels every answer as coming from memory or from the offline responder. It powers the
  CLI demo and the notebooks when no ``OPENAI_API_KEY`` is set. Pair it with
  :class:`~langgraph_recall.extraction.RuleBasedExtractor` for extraction.
* :class:`ScriptedChatModel` replays scripted ``AIMessage`` s (text or tool calls) and
  logs every call it receives — for tests of graphs that use ``LLMExtractor``, tools or
  summarisation without a model. :func:`tool_call_message` builds a tool-call reply, which
  is also how ``with_structured_output`` answers are scripted.

Example:
    ```python
    from langchain_core.messages import HumanMessage, SystemMessage

    from langgraph_recall.offline import TemplatedResponder

    block = SystemMessage(
        "<memory>\\n- [semantic] User's name is Zhang San. (valid from 2026-11-29)\\n</memory>"
    )
    reply = TemplatedResponder().invoke([block, HumanMessage("What's my name?")])
    assert reply.content == "Your name is Zhang San (from memory)."
    ```
"""

from __future__ import annotations

import importlib
import os
import re
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field, PrivateAttr

__all__ = [
    "OFFLINE_LABEL",
    "ScriptedChatModel",
    "TemplatedResponder",
    "default_chat_model",
    "memory_lines",
    "tool_call_message",
]

OFFLINE_LABEL = "offline templated responder, not an LLM"
"""Printed with every answer the :class:`TemplatedResponder` cannot take from memory."""

_MEMORY_BLOCK = re.compile(r"<memory>(.*?)</memory>", re.S)
_LINE = re.compile(r"^\s*-\s*\[(?P<kind>[a-z]+)\]\s*(?P<text>.+?)\s*(?:\((?P<when>[^()]*)\))?\s*$")


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(
        str(block.get("text", "")) if isinstance(block, dict) else str(block) for block in content
    )


def memory_lines(messages: Sequence[BaseMessage]) -> list[tuple[str, str]]:
    """``(kind, text)`` for every line of the ``<memory>`` blocks in ``messages``.

    Example:
        ```python
        from langchain_core.messages import SystemMessage

        from langgraph_recall.offline import memory_lines

        block = SystemMessage("<memory>\\n- [preference] User likes tea. (from x)\\n</memory>")
        assert memory_lines([block]) == [("preference", "User likes tea.")]
        ```
    """
    found: list[tuple[str, str]] = []
    for message in messages:
        if not isinstance(message, SystemMessage):
            continue
        for block in _MEMORY_BLOCK.findall(_text(message)):
            for line in block.splitlines():
                if match := _LINE.match(line):
                    found.append((match["kind"], match["text"]))
    return found


_SECOND_PERSON = {
    "User's": "Your",
    "User is": "You are",
    "User has": "You have",
    "User doesn't": "You don't",
    "User lives": "You live",
    "User works": "You work",
    "User loves": "You love",
    "User likes": "You like",
    "User really likes": "You really like",
    "User enjoys": "You enjoy",
    "User prefers": "You prefer",
    "User hates": "You hate",
    "User dislikes": "You dislike",
    "User adores": "You adore",
    "User uses": "You use",
    "User speaks": "You speak",
}


def _you(text: str) -> str:
    text = text.rstrip(".")
    for third, second in sorted(_SECOND_PERSON.items(), key=lambda kv: -len(kv[0])):
        if text.startswith(third + " "):
            return second + text[len(third) :]
    return text


_TOPICS: list[tuple[re.Pattern[str], re.Pattern[str]]] = [
    (re.compile(r"(?i)\bname\b|\bwho am i\b"), re.compile(r"(?i)\bname is\b")),
    (
        re.compile(r"(?i)\bwhich city\b|\bwhere (?:do|did) i live\b|\bwhere am i\b|\bwhat city\b"),
        re.compile(r"(?i)\blives in\b|\bmoved to\b"),
    ),
    (
        re.compile(r"(?i)\bwhere do i work\b|\bwho do i work for\b|\bemployer\b|\bcompany\b"),
        re.compile(r"(?i)\bworks (?:at|for)\b"),
    ),
    (re.compile(r"(?i)\ballerg"), re.compile(r"(?i)\ballergic\b")),
    (
        re.compile(r"(?i)\bwhat do i (?:like|love|enjoy|prefer)\b|\bfavou?rite\b|\bpreferences?\b"),
        re.compile(r"(?i)\b(?:likes|loves|enjoys|prefers|favou?rite|adores)\b"),
    ),
    (re.compile(r"(?i)\bwhat do i do\b|\bmy (?:job|role)\b"), re.compile(r"(?i)^User is an?\b")),
    (
        re.compile(r"(?i)\bwhat do you (?:know|remember)\b|\babout me\b"),
        re.compile(r"."),
    ),
]


class TemplatedResponder(BaseChatModel):
    """A deterministic chat model that answers from the ``<memory>`` block (not an LLM).

    Questions it recognises are answered from matching memory lines, e.g. "What's my
    name?" → "Your name is Zhang San (from memory)."; statements get a fixed
    acknowledgement and unknown questions a fixed "I don't know" — both labelled with
    :data:`OFFLINE_LABEL`.

    Example:
        ```python
        from langchain_core.messages import HumanMessage

        from langgraph_recall.offline import TemplatedResponder

        reply = TemplatedResponder().invoke([HumanMessage("I like tea.")])
        assert "offline" in reply.content
        ```
    """

    @property
    def _llm_type(self) -> str:
        return "templated-responder"

    def answer(self, messages: Sequence[BaseMessage]) -> str:
        """The reply for ``messages`` (pure)."""
        question = next((_text(m) for m in reversed(messages) if isinstance(m, HumanMessage)), "")
        lines = memory_lines(messages)
        is_question = question.rstrip().endswith("?") or bool(
            re.match(r"(?i)\s*(what|which|who|where|when|how|do|does|tell)\b", question)
        )
        if not is_question:
            return f"Got it, noted. ({OFFLINE_LABEL})"
        for asks, answers in _TOPICS:
            if asks.search(question):
                hits = [_you(text) for _, text in lines if answers.search(text)]
                if hits:
                    return "; ".join(hits) + " (from memory)."
                break
        return f"I don't know that yet. ({OFFLINE_LABEL})"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = AIMessage(self.answer(messages))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Accept an agent's tools (so ``create_agent(TemplatedResponder(), tools=[...])``
        builds); the responder never calls them: it answers from the memory block.

        Example:
            ```python
            from langchain_core.messages import HumanMessage
            from langchain_core.tools import tool

            from langgraph_recall.offline import TemplatedResponder


            @tool(description="Does nothing.")
            def noop() -> str:
                return ""

            bound = TemplatedResponder().bind_tools([noop])
            assert "offline" in bound.invoke([HumanMessage("I like tea.")]).content
            ```
        """
        return self.bind(**kwargs)


def default_chat_model() -> BaseChatModel | None:
    """A real chat model if one is configured, else ``None`` (then use offline mode).

    Returns ``langchain_openai.ChatOpenAI`` when ``OPENAI_API_KEY`` is set and
    ``langchain-openai`` is installed (model from ``LANGGRAPH_RECALL_MODEL``, default
    ``gpt-4o-mini``; ``OPENAI_BASE_URL`` selects an OpenAI-compatible server).

    Example:
        ```python
        import os

        from langgraph_recall.offline import TemplatedResponder, default_chat_model

        os.environ.pop("OPENAI_API_KEY", None)
        assert default_chat_model() is None  # no key: run offline
        model = default_chat_model() or TemplatedResponder()
        ```
    """
    if not os.environ.get("OPENAI_API_KEY"):
        return None
    try:
        module = importlib.import_module("langchain_openai")
    except ImportError:
        return None
    model: BaseChatModel = module.ChatOpenAI(
        model=os.environ.get("LANGGRAPH_RECALL_MODEL", "gpt-4o-mini")
    )
    return model


def tool_call_message(name: str, args: dict[str, Any], content: str = "") -> AIMessage:
    """An ``AIMessage`` calling tool ``name`` with ``args`` (fresh call id).

    Also scripts ``with_structured_output(Schema)`` answers: use the schema's class name.

    Example:
        ```python
        from langgraph_recall.offline import tool_call_message

        msg = tool_call_message("recall", {"query": "name"})
        assert msg.tool_calls[0]["name"] == "recall"
        ```
    """
    call_id = "call_" + uuid.uuid4().hex[:12]
    return AIMessage(
        content=content,
        tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}],
    )


Response = AIMessage | str | Callable[[list[BaseMessage]], AIMessage | str]


class ScriptedChatModel(BaseChatModel):
    """Replays scripted replies in order and records every call (a test double, not an LLM).

    Each response is an ``AIMessage``, a string, or a function of the input messages
    returning one of those. ``bind_tools`` and ``with_structured_output`` work (the tools
    are recorded; the scripted reply must contain the tool call). When the script runs
    out, ``default`` is used if given, else an error names the call number.

    Attributes:
        responses: The script.
        default: Reply once the script is exhausted (``None`` → raise).
        calls: The input messages of every call, in order.
        bound_tools: The tool names bound on every call (empty if none).

    Example:
        ```python
        from langgraph_recall.offline import ScriptedChatModel

        model = ScriptedChatModel(responses=["hello"])
        assert model.invoke("hi").content == "hello" and len(model.calls) == 1
        ```
    """

    responses: list[Any] = Field(default_factory=list)
    default: Any = None
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    bound_tools: list[list[str]] = Field(default_factory=list)
    _cursor: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted-chat-model"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Record the tools; replies still come from the script."""
        names = [convert_to_openai_tool(tool)["function"]["name"] for tool in tools]
        return self.bind(tool_names=names, **kwargs)

    def _next(self, messages: list[BaseMessage]) -> AIMessage:
        with self._lock:
            index = self._cursor
            self._cursor += 1
            self.calls.append(list(messages))
        if index < len(self.responses):
            response = self.responses[index]
        elif self.default is not None:
            response = self.default
        else:
            raise RuntimeError(
                f"ScriptedChatModel: call #{index + 1} but only {len(self.responses)} "
                "responses were scripted"
            )
        if callable(response) and not isinstance(response, AIMessage):
            response = response(list(messages))
        if isinstance(response, str):
            return AIMessage(response)
        if isinstance(response, AIMessage):
            return response.model_copy(update={"id": None})
        raise TypeError(f"scripted response must be AIMessage or str, got {type(response)!r}")

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._lock:
            self.bound_tools.append(list(kwargs.get("tool_names", [])))
        return ChatResult(generations=[ChatGeneration(message=self._next(messages))])
