"""Standing instructions and preferences reach the model on every later turn (real Postgres)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from langgraph_recall.extraction.rules import RuleBasedExtractor
from langgraph_recall.graphs import build_graph
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests._hypothesis import thorough
from tests.fakes import TextOnlyChatModel

pytestmark = pytest.mark.postgres

FILLER = [
    "I live in Lisbon.",
    "I work at Initech.",
    "I use Python and Postgres.",
    "My favorite color is green.",
    "I'm a backend developer.",
]


def _system(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage))


def _graph(store: PostgresMemoryStore) -> tuple[object, TextOnlyChatModel]:
    model = TextOnlyChatModel(reply=lambda _messages: "Sure.")
    graph = build_graph(model, store=store, extractor=RuleBasedExtractor())
    return graph, model


def _say(graph: object, thread: str, text: str) -> None:
    config = {"configurable": {"user_id": "ann", "thread_id": thread}}
    graph.invoke({"messages": [HumanMessage(text)]}, config=config)  # type: ignore[attr-defined]


def _system_after(store: PostgresMemoryStore, said: list[str], asked: str) -> str:
    """The system message of a new session's request, after ``said`` in a first session and
    unrelated facts in others."""
    graph, model = _graph(store)
    for text in said:
        _say(graph, "s1", text)
    for n, fact in enumerate(FILLER):
        _say(graph, f"f{n}", fact)
    _say(graph, "s2", asked)
    return _system(model.calls[-1])


def test_an_instruction_from_session_one_is_in_the_system_message_of_session_two(
    memory_store: PostgresMemoryStore,
) -> None:
    system = _system_after(
        memory_store,
        [
            "Always format all code snippets with syntax highlighting.",
            "I prefer simple, minimal dependencies, how do I start?",
        ],
        "Could you show me how to implement a login feature?",
    )
    assert "syntax highlighting" in system
    assert "simple, minimal dependencies" in system
    kinds = {
        item.value["kind"]
        for item in memory_store.search(("memories", "user_id:ann"), limit=50)
        if "highlighting" in item.value["content"] or "minimal" in item.value["content"]
    }
    assert kinds == {"procedural", "preference"}


def test_a_replaced_instruction_is_not_shown_and_the_newest_comes_first(
    memory_store: PostgresMemoryStore,
) -> None:
    graph, model = _graph(memory_store)
    _say(graph, "s1", "Always answer in English.")
    _say(graph, "s1", "From now on, reply with short bullet points.")
    _say(graph, "s2", "What is the capital of Peru?")
    system = _system(model.calls[-1])
    assert "Always answer in English" in system and "short bullet points" in system
    assert system.index("short bullet points") < system.index("Always answer in English")


@settings(
    max_examples=thorough(8),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    count=st.integers(min_value=1, max_value=12),
    query=st.sampled_from(["hello", "how do I deploy?", "plan a trip", "什么是缓存?"]),
)
def test_the_standing_set_is_bounded_and_present_whatever_the_query(
    memory_store: PostgresMemoryStore, count: int, query: str
) -> None:
    from langgraph_recall.nodes import RetrieveNode

    namespace = ("memories", f"user_id:p{count}")
    now = datetime.now(timezone.utc).isoformat()
    for i in range(count):
        memory_store.put(
            namespace,
            f"rule-{i}",
            {
                "content": f"User's instruction: never use tool number {i}.",
                "kind": "procedural",
                "importance": 5 + i % 3,
                "valid_from": now,
            },
        )
    node = RetrieveNode(store=memory_store, always=5, always_budget=200)
    out = node.invoke(
        {"messages": [("user", query)]}, config={"configurable": {"user_id": f"p{count}"}}
    )
    shown = min(count, 5)  # the standing set leads the context, bounded by ``always``
    standing = out["memories"][:shown]
    assert all(m["kind"] == "procedural" for m in standing)
    keys = [m["key"] for m in out["memories"]]
    assert len(keys) == len(set(keys))  # a standing memory is not shown twice
    importances = [m["importance"] for m in standing]
    assert importances == sorted(importances, reverse=True)


def test_a_preference_keeps_its_reason_and_its_name_into_a_later_session(
    memory_store: PostgresMemoryStore,
) -> None:
    """The reason before "so I prefer" and the name "it" stands for reach the model with the
    preference, on a later request that shares no words with either."""
    system = _system_after(
        memory_store,
        [
            "I'm trying to keep my weather app under 2.5MB, so I prefer dependency-free "
            "solutions, can you help me with caching?",
            "I'm building the site with Bootstrap 5.3.0 and I prefer it over Foundation.",
            "I'm trying to keep my bundle size under 100KB by using vanilla JS.",
        ],
        "Could you show me how to plan a sprint?",
    )
    assert "dependency-free solutions to keep their weather app under 2.5MB" in system
    assert "Bootstrap 5.3.0 over Foundation" in system
    assert "keep their bundle size under 100KB" in system
