"""Validation and normalisation of memory values (pure; no I/O).

A memory value is a JSON-serialisable ``dict``. These keys have meaning to the store:

* ``content`` (str): the memory text that search indexes (embedding + full text).
* ``kind``: one of :data:`MEMORY_KINDS`.
* ``importance``: number from 1 to 10.
* ``valid_from`` / ``invalid_at``: validity interval (ISO-8601 strings or datetimes).
* ``expires_at``: absolute expiry (TTL) time.

Times, numbers, text, nesting and the indexed text's size are checked against what the
store can keep and read back (:mod:`langgraph_recall.store._bounds`).
* ``derived_from``: list of source memories (keys in the same namespace, or
  ``{"namespace": [...], "key": "..."}``) — erased together with their sources.
* ``entities``: the people, places, organisations and projects the memory mentions (names,
  or ``{"name": ..., "type": ...}`` objects, as a model's extraction gives them); without
  it the store finds them in the indexed text
  (:func:`~langgraph_recall.extraction.entities.find_entities`) when it links entities.

Every other key is kept as is and can be filtered on.

Example:
    ```python
    from langgraph_recall.store._values import prepare_value

    record = prepare_value(("memories", "u1"), "k1", {"content": "likes tea", "importance": 7})
    assert record.text == "likes tea" and record.importance == 7.0
    ```
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langgraph.store.base import get_text_at_path, tokenize_path

from langgraph_recall.errors import InvalidValueError
from langgraph_recall.extraction.entities import find_entities, normalize_entities
from langgraph_recall.store._bounds import (
    MAX_INDEXED_TEXT_BYTES,
    check_json,
    check_time,
    shown,
)
from langgraph_recall.store._namespace import encode_namespace, is_utf8, validate_prefix

__all__ = [
    "DEFAULT_MAX_VALUE_BYTES",
    "MEMORY_KINDS",
    "TIME_FIELDS",
    "PreparedValue",
    "check_interval",
    "extract_text",
    "focus_text",
    "memory_entities",
    "prepare_value",
    "validate_key",
]

MEMORY_KINDS = frozenset({"semantic", "episodic", "procedural", "preference", "reflection"})
TIME_FIELDS = ("valid_from", "invalid_at", "expires_at")
DEFAULT_MAX_VALUE_BYTES = 64 * 1024
MAX_KEY_BYTES = 1024


@dataclass(frozen=True, slots=True)
class PreparedValue:
    """A validated value with the columns the store derives from it."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    value_json: str
    text: str | None
    kind: str | None
    importance: float | None
    valid_from: datetime | None
    invalid_at: datetime | None
    expires_at: datetime | None
    derived_from: list[dict[str, str]] | None
    content_text: str | None = None
    """``content`` alone when the indexed ``text`` holds more than it (the item is indexed on
    ``content`` plus context fields); the store then embeds both. ``None`` otherwise."""
    entities: tuple[str, ...] = ()
    """The entities the memory is linked through (normalised; empty unless the put asked
    for entity links and the memory is indexed)."""


def memory_entities(value: Mapping[str, Any], text: str | None) -> tuple[str, ...]:
    """The entities a memory mentions: its ``entities`` field when it has one (a list of
    names or ``{"name": ...}`` objects), else those :func:`find_entities` finds in ``text``
    (what the memory says: its ``content`` when it is indexed with context).

    Raises:
        InvalidValueError: ``entities`` is not a list.

    Example:
        ```python
        from langgraph_recall.store._values import memory_entities

        assert memory_entities({}, "Ana moved to Lisbon.") == ("ana", "lisbon")
        assert memory_entities({"entities": [{"name": "Ana"}]}, "Ana moved to Lisbon.") == (
            "ana",)
        ```
    """
    given = _given_entities(value)
    if given is not None:
        return normalize_entities(given)
    return find_entities(text) if text else ()


def _given_entities(value: Mapping[str, Any]) -> list[Any] | tuple[Any, ...] | None:
    """The value's ``entities`` field, checked (``None``: it has none)."""
    given = value.get("entities")
    if given is not None and not isinstance(given, (list, tuple)):
        raise InvalidValueError(
            "entities must be a list of names or {'name': ...} objects, "
            f"got {type(given).__name__}"
        )
    return given


