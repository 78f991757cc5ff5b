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
    assert ns == ("memories", "user_id:alice@example%2Ecom")
    assert decode_label(ns[1].removeprefix("user_id:")) == "alice@example.com"
    ```
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from langgraph_recall.errors import ConfigurationError, InvalidNamespaceError

__all__ = [
    "ESCAPE",
    "MARKER",
    "RESERVED_CHARACTERS",
    "decode_label",
    "encode_label",
    "format_namespace",
    "legacy_namespace",
    "lookup_identity",
    "parse_legacy_namespace",
    "parse_namespace",
    "require_identity",
    "template_fields",
    "typed_label",
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
MARKER = ":"
"""Separates a placeholder's name from its value in a label (``user_id:42``). Literal
segments may not hold it, so a label holds it exactly when it is an identity value."""


@dataclass(frozen=True)
class _Segment:
    """One template segment: a literal label, or exactly one placeholder (pure data)."""

    literal: str | None
    field: str | None

    def fill(self, values: Mapping[str, str]) -> str:
        if self.field is None:
            assert self.literal is not None
            return self.literal
        return typed_label(self.field, values[self.field])

    def legacy(self, values: Mapping[str, str]) -> str:
        """The label 0.1 wrote: the bare encoded value (no marker)."""
        if self.field is None:
            assert self.literal is not None
            return self.literal
        return encode_label(values[self.field])


def typed_label(field: str, value: str) -> str:
    """The label of a placeholder segment: ``<field>:<encoded value>``.

    The name is typed into the label, so labels of different fields (or of a field and a
    literal segment, which cannot hold ``:``) never meet: a user's namespace is never a
    prefix of another user's under any two layouts.

    Example:
        ```python
        from langgraph_recall._internal.identity import typed_label

        assert typed_label("user_id", "42") == "user_id:42"
        assert typed_label("org", "acme.io") == "org:acme%2Eio"
        ```
    """
    return f"{field}{MARKER}{encode_label(value)}"


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
        try:
            parsed = list(string.Formatter().parse(segment))
        except ValueError as exc:
            raise ConfigurationError(
                f"namespace template segment {segment!r} is malformed ({exc}); "
                "use '{user_id}' placeholders and '{{' / '}}' for literal braces"
            ) from exc
        fields = [
            (name, spec, conversion) for _, name, spec, conversion in parsed if name is not None
        ]
        text = "".join(literal for literal, *_ in parsed)
        if not fields:
            if MARKER in text:
                raise ConfigurationError(
                    f"namespace template segment {segment!r} holds {MARKER!r}, which marks "
                    "identity values in labels ('user_id:42'); use another character"
                )
            segments.append(_Segment(text, None))
            continue
        name, spec, conversion = fields[0]
        _check_field(template, segment, name, spec, conversion)
        if len(fields) > 1 or text:
            raise ConfigurationError(
                f"namespace template segment {segment!r} mixes a placeholder with text or "
                "other placeholders; give each placeholder a segment of its own, e.g. "
                "('memories', '{org}', '{user_id}'): its label is then 'org:<value>', which "
                "no other layout's label can equal, so no user's scope overlaps another's"
            )
        segments.append(_Segment(None, name))
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
            ``{user.name}``, ``{user_id:.3}``), a segment that mixes a placeholder with
            text or another placeholder (``"{org}-{user_id}"``), or a literal segment
            holding ``:``.

    Example:
        ```python
        from langgraph_recall._internal.identity import template_fields

        assert template_fields(("memories", "{user_id}")) == ["user_id"]
        ```
    """
    names: list[str] = []
    for segment in _segments(template):
        if segment.field is not None and segment.field not in names:
            names.append(segment.field)
    return names


def _values(
    template: tuple[str, ...], context: Any, config: Mapping[str, Any] | None
) -> dict[str, str]:
    if not template:
        raise ConfigurationError("namespace template is empty; use e.g. ('memories', '{user_id}')")
    return {
        name: require_identity(name, context=context, config=config)
        for name in template_fields(template)
    }


def _checked(namespace: tuple[str, ...]) -> tuple[str, ...]:
    for index, segment in enumerate(namespace):
        if not segment or "." in segment:
            raise ConfigurationError(
                f"namespace segment {index} of {namespace!r} is empty or contains '.'; "
                "use non-empty literal labels without dots"
            )
    return namespace


def format_namespace(
    template: tuple[str, ...], *, context: Any, config: Mapping[str, Any] | None
) -> tuple[str, ...]:
    """Fill a namespace template such as ``("memories", "{user_id}")``.

    Each placeholder segment becomes ``<field>:<value>`` (:func:`typed_label`; the value
    encoded with :func:`encode_label`), so any id is safe, two distinct ids never share a
    namespace, and **layouts are prefix-free**: user ``42``'s ``("memories",
    "user_id:42")`` is never a prefix of a namespace of org ``42``
    (``("memories", "org:42", "user_id:7")``). :func:`parse_namespace` is the inverse.

    Raises:
        ConfigurationError: a placeholder has no value (the message names the key), the
            template is malformed (see :func:`template_fields`), or a literal segment is
            empty or contains a ``.``.

    Example:
        ```python
        from langgraph_recall._internal.identity import format_namespace

        ns = format_namespace(("m", "{user_id}"), context={"user_id": "a.b"}, config=None)
        assert ns == ("m", "user_id:a%2Eb")
        ```
    """
    values = _values(template, context, config)
    return _checked(tuple(segment.fill(values) for segment in _segments(template)))


def legacy_namespace(template: tuple[str, ...], values: Mapping[str, Any]) -> tuple[str, ...]:
    """The namespace langgraph-recall 0.1 filled ``template`` with: bare encoded values, no
    field marker (``("memories", "42")``). Only for finding data written before 0.2
    (:func:`~langgraph_recall.erasure.forget_user` erases it, exactly that namespace and
    nothing under it, since 0.1 layouts could overlap).

    Example:
        ```python
        from langgraph_recall._internal.identity import legacy_namespace

        assert legacy_namespace(("memories", "{user_id}"), {"user_id": 42}) == ("memories", "42")
        ```
    """
    filled = _values(template, values, None)
    return _checked(tuple(segment.legacy(filled) for segment in _segments(template)))


def parse_legacy_namespace(template: tuple[str, ...], namespace: tuple[str, ...]) -> dict[str, str]:
    """Inverse of :func:`legacy_namespace` (labels without field marker, as 0.1 wrote them).

    Raises:
        InvalidNamespaceError: ``namespace`` was not produced by ``template`` in 0.1.

    Example:
        ```python
        from langgraph_recall._internal.identity import parse_legacy_namespace

        assert parse_legacy_namespace(("m", "{user_id}"), ("m", "a%2Eb")) == {"user_id": "a.b"}
        ```
    """
    segments = _segments(template)
    if len(segments) != len(namespace):
        raise InvalidNamespaceError(f"namespace {namespace!r} does not match {template!r}")
    values: dict[str, str] = {}
    for segment, label in zip(segments, namespace, strict=True):
        if segment.field is None:
            if label != segment.literal:
                raise InvalidNamespaceError(f"label {label!r} is not {segment.literal!r}")
            continue
        value = decode_label(label)
        if values.setdefault(segment.field, value) != value:
            raise InvalidNamespaceError(f"namespace {namespace!r}: two values of {segment.field}")
    return values


def parse_namespace(template: tuple[str, ...], namespace: tuple[str, ...]) -> dict[str, str]:
    """Inverse of :func:`format_namespace`: the identity values a namespace was filled with.

    Raises:
        InvalidNamespaceError: ``namespace`` was not produced by ``template`` (wrong
            length, literal text, field marker or encoding, or one field with two
            different values).

    Example:
        ```python
        from langgraph_recall._internal.identity import parse_namespace

        values = parse_namespace(("m", "{org}", "{user_id}"), ("m", "org:acme", "user_id:bob"))
        assert values == {"org": "acme", "user_id": "bob"}
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
        if segment.field is None:
            if label != segment.literal:
                raise InvalidNamespaceError(
                    f"label {label!r} does not match template segment {segment.literal!r}"
                )
            continue
        marker = f"{segment.field}{MARKER}"
        if not isinstance(label, str) or not label.startswith(marker):
            raise InvalidNamespaceError(
                f"label {label!r} is not a {segment.field!r} label ({marker}<value>)"
            )
        value = decode_label(label[len(marker) :])
        if values.setdefault(segment.field, value) != value:
            raise InvalidNamespaceError(
                f"namespace {namespace!r} holds two values for {segment.field!r}: "
                f"{values[segment.field]!r} and {value!r}"
            )
    return values
