"""Text normalised for matching, with every character mapped back to the original text.

Detectors (the PII filter, the offline rules) match on one canonical form of the text and
act on the *original* text: :func:`normalize_for_matching` returns a :class:`MatchText`
whose ``text`` is

* NFKC-normalised per grapheme (a letter with its combining marks is composed, and the
  marks that remain are folded into the letter they modify), so fullwidth forms
  (``４１１１``, ``＠``), ligatures and compatibility characters read as their plain forms;
* free of zero-width and invisible format characters (ZWSP, ZWJ/ZWNJ, word joiner, BOM,
  soft hyphen, bidi controls);
* written with ASCII separators: every Unicode dash or minus → ``-``, every slash →
  ``/``, dot-like marks (``·``, ``。``, ``・``, one-dot leader) → ``.``, every space → ``" "``;
* written with ASCII digits (any Unicode decimal digit: Arabic-Indic, Devanagari, …).

Letters keep their case and script (``josé``, ``张三``), so patterns decide case-folding.
:meth:`MatchText.span` maps a span of ``text`` back to the span of the original text
that produced it, so a redaction removes exactly the user's characters.

Example:
    ```python
    from langgraph_recall.extraction.textnorm import normalize_for_matching

    m = normalize_for_matching("card ４１１１–1111\\u200b")
    assert m.text == "card 4111-1111"
    assert m.span(5, 14) == (5, 14)  # the dash and digits, zero-width space not included
    ```
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = ["CJK_RUN", "ENGLISH_STOP_WORDS", "MatchText", "normalize_for_matching"]

ENGLISH_STOP_WORDS = frozenset(
    str.split(
        "a about above after again against all am an and any are as at be because been before "
        "being below between both but by can could did do does doing down during each few for "
        "from further had has have having he her here hers herself him himself his how i if "
        "in into is it its itself just me more most my myself no nor not now of off on once "
        "only or other our ours ourselves out over own same she should so some such than that "
        "the their theirs them themselves then there these they this those through to too "
        "under until up very was we were what when where which while who whom why will with "
        "would you your yours yourself yourselves s t d ll m re ve"
    )
)
"""English function words (and the pieces of split contractions): the one list the benchmarks'
lexical baselines, the feedback experiment and the update reader start from."""

CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
"""A run of Chinese, Japanese (kana) or Korean characters: scripts written without spaces
between words."""

_INVISIBLE = frozenset(
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180e\u200b\u200c\u200d"
    "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064\u2066\u2067"
    "\u2068\u2069\u206a\u206b\u206c\u206d\u206e\u206f\u3164\ufeff\uffa0"
)
_DASHES = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\u02d7\u2e3a\u2e3b\ufe58")
_SLASHES = frozenset("\u2044\u2215\u29f8\u2571\u27cb")
_DOTS = frozenset("\u00b7\u0387\u2022\u2027\u2219\u22c5\u3002\uff61\u30fb\uff65\u2e31")


def _plain(char: str) -> str:
    """The matching form of one NFKC-normalised character ('' to drop it)."""
    if char in _INVISIBLE:
        return ""
    if char.isascii():
        return char
    if char in _DASHES:
        return "-"
    if char in _SLASHES:
        return "/"
    if char in _DOTS:
        return "."
    category = unicodedata.category(char)
    if category == "Pd":
        return "-"
    if category == "Zs":
        return " "
    if category in ("Zl", "Zp"):
        return "\n"
    if category.startswith("M"):
        return ""  # a mark left over after composition: folded into its base
    if category == "Cf":
        return ""
    digit = unicodedata.decimal(char, None)
    if digit is not None:
        return str(digit)
    return char


@dataclass(frozen=True)
class MatchText:
    """``text`` (normalised) plus, per character, the original span it came from.

    Attributes:
        original: The text as given.
        text: The normalised text patterns run on.
        starts: ``starts[i]`` is the original index where ``text[i]`` begins (``None``:
            the identity map, used when normalising changed nothing).
        ends: ``ends[i]`` is the original index where ``text[i]`` ends.

    Example:
        ```python
        from langgraph_recall.extraction.textnorm import normalize_for_matching

        m = normalize_for_matching("ann＠example.com")
        assert m.text == "ann@example.com" and m.span(0, 15) == (0, 15)
        ```
    """

    original: str
    text: str
    starts: tuple[int, ...] | None = None
    ends: tuple[int, ...] | None = None

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span that produced ``text[start:end]`` (``start < end``)."""
        if self.starts is None or self.ends is None:
            return start, end
        return self.starts[start], self.ends[end - 1]


_CHANGES: dict[str, bool] = {}  # per BMP character: does normalisation change it?


def _changes(char: str) -> bool:
    known = _CHANGES.get(char)
    if known is None:
        known = (
            ord(char) > 0xFFFF
            or unicodedata.combining(char) != 0
            or unicodedata.normalize("NFKC", char) != char
            or _plain(char) != char
        )
        if ord(char) <= 0xFFFF:  # bounded: at most the 65,536 BMP characters
            _CHANGES[char] = known
    return known


def normalize_for_matching(text: str) -> MatchText:
    """Normalise ``text`` for matching (see the module docs) and keep the offset map.

    ASCII text is returned as is (the identity map); elsewhere only the characters that
    normalisation changes (with the letter their marks belong to) are processed one by one.

    Example:
        ```python
        from langgraph_recall.extraction.textnorm import normalize_for_matching

        m = normalize_for_matching("jose\u0301@example.com")  # decomposed é
        assert m.text == "josé@example.com" and m.span(0, 4) == (0, 5)
        ```
    """
    if text.isascii():
        return MatchText(text, text)
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    cursor = 0
    for index in [i for i, char in enumerate(text) if not char.isascii() and _changes(char)]:
        start = index
        if start < cursor:
            continue  # a mark already taken with its letter
        if start > cursor and unicodedata.combining(text[start]):
            start -= 1  # the mark belongs to the letter before it
        pieces.append(text[cursor:start])
        starts.extend(range(cursor, start))
        ends.extend(range(cursor + 1, start + 1))
        end = index + 1
        while end < len(text) and unicodedata.combining(text[end]):
            end += 1
        for char in unicodedata.normalize("NFKC", text[start:end]):
            for plain in _plain(char):
                pieces.append(plain)
                starts.append(start)
                ends.append(end)
        cursor = end
    pieces.append(text[cursor:])
    starts.extend(range(cursor, len(text)))
    ends.extend(range(cursor + 1, len(text) + 1))
    return MatchText(text, "".join(pieces), tuple(starts), tuple(ends))
