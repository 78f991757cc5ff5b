"""The store's value bounds (pure): each class of value is checked by one function, and what
it accepts is what Postgres stores and Python reads back in any session time zone."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langgraph_recall.errors import InvalidFilterError, InvalidValueError
from langgraph_recall.extraction.dates import parse_iso_datetime, resolve_date_phrase
from langgraph_recall.store._bounds import (
    MAX_DEPTH,
    MAX_INT,
    MAX_QUERY_CHARS,
    MAX_ROWS,
    MAX_TIME,
    MAX_TTL_MINUTES,
    MIN_TIME,
    bound_query,
    check_json,
    check_rows,
    check_time,
    check_ttl,
    time_in_range,
)
from langgraph_recall.store._filters import compile_filter
from langgraph_recall.store._values import prepare_value

# Python accepts UTC offsets strictly inside ±24 h; Postgres sessions use at most ±16 h.
OFFSETS = st.integers(-(24 * 60 - 1), 24 * 60 - 1).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
ANY_MOMENT = st.builds(
    lambda naive, zone: naive.replace(tzinfo=zone),
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)),
    st.one_of(st.none(), OFFSETS),
)


def readable_in_every_zone(moment: datetime) -> bool:
    aware = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    try:
        for minutes in (-(24 * 60 - 1), 0, 24 * 60 - 1):
            aware.astimezone(timezone(timedelta(minutes=minutes)))
    except OverflowError:
        return False
    return True


@given(ANY_MOMENT)
def test_every_accepted_time_reads_back_in_every_session_zone(moment: datetime) -> None:
    try:
        accepted = check_time(moment, "valid_from")
    except InvalidValueError as exc:
        assert "0001-01-02" in str(exc) and not time_in_range(moment)
        return
    assert readable_in_every_zone(accepted)
    assert MIN_TIME <= accepted < MAX_TIME
    assert check_time(accepted.isoformat(), "valid_from") == accepted  # the string form too


@pytest.mark.parametrize(
    "raw",
    [
        "0001-01-01T00:00:00+14:00",  # finding: a BC timestamp in Postgres
        "9999-12-31T23:59:59-14:00",  # finding: year 10000 in UTC
        datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=8))),
        (MIN_TIME - timedelta(microseconds=1)).isoformat(),
        MAX_TIME.isoformat(),
        "0000-01-01",
        "10000-01-01",
    ],
)
def test_times_outside_the_readable_range_are_rejected_by_every_entry_point(raw: object) -> None:
    with pytest.raises(InvalidValueError, match=r"outside the times|not an ISO-8601"):
        check_time(raw, "valid_from")
    with pytest.raises(InvalidValueError):
        prepare_value(("m", "u"), "k", {"content": "x", "valid_from": raw})
    from psycopg import sql

    if isinstance(raw, datetime) or _parses(raw):  # others compare as text in filters
        with pytest.raises(InvalidFilterError):
            compile_filter({"valid_from": {"$gte": raw}}, sql.SQL("v"))
    if isinstance(raw, str):
        assert parse_iso_datetime(raw) is None  # the extraction's parser agrees


def _parses(raw: str) -> bool:
    try:
        datetime.fromisoformat(raw)
    except ValueError:
        return False
    return True


def test_boundaries_are_kept() -> None:
    assert check_time(MIN_TIME, "x") == MIN_TIME
    last = MAX_TIME - timedelta(microseconds=1)
    assert check_time(last, "x") == last


def test_stated_dates_the_store_cannot_keep_count_as_no_date() -> None:
    now = datetime(2026, 1, 1, 10, tzinfo=timezone(timedelta(hours=8)))
    assert resolve_date_phrase("I moved to Lyon on 0001-01-01.", now) is None
    assert resolve_date_phrase("in May 0000", now) is None  # was a raw ValueError
    assert resolve_date_phrase("on 9999-12-31", now.replace(tzinfo=timezone.utc)) is None
    assert resolve_date_phrase("since 2021", now) == datetime(2021, 1, 1, tzinfo=now.tzinfo)


@given(
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-(10**400), 10**400),
        st.text(max_size=3),
        st.booleans(),
        st.none(),
    )
)
def test_ttls_are_positive_finite_minutes_up_to_a_thousand_years(ttl: object) -> None:
    try:
        minutes = check_ttl(ttl)
    except InvalidValueError:
        assert ttl is not None
        return
    if ttl is None:
        assert minutes is None
        return
    assert minutes is not None and 0 < minutes <= MAX_TTL_MINUTES
    assert not isinstance(ttl, (bool, str))


def nested(depth: int) -> object:
    node: object = 1
    for level in range(depth):
        node = {"a": node} if level % 2 else [node]
    return node


@given(st.integers(0, 3 * MAX_DEPTH))
def test_nesting_is_bounded_without_recursion_errors(depth: int) -> None:
    for error in (InvalidValueError, InvalidFilterError):
        try:
            check_json(nested(depth), error=error)
        except error as exc:
            assert depth > MAX_DEPTH and "nested more than" in str(exc)
        else:
            assert depth <= MAX_DEPTH


def test_a_filter_nested_two_thousand_deep_is_our_error() -> None:
    from psycopg import sql

    filter_: dict[str, object] = {"a": 1}
    for _ in range(2000):
        filter_ = {"$and": [filter_]}
    with pytest.raises(InvalidFilterError, match="nested more than"):
        compile_filter(filter_, sql.SQL("v"))


@given(st.integers(-(10**700), 10**700))
def test_json_integers_round_trip_as_text(number: int) -> None:
    try:
        check_json({"n": number})
    except InvalidValueError:
        assert abs(number) >= MAX_INT
        return
    import json

    assert json.loads(json.dumps(number)) == number  # within every process's digit limit


def test_json_numbers_beyond_float_and_text_limits() -> None:
    check_json({"n": 10**400, "f": 1e308, "g": 5e-324})
    for bad in ({"n": 10**5000}, {"f": math.nan}, {"f": -math.inf}, {"s": "a\x00"}):
        with pytest.raises(InvalidValueError):
            check_json(bad)


def test_query_text_is_cut_and_cleaned_not_rejected() -> None:
    huge = "word " * 250_000  # ~1.2 MB, a user message pasted whole
    cut = bound_query(huge)
    assert len(cut) <= MAX_QUERY_CHARS and not cut.endswith("wor")
    assert bound_query("x" * (MAX_QUERY_CHARS + 10)) == "x" * MAX_QUERY_CHARS
    assert bound_query("caf\ud800 a\x00b") == "caf\ufffd a b"
    assert bound_query("short") == "short"


def test_row_counts() -> None:
    assert check_rows(10**30, "limit") == MAX_ROWS
    assert check_rows(True, "limit") == 1
    assert check_rows(-3, "limit", allow_negative=True) == -3
    for bad in (-1, 1.5, "5", None):
        with pytest.raises(InvalidValueError):
            check_rows(bad, "limit")
