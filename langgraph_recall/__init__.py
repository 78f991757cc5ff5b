"""Memory for LangGraph agents.

* Working memory per thread: ``langgraph_recall.checkpoint.redis`` and
  ``langgraph_recall.checkpoint.postgres`` checkpointers.
* Long-term memory across threads: ``langgraph_recall.store.postgres``.
* Prebuilt graph nodes: ``langgraph_recall.nodes``.
* Erasing one user everywhere: :func:`forget_user` / :func:`aforget_user`, and finding what
  exists of a user first: :func:`find_user_data` / :func:`afind_user_data`
  (``langgraph_recall.erasure``).
* A user's memories in and out as versioned JSON Lines: :func:`export_memories`,
  :func:`import_memories`, and :func:`copy_memories` from any ``BaseStore``
  (``langgraph_recall.transfer``).

Backends are optional extras and are imported from their own modules, so importing
this package needs none of them.

Example:
    ```python
    from importlib.metadata import version

    import langgraph_recall

    assert langgraph_recall.__version__ == version("langgraph-recall")
    ```
"""

from __future__ import annotations

from langgraph_recall._version import __version__
from langgraph_recall.errors import (
    BackendUnavailableError,
    CheckpointIntegrityError,
    ConfigurationError,
    EmbeddingError,
    InvalidConnectionStringError,
    InvalidFilterError,
    InvalidImportError,
    InvalidNamespaceError,
    InvalidValueError,
    LangGraphRecallError,
    LeaseLostError,
    MigrationError,
    RetryableError,
    StaleWriteError,
    ThreadBusyError,
    TransientError,
)

__all__ = [
    "BackendUnavailableError",
    "CheckpointIntegrityError",
    "ConfigurationError",
    "EmbeddingError",
    "InvalidConnectionStringError",
    "InvalidFilterError",
    "InvalidImportError",
    "InvalidNamespaceError",
    "InvalidValueError",
    "LangGraphRecallError",
    "LeaseLostError",
    "MigrationError",
    "RetryableError",
    "StaleWriteError",
    "ThreadBusyError",
    "TransientError",
    "__version__",
]

# Per-thread lease wrapper (multi-worker safety) and user erasure, imported lazily to keep
# `import` light.
__all__ += [
    "afind_user_data",
    "aforget_user",
    "copy_memories",
    "export_memories",
    "find_user_data",
    "forget_user",
    "import_memories",
    "with_thread_lease",
]

_ERASURE = ("afind_user_data", "aforget_user", "find_user_data", "forget_user")
_TRANSFER = ("copy_memories", "export_memories", "import_memories")

from typing import TYPE_CHECKING, Any  # noqa: E402

if TYPE_CHECKING:
    from langgraph_recall.erasure import (
        afind_user_data,
        aforget_user,
        find_user_data,
        forget_user,
    )
    from langgraph_recall.lease import with_thread_lease
    from langgraph_recall.transfer import copy_memories, export_memories, import_memories


def __getattr__(name: str) -> Any:
    if name == "with_thread_lease":
        from langgraph_recall.lease import with_thread_lease

        return with_thread_lease
    if name in _ERASURE:
        from langgraph_recall import erasure

        return getattr(erasure, name)
    if name in _TRANSFER:
        from langgraph_recall import transfer

        return getattr(transfer, name)
    raise AttributeError(f"module 'langgraph_recall' has no attribute {name!r}")
