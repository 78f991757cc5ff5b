"""Validation and normalisation of memory values (pure; no I/O).

A memory value is a JSON-serialisable ``dict``. These keys have meaning to the store:

* ``content`` (str): the memory text that search indexes (embedding + full text).
* ``kind``: one of :data:`MEMORY_KINDS`.
* ``importance``: number from 1 to 10.
* ``valid_from`` / ``invalid_at``: validity interval (ISO-8601 strings or datetimes).
* ``expires_at``: absolute expiry (TTL) time.
* ``derived_from``: list of source memories (keys in the same namespace, or
  ``{"namespace": [...], "key": "..."}``) — erased together with their sources.

Every other key is kept as is and can be filtered on.

Example:
    ```python
    from langgraph_memory.store._values import prepare_value

    record = prepare_value(("memories", "u1"), "k1", {"content": "likes tea", "importance": 7})
    assert record.text == "likes tea" and record.importance == 7.0
    ```
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import get_text_at_path, tokenize_path

from langgraph_memory.errors import InvalidValueError
from langgraph_memory.store._namespace import encode_namespace, is_utf8, validate_prefix

__all__ = [
    "DEFAULT_MAX_VALUE_BYTES",
    "MEMORY_KINDS",
    "TIME_FIELDS",
    "PreparedValue",
    "extract_text",
    "focus_text",
    "parse_time",
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


def validate_key(key: object) -> str:
    """Check an item key: a non-empty UTF-8 string without NUL bytes, at most 1024 bytes.

    Example:
        ```python
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


def parse_time(raw: object, field: str) -> datetime:
    """Parse an ISO-8601 string or datetime into an aware datetime (naive means UTC).

    Example:
        ```python
        assert parse_time("2024-05-01", "valid_from").year == 2024
        ```
    """
    if isinstance(raw, datetime):
        moment = raw
    elif isinstance(raw, str):
        try:
            moment = datetime.fromisoformat(raw.strip())
        except ValueError:
            raise InvalidValueError(
                f"{field}={raw!r} is not an ISO-8601 date/time; "
                "use e.g. '2024-05-01T09:00:00+00:00'"
            ) from None
    else:
        raise InvalidValueError(
            f"{field} must be an ISO-8601 string or a datetime, got {type(raw).__name__}"
        )
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment


def _check_json(node: Any, path: str) -> None:
    if isinstance(node, dict):
        for name, child in node.items():
            if not isinstance(name, str):
                raise InvalidValueError(
                    f"value key {name!r} at {path or 'top level'} is not a string; "
                    "JSON objects need string keys"
                )
            if "\x00" in name or not is_utf8(name):
                raise InvalidValueError(
                    f"value key at {path or 'top level'} contains a NUL byte or an unpaired "
                    "surrogate; text must be valid UTF-8"
                )
            _check_json(child, f"{path}.{name}" if path else name)
    elif isinstance(node, (list, tuple)):
        for index, child in enumerate(node):
            _check_json(child, f"{path}[{index}]")
    elif isinstance(node, float):
        if not math.isfinite(node):
            raise InvalidValueError(f"value field {path} is {node}; NaN and infinity are not JSON")
    elif isinstance(node, str):
        if "\x00" in node:
            raise InvalidValueError(f"value field {path} contains a NUL byte; Postgres rejects it")
        if not is_utf8(node):
            raise InvalidValueError(
                f"value field {path} contains an unpaired surrogate; text must be valid UTF-8"
            )
    elif node is not None and not isinstance(node, (bool, int)):
        raise InvalidValueError(
            f"value field {path} is a {type(node).__name__}, which is not JSON-serialisable; "
            "convert it to a string, number, list or dict"
        )


def _derived_refs(raw: object, namespace: tuple[str, ...]) -> list[dict[str, str]]:
    if not isinstance(raw, (list, tuple)):
        raise InvalidValueError("derived_from must be a list of keys or {'namespace','key'} refs")
    refs: list[dict[str, str]] = []
    for entry in raw:
        if isinstance(entry, str):
            refs.append({"ns": encode_namespace(namespace), "key": validate_key(entry)})
        elif isinstance(entry, Mapping) and "key" in entry:
            source_ns = validate_prefix(tuple(entry.get("namespace", namespace)))
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
        assert focus_text("Q: hi?\nA: yes", "A: yes", ["context", "content"]) == "A: yes"
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
) -> PreparedValue:
    """Validate ``value`` and derive the memory columns (text, kind, importance, times).

    Raises:
        InvalidValueError: with a message naming the offending field.

    Example:
        ```python
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
        moment = parse_time(raw, field)
        times[field] = moment
        normalised[field] = moment.isoformat()
    _check_json(normalised, "")

    content = normalised.get("content")
    if content is not None and not isinstance(content, str):
        raise InvalidValueError(f"content must be a string, got {type(content).__name__}")
    kind = normalised.get("kind")
    if kind is not None and kind not in MEMORY_KINDS:
        raise InvalidValueError(f"kind={kind!r} is unknown; use one of {sorted(MEMORY_KINDS)}")
    importance_raw = normalised.get("importance")
    importance: float | None = None
    if importance_raw is not None:
        if isinstance(importance_raw, bool) or not isinstance(importance_raw, (int, float)):
            raise InvalidValueError("importance must be a number from 1 to 10")
        if not 1 <= importance_raw <= 10:
            raise InvalidValueError(f"importance={importance_raw} is outside 1..10")
        importance = float(importance_raw)
    valid_from, invalid_at = times["valid_from"], times["invalid_at"]
    if valid_from is not None and invalid_at is not None and invalid_at < valid_from:
        raise InvalidValueError("invalid_at is earlier than valid_from; swap or fix the dates")
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
    content_text = focus_text(text, content, fields)
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
    )
