"""QA answer scores (F1, BLEU-1, judge verdicts, aggregation) and the resumable cache."""

from __future__ import annotations

import doctest
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_recall.bench import _qa_cache, _qa_metrics
from langgraph_recall.bench._qa_cache import QACache, cache_key, text_hash
from langgraph_recall.bench._qa_metrics import (
    AnswerScores,
    aggregate,
    answer_tokens,
    bleu1,
    f1_score,
    judge_prompt,
    normalize_answer,
    parse_judgement,
)
from tests._hypothesis import thorough

words = st.lists(
    st.sampled_from(["paris", "may", "2023", "dog", "the", "a", "violin", "Pepper", "7"]),
    max_size=8,
).map(" ".join)


@pytest.mark.parametrize("module", [_qa_metrics, _qa_cache])
def test_docstring_examples_run(module: object) -> None:
    result = doctest.testmod(module, raise_on_error=False)  # type: ignore[arg-type]
    assert result.attempted > 0 and result.failed == 0


def test_f1_and_bleu1_on_known_answers() -> None:
    assert f1_score("Pepper", "pepper") == 1.0
    assert f1_score("The Lisbon half marathon", "Lisbon half marathon") == 1.0
    # 2 common tokens, precision 2/4, recall 2/2 → F1 = 2 * 0.5 * 1 / 1.5
    assert f1_score("in May 2023 probably", "May 2023") == pytest.approx(2 / 3)
    assert f1_score("no idea", "violin") == 0.0
    assert bleu1("in May 2023 probably", "May 2023") == pytest.approx(0.5)  # no brevity penalty
    # one of one token matches, the reference has 3 → brevity penalty exp(1 - 3)
    assert bleu1("sister", "her sister Clara") == pytest.approx(math.exp(-2))
    assert bleu1("dog dog dog", "dog") == pytest.approx(1 / 3)  # counts are clipped
    assert f1_score("", "") == 1.0 and bleu1("", "x") == 0.0


@settings(max_examples=thorough(200), deadline=None)
@given(words, words)
def test_scores_are_bounded_symmetric_and_perfect_on_identity(a: str, b: str) -> None:
    assert 0.0 <= f1_score(a, b) <= 1.0 and 0.0 <= bleu1(a, b) <= 1.0
    assert f1_score(a, b) == pytest.approx(f1_score(b, a))
    assert f1_score(a, a) == 1.0 and bleu1(a, a) == 1.0
    if set(answer_tokens(a)).isdisjoint(answer_tokens(b)) and answer_tokens(a) and answer_tokens(b):
        assert f1_score(a, b) == 0.0 == bleu1(a, b)
    # Normalising is idempotent and ignores case, punctuation and articles.
    assert normalize_answer(normalize_answer(a)) == normalize_answer(a)
    assert f1_score(f"The {a.upper()}!", b) == pytest.approx(f1_score(a, b))


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ('The answer names the same city.\n{"label": "CORRECT"}', True),
        ('{"label": "WRONG"}', False),
        ('{"label":"correct"}', True),
        ("It is wrong... final: WRONG", False),
        ('first {"label": "WRONG"} then {"label": "CORRECT"}', True),
        ("I cannot tell.", None),
    ],
)
def test_judge_verdicts_are_read_from_the_last_label(reply: str, verdict: bool | None) -> None:
    assert parse_judgement(reply) is verdict


def test_judge_prompt_shows_question_gold_and_answer_and_asks_for_json() -> None:
    text = judge_prompt("When did Ben move?", "May 2023", "in May")
    assert "Question: When did Ben move?" in text and "Gold answer: May 2023" in text
    assert "Generated answer: in May" in text and '{"label": "CORRECT"}' in text


@settings(max_examples=thorough(100), deadline=None)
@given(
    st.lists(
        st.tuples(st.none() | st.booleans(), st.floats(0.0, 1.0), st.floats(0.0, 1.0)),
        max_size=30,
    )
)
def test_aggregate_is_the_mean_over_answers_and_j_over_judged_ones(
    rows: list[tuple[bool | None, float, float]],
) -> None:
    scores = aggregate(rows)
    judged = [c for c, _, _ in rows if c is not None]
    assert scores.n == len(rows) and scores.judged == len(judged)
    if not rows:
        assert scores == AnswerScores()
        return
    assert scores.j == pytest.approx(100 * sum(judged) / len(judged) if judged else 0.0)
    assert scores.f1 == pytest.approx(100 * sum(f for _, f, _ in rows) / len(rows))
    assert scores.bleu1 == pytest.approx(100 * sum(b for _, _, b in rows) / len(rows))


def test_cache_survives_a_cut_off_line_and_last_write_wins(tmp_path: Path) -> None:
    path = tmp_path / "cache.jsonl"
    cache = QACache(path)
    cache.put("a", {"v": 1})
    cache.put("a", {"v": 2})
    cache.put("b", [1, 2])
    with path.open("a") as out:
        out.write('{"key": "c", "value": {"v"')  # an interrupted write
    reread = QACache(path)
    assert reread.get("a") == {"v": 2} and reread.get("b") == [1, 2] and reread.get("c") is None
    reread.put("d", "later")  # appended on a fresh line, not glued to the broken one
    assert QACache(path).get("d") == "later" and len(QACache(path)) == 3
    lines = path.read_text().splitlines()
    assert json.loads(lines[-1]) == {"key": "d", "value": "later"}
    assert (reread.hits, reread.misses) == (2, 1)


def test_cache_keys_depend_on_every_part_in_order() -> None:
    assert cache_key("answer", "conv-1", "q") != cache_key("answer", "q", "conv-1")
    assert cache_key("x", 1) == cache_key("x", 1)
    assert text_hash("prompt a") != text_hash("prompt b") and len(text_hash("x")) == 16
    memory_only = QACache(None)
    memory_only.put("k", 1)
    assert memory_only.get("k") == 1 and memory_only.path is None
