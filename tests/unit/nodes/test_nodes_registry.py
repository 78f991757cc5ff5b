"""The thread registry: every node that uses the store records ``(user, thread)`` —
whichever way ``user_id`` was passed — once, with the user's namespaces, and a damaged
link can never point the erasure at another user's data."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.base import Item
from langgraph.store.memory import InMemoryStore

from langgraph_recall._memory.registry import (
    read_record,
    registry_namespace,
    thread_key,
)
from langgraph_recall.nodes import (
    ExtractNode,
    MemoryState,
    ReflectNode,
    RetrieveNode,
    SummarizeNode,
    ThreadLink,
    create_memory_tools,
    register_thread,
)
from langgraph_recall.offline import tool_call_message
from tests._hypothesis import thorough


@dataclass
class Ctx:
    user_id: str


def links(store: InMemoryStore, user: str) -> dict[str, dict[str, Any]]:
    return {item.key: item.value for item in store.search(registry_namespace(user), limit=100)}


def run_node(node: Any, store: InMemoryStore, text: str, context: Any, thread: str) -> None:
    builder = StateGraph(MemoryState, context_schema=Ctx)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    graph = builder.compile(store=store, checkpointer=InMemorySaver())
    graph.invoke(
        {"messages": [("user", text)]}, {"configurable": {"thread_id": thread}}, context=context
    )


@pytest.mark.parametrize(
    ("name", "node", "text"),
    [
        ("retrieve", RetrieveNode(), "Where do I live?"),
        ("extract-written", ExtractNode(), "I live in Oslo."),
        ("extract-skipped", ExtractNode(), "hi"),
        ("reflect", ReflectNode(threshold=1000), "hi"),
        ("summarize", SummarizeNode(max_tokens=4000, extract=ExtractNode()), "hi"),
    ],
)
@pytest.mark.parametrize("context", [{"user_id": "ann@example.com"}, Ctx("ann@example.com")])
def test_every_store_node_records_its_thread_for_context_identity(
    name: str, node: Any, text: str, context: Any
) -> None:
    store = InMemoryStore()
    run_node(node, store, text, context, thread=f"thread-{name}")
    recorded = links(store, "ann@example.com")
    assert list(recorded) == [f"thread-{name}"]
    value = recorded[f"thread-{name}"]
    assert value["user"] == "ann@example%2Ecom" and value["thread"] == f"thread-{name}"
    record = read_record(
        store.get(registry_namespace("ann@example.com"), f"thread-{name}"), "ann@example.com"
    )  # type: ignore[arg-type]
    assert record is not None and record.thread_id == f"thread-{name}"


def test_memory_tools_record_their_thread() -> None:
    store = InMemoryStore()
    remember, recall, forget = create_memory_tools()
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode([remember, recall, forget]))
    builder.add_edge(START, "tools")
    graph = builder.compile(store=store)
    calls = [
        tool_call_message("remember", {"content": "User lives in Oslo.", "slot": "location"}),
        tool_call_message("recall", {"query": "where " * 5000}),  # a huge query is cut
        tool_call_message("forget", {"memory_id": "nope"}),
    ]
    for index, call in enumerate(calls):
        graph.invoke(
            {"messages": [HumanMessage("x"), call]},
            {"configurable": {"thread_id": f"tool-{index}", "user_id": "u.1"}},
        )
    assert sorted(links(store, "u.1")) == ["tool-0", "tool-1", "tool-2"]
    assert [i.value["content"] for i in store.search(("memories", "user_id:u%2E1"))] == [
        "User lives in Oslo."
    ]


def test_link_is_written_once_and_grows_only_by_new_namespaces() -> None:
    store = InMemoryStore()
    config = {"configurable": {"user_id": "u1", "thread_id": "t1"}}
    link = ThreadLink.from_identity(
        context=None, config=config, templates=[("memories", "{user_id}")]
    )
    assert register_thread(store, link) is True
    first = store.get(registry_namespace("u1"), "t1")
    assert first is not None
    for _ in range(3):
        assert register_thread(store, link) is False
    again = store.get(registry_namespace("u1"), "t1")
    assert again is not None and again.updated_at == first.updated_at
    wider = ThreadLink.from_identity(
        context={"org": "acme"},
        config=config,
        templates=[("memories", "{user_id}"), ("teams", "{org}"), ("org", "{org}", "{user_id}")],
    )
    assert register_thread(store, wider) is True
    value = store.get(registry_namespace("u1"), "t1").value  # type: ignore[union-attr]
    assert [entry["namespace"] for entry in value["namespaces"]] == [
        ["memories", "user_id:u1"],
        ["org", "org:acme", "user_id:u1"],  # ("teams", "{org}") is shared, not the user's
    ]
    assert value["first_seen"] == first.value["first_seen"]


def test_link_uses_the_checkpointer_thread_id_and_needs_both_ids() -> None:
    link = ThreadLink.from_identity(
        context={"user_id": "u", "thread_id": "ctx-thread"},
        config={"configurable": {"thread_id": "saver-thread"}},
    )
    assert link is not None and link.thread_id == "saver-thread"
    assert ThreadLink.from_identity(context={"user_id": "u"}, config={}) is None
    assert (
        ThreadLink.from_identity(context=None, config={"configurable": {"thread_id": "t"}}) is None
    )
    assert thread_key("a.b") == "a%2Eb" and len(thread_key("é" * 2000)) == len("%sha256-") + 64


def _item(value: dict[str, Any]) -> Item:
    now = datetime.now(timezone.utc)
    return Item(
        value=value, key="t", namespace=registry_namespace("u1"), created_at=now, updated_at=now
    )


def test_a_damaged_link_never_points_at_another_users_data() -> None:
    value = {
        "user": "u1",
        "thread": "t",
        "namespaces": [
            {"template": ["memories", "{user_id}"], "namespace": ["memories", "user_id:u2"]},
            {"template": ["memories"], "namespace": ["memories"]},
            {"template": ["memories", "{user_id}"], "namespace": ["memories", "user_id:u1"]},
            {"template": ["memories", "{user_id}"], "namespace": ["memories", "u1"]},  # 0.1
            {"template": "bad", "namespace": None},
        ],
    }
    record = read_record(_item(value), "u1")
    assert record is not None
    assert record.namespaces == ((("memories", "{user_id}"), ("memories", "user_id:u1")),)
    legacy = read_record(_item(value), "u1", legacy=True)  # a link 0.1 wrote
    assert legacy is not None
    assert legacy.namespaces == ((("memories", "{user_id}"), ("memories", "u1")),)
    assert read_record(_item({**value, "user": "u2"}), "u1") is None
    assert read_record(_item({**value, "thread": "bad%"}), "u1") is None


def test_registry_reads_share_the_nodes_round_trip() -> None:
    """Retrieve adds one GetOp to its search batch (the query search and the two standing
    searches, instructions and preferences); the write happens only the first time."""

    class CountingStore(InMemoryStore):
        def __init__(self) -> None:
            super().__init__()
            self.batches: list[list[str]] = []

        def batch(self, ops: Any) -> Any:
            ops = list(ops)
            self.batches.append([type(op).__name__ for op in ops])
            return super().batch(ops)

    store = CountingStore()
    node = RetrieveNode(store=store)
    config = {"configurable": {"user_id": "u", "thread_id": "t"}}
    for _ in range(3):
        node.invoke({"messages": [AIMessage("hello"), HumanMessage("Where do I live?")]}, config)
    searches = ["SearchOp", "SearchOp", "SearchOp", "GetOp"]
    assert store.batches == [searches, ["PutOp"], searches, searches]


_LONG = st.text(min_size=257, max_size=400)
_CRAFTED = st.builds(
    lambda text, prefix: prefix + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
    st.text(min_size=257, max_size=300),
    st.sampled_from(["sha256-", "%sha256-", "%25sha256-", "%"]),
)


@settings(max_examples=thorough(300), deadline=None)
@given(st.lists(st.one_of(st.text(max_size=40), _LONG, _CRAFTED), min_size=2, max_size=6))
def test_registry_keys_of_distinct_threads_never_collide(thread_ids: list[str]) -> None:
    """Short ids keep their label as key, ids longer than a label get a digest key, and a
    crafted short id (the digest key of a long one, with or without our marker) never
    takes another thread's key: the two kinds cannot meet by construction."""
    distinct = set(thread_ids)
    assert len({thread_key(thread) for thread in distinct}) == len(distinct)


