"""Pure rules for the values both checkpointers store (no I/O): one outcome per value class.

The Redis and the Postgres savers send every channel value, pending write, metadata dict
and checkpoint header through these functions before anything is written, so the same
input gets the same outcome on both backends, and user text never makes a thread unusable:

========================================================  ==================================
value                                                     outcome on every saver
========================================================  ==================================
text the serializer represents (NUL, any valid Unicode)   stored, read back exactly
text with an unpaired surrogate (``"a\\ud800b"``)         refused: ``InvalidValueError``
a value the serializer cannot encode (an ``int`` beyond   refused: ``InvalidValueError``
64 bits, nesting deeper than 255, an unknown type)        naming the channel and the cause
a serialized value over :data:`MAX_VALUE_BYTES`, a call   refused: ``InvalidValueError``
over :data:`MAX_CALL_BYTES`
metadata / checkpoint header that is not JSON             refused: ``InvalidValueError``
(:func:`check_json`)
========================================================  ==================================

A refused value writes nothing: the call fails before any I/O, the thread keeps its
previous state and its next turn works. Unpaired surrogates are not text (they cannot be
encoded as UTF-8); LangGraph's default serializer would silently store them as ``"?"``,
Postgres JSONB rejects them, so both savers refuse them with the same message.

The Postgres saver keeps small primitive channel values inline in the checkpoint's JSONB
(as the official saver does) only where JSONB holds them exactly (:func:`fits_jsonb`);
every other value goes to ``checkpoint_blobs`` through the serializer, like on Redis.

Example:
    ```python
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph_recall.checkpoint._values import dump_value, fits_jsonb

    serde = JsonPlusSerializer()
    assert serde.loads_typed(dump_value(serde, "a\\x00b", "channel 'summary'")) == "a\\x00b"
    assert fits_jsonb("hello") and not fits_jsonb("a\\x00b")
    ```
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import ormsgpack
from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_recall.errors import InvalidValueError, LangGraphRecallError

__all__ = [
    "INLINE_TEXT_BYTES",
    "MAX_CALL_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_VALUE_BYTES",
    "check_call_size",
    "check_json",
    "check_text",
    "dump_value",
    "fits_jsonb",
    "surrogate_in",
]

MAX_VALUE_BYTES = 128 * 1024 * 1024
"""Largest serialized channel value, pending write or metadata dict (bytes): well under
what one Redis argument (``proto-max-bulk-len``, 512 MB) and one Postgres JSONB value
(256 MB) can hold, so whatever is accepted is stored and read back."""

MAX_CALL_BYTES = 256 * 1024 * 1024
"""Largest total of one ``put`` / ``put_writes`` (bytes): under Redis's query buffer
(1 GB) and a Postgres protocol message (1 GB)."""

MAX_JSON_DEPTH = 100
"""Deepest nesting of metadata and filters (the serializer stops at 255 levels, Python's
``json`` at the recursion limit: one bound below both)."""

INLINE_TEXT_BYTES = 1024
"""Longest text the Postgres saver keeps inline in the checkpoint's JSONB; longer text is
a blob, written once per version instead of copied into every checkpoint."""

_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1
"""The integers the default serializer (msgpack) encodes."""

_SAFE_TYPES = frozenset({"null", "bytes", "bytearray"})
"""Serializer output types that cannot hold text."""

_PROBE_OPTION = ormsgpack.OPT_NON_STR_KEYS
"""msgpack without ``OPT_REPLACE_SURROGATES``: encoding fails on an unpaired surrogate."""


def _probe_fields(obj: Any) -> Any:
    """``default`` of the surrogate probe: the attributes of an object msgpack does not
    know (pydantic models with their extra fields, dataclass-likes); ``None`` otherwise."""
    fields = getattr(obj, "__dict__", None)
    if isinstance(fields, dict):
        extra = getattr(obj, "model_extra", None)
        return {**fields, **extra} if isinstance(extra, dict) and extra else fields
    if isinstance(obj, (set, frozenset)):
        return list(obj)
    return None


def surrogate_in(value: Any) -> tuple[str, int] | None:
    """``(path, code point)`` of the first unpaired surrogate in ``value`` (text, dict keys
    and values, sequences, object attributes), or ``None``.

    Example:
        ```python
        from langgraph_recall.checkpoint._values import surrogate_in

        assert surrogate_in({"a": ["ok", "x\\udc80"]}) == ("['a'][1]", 0xDC80)
        assert surrogate_in({"a": "fine"}) is None
        ```
    """
    if type(value) is str:  # the common case: one string, no walk
        return _surrogate_of(value, "")
    try:  # fast: msgpack (Rust) walks the value and fails on a surrogate
        ormsgpack.packb(value, default=_probe_fields, option=_PROBE_OPTION)
        return None
    except TypeError:
        pass  # a surrogate, or a type / depth msgpack refuses: find out exactly below
    stack: list[tuple[Any, str]] = [(value, "")]
    seen: set[int] = set()
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            found = _surrogate_of(item, path)
            if found:
                return found
            continue
        if item is None or isinstance(item, (int, float, bytes, bytearray)):
            continue
        if id(item) in seen:
            continue
        seen.add(id(item))
        children: list[tuple[Any, str]]
        if isinstance(item, Mapping):
            children = []
            for key, child in item.items():
                children.append((child, f"{path}[{_label(key)}]"))
                children.append((key, f"{path} (a key)"))
        elif isinstance(item, (list, tuple, set, frozenset)):
            children = [(child, f"{path}[{i}]") for i, child in enumerate(item)]
        else:
            fields = _probe_fields(item)
            if not isinstance(fields, dict):
                continue
            children = [(child, f"{path}.{name}") for name, child in fields.items()]
        stack.extend(reversed(children))
    return None


def _surrogate_of(text: str, path: str) -> tuple[str, int] | None:
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return path, ord(text[exc.start])
    return None


def _label(key: Any) -> str:
    text = repr(key)
    return text if len(text) <= 40 else text[:37] + "..."


def _surrogate_error(where: str, path: str, code_point: int) -> InvalidValueError:
    at = f" at {path}" if path else ""
    return InvalidValueError(
        f"{where} holds text with an unpaired surrogate (U+{code_point:04X}){at}: that is not "
        "valid Unicode, the serializer would store it as '?' and Postgres cannot store it at "
        "all, so no saver accepts it. Decode the text properly (e.g. "
        "raw.decode('utf-8', errors='replace')) before it reaches the graph state; nothing "
        "was written and the thread is unchanged."
    )


def check_text(value: Any, where: str) -> None:
    """Refuse ``value`` if any text in it has an unpaired surrogate.

    Raises:
        InvalidValueError: Names ``where`` and the path inside the value.

    Example:
        ```python
        from langgraph_recall.checkpoint._values import check_text

        check_text({"content": "héllo"}, "channel 'messages'")
        ```
    """
    found = surrogate_in(value)
    if found is not None:
        raise _surrogate_error(where, *found)


def dump_value(
    serde: SerializerProtocol, value: Any, where: str, *, limit: bool = True
) -> tuple[str, bytes]:
    """``serde.dumps_typed(value)``, refusing what the serializer cannot store exactly.

    Args:
        serde: The saver's serializer.
        value: A channel value or a pending write.
        where: What the value is, for messages (e.g. ``"channel 'summary'"``).
        limit: Check the size against :data:`MAX_VALUE_BYTES` (metadata and headers are
            sized by :func:`check_json` instead, identically on every backend).

    Raises:
        InvalidValueError: Unpaired surrogate, a value the serializer cannot encode
            (with its reason), or a result over :data:`MAX_VALUE_BYTES`.

    Example:
        ```python
        from langgraph_recall.checkpoint._values import dump_value

        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        assert dump_value(JsonPlusSerializer(), 1, "channel 'n'") == ("msgpack", b"\\x01")
        ```
    """
    try:
        type_, data = serde.dumps_typed(value)
    except LangGraphRecallError:
        raise
    except Exception as exc:  # any failure of the (possibly user-supplied) serializer
        check_text(value, where)
        raise InvalidValueError(
            f"{where} cannot be serialized by {type(serde).__name__} "
            f"({type(exc).__name__}: {str(exc)[:200]}); store plain data (text, numbers, "
            "lists, dicts, messages; integers within 64 bits, nesting under 255 levels) or "
            "use a serializer that handles this type. Nothing was written."
        ) from exc
    # The default serializer writes each unpaired surrogate as b"?": output without one
    # cannot have dropped any, so the walk below only runs when it might find something.
    if type_ not in _SAFE_TYPES and not (type_ == "msgpack" and b"?" not in data):
        check_text(value, where)
    if limit and len(data) > MAX_VALUE_BYTES:
        raise InvalidValueError(
            f"{where} is {len(data):,} bytes serialized; the savers store at most "
            f"{MAX_VALUE_BYTES:,} bytes per value. Keep large payloads elsewhere (a file or "
            "object store) and put a reference in the state. Nothing was written."
        )
    return type_, data


def check_call_size(total: int, what: str) -> None:
    """Refuse a ``put`` / ``put_writes`` whose values add up to over :data:`MAX_CALL_BYTES`.

    Example:
        ```python
        from langgraph_recall.checkpoint._values import check_call_size

        check_call_size(1024, "put")
        ```
    """
    if total > MAX_CALL_BYTES:
        raise InvalidValueError(
            f"this {what} is {total:,} bytes serialized; the savers store at most "
            f"{MAX_CALL_BYTES:,} bytes per call. Keep large payloads outside the graph state. "
            "Nothing was written."
        )


def fits_jsonb(value: Any) -> bool:
    """Whether a channel value is a primitive JSONB stores and reads back exactly (the
    Postgres saver keeps those inline; everything else becomes a blob).

    ``None``, ``bool``, 64-bit ``int``, finite ``float`` written without an exponent
    (JSONB prints ``1e16`` back as the integer ``10000000000000000``) and text without
    NUL up to :data:`INLINE_TEXT_BYTES`.

    Example:
        ```python
        from langgraph_recall.checkpoint._values import fits_jsonb

        assert fits_jsonb(None) and fits_jsonb(2.5) and not fits_jsonb(1e16)
        ```
    """
    kind = type(value)
    if value is None or kind is bool:
        return True
    if kind is int:
        return bool(_INT_MIN <= value <= _INT_MAX)
    if kind is float:
        return math.isfinite(value) and "e" not in repr(value)
    if kind is str:
        if len(value) > INLINE_TEXT_BYTES or "\x00" in value:
            return False
        if len(value) <= INLINE_TEXT_BYTES // 4:
            return True
        return len(value.encode("utf-8", "surrogatepass")) <= INLINE_TEXT_BYTES
    return False


def check_json(
    value: Any,
    where: str,
    *,
    error: type[LangGraphRecallError] = InvalidValueError,
    max_bytes: int = MAX_VALUE_BYTES,
) -> int:
    """Check that ``value`` is JSON every backend stores and reads back the same way, and
    return its approximate size in bytes.

    JSON here: ``None``, ``bool``, ``int`` within 64 bits, finite ``float`` below ``1e16``
    (JSONB stores ``6.8e16`` as the numeral ``68215460816945770`` and reads back an int that
    is not even equal to the float), ``str``
    without NUL or unpaired surrogates, lists / tuples (read back as lists) and dicts with
    ``str`` keys (the same text rule), nested at most :data:`MAX_JSON_DEPTH` levels.
    Metadata must be JSON: Postgres stores it as JSONB (and filters on it there), so the
    Redis saver accepts exactly the same metadata. (LangGraph itself already removes NUL
    from top-level metadata strings before a saver sees them.)

    Raises:
        InvalidValueError: (or ``error``) naming the offending path and what to do.

    Example:
        ```python
        from langgraph_recall.checkpoint._values import check_json

        assert check_json({"source": "loop", "step": 1}, "metadata") > 0
        ```
    """
    size = 0
    stack: list[tuple[Any, tuple[Any, ...], int]] = [(value, (), 0)]
    push = stack.append
    while stack:
        item, keys, depth = stack.pop()
        kind = type(item)
        if kind is str:
            size += len(item) + 2
            if "\x00" in item:
                raise error(
                    f"{_path(where, keys)} contains a NUL character ('\\x00'), which Postgres "
                    "JSONB cannot store, so no saver accepts it there; remove it or encode the text"
                )
            if not item.isascii() and _surrogate_of(item, "") is not None:
                code_point = ord(next(ch for ch in item if 0xD800 <= ord(ch) <= 0xDFFF))
                raise _json_error(
                    error, _path(where, keys), f"an unpaired surrogate (U+{code_point:04X})"
                )
        elif item is None or kind is bool:
            size += 4
        elif kind is int:
            size += 8
            if not _INT_MIN <= item <= _INT_MAX:
                raise _json_error(error, _path(where, keys), "an integer beyond 64 bits")
        elif kind is float:
            size += 8
            if not math.isfinite(item):
                raise _json_error(
                    error, _path(where, keys), f"the float {item!r} (JSON has no NaN/inf)"
                )
            if "e+" in repr(item):  # Postgres JSONB prints it back as a different integer
                raise _json_error(
                    error,
                    _path(where, keys),
                    f"the float {item!r} (JSONB returns floats >= 1e16 as integers)",
                )
        elif kind is dict or kind is list or isinstance(item, (Mapping, list, tuple)):
            if depth >= MAX_JSON_DEPTH:
                raise _json_error(
                    error, _path(where, keys), f"nesting deeper than {MAX_JSON_DEPTH} levels"
                )
            if isinstance(item, (list, tuple)):
                for child in item:
                    push((child, keys, depth + 1))
                continue
            for key, child in item.items():
                if type(key) is not str:
                    raise _json_error(
                        error, f"{_path(where, keys)} key {_label(key)}", "a key that is not a str"
                    )
                push((key, (*keys, (key,)), depth + 1))  # (key,): the key itself
                push((child, (*keys, key), depth + 1))
        else:
            raise _json_error(error, _path(where, keys), f"a {kind.__name__} (not a JSON value)")
        if size > max_bytes:
            raise error(
                f"{where} is over {max_bytes:,} bytes; the savers store at most that much. "
                "Nothing was written."
            )
    return size


def _path(where: str, keys: tuple[Any, ...]) -> str:
    """``where['a']['b']`` (or ``where['a'] key 'b'`` for a dict key), built for messages."""
    text = where
    for key in keys:
        text += f" key {_label(key[0])}" if type(key) is tuple else f"[{_label(key)}]"
    return text


def _json_error(error: type[LangGraphRecallError], path: str, what: str) -> LangGraphRecallError:
    return error(
        f"{path} holds {what}; metadata and filters must be JSON (str without NUL, finite "
        "floats below 1e16, integers within 64 bits, bool, None, lists, dicts with str keys) "
        "that every backend stores alike. Nothing was written."
    )
