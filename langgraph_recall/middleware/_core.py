"""Pure message logic of the middleware: system-message assembly and summary rewrites.

No I/O. The middleware keep the conversation state free of the ``<memory>`` block: it is
added to the **model request's** system message on every model call and never returned as a
state update. The running summary is state (it replaces the folded messages), so it is
moved to the front of the state once, then into the system message of each request.

Example:
    ```python
    from langchain_core.messages import SystemMessage

    from langgraph_recall.middleware._core import append_system_text

    merged = append_system_text(SystemMessage("You are helpful."), "<memory>…</memory>")
    assert merged.text == "You are helpful.\\n\\n<memory>…</memory>"
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, RemoveMessage, SystemMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from langgraph_recall._memory.messages import is_block
from langgraph_recall.nodes import MEMORY_BLOCK_ID, SUMMARY_BLOCK_ID

__all__ = ["append_system_text", "lift_blocks", "summary_rewrite"]


def _is_summary(message: BaseMessage) -> bool:
    return is_block(message) and message.id == SUMMARY_BLOCK_ID


def append_system_text(system: SystemMessage | None, text: str) -> SystemMessage:
    """``system`` with ``text`` appended after a blank line (a new message if ``None``).

    String content stays a string; list content (content blocks) gets a text block, so
    provider-specific blocks (e.g. cache control) are kept as they are.

    Example:
        ```python
        from langgraph_recall.middleware._core import append_system_text

        assert append_system_text(None, "x").text == "x"
        ```
    """
    if not text:
        return system if system is not None else SystemMessage("")
    if system is None:
        return SystemMessage(text)
    content = system.content
    if isinstance(content, str):
        merged: Any = f"{content}\n\n{text}" if content else text
    else:
        merged = [*content, {"type": "text", "text": text}]
    return system.model_copy(update={"content": merged})


def lift_blocks(
    system: SystemMessage | None, messages: Sequence[BaseMessage]
) -> tuple[SystemMessage | None, list[BaseMessage]]:
    """Move the managed blocks (summary, then memory) found in ``messages`` into ``system``.

    Returns:
        The merged system message and the messages without the blocks.

    Example:
        ```python
        from langchain_core.messages import HumanMessage, SystemMessage

        from langgraph_recall.middleware._core import SUMMARY_BLOCK_ID, lift_blocks

        block = SystemMessage("Summary: …", id=SUMMARY_BLOCK_ID)
        system, rest = lift_blocks(SystemMessage("Be brief."), [block, HumanMessage("hi")])
        assert system.text == "Be brief.\\n\\nSummary: …" and len(rest) == 1
        ```
    """
    for block_id in (SUMMARY_BLOCK_ID, MEMORY_BLOCK_ID):
        for message in messages:
            if message.id == block_id and isinstance(message, SystemMessage):
                system = append_system_text(system, message.text)
    rest = [m for m in messages if not is_block(m)]
    return system, rest


def summary_rewrite(
    messages: Sequence[BaseMessage], update: Sequence[BaseMessage]
) -> list[BaseMessage]:
    """Turn a ``SummarizeNode`` messages update (removals + summary block) into a whole new
    message list: ``[REMOVE_ALL, summary block, *kept messages]``, so the summary stands at
    the front of the state and the kept messages keep their order.

    Example:
        ```python
        from langchain_core.messages import HumanMessage, RemoveMessage, SystemMessage
        from langgraph.graph.message import REMOVE_ALL_MESSAGES

        from langgraph_recall.middleware._core import SUMMARY_BLOCK_ID, summary_rewrite

        old, new = HumanMessage("old", id="1"), HumanMessage("new", id="2")
        block = SystemMessage("Summary", id=SUMMARY_BLOCK_ID)
        out = summary_rewrite([old, new], [RemoveMessage(id="1"), block])
        assert [m.id for m in out] == [REMOVE_ALL_MESSAGES, SUMMARY_BLOCK_ID, "2"]
        ```
    """
    removed = {m.id for m in update if isinstance(m, RemoveMessage)}
    blocks = [m for m in update if m.id == SUMMARY_BLOCK_ID]
    kept = [m for m in messages if m.id not in removed and not _is_summary(m)]
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *blocks[-1:], *kept]