def validate_key(key: object) -> str:
    """Check an item key: a non-empty UTF-8 string without NUL bytes, at most 1024 bytes.

    Example:
        ```python
        from langgraph_recall.store._values import validate_key

        assert validate_key("k1") == "k1"
        ```
    """
    if not isinstance(key, str):
        raise InvalidValueError(f"key must be a string, got {type(key).__name__}")
    if not key:
        raise InvalidValueError("key is empty; use a non-empty string such as a uuid")
    if "\x00" in key:
        raise InvalidValueError("key contains a NUL byte; remove it")
    if not is_utf8(key):
        raise InvalidValueError("key contains an unpaired surrogate; keys must be valid UTF-8")
    size = len(key.encode())
    if size > MAX_KEY_BYTES:
        raise InvalidValueError(f"key is {size} bytes long (UTF-8); the limit is {MAX_KEY_BYTES}")
    return key


def check_interval(valid_from: datetime, invalid_at: datetime, field: str) -> None:
    """The rule every write keeps: a memory stops being valid no earlier than it starts.

    Raises:
        InvalidValueError: ``invalid_at`` (named ``field``) is before ``valid_from``.

    Example:
        ```python
        from langgraph_recall.store._values import check_interval

        from datetime import datetime, timezone

        check_interval(datetime(2024, 1, 1, tzinfo=timezone.utc),
                       datetime(2025, 1, 1, tzinfo=timezone.utc), "at")
        ```
    """
    if invalid_at < valid_from:
        raise InvalidValueError(
            f"{field}={invalid_at.isoformat()} is earlier than the memory's valid_from "
            f"({valid_from.isoformat()}); a memory cannot stop being valid before it starts "
            "— pass a later time, or give the memory an earlier valid_from"
        )


def _derived_refs(raw: object, namespace: tuple[str, ...]) -> list[dict[str, str]]:
    if not isinstance(raw, (list, tuple)):
        raise InvalidValueError("derived_from must be a list of keys or {'namespace','key'} refs")
    refs: list[dict[str, str]] = []
    for entry in raw:
        if isinstance(entry, str):
            refs.append({"ns": encode_namespace(namespace), "key": validate_key(entry)})
        elif isinstance(entry, Mapping) and "key" in entry:
            source_ns = validate_prefix(entry.get("namespace", namespace))  # a list, not a str
            refs.append({"ns": encode_namespace(source_ns), "key": validate_key(entry["key"])})
        else:
            raise InvalidValueError(
                f"derived_from entry {entry!r} is neither a key string nor a "
                "{'namespace': [...], 'key': '...'} mapping"
            )
    return refs


def extract_text(value: Mapping[str, Any], fields: Sequence[str] | None) -> str | None:
    """The text to index: the configured fields' texts joined by newlines.

    ``fields=None`` means: ``content`` when present, else the whole value as JSON.

    Example:
        ```python
        from langgraph_recall.store._values import extract_text

        assert extract_text({"content": "hi", "x": 1}, None) == "hi"
        assert extract_text({"a": {"b": "x"}}, ["a.b"]) == "x"
        ```
    """
    if fields is None:
        fields = ["content"] if "content" in value else ["$"]
    texts: list[str] = []
    for field in fields:
        path: str | list[str] = field if field == "$" else tokenize_path(field)
        texts.extend(get_text_at_path(dict(value), path))
    joined = "\n".join(text for text in texts if text)
    return joined or None


def focus_text(text: str | None, content: str | None, fields: Sequence[str] | None) -> str | None:
    """``content`` when the indexed text is ``content`` plus other fields, else ``None``.

    A memory indexed with context (``index=["context", "content"]``) is embedded twice —
    the whole indexed text and its own ``content`` — so that the context helps a query
    find it without drowning what the memory itself says.

    Example:
        ```python
        from langgraph_recall.store._values import focus_text

        assert focus_text("Q: hi?\\nA: yes", "A: yes", ["context", "content"]) == "A: yes"
        assert focus_text("A: yes", "A: yes", ["content"]) is None
        assert focus_text("a summary", "A: yes", ["summary"]) is None
        ```
    """
    if not text or not content or text == content:
        return None
    if fields is None or "content" not in fields:
        return None
    return content


