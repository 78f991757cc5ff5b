"""Resolve stated dates ("since last May", "3 years ago", "去年五月") against the turn time.

Pure functions. A fact stated without a date is valid from the moment it was said, so
callers use ``resolve_date_phrase(text, now) or now`` for ``valid_from``. Only the
first date expression in the text is used; results keep ``now``'s timezone and are
truncated to the start of the day/month/year the phrase names. A date the memory store
cannot keep (before 0001-01-02 or from 9999-12-31 UTC, see ``store._bounds``: "on
0001-01-01" said at +08:00 is a BC moment) counts as no date, so user text never makes a
write fail.

Example:
    ```python
    from datetime import datetime, timezone

    from langgraph_recall.extraction.dates import resolve_date_phrase

    now = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
    assert resolve_date_phrase("I've lived here since last May", now) == datetime(
        2026, 5, 1, tzinfo=timezone.utc)
    ```
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from langgraph_recall.extraction._dates_zh import read_zh
from langgraph_recall.extraction.textnorm import CJK_RUN
from langgraph_recall.store._bounds import time_in_range

__all__ = ["parse_iso_datetime", "resolve_date_phrase"]

_MONTHS = {
    name: index
    for index, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_COUNT = r"(?P<count>\d{1,3}|" + "|".join(_NUMBER_WORDS) + r")"
_UNIT = r"(?P<unit>day|week|month|year)s?"

_ISO = re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})(?:[T ][0-9:.+\-Z]*)?\b")
_DAY_MONTH_YEAR = re.compile(
    r"\b(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r",?\s+(?P<year>\d{4})\b", re.I
)
_MONTH_DAY_YEAR = re.compile(
    r"\b" + _MONTH + r"\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<year>\d{4})\b", re.I
)
_MONTH_YEAR = re.compile(r"\b" + _MONTH + r",?\s+(?P<year>\d{4})\b", re.I)
_LAST_MONTH_NAME = re.compile(r"\blast\s+" + _MONTH + r"\b", re.I)
_PREP = r"\b(?P<prep>since|in|from|back in|starting|beginning|as of)\s+"
_PREP_MONTH = re.compile(_PREP + _MONTH + r"\b", re.I)
_PREP_YEAR = re.compile(_PREP + r"(?P<year>(?:19|20)\d{2})\b", re.I)
_AGO = re.compile(r"\b" + _COUNT + r"\s+" + _UNIT + r"\s+ago\b", re.I)
_FOR_DURATION = re.compile(r"\bfor\s+(?:the\s+(?:last|past)\s+)?" + _COUNT + r"\s+" + _UNIT, re.I)
# what says something starts at the date that follows ("starting May 2030", "as of 2030-01-01",
# "beginning in 2030", "effective from June") or ends it ("from 2030 on", "from May onwards")
_START_BEFORE = re.compile(
    r"(?i)\b(?:starting|beginning|effective|as of|as from)(?:\s+(?:on|in|from))?\s*$"
)
_FROM_ON = re.compile(r"(?i)\bfrom\s*$")
_ON_AFTER = re.compile(
    r"(?i)^\W{0,2}\s*(?:onwards?\b|on(?=\s*(?:$|[,.;:!?)]|(?:i|we|you|he|she|they|my|our)\b)))"
)
# ("from 2030 on, …", "from 2030 on I …", "from May onwards": an "on" that closes the phrase,
# not "on foot", "on earth")
_RELATIVE = re.compile(
    r"\b(?P<word>yesterday|today|this morning|tonight|last week|last month|last year)\b", re.I
)


def _start_of_day(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int, like: datetime) -> datetime:
    return datetime(year, month, 1, tzinfo=like.tzinfo)


def _minus(now: datetime, count: int, unit: str) -> datetime:
    unit = unit.lower()
    if unit == "day":
        return _start_of_day(now - timedelta(days=count))
    if unit == "week":
        return _start_of_day(now - timedelta(weeks=count))
    if unit == "month":
        months = now.year * 12 + (now.month - 1) - count
        return _month_start(months // 12, months % 12 + 1, now)
    return _month_start(now.year - count, now.month, now)


def _count(text: str) -> int:
    lowered = text.lower()
    return _NUMBER_WORDS[lowered] if lowered in _NUMBER_WORDS else int(lowered)


def _safe(year: int, month: int, day: int, like: datetime) -> datetime | None:
    try:
        return datetime(year, month, day, tzinfo=like.tzinfo)
    except ValueError:
        return None


def resolve_date_phrase(text: str, now: datetime) -> datetime | None:
    """Return the moment the first date expression in ``text`` refers to, or ``None``
    (also for a moment the store cannot keep).

    Understands ISO dates, "May 3, 2024", "3 May 2024", "May 2024", "last May",
    "since/in May" (the most recent May), "since/in 2021", "N days/weeks/months/years
    ago", "for N years" (started N years ago), "yesterday", "today", "last
    week/month/year"; and in Chinese "2024年3月5日", "2024年3月", "去年五月", "去年",
    "上个月", "上周三", "三年前", "半年前", "昨天", "从五月开始"
    (:mod:`~langgraph_recall.extraction._dates_zh`). In both languages a moment after the
    day the text was said counts only when something starts then: "starting May 2030",
    "as of 2030-01-01", "beginning in 2030", "effective June 2030", "from 2030 on", "下周三开始",
    "从明年起" — not "I move to Rome in 2099" or "下周三我要去北京" (an event to come: the
    fact holds from when it was said).

    Args:
        text: A sentence as the user said it.
        now: When it was said (timezone-aware recommended).

    Example:
        ```python
        from datetime import datetime, timezone

        from langgraph_recall.extraction.dates import resolve_date_phrase

        now = datetime(2026, 3, 10, tzinfo=timezone.utc)
        assert resolve_date_phrase("two years ago", now).year == 2024
        assert resolve_date_phrase("no date here", now) is None
        ```
    """
    try:
        moment = _resolve(text, now)
    except (ValueError, OverflowError):  # "9999 years ago", year 0, ...
        return None
    return moment if moment is not None and time_in_range(moment) else None


def _resolve(text: str, now: datetime) -> datetime | None:
    if CJK_RUN.search(text):
        try:
            if (moment := _kept(read_zh(text, now), now)) is not None:
                return moment
        except ValueError:  # a Chinese date that is none ("2024年2月30日"): read on in English
            pass
    return _kept(_read_english(text, now), now)


def _kept(found: tuple[datetime | None, bool] | None, now: datetime) -> datetime | None:
    """The one rule for both languages: a moment after the day the text was said counts only
    when the text says something starts then ("starting 2030", "从下周三开始"); "I move to
    Rome in 2099" or "下周三我要去北京" is an event to come, and the fact holds from now."""
    moment, starts = found or (None, False)
    if moment is None or (moment > _start_of_day(now) + timedelta(days=1) and not starts):
        return None
    return moment


