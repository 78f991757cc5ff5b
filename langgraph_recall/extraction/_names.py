"""Personal names in self-introductions (pure; used by the offline rules).

A name is one to three capitalised words in any script (``Gina``, ``José Ortega``,
``Łukasz``, ``Jean-Luc``, ``O'Brien``) none of which is a common word
(:data:`~langgraph_recall.extraction._lexicon.COMMON_WORDS`: ``Tired``, ``Not``, ``Back``,
``American``…), followed by the end of the clause, punctuation or a word that continues
an introduction ("and", "from", "here"). :func:`introductions` finds the names in

* "I'm Gina." / "I am Gina" (anywhere),
* "This is Gina" / "Gina here" (the opening of a message, or right after a greeting).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from langgraph_recall.extraction._lexicon import COMMON_WORDS

__all__ = ["UPPER", "greeting_only", "introductions", "name_value", "plain_text"]

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'"})


def plain_text(text: str) -> str:
    """NFKC with typographic apostrophes as ``'`` ("I’m", fullwidth letters): the form
    the offline rules and the pre-filter read.

    Example:
        ```python
        from langgraph_recall.extraction._names import plain_text

        assert plain_text("Ｉ’ｍ Ｇｉｎａ") == "I'm Gina"
        ```
    """
    return unicodedata.normalize("NFKC", text).translate(_APOSTROPHES)


def _char_class(chars: Iterable[str]) -> str:
    """A regex character-class body matching exactly ``chars`` (as ranges).

    Example:
        ```python
        from langgraph_recall.extraction._names import _char_class

        assert _char_class("abcx") == "a-cx"
        ```
    """
    ranges: list[tuple[int, int]] = []
    for code in sorted({ord(c) for c in chars}):
        if ranges and code == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in ranges
    )


UPPER = _char_class(
    [chr(code) for code in range(0x10000) if unicodedata.category(chr(code)) in ("Lu", "Lt")]
)
"""Character-class body of every upper- and title-case letter of the BMP (``É``, ``Ł``, ``Ж``)."""

_WORD = rf"[{UPPER}][\w'\-]*"
_NAME = rf"(?P<v>{_WORD}(?:\s+{_WORD}){{0,2}})"
_GREETING = (
    r"(?:hi|hello|hey|hiya|howdy|greetings|good\s+(?:morning|afternoon|evening|day)|"
    r"thanks|thank\s+you|dear\s+\w+)(?:\s+(?:there|all|everyone|team|folks))?"
)
_I_AM = re.compile(rf"(?<![\w'])(?i:i'm|i\s+am)\s+{_NAME}")
_THIS_IS = re.compile(rf"^\s*(?:(?i:{_GREETING})[\s,!.]+)?(?i:this\s+is)\s+{_NAME}")
_HERE = re.compile(rf"^\s*(?:(?i:{_GREETING})[\s,!.]+)?{_NAME}\s+(?i:here)(?![\w'])")
_GREETING_ONLY = re.compile(rf"^\s*(?i:{_GREETING})\s*[.!,]*\s*$")
_FOLLOWERS = re.compile(
    r"^\s*(?:$|[,.!;:…)\-–—]|(?i:and|from|here|by|speaking|again|btw|at|with|but|too|of|"
    r"calling|writing|to)(?![\w']))"
)
_AFTER_HERE = re.compile(r"^\s*(?:$|[,.!;:…)\-–—]|(?i:from|again|to|with|and|at)(?![\w']))")


def _is_name_word(word: str) -> bool:
    if word.lower() in COMMON_WORDS or word.lower().endswith(("'s", "'")):
        return False
    parts = word.split("-")
    return all(part[:1].isupper() for part in parts if part) and word[0].isupper()


def name_value(value: str) -> str | None:
    """The name at the start of ``value`` (leading name words), or ``None``.

    Example:
        ```python
        from langgraph_recall.extraction._names import name_value

        assert name_value("Gina Smith") == "Gina Smith"
        assert name_value("Gina Today") == "Gina" and name_value("Not Sure") is None
        ```
    """
    kept: list[str] = []
    for word in value.split():
        if not _is_name_word(word):
            break
        kept.append(word)
    return " ".join(kept) or None


def _name(match: re.Match[str] | None, text: str, followers: re.Pattern[str]) -> str | None:
    if match is None:
        return None
    name = name_value(match["v"])
    if name is None:
        return None
    rest = text[match.start("v") + len(name) :]
    return name if followers.match(rest) else None


def greeting_only(sentence: str) -> bool:
    """True for a sentence that only greets ("Hi!", "Good morning, all.")."""
    return bool(_GREETING_ONLY.match(sentence))


def introductions(clause: str, *, opening: bool) -> list[str]:
    """Names the clause introduces its speaker by.

    Args:
        clause: One first-person clause of a user message.
        opening: The clause opens the message (or follows a greeting), where "This is X"
            and "X here" are introductions rather than descriptions ("This is great").

    Example:
        ```python
        from langgraph_recall.extraction._names import introductions

        assert introductions("Hi, I'm Gina!", opening=False) == ["Gina"]
        assert introductions("Gina here", opening=True) == ["Gina"]
        assert introductions("I'm Not Sure", opening=True) == []
        ```
    """
    names = [_name(m, clause, _FOLLOWERS) for m in _I_AM.finditer(clause)]
    if opening:
        names.append(_name(_THIS_IS.match(clause), clause, _FOLLOWERS))
        here = _HERE.match(clause)
        if here is not None:
            name = name_value(here["v"])
            if name is not None and name == here["v"].strip():
                rest = clause[here.end() :]
                names.append(name if _AFTER_HERE.match(rest) else None)
    return [name for name in names if name]
