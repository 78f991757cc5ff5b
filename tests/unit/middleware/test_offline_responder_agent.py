"""The offline stand-in model works where users put it first: an agent with tools."""

from __future__ import annotations

from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.store.memory import InMemoryStore

from langgraph_recall.middleware import MemoryMiddleware
from langgraph_recall.offline import TemplatedResponder


@tool(description="Looks nothing up.")
def lookup(query: str) -> str:
    return query


def test_templated_responder_runs_an_agent_with_tools_and_memory() -> None:
    store = InMemoryStore()
    agent = create_agent(
        TemplatedResponder(), tools=[lookup], middleware=[MemoryMiddleware()], store=store
    )
    config = {"configurable": {"user_id": "ann@example.com"}}
    agent.invoke({"messages": [("user", "My name is Ann Lee.")]}, config)
    reply = agent.invoke({"messages": [("user", "What's my name?")]}, config)
    assert reply["messages"][-1].content == "Your name is Ann Lee (from memory)."