def test_a_thread_named_like_a_digest_key_leaves_the_long_thread_findable() -> None:
    """The long thread and the short one that spells its (old-style) digest key both keep
    their link; the erasure finds and deletes both threads (``user_id`` only in context,
    so the registry is the only way to them)."""
    from langgraph_recall import forget_user

    long_id = "conversation-" + "x" * 400
    digest = hashlib.sha256(long_id.encode()).hexdigest()
    crafted = [f"sha256-{digest}", f"%sha256-{digest}"]
    store, saver = InMemoryStore(), InMemorySaver()
    for thread in [long_id, *crafted]:
        builder = StateGraph(MemoryState, context_schema=Ctx)
        builder.add_node("n", RetrieveNode())
        builder.add_edge(START, "n")
        graph = builder.compile(store=store, checkpointer=saver)
        graph.invoke(
            {"messages": [("user", "hello")]},
            {"configurable": {"thread_id": thread}},
            context=Ctx("victim"),
        )
    recorded = {value["thread"] for value in links(store, "victim").values()}
    assert len(recorded) == 3
    report = forget_user(store, saver, "victim")
    assert report.complete, report.residue
    assert set(report.threads) == {long_id, *crafted}
    for thread in [long_id, *crafted]:
        assert saver.get_tuple({"configurable": {"thread_id": thread}}) is None
