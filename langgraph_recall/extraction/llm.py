"""``LLMExtractor``: extraction and batched consolidation with any LangChain chat model.

Two model calls per turn, both asking for the pydantic schemas below: one to extract
candidates, one to consolidate **all** candidates of the turn against their neighbours.
Any chat model works (:class:`~langgraph_recall.extraction.structured.StructuredCaller`):
its ``with_structured_output`` when it has one (tool calling for most models), else JSON
read from its text; an unreadable reply is retried, and after ``attempts`` tries a
:class:`~langgraph_recall.errors.ConfigurationError` says so. Existing memories are shown to the
model as ``M0, M1, ...`` (small numbers, not store keys) so it cannot invent keys.

Example:
    ```python
    from langgraph_recall.extraction import LLMExtractor
    from langgraph_recall.offline import ScriptedChatModel

    extractor = LLMExtractor(ScriptedChatModel(responses=[]))
    assert extractor.uses_llm
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel, Field

from langgraph_recall.extraction.dates import parse_iso_datetime, resolve_date_phrase
from langgraph_recall.extraction.entities import MAX_ENTITIES
from langgraph_recall.extraction.rules import message_text
from langgraph_recall.extraction.structured import StructuredCaller, StructuredMode
from langgraph_recall.extraction.types import (
    MEMORY_KINDS,
    Action,
    ConsolidationDecision,
    ExistingMemory,
    MemoryCandidate,
)
from langgraph_recall.prompts import DEFAULT_CONSOLIDATION_PROMPT, DEFAULT_EXTRACTION_PROMPT
from langgraph_recall.prompts.encoding import encode_inline, encode_label

__all__ = [
    "ConsolidationOutput",
    "DecisionOutput",
    "ExtractedMemory",
    "ExtractionOutput",
    "LLMExtractor",
    "format_candidates",
    "format_existing",
    "format_transcript",
]

KindName = Literal["semantic", "episodic", "procedural", "preference", "reflection"]


class ExtractedMemory(BaseModel):
    """One memory as the extraction model returns it."""

    content: str = Field(description="One self-contained third-person sentence.")
    kind: KindName = "semantic"
    importance: int = Field(default=5, ge=1, le=10)
    subject: str = "user"
    slot: str | None = Field(default=None, description="Attribute the fact fills.")
    valid_from: str | None = Field(default=None, description="Stated date expression, verbatim.")
    replaces: list[str] = Field(
        default_factory=list,
        description="What earlier fact this one replaces, as a word or phrase of it.",
    )
    entities: list[str] = Field(
        default_factory=list,
        description="People, places, organisations and projects the memory names.",
    )


class ExtractionOutput(BaseModel):
    """Structured output of the extraction call."""

    memories: list[ExtractedMemory] = Field(default_factory=list)


class DecisionOutput(BaseModel):
    """One consolidation decision as the model returns it."""

    candidate: int = Field(description="Candidate number (C<n>).")
    action: Literal["ADD", "UPDATE", "INVALIDATE", "NOOP"]
    target: int | None = Field(default=None, description="Existing memory number (M<n>).")
    content: str | None = Field(default=None, description="Merged text for UPDATE.")


class ConsolidationOutput(BaseModel):
    """Structured output of the consolidation call."""

    decisions: list[DecisionOutput] = Field(default_factory=list)


def format_transcript(messages: Sequence[BaseMessage]) -> str:
    """``role: text`` lines for the messages of a turn (tool calls summarised), one line
    per message: its text is written with
    :func:`~langgraph_recall.prompts.encoding.encode_inline`, so a message (or a tool
    result) cannot forge another speaker's line or a tag.

    Example:
        ```python
        from langchain_core.messages import HumanMessage

        from langgraph_recall.extraction.llm import format_transcript

        assert format_transcript([HumanMessage("hi")]) == "user: hi"
        ```
    """
    lines: list[str] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            role = "user"
        elif isinstance(message, AIMessage):
            role = "assistant"
        elif isinstance(message, ToolMessage):
            role = f"tool[{encode_label(message.name or message.tool_call_id)}]"
        elif isinstance(message, SystemMessage):
            continue
        else:
            role = encode_inline(message.type)
        text = message_text(message)
        if isinstance(message, AIMessage) and message.tool_calls:
            calls = ", ".join(f"{call['name']}({call['args']})" for call in message.tool_calls)
            text = (text + f" [calls {calls}]").strip()
        lines.append(f"{role}: {encode_inline(text)}")
    return "\n".join(lines)


def format_candidates(candidates: Sequence[MemoryCandidate]) -> str:
    """Numbered candidate lines ``C0: [kind] text (subject: …, slot: …)``; every field
    through :func:`~langgraph_recall.prompts.encoding.encode_inline` (one line each).

    Example:
        ```python
        from langgraph_recall.extraction.llm import format_candidates
        from langgraph_recall.extraction.types import MemoryCandidate

        assert format_candidates([MemoryCandidate("User likes tea.")]).startswith("C0:")
        ```
    """
    return "\n".join(
        f"C{i}: [{encode_label(c.kind)}] {encode_inline(c.content)} "
        f"(subject: {encode_inline(c.subject)}, slot: {encode_inline(c.slot or '-')})"
        for i, c in enumerate(candidates)
    )


def format_existing(existing: Sequence[ExistingMemory]) -> str:
    """Numbered memory lines ``M0: [kind] text (subject: …, slot: …, valid from …)``;
    stored text goes through :func:`~langgraph_recall.prompts.encoding.encode_inline`, so a
    memory cannot forge an ``M<n>:`` line or a tag.

    Example:
        ```python
        from langgraph_recall.extraction.llm import format_existing

        assert format_existing([]) == "(none)"
        ```
    """
    if not existing:
        return "(none)"
    return "\n".join(
        f"M{i}: [{encode_label(m.value.get('kind', 'semantic'))}] {encode_inline(m.content)} "
        f"(subject: {encode_inline(m.subject)}, slot: {encode_inline(m.slot or '-')}, "
        f"valid from {encode_inline(m.value.get('valid_from', '?'))})"
        for i, m in enumerate(existing)
    )


class LLMExtractor:
    """Extract and consolidate memories with a chat model (one call each, batched).

    Args:
        model: Any LangChain chat model (structured output, tool calling or plain text).
        extraction_prompt: Overrides :data:`~langgraph_recall.prompts.DEFAULT_EXTRACTION_PROMPT`.
        consolidation_prompt: Overrides
            :data:`~langgraph_recall.prompts.DEFAULT_CONSOLIDATION_PROMPT`.
        max_candidates: Keep at most this many candidates per turn (most important first).
        structured_output: ``"auto"`` (default: the model's ``with_structured_output``
            when it has one, else JSON from its text), ``"native"`` or ``"json"``.
        attempts: Model calls per step before an unreadable answer raises
            :class:`~langgraph_recall.errors.ConfigurationError`.

    Example:
        ```python
        from langchain_core.messages import HumanMessage

        from langgraph_recall.extraction.llm import LLMExtractor
        from langgraph_recall.offline import ScriptedChatModel, tool_call_message

        model = ScriptedChatModel(responses=[tool_call_message(
            "ExtractionOutput", {"memories": [{"content": "User likes tea.", "slot": "p:tea"}]})])
        from datetime import datetime, timezone

        found = LLMExtractor(model).extract([HumanMessage("I like tea")],
                                            now=datetime.now(timezone.utc))
        assert found[0].slot == "p:tea"
        ```
    """

    uses_llm = True

    def __init__(
        self,
        model: BaseChatModel,
        *,
        extraction_prompt: str = DEFAULT_EXTRACTION_PROMPT,
        consolidation_prompt: str = DEFAULT_CONSOLIDATION_PROMPT,
        max_candidates: int = 10,
        structured_output: StructuredMode = "auto",
        attempts: int = 3,
    ) -> None:
        self.model = model
        self.extraction_prompt = extraction_prompt
        self.consolidation_prompt = consolidation_prompt
        self.max_candidates = max_candidates
        self._extraction = StructuredCaller(
            model, ExtractionOutput, mode=structured_output, attempts=attempts
        )
        self._consolidation = StructuredCaller(
            model, ConsolidationOutput, mode=structured_output, attempts=attempts
        )

    @property
    def structured_output(self) -> str:
        """How answers are read from this model: ``"native"`` or ``"json"``."""
        return self._extraction.mode

    # -- prompt assembly (pure) -------------------------------------------------------
    def extraction_messages(self, messages: Sequence[BaseMessage], now: datetime) -> list[Any]:
        """The model input of the extraction call."""
        system = self.extraction_prompt.format(
            now=now.strftime("%A %Y-%m-%d %H:%M %Z").strip(), kinds=", ".join(MEMORY_KINDS)
        )
        return [SystemMessage(system), HumanMessage(format_transcript(messages))]

    def consolidation_messages(
        self, candidates: Sequence[MemoryCandidate], existing: Sequence[ExistingMemory]
    ) -> list[Any]:
        """The model input of the consolidation call."""
        now = datetime.now().astimezone().strftime("%Y-%m-%d")
        prompt = self.consolidation_prompt.format(
            now=now, candidates=format_candidates(candidates), existing=format_existing(existing)
        )
        return [HumanMessage(prompt)]

    def to_candidates(self, output: ExtractionOutput, now: datetime) -> list[MemoryCandidate]:
        """Convert the model's output, resolving stated dates against ``now``."""
        found: list[MemoryCandidate] = []
        for item in output.memories:
            content = item.content.strip()
            if not content:
                continue
            valid_from: datetime | None = None
            if item.valid_from:
                valid_from = parse_iso_datetime(item.valid_from) or resolve_date_phrase(
                    item.valid_from, now
                )
                if valid_from is not None and valid_from.tzinfo is None:
                    valid_from = valid_from.replace(tzinfo=now.tzinfo)
            found.append(
                MemoryCandidate(
                    content=content,
                    kind=item.kind,
                    importance=item.importance,
                    subject=(item.subject or "user").strip().lower(),
                    slot=(item.slot or "").strip().lower() or None,
                    valid_from=valid_from,
                    replaces=tuple(r.strip() for r in item.replaces if r and r.strip())[:5],
                    entities=tuple(e.strip() for e in item.entities if e and e.strip())[
                        :MAX_ENTITIES
                    ],
                )
            )
        found.sort(key=lambda c: -c.importance)
        return found[: self.max_candidates]

    @staticmethod
    def to_decisions(
        output: ConsolidationOutput, existing: Sequence[ExistingMemory]
    ) -> list[ConsolidationDecision]:
        """Convert the model's output (``M<n>`` numbers back to store keys)."""
        decisions: list[ConsolidationDecision] = []
        for item in output.decisions:
            target = None
            if item.target is not None and 0 <= item.target < len(existing):
                target = existing[item.target].key
            decisions.append(
                ConsolidationDecision(item.candidate, Action(item.action), target, item.content)
            )
        return decisions

    # -- I/O --------------------------------------------------------------------------
    def extract(self, messages: Sequence[BaseMessage], *, now: datetime) -> list[MemoryCandidate]:
        """One model call (more only if a reply is unreadable): candidates for the turn."""
        output = self._extraction.invoke(self.extraction_messages(messages, now))
        return self.to_candidates(output, now)

    async def aextract(
        self, messages: Sequence[BaseMessage], *, now: datetime
    ) -> list[MemoryCandidate]:
        """Async :meth:`extract`."""
        output = await self._extraction.ainvoke(self.extraction_messages(messages, now))
        return self.to_candidates(output, now)

    def consolidate(
        self, candidates: Sequence[MemoryCandidate], existing: Sequence[ExistingMemory]
    ) -> list[ConsolidationDecision]:
        """One model call: decisions for all candidates of the turn."""
        output = self._consolidation.invoke(self.consolidation_messages(candidates, existing))
        return self.to_decisions(output, existing)

    async def aconsolidate(
        self, candidates: Sequence[MemoryCandidate], existing: Sequence[ExistingMemory]
    ) -> list[ConsolidationDecision]:
        """Async :meth:`consolidate`."""
        messages = self.consolidation_messages(candidates, existing)
        output = await self._consolidation.ainvoke(messages)
        return self.to_decisions(output, existing)
