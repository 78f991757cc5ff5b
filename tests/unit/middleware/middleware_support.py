"""Shared helpers of the middleware tests: a scripted tool-calling "model" and checks.

``brain`` is the script of a :class:`~langgraph_recall.offline.ScriptedChatModel`: it asks
for the weather tool when the user mentions the weather, answers a tool result, and answers
"What's my name?" only from what its **input** says (the request's system message), so a
right answer proves the memory block reached the model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from langgraph_recall.extraction import RuleBasedExtractor
from langgraph_recall.middleware import MemoryMiddleware, SummaryMiddleware
from langgraph_recall.offline import ScriptedChatModel, tool_call_message

NAME = re.compile(r"name is ([A-Z]\w+ [A-Z]\w+)")


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}, 21°C."


def brain(messages: list[BaseMessage]) -> AIMessage | str:
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return f"It is {last.text}"
    if "weather" in last.text.lower():
        city = "Lisbon" if "lisbon" in last.text.lower() else "Kyoto"
        return tool_call_message("get_weather", {"city": city})
    system = "\n".join(m.text for m in messages if isinstance(m, SystemMessage))
    found = NAME.search(system)
    if "my name" in last.text.lower():
        return f"Your name is {found.group(1)}." if found else "I don't know your name."
    return "Noted."


def scripted_model() -> ScriptedChatModel:
    return ScriptedChatModel(default=brain)


def memory_agent(
    model: ScriptedChatModel,
    *,
    store: Any,
    checkpointer: Any,
    summary: SummaryMiddleware | None = None,
    **memory: Any,
) -> tuple[Any, MemoryMiddleware]:
    """``create_agent`` with the weather tool, [summary,] MemoryMiddleware and a system prompt.

    The scripted model answers but does not follow extraction prompts: unless the test gives
    a ``model`` / ``extractor`` / ``extract`` node, memories are extracted by the rules."""
    if not {"model", "extractor", "extract"} & memory.keys():
        memory["extractor"] = RuleBasedExtractor()
    middleware = MemoryMiddleware(**memory)
    stack: list[Any] = [summary, middleware] if summary is not None else [middleware]
    agent = create_agent(
        model,
        tools=[get_weather],
        system_prompt="You are a helpful assistant.",
        middleware=stack,
        store=store,
        checkpointer=checkpointer,
    )
    return agent, middleware


def tool_pairs_intact(messages: Sequence[BaseMessage]) -> bool:
    """Every AI tool call is answered right after it, and every ToolMessage answers one."""
    open_calls: set[str] = set()
    for message in messages:
        if isinstance(message, ToolMessage):
            if message.tool_call_id not in open_calls:
                return False
            open_calls.discard(message.tool_call_id)
            continue
        if open_calls:
            return False  # a call left unanswered before the next message
        if isinstance(message, AIMessage) and message.tool_calls:
            open_calls = {str(call["id"]) for call in message.tool_calls}
    return not open_calls


def mentions_memory_block(messages: Sequence[BaseMessage]) -> bool:
    return any("<memory>" in m.text for m in messages)
