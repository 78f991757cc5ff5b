"""Postgres checkpointers built on ``langgraph-checkpoint-postgres`` (same tables).

Adds what production deployments need: a correctly configured pool
(``from_conn_string(dsn, pool_config=..., prepare_threshold=None)`` for PgBouncer), no
instance-wide lock on pooled work, ``prune`` (DeltaChannel-safe), ``copy_thread``,
``delete_for_runs``, retention (``ttl``, ``keep_last`` with ``sweep()`` or a background
sweeper), per-thread leases with fencing tokens, and a ``setup()`` that also works inside
a transaction.

Example:
    ```python
    from langgraph_memory.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string("postgresql://postgres@localhost:5432/app") as saver:
        saver.setup()
        graph = builder.compile(checkpointer=saver)
    ```
"""

from __future__ import annotations

from langgraph_memory._pg.pool import PoolConfig
from langgraph_memory.checkpoint.postgres._retention import SweepResult
from langgraph_memory.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph_memory.checkpoint.postgres.lease import (
    AsyncPostgresLeaseBackend,
    PostgresLeaseBackend,
)
from langgraph_memory.checkpoint.postgres.sync import PostgresSaver

__all__ = [
    "AsyncPostgresLeaseBackend",
    "AsyncPostgresSaver",
    "PoolConfig",
    "PostgresLeaseBackend",
    "PostgresSaver",
    "SweepResult",
]
