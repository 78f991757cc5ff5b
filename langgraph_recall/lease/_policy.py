"""Pure decisions of the per-thread lease wrapper (no I/O, no clocks, no threads).

Everything here is a plain function of its arguments so it can be unit-tested
without a backend: validating the wrapper's options, reading ``thread_id`` from a
run config, patching the fencing token into it, the ``wait`` strategy's bounded
backoff schedule, and the verdict after each renewal attempt. The sync and async
shells in :mod:`langgraph_recall.lease._session` only call these and do the I/O.

Example:
    ```python
    from langgraph_recall.lease._policy import LeaseOptions, fenced_config, thread_id_of

    options = LeaseOptions.create(strategy="wait", ttl=10.0)
    config = {"configurable": {"thread_id": "chat-1"}}
    assert thread_id_of(config) == "chat-1"
    assert fenced_config(config, 3)["configurable"]["__lgm_fence__"] == 3
    assert options.renew_every == 10.0 / 3
    ```
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, cast

from langchain_core.runnables import RunnableConfig

from langgraph_recall.errors import ConfigurationError
from langgraph_recall.lease._protocol import FENCE_CONFIG_KEY

__all__ = [
    "DRAIN_REASON_PREFIX",
    "INITIAL_BACKOFF",
    "MAX_BACKOFF",
    "LeaseOptions",
    "RenewalVerdict",
    "Strategy",
    "backoff_delays",
    "busy_message",
    "fenced_config",
    "lost_message",
    "renewal_verdict",
    "thread_id_of",
]

Strategy = Literal["reject", "wait"]
"""``reject``: raise :class:`~langgraph_recall.errors.ThreadBusyError` at once;
``wait``: poll with bounded backoff until ``wait_timeout``."""

STRATEGIES: tuple[Strategy, ...] = ("reject", "wait")

INITIAL_BACKOFF = 0.02
"""First pause (seconds) of the ``wait`` strategy between acquisition attempts."""

MAX_BACKOFF = 0.5
"""Longest pause (seconds) between two acquisition attempts."""

DRAIN_REASON_PREFIX = "langgraph_recall lease lost: "
"""Prefix of the ``RunControl`` drain reason the wrapper uses when a lease is lost."""


def _positive_finite(name: str, value: float, fix: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigurationError(f"{name} must be a number of seconds, got {value!r}; {fix}")
    if not math.isfinite(value) or value <= 0:
        raise ConfigurationError(
            f"{name} must be a positive, finite number of seconds, got {value!r}; {fix}"
        )
    return float(value)


@dataclass(frozen=True)
class LeaseOptions:
    """Validated options of :func:`~langgraph_recall.lease.with_thread_lease`.

    Attributes:
        strategy: ``"reject"`` or ``"wait"``.
        wait_timeout: Longest time (seconds) the ``wait`` strategy waits for the lease.
        ttl: Lease lifetime (seconds); a crashed worker's lease frees itself after it.
        renew_every: Renewal period (seconds), shorter than ``ttl``.

    Example:
        ```python
        from langgraph_recall.lease import LeaseOptions

        options = LeaseOptions.create(strategy="reject", ttl=6.0)
        assert options.renew_every == 2.0
        ```
    """

    strategy: Strategy
    wait_timeout: float
    ttl: float
    renew_every: float

    @classmethod
    def create(
        cls,
        *,
        strategy: str = "reject",
        wait_timeout: float = 30.0,
        ttl: float = 30.0,
        renew_every: float | None = None,
    ) -> LeaseOptions:
        """Validate the options; ``renew_every`` defaults to a third of ``ttl``.

        Raises:
            ConfigurationError: An option is out of range; the message says which and how to fix it.
        """
        if strategy not in STRATEGIES:
            raise ConfigurationError(
                f"unknown lease strategy {strategy!r}; use strategy='reject' (raise "
                "ThreadBusyError at once) or strategy='wait' (wait up to wait_timeout seconds)"
            )
        ttl = _positive_finite("ttl", ttl, "e.g. ttl=30.0")
        if isinstance(wait_timeout, bool) or not isinstance(wait_timeout, (int, float)):
            raise ConfigurationError(
                f"wait_timeout must be a number of seconds, got {wait_timeout!r}"
            )
        if not math.isfinite(wait_timeout) or wait_timeout < 0:
            raise ConfigurationError(
                f"wait_timeout must be a finite number of seconds >= 0, got {wait_timeout!r}; "
                "e.g. wait_timeout=30.0"
            )
        if renew_every is None:
            renew_every = ttl / 3
        renew_every = _positive_finite("renew_every", renew_every, f"use a value below ttl={ttl}")
        if renew_every >= ttl:
            raise ConfigurationError(
                f"renew_every={renew_every} must be shorter than ttl={ttl}, or the lease expires "
                f"between renewals; leave it unset (default ttl/3 = {ttl / 3:g})"
            )
        return cls(
            strategy=strategy,
            wait_timeout=float(wait_timeout),
            ttl=ttl,
            renew_every=renew_every,
        )


def thread_id_of(config: RunnableConfig | None) -> str:
    """The ``thread_id`` a run config targets, as a string.

    Raises:
        ConfigurationError: The config has no usable ``thread_id``.

    Example:
        ```python
        from langgraph_recall.lease._policy import thread_id_of

        assert thread_id_of({"configurable": {"thread_id": 42}}) == "42"
        ```
    """
    configurable: Mapping[str, Any] = (config or {}).get("configurable") or {}
    thread_id = configurable.get("thread_id")
    if thread_id is None or (isinstance(thread_id, str) and not thread_id.strip()):
        raise ConfigurationError(
            "a thread lease needs a thread_id; pass "
            "config={'configurable': {'thread_id': '<conversation id>'}} to the run"
        )
    return str(thread_id)


def fenced_config(config: RunnableConfig | None, token: int) -> RunnableConfig:
    """A copy of ``config`` whose ``configurable`` carries the fencing ``token``.

    The caller's dicts are not modified.

    Example:
        ```python
        from langgraph_recall.lease._policy import fenced_config

        original = {"configurable": {"thread_id": "t"}}
        patched = fenced_config(original, 9)
        assert patched["configurable"] == {"thread_id": "t", "__lgm_fence__": 9}
        assert "__lgm_fence__" not in original["configurable"]
        ```
    """
    patched: dict[str, Any] = dict(config or {})
    configurable: dict[str, Any] = dict(patched.get("configurable") or {})
    configurable[FENCE_CONFIG_KEY] = token
    patched["configurable"] = configurable
    return cast("RunnableConfig", patched)


def backoff_delays(
    wait_timeout: float,
    *,
    initial: float = INITIAL_BACKOFF,
    maximum: float = MAX_BACKOFF,
    jitter: Iterator[float] | None = None,
) -> Iterator[float]:
    """Pauses between acquisition attempts of the ``wait`` strategy.

    Delays double from ``initial`` up to ``maximum``; each is scaled by a jitter factor
    (from ``jitter``, values in ``[0, 1)`` mapped to ``[0.5, 1.0)``) so waiting workers
    do not poll in lock step. The delays sum to exactly ``wait_timeout`` (the last one is
    cut short), so the caller makes one final attempt at the deadline and then gives up.

    Example:
        ```python
        from langgraph_recall.lease._policy import backoff_delays

        delays = list(backoff_delays(0.1, initial=0.02, maximum=0.05))
        assert delays == [0.02, 0.04, 0.04]
        ```
    """
    remaining = wait_timeout
    step = initial
    while remaining > 1e-9:
        scale = 0.5 + 0.5 * next(jitter) if jitter is not None else 1.0
        delay = min(step * scale, remaining)
        remaining -= delay
        yield round(delay, 9)
        step = min(step * 2, maximum)


class RenewalVerdict(Enum):
    """What the renewer does after one renewal attempt."""

    HELD = "held"
    """Renewed; keep going."""
    RETRY = "retry"
    """The backend failed, but the lease cannot have expired yet; try again next tick."""
    LOST = "lost"
    """The lease is gone: stop the run at the next step and report :class:`LeaseLostError`."""


def renewal_verdict(
    *, renewed: bool | None, now: float, last_renewed_at: float, ttl: float
) -> RenewalVerdict:
    """Judge one renewal attempt.

    Args:
        renewed: The backend's answer (``True``/``False``), or ``None`` if the call raised.
        now: Monotonic time of the attempt.
        last_renewed_at: Monotonic time the lease was last known to be held.
        ttl: The lease lifetime.

    Example:
        ```python
        from langgraph_recall.lease._policy import RenewalVerdict, renewal_verdict

        verdict = renewal_verdict(renewed=None, now=5.0, last_renewed_at=4.0, ttl=3.0)
        assert verdict is RenewalVerdict.RETRY  # backend hiccup, lease not expired yet
        verdict = renewal_verdict(renewed=None, now=8.0, last_renewed_at=4.0, ttl=3.0)
        assert verdict is RenewalVerdict.LOST
        ```
    """
    if renewed is True:
        return RenewalVerdict.HELD
    if renewed is False or now - last_renewed_at >= ttl:
        return RenewalVerdict.LOST
    return RenewalVerdict.RETRY


def busy_message(thread_id: str, strategy: Strategy, waited: float) -> str:
    """Message of the :class:`~langgraph_recall.errors.ThreadBusyError` for ``thread_id``.

    Example:
        ```python
        from langgraph_recall.lease._policy import busy_message

        assert "chat-1" in busy_message("chat-1", "reject", 0.0)
        ```
    """
    if strategy == "reject":
        return (
            f"thread {thread_id!r} is busy: another run holds its lease. Retry later, or use "
            "with_thread_lease(..., strategy='wait') to queue behind the running turn"
        )
    return (
        f"thread {thread_id!r} is still busy after waiting {waited:.1f}s for its lease: a "
        "run on the server's current history holds it and keeps renewing it (a lease whose "
        "holder died frees itself after its ttl; one taken before the server failed over or "
        "restarted does not count). Raise wait_timeout or retry later"
    )


def lost_message(thread_id: str, reason: str) -> str:
    """Message of the :class:`~langgraph_recall.errors.LeaseLostError` for ``thread_id``.

    Example:
        ```python
        from langgraph_recall.lease._policy import lost_message

        assert "chat-1" in lost_message("chat-1", "renewal refused")
        ```
    """
    return (
        f"the lease on thread {thread_id!r} was lost mid-run ({reason}); another worker may "
        "have taken the thread over, so this run stopped and its later writes were refused. "
        "Reload the thread's state with get_state() before retrying"
    )
