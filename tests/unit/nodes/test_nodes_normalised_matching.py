"""Matching on normalised text, pure: the offset map, self-introductions in the offline
rules (both directions, table and hypothesis), consolidation's name guard in any script,
and that every extraction module documents itself with examples (run by
tests/integration/test_docstring_examples.py)."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import langgraph_recall.extraction as extraction
from langgraph_recall.extraction import RuleBasedExtractor, looks_memorable
from langgraph_recall.extraction.consolidation import plan_writes
from langgraph_recall.extraction.textnorm import normalize_for_matching
from langgraph_recall.extraction.types import (
    Action,
    ConsolidationDecision,
    ExistingMemory,
    MemoryCandidate,
)
from tests._hypothesis import thorough
from tests.docexamples import examples, package_modules

NOW = datetime(2026, 11, 29, tzinfo=timezone.utc)
FAST = settings(max_examples=thorough(300), deadline=None, database=None)


# -- the offset map ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("4111\u20131111\u20141111\u22121111", "4111-1111-1111-1111"),
        ("415\u2044555\u2215\uff0f0100", "415/555//0100"),
        ("ann\uff20example\u3002com", "ann@example.com"),
        ("\uff14\uff11\uff11\uff11", "4111"),
        ("\u0664\u0661\u0661\u0661 \u096a\u0967", "4111 41"),
        ("41\u200b11\u200d\u2060\ufeff\u00ad", "4111"),
        ("a\u00a0b\u3000c\u2009d", "a b c d"),
        ("jose\u0301", "josé"),
        ("\ufb01le", "file"),
        ("张三", "张三"),
    ],
)
def test_normalised_text(text: str, normalised: str) -> None:
    assert normalize_for_matching(text).text == normalised


@FAST
@given(st.text(max_size=40))
def test_every_normalised_character_maps_back_into_the_original(text: str) -> None:
    """Spans are monotone and inside the text; mapping a whole match back and normalising
    the original slice gives the same normalised characters."""
    m = normalize_for_matching(text)
    assert len(m.text) == (len(m.starts) if m.starts is not None else len(text))
    for i in range(len(m.text)):
        start, end = m.span(i, i + 1)
        assert 0 <= start < end <= len(text)
        if i:
            assert m.span(i - 1, i)[0] <= start
    if m.text:
        start, end = m.span(0, len(m.text))
        assert normalize_for_matching(text[start:end]).text == m.text


# -- self-introductions --------------------------------------------------------------------
INTRODUCTIONS = [
    ("I'm Gina.", "Gina"),
    ("I am Gina.", "Gina"),
    ("This is Gina", "Gina"),
    ("Gina here", "Gina"),
    ("call me Gina", "Gina"),
    ("Hi, I'm Gina!", "Gina"),
    ("I\u2019m Gina", "Gina"),
    ("Hi, this is Gina from support.", "Gina"),
    ("Hey, Gina here!", "Gina"),
    ("Thanks! Gina here.", "Gina"),
    ("I'm Gina and I live in Paris.", "Gina"),
    ("I'm José Ortega.", "José Ortega"),
    ("I'm Łukasz, nice to meet you", "Łukasz"),
    ("I am Jean-Luc Picard", "Jean-Luc Picard"),
    ("I'm Siobhán O'Brien.", "Siobhán O'Brien"),
    ("My name is Émile.", "Émile"),
    ("I\u2019m called Zoë.", "Zoë"),
]
NOT_INTRODUCTIONS = [
    "I'm tired",
    "I'm in Paris",
    "I am happy",
    "This is great",
    "I'm Not Sure",
    "I'm So Tired",
    "I'm Done.",
    "I am Very Happy",
    "I'm American.",
    "I'm Vegan",
    "I'm Sorry",
    "I'm Back!",
    "I'm OK",
    "I'm Gina's sister",
    "I'm Paris-based",
    "This is Python.",
    "This is It",
    "Nobody here",
    "Click Here.",
    "call me Maybe",
    "call me tomorrow",
    "I love it. This is great.",
    "Great. This is Amazing",
    "I'm a Data Scientist",
    "I'm From Berlin",
    "Ich bin im Urlaub.",
    "I'm Going Home",
]


def names(text: str) -> list[str]:
    found = RuleBasedExtractor().extract_text(text, now=NOW)
    return [
        c.content.removeprefix("User's name is ").rstrip(".") for c in found if c.slot == "name"
    ]


@pytest.mark.parametrize(("text", "name"), INTRODUCTIONS)
def test_self_introductions_are_caught(text: str, name: str) -> None:
    assert names(text) == [name]
    assert looks_memorable(text)  # the pre-filter lets the turn through


@pytest.mark.parametrize("text", NOT_INTRODUCTIONS)
def test_states_places_and_title_case_are_not_names(text: str) -> None:
    assert names(text) == []


FIRST_NAMES = ["Gina", "José", "Zoë", "Björn", "Łukasz", "Siobhán", "Ana", "Mohammed", "Wei"]
SURNAMES = ["", " Smith", " Ortega", " Nowak", " O'Brien", " Müller"]
TEMPLATES = [
    "I'm {n}.", "I am {n}.", "Hi, I'm {n}!", "This is {n}.", "Hello, this is {n} from sales.",
    "{n} here.", "Hey, {n} here!", "Call me {n}.", "You can call me {n}.", "My name is {n}.",
    "I'm {n} and I work at Acme.", "I'm {n}, nice to meet you.",
]  # fmt: skip
ADJECTIVES = [
    "tired", "happy", "sorry", "sure", "done", "back", "fine", "late", "busy", "ready", "home",
    "excited", "new", "lost", "here", "not sure", "so tired", "very happy", "american", "vegan",
    "great", "amazing", "important", "it", "python",
]  # fmt: skip
STATE_TEMPLATES = ["I'm {w}.", "I am {w}!", "This is {w}.", "I'm {w} today.", "{w} here."]


@FAST
@given(
    first=st.sampled_from(FIRST_NAMES),
    surname=st.sampled_from(SURNAMES),
    template=st.sampled_from(TEMPLATES),
    apostrophe=st.sampled_from(["'", "\u2019"]),
    lead_case=st.sampled_from(["as is", "lower"]),
    form=st.sampled_from(["NFC", "NFD"]),
)
def test_any_introduction_names_the_user(
    first: str, surname: str, template: str, apostrophe: str, lead_case: str, form: str
) -> None:
    name = first + surname
    text = (
        template.format(n=name)
        .replace("'", apostrophe)
        .replace(name.replace("'", apostrophe), name)
    )
    if lead_case == "lower" and not template.startswith("{n}"):  # "i'm Gina", "hi, this is…"
        text = re.sub(r"^(\w)", lambda m: m.group(1).lower(), text)
    text = unicodedata.normalize(form, text)
    assert names(text) == [unicodedata.normalize("NFC", name)]


@FAST
@given(
    word=st.sampled_from(ADJECTIVES),
    template=st.sampled_from(STATE_TEMPLATES),
    case=st.sampled_from(["lower", "title", "capitalize"]),
)
def test_no_state_or_adjective_is_taken_for_a_name(word: str, template: str, case: str) -> None:
    shown = {"lower": word.lower(), "title": word.title(), "capitalize": word.capitalize()}[case]
    assert names(template.format(w=shown)) == []


# -- consolidation reads Unicode names too ------------------------------------------------
EMPLOYERS = [
    "Google",
    "Škoda",
    "Ørsted",
    "Éclair Labs",
    "Łódź Tech",
    "Ångström AB",
    "华为",
    "ソニー",
]


@FAST
@given(
    pair=st.lists(st.sampled_from(EMPLOYERS), min_size=2, max_size=2, unique=True),
    fullwidth=st.booleans(),
)
def test_a_repeat_never_swallows_a_change_of_name_in_any_script(
    pair: list[str], fullwidth: bool
) -> None:
    """A model's NOOP on "works at Škoda" for "works at Ørsted" is a real update."""
    old_name, new_name = pair
    old = ExistingMemory(
        "k1",
        {"content": f"User works at {old_name}.", "slot": "employer",
         "valid_from": "2025-01-01T00:00:00+00:00"},
    )  # fmt: skip
    text = f"User works at {new_name}."
    if fullwidth:
        text = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)
    new = [MemoryCandidate(text, slot="employer")]
    noop = [ConsolidationDecision(0, Action.NOOP, target="k1")]
    plan = plan_writes(new, [old], noop, now=NOW, new_key=lambda: "k2")
    assert (plan.counts["invalidated"], plan.counts["added"]) == (1, 1)
    same = [MemoryCandidate(f"User works at {old_name}．", slot="employer")]  # fullwidth stop
    assert plan_writes(same, [old], noop, now=NOW).counts["reinforced"] == 1


# -- every extraction module has docstring examples -------------------------------------------
def _examples() -> list[tuple[str, str]]:
    modules = package_modules(extraction)
    return [(module.__name__, code) for module in modules for _, code in examples(module)]


EXAMPLES = _examples()

# (tests/integration/test_docstring_examples.py runs them)


def test_every_extraction_module_has_examples() -> None:
    modules = {module for module, _ in EXAMPLES}
    assert {"langgraph_recall.extraction.pii", "langgraph_recall.extraction.textnorm"} <= modules
    assert {
        "langgraph_recall.extraction.structured",
        "langgraph_recall.extraction.rules",
    } <= modules
    assert len(EXAMPLES) >= 40
