"""Preferences read with their sentence: the reason kept, "it" named, a kept constraint."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_recall.extraction.prefilter import looks_memorable
from langgraph_recall.extraction.rules import RuleBasedExtractor
from tests._hypothesis import thorough

NOW = datetime(2026, 5, 1, tzinfo=timezone.utc)


def _preferences(text: str) -> list[str]:
    found = RuleBasedExtractor().extract_text(text, now=NOW)
    return [c.content for c in found if c.kind == "preference"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the reason after the preference stays with it
        (
            "I prefer lightweight tools over heavy frameworks to keep the bundle small.",
            ["User prefers lightweight tools over heavy frameworks to keep the bundle small."],
        ),
        (
            "I prefer Postgres because it is boring, how do I set it up?",
            ["User prefers Postgres because it is boring."],
        ),
        # the aim stated before "so I prefer" is its reason (one memory, not two)
        (
            "I'm trying to keep my app lightweight and easy to maintain, so I prefer simple, "
            "minimal dependencies, how can I do that?",
            [
                "User prefers simple, minimal dependencies to keep their app lightweight and "
                "easy to maintain."
            ],
        ),
        # "it" is the last name before it in the sentence
        (
            "I'm starting a project using Bootstrap 5.3.0 and I prefer it over Foundation "
            "due to its documentation.",
            ["User prefers Bootstrap 5.3.0 over Foundation due to its documentation."],
        ),
        # ... and with no name to stand for, "it" says nothing
        ("I prefer it over the old one.", []),
        # a constraint the user keeps to
        (
            "I'm trying to keep my bundle size under 100KB by using small libraries like "
            "lazysizes, but I'm not sure how.",
            [
                "User wants to keep their bundle size under 100KB by using small libraries "
                "like lazysizes."
            ],
        ),
        ("I'm trying to keep track of my expenses.", []),
        ("I want to keep in mind the deadline.", []),
        # "over" keeps what it was preferred over; the switch still names it
        ("I prefer tabs over spaces.", ["User prefers tabs over spaces."]),
        ("我更喜欢轻量的方案", ["User prefers 轻量的方案."]),
        ("我希望把应用大小控制在2MB以内", ["User wants to keep 应用大小控制在2MB以内."]),
    ],
)
def test_preferences_keep_their_reason_and_name(text: str, expected: list[str]) -> None:
    assert _preferences(text) == expected


def test_a_preference_over_another_still_replaces_it() -> None:
    [found] = RuleBasedExtractor().extract_text(
        "I prefer tabs over spaces because they are shorter.", now=NOW
    )
    assert found.replaces == ("spaces",)
    assert found.content == "User prefers tabs over spaces because they are shorter."


def test_kept_constraints_are_memorable() -> None:
    assert looks_memorable("I'm trying to keep my bundle size under 100KB, any ideas?")


_WORD = st.sampled_from(
    ["tiny", "plain", "typed", "local", "fast", "offline", "strict", "modular", "quiet"]
)
_NOUN = st.sampled_from(["app", "bundle", "build", "site", "service", "script", "api"])
_NAME = st.sampled_from(["Bootstrap 5.3.0", "Flask", "Vue 3", "SQLite", "Redis 7.2"])


@settings(max_examples=thorough(100), deadline=None, database=None)
@given(quality=_WORD, noun=_NOUN, liked=st.lists(_WORD, min_size=1, max_size=3, unique=True))
def test_an_aim_before_so_i_prefer_is_the_preferences_reason(
    quality: str, noun: str, liked: list[str]
) -> None:
    """Whatever the words: one preference, holding what is preferred and the aim."""
    thing = " ".join(liked) + " tools"
    found = _preferences(f"I'm trying to keep my {noun} {quality}, so I prefer {thing}.")
    assert found == [f"User prefers {thing} to keep their {noun} {quality}."]


@settings(max_examples=thorough(100), deadline=None, database=None)
@given(name=_NAME, other=_NAME, noun=_NOUN)
def test_it_names_the_last_name_before_it(name: str, other: str, noun: str) -> None:
    found = _preferences(
        f"I built the {noun} with {other} first, then moved it to {name} and I prefer it."
    )
    assert found == [f"User prefers {name}."]
