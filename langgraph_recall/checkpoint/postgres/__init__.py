"""Postgres checkpointers built on ``langgraph-checkpoint-postgres`` (same tables).

Adds what production deployments need: a correctly configured pool
(``from_conn_string(dsn, pool_config=..., prepare_threshold=None)`` for PgBouncer), no
instance-wide lock on pooled work, ``prune`` (DeltaChannel-safe), ``copy_thread``,
``delete_for_runs``, retention (``ttl={"default_ttl": minutes}`` applied by ``sweep()`` or a
background sweeper; ``keep_last=N`` applied by every put), per-thread leases with fencing
tokens, and a ``setup()`` that also works inside a transaction. The savers are our own
``BaseCheckpointSaver`` subclasses on the official package's tables and migrations.

Example:
    ```python
    from langgraph.graph import START, MessagesState, StateGraph

    from langgraph_recall.checkpoint.postgres import PostgresSaver

    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda state: {"messages": [("ai", "hi")]})
    builder.add_edge(START, "echo")
    with PostgresSaver.from_conn_string(DB_URI, keep_last=5) as saver:
        saver.setup()
        graph = builder.compile(checkpointer=saver)
        graph.invoke({"messages": [("user", "hello")]}, {"configurable": {"thread_id": "doc-1"}})
    ```
"""

from __future__ import annotations

from langgraph_recall._pg.pool import PoolConfig
from langgraph_recall.checkpoint.postgres._retention import SweepResult
from langgraph_recall.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph_recall.checkpoint.postgres.lease import (
    AsyncPostgresLeaseBackend,
    PostgresLeaseBackend,
)
from langgraph_recall.checkpoint.postgres.sync import PostgresSaver

__all__ = [
    "AsyncPostgresLeaseBackend",
    "AsyncPostgresSaver",
    "PoolConfig",
    "PostgresLeaseBackend",
    "PostgresSaver",
    "SweepResult",
]
