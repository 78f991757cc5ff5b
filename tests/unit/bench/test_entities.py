"""The entities a text mentions (offline heuristic): people, places, organisations,
projects in English and Chinese; never a common word, a day or a greeting; always
normalised, each once, a bounded number."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_recall.bench._entities import MAX_ENTITIES, find_entities, normalize_entity
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
