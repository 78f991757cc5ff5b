"""Structured answers from any chat model: native structured output, tool calling, or JSON.

:class:`StructuredCaller` asks a chat model for an instance of a pydantic schema and
copes with what real models return:

1. ``"native"`` — the model's own ``with_structured_output`` (OpenAI's JSON schema mode,
   or LangChain's default built on tool calling for any model with ``bind_tools``);
   a reply that is not the tool call (the model answered in prose or JSON instead) is
   still read from its tool calls or its text.
2. ``"json"`` — for models without ``with_structured_output`` / ``bind_tools`` (the
   default when the model has neither): the schema is appended to the prompt and a JSON
   object is read from the reply, tolerant of Markdown code fences, prose around the
   object, ``<think>`` blocks and a bare list for a one-list schema.

A reply that cannot be read is retried (``attempts`` in all) with the reason appended to
the prompt; after the last try a :class:`~langgraph_recall.errors.ConfigurationError`
says which model failed, how and what to do. Errors raised by the model itself (network,
rate limits) are not retried here and propagate unchanged.

Example:
    ```python
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from pydantic import BaseModel

    from langgraph_recall.extraction.structured import StructuredCaller


    class City(BaseModel):
        name: str

    fence = "`" * 3  # a Markdown code fence, as many models wrap their JSON
    reply = AIMessage(fence + 'json\\n{"name": "Oslo"}\\n' + fence)
    model = GenericFakeChatModel(messages=iter([reply]))
    caller = StructuredCaller(model, City)
    assert caller.mode == "json" and caller.invoke("Which city?").name == "Oslo"
    ```
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Generic, Literal, TypeVar

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import Runnable
from pydantic import BaseModel, ValidationError

from langgraph_recall.errors import ConfigurationError
from langgraph_recall.extraction.rules import message_text
from langgraph_recall.prompts.encoding import encode_inline

__all__ = ["STRUCTURED_MODES", "StructuredCaller", "parse_json_reply"]

STRUCTURED_MODES = ("auto", "native", "json")
"""``auto``: native when the model supports it, else JSON."""

StructuredMode = Literal["auto", "native", "json"]
M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|javascript|js)?[ \t]*\n?(.*?)```", re.DOTALL)
_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_JSON_INSTRUCTION = (
    "Reply with one JSON object and nothing else (no prose, no code fence) that matches "
    "this JSON schema:\n{schema}"
)
_RETRY_INSTRUCTION = (
    "Your previous reply could not be used ({reason}). Reply again, with only the "
    "requested structured answer."
)


def parse_json_reply(text: str) -> Any:
    """The first JSON object (or array) in a model's text reply.

    Looks inside Markdown code fences first, then anywhere in the text; ``<think>`` blocks
    are ignored.

    Raises:
        ValueError: No JSON object or array in the text.

    Example:
        ```python
        from langgraph_recall.extraction.structured import parse_json_reply

        assert parse_json_reply('Sure! {"a": [1, 2]} Hope it helps.') == {"a": [1, 2]}
        fence = "`" * 3
        assert parse_json_reply(fence + "json\\n[1]\\n" + fence) == [1]
        ```
    """
    text = _THINK.sub("", text)
    decoder = json.JSONDecoder()
    for chunk in [*(m.group(1) for m in _FENCE.finditer(text)), text]:
        for index, char in enumerate(chunk):
            if char not in "{[":
                continue
            try:
                value, _ = decoder.raw_decode(chunk, index)
            except json.JSONDecodeError:
                continue
            if isinstance(value, (dict, list)):
                return value
    raise ValueError("no JSON object in the reply")


def _as_messages(prompt: LanguageModelInput) -> list[BaseMessage]:
    if isinstance(prompt, str):
        return [HumanMessage(prompt)]
    if isinstance(prompt, PromptValue):
        return prompt.to_messages()
    messages: list[BaseMessage] = []
    for item in prompt:
        if isinstance(item, BaseMessage):
            messages.append(item)
        else:
            raise ConfigurationError(
                f"StructuredCaller takes a string or a list of messages, got {type(item).__name__}"
            )
    return messages


class StructuredCaller(Generic[M]):
    """Get a ``schema`` instance from ``model`` whatever structured output it supports.

    Args:
        model: Any LangChain chat model.
        schema: The pydantic model of the answer.
        mode: ``"auto"`` (default: native when the model has ``with_structured_output``
            or ``bind_tools``, else JSON), ``"native"`` or ``"json"``.
        attempts: Tries before giving up (each unreadable reply costs one more call).

    Raises:
        ConfigurationError: Unknown ``mode``, ``attempts < 1``, or ``mode="native"`` on a
            model that has no structured output.

    Example:
        ```python
        from pydantic import BaseModel

        from langgraph_recall.extraction.structured import StructuredCaller
        from langgraph_recall.offline import ScriptedChatModel, tool_call_message


        class Answer(BaseModel):
            value: int

        model = ScriptedChatModel(responses=[tool_call_message("Answer", {"value": 4})])
        assert StructuredCaller(model, Answer).invoke("2 + 2?").value == 4
        ```
    """

    def __init__(
        self,
        model: BaseChatModel,
        schema: type[M],
        *,
        mode: StructuredMode = "auto",
        attempts: int = 3,
    ) -> None:
        if mode not in STRUCTURED_MODES:
            raise ConfigurationError(
                f"structured output mode {mode!r}: use one of {list(STRUCTURED_MODES)}"
            )
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            raise ConfigurationError(f"attempts must be an int >= 1, got {attempts!r}")
        self.model = model
        self.schema = schema
        self.attempts = attempts
        self._native: Runnable[LanguageModelInput, Any] | None = None
        if mode in ("auto", "native"):
            self._native = self._bind_native(mode == "native")
        self.mode: Literal["native", "json"] = "native" if self._native is not None else "json"
        self.calls = 0
        """Model calls made so far (retries included)."""

    def _bind_native(self, required: bool) -> Runnable[LanguageModelInput, Any] | None:
        bind = getattr(self.model, "with_structured_output", None)
        try:
            if bind is None:
                raise NotImplementedError("no with_structured_output")
            try:
                bound: Runnable[LanguageModelInput, Any] = bind(self.schema, include_raw=True)
            except TypeError:  # an override without include_raw: read its parsed answers
                bound = bind(self.schema)
            return bound
        except NotImplementedError as exc:
            if required:
                raise ConfigurationError(
                    f"{type(self.model).__name__} has no with_structured_output/bind_tools; "
                    "use mode='json' (or 'auto')"
                ) from exc
            return None

    # -- pure steps -------------------------------------------------------------------------
    def request(self, prompt: LanguageModelInput, failures: Sequence[str] = ()) -> list[Any]:
        """The messages of one try (JSON instructions; the reasons earlier tries failed)."""
        messages = _as_messages(prompt)
        notes: list[str] = []
        if self.mode == "json":
            schema = json.dumps(self.schema.model_json_schema(), separators=(",", ":"))
            notes.append(_JSON_INSTRUCTION.format(schema=schema))
        if failures:
            notes.append(_RETRY_INSTRUCTION.format(reason=encode_inline(failures[-1])))
        if not notes:
            return messages
        note = "\n\n".join(notes)
        last = messages[-1] if messages else None
        if isinstance(last, HumanMessage) and isinstance(last.content, str):
            return [*messages[:-1], HumanMessage(last.content + "\n\n" + note)]
        return [*messages, HumanMessage(note)]

    def read(self, result: Any) -> M:
        """Turn one reply (native result, message or text) into a ``schema`` instance.

        Raises:
            ValueError: The reply holds no valid answer (``ValidationError`` included).
        """
        if isinstance(result, dict) and "raw" in result and "parsed" in result:
            if isinstance(result["parsed"], self.schema):
                return result["parsed"]
            result = result["raw"]
        if isinstance(result, self.schema):
            return result
        if isinstance(result, AIMessage):
            for call in result.tool_calls:
                return self._validate(call.get("args") or {})
            result = message_text(result)
        if isinstance(result, str):
            return self._validate(parse_json_reply(result))
        return self._validate(result)

    def _validate(self, data: Any) -> M:
        fields = self.schema.model_fields
        if isinstance(data, list) and len(fields) == 1:  # a bare list for {"items": [...]}
            data = {next(iter(fields)): data}
        if isinstance(data, dict) and len(data) == 1 and len(fields) == 1:
            ((key, inner),) = data.items()
            if key not in fields and isinstance(inner, dict):  # {"ExtractionOutput": {...}}
                data = inner
        return self.schema.model_validate(data)

    def _give_up(self, failures: Sequence[str]) -> ConfigurationError:
        return ConfigurationError(
            f"{type(self.model).__name__} gave no usable {self.schema.__name__} in "
            f"{len(failures)} tries ({self.mode} mode; last problem: {failures[-1]}). Use a "
            "chat model that supports tool calling or JSON output, or raise attempts="
        )

    @staticmethod
    def _reason(exc: Exception) -> str:
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "answer"
            return f"{where}: {first.get('msg', 'invalid')}"
        return str(exc)[:200]

    # -- I/O ------------------------------------------------------------------------------
    def invoke(self, prompt: LanguageModelInput) -> M:
        """Ask until a reply reads as ``schema`` (at most ``attempts`` calls)."""
        failures: list[str] = []
        for _ in range(self.attempts):
            runnable = self._native if self._native is not None else self.model
            self.calls += 1
            reply = runnable.invoke(self.request(prompt, failures))
            try:
                return self.read(reply)
            except (ValueError, TypeError) as exc:
                failures.append(self._reason(exc))
        raise self._give_up(failures)

    async def ainvoke(self, prompt: LanguageModelInput) -> M:
        """Async :meth:`invoke`."""
        failures: list[str] = []
        for _ in range(self.attempts):
            runnable = self._native if self._native is not None else self.model
            self.calls += 1
            reply = await runnable.ainvoke(self.request(prompt, failures))
            try:
                return self.read(reply)
            except (ValueError, TypeError) as exc:
                failures.append(self._reason(exc))
        raise self._give_up(failures)
