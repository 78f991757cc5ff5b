"""Per-thread leases with fencing: several workers, one run per ``thread_id`` at a time.

Add the lease in one line around a graph compiled with one of our checkpointers:

Example:
    ```python
    from langgraph.graph import START, MessagesState, StateGraph

    from langgraph_memory.checkpoint.postgres import PostgresSaver
    from langgraph_memory.lease import with_thread_lease


    def reply(state: MessagesState) -> dict[str, list[tuple[str, str]]]:
        return {"messages": [("ai", "hello")]}


    builder = StateGraph(MessagesState)
    builder.add_node(reply)
    builder.add_edge(START, "reply")
    with PostgresSaver.from_conn_string(DB_URI) as saver:
        saver.setup()
        graph = with_thread_lease(builder.compile(checkpointer=saver), strategy="reject")
        out = graph.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "doc-1"}})
    assert out["messages"][-1].content == "hello"
    ```

A busy thread raises :class:`~langgraph_memory.errors.ThreadBusyError`; a run whose
lease is lost mid-run stops at the next step with
:class:`~langgraph_memory.errors.LeaseLostError`; a write carrying an outdated fencing
token is refused by the checkpointer with :class:`~langgraph_memory.errors.StaleWriteError`.
"""

from __future__ import annotations

from langgraph_memory.lease._policy import LeaseOptions, Strategy
from langgraph_memory.lease._protocol import (
    FENCE_CONFIG_KEY,
    AsyncLeaseBackend,
    Lease,
    LeaseBackend,
)
from langgraph_memory.lease.memory import InMemoryLeaseBackend
from langgraph_memory.lease.wrapper import ThreadLeasedGraph, with_thread_lease

__all__ = [
    "FENCE_CONFIG_KEY",
    "AsyncLeaseBackend",
    "InMemoryLeaseBackend",
    "Lease",
    "LeaseBackend",
    "LeaseOptions",
    "Strategy",
    "ThreadLeasedGraph",
    "with_thread_lease",
]
