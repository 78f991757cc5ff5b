"""Pure validation of the config and arguments every checkpointer receives (no I/O).

Both the Redis and the Postgres savers run each public method's input through these
helpers first, so bad input fails the same way everywhere: with a
:class:`~langgraph_memory.errors.ConfigurationError` (also a ``ValueError``) whose message
says what to fix, before anything is read or written.

Rules:

* ``thread_id`` / ``checkpoint_ns`` / ``checkpoint_id`` that are not ``str`` are
  ``str()``-ed, as LangGraph does (``thread_id=5`` and ``"5"`` name the same thread).
* A missing (or ``None`` / empty) ``thread_id`` in a config is an error naming the key.
* Text with an unpaired surrogate (``"\\ud800"``) is rejected: it is not valid Unicode and
  cannot be encoded for any backend.
* NUL characters are rejected where the backend cannot store them (Postgres text and
  JSONB, ``allow_nul=False``); the Redis saver escapes them and accepts them.
* ``limit``: ``None`` or an ``int``; a negative limit lists nothing (``[]``), like ``0``.
* Metadata filter keys and string values follow the same text rules.

Example:
    ```python
    from langgraph_memory.checkpoint._config import normalized_config, thread_id_of

    assert thread_id_of({"configurable": {"thread_id": 5}}) == "5"
    config = normalized_config({"configurable": {"thread_id": 7, "checkpoint_ns": ""}})
    assert config["configurable"]["thread_id"] == "7"
    ```
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig

from langgraph_memory.errors import ConfigurationError

__all__ = [
    "checked_filter",
    "checked_limit",
    "checked_text",
    "checked_thread_id",
    "normalized_config",
    "thread_id_of",
]

_MISSING_THREAD_ID = (
    "the checkpointer needs config['configurable']['thread_id'], e.g. "
    "graph.invoke(inputs, {'configurable': {'thread_id': 'chat-1'}})"
)


def checked_text(value: object, what: str, *, allow_nul: bool = False) -> str:
    """``str(value)``, rejecting unpaired surrogates (and NUL unless ``allow_nul``).

    Args:
        value: The id or key; non-``str`` values are ``str()``-ed.
        what: Name used in the error message (e.g. ``"thread_id"``).
        allow_nul: Accept ``"\\x00"`` (backends that escape it).

    Raises:
        ConfigurationError: The text cannot be stored; the message says what to fix.

    Example:
        ```python
        assert checked_text(42, "thread_id") == "42"
        ```
    """
    text = value if isinstance(value, str) else str(value)
    if not allow_nul and "\x00" in text:
        raise ConfigurationError(
            f"{what} {text!r} contains a NUL character ('\\x00'), which Postgres text cannot "
            f"store; remove it or encode the {what} (e.g. hex or base64)"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        raise ConfigurationError(
            f"{what} {text!r} is not valid UTF-8 text: it contains an unpaired surrogate "
            f"(U+{ord(bad):04X}); decode the {what} properly (e.g. raw.decode('utf-8')) "
            "before passing it"
        ) from None
    return text


def checked_thread_id(thread_id: object, *, allow_nul: bool = False) -> str:
    """A thread id passed directly (``delete_thread``, ``copy_thread``, ``prune``...).

    Raises:
        ConfigurationError: ``None``, or text that cannot be stored.

    Example:
        ```python
        assert checked_thread_id(5) == "5"
        ```
    """
    if thread_id is None:
        raise ConfigurationError("thread_id must be a str (or an int), got None")
    return checked_text(thread_id, "thread_id", allow_nul=allow_nul)


def thread_id_of(config: RunnableConfig, *, allow_nul: bool = False) -> str:
    """The ``str`` thread id of a config (``config["configurable"]["thread_id"]``).

    Raises:
        ConfigurationError: The key is missing/empty, or the id cannot be stored.

    Example:
        ```python
        assert thread_id_of({"configurable": {"thread_id": "t1"}}) == "t1"
        ```
    """
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    if not isinstance(configurable, Mapping):
        raise ConfigurationError(_MISSING_THREAD_ID)
    thread_id = configurable.get("thread_id")
    if thread_id is None or thread_id == "":
        raise ConfigurationError(_MISSING_THREAD_ID)
    return checked_text(thread_id, "thread_id", allow_nul=allow_nul)


def normalized_config(config: RunnableConfig, *, allow_nul: bool = False) -> RunnableConfig:
    """A copy of ``config`` with ``thread_id``, ``checkpoint_ns`` and ``checkpoint_id``
    validated and ``str()``-ed (the input is not modified).

    Raises:
        ConfigurationError: See :func:`thread_id_of` and :func:`checked_text`.

    Example:
        ```python
        config = normalized_config({"configurable": {"thread_id": 1, "checkpoint_id": 2}})
        assert config["configurable"] == {"thread_id": "1", "checkpoint_id": "2"}
        ```
    """
    thread_id = thread_id_of(config, allow_nul=allow_nul)
    configurable: dict[str, Any] = dict(config["configurable"])
    configurable["thread_id"] = thread_id
    for key in ("checkpoint_ns", "checkpoint_id"):
        value = configurable.get(key)
        if value is not None:
            configurable[key] = checked_text(value, key, allow_nul=allow_nul)
    normalized: RunnableConfig = {**config, "configurable": configurable}
    return normalized


def checked_limit(limit: object) -> int | None:
    """``list(limit=...)``: ``None`` or an ``int``; negative limits become ``0`` (no rows).

    Raises:
        ConfigurationError: ``limit`` is not an int.

    Example:
        ```python
        assert checked_limit(-1) == 0 and checked_limit(None) is None
        ```
    """
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise ConfigurationError(f"limit must be an int or None, got {limit!r}")
    return max(limit, 0)


def checked_filter(
    filter: Mapping[str, Any] | None, *, allow_nul: bool = False
) -> dict[str, Any] | None:
    """Validate a metadata filter: a mapping whose keys and (nested) string values are
    storable text.

    Raises:
        ConfigurationError: Not a mapping, or a key/value that cannot be stored.

    Example:
        ```python
        assert checked_filter({"source": "input"}) == {"source": "input"}
        ```
    """
    if filter is None:
        return None
    if not isinstance(filter, Mapping):
        raise ConfigurationError(
            f"filter must be a dict of metadata key -> value, got {type(filter).__name__}"
        )
    _check_json_text(filter, "filter", allow_nul)
    return dict(filter)


def _check_json_text(value: object, where: str, allow_nul: bool) -> None:
    if isinstance(value, str):
        checked_text(value, f"{where} value", allow_nul=allow_nul)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str):
                checked_text(key, f"{where} key", allow_nul=allow_nul)
            _check_json_text(item, f"{where}[{key!r}]", allow_nul)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check_json_text(item, where, allow_nul)
