"""Namespace validation and the segment-exact text encoding used by the SQL backends.

A namespace ``("memories", "u_1")`` is stored as ``"memories.u_1."``: every label is
followed by ``.``. Labels may not contain ``.``, so a prefix ``("memories", "u_1")``
selects exactly the rows whose encoding starts with ``"memories.u_1."`` — never
``("memories", "u_10")`` — and that set is the byte range ``["memories.u_1.",
"memories.u_1/")`` under the ``C`` collation, which a plain btree index answers.

Example:
    ```python
    from langgraph_recall.store._namespace import encode_namespace, prefix_range

    assert encode_namespace(("memories", "u_1")) == "memories.u_1."
    assert prefix_range(("memories", "u_1")) == ("memories.u_1.", "memories.u_1/")
    ```
"""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.store.base import MatchCondition

from langgraph_recall.errors import InvalidNamespaceError

__all__ = [
    "MAX_NAMESPACE_BYTES",
    "decode_namespace",
    "encode_namespace",
    "is_utf8",
    "matches_conditions",
    "prefix_range",
    "validate_namespace",
    "validate_prefix",
]

SEPARATOR = "."
MAX_NAMESPACE_BYTES = 1024
_AFTER_SEPARATOR = chr(ord(SEPARATOR) + 1)  # "/"


def _check_labels(namespace: object, what: str) -> tuple[str, ...]:
    if not isinstance(namespace, (tuple, list)):
        raise InvalidNamespaceError(
            f"{what} must be a tuple of strings such as ('memories', 'user-1'), "
            f"got {type(namespace).__name__}"
        )
    for index, label in enumerate(namespace):
        if not isinstance(label, str):
            raise InvalidNamespaceError(
                f"{what} label {index} is a {type(label).__name__}; labels must be strings"
            )
        if not label:
            raise InvalidNamespaceError(f"{what} label {index} is empty; use a non-empty string")
        if SEPARATOR in label:
            raise InvalidNamespaceError(
                f"{what} label {label!r} contains '.'; labels cannot contain periods"
            )
        if "\x00" in label:
            raise InvalidNamespaceError(f"{what} label {index} contains a NUL byte")
        if not is_utf8(label):
            raise InvalidNamespaceError(
                f"{what} label {index} contains an unpaired surrogate; labels must be valid UTF-8"
            )
    size = sum(len(label.encode()) + 1 for label in namespace)
    if size > MAX_NAMESPACE_BYTES:
        raise InvalidNamespaceError(
            f"{what} is {size} bytes long; the limit is {MAX_NAMESPACE_BYTES} (use shorter labels)"
        )
    return tuple(namespace)


def is_utf8(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (no unpaired surrogates).

    Example:
        ```python
        from langgraph_recall.store._namespace import is_utf8

        assert is_utf8("ü") and not is_utf8("\\ud800")
        ```
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def validate_namespace(namespace: object, *, allow_reserved: bool = False) -> tuple[str, ...]:
    """Check a full item namespace (non-empty, labels non-empty strings without ``.``).

    The root label ``langgraph`` is refused unless ``allow_reserved``: as in LangGraph,
    the rule belongs to ``put()`` (users' writes), not to ``batch()`` ops, which LangGraph
    itself uses to write there.

    Example:
        ```python
        from langgraph_recall.store._namespace import validate_namespace

        validate_namespace(("memories", "u1"))
        ```
    """
    labels = _check_labels(namespace, "namespace")
    if not labels:
        raise InvalidNamespaceError("namespace is empty; use e.g. ('memories', user_id)")
    if labels[0] == "langgraph" and not allow_reserved:
        raise InvalidNamespaceError("the root label 'langgraph' is reserved by LangGraph")
    return labels


def validate_prefix(prefix: object) -> tuple[str, ...]:
    """Check a namespace prefix (may be empty; ``*`` is allowed as a literal label here).

    Example:
        ```python
        from langgraph_recall.store._namespace import validate_prefix

        assert validate_prefix(()) == ()
        ```
    """
    return _check_labels(prefix, "namespace prefix")


def encode_namespace(namespace: Sequence[str]) -> str:
    """Encode a namespace as text: each label followed by ``.``.

    Example:
        ```python
        from langgraph_recall.store._namespace import encode_namespace

        assert encode_namespace(("a", "b")) == "a.b."
        ```
    """
    return "".join(label + SEPARATOR for label in namespace)


def decode_namespace(encoded: str) -> tuple[str, ...]:
    """Inverse of :func:`encode_namespace`.

    Example:
        ```python
        from langgraph_recall.store._namespace import decode_namespace

        assert decode_namespace("a.b.") == ("a", "b")
        ```
    """
    return tuple(encoded.split(SEPARATOR)[:-1])


def prefix_range(prefix: Sequence[str]) -> tuple[str, str] | None:
    """Half-open ``[low, high)`` range (C collation) of encodings under ``prefix``.

    ``None`` for the empty prefix (everything matches).

    Example:
        ```python
        from langgraph_recall.store._namespace import prefix_range

        assert prefix_range(("a",)) == ("a.", "a/")
        assert prefix_range(()) is None
        ```
    """
    if not prefix:
        return None
    low = encode_namespace(prefix)
    return low, low[:-1] + _AFTER_SEPARATOR


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    if not path:
        return True
    return all(want == "*" or want == got for want, got in zip(path, part, strict=True))


def matches_conditions(
    namespace: tuple[str, ...], conditions: Sequence[MatchCondition] | None
) -> bool:
    """Whether ``namespace`` satisfies every prefix/suffix condition (``*`` = any label).

    Example:
        ```python
        from langgraph_recall.store._namespace import matches_conditions

        from langgraph.store.base import MatchCondition

        assert matches_conditions(("a", "b"), [MatchCondition("suffix", ("*", "b"))])
        ```
    """
    return all(_matches(condition, namespace) for condition in conditions or ())
