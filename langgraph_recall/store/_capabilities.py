"""What a store can do beyond ``BaseStore``, declared by the store class, never guessed.

LangGraph's ``BaseStore`` declares ``supports_ttl``; our extras follow the same convention: a
class attribute ``supports_<capability> = True``. Callers (the nodes, erasure) ask
:func:`store_supports` instead of inspecting a method's signature, so a store that wraps ours
says what it forwards, and a store that happens to take a keyword of the same name is not
mistaken for ours.

Example:
    ```python
    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.store._capabilities import store_supports

    assert store_supports(InMemoryStore(), "ttl") is False
    assert store_supports(InMemoryStore(), "as_of") is False
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Protocol, TypeGuard

if TYPE_CHECKING:
    from langgraph_recall.store._types import HistoryEntry

__all__ = ["Capability", "HistoryStore", "keeps_history", "store_supports"]

Capability = Literal[
    "ttl", "as_of", "explain", "include_invalid", "forget", "history", "bulk_load", "invalidate"
]
"""``ttl``: LangGraph's own flag. ``as_of``: ``search(as_of=...)`` reads memories valid at a
moment. ``explain``: ``search(explain=True)`` returns score components. ``include_invalid``:
``search(include_invalid=True)`` also returns invalidated memories. ``forget``: ``forget(prefix)``
erases a namespace with its history and bookkeeping. ``history``: ``history(namespace, key)``
returns a memory's audit records. ``bulk_load``: ``bulk_load(puts, resume_key=...)`` writes
many puts in large, resumable batches. ``invalidate``: ``invalidate(namespace, key)`` /
``ainvalidate`` close a memory's validity and keep it as history."""


def store_supports(store: object, capability: Capability) -> bool:
    """True when ``store`` declares ``supports_<capability> = True``."""
    return getattr(store, f"supports_{capability}", False) is True


class HistoryStore(Protocol):
    """What a store declaring ``supports_history`` offers.

    Example:
        ```python
        from langgraph_recall.store._capabilities import HistoryStore, keeps_history

        class Audited:
            supports_history = True

            def history(self, namespace, key):
                return []

        store = Audited()
        assert keeps_history(store)
        history_store: HistoryStore = store
        assert list(history_store.history(("m",), "k")) == []
        ```
    """

    def history(self, namespace: tuple[str, ...], key: str) -> Sequence[HistoryEntry]:
        """A memory's audit records, oldest first."""
        ...


def keeps_history(store: object) -> TypeGuard[HistoryStore]:
    """:func:`store_supports` ``(store, "history")``, telling the type checker so too.

    Example:
        ```python
        from langgraph.store.memory import InMemoryStore

        from langgraph_recall.store._capabilities import keeps_history

        assert keeps_history(InMemoryStore()) is False
        ```
    """
    return store_supports(store, "history")
