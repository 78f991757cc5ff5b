"""Long-term memory stores. The Postgres implementation lives in
``langgraph_recall.store.postgres`` (imported on demand: it needs the ``postgres`` extra).

Example:
    ```python
    from langgraph_recall.store.postgres import PostgresMemoryStore
    ```
"""

from __future__ import annotations

__all__: list[str] = []
