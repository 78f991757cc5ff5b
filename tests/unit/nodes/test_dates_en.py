"""English stated dates follow the Chinese reader's rule: a moment after the day the text was
said counts only when something starts then ("starting 2030", "as of 2030-01-01", "from 2030
on"); "I move to Rome in 2099" is an event to come, and the fact holds from when it was said.
Hypothesis composes texts from date expressions and filler words, with and without a start
phrase, over a range of turn times."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_recall.extraction.dates import resolve_date_phrase
from tests._hypothesis import thorough

NOW = datetime(2026, 11, 29, 15, 30, tzinfo=timezone.utc)
MONTHS = ["January", "May", "June", "December", "dec", "Sept."]
STARTS = re.compile(r"(?i)starting|beginning|effective|as of|as from|\bfrom\b")


@st.composite
def dates(draw: st.DrawFn) -> str:
    """A date expression the English reader knows, in the past or the future."""
    year = draw(st.integers(1900, 2199))
    month = draw(st.sampled_from(MONTHS))
    day = draw(st.integers(1, 28))
    return draw(
        st.sampled_from(
            [
                f"{year}-{draw(st.integers(1, 12)):02d}-{day:02d}",
                f"{month} {day}, {year}",
                f"{day} {month} {year}",
                f"{month} {year}",
                f"last {month}",
                f"in {month}",
                f"since {month}",
                f"in {year}",
                f"since {year}",
                f"back in {year}",
                f"{draw(st.integers(0, 30))} years ago",
                "yesterday",
                "today",
                "tonight",
                "next year",
                "next week",
            ]
        )
    )


FILLER = st.lists(
    st.sampled_from(["I", "move", "to", "Rome", "will", "on", "work", "at", "Acme", ",", "."]),
    max_size=4,
).map(" ".join)
START = st.sampled_from(["starting", "beginning", "as of", "effective", "starting on"])


def start_of_tomorrow(now: datetime) -> datetime:
    return now.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)


@settings(max_examples=thorough(400), deadline=None)
@given(
    FILLER,
    dates(),
    FILLER,
    st.integers(-30_000, 30_000),
    st.text(st.characters(max_codepoint=0x2FFF), max_size=12),
)
def test_no_text_without_a_start_phrase_gives_a_moment_to_come(
    before: str, date: str, after: str, days: int, noise: str
) -> None:
    now = NOW + timedelta(days=days)
    text = f"{before} {date} {after} {noise}"
    if STARTS.search(text):
        return
    moment = resolve_date_phrase(text, now)
    assert moment is None or moment <= start_of_tomorrow(now), (text, moment)


@settings(max_examples=thorough(200), deadline=None)
@given(START, st.integers(NOW.year + 1, 9998), FILLER)
def test_a_start_phrase_lets_a_year_to_come_count(start: str, year: int, after: str) -> None:
    text = f"{start} {year}-03-04 {after}"
    assert resolve_date_phrase(text, NOW) == datetime(year, 3, 4, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I move to Mars in 2099", None),
        ("My wedding is on May 3, 2027", None),
        ("in May 2099 I start at Acme", None),
        ("since 2099", None),
        ("starting 2099 I live in Rome", datetime(2099, 1, 1, tzinfo=timezone.utc)),
        ("from 2030 on I work at Acme", datetime(2030, 1, 1, tzinfo=timezone.utc)),
        ("from May 2027 onwards", datetime(2027, 5, 1, tzinfo=timezone.utc)),
        ("as of January 2030", datetime(2030, 1, 1, tzinfo=timezone.utc)),
        ("beginning in 2030", datetime(2030, 1, 1, tzinfo=timezone.utc)),
        ("starting December", datetime(2026, 12, 1, tzinfo=timezone.utc)),  # the one to come
        ("in December", datetime(2025, 12, 1, tzinfo=timezone.utc)),  # the last one
        ("from 2030, I work at Acme", None),  # "from" alone starts nothing
        ("I commute from 2099-03-01 on foot", None),  # "on foot" closes no phrase
        ("I'm from 2099 on earth", None),
        ("I live in Rome from 2030 on.", datetime(2030, 1, 1, tzinfo=timezone.utc)),
        ("Starting 2099 I work at Acme", datetime(2099, 1, 1, tzinfo=timezone.utc)),
        ("In 2019 I moved to Paris", datetime(2019, 1, 1, tzinfo=timezone.utc)),
        ("starting 9999-12-31", None),  # a moment the store cannot keep
        ("since 2021", datetime(2021, 1, 1, tzinfo=timezone.utc)),
        ("today", datetime(2026, 11, 29, tzinfo=timezone.utc)),
    ],
)
def test_english_dates_to_come(text: str, expected: datetime | None) -> None:
    assert resolve_date_phrase(text, NOW) == expected