def prepare_value(
    namespace: tuple[str, ...],
    key: str,
    value: object,
    *,
    fields: Sequence[str] | None = None,
    index: bool = True,
    max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
    entities: bool = False,
) -> PreparedValue:
    """Validate ``value`` and derive the memory columns (text, kind, importance, times;
    with ``entities``, the entities an indexed memory links through: :func:`memory_entities`).

    Raises:
        InvalidValueError: with a message naming the offending field.

    Example:
        ```python
        from langgraph_recall.store._values import prepare_value

        record = prepare_value(("m", "u"), "k", {"content": "x", "kind": "semantic"})
        assert record.kind == "semantic"
        ```
    """
    if not isinstance(value, Mapping):
        raise InvalidValueError(f"value must be a dict, got {type(value).__name__}")
    normalised: dict[str, Any] = dict(value)
    times: dict[str, datetime | None] = {}
    for field in TIME_FIELDS:
        raw = normalised.get(field)
        if raw is None:
            times[field] = None
            continue
        moment = check_time(raw, field)
        times[field] = moment
        normalised[field] = moment.isoformat()
    check_json(normalised)

    content = normalised.get("content")
    if content is not None and not isinstance(content, str):
        raise InvalidValueError(f"content must be a string, got {type(content).__name__}")
    kind = normalised.get("kind")
    if kind is not None and (not isinstance(kind, str) or kind not in MEMORY_KINDS):
        raise InvalidValueError(f"kind={shown(kind)} is unknown; use one of {sorted(MEMORY_KINDS)}")
    importance_raw = normalised.get("importance")
    importance: float | None = None
    if importance_raw is not None:
        if isinstance(importance_raw, bool) or not isinstance(importance_raw, (int, float)):
            raise InvalidValueError("importance must be a number from 1 to 10")
        if not 1 <= importance_raw <= 10:
            raise InvalidValueError(f"importance={shown(importance_raw)} is outside 1..10")
        importance = float(importance_raw)
    valid_from, invalid_at = times["valid_from"], times["invalid_at"]
    if valid_from is not None and invalid_at is not None:
        check_interval(valid_from, invalid_at, "invalid_at")
    derived = normalised.get("derived_from")
    refs = _derived_refs(derived, namespace) if derived is not None else None

    value_json = json.dumps(normalised, ensure_ascii=False, separators=(",", ":"))
    size = len(value_json.encode())
    if size > max_value_bytes:
        raise InvalidValueError(
            f"value is {size} bytes as JSON; the limit is {max_value_bytes} "
            "(raise max_value_bytes or store less)"
        )
    text: str | None = None
    if index:
        try:
            text = extract_text(normalised, fields)
        except Exception as exc:  # malformed field paths from the index config
            raise InvalidValueError(f"cannot extract text to index: {exc}") from exc
    text_bytes = len(text.encode()) if text is not None else 0
    if text_bytes > MAX_INDEXED_TEXT_BYTES:
        raise InvalidValueError(
            f"the text to index is {text_bytes} bytes (UTF-8); full-text search "
            f"indexes at most {MAX_INDEXED_TEXT_BYTES} bytes per memory — index fewer "
            "fields (index=[...]), store less, or put it with index=False"
        )
    content_text = focus_text(text, content, fields)
    linked: tuple[str, ...] = ()
    if entities and text:
        linked = memory_entities(normalised, content_text or text)
    else:
        _given_entities(normalised)  # the same check whether or not this store links
    return PreparedValue(
        namespace=namespace,
        key=key,
        value=normalised,
        value_json=value_json,
        text=text,
        kind=kind,
        importance=importance,
        valid_from=valid_from,
        invalid_at=invalid_at,
        expires_at=times["expires_at"],
        derived_from=refs,
        content_text=content_text,
        entities=linked,
    )
