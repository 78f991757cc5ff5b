"""The entities a text mentions (offline heuristic): people, places, organisations,
projects in English and Chinese; never a common word, a day or a greeting; always
normalised, each once, a bounded number."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_recall.extraction.entities import (
    MAX_ENTITIES,
    find_entities,
    normalize_entities,
    normalize_entity,
)
from langgraph_recall.extraction.textnorm import ENGLISH_STOP_WORDS
from tests._hypothesis import thorough


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yesterday Melanie took the kids to Lake Tahoe.", ("melanie", "lake tahoe")),
        (
            "Hey Caroline! I read Charlotte's Web in Sweden.",
            ("caroline", "charlotte's web", "sweden"),
        ),
        ("Sweden is cold in winter.", ()),  # a sentence's first word, named nowhere else
        ("Sweden is cold. We moved to Sweden.", ("sweden",)),
        ("I switched from Django to FastAPI at Acme Corp.", ("django", "fastapi", "acme corp")),
        ("The Bank of America branch closed", ("bank of america",)),
        ("Procter & Gamble hired me", ("procter & gamble",)),
        ("It runs on GPT-4 and NASA data", ("gpt-4", "nasa")),
        ("Python is great but I use Rust", ("rust",)),
        ("Thanks! Sounds good. See you on Monday in May.", ()),
        ("我住在杭州西湖区，在阿里巴巴公司工作。", ("杭州西湖区", "阿里巴巴公司")),
        ("我叫张伟，来自北京。", ("张伟", "北京")),
        ("用户住在杭州西湖区。", ("杭州西湖区",)),
        ("他在浙江大学读书", ("浙江大学",)),
        ("我用FastAPI写了一个服务", ("fastapi",)),
        # a sentence's first word that acts or speaks is a name
        ("Ana moved to Lisbon with Bruno.", ("ana", "lisbon", "bruno")),
        ("Melanie: Yes, every Sunday!", ("melanie",)),
        ("Life is good.", ()),
        ("See you Next Friday! Bye Jon, Since I left.", ("jon",)),
        ("Do Jon and Gina start businesses?", ("jon", "gina")),
    ],
)
def test_entities_of_english_and_chinese_texts(text: str, expected: tuple[str, ...]) -> None:
    assert find_entities(text) == expected


def test_one_entity_however_it_is_written() -> None:
    assert normalize_entity("Melanie’s") == normalize_entity(" MELANIE ") == "melanie"
    assert find_entities("Melanie's dog met MELANIE.") == ("melanie",)


@settings(max_examples=thorough(300), deadline=None)
@given(st.text(max_size=400))
def test_entities_are_normalised_distinct_bounded_and_taken_from_the_text(text: str) -> None:
    found = find_entities(text)
    assert len(found) == len(set(found)) <= MAX_ENTITIES
    plain = normalize_entity(unicodedata.normalize("NFKC", text)).replace("’", "'")
    for entity in found:
        assert entity and normalize_entity(entity) == entity
        assert entity in plain or entity in " ".join(plain.split()), (entity, text)
    assert find_entities(text) == found  # deterministic


@settings(max_examples=thorough(200), deadline=None)
@given(st.lists(st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=9), max_size=30))
def test_lower_case_words_name_no_entity(words: list[str]) -> None:
    assert find_entities(" ".join(words)) == ()


DAYS_AND_MONTHS = frozenset(
    [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
)
# capitalised stop words, days and months mixed with names: what the finder must leave out
_WORDS = st.sampled_from(
    [
        *sorted({w.capitalize() for w in DAYS_AND_MONTHS | ENGLISH_STOP_WORDS}),
        "Melanie",
        "Lisbon",
        "NASA",
        "LangGraph",
        "杭州市",
        "我住在北京。",
        ".",
        ",",
        "'s",
        "\n",
    ]
)


@settings(max_examples=thorough(300), deadline=None)
@given(st.text(max_size=60))
def test_normalising_twice_is_normalising_once(name: str) -> None:
    once = normalize_entity(name)
    assert normalize_entity(once) == once
    assert once == once.strip() and "  " not in once


@settings(max_examples=thorough(300), deadline=None)
@given(st.lists(_WORDS, max_size=40))
def test_never_a_stop_word_day_or_month_and_always_bounded(words: list[str]) -> None:
    text = " ".join(words)
    found = find_entities(text)
    assert len(found) <= MAX_ENTITIES
    for entity in found:
        assert not all(w in ENGLISH_STOP_WORDS or w in DAYS_AND_MONTHS for w in entity.split())
    assert find_entities(text) == found


def test_names_a_caller_or_a_model_gives_are_normalised_like_found_ones() -> None:
    given_names = ["Ana", {"name": "ACME Corp", "type": "organisation"}, "ana", "May", 3, ""]
    assert normalize_entities(given_names) == ("ana", "acme corp")
    assert normalize_entities([f"Person {n}" for n in range(40)]) == tuple(
        f"person {n}" for n in range(MAX_ENTITIES)
    )


@settings(max_examples=thorough(200), deadline=None)
@given(st.lists(st.one_of(st.text(max_size=30), st.integers()), max_size=40))
def test_given_names_are_normalised_distinct_bounded(names: list[object]) -> None:
    kept = normalize_entities(names)
    assert len(kept) == len(set(kept)) <= MAX_ENTITIES
    assert all(normalize_entity(name) == name and name for name in kept)
