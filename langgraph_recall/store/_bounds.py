"""What the memory store accepts: one check per value class, used by every entry point (pure).

A value the store accepts must be one Postgres can store **and** the store can read back
into Python afterwards, on every path (exact and pgvector) and in every session time
zone — otherwise one accepted value would make every later read of its namespace fail.
The bounds:

* **Times** (``valid_from``, ``invalid_at``, ``expires_at``, ``invalidate(at=)``,
  ``search(as_of=)``, date operands of filters): from :data:`MIN_TIME` (0001-01-02 UTC)
  up to, not including, :data:`MAX_TIME` (9999-12-31 UTC). Postgres keeps far wider
  timestamps, but Python's ``datetime`` stops at years 1 and 9999 *in the session's time
  zone*: a day of margin at each end keeps every offset (±14 h, historical ±16 h)
  readable.
* **TTLs**: minutes, a finite real number above 0 and at most :data:`MAX_TTL_MINUTES`
  (1,000 years), so ``now + ttl`` and every refresh of it stay times in range.
* **JSON**: dicts with string keys, lists/tuples, strings, booleans, ``None``, finite
  floats and integers below 10**640 in magnitude (Python's smallest allowed limit for
  integer ↔ text conversion, so any process reads the number back), nested at most
  :data:`MAX_DEPTH` levels; text without NUL bytes or unpaired surrogates.
* **Indexed text**: at most :data:`MAX_INDEXED_TEXT_BYTES` (256 KiB) — a Postgres
  ``tsvector`` holds at most 1 MiB, and a text of short distinct words takes up to ~3.3×
  its size as one.
* **Query text** comes from users' messages, so it is never an error: :func:`bound_query`
  cuts it to :data:`MAX_QUERY_CHARS` characters (at a word boundary when there is one),
  drops NUL bytes and replaces unpaired surrogates with U+FFFD.
* **Row counts** (``limit``, ``offset``, ``max_depth``): integers; ``limit``/``offset`` of
  a search are non-negative and clamped to :data:`MAX_ROWS`.

Example:
    ```python
    from langgraph_recall.errors import InvalidValueError
    from langgraph_recall.store._bounds import bound_query, check_time

    assert check_time("2024-05-01", "valid_from").year == 2024
    try:
        check_time("0001-01-01T00:00:00+14:00", "valid_from")  # 0000-12-31 in UTC
    except InvalidValueError as exc:
        assert "0001-01-02" in str(exc)
    assert bound_query("a\\x00b") == "a b"
    ```
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from langgraph_recall.errors import InvalidValueError, LangGraphRecallError

__all__ = [
    "MAX_DEPTH",
    "MAX_INDEXED_TEXT_BYTES",
    "MAX_INT",
    "MAX_QUERY_CHARS",
    "MAX_ROWS",
    "MAX_TIME",
    "MAX_TTL_MINUTES",
    "MAX_VALUE_BYTES",
    "MIN_TIME",
    "bound_query",
    "check_depth",
    "check_json",
    "check_rows",
    "check_text",
    "check_time",
    "check_ttl",
    "shown",
    "time_in_range",
]

ErrorClass = type[LangGraphRecallError]

MIN_TIME = datetime(1, 1, 2, tzinfo=timezone.utc)
MAX_TIME = datetime(9999, 12, 31, tzinfo=timezone.utc)
_MIN_NAIVE = MIN_TIME.replace(tzinfo=None)
_MAX_NAIVE = MAX_TIME.replace(tzinfo=None)
MAX_TTL_MINUTES = 1000 * 365.25 * 24 * 60
MAX_DEPTH = 100
MAX_INT = 10**640
MAX_INDEXED_TEXT_BYTES = 256 * 1024
MAX_QUERY_CHARS = 4096
MAX_VALUE_BYTES = 64 * 1024 * 1024  # the largest max_value_bytes a store may be given
MAX_ROWS = 2**62  # larger limits/offsets mean "everything"
_WORD_BOUNDARY_WINDOW = 64  # how far back bound_query looks for a space to cut at
_SURROGATE = re.compile("[\ud800-\udfff]")


def _utc_naive(moment: datetime) -> datetime | None:
    """``moment`` in UTC without its zone, or ``None`` when UTC falls outside years 1..9999."""
    try:
        offset = moment.utcoffset() or timedelta(0)
        return moment.replace(tzinfo=None) - offset
    except (OverflowError, ValueError, TypeError, AttributeError):
        return None


def time_in_range(moment: datetime) -> bool:
    """Whether the store can keep ``moment`` (naive = UTC): ``MIN_TIME <= moment < MAX_TIME``.

    Example:
        ```python
        from langgraph_recall.store._bounds import time_in_range

        from datetime import datetime, timezone

        assert time_in_range(datetime(2024, 5, 1, tzinfo=timezone.utc))
        assert not time_in_range(datetime(9999, 12, 31, 23, tzinfo=timezone.utc))
        ```
    """
    utc = _utc_naive(moment)
    return utc is not None and _MIN_NAIVE <= utc < _MAX_NAIVE


def check_time(raw: object, field: str, *, error: ErrorClass = InvalidValueError) -> datetime:
    """Parse an ISO-8601 string or ``datetime`` into an aware datetime the store can keep.

    Naive means UTC; the offset given is kept.

    Raises:
        InvalidValueError: (or ``error``) not a date/time, or outside
            ``[MIN_TIME, MAX_TIME)``.

    Example:
        ```python
        from langgraph_recall.store._bounds import check_time

        assert check_time("2024-05-01T09:00:00+02:00", "as_of").hour == 9
        ```
    """
    if isinstance(raw, datetime):
        moment = raw
    elif isinstance(raw, str):
        try:
            moment = datetime.fromisoformat(raw.strip())
        except ValueError:
            raise error(
                f"{field}={shown(raw)} is not an ISO-8601 date/time; "
                "use e.g. '2024-05-01T09:00:00+00:00'"
            ) from None
    else:
        raise error(f"{field} must be an ISO-8601 string or a datetime, got {type(raw).__name__}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    if not time_in_range(moment):
        raise error(
            f"{field}={shown(raw)} is outside the times the store can keep and read back: "
            f"from {MIN_TIME.date()} up to {MAX_TIME.date()} (UTC)"
        )
    return moment


def check_ttl(ttl: object) -> float | None:
    """A TTL in minutes: ``None`` (no expiry) or a real number in ``(0, MAX_TTL_MINUTES]``.

    Raises:
        InvalidValueError: not a number (booleans and strings included), NaN, infinite,
            not positive, or above 1,000 years.

    Example:
        ```python
        from langgraph_recall.store._bounds import check_ttl

        assert check_ttl(5) == 5.0 and check_ttl(None) is None
        ```
    """
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)):
        raise InvalidValueError(
            f"ttl must be a number of minutes (or None), got {type(ttl).__name__}"
        )
    if isinstance(ttl, int) and abs(ttl) > MAX_TTL_MINUTES * 2:  # float(10**400) overflows
        minutes = math.inf if ttl > 0 else -math.inf
    else:
        minutes = float(ttl)
    if not (math.isfinite(minutes) and 0 < minutes <= MAX_TTL_MINUTES):
        raise InvalidValueError(
            f"ttl must be a positive number of minutes up to {MAX_TTL_MINUTES:.0f} "
            f"(1,000 years), got {shown(ttl)}"
        )
    return minutes


def check_text(text: str, where: str, *, error: ErrorClass = InvalidValueError) -> str:
    """Reject text Postgres cannot hold: NUL bytes and unpaired surrogates.

    Example:
        ```python
        from langgraph_recall.store._bounds import check_text

        assert check_text("ü", "content") == "ü"
        ```
    """
    if "\x00" in text:
        raise error(f"{where} contains a NUL byte; Postgres text cannot hold it — remove it")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise error(f"{where} contains an unpaired surrogate; text must be valid UTF-8") from None
    return text


def check_depth(depth: int, where: str, *, error: ErrorClass = InvalidValueError) -> None:
    """Raise when ``depth`` (levels of nesting so far) exceeds :data:`MAX_DEPTH`."""
    if depth > MAX_DEPTH:
        raise error(f"{where} is nested more than {MAX_DEPTH} levels deep; flatten it")


def check_json(
    node: Any, where: str = "value", *, error: ErrorClass = InvalidValueError, _depth: int = 0
) -> None:
    """Check that ``node`` is JSON the store keeps and reads back unchanged.

    Raises:
        InvalidValueError: (or ``error``) naming the offending field: a non-JSON type,
            a non-string object key, NaN/infinity, an integer of 640 digits or more,
            NUL/surrogates in text, or nesting deeper than :data:`MAX_DEPTH`.

    Example:
        ```python
        from langgraph_recall.store._bounds import check_json

        check_json({"a": [1, 2.5, "x", None, True]})
        ```
    """
    if isinstance(node, str):
        check_text(node, where, error=error)
    elif isinstance(node, bool) or node is None:
        return
    elif isinstance(node, int):
        if not -MAX_INT < node < MAX_INT:
            raise error(
                f"{where} is an integer of 640 digits or more, beyond what the store reads back; "
                "use a string instead"
            )
    elif isinstance(node, float):
        if not math.isfinite(node):
            raise error(f"{where} is {node}; NaN and infinity are not JSON")
    elif isinstance(node, dict):
        check_depth(_depth + 1, where, error=error)
        for name, child in node.items():
            if not isinstance(name, str):
                raise error(
                    f"key {name!r} in {where} is not a string; JSON objects need string keys"
                )
            check_text(name, f"a key in {where}", error=error)
            check_json(child, f"{where}.{name}", error=error, _depth=_depth + 1)
    elif isinstance(node, (list, tuple)):
        check_depth(_depth + 1, where, error=error)
        for index, child in enumerate(node):
            check_json(child, f"{where}[{index}]", error=error, _depth=_depth + 1)
    else:
        kind = "mapping" if isinstance(node, Mapping) else type(node).__name__
        raise error(
            f"{where} is a {kind}, which is not JSON-serialisable; "
            "convert it to a string, number, list or dict"
        )


def check_rows(value: object, field: str, *, allow_negative: bool = False) -> int:
    """A row count (``limit``/``offset``): an ``int`` (``bool`` too, as in ``InMemoryStore``),
    non-negative unless ``allow_negative``, clamped to ``±MAX_ROWS``.

    Example:
        ```python
        from langgraph_recall.store._bounds import MAX_ROWS, check_rows

        assert check_rows(10**30, "limit") == MAX_ROWS
        ```
    """
    if not isinstance(value, int):
        raise InvalidValueError(f"{field} must be an integer, got {type(value).__name__}")
    if value < 0 and not allow_negative:
        raise InvalidValueError(f"{field} must be a non-negative integer, got {value}")
    return max(-MAX_ROWS, min(int(value), MAX_ROWS))


def bound_query(text: str) -> str:
    """Query text as the store searches it: at most :data:`MAX_QUERY_CHARS` characters,
    cut at a word boundary when one is near, NUL bytes turned into spaces and unpaired
    surrogates into U+FFFD (user messages reach queries; they must never fail a search).

    Example:
        ```python
        from langgraph_recall.store._bounds import MAX_QUERY_CHARS, bound_query

        assert len(bound_query("word " * 10_000)) <= MAX_QUERY_CHARS
        assert bound_query("caf\\ud800") == "caf\\ufffd"
        ```
    """
    if len(text) > MAX_QUERY_CHARS:
        cut = text[:MAX_QUERY_CHARS]
        if not text[MAX_QUERY_CHARS].isspace():
            space = max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("\t"))
            if space >= MAX_QUERY_CHARS - _WORD_BOUNDARY_WINDOW:
                cut = cut[:space]
        text = cut
    if "\x00" in text:
        text = text.replace("\x00", " ")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _SURROGATE.sub("\ufffd", text)
    return text


def shown(raw: object) -> str:
    """``repr(raw)`` cut to 80 characters, for error messages about hostile input."""
    text = repr(raw)
    return text if len(text) <= 80 else text[:77] + "..."
