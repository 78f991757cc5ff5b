"""Helpers for the Postgres saver tests: a real 2-node graph, configs, row counts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, TypedDict

import psycopg
from langchain_core.messages import HumanMessage
from langgraph.channels import DeltaChannel
from langgraph.graph import END, START, StateGraph


def turn(text: str) -> dict[str, Any]:
    """Graph input for one human turn."""
    return {"messages": [HumanMessage(content=text)]}


def thread(thread_id: str, **extra: Any) -> dict[str, Any]:
    """Config for ``thread_id``."""
    return {"configurable": {"thread_id": thread_id, **extra}}


def count_rows(dsn: str, table: str, thread_id: str | None = None) -> int:
    """Rows of one of the checkpoint tables (optionally for one thread)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        if thread_id is None:
            row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        else:
            row = conn.execute(
                f"SELECT count(*) FROM {table} WHERE thread_id = %s", (thread_id,)
            ).fetchone()
    assert row is not None
    return int(row[0])


def _append(state: Sequence[str], writes: Sequence[Sequence[str]]) -> list[str]:
    return [*state, *(item for write in writes for item in write)]


class DeltaState(TypedDict):
    items: Annotated[list[str], DeltaChannel(_append, snapshot_frequency=3)]


def build_delta_graph(checkpointer: Any) -> Any:
    def add(state: DeltaState) -> dict[str, Any]:
        return {"items": [f"n{len(state['items'])}"]}

    builder = StateGraph(DeltaState)
    builder.add_node("add", add)
    builder.add_edge(START, "add")
    builder.add_edge("add", END)
    return builder.compile(checkpointer=checkpointer)
