"""The LoCoMo harness runs end to end through our store on a slice of one conversation."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from bench import locomo
from tests.conftest import service_missing

pytestmark = [pytest.mark.embedded, pytest.mark.slow]


def _data_dir() -> Path:
    data_dir = locomo.DEFAULT_DATA_DIR
    if not any(data_dir.glob("*.json")):
        service_missing(
            "LoCoMo dev data (set LANGGRAPH_MEMORY_LOCOMO_DIR)",
            FileNotFoundError(f"no *.json in {data_dir}"),
        )
    return data_dir


def test_loader_reads_turns_sessions_and_questions() -> None:
    conversation = locomo.load_conversations(_data_dir())[0]
    assert conversation.turns and conversation.questions
    first = conversation.turns[0]
    assert first.previous is None and first.when is not None and first.when.tzinfo is not None
    assert conversation.turns[1].previous == first.content
    assert first.content.startswith(f"{first.speaker}: ")
    turn_ids = {t.dia_id for t in conversation.turns}
    assert all(q.category in locomo.CATEGORIES for q in conversation.questions)
    found = sum(e in turn_ids for q in conversation.questions for e in q.evidence)
    assert found >= 0.95 * sum(len(q.evidence) for q in conversation.questions)


def test_question_scores() -> None:
    ranked = ["D1:1", "D1:2", "D1:3", "D1:4", "D1:5", "D1:6", "D1:7"]
    assert locomo.question_scores(ranked, ["D1:2", "D1:7"]) == (0.5, 1.0, 0.5)
    assert locomo.question_scores(ranked, ["D9:9"]) == (0.0, 0.0, 0.0)


def _slice(conversation: locomo.Conversation, sessions: int) -> locomo.Conversation:
    """The first ``sessions`` sessions and the questions whose evidence lies in them."""
    turns = tuple(t for t in conversation.turns if t.session <= sessions)
    ids = {t.dia_id for t in turns}
    questions = tuple(q for q in conversation.questions if set(q.evidence) <= ids)
    return locomo.Conversation(conversation.sample_id, turns, questions)


def test_benchmark_slice_through_our_store_beats_plain_bm25(
    embedded_dsn: str, tmp_path: Path
) -> None:
    conversation = _slice(locomo.load_conversations(_data_dir())[0], sessions=6)
    assert len(conversation.questions) >= 20
    lines: list[str] = []
    report = locomo.run(
        retrievers=("ours-pgvector", "bm25-plain"),
        conversations=[conversation],
        pgvector_database=lambda: contextlib.nullcontext(embedded_dsn),
        report=lines.append,
    )
    n = len(conversation.questions)
    ours, bm25 = report.results
    assert ours.error is None, ours.error
    assert bm25.error is None, bm25.error
    assert report.questions == n and ours.overall.n == n and bm25.overall.n == n
    for result in (ours, bm25):
        scores = result.overall
        assert 0.0 <= scores.recall_at_5 <= scores.recall_at_10 <= 100.0
        assert 0.0 <= scores.mrr <= 100.0
        assert sum(s.n for s in result.by_category.values()) == n
    assert ours.overall.recall_at_10 > 0.0
    assert ours.overall.recall_at_10 >= bm25.overall.recall_at_10
    assert ours.overall.recall_at_5 >= bm25.overall.recall_at_5
    assert any("ours-pgvector" in line for line in lines)
    table = locomo.format_report(report)
    assert "ours-pgvector" in table and "bm25-plain" in table
    out = tmp_path / "locomo.json"
    out.write_text(json.dumps(report.to_json()))
    assert json.loads(out.read_text())["results"][0]["name"] == "ours-pgvector"
