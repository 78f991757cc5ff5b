"""The memory tools' door: every argument a model or a caller passes, of any type, is either
acted on or answered with a refusal the model can act on ("Not stored: …", "Not searched:
…", "Not forgotten: …"); nothing raises, and a refused call leaves the store as it was — on
``tool.func``, ``invoke`` and ``ainvoke`` alike, and through a graph's ``ToolNode``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.memory import InMemoryStore

from langgraph_recall.extraction.types import MEMORY_KINDS
from langgraph_recall.nodes.tools import MAX_RECALL_LIMIT, _refusal, create_memory_tools
from langgraph_recall.offline import tool_call_message
from tests._hypothesis import thorough
from tests.unit.nodes.tools_door_support import (
    ANYTHING,
    NAMESPACE,
    REFUSALS,
    USER_NS,
    call,
    snapshot,
)

SEEDED_KEY = "seeded"


def seeded_store() -> InMemoryStore:
    store = InMemoryStore()
    store.put(USER_NS, SEEDED_KEY, {"content": "User likes tea.", "kind": "semantic"})
    return store


def remember_arguments() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"content": st.one_of(st.sampled_from(["User likes green tea."]), ANYTHING)},
        optional={
            "kind": st.one_of(st.sampled_from([*MEMORY_KINDS, "../../x"]), ANYTHING),
            "importance": st.one_of(st.integers(0, 11), ANYTHING),
            "slot": st.one_of(st.sampled_from(["drink", " ", "x" * 65]), ANYTHING),
        },
    )


def recall_arguments() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"query": st.one_of(st.sampled_from(["tea"]), ANYTHING)},
        optional={"limit": st.one_of(st.integers(-2, MAX_RECALL_LIMIT + 2), ANYTHING)},
    )


def forget_arguments() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"memory_id": st.one_of(st.sampled_from([SEEDED_KEY, "x" * 1025]), ANYTHING)}
    )


ARGUMENTS = {
    "remember": remember_arguments(),
    "recall": recall_arguments(),
    "forget": forget_arguments(),
}


@settings(max_examples=thorough(300), deadline=None)
@given(st.data(), st.sampled_from(["remember", "recall", "forget"]))
def test_any_arguments_get_a_reply_and_a_refusal_changes_nothing(
    data: st.DataObject, name: str
) -> None:
    store = seeded_store()
    tool = {t.name: t for t in create_memory_tools(namespace=NAMESPACE)}[name]
    arguments = data.draw(ARGUMENTS[name], label="arguments")
    how = data.draw(st.sampled_from(["func", "invoke", "ainvoke"]), label="how")
    before = snapshot(store)
    reply = call(tool, arguments, store, how)
    assert isinstance(reply, str) and reply
    if reply.startswith(REFUSALS):
        assert snapshot(store) == before
        assert len(reply) < 300
    door = _refusal(name, arguments)
    if door is not None:  # the schema converts nothing the door would refuse ("7", True)
        assert reply.startswith(REFUSALS), (arguments, how, reply)
    if door is not None and how == "func":
        problems = {_refusal(name, {argument: value}) for argument, value in arguments.items()}
        assert reply in problems  # the first bad argument, in the tool's order


@pytest.mark.parametrize(
    ("name", "arguments", "reply"),
    [
        ("remember", {"content": 123}, "Not stored: content must be text, got int."),
        ("remember", {"content": "  \n"}, "Not stored: content is empty; write what you mean."),
        ("remember", {"content": "User likes tea.", "kind": "../../x"}, "Not stored: kind"),
        ("remember", {"content": "User likes tea.", "kind": None}, "Not stored: kind"),
        ("remember", {"content": "User likes tea.", "importance": "7"}, "Not stored: importance"),
        ("remember", {"content": "a\x00b"}, "Not stored: content contains a NUL byte"),
        ("remember", {"content": "x" * 501}, "Not stored: content is 501 characters long"),
        ("remember", {"content": "User likes tea.", "slot": "s" * 65}, "Not stored: slot is 65"),
        ("recall", {"query": None}, "Not searched: query must be text, got None."),
        ("recall", {"query": "tea", "limit": -1}, "Not searched: limit must be a whole number"),
        ("recall", {"query": "tea", "limit": 0}, "Not searched: limit must be a whole number"),
        ("recall", {"query": "tea", "limit": 101}, "Not searched: limit must be a whole number"),
        ("recall", {"query": "tea", "limit": float("nan")}, "Not searched: limit must be"),
        ("forget", {"memory_id": 5}, "Not forgotten: memory_id must be the id"),
        ("forget", {"memory_id": ""}, "Not forgotten: memory_id: key is empty"),
    ],
)
def test_a_bad_argument_is_refused_in_so_many_words(
    name: str, arguments: dict[str, Any], reply: str
) -> None:
    store = seeded_store()
    tool = {t.name: t for t in create_memory_tools(namespace=NAMESPACE)}[name]
    before = snapshot(store)
    assert call(tool, arguments, store, "func").startswith(reply)
    assert snapshot(store) == before


@pytest.mark.parametrize(
    ("name", "arguments", "reply"),
    [
        ("remember", {}, "Not stored: content must be text, got nothing."),
        ("remember", {"content": ["x"]}, "Not stored: content must be text, got list."),
        ("recall", {"query": 5}, "Not searched: query must be text, got int."),
        ("recall", {"query": "tea", "limit": "many"}, "Not searched: limit must be a whole"),
        ("forget", {"memory_id": None}, "Not forgotten: memory_id must be the id"),
        ("remember", {"content": "x", "importance": True}, "Not stored: importance must be a"),
        ("remember", {"content": "x", "importance": "7"}, "Not stored: importance must be a"),
        ("remember", {"content": b"User likes tea."}, "Not stored: content must be text, got"),
        ("recall", {"query": "tea", "limit": True}, "Not searched: limit must be a whole"),
        ("recall", {"query": "tea", "limit": "5"}, "Not searched: limit must be a whole"),
    ],
)
def test_what_the_schema_rejects_gets_the_same_refusal_through_a_tool_node(
    name: str, arguments: dict[str, Any], reply: str
) -> None:
    store = seeded_store()
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(create_memory_tools(namespace=NAMESPACE)))
    builder.add_edge(START, "tools")
    graph = builder.compile(store=store)
    before = snapshot(store)
    out = graph.invoke(
        {"messages": [tool_call_message(name, arguments)]},
        {"configurable": {"user_id": "u1", "thread_id": "t1"}},
    )
    assert str(out["messages"][-1].content).startswith(reply)
    assert snapshot(store) == before


def test_good_arguments_are_acted_on() -> None:
    store = seeded_store()
    remember, recall, forget = create_memory_tools(namespace=NAMESPACE)
    assert call(remember, {"content": "User drinks coffee.", "kind": "preference"}, store, "func")
    assert "User likes tea." in call(recall, {"query": "tea", "limit": 100}, store, "invoke")
    assert call(forget, {"memory_id": SEEDED_KEY}, store, "ainvoke") == f"Forgot {SEEDED_KEY}."
    kinds = {item.value.get("kind") for item in store.search(USER_NS)}
    assert "preference" in kinds
