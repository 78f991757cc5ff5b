"""Pure lease decisions: options, thread_id, config patching, backoff, renewal verdicts."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langgraph_recall.errors import ConfigurationError
from langgraph_recall.lease import FENCE_CONFIG_KEY, LeaseOptions
from langgraph_recall.lease._policy import (
    MAX_BACKOFF,
    RenewalVerdict,
    backoff_delays,
    busy_message,
    fenced_config,
    lost_message,
    renewal_verdict,
    thread_id_of,
)


def test_options_defaults_renew_every_to_a_third_of_ttl() -> None:
    options = LeaseOptions.create(strategy="wait", wait_timeout=5, ttl=9)
    assert options == LeaseOptions(strategy="wait", wait_timeout=5.0, ttl=9.0, renew_every=3.0)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"strategy": "enqueue"}, "strategy='reject'"),
        ({"ttl": 0}, "ttl must be a positive"),
        ({"ttl": math.inf}, "ttl must be a positive"),
        ({"ttl": "30"}, "ttl must be a number"),
        ({"wait_timeout": -1}, "wait_timeout must be a finite number"),
        ({"wait_timeout": True}, "wait_timeout must be a number"),
        ({"ttl": 3, "renew_every": 3}, "renew_every=3.0 must be shorter than ttl=3.0"),
        ({"renew_every": -0.5}, "renew_every must be a positive"),
    ],
)
def test_options_reject_bad_values_with_a_fix(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(fragment)):
        LeaseOptions.create(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "config", [None, {}, {"configurable": {}}, {"configurable": {"thread_id": "  "}}]
)
def test_thread_id_missing_says_how_to_pass_it(config: dict[str, object] | None) -> None:
    with pytest.raises(ConfigurationError, match=re.escape("'configurable': {'thread_id'")):
        thread_id_of(config)  # type: ignore[arg-type]


def test_thread_id_is_stringified() -> None:
    assert thread_id_of({"configurable": {"thread_id": 7}}) == "7"
    assert thread_id_of({"configurable": {"thread_id": "chat-1", "x": 1}}) == "chat-1"


def test_fenced_config_copies_and_overrides_token() -> None:
    original = {"tags": ["a"], "configurable": {"thread_id": "t", FENCE_CONFIG_KEY: 1}}
    patched = fenced_config(original, 5)  # type: ignore[arg-type]
    assert patched == {"tags": ["a"], "configurable": {"thread_id": "t", FENCE_CONFIG_KEY: 5}}
    assert original["configurable"] == {"thread_id": "t", FENCE_CONFIG_KEY: 1}
    assert fenced_config(None, 2) == {"configurable": {FENCE_CONFIG_KEY: 2}}


def test_backoff_doubles_to_the_cap_and_stops_at_the_deadline() -> None:
    delays = list(backoff_delays(2.0, initial=0.1, maximum=0.4))
    assert delays[:4] == [0.1, 0.2, 0.4, 0.4]
    assert math.isclose(sum(delays), 2.0)
    assert list(backoff_delays(0.0)) == []


@given(
    timeout=st.floats(min_value=0.0, max_value=60.0),
    jitter=st.lists(st.floats(min_value=0.0, max_value=0.999), min_size=1, max_size=5),
)
def test_backoff_is_bounded_and_sums_to_timeout(timeout: float, jitter: list[float]) -> None:
    cycle = iter(jitter * 1000)
    delays = list(backoff_delays(timeout, jitter=cycle))
    assert all(0 < d <= MAX_BACKOFF for d in delays)
    assert math.isclose(sum(delays), timeout, abs_tol=1e-6)


@pytest.mark.parametrize(
    ("renewed", "now", "verdict"),
    [
        (True, 100.0, RenewalVerdict.HELD),
        (False, 10.5, RenewalVerdict.LOST),
        (None, 11.0, RenewalVerdict.RETRY),
        (None, 13.0, RenewalVerdict.LOST),
    ],
)
def test_renewal_verdict(renewed: bool | None, now: float, verdict: RenewalVerdict) -> None:
    assert renewal_verdict(renewed=renewed, now=now, last_renewed_at=10.0, ttl=3.0) is verdict


def test_messages_name_the_thread_and_the_fix() -> None:
    assert "'chat-9'" in busy_message("chat-9", "reject", 0.0)
    assert "strategy='wait'" in busy_message("chat-9", "reject", 0.0)
    assert "after waiting 2.5s" in busy_message("chat-9", "wait", 2.5)
    assert "get_state()" in lost_message("chat-9", "renewal refused")
