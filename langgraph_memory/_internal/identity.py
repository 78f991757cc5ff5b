"""Identity lookup for memory nodes: ``user_id`` / ``thread_id`` and namespace templates.

Values come from LangGraph's runtime context first (``graph.invoke(..., context=...)``,
a dataclass, pydantic model, TypedDict or plain dict) and fall back to
``config["configurable"]``. Pure functions: they receive the runtime context and the
config and do no I/O.

Example:
    ```python
    from langgraph_memory._internal.identity import format_namespace

    ns = format_namespace(
        ("memories", "{user_id}"), context=None, config={"configurable": {"user_id": "u1"}}
    )
    assert ns == ("memories", "u1")
    ```
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any

from langgraph_memory.errors import ConfigurationError

__all__ = ["format_namespace", "lookup_identity", "require_identity", "template_fields"]

_MISSING = object()


def _from_context(context: Any, key: str) -> Any:
    if context is None:
        return _MISSING
    if isinstance(context, Mapping):
        return context.get(key, _MISSING)
    return getattr(context, key, _MISSING)


def lookup_identity(key: str, *, context: Any, config: Mapping[str, Any] | None) -> str | None:
    """Return ``key`` from the runtime context, else from ``config["configurable"]``.

    Args:
        key: The identity key, e.g. ``"user_id"``.
        context: ``Runtime.context`` of the current run (or ``None``).
        config: The node's ``RunnableConfig`` (or ``None``).

    Returns:
        The value as a string, or ``None`` when neither source has it.

    Example:
        ```python
        assert lookup_identity("user_id", context={"user_id": 7}, config=None) == "7"
        ```
    """
    value = _from_context(context, key)
    if value is _MISSING or value is None:
        configurable = (config or {}).get("configurable") or {}
        value = configurable.get(key, _MISSING)
    if value is _MISSING or value is None:
        return None
    text = str(value)
    return text or None


def require_identity(key: str, *, context: Any, config: Mapping[str, Any] | None) -> str:
    """Like :func:`lookup_identity` but raise :class:`ConfigurationError` when missing.

    Example:
        ```python
        assert require_identity("thread_id", context=None,
                                config={"configurable": {"thread_id": "t"}}) == "t"
        ```
    """
    value = lookup_identity(key, context=context, config=config)
    if value is None:
        raise ConfigurationError(
            f"missing {key!r}: pass it in the runtime context "
            f"(graph.invoke(..., context={{{key!r}: ...}})) or in the config "
            f"(config={{'configurable': {{{key!r}: ...}}}})"
        )
    return value


def template_fields(template: tuple[str, ...]) -> list[str]:
    """Names of the ``{placeholders}`` used in a namespace template.

    Example:
        ```python
        assert template_fields(("memories", "{user_id}")) == ["user_id"]
        ```
    """
    names: list[str] = []
    for segment in template:
        for _, field, _, _ in string.Formatter().parse(segment):
            if field is not None:
                if not field:
                    raise ConfigurationError(
                        f"namespace template {template!r} has an empty '{{}}' placeholder; "
                        "name it, e.g. '{user_id}'"
                    )
                if field not in names:
                    names.append(field)
    return names


def format_namespace(
    template: tuple[str, ...], *, context: Any, config: Mapping[str, Any] | None
) -> tuple[str, ...]:
    """Fill a namespace template such as ``("memories", "{user_id}")``.

    Raises:
        ConfigurationError: a placeholder has no value (the message names the key), or a
            filled segment is empty or contains a ``.``.

    Example:
        ```python
        ns = format_namespace(("m", "{user_id}"), context={"user_id": "ann"}, config=None)
        assert ns == ("m", "ann")
        ```
    """
    if not template:
        raise ConfigurationError("namespace template is empty; use e.g. ('memories', '{user_id}')")
    values = {
        name: require_identity(name, context=context, config=config)
        for name in template_fields(template)
    }
    namespace = tuple(segment.format(**values) for segment in template)
    for index, segment in enumerate(namespace):
        if not segment or "." in segment:
            raise ConfigurationError(
                f"namespace segment {index} of {namespace!r} is empty or contains '.'; "
                "use non-empty identifiers without dots"
            )
    return namespace
