"""The time a query names, and the time-match factor of ranking."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from langgraph_recall.errors import ConfigurationError
from langgraph_recall.retrieval import (
    Candidate,
    RetrievalConfig,
    TimeWindow,
    query_time_window,
    rank,
    time_match_score,
)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
WEEK = timedelta(days=7)


def day(text: str) -> TimeWindow:
    parsed = date.fromisoformat(text)
    return TimeWindow(parsed, parsed)


@pytest.mark.parametrize(
    ("query", "window"),
    [
        ("What did Ana cook on May 3, 2024?", day("2024-05-03")),
        ("what happened on 3 May 2024", day("2024-05-03")),
        ("on the 3rd of May, 2024", day("2024-05-03")),
        ("Sept. 5th, 2022 trip", day("2022-09-05")),
        ("notes from 2024-05-03", day("2024-05-03")),
        ("in July 2023", TimeWindow(date(2023, 7, 1), date(2023, 7, 31))),
        ("Feb 2024 plans", TimeWindow(date(2024, 2, 1), date(2024, 2, 29))),
        ("how often did she swim in 2023?", TimeWindow(date(2023, 1, 1), date(2023, 12, 31))),
        ("between 1 May 2024 and 2024-05-09", TimeWindow(date(2024, 5, 1), date(2024, 5, 9))),
        ("MAY 2024", TimeWindow(date(2024, 5, 1), date(2024, 5, 31))),
    ],
)
def test_query_time_window_reads_dates_months_and_years(query: str, window: TimeWindow) -> None:
    assert query_time_window(query) == window


@pytest.mark.parametrize(
    "query",
    [
        "Where does Ana live?",
        "what did she do in May?",  # a month without a year is ambiguous
        "she paid $2024 for it",
        "a 2024% rise",
        "music of the 1990s",
        "order 120245",
        "on 31 June 2023",  # no such day
        "",
    ],
)
def test_query_time_window_ignores_non_dates(query: str) -> None:
    assert query_time_window(query) is None


def test_time_match_score_is_one_inside_and_halves_per_half_life_outside() -> None:
    july = TimeWindow(date(2023, 7, 1), date(2023, 7, 31))
    inside = datetime(2023, 7, 15, 23, 0, tzinfo=timezone.utc)
    assert time_match_score(inside, july, half_life=WEEK) == 1.0
    week_after = datetime(2023, 8, 7, tzinfo=timezone.utc)
    assert time_match_score(week_after, july, half_life=WEEK) == pytest.approx(0.5)
    two_weeks_before = datetime(2023, 6, 17, tzinfo=timezone.utc)
    assert time_match_score(two_weeks_before, july, half_life=WEEK) == pytest.approx(0.25)
    assert time_match_score(None, july, half_life=WEEK) == 0.0
    assert time_match_score(inside, None, half_life=WEEK) == 0.0


def test_time_match_uses_the_utc_date() -> None:
    window = day("2024-05-03")
    late_evening_west = datetime(2024, 5, 2, 22, 0, tzinfo=timezone(timedelta(hours=-4)))
    assert time_match_score(late_evening_west, window, half_life=WEEK) == 1.0


def test_rank_prefers_memories_from_the_named_period_only_when_one_is_named() -> None:
    may = Candidate(
        "may",
        vector_similarity=0.80,
        vector_rank=2,
        event_time=datetime(2024, 5, 3, tzinfo=timezone.utc),
    )
    march = Candidate(
        "march",
        vector_similarity=0.85,
        vector_rank=1,
        event_time=datetime(2024, 3, 9, tzinfo=timezone.utc),
    )
    other = Candidate("other", vector_similarity=0.50, vector_rank=3)
    config = RetrievalConfig()
    window = query_time_window("what did we cook on May 3, 2024?")
    plain = [c.id for c, _ in rank([march, may, other], config=config, now=NOW)]
    dated = [c.id for c, _ in rank([march, may, other], config=config, now=NOW, time_window=window)]
    assert plain == ["march", "may", "other"]
    assert dated == ["may", "march", "other"]
    off = RetrievalConfig(time_match_weight=0.0)
    assert [
        c.id for c, _ in rank([march, may, other], config=off, now=NOW, time_window=window)
    ] == plain


def test_time_match_config_is_validated() -> None:
    with pytest.raises(ConfigurationError, match="time_match_half_life"):
        RetrievalConfig(time_match_half_life=timedelta(0))
    with pytest.raises(ConfigurationError, match="time_match_weight"):
        RetrievalConfig(time_match_weight=-0.1)
