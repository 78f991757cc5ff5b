"""A user's scope is exactly the user's namespaces.

With ``("memories", "{user_id}")`` and ``("memories", "{org}", "{user_id}")`` in one store,
user ``42``'s namespace was a prefix of org ``42``'s members' (``("memories", "42")`` and
``("memories", "42", "7")``): ``forget_user(42)`` erased their memories and retrieval put
them into user 42's prompt. Layouts are now prefix-free (``("memories", "user_id:42")``,
``("memories", "org:42", "user_id:7")``; the property over random layouts x ids is in
``tests/unit/nodes/test_nodes_identity.py``). Here the finding end to end on our store (both
vector paths, real graphs, the Postgres checkpointer), and data written by 0.1: the user's
0.1 namespaces are erased exactly, never what lies under them.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
from langgraph.graph import START, StateGraph

from langgraph_recall import forget_user
from langgraph_recall.checkpoint.postgres import PostgresSaver
from langgraph_recall.erasure import find_user_data
from langgraph_recall.nodes import ExtractNode, MemoryState, RetrieveNode, user_namespace
from langgraph_recall.store.postgres import PostgresMemoryStore

pytestmark = [pytest.mark.postgres]

FLAT, NESTED = ("memories", "{user_id}"), ("memories", "{org}", "{user_id}")


@pytest.fixture
def saver(any_dsn: str) -> Iterator[PostgresSaver]:
    with PostgresSaver.from_conn_string(any_dsn) as opened:
        opened.setup()
        yield opened


def tell(store: Any, saver: Any, template: tuple[str, ...], text: str, **who: str) -> None:
    builder = StateGraph(MemoryState)
    builder.add_node(ExtractNode(store=store, namespace=template))
    builder.add_edge(START, "extract_memories")
    graph = builder.compile(checkpointer=saver)
    thread = f"t-{uuid.uuid4().hex[:8]}"
    graph.invoke({"messages": [("user", text)]}, {"configurable": {"thread_id": thread, **who}})


def recalled(store: Any, template: tuple[str, ...], **who: str) -> list[str]:
    found = RetrieveNode(store=store, namespace=template).invoke(
        {"messages": [("user", "Where do I live?")]}, config={"configurable": who}
    )
    return sorted(str(m["content"]) for m in found["memories"])


def test_a_users_scope_is_exactly_the_users_namespaces(
    any_store: PostgresMemoryStore, saver: PostgresSaver
) -> None:
    tell(any_store, saver, FLAT, "I live in Oslo.", user_id="42")
    tell(any_store, saver, NESTED, "I live in Rome.", user_id="7", org="42")
    tell(any_store, saver, NESTED, "I live in Lima.", user_id="8", org="42")
    assert recalled(any_store, FLAT, user_id="42") == ["User lives in Oslo."]
    assert recalled(any_store, NESTED, user_id="7", org="42") == ["User lives in Rome."]

    report = forget_user(any_store, saver, "42")
    assert report.complete, report.residue
    assert recalled(any_store, FLAT, user_id="42") == []
    assert recalled(any_store, NESTED, user_id="7", org="42") == ["User lives in Rome."]
    assert recalled(any_store, NESTED, user_id="8", org="42") == ["User lives in Lima."]
    for member in ("7", "8"):
        data = find_user_data(any_store, saver, member)
        assert data.memories == 1 and len(data.threads) == 1, data


def test_data_written_by_0_1_is_erased_exactly_and_never_what_lies_under_it(
    any_store: PostgresMemoryStore,
) -> None:
    """0.1 wrote ``("memories", "42")`` for user 42 and ``("memories", "42", "7")`` for member
    7 of org 42, and the thread links in ``("memory_meta", "42", "threads")``."""
    now = datetime.now(timezone.utc).isoformat()
    any_store.put(("memories", "42"), "old", {"content": "User 42 lived in Oslo in 0.1."})
    any_store.put(("memories", "42", "7"), "old", {"content": "Member 7 of org 42, in 0.1."})
    any_store.put(
        ("memory_meta", "42", "threads"),
        "t-old",
        {"user": "42", "thread": "t-old", "namespaces": [], "first_seen": now, "by": "0.1"},
    )
    any_store.put(user_namespace("42"), "new", {"content": "User 42 lives in Oslo."})

    data = find_user_data(any_store, None, "42")
    assert set(data.legacy) == {
        ("memories", "42"),
        ("memory_meta", "42"),
        ("memory_meta", "42", "threads"),
    }
    assert data.memories == 2  # the 0.1 memory and the new one; not member 7's
    assert data.items[("memories", "42")] == 1

    report = forget_user(any_store, None, "42")
    assert report.complete, report.residue
    assert report.items_erased == 3  # two memories and the 0.1 thread link
    left = any_store.search(("memories",), limit=10)
    assert [(tuple(item.namespace), item.key) for item in left] == [
        (("memories", "42", "7"), "old")
    ]
    assert any_store.search(("memory_meta",), limit=10) == []
