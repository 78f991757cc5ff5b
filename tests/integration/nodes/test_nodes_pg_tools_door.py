"""The memory tools' door on the real Postgres store: arbitrary arguments (wrong types, NUL
bytes, huge numbers, a 1,025-byte id) get a reply and never a raw store error, and a refused
call leaves every table as it was."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langgraph_recall.nodes.tools import create_memory_tools
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests._hypothesis import thorough
from tests.unit.nodes.test_nodes_tools_door import ARGUMENTS, SEEDED_KEY
from tests.unit.nodes.tools_door_support import NAMESPACE, REFUSALS, USER_NS, call, snapshot


@settings(
    max_examples=thorough(100),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.data(), st.sampled_from(["remember", "recall", "forget"]))
def test_any_arguments_on_postgres_get_a_reply_and_a_refusal_changes_nothing(
    memory_store: PostgresMemoryStore, data: st.DataObject, name: str
) -> None:
    memory_store.put(USER_NS, SEEDED_KEY, {"content": "User likes tea.", "kind": "semantic"})
    tool = {t.name: t for t in create_memory_tools(namespace=NAMESPACE)}[name]
    arguments: dict[str, Any] = data.draw(ARGUMENTS[name], label="arguments")
    how = data.draw(st.sampled_from(["func", "invoke"]), label="how")
    before = snapshot(memory_store)
    reply = call(tool, arguments, memory_store, how)
    assert isinstance(reply, str) and reply
    if reply.startswith(REFUSALS):
        assert snapshot(memory_store) == before
