"""What every memory component reads from the call it serves: where memories live by
default, the store's default TTL, the state's messages and the runtime view of a call
(:class:`NodeContext`: store, runtime context, config).

Shared by the nodes, the middleware, the episode ingestion, the thread registry and the
erasure; it imports none of them.

Example:
    ```python
    from langgraph_recall._memory.context import DEFAULT_NAMESPACE, NodeContext

    ctx = NodeContext(store=None, context={"user_id": "u1"}, config={})
    assert ctx.namespace(DEFAULT_NAMESPACE) == ("memories", "user_id:u1")
    ```
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import convert_to_messages
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from langgraph_recall._internal.identity import format_namespace, lookup_identity
from langgraph_recall.errors import ConfigurationError

__all__ = [
    "DEFAULT_NAMESPACE",
    "NodeContext",
    "messages_of",
    "state_value",
    "store_default_ttl",
    "utc_now",
]


DEFAULT_NAMESPACE: tuple[str, ...] = ("memories", "{user_id}")
"""Where memories live: one namespace per ``user_id``."""


def utc_now() -> datetime:
    """The current time, timezone-aware UTC (the nodes' default clock).

    Example:
        ```python
        from langgraph_recall._memory.context import utc_now

        assert utc_now().tzinfo is not None
        ```
    """
    return datetime.now(timezone.utc)


def state_value(state: Any, key: str, default: Any = None) -> Any:
    """Read ``key`` from a dict state or an attribute state (dataclass / pydantic).

    Example:
        ```python
        from langgraph_recall._memory.context import state_value

        assert state_value({"messages": [1]}, "messages") == [1]
        ```
    """
    if isinstance(state, Mapping):
        return state.get(key, default)
    return getattr(state, key, default)


def store_default_ttl(store: BaseStore) -> float | None:
    """The TTL (minutes) a memory written by a node gets: the store's ``default_ttl``.

    ``BaseStore.put`` applies ``ttl_config["default_ttl"]`` when no ``ttl`` is given
    (``NOT_PROVIDED``), but a ``PutOp`` in ``store.batch`` carries its ``ttl`` as is
    (``None``: never expires). The nodes write through ``batch``, so they resolve the
    default themselves — the same TTL as ``store.put(ns, key, value)`` without ``ttl``.

    Example:
        ```python
        from langgraph.store.memory import InMemoryStore

        from langgraph_recall._memory.context import store_default_ttl

        assert store_default_ttl(InMemoryStore()) is None
        ```
    """
    config = getattr(store, "ttl_config", None)
    if not config:
        return None
    ttl = config.get("default_ttl")
    return None if ttl is None else float(ttl)


@dataclass(frozen=True)
class NodeContext:
    """Per-call view of the runtime: store, runtime context and config.

    Example:
        ```python
        from langgraph_recall.nodes import NodeContext

        ctx = NodeContext(store=None, context=None, config={"configurable": {"user_id": "u"}})
        assert ctx.namespace(("m", "{user_id}")) == ("m", "user_id:u")
        ```
    """

    store: BaseStore | None
    context: Any
    config: RunnableConfig

    def require_store(self, node: str) -> BaseStore:
        """The store, or a ConfigurationError saying how to provide one."""
        if self.store is None:
            raise ConfigurationError(
                f"{node}: no store. Pass store=... to the node, or compile the graph with "
                "graph.compile(store=...)."
            )
        return self.store

    def namespace(self, template: tuple[str, ...]) -> tuple[str, ...]:
        """Fill a namespace template from the runtime context / configurable."""
        return format_namespace(template, context=self.context, config=self.config)

    def identity(self, key: str) -> str | None:
        """``user_id`` / ``thread_id`` / … or ``None``."""
        return lookup_identity(key, context=self.context, config=self.config)


def messages_of(state: Any, key: str) -> list[BaseMessage]:
    """The message list under ``key`` (a ConfigurationError if the key is absent).

    Example:
        ```python
        from langgraph_recall._memory.context import messages_of

        assert messages_of({"messages": []}, "messages") == []
        ```
    """
    value = state_value(state, key, None)
    if value is None:
        raise ConfigurationError(
            f"state has no {key!r} key; pass messages_key=... naming your message list"
        )
    return convert_to_messages(value)
