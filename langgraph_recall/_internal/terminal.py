"""Untrusted text made safe for a terminal or a log line: every control shown, none obeyed.

Stored memories, thread ids, history entries and model answers are user text. Written raw
to a terminal, ESC and the other C0/C1 control characters can clear the screen, move the
cursor, recolour or hide what follows; bidi overrides and invisible format characters
reorder or hide text; a line break forges a line of output. :func:`printable` replaces
each such code point with a visible escape (``\\x1b``, ``\\n``, ``\\u202e``), so the operator
sees that it was there and the terminal does nothing with it. It is the one function the
CLI writes stored text through (``Console`` applies it to every line it prints).

A *message* — an error, a warning, a note of the CLI's own — is text to read, not a record
to show verbatim: the words of a driver's error often end with a line break (libpq's do) or
span several lines. :func:`one_line` folds its line breaks into spaces (:func:`fold_lines`)
before it escapes what is left, so a message prints as one line of words, never with a
``\\n`` in it and never as a second, forged line.

Example:
    ```python
    from langgraph_recall._internal.terminal import one_line, printable

    assert printable("tea\\x1b[2J\\u202egnp.exe") == "tea\\\\x1b[2J\\\\u202egnp.exe"
    assert printable("Zhang San 张三 ✓") == "Zhang San 张三 ✓"
    assert one_line("invalid URI query parameter\\n") == "invalid URI query parameter"
    ```
"""

from __future__ import annotations

import unicodedata

__all__ = ["fold_lines", "is_dangerous", "one_line", "printable"]

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
_JOINERS = "\u200c\u200d"  # zero-width (non-)joiners: part of emoji and Indic spelling
_DANGEROUS_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_CLOSING = ")]}>,.;:!?"  # a folded line break before these leaves no space


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


def fold_lines(text: object) -> str:
    """``text`` on one line: its lines (split at every line break Python knows, tabs read as
    spaces) stripped and joined by one space (none before closing punctuation); empty lines
    and trailing breaks vanish. No other character changes: for composing a message from
    another library's words.

    Example:
        ```python
        from langgraph_recall._internal.terminal import fold_lines

        assert fold_lines("bad port\\n") == "bad port"
        assert fold_lines("ERROR: x\\r\\nDETAIL:\\tkey (a)\\u2028") == "ERROR: x DETAIL: key (a)"
        ```
    """
    lines = str(text).replace("\t", " ").splitlines()
    folded = ""
    for line in lines:
        stripped = line.strip()
        if stripped:
            glue = "" if not folded or stripped[0] in _CLOSING else " "
            folded += glue + stripped
    return folded


def one_line(text: object) -> str:
    """A message for the terminal: :func:`fold_lines`, then :func:`printable` (every other
    dangerous code point shown as its escape). A line break in it never prints as the two
    characters ``\\n`` nor starts a line of output.

    Example:
        ```python
        from langgraph_recall._internal.terminal import one_line

        assert one_line('malformed ("%zz"\\n); use x') == 'malformed ("%zz"); use x'
        assert one_line("a\\n\\nb\\x1b[2J") == "a b\\\\x1b[2J"
        ```
    """
    return printable(fold_lines(text))
