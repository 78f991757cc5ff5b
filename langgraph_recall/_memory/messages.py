"""Pure message logic of the memory nodes and the middleware: grouping, token counting,
summary planning, model-input assembly and memory-block rendering. No I/O.

The central invariant: an ``AIMessage`` with ``tool_calls`` and the ``ToolMessage`` s
answering it form one **unit** (:func:`group_units`); summarisation keeps or folds whole
turns (a ``HumanMessage`` and everything up to the next one), so it never cuts inside a
unit and the kept conversation always opens with a user message.

Example:
    ```python
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from langgraph_recall._memory.messages import group_units

    call = AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": "c1"}])
    units = group_units([HumanMessage("q"), call, ToolMessage("r", tool_call_id="c1")])
    assert [len(u) for u in units] == [1, 2]
    ```
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately

from langgraph_recall.extraction.dates import parse_iso_datetime
from langgraph_recall.extraction.rules import message_text
from langgraph_recall.prompts.encoding import encode_inline, encode_label

__all__ = [
    "DEFAULT_MAX_MESSAGE_CHARS",
    "DEFAULT_MAX_QUERY_CHARS",
    "DEFAULT_TOOL_RESULT_CHARS",
    "MEMORY_BLOCK_ID",
    "SUMMARY_BLOCK_ID",
    "SummaryPlan",
    "TokenCounter",
    "bound_message",
    "bound_text",
    "build_query",
    "conversation_messages",
    "count_tokens",
    "group_units",
    "is_block",
    "memory_line",
    "model_input",
    "offline_summary",
    "plan_summary",
    "render_memory_block",
    "select_within_budget",
    "shrink_tool_result",
    "turn_messages",
]

MEMORY_BLOCK_ID = "langgraph-recall:memory-block"
"""Message id of the ``<memory>`` system block (replaced in place every turn)."""
SUMMARY_BLOCK_ID = "langgraph-recall:summary-block"
"""Message id of the running-summary system block."""

TokenCounter = Callable[[Sequence[BaseMessage]], int]


def count_tokens(messages: Sequence[BaseMessage]) -> int:
    """Approximate token count (LangChain's ``count_tokens_approximately``).

    Example:
        ```python
        from langchain_core.messages import HumanMessage

        from langgraph_recall._memory.messages import count_tokens

        assert count_tokens([HumanMessage("hello world")]) > 0
        ```
    """
    return int(count_tokens_approximately(messages))


def is_block(message: BaseMessage) -> bool:
    """True for the memory and summary blocks the nodes manage: a ``SystemMessage`` with
    one of their ids. A conversation message that carries such an id (sent by a client)
    is not a block: it stays conversation, never system text.

    Example:
        ```python
        from langchain_core.messages import HumanMessage, SystemMessage

        from langgraph_recall.nodes import MEMORY_BLOCK_ID
        from langgraph_recall._memory.messages import is_block

        assert is_block(SystemMessage("x", id=MEMORY_BLOCK_ID))
        assert not is_block(HumanMessage("x", id=MEMORY_BLOCK_ID))
        ```
    """
    return isinstance(message, SystemMessage) and message.id in (MEMORY_BLOCK_ID, SUMMARY_BLOCK_ID)


def conversation_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """``messages`` without the managed blocks.

    Example:
        ```python
        from langchain_core.messages import SystemMessage

        from langgraph_recall.nodes import MEMORY_BLOCK_ID
        from langgraph_recall._memory.messages import conversation_messages

        assert conversation_messages([SystemMessage("x", id=MEMORY_BLOCK_ID)]) == []
        ```
    """
    return [m for m in messages if not is_block(m)]


def turn_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The latest turn: from the last ``HumanMessage`` to the end (blocks excluded).

    Example:
        ```python
        from langchain_core.messages import AIMessage, HumanMessage

        from langgraph_recall._memory.messages import turn_messages

        msgs = [HumanMessage("a"), AIMessage("b"), HumanMessage("c"), AIMessage("d")]
        assert [m.content for m in turn_messages(msgs)] == ["c", "d"]
        ```
    """
    convo = conversation_messages(messages)
    for index in range(len(convo) - 1, -1, -1):
        if isinstance(convo[index], HumanMessage):
            return convo[index:]
    return []


DEFAULT_MAX_QUERY_CHARS = 2000
"""Longest search query the nodes build from user text (about 500 tokens)."""
DEFAULT_MAX_MESSAGE_CHARS = 8000
"""Longest message text the ``extract`` node hands to its extractor (about 2,000 tokens)."""


def bound_text(text: str, max_chars: int) -> str:
    """``text`` cut to at most ``max_chars`` characters, at a word boundary when one is
    near the end (pure; used for every query built from user or model text).

    Example:
        ```python
        from langgraph_recall._memory.messages import bound_text

        assert bound_text("one two three", 9) == "one two"
        assert bound_text("short", 9) == "short"
        ```
    """
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    space = cut.rfind(" ", max_chars * 3 // 4)
    return (cut[:space] if space > 0 else cut).rstrip()


def bound_message(message: BaseMessage, max_chars: int) -> BaseMessage:
    """``message``, or a copy whose text is cut to ``max_chars`` (:func:`bound_text`; same
    id, role and tool calls) when it is longer.

    Example:
        ```python
        from langchain_core.messages import HumanMessage

        from langgraph_recall._memory.messages import bound_message

        assert bound_message(HumanMessage("a b c d"), 3).content == "a b"
        ```
    """
    text = message_text(message)
    if len(text) <= max_chars:
        return message
    return message.model_copy(update={"content": bound_text(text, max_chars)})


def build_query(
    messages: Sequence[BaseMessage],
    *,
    context_messages: int = 1,
    max_chars: int = DEFAULT_MAX_QUERY_CHARS,
) -> str:
    """Search query: the latest user message, plus up to ``context_messages`` earlier user
    messages as context (newest first), cut to ``max_chars`` characters (the latest
    message's beginning is kept first). Reads only the messages it uses.

    Example:
        ```python
        from langchain_core.messages import AIMessage, HumanMessage

        from langgraph_recall._memory.messages import build_query

        msgs = [HumanMessage("I moved."), AIMessage("ok"), HumanMessage("Which city?")]
        assert build_query(msgs) == "Which city?\\nI moved."
        assert build_query(msgs, context_messages=0) == "Which city?"
        assert len(build_query([HumanMessage("word " * 10**5)])) <= 2000
        ```
    """
    picked: list[str] = []
    used = 0
    for message in reversed(messages):
        if len(picked) > context_messages or used >= max_chars:
            break
        if not isinstance(message, HumanMessage):
            continue
        text = bound_text(message_text(message).strip(), max_chars - used)
        if text:
            picked.append(text)
            used += len(text) + 1
    return bound_text("\n".join(picked), max_chars)


def model_input(
    messages: Sequence[BaseMessage], *, system_prompt: str | None = None
) -> list[BaseMessage]:
    """Order messages for a model call: system prompt, summary block, memory block, other
    system messages, then the conversation in order (providers want system text first).

    Example:
        ```python
        from langchain_core.messages import HumanMessage, SystemMessage

        from langgraph_recall.nodes import MEMORY_BLOCK_ID, model_input

        msgs = [HumanMessage("hi"), SystemMessage("<memory>…</memory>", id=MEMORY_BLOCK_ID)]
        assert model_input(msgs)[0].id == MEMORY_BLOCK_ID
        ```
    """
    head: list[BaseMessage] = [SystemMessage(system_prompt)] if system_prompt else []
    head += [m for m in messages if is_block(m) and m.id == SUMMARY_BLOCK_ID]
    head += [m for m in messages if is_block(m) and m.id == MEMORY_BLOCK_ID]
    head += [m for m in messages if isinstance(m, SystemMessage) and not is_block(m)]
    rest = [m for m in messages if not isinstance(m, SystemMessage)]
    return head + rest


# -- memory block ---------------------------------------------------------------------
def _day(value: Any) -> str | None:
    moment = parse_iso_datetime(value)
    return moment.date().isoformat() if isinstance(moment, datetime) else None


def memory_line(memory: Mapping[str, Any]) -> str:
    """One block line: ``- [kind] content (valid from YYYY-MM-DD[ until YYYY-MM-DD])``.

    Stored text is written with :func:`~langgraph_recall.prompts.encoding.encode_inline`:
    whatever a memory says, it stays on its own line and cannot close or forge a tag.

    Example:
        ```python
        from langgraph_recall._memory.messages import memory_line

        line = memory_line({"content": "User likes tea.", "kind": "preference",
                            "valid_from": "2026-01-02T00:00:00+00:00"})
        assert line == "- [preference] User likes tea. (valid from 2026-01-02)"
        ```
    """
    content = encode_inline(memory.get("content", ""))
    kind = encode_label(memory.get("kind") or "semantic")
    start, end = _day(memory.get("valid_from")), _day(memory.get("invalid_at"))
    if start and end:
        when = f"valid {start} until {end}, no longer true"
    elif start:
        when = f"valid from {start}"
    elif end:
        when = f"valid until {end}, no longer true"
    else:
        when = "validity unknown"
    return f"- [{kind}] {content} ({when})"


def select_within_budget(
    memories: Sequence[Mapping[str, Any]],
    *,
    token_budget: int,
    token_counter: TokenCounter = count_tokens,
) -> list[dict[str, Any]]:
    """Keep memories in the given (best-first) order while their lines fit the budget.

    A memory that does not fit is skipped and smaller later ones may still fit.

    Example:
        ```python
        from langgraph_recall._memory.messages import select_within_budget

        mems = [{"content": "a " * 400}, {"content": "User likes tea."}]
        assert [m["content"] for m in select_within_budget(mems, token_budget=30)] == [
            "User likes tea."]
        ```
    """
    kept: list[dict[str, Any]] = []
    used = 0
    for memory in memories:
        cost = token_counter([SystemMessage(memory_line(memory))])
        if used + cost <= token_budget:
            kept.append(dict(memory))
            used += cost
    return kept


def render_memory_block(memories: Sequence[Mapping[str, Any]], prompt: str) -> str:
    """Fill the block prompt's ``{memories}`` with one line per memory.

    Example:
        ```python
        from langgraph_recall._memory.messages import render_memory_block

        text = render_memory_block([{"content": "x"}], "<memory>\\n{memories}\\n</memory>")
        assert text.startswith("<memory>\\n- [semantic] x")
        ```
    """
    return prompt.format(memories="\n".join(memory_line(m) for m in memories))


# -- summarisation --------------------------------------------------------------------
def group_units(messages: Sequence[BaseMessage]) -> list[list[BaseMessage]]:
    """Split messages into atomic units: an ``AIMessage`` with tool calls together with the
    ``ToolMessage`` s answering it; every other message alone. Orphan ``ToolMessage`` s
    (their call already gone) join the preceding unit, or form a unit at the start.

    Example:
        ```python
        from langchain_core.messages import AIMessage, HumanMessage

        from langgraph_recall.nodes import group_units

        assert group_units([HumanMessage("a"), AIMessage("b")]) == [[HumanMessage("a")],
                                                                    [AIMessage("b")]]
        ```
    """
    units: list[list[BaseMessage]] = []
    open_calls: set[str] = set()
    for message in messages:
        if isinstance(message, ToolMessage):
            if units and (message.tool_call_id in open_calls or not open_calls):
                units[-1].append(message)
                open_calls.discard(message.tool_call_id)
                continue
            units.append([message])
            continue
        open_calls = set()
        units.append([message])
        if isinstance(message, AIMessage) and message.tool_calls:
            open_calls = {str(call.get("id")) for call in message.tool_calls}
    return units


DEFAULT_TOOL_RESULT_CHARS = 500
"""How much of a tool result the summariser keeps when it must shrink one."""
_SHRUNK = re.compile(r"\n\[… tool output shortened: \d+ of \d+ characters kept\]\Z")


def shrink_tool_result(message: ToolMessage, max_chars: int) -> ToolMessage | None:
    """A copy of ``message`` whose text is cut to ``max_chars`` characters plus a marker
    line saying so (same id, ``tool_call_id``, name and status, so the tool-call pair
    stays intact); ``None`` when it is short enough or already shortened.

    Example:
        ```python
        from langchain_core.messages import ToolMessage

        from langgraph_recall._memory.messages import shrink_tool_result

        long = ToolMessage("row " * 1000, tool_call_id="c1", id="t1")
        short = shrink_tool_result(long, 20)
        assert short is not None and short.id == "t1" and short.tool_call_id == "c1"
        assert short.content.endswith("[… tool output shortened: 19 of 4000 characters kept]")
        assert shrink_tool_result(short, 20) is None
        ```
    """
    text = message_text(message)
    if len(text) <= max_chars or _SHRUNK.search(text):
        return None
    head = bound_text(text, max_chars)
    marker = f"[… tool output shortened: {len(head)} of {len(text)} characters kept]"
    return message.model_copy(update={"content": f"{head}\n{marker}"})


@dataclass(frozen=True)
class SummaryPlan:
    """What to fold into the summary, what to keep verbatim, which tool results to shorten.

    ``keep`` holds the kept messages as they will be (shortened tool results in place);
    ``shrunk`` lists those shortened copies (same ids: the ``add_messages`` reducer
    replaces the originals). ``fold`` may be empty when shortening alone was needed.

    Example:
        ```python
        from langchain_core.messages import HumanMessage

        from langgraph_recall._memory.messages import SummaryPlan

        plan = SummaryPlan(fold=[HumanMessage("old")], keep=[HumanMessage("new")])
        assert plan.fold[0].content == "old" and plan.shrunk == []
        ```
    """

    fold: list[BaseMessage]
    keep: list[BaseMessage]
    shrunk: list[ToolMessage] = field(default_factory=list)


def _shrink_to_fit(
    kept: list[BaseMessage], budget: float, token_counter: TokenCounter, max_chars: int
) -> tuple[list[BaseMessage], list[ToolMessage]]:
    """Shorten tool results in ``kept``, oldest first, until it fits ``budget``."""
    total = token_counter(kept)
    kept = list(kept)
    shrunk: list[ToolMessage] = []
    for index, message in enumerate(kept):
        if total <= budget:
            break
        if not isinstance(message, ToolMessage):
            continue
        short = shrink_tool_result(message, max_chars)
        if short is not None:
            total += token_counter([short]) - token_counter([message])
            kept[index] = short
            shrunk.append(short)
    return kept, shrunk


def plan_summary(
    messages: Sequence[BaseMessage],
    *,
    max_tokens: int,
    trigger_fraction: float = 0.8,
    keep_turns: int = 2,
    summary_tokens: int = 0,
    token_counter: TokenCounter = count_tokens,
    tool_result_chars: int = DEFAULT_TOOL_RESULT_CHARS,
) -> SummaryPlan | None:
    """Decide whether to summarise, where to cut and which tool results to shorten.

    Triggers when the conversation (blocks excluded, plus ``summary_tokens`` for the
    current summary) exceeds ``trigger_fraction * max_tokens``. Everything before the
    last ``keep_turns`` turns is folded. When the kept turns alone exceed the budget
    (``trigger_fraction * max_tokens - summary_tokens``), their tool results are
    shortened first, oldest first (:func:`shrink_tool_result`); if that is not enough,
    older kept turns are folded too, whole: the cut always falls just before a
    ``HumanMessage``, so the kept conversation opens with the user and no question is
    folded while its answer stays. The current turn — the last ``HumanMessage`` and
    everything after it — is **never** folded (``keep_turns=0`` keeps just that turn),
    even when it alone is over the budget. A conversation without a user message has no
    turn to cut at: only its tool results may be shortened.

    Returns:
        ``None`` when under the trigger or there is nothing to fold or shorten.

    Example:
        ```python
        from langchain_core.messages import HumanMessage

        from langgraph_recall._memory.messages import plan_summary

        msgs = [HumanMessage("x " * 200, id=str(i)) for i in range(10)]
        plan = plan_summary(msgs, max_tokens=500, keep_turns=2)
        assert plan is not None and len(plan.keep) == 2 and len(plan.fold) == 8
        ```
    """
    convo = conversation_messages(messages)
    if not convo:
        return None
    trigger = trigger_fraction * max_tokens
    if token_counter(convo) + summary_tokens <= trigger:
        return None
    units = group_units(convo)
    # Cuts fall only where a turn starts (a user message): a question is never folded
    # while its answer stays, and the kept conversation always opens with the user.
    starts = [i for i, unit in enumerate(units) if isinstance(unit[0], HumanMessage)]
    if not starts:  # no turn to cut at: shortening tool results is all that may happen
        starts = [0]
    turn = max(len(starts) - max(keep_turns, 1), 0)  # keep_turns=0: the current turn
    budget = trigger - summary_tokens
    while True:
        kept = [m for unit in units[starts[turn] :] for m in unit]
        kept, shrunk = _shrink_to_fit(kept, budget, token_counter, tool_result_chars)
        if turn == len(starts) - 1 or token_counter(kept) <= budget:
            break
        turn += 1  # fold one more whole turn
    fold = [m for unit in units[: starts[turn]] for m in unit]
    if not fold and not shrunk:
        return None
    return SummaryPlan(fold=fold, keep=kept, shrunk=shrunk)


def offline_summary(previous: str, messages: Sequence[BaseMessage], *, max_words: int) -> str:
    """Deterministic extractive summary (no model): the previous summary's lines plus the
    first sentence (at most 25 words) of every folded message, one ``role: text`` line
    each. When it exceeds ``max_words`` whole lines are dropped — the oldest assistant and
    tool lines first, then the oldest user lines — and a leading ``…`` line marks the cut,
    so every kept line still reads as written.

    Example:
        ```python
        from langchain_core.messages import HumanMessage

        from langgraph_recall._memory.messages import offline_summary

        s = offline_summary("", [HumanMessage("I use Postgres. It is fast.")], max_words=50)
        assert s == "user: I use Postgres."
        ```
    """
    roles = {"human": "user", "ai": "assistant", "tool": "tool"}
    lines = [line for line in previous.strip().splitlines() if line.strip() and line != "…"]
    for message in messages:
        text = " ".join(message_text(message).split())
        if isinstance(message, AIMessage) and message.tool_calls:
            text = text + " [called " + ", ".join(c["name"] for c in message.tool_calls) + "]"
        first = re.split(r"(?<=[.!?。])\s", text.strip(), maxsplit=1)[0] if text else ""
        clipped = first.split()
        if len(clipped) > 25:
            first = " ".join(clipped[:25]) + " …"
        if first:
            lines.append(f"{roles.get(message.type, message.type)}: {first}")
    cut = False
    while len(lines) > 1 and sum(len(line.split()) for line in lines) + cut > max_words:
        # What the user said carries the facts: older assistant/tool lines go first.
        others = [i for i, line in enumerate(lines[:-1]) if not line.startswith("user: ")]
        lines.pop(others[0] if others else 0)
        cut = True
    if lines and len(lines[0].split()) > max_words:
        lines[0] = "… " + " ".join(lines[0].split()[-max_words + 1 :])
    return "\n".join(["…", *lines] if cut else lines)
