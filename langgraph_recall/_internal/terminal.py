"""Untrusted text made safe for a terminal or a log line: every control shown, none obeyed.

Stored memories, thread ids, history entries and model answers are user text. Written raw
to a terminal, ESC and the other C0/C1 control characters can clear the screen, move the
cursor, recolour or hide what follows; bidi overrides and invisible format characters
reorder or hide text; a line break forges a line of output. :func:`printable` replaces
each such code point with a visible escape (``\\x1b``, ``\\n``, ``\\u202e``), so the operator
sees that it was there and the terminal does nothing with it. It is the one function the
CLI writes stored text through (``Console`` applies it to every line it prints).

Example:
    ```python
    from langgraph_recall._internal.terminal import printable

    assert printable("tea\\x1b[2J\\u202egnp.exe") == "tea\\\\x1b[2J\\\\u202egnp.exe"
    assert printable("Zhang San 张三 ✓") == "Zhang San 张三 ✓"
    ```
"""

from __future__ import annotations

import unicodedata

__all__ = ["is_dangerous", "printable"]

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
_JOINERS = "\u200c\u200d"  # zero-width (non-)joiners: part of emoji and Indic spelling
_DANGEROUS_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def is_dangerous(ch: str) -> bool:
    """Whether the code point ``ch`` must not reach a terminal as is: C0 and C1 controls
    and DEL (``Cc``), format characters such as bidi overrides and zero-width spaces
    (``Cf``, except the two joiners), line and paragraph separators, lone surrogates.

    Example:
        ```python
        from langgraph_recall._internal.terminal import is_dangerous

        assert is_dangerous("\\x1b") and is_dangerous("\\x9b") and is_dangerous("\\u2066")
        assert not is_dangerous("a") and not is_dangerous("\\u200d")
        ```
    """
    return ch not in _JOINERS and unicodedata.category(ch) in _DANGEROUS_CATEGORIES


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: object) -> str:
    """``text`` with every dangerous code point (:func:`is_dangerous`) shown as its escape.

    Example:
        ```python
        from langgraph_recall._internal.terminal import printable

        assert printable("a\\nb\\x9b") == "a\\\\nb\\\\x9b"
        ```
    """
    value = str(text)
    if not any(is_dangerous(ch) for ch in value):
        return value
    return "".join(_escape(ch) if is_dangerous(ch) else ch for ch in value)
