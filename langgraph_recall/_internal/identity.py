"""Identity lookup for memory nodes: ``user_id`` / ``thread_id``, namespace templates and
the reversible encoding of identity values into namespace labels.

Values come from LangGraph's runtime context first (``graph.invoke(..., context=...)``,
a dataclass, pydantic model, TypedDict or plain dict) and fall back to
``config["configurable"]``. Pure functions: they receive the runtime context and the
config and do no I/O.

Identity values are user ids as apps have them (``alice@example.com``, ``org.team/user``,
unicode), but a namespace label may not hold ``.`` (LangGraph's separator), a NUL or an
unpaired surrogate, and a label ``*`` is a wildcard in LangGraph's namespace matching.
:func:`encode_label` percent-encodes exactly those characters and the escape character
``%`` itself (as the ``%XX`` of their UTF-8 bytes), so the encoding is **reversible**
(:func:`decode_label`) and **collision-free** (distinct ids never share a label); an id
without any of them keeps its label unchanged.

Example:
    ```python
    from langgraph_recall._internal.identity import decode_label, format_namespace

    ns = format_namespace(
        ("memories", "{user_id}"), context=None,
        config={"configurable": {"user_id": "alice@example.com"}},
    )
    assert ns == ("memories", "alice@example%2Ecom")
    assert decode_label(ns[1]) == "alice@example.com"
    ```
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from langgraph_recall.errors import ConfigurationError, InvalidNamespaceError

__all__ = [
    "ESCAPE",
    "RESERVED_CHARACTERS",
    "decode_label",
    "encode_label",
    "format_namespace",
    "lookup_identity",
    "parse_namespace",
    "require_identity",
    "template_fields",
]

ESCAPE = "%"
"""The escape character of encoded labels (always encoded itself)."""
RESERVED_CHARACTERS = frozenset("%.*\x00")
"""Characters :func:`encode_label` always encodes: the escape, LangGraph's label separator,
its wildcard and NUL (plus every unpaired surrogate, which no label can store)."""

_MISSING = object()
_HEX = frozenset("0123456789ABCDEF")


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
        The value as a string (``str(value)``: ``123`` and ``"123"`` are one identity),
        or ``None`` when neither source has it.

    Example:
        ```python
        from langgraph_recall._internal.identity import lookup_identity

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
        from langgraph_recall._internal.identity import require_identity

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


# -- the label encoding ---------------------------------------------------------------
def _needs_escape(char: str, extra: frozenset[str]) -> bool:
    return char in RESERVED_CHARACTERS or char in extra or "\ud800" <= char <= "\udfff"


def encode_label(value: str, *, also: Iterable[str] = ()) -> str:
    """Encode an identity value as a namespace label (reversible, collision-free).

    ``%``, ``.``, ``*``, NUL, unpaired surrogates and the characters in ``also`` become
    ``%XX`` escapes of their UTF-8 bytes (upper-case hex); everything else — ``@``,
    ``/``, spaces, any unicode letter — is kept as is, so ids without those characters
    keep their label.

    Args:
        value: The identity value (``user_id``, ...).
        also: More characters to escape (used for namespace segments that hold several
            placeholders, whose literal text must not appear inside a value).

    Example:
        ```python
        from langgraph_recall._internal.identity import encode_label

        assert encode_label("alice@example.com") == "alice@example%2Ecom"
        assert encode_label("org.team/user") == "org%2Eteam/user"
        assert encode_label("u1") == "u1"
        ```
    """
    extra = frozenset(also)
    if not any(_needs_escape(char, extra) for char in value):
        return value
    parts: list[str] = []
    for char in value:
        if _needs_escape(char, extra):
            parts.append("".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass")))
        else:
            parts.append(char)
    return "".join(parts)


def decode_label(label: str, *, also: Iterable[str] = ()) -> str:
    """Inverse of :func:`encode_label` (with the same ``also``).

    Raises:
        InvalidNamespaceError: ``label`` is not the encoding of any value (a bad or
            unneeded escape, or an unescaped reserved character).

    Example:
        ```python
        from langgraph_recall._internal.identity import decode_label

        assert decode_label("alice@example%2Ecom") == "alice@example.com"
        assert decode_label("u1%252E") == "u1%2E"
        ```
    """
    if ESCAPE not in label:
        decoded = label
    else:
        data = bytearray()
        index = 0
        while index < len(label):
            char = label[index]
            hexpair = label[index + 1 : index + 3]
            if char == ESCAPE and len(hexpair) == 2 and set(hexpair) <= _HEX:
                data.append(int(hexpair, 16))
                index += 3
            else:
                data.extend(char.encode("utf-8", "surrogatepass"))
                index += 1
        try:
            decoded = bytes(data).decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            decoded = ""  # rejected just below: no value encodes to this label
    if not decoded or encode_label(decoded, also=also) != label:
        raise InvalidNamespaceError(
            f"namespace label {label!r} is not an encoded identity value (labels encode "
            "'%', '.', '*', NUL and unpaired surrogates as %XX, upper-case hex)"
        )
    return decoded


# -- templates ------------------------------------------------------------------------
@dataclass(frozen=True)
class _Segment:
    """One template segment: literal texts around its placeholders (pure data)."""

    literals: tuple[str, ...]  # len(fields) + 1 pieces
    fields: tuple[str, ...]

    @property
    def extra(self) -> frozenset[str]:
        """Characters a value must not hold unescaped: the literal text, when the segment
        has several placeholders (so each value's end stays unambiguous)."""
        if len(self.fields) < 2:
            return frozenset()
        return frozenset("".join(self.literals))

    def fill(self, values: Mapping[str, str]) -> str:
        parts = [self.literals[0]]
        for name, literal in zip(self.fields, self.literals[1:], strict=True):
            parts += [encode_label(values[name], also=self.extra), literal]
        return "".join(parts)

    def pattern(self) -> re.Pattern[str]:
        if len(self.fields) < 2:
            value = "(.+)"
        else:
            forbidden = re.escape("".join(sorted(self.extra | {ESCAPE})))
            value = f"((?:%[0-9A-F]{{2}}|[^{forbidden}])+)"
        body = re.escape(self.literals[0]) + "".join(
            value + re.escape(literal) for literal in self.literals[1:]
        )
        return re.compile(body, re.DOTALL)


def _segments(template: Iterable[str]) -> tuple[_Segment, ...]:
    checked = tuple(template)
    for segment in checked:
        if not isinstance(segment, str):
            raise ConfigurationError(
                f"namespace template {checked!r} has a {type(segment).__name__} segment; "
                "use strings such as 'memories' or '{user_id}'"
            )
    return _parse_template(checked)


@lru_cache(maxsize=256)
def _parse_template(template: tuple[str, ...]) -> tuple[_Segment, ...]:
    segments: list[_Segment] = []
    for segment in template:
        literals: list[str] = []
        fields: list[str] = []
        pending = ""
        try:
            parsed = list(string.Formatter().parse(segment))
        except ValueError as exc:
            raise ConfigurationError(
                f"namespace template segment {segment!r} is malformed ({exc}); "
                "use '{user_id}' placeholders and '{{' / '}}' for literal braces"
            ) from exc
        for literal, name, spec, conversion in parsed:
            pending += literal
            if name is None:
                continue
            _check_field(template, segment, name, spec, conversion)
            if fields and not pending:
                raise ConfigurationError(
                    f"namespace template segment {segment!r} has adjacent placeholders; "
                    "separate them with literal text, e.g. '{org}-{user_id}'"
                )
            if fields and ESCAPE in pending:
                raise ConfigurationError(
                    f"namespace template segment {segment!r} separates placeholders with "
                    "'%', the escape character of identity labels; use another separator"
                )
            literals.append(pending)
            fields.append(name)
            pending = ""
        literals.append(pending)
        if len(fields) > 1 and ESCAPE in literals[-1]:
            raise ConfigurationError(
                f"namespace template segment {segment!r} has '%' after a placeholder; "
                "'%' is the escape character of identity labels"
            )
        segments.append(_Segment(tuple(literals), tuple(fields)))
    return tuple(segments)


def _check_field(
    template: tuple[str, ...], segment: str, name: str, spec: str | None, conversion: str | None
) -> None:
    if not name:
        raise ConfigurationError(
            f"namespace template {template!r} has an empty '{{}}' placeholder; "
            "name it, e.g. '{user_id}'"
        )
    if not name.isidentifier():
        raise ConfigurationError(
            f"namespace template segment {segment!r}: placeholder {name!r} must be a plain "
            "name such as 'user_id' (no attribute or index access)"
        )
    if spec or conversion:
        raise ConfigurationError(
            f"namespace template segment {segment!r}: placeholder {name!r} takes no format "
            "spec or conversion (a value is never cut or reformatted, so ids stay distinct)"
        )


def template_fields(template: tuple[str, ...]) -> list[str]:
    """Names of the ``{placeholders}`` used in a namespace template (first use order).

    Raises:
        ConfigurationError: An unnamed, dotted or formatted placeholder (``{}``,
            ``{user.name}``, ``{user_id:.3}``), adjacent placeholders (``{a}{b}``) or a
            ``%`` between placeholders of one segment.

    Example:
        ```python
        from langgraph_recall._internal.identity import template_fields

        assert template_fields(("memories", "{user_id}")) == ["user_id"]
        ```
    """
    names: list[str] = []
    for segment in _segments(template):
        for name in segment.fields:
            if name not in names:
                names.append(name)
    return names


def format_namespace(
    template: tuple[str, ...], *, context: Any, config: Mapping[str, Any] | None
) -> tuple[str, ...]:
    """Fill a namespace template such as ``("memories", "{user_id}")``.

    Every value is encoded with :func:`encode_label` (a segment holding several
    placeholders also encodes its literal text inside the values), so any id is safe and
    two distinct ids never share a namespace; :func:`parse_namespace` is the inverse.

    Raises:
        ConfigurationError: a placeholder has no value (the message names the key), the
            template is malformed (see :func:`template_fields`), or a literal segment is
            empty or contains a ``.``.

    Example:
        ```python
        from langgraph_recall._internal.identity import format_namespace

        ns = format_namespace(("m", "{user_id}"), context={"user_id": "a.b"}, config=None)
        assert ns == ("m", "a%2Eb")
        ```
    """
    if not template:
        raise ConfigurationError("namespace template is empty; use e.g. ('memories', '{user_id}')")
    values = {
        name: require_identity(name, context=context, config=config)
        for name in template_fields(template)
    }
    namespace = tuple(segment.fill(values) for segment in _segments(template))
    for index, segment in enumerate(namespace):
        if not segment or "." in segment:
            raise ConfigurationError(
                f"namespace segment {index} of {namespace!r} is empty or contains '.'; "
                "use non-empty literal labels without dots"
            )
    return namespace


def parse_namespace(template: tuple[str, ...], namespace: tuple[str, ...]) -> dict[str, str]:
    """Inverse of :func:`format_namespace`: the identity values a namespace was filled with.

    Raises:
        InvalidNamespaceError: ``namespace`` was not produced by ``template`` (wrong
            length, literal text or encoding, or one field with two different values).

    Example:
        ```python
        from langgraph_recall._internal.identity import parse_namespace

        values = parse_namespace(("m", "{org}-{user_id}"), ("m", "acme-bob%2D1"))
        assert values == {"org": "acme", "user_id": "bob-1"}
        ```
    """
    segments = _segments(template)
    if len(segments) != len(namespace):
        raise InvalidNamespaceError(
            f"namespace {namespace!r} has {len(namespace)} labels; template {template!r} "
            f"has {len(segments)}"
        )
    values: dict[str, str] = {}
    for segment, label in zip(segments, namespace, strict=True):
        if not segment.fields:
            if label != segment.literals[0]:
                raise InvalidNamespaceError(
                    f"label {label!r} does not match template segment {segment.literals[0]!r}"
                )
            continue
        match = segment.pattern().fullmatch(label)
        if match is None:
            raise InvalidNamespaceError(f"label {label!r} does not match template {template!r}")
        for name, raw in zip(segment.fields, match.groups(), strict=True):
            value = decode_label(raw, also=segment.extra)
            if values.setdefault(name, value) != value:
                raise InvalidNamespaceError(
                    f"namespace {namespace!r} holds two values for {name!r}: "
                    f"{values[name]!r} and {value!r}"
                )
    return values
