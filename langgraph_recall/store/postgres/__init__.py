"""Long-term memory store on Postgres (pgvector HNSW when available, exact search otherwise).

Example:
    ```python
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from langgraph_recall.store.postgres import PostgresMemoryStore

    index = {"dims": 384, "embed": DeterministicFakeEmbedding(size=384)}
    with PostgresMemoryStore.from_conn_string(DB_URI, index=index) as store:
        print(store.setup().vector_mode)  # "pgvector", or "exact" without the extension
    ```
"""

from __future__ import annotations

from langgraph_recall._pg.pool import PoolConfig
from langgraph_recall.store._types import (
    DecayConfig,
    ExplainedSearchItem,
    HistoryEntry,
    MemorySearchOp,
    acting_as,
)
from langgraph_recall.store.postgres._state import StoreOptions
from langgraph_recall.store.postgres._types import SetupReport
from langgraph_recall.store.postgres.aio import AsyncPostgresMemoryStore
from langgraph_recall.store.postgres.sync import PostgresMemoryStore

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
