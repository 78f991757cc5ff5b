"""Memory for LangGraph agents.

* Working memory per thread: ``langgraph_memory.checkpoint.redis`` and
  ``langgraph_memory.checkpoint.postgres`` checkpointers.
* Long-term memory across threads: ``langgraph_memory.store.postgres``.
* Prebuilt graph nodes: ``langgraph_memory.nodes``.

Backends are optional extras and are imported from their own modules, so importing
this package needs none of them.

Example:
    ```python
    import langgraph_memory

    print(langgraph_memory.__version__)
    ```
"""

from __future__ import annotations

from langgraph_memory.errors import (
    BackendUnavailableError,
    ConfigurationError,
    EmbeddingError,
    InvalidConnectionStringError,
    InvalidFilterError,
    InvalidNamespaceError,
    InvalidValueError,
    LangGraphMemoryError,
    LeaseLostError,
    MigrationError,
    StaleWriteError,
    ThreadBusyError,
)

__version__ = "0.1.0"

__all__ = [
    "BackendUnavailableError",
    "ConfigurationError",
    "EmbeddingError",
    "InvalidConnectionStringError",
    "InvalidFilterError",
    "InvalidNamespaceError",
    "InvalidValueError",
    "LangGraphMemoryError",
    "LeaseLostError",
    "MigrationError",
    "StaleWriteError",
    "ThreadBusyError",
    "__version__",
]
