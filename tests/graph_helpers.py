"""The test suite's one chat graph: ``START → a → b → END`` on ``MessagesState``.

Each node appends one AI message whose text ``reply(node, state)`` chooses:
:func:`echo_turn` (the default, ``"a:<last human turn>"``) or :func:`count_seen`
(``"a saw <messages so far>"``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph

__all__ = ["Reply", "chat_graph", "count_seen", "echo_turn"]

Reply = Callable[[str, MessagesState], str]
"""What node ``name`` answers, given the state it sees."""


def echo_turn(node: str, state: MessagesState) -> str:
    """``"<node>:<last human turn>"``."""
    human = next(m.content for m in reversed(state["messages"]) if m.type == "human")
    return f"{node}:{human}"


def count_seen(node: str, state: MessagesState) -> str:
    """``"<node> saw <number of messages in the state>"``."""
    return f"{node} saw {len(state['messages'])}"


def chat_graph(
    checkpointer: Any, *, reply: Reply = echo_turn
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """``START → a → b → END``, compiled with ``checkpointer``; each node answers ``reply``."""

    def answer(node: str) -> Callable[[MessagesState], dict[str, Any]]:
        def run(state: MessagesState) -> dict[str, Any]:
            return {"messages": [AIMessage(content=reply(node, state))]}

        return run

    builder = StateGraph(MessagesState)
    builder.add_node("a", answer("a"))
    builder.add_node("b", answer("b"))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", END)
    return builder.compile(checkpointer=checkpointer)
