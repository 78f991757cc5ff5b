"""Detect and remove PII from candidate memories before anything is written.

Pure regular expressions (plus a Luhn check for card numbers). Categories: ``email``,
``phone``, ``card`` (13–19 digits passing Luhn), ``national_id`` (US SSN, Chinese
resident ID, UK NINO), ``secret`` (API keys and tokens of well-known formats, and
``password/api key/token is …`` statements). ``PIIFilter(mode="drop")`` (the
default) discards a candidate that contains any; ``mode="redact"`` replaces each
match with ``[EMAIL]``, ``[PHONE]``, … and keeps the rest.

Example:
    ```python
    from langgraph_memory.extraction.pii import PIIFilter, find_pii

    assert [m.category for m in find_pii("mail me at ann@example.com")] == ["email"]
    assert PIIFilter(mode="redact").clean("card 4111 1111 1111 1111") == "card [CARD]"
    assert PIIFilter().clean("my key is sk-abcdefghijklmnopqrstuvwx") is None
    ```
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from langgraph_memory.errors import ConfigurationError

__all__ = ["PII_CATEGORIES", "PIIFilter", "PIIMatch", "find_pii", "luhn_valid"]

PII_CATEGORIES = ("email", "phone", "card", "national_id", "secret")

_EMAIL = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")
_SECRET_PATTERNS = [
    re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}"),  # OpenAI / Anthropic style
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),  # GitHub tokens
    re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),  # Slack tokens
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"),  # Google API key
    re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"),  # JWT
    re.compile(
        r"(?i)\b(?:password|passwd|passphrase|pin|secret|token|api[ _\-]?key|access[ _\-]?key)"
        r"(?:\s+(?:is|was))?\s*[:=]?\s*['\"]?[^\s'\",;]{4,}"
    ),
    re.compile(r"\b(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{32,}\b"),
]
_NATIONAL_ID_PATTERNS = [
    re.compile(r"\b\d{3}-\d{2}-\d{4}\b"),  # US SSN
    re.compile(r"\b[1-9]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx]\b"),
    re.compile(r"\b[A-CEGHJ-PR-TW-Z]{2}\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D]\b"),  # UK NINO
]
_CARD = re.compile(r"(?<![\d\-])(?:\d[ \-]?){12,18}\d(?![\d\-])")
_PHONE = re.compile(
    r"(?<![\w\-])(?:\+\d{1,3}[\s.\-]?)?(?:\(\d{1,4}\)[\s.\-]?)?\d{2,4}(?:[\s.\-]?\d{2,4}){1,4}(?![\w\-])"
)
_CN_MOBILE = re.compile(r"(?<!\d)1[3-9]\d{9}(?!\d)")


@dataclass(frozen=True)
class PIIMatch:
    """One PII finding: its category and character span in the text.

    Example:
        ```python
        m = PIIMatch("email", 0, 5)
        assert m.placeholder == "[EMAIL]"
        ```
    """

    category: str
    start: int
    end: int

    @property
    def placeholder(self) -> str:
        """The redaction token for this category, e.g. ``[PHONE]``."""
        return "[" + self.category.upper() + "]"


def luhn_valid(digits: str) -> bool:
    """True when the digit string passes the Luhn checksum (card numbers do).

    Example:
        ```python
        assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
        ```
    """
    if not digits.isdigit():
        return False
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def _looks_like_date_or_year(text: str) -> bool:
    return bool(re.fullmatch(r"(?:19|20)\d{2}(?:[\-./]\d{1,2}){0,2}", text)) or bool(
        re.fullmatch(r"\d{1,2}[\-./]\d{1,2}[\-./](?:19|20)?\d{2}", text)
    )


def _candidates(text: str) -> Iterable[PIIMatch]:
    for match in _EMAIL.finditer(text):
        yield PIIMatch("email", match.start(), match.end())
    for pattern in _SECRET_PATTERNS:
        for match in pattern.finditer(text):
            yield PIIMatch("secret", match.start(), match.end())
    for pattern in _NATIONAL_ID_PATTERNS:
        for match in pattern.finditer(text):
            yield PIIMatch("national_id", match.start(), match.end())
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            yield PIIMatch("card", match.start(), match.end())
    for match in _CN_MOBILE.finditer(text):
        yield PIIMatch("phone", match.start(), match.end())
    for match in _PHONE.finditer(text):
        raw = match.group()
        digits = re.sub(r"\D", "", raw)
        if 7 <= len(digits) <= 15 and not _looks_like_date_or_year(raw.strip()):
            yield PIIMatch("phone", match.start(), match.end())


def find_pii(text: str, categories: Iterable[str] = PII_CATEGORIES) -> list[PIIMatch]:
    """Every PII finding in ``text``, non-overlapping, left to right.

    Where findings overlap, the earlier-listed category wins (email, secret,
    national_id, card, phone) and then the longer span.

    Example:
        ```python
        assert find_pii("call +1 415 555 0100")[0].category == "phone"
        assert find_pii("I was born in 1990") == []
        ```
    """
    wanted = set(categories)
    unknown = wanted - set(PII_CATEGORIES)
    if unknown:
        raise ConfigurationError(
            f"unknown PII categories {sorted(unknown)}; choose from {list(PII_CATEGORIES)}"
        )
    found: list[PIIMatch] = []
    for candidate in _candidates(text):
        if candidate.category not in wanted:
            continue
        if any(candidate.start < kept.end and kept.start < candidate.end for kept in found):
            continue
        found.append(candidate)
    return sorted(found, key=lambda m: m.start)


@dataclass(frozen=True)
class PIIFilter:
    """Drop or redact PII in memory text; configure per ``extract`` node.

    Attributes:
        mode: ``"drop"`` (discard a memory that contains PII) or ``"redact"``.
        categories: Which categories to look for (default: all).

    Example:
        ```python
        f = PIIFilter(mode="redact", categories=("email",))
        assert f.clean("ann@example.com is my email") == "[EMAIL] is my email"
        ```
    """

    mode: Literal["drop", "redact"] = "drop"
    categories: tuple[str, ...] = PII_CATEGORIES

    def __post_init__(self) -> None:
        if self.mode not in ("drop", "redact"):
            raise ConfigurationError(f"PIIFilter mode {self.mode!r}: use 'drop' or 'redact'")
        find_pii("", self.categories)  # validates the categories

    def clean(self, text: str) -> str | None:
        """Return the text without PII, or ``None`` when it must be dropped."""
        matches = find_pii(text, self.categories)
        if not matches:
            return text
        if self.mode == "drop":
            return None
        pieces: list[str] = []
        cursor = 0
        for match in matches:
            pieces.append(text[cursor : match.start])
            pieces.append(match.placeholder)
            cursor = match.end
        pieces.append(text[cursor:])
        return "".join(pieces)
