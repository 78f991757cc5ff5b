"""Time named in a query: the period a question asks about, and how well a memory fits it.

A question that names a date ("what did Ana cook on 3 May 2024?", "... in July 2023?")
asks about memories from then. :func:`query_time_window` reads such a period from the
query text (English month names, ISO dates, years; pure, no I/O) and
:func:`time_match_score` scores a memory's event time against it: 1 inside the period,
halving every ``half_life`` outside. :func:`~langgraph_recall.retrieval.rank` adds it as
one more factor (``RetrievalConfig.time_match_weight``); a query that names no date gets
no window and ranks exactly as without the factor.

Relative phrases ("last week", "yesterday") are not read: they need the time the
question was asked, which the text does not carry.

Example:
    >>> from datetime import date
    >>> query_time_window("What did Ana cook on May 3, 2024?")
    TimeWindow(start=datetime.date(2024, 5, 3), end=datetime.date(2024, 5, 3))
    >>> query_time_window("Where does Ana live?") is None
    True
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

__all__ = ["TimeWindow", "query_time_window", "time_match_score"]

_MONTHS: dict[str, int] = {}
for _number in range(1, 13):
    _MONTHS[calendar.month_name[_number].lower()] = _number
    _MONTHS[calendar.month_abbr[_number].lower()] = _number
_MONTHS["sept"] = 9
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(1[89]\d\d|2\d\d\d)"

# Most specific first; each match is blanked out before the next pattern runs, so the
# year of "May 3, 2024" is not read again as the whole of 2024.
_ISO_DATE = re.compile(rf"\b{_YEAR}-(\d{{1,2}})-(\d{{1,2}})\b")
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE)
_DAY_MONTH_YEAR = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE)
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.IGNORECASE)
_BARE_YEAR = re.compile(rf"(?<![\d.,$€£-]){_YEAR}(?![\d.,%]\d|\d|%|s\b)")


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A period of calendar days, both ends included (UTC dates).

    Attributes:
        start: First day of the period.
        end: Last day of the period (``>= start``).

    Example:
        >>> from datetime import date
        >>> TimeWindow(date(2024, 7, 1), date(2024, 7, 31)).end.day
        31
    """

    start: date
    end: date


def _day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def query_time_window(text: str) -> TimeWindow | None:
    """The period a query names: the span of every full date, month or year it mentions.

    Reads ISO dates (``2024-05-03``), ``May 3, 2024`` / ``3 May 2024`` (full or
    abbreviated English month names, optional ordinal suffix), ``May 2024`` (the whole
    month) and a bare year from 1800 to 2999 (the whole year; not a number followed by
    ``%``, a decade such as ``1990s``, or inside a larger number). Several mentions give
    the span from the earliest start to the latest end. A month or day without a year is
    not read (it is ambiguous).

    Args:
        text: The query.

    Returns:
        The period, or ``None`` when the query names no date.

    Example:
        >>> query_time_window("in July 2023")
        TimeWindow(start=datetime.date(2023, 7, 1), end=datetime.date(2023, 7, 31))
        >>> query_time_window("between 1 May 2024 and 2024-05-09")
        TimeWindow(start=datetime.date(2024, 5, 1), end=datetime.date(2024, 5, 9))
    """
    periods: list[tuple[date, date]] = []
    remaining = text

    for pattern in (_ISO_DATE, _MONTH_DAY_YEAR, _DAY_MONTH_YEAR, _MONTH_YEAR, _BARE_YEAR):
        for match in pattern.finditer(remaining):
            period = _read(pattern, match)
            if period is not None:
                periods.append(period)
        remaining = pattern.sub(lambda m: " " * len(m.group(0)), remaining)
    if not periods:
        return None
    return TimeWindow(min(p[0] for p in periods), max(p[1] for p in periods))


def _read(pattern: re.Pattern[str], match: re.Match[str]) -> tuple[date, date] | None:
    """The period one match names (``None`` for an impossible date such as 31 June)."""
    if pattern is _ISO_DATE:
        day = _day(int(match[1]), int(match[2]), int(match[3]))
    elif pattern is _MONTH_DAY_YEAR:
        day = _day(int(match[3]), _MONTHS[match[1].lower()], int(match[2]))
    elif pattern is _DAY_MONTH_YEAR:
        day = _day(int(match[3]), _MONTHS[match[2].lower()], int(match[1]))
    elif pattern is _MONTH_YEAR:
        year, month = int(match[2]), _MONTHS[match[1].lower()]
        last = calendar.monthrange(year, month)[1]
        return date(year, month, 1), date(year, month, last)
    else:
        year = int(match[1])
        return date(year, 1, 1), date(year, 12, 31)
    return None if day is None else (day, day)


def time_match_score(
    event_time: datetime | None, window: TimeWindow | None, *, half_life: timedelta
) -> float:
    """How well a memory's event time fits the queried period, in [0, 1].

    1 when the event's UTC date lies in the window, else ``0.5 ** (days outside /
    half_life)``; 0 when either is unknown.

    Args:
        event_time: When the memory became true (timezone-aware), or ``None``.
        window: The period the query names, or ``None``.
        half_life: Distance outside the window at which the score halves (positive).

    Returns:
        The score.

    Example:
        >>> from datetime import date, datetime, timedelta, timezone
        >>> window = TimeWindow(date(2024, 5, 1), date(2024, 5, 31))
        >>> time_match_score(datetime(2024, 5, 9, tzinfo=timezone.utc), window,
        ...                  half_life=timedelta(days=7))
        1.0
        >>> time_match_score(datetime(2024, 6, 7, tzinfo=timezone.utc), window,
        ...                  half_life=timedelta(days=7))
        0.5
    """
    if event_time is None or window is None:
        return 0.0
    day = event_time.astimezone(timezone.utc).date() if event_time.tzinfo else event_time.date()
    if window.start <= day <= window.end:
        return 1.0
    outside = (window.start - day) if day < window.start else (day - window.end)
    return float(0.5 ** (outside / half_life))