def _starts_here(text: str, match: re.Match[str]) -> bool:
    """A start phrase introduces the date ``match`` found (its own preposition included)."""
    before = text[: match.start()] + (match.groupdict().get("prep") or "")
    after = text[match.end() :]
    if _START_BEFORE.search(before):
        return True
    return _FROM_ON.search(before) is not None and _ON_AFTER.match(after) is not None


def _read_english(text: str, now: datetime) -> tuple[datetime | None, bool] | None:
    found = _english(text, now)
    return None if found is None else (found[0], _starts_here(text, found[1]))


def _english(text: str, now: datetime) -> tuple[datetime | None, re.Match[str]] | None:
    if match := _ISO.search(text):
        return _safe(int(match["y"]), int(match["m"]), int(match["d"]), now), match
    for pattern in (_DAY_MONTH_YEAR, _MONTH_DAY_YEAR):
        if match := pattern.search(text):
            month = _MONTHS[match["month"].lower()]
            return _safe(int(match["year"]), month, int(match["day"]), now), match
    if match := _MONTH_YEAR.search(text):
        return _month_start(int(match["year"]), _MONTHS[match["month"].lower()], now), match
    if match := _LAST_MONTH_NAME.search(text):
        month = _MONTHS[match["month"].lower()]
        year = now.year if month < now.month else now.year - 1
        return _month_start(year, month, now), match
    if match := _PREP_MONTH.search(text):
        month = _MONTHS[match["month"].lower()]
        if match["month"] == "may":  # lower-case "may" is the verb ("from may be ...")
            return None
        # a month after this one: the one to come when something starts then ("starting
        # December"), else the last one ("in December", "since December")
        upcoming = month > now.month and _starts_here(text, match)
        year = now.year if month <= now.month or upcoming else now.year - 1
        return _month_start(year, month, now), match
    if match := _PREP_YEAR.search(text):
        return datetime(int(match["year"]), 1, 1, tzinfo=now.tzinfo), match
    if match := _AGO.search(text):
        return _minus(now, _count(match["count"]), match["unit"]), match
    if match := _FOR_DURATION.search(text):
        return _minus(now, _count(match["count"]), match["unit"]), match
    if match := _RELATIVE.search(text):
        word = match["word"].lower()
        if word in {"today", "this morning", "tonight"}:
            return _start_of_day(now), match
        if word == "yesterday":
            return _start_of_day(now - timedelta(days=1)), match
        if word == "last week":
            return _start_of_day(now - timedelta(weeks=1)), match
        if word == "last month":
            return _minus(now, 1, "month"), match
        return datetime(now.year - 1, 1, 1, tzinfo=now.tzinfo), match
    return None


def parse_iso_datetime(value: object) -> datetime | None:
    """Parse an ISO-8601 string (or pass a ``datetime`` through); ``None`` if not a date
    or not one the memory store can keep.

    Example:
        ```python
        from langgraph_recall.extraction.dates import parse_iso_datetime

        assert parse_iso_datetime("2024-05-01T00:00:00+00:00").year == 2024
        assert parse_iso_datetime("soon") is None
        ```
    """
    if isinstance(value, datetime):
        moment = value
    elif not isinstance(value, str) or not value:
        return None
    else:
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    return moment if time_in_range(moment) else None
