"""Updates win: a later fact supersedes the one it replaces, which is kept as history
(real Postgres, offline extractor)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from langgraph_recall.extraction.rules import RuleBasedExtractor
from langgraph_recall.graphs import build_graph
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests.fakes import TextOnlyChatModel

pytestmark = pytest.mark.postgres

NS = ("memories", "user_id:ann")


def _graph(store: PostgresMemoryStore) -> tuple[object, TextOnlyChatModel]:
    model = TextOnlyChatModel(reply=lambda _messages: "OK.")
    return build_graph(model, store=store, extractor=RuleBasedExtractor()), model


def _say(graph: object, thread: str, text: str) -> None:
    config = {"configurable": {"user_id": "ann", "thread_id": thread}}
    graph.invoke({"messages": [HumanMessage(text)]}, config=config)  # type: ignore[attr-defined]


def _system(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage))


def _contents(
    store: PostgresMemoryStore, *, include_invalid: bool = False
) -> dict[str, dict[str, Any]]:
    items = store.search(NS, limit=100, include_invalid=include_invalid)
    return {item.value["content"]: item.value for item in items}


def test_a_move_supersedes_the_old_city_and_keeps_it_as_history(
    memory_store: PostgresMemoryStore,
) -> None:
    graph, model = _graph(memory_store)
    _say(graph, "s1", "I live in Hangzhou.")
    _say(graph, "s2", "I moved to Beijing.")
    current = _contents(memory_store)
    assert "User lives in Beijing." in current and "User lives in Hangzhou." not in current
    history = _contents(memory_store, include_invalid=True)
    old = history["User lives in Hangzhou."]
    assert old["invalid_at"] and old["superseded_by"]
    _say(graph, "s3", "Where do I live?")
    system = _system(model.calls[-1])
    assert "Beijing" in system and "Hangzhou" not in system


def test_a_framework_switch_supersedes_and_switching_back_keeps_the_history(
    memory_store: PostgresMemoryStore,
) -> None:
    graph, _ = _graph(memory_store)
    _say(graph, "s1", "I use Django for my web apps.")
    _say(graph, "s2", "I switched to FastAPI.")
    current = _contents(memory_store)
    assert "User uses FastAPI." in current and "User uses Django." not in current
    _say(graph, "s3", "I use Django again.")
    current = _contents(memory_store)
    assert "User uses Django." in current and "User uses FastAPI." not in current
    history = [
        item.value
        for item in memory_store.search(NS, limit=100, include_invalid=True)
        if item.value.get("slot", "").startswith("uses:")
    ]
    # Django (closed), FastAPI (closed), Django again (current): the back-and-forth is kept
    assert len(history) == 3
    assert sum(1 for v in history if not v.get("invalid_at")) == 1


def test_a_named_switch_leaves_other_tools_alone(memory_store: PostgresMemoryStore) -> None:
    graph, _ = _graph(memory_store)
    _say(graph, "s1", "I use Python and Django.")
    _say(graph, "s2", "I switched from Django to FastAPI.")
    current = _contents(memory_store)
    assert {"User uses Python.", "User uses FastAPI."} <= set(current)
    assert "User uses Django." not in current


def test_chinese_move_and_tool_switch(memory_store: PostgresMemoryStore) -> None:
    graph, model = _graph(memory_store)
    _say(graph, "s1", "我住在杭州。")
    _say(graph, "s1", "I use Django.")
    _say(graph, "s2", "我搬到了北京。")
    _say(graph, "s2", "现在改用FastAPI了。")
    current = _contents(memory_store)
    assert "User lives in 北京." in current and "User lives in 杭州." not in current
    assert "User uses FastAPI." in current
    assert not any("Django" in c for c in current)
    assert any("Django" in c for c in _contents(memory_store, include_invalid=True))
    _say(graph, "s3", "我住在哪里？")
    assert "北京" in _system(model.calls[-1]) and "杭州" not in _system(model.calls[-1])


def test_a_changed_preference_and_a_newer_instruction_win(
    memory_store: PostgresMemoryStore,
) -> None:
    graph, model = _graph(memory_store)
    _say(graph, "s1", "I prefer tabs for indentation.")
    _say(graph, "s1", "以后代码注释都用英文。")
    _say(graph, "s2", "I now prefer spaces.")
    _say(graph, "s2", "以后代码注释都用中文。")
    _say(graph, "s3", "Write me a function that adds two numbers.")
    system = _system(model.calls[-1])
    assert "spaces" in system and "tabs" not in system
    assert "代码注释都用中文" in system and "代码注释都用英文" not in system
    history = _contents(memory_store, include_invalid=True)
    assert history["User's instruction: 代码注释都用英文."]["invalid_at"]


def test_the_profile_is_compact_current_and_injected_whatever_the_query(
    memory_store: PostgresMemoryStore,
) -> None:
    from langgraph_recall.nodes import RetrieveNode

    graph, _ = _graph(memory_store)
    for text in [
        "My name is Ann Lee.",
        "I live in Hangzhou.",
        "I work at Initech.",
        "I'm vegetarian.",
        "我对花生过敏。",
        "Remember that the release is on Friday.",
    ]:
        _say(graph, "s1", text)
    _say(graph, "s2", "I moved to Beijing.")
    profile = [item.value["content"] for item in memory_store.user_profile(NS)]
    assert profile[:2] == ["User's name is Ann Lee.", "User lives in Beijing."]
    assert {"User works at Initech.", "User is vegetarian.", "User is allergic to 花生."} <= set(
        profile
    )
    assert not any("Hangzhou" in c or "release" in c for c in profile)
    node = RetrieveNode(store=memory_store, profile=8, profile_budget=120)
    config: Any = {"configurable": {"user_id": "ann"}}
    out = node.invoke({"messages": [("user", "Suggest a dinner recipe.")]}, config=config)
    shown = [m["content"] for m in out["memories"]]
    assert shown[0] == "User's name is Ann Lee." and "User is vegetarian." in shown
    assert "User is allergic to 花生." in shown
