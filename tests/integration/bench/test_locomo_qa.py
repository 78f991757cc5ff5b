"""The LoCoMo QA harness end to end on scripted chat models and the real Postgres store.

The scripted models stand in for the LLM only: extraction returns each turn as a memory,
consolidation adds every candidate, the answerer of the memory method answers with the
gold answer exactly when the ``<memory>`` block it was given holds the question's evidence
turn (so J measures what retrieval put in front of it), the full-context answerer knows
the gold answer of every other question, and the judge calls an answer CORRECT when it
equals the gold answer after normalisation. Everything else — ExtractNode, consolidation,
the store, RetrieveNode, RespondNode, the cache — is the real code.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage

from langgraph_recall.bench import locomo, locomo_qa
from langgraph_recall.bench._qa_cache import QACache
from langgraph_recall.bench._qa_metrics import bleu1, f1_score
from langgraph_recall.offline import ScriptedChatModel
from tests.conftest import locomo_dir
from tests.fakes import HashingEmbeddings
from tests.integration.bench.qa_scripts import (
    DIMS,
    Judge,
    Script,
    mini_conversation,
    prompt_tokens,
    text_of,
)

pytestmark = [pytest.mark.postgres]


def test_loader_keeps_answers_of_categories_1_to_4_only() -> None:
    conversation = mini_conversation()
    assert conversation.speakers == ("Ana", "Ben") and len(conversation.turns) == 13
    assert len(conversation.questions) == 9
    assert all(q.category in locomo_qa.CATEGORIES and q.answer for q in conversation.questions)
    assert [len(g) for g in locomo_qa.turn_groups(conversation)] == [2, 2, 2, 1, 2, 2, 2]
    text = locomo_qa.transcript(conversation)
    assert text.startswith("Session 1 (8 May 2023, 13:56):\nAna: Hi Ben!")
    assert "Session 2 (20 June 2023, 10:04):" in text


def test_real_locomo_slice_loads_with_answers() -> None:
    data_dir = locomo_dir()
    first = locomo_qa.load_qa_conversations(data_dir)[0]
    assert len(first.questions) >= 100 and all(q.answer for q in first.questions)
    assert {q.category for q in first.questions} == set(locomo_qa.CATEGORIES)


def _run(
    conversation: locomo_qa.QAConversation,
    dsn: str,
    cache: Path,
    script: Callable[[list[BaseMessage]], Any],
    judge: Callable[[list[BaseMessage]], Any],
    workers: int = 1,
    episodic: bool = False,
) -> locomo_qa.QAReport:
    return locomo_qa.run(
        model=ScriptedChatModel(default=script),
        judge_model=ScriptedChatModel(default=judge),
        model_name="scripted",
        judge_model_name="scripted-judge",
        conversations=[conversation],
        embeddings=HashingEmbeddings(DIMS),
        dims=DIMS,
        postgres=dsn,
        cache=cache,
        token_budget=40,
        limit=3,
        workers=workers,
        episodic=episodic,
        progress=lambda event: None,
    )


def test_qa_harness_end_to_end_scores_known_answers(postgres_dsn: str, tmp_path: Path) -> None:
    conversation = mini_conversation()
    n = len(conversation.questions)
    assert n == 9
    script, judge = Script(conversation), Judge()
    report = _run(conversation, postgres_dsn, tmp_path / "cache.jsonl", script, judge, workers=3)

    # Every turn went through ExtractNode: one extraction call per pair of turns.
    groups = locomo_qa.turn_groups(conversation)
    assert script.calls["extract"] == len(groups)
    memory, full = report.method("memory"), report.method("full-context")
    assert memory.ingest_turns == len(conversation.turns)
    assert memory.ingest_llm_calls == script.calls["extract"] + script.calls["consolidate"]
    assert memory.ingest_llm_calls_per_turn == pytest.approx(
        memory.ingest_llm_calls / len(conversation.turns)
    )
    assert memory.memories > 0 and full.ingest_turns == 0

    # Full context: the gold answer for every other question, "no idea" for the rest.
    known = len(conversation.questions[::2])
    assert full.overall.n == n and full.overall.judged == n
    assert full.overall.j == pytest.approx(100 * known / n)
    expected_f1 = [f1_score(a.answer, a.gold) for a in full.answers]
    assert full.overall.f1 == pytest.approx(100 * sum(expected_f1) / n)
    assert full.overall.bleu1 == pytest.approx(
        100 * sum(bleu1(a.answer, a.gold) for a in full.answers) / n
    )
    assert [a.correct for a in full.answers] == [
        q.text in script.full_context_known for q in conversation.questions
    ]

    # Memory: correct exactly when retrieval injected the evidence turns.
    assert script.calls["memory"] == n and set(script.memory_hits) == {
        q.text for q in conversation.questions
    }
    hits = [script.memory_hits[q.text] for q in conversation.questions]
    assert [a.correct for a in memory.answers] == hits
    assert memory.overall.j == pytest.approx(100 * sum(hits) / n)
    assert any(hits) and not all(hits), hits  # 3 memories, 40 tokens: some, not all
    for c in locomo_qa.CATEGORIES:
        mine = [a for a in memory.answers if a.category == c]
        assert memory.by_category[c].n == len(mine)
        if mine:
            assert memory.by_category[c].j == pytest.approx(
                100 * sum(bool(a.correct) for a in mine) / len(mine)
            )
    assert sum(s.n for s in memory.by_category.values()) == n

    # Tokens: the memory block is within budget; full context is the whole transcript.
    block_prompt = prompt_tokens()
    assert all(0 < a.tokens <= report.token_budget + block_prompt for a in memory.answers)
    assert full.tokens_per_answer > memory.tokens_per_answer
    assert memory.answer_llm_calls_per_question == 1.0 == full.answer_llm_calls_per_question
    distinct = {(a.question, a.answer) for a in [*memory.answers, *full.answers]}
    assert judge.calls == report.judge_calls == len(distinct)  # one verdict per answer text

    table = locomo_qa.format_report(report)
    lines = table.splitlines()
    header = next(line for line in lines if line.startswith("| method") and "J" in line)
    assert [c.strip() for c in header.strip("|").split("|")] == locomo_qa.SCORE_HEADER
    row = next(line for line in lines if line.startswith("| full-context") and "(" in line)
    assert f"{100 * known / n:.1f}" in row
    assert "Costs:" in table and "LLM calls / ingested turn" in table


def test_qa_harness_with_episodes_keeps_every_turn_and_answers_from_them(
    postgres_dsn: str, tmp_path: Path
) -> None:
    """``--episodic``: both speakers' turns become episodic memories beside the facts, and
    the answers see them; an episodic run is cached apart from a plain one."""
    conversation = mini_conversation()
    plain = _run(conversation, postgres_dsn, tmp_path / "c.jsonl", Script(conversation), Judge())
    script = Script(conversation)
    episodic = _run(
        conversation, postgres_dsn, tmp_path / "c.jsonl", script, Judge(), episodic=True
    )
    memory = episodic.method("memory")
    assert memory.memories > plain.method("memory").memories
    assert script.calls["memory"] == len(conversation.questions)  # not served from the cache
    hits = [script.memory_hits[q.text] for q in conversation.questions]
    assert [a.correct for a in memory.answers] == hits


def test_qa_harness_resumes_after_an_interruption(postgres_dsn: str, tmp_path: Path) -> None:
    conversation = mini_conversation()
    cache = tmp_path / "cache.jsonl"
    interrupted = Script(conversation, fail_after=5)
    with pytest.raises(KeyboardInterrupt):
        _run(conversation, postgres_dsn, cache, interrupted, Judge())
    assert interrupted.calls["extract"] == 6  # five pairs stored, the sixth interrupted
    assert not interrupted.calls["memory"]

    resumed, judge = Script(conversation), Judge()
    report = _run(conversation, postgres_dsn, cache, resumed, judge)
    groups = locomo_qa.turn_groups(conversation)
    assert resumed.calls["extract"] == len(groups) - 5  # continued after the fifth pair
    assert report.method("memory").ingest_turns == len(conversation.turns)
    first = {a.question: a.correct for a in report.method("memory").answers}

    again, judge_again = Script(conversation), Judge()
    repeat = _run(conversation, postgres_dsn, cache, again, judge_again)
    assert sum(again.calls.values()) == 0 and judge_again.calls == 0  # all from the cache
    assert repeat.judge_calls == 0
    assert {a.question: a.correct for a in repeat.method("memory").answers} == first
    assert repeat.method("full-context").overall == report.method("full-context").overall
    assert QACache(cache).get("missing") is None and len(QACache(cache)) > 0


def test_qa_harness_needs_a_model_for_the_cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert locomo_qa.main(["--limit-conversations", "1"]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err
    assert (
        locomo.main(["--qa", "--limit-conversations", "1"]) == 2
    )  # langgraph_recall.bench.locomo delegates
    assert "OPENAI_API_KEY" in capsys.readouterr().err


def test_messages_of_a_turn_pair_carry_speakers_and_the_session_date() -> None:
    conversation = mini_conversation()
    group = locomo_qa.turn_groups(conversation)[0]
    messages = locomo_qa.pair_messages(group)
    assert isinstance(messages[0], HumanMessage)
    assert text_of(messages[0]) == group[0].content and len(messages) == len(group)
    assert messages[0].additional_kwargs["timestamp"].startswith(str(group[0].when)[:10])


def test_an_unreadable_extraction_skips_that_turn_and_is_counted(
    postgres_dsn: str, tmp_path: Path
) -> None:
    conversation = mini_conversation()
    script = Script(conversation, unreadable="border collie")  # turn D1:3's pair
    report = _run(conversation, postgres_dsn, tmp_path / "cache.jsonl", script, Judge())
    memory = report.method("memory")
    assert memory.ingest_errors == 1 and memory.ingest_turns == len(conversation.turns)
    groups = locomo_qa.turn_groups(conversation)
    assert script.calls["extract"] == len(groups) - 1 + 3  # three attempts at the bad pair
    breed = next(a for a in memory.answers if a.question == "What breed is Ana's dog?")
    assert breed.correct is False  # its evidence was never stored
    assert "extraction errors" in locomo_qa.format_report(report)


def test_a_real_locomo_slice_end_to_end(postgres_dsn: str, tmp_path: Path) -> None:
    """Two sessions of the first dev conversation through the whole harness."""
    data_dir = locomo_dir()
    first = locomo_qa.load_qa_conversations(data_dir)[0]
    turns = tuple(t for t in first.turns if t.session <= 2)
    ids = {t.dia_id for t in turns}
    questions = tuple(q for q in first.questions if q.evidence and set(q.evidence) <= ids)[:15]
    conversation = locomo_qa.QAConversation(first.sample_id, first.speakers, turns, questions)
    assert len(questions) >= 5
    script, judge = Script(conversation), Judge()
    report = _run(conversation, postgres_dsn, tmp_path / "cache.jsonl", script, judge, workers=2)
    memory, full = report.method("memory"), report.method("full-context")
    assert memory.ingest_turns == len(turns) and memory.ingest_errors == 0
    hits = [script.memory_hits[q.text] for q in questions]
    assert [a.correct for a in memory.answers] == hits
    assert memory.overall.j == pytest.approx(100 * sum(hits) / len(questions))
    assert full.overall.j == pytest.approx(100 * len(questions[::2]) / len(questions))
    assert full.tokens_per_answer > memory.tokens_per_answer > 0
    assert report.conversations == [first.sample_id]
