"""Per-thread leases with fencing: several workers, one run per ``thread_id`` at a time.

Add the lease in one line around a graph compiled with one of our checkpointers:

Example:
    ```python
    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.checkpoint.postgres import PostgresSaver
    from langgraph_recall.graphs import build_graph
    from langgraph_recall.lease import with_thread_lease

    with PostgresSaver.from_conn_string(DB_URI) as saver:
        saver.setup()
        agent = build_graph(None, store=InMemoryStore(), checkpointer=saver)  # any compiled graph
        graph = with_thread_lease(agent, strategy="reject")
        config = {"configurable": {"thread_id": "doc-lease-1", "user_id": "u1"}}
        out = graph.invoke({"messages": [("user", "My name is Zhang San.")]}, config)
    assert out["messages"][-1].type == "ai"
    ```

A busy thread raises :class:`~langgraph_recall.errors.ThreadBusyError`; a run whose
lease is lost mid-run stops at the next step with
:class:`~langgraph_recall.errors.LeaseLostError`; a write carrying an outdated fencing
token is refused by the checkpointer with :class:`~langgraph_recall.errors.StaleWriteError`.
"""

from __future__ import annotations

from langgraph_recall.lease._policy import LeaseOptions, Strategy
from langgraph_recall.lease._protocol import (
    FENCE_CONFIG_KEY,
    AsyncLeaseBackend,
    Lease,
    LeaseBackend,
)
from langgraph_recall.lease.memory import InMemoryLeaseBackend
from langgraph_recall.lease.wrapper import ThreadLeasedGraph, with_thread_lease

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
