"""Long-term memory store on Postgres (pgvector HNSW when available, exact search otherwise).

Example:
    ```python
    from langgraph_memory.store.postgres import PostgresMemoryStore

    with PostgresMemoryStore.from_conn_string(None) as store:
        print(store.setup().vector_mode)
    ```
"""

from __future__ import annotations

from langgraph_memory.store._types import (
    DecayConfig,
    ExplainedSearchItem,
    HistoryEntry,
    MemorySearchOp,
    acting_as,
)
from langgraph_memory.store.postgres._state import StoreOptions
from langgraph_memory.store.postgres._types import PoolConfig, SetupReport
from langgraph_memory.store.postgres.aio import AsyncPostgresMemoryStore
from langgraph_memory.store.postgres.sync import PostgresMemoryStore

__all__ = [
    "AsyncPostgresMemoryStore",
    "DecayConfig",
    "ExplainedSearchItem",
    "HistoryEntry",
    "MemorySearchOp",
    "PoolConfig",
    "PostgresMemoryStore",
    "SetupReport",
    "StoreOptions",
    "acting_as",
]
