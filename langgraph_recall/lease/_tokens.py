"""Fencing tokens: the one layout both backends issue, as pure functions (no I/O).

A fencing token is a capability: whoever carries the thread's current token may write to
it. So a token must be impossible to guess, must never be handed out twice, and must
still order the acquisitions of a thread (a storage that fences by "highest token seen"
relies on it). One layout gives all three, on Postgres, Redis and in memory alike::

    token = sequence * 1_000_000 + secret        # an int in 0 .. 2**63 - 1

* ``secret`` — six random decimal digits (``0 .. 999_999``) drawn by the acquiring worker
  from the operating system's CSPRNG (:func:`secrets.randbelow`). Guards compare whole
  tokens for equality, so a writer that knows everything else about a lease still has to
  guess them; nothing the package prints, logs or raises carries a token.
* ``sequence`` — strictly increasing per thread and **floored at the server clock**:
  ``max(previous sequence + 1, milliseconds since 2025-01-01 on the server)``. A server
  that lost recent writes (restarted from an older snapshot, or an asynchronous replica
  promoted) has lost only tokens issued in the past, below its clock; the next token is
  above all of them. The decimal layout lets the Redis scripts build and compare tokens as
  text (Lua numbers are doubles: 17 digits do not survive ``tonumber``), and it lasts
  until the year 2317.

Example:
    ```python
    from langgraph_recall.lease._tokens import next_token, sequence_of, secret_part

    first = next_token(None, now_ms=1_000, secret=123_456)
    assert first == 1_000_123_456 and sequence_of(first) == 1_000
    # the clock went back (or stood still): the sequence still moves on
    second = next_token(first, now_ms=900, secret=7)
    assert second > first and sequence_of(second) == 1_001
    assert 0 <= secret_part() < 1_000_000
    ```
"""

from __future__ import annotations

import secrets

__all__ = [
    "CLOCK_BASE_MS",
    "MAX_TOKEN",
    "SECRET_SPAN",
    "next_token",
    "secret_part",
    "secret_text",
    "sequence_of",
]

SECRET_SPAN = 1_000_000
"""Tokens are ``sequence * SECRET_SPAN + secret`` (six random decimal digits)."""

CLOCK_BASE_MS = 1_735_689_600_000
"""2025-01-01T00:00:00Z in Unix milliseconds: the sequence counts milliseconds from it."""

MAX_TOKEN = 2**63 - 1
"""Largest token (a Postgres ``bigint``)."""


def secret_part() -> int:
    """Six random decimal digits from the CSPRNG, the unguessable part of a new token."""
    return secrets.randbelow(SECRET_SPAN)


def secret_text() -> str:
    """:func:`secret_part` as the six-digit text the Redis scripts append to a sequence.

    Example:
        ```python
        from langgraph_recall.lease._tokens import secret_text

        text = secret_text()
        assert len(text) == 6 and text.isdigit()
        ```
    """
    return f"{secret_part():06d}"


def sequence_of(token: int) -> int:
    """The ordered part of ``token`` (milliseconds since :data:`CLOCK_BASE_MS`, or above).

    Example:
        ```python
        from langgraph_recall.lease._tokens import sequence_of

        assert sequence_of(42_000_001) == 42 and sequence_of(5) == 0
        ```
    """
    return token // SECRET_SPAN


def next_token(previous: int | None, *, now_ms: int, secret: int) -> int:
    """The token after ``previous`` (``None``: none known) at server time ``now_ms``
    (milliseconds since :data:`CLOCK_BASE_MS`), with ``secret`` as its random digits.

    The same rule runs in the Redis scripts and in Postgres (``lgm_next_token``); this is
    its reference, used by the in-memory backend and the unit tests.

    Example:
        ```python
        from langgraph_recall.lease._tokens import next_token

        assert next_token(None, now_ms=5, secret=9) == 5_000_009
        assert next_token(5_000_009, now_ms=5, secret=0) == 6_000_000
        ```
    """
    if not 0 <= secret < SECRET_SPAN:
        raise ValueError(f"secret must be in 0 .. {SECRET_SPAN - 1}")
    floor = 0 if previous is None else sequence_of(previous) + 1
    return max(floor, now_ms, 0) * SECRET_SPAN + secret
