"""What the memory tools' door tests share: arbitrary argument values (wrong types included),
a runtime for direct calls, every way to call a tool, and a snapshot of everything a store
holds (shared by the InMemoryStore unit tests and the Postgres integration test)."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import strategies as st
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolRuntime
from langgraph.store.base import BaseStore

from tests.reliability._hostile import HOSTILE_IDS

REFUSALS = ("Not stored:", "Not searched:", "Not forgotten:")
NAMESPACE = ("memories", "{user_id}")
USER_NS = ("memories", "user_id:u1")

ANYTHING = st.one_of(
    HOSTILE_IDS,  # any type; text with NUL, surrogates, over-long
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=" \t\n\x00\u3000", max_size=4),  # blank
)
"""Any value a model or a caller might pass as any argument."""


def runtime(store: BaseStore) -> ToolRuntime:
    """The runtime a graph's ``ToolNode`` injects, for calling a tool outside a graph."""
    return ToolRuntime(
        state={},
        context=None,
        config={"configurable": {"user_id": "u1", "thread_id": "t1"}},
        stream_writer=lambda _chunk: None,
        tool_call_id="call-1",
        store=store,
    )


def call(tool: BaseTool, arguments: dict[str, Any], store: BaseStore, how: str) -> Any:
    """Call ``tool`` the way ``how`` names: its function, ``invoke`` or ``ainvoke``."""
    if how == "func":
        assert tool.func is not None
        return tool.func(runtime=runtime(store), **arguments)
    payload = {**arguments, "runtime": runtime(store)}
    if how == "invoke":
        return tool.invoke(payload)
    return asyncio.run(tool.ainvoke(payload))


def snapshot(store: BaseStore) -> dict[tuple[tuple[str, ...], str], dict[str, Any]]:
    """Every item of every namespace of ``store`` (thread links included)."""
    return {
        (tuple(item.namespace), item.key): item.value
        for namespace in store.list_namespaces(limit=1000)
        for item in store.search(namespace, limit=1000)
    }
