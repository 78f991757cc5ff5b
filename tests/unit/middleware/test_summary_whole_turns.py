"""``SummaryMiddleware`` folds whole turns: after any fold the conversation the model is
sent opens with a user message, and no tool call is separated from its results — for
random agent conversations and budgets, and for real ``create_agent`` runs whose turns
(question, tool call, tool result, answer) together exceed the budget."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.message import add_messages

from langgraph_recall.middleware import SummaryMiddleware
from langgraph_recall.nodes import SUMMARY_BLOCK_ID
from tests._hypothesis import thorough
from tests.unit.middleware.middleware_support import get_weather, scripted_model
from tests.unit.nodes.nodes_support import pairs_intact
from tests.unit.nodes.test_nodes_summary import agent_conversations


@settings(max_examples=thorough(150), deadline=None)
@given(agent_conversations(), st.integers(60, 3000), st.integers(0, 3))
def test_the_kept_conversation_opens_with_the_user(
    msgs: list[BaseMessage], max_tokens: int, keep_turns: int
) -> None:
    middleware = SummaryMiddleware(max_tokens=max_tokens, keep_turns=keep_turns)
    update = middleware.before_model({"messages": msgs}, None)  # type: ignore[arg-type]
    if update is None:
        return
    state = add_messages([], update["messages"])  # type: ignore[arg-type]
    convo = [m for m in state if m.id != SUMMARY_BLOCK_ID]
    assert convo and isinstance(convo[0], HumanMessage)
    assert pairs_intact(convo)
    last_question = max(i for i, m in enumerate(msgs) if isinstance(m, HumanMessage))
    assert [m.id for m in convo[-(len(msgs) - last_question) :]] == [
        m.id for m in msgs[last_question:]
    ]


def _first_non_system(messages: list[BaseMessage]) -> BaseMessage:
    return next(m for m in messages if not isinstance(m, SystemMessage))


def test_agent_turns_over_the_budget_are_folded_whole() -> None:
    model = scripted_model()
    agent: Any = create_agent(
        model,
        tools=[get_weather],
        system_prompt="You are a helpful assistant.",
        middleware=[SummaryMiddleware(max_tokens=400, keep_turns=2)],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t1"}}
    cities = ["Lisbon", "Kyoto", "Lisbon", "Kyoto", "Lisbon", "Kyoto"]
    for i, city in enumerate(cities):
        question = f"What's the weather in {city}? Tell me in detail, day {i}. " + "please " * 40
        agent.invoke({"messages": [("user", question)]}, config)
    state = agent.get_state(config).values["messages"]
    assert state[0].id == SUMMARY_BLOCK_ID  # something was folded
    for call in model.calls:  # every request opened with the user, pairs intact
        assert isinstance(_first_non_system(call), HumanMessage)
        assert pairs_intact(call)
