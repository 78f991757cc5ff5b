"""The BEAM harness on a tiny synthetic chat in BEAM's layout, through the real Postgres store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langgraph_recall.bench import beam
from langgraph_recall.bench.locomo import question_scores
from langgraph_recall.errors import BenchmarkDataError
from tests.conftest import POSTGRES_URI
from tests.fakes import HashingEmbeddings

pytestmark = pytest.mark.postgres


def _message(i: int, role: str, content: str, anchor: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"role": role, "id": i, "content": content}
    if anchor:
        out["time_anchor"] = anchor
    return out


CHAT = [
    {
        "batch_number": 1,
        "time_anchor": "March-15-2024",
        "turns": [
            [
                _message(0, "user", "I am building a budget tracker in Flask.", "March-15-2024"),
                _message(1, "assistant", "Great, Flask is a good fit for a budget tracker."),
                _message(2, "user", "Always format all code snippets with syntax highlighting."),
                _message(3, "assistant", "Understood, I will highlight every code snippet."),
            ],
            [
                _message(4, "user", "The dashboard API averages 400ms per request right now."),
                _message(5, "assistant", "400ms is slow; caching could help the dashboard."),
            ],
        ],
    },
    {
        "batch_number": 2,
        "time_anchor": "April-20-2024",
        "turns": [
            [
                _message(
                    6, "user", "My first sprint ends on March 29 with login done.", "April-20-2024"
                ),
                _message(7, "assistant", "Noted: sprint one closes March 29."),
                _message(8, "user", "After caching, the dashboard API now averages 250ms."),
                _message(9, "assistant", "250ms is a solid improvement for the dashboard."),
            ]
        ],
    },
]

QUESTIONS = {
    "abstention": [{"question": "What is my dog's name?"}],  # no evidence: left out
    "instruction_following": [
        {
            "question": "Could you show me how to implement a login feature?",
            "instruction_being_tested": "Always format all code snippets with syntax highlighting.",
            "source_chat_ids": [2],
        }
    ],
    "knowledge_update": [
        {
            "question": "What is the average response time of the dashboard API?",
            "source_chat_ids": {"original_info": [4], "updated_info": [8]},
        }
    ],
    "information_extraction": [
        {"question": "When does my first sprint end?", "source_chat_ids": [6]},
    ],
}


def _write(folder: Path) -> Path:
    chat = folder / "100K" / "1"
    chat.mkdir(parents=True)
    (chat / "chat.json").write_text(json.dumps(CHAT))
    (chat / "probing_questions.json").write_text(json.dumps(QUESTIONS))
    return folder


def test_loader_reads_messages_times_and_evidence(tmp_path: Path) -> None:
    [chat] = beam.load_chats(_write(tmp_path))
    assert chat.chat_id == "100K-1"
    assert [t.dia_id for t in chat.turns] == [str(i) for i in range(10)]
    assert chat.roles["2"] == "user" and chat.roles["3"] == "assistant"
    times = [t.when for t in chat.turns]
    assert all(t is not None for t in times) and times == sorted(times)  # type: ignore[type-var]
    assert times[6] is not None and times[6].month == 4
    by_category = {q.category: q for q in chat.questions}
    assert set(by_category) == {
        "instruction_following",
        "knowledge_update",
        "information_extraction",
    }
    update = by_category["knowledge_update"]
    assert (update.evidence, update.original, update.updated) == (("4", "8"), ("4",), ("8",))
    assert by_category["instruction_following"].target.startswith("Always format")


def test_missing_or_malformed_data_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkDataError, match="no BEAM chat"):
        beam.load_chats(tmp_path)
    with pytest.raises(BenchmarkDataError, match="BEAM's layout"):
        beam.chat_from_records("x", [{"no": "turns"}], {})


def test_run_scores_every_retriever_and_the_models_context(tmp_path: Path) -> None:
    [chat] = beam.load_chats(_write(tmp_path))
    report = beam.run(
        chats=[chat], embeddings=HashingEmbeddings(), dims=64, dsn=POSTGRES_URI, progress=print
    )
    assert [r.name for r in report.results] == list(beam.RETRIEVERS)
    for result in report.results:
        assert result.error is None, result.error
        assert result.overall.n == 3 and len(result.questions) == 3
        for row in result.questions:
            assert 0.0 <= row.recall_at_5 <= row.recall_at_10 <= 1.0
        # the overall figure is the mean of the per-question figures
        mean = 100 * sum(r.recall_at_10 for r in result.questions) / 3
        assert result.overall.recall_at_10 == pytest.approx(mean)
        assert sum(s.n for s in result.by_category.values()) == 3
    bm25 = report.result("bm25")
    sprint = next(r for r in bm25.questions if r.category == "information_extraction")
    assert sprint.recall_at_10 == 1.0  # "first sprint ends" shares its words with message 6
    ours = report.result("ours")
    assert all(r.in_context is not None for r in ours.questions)
    assert ours.by_category["instruction_following"].in_context == 100.0
    assert ours.by_category["knowledge_update"].update_first is not None
    assert report.ingest.messages == 10 and report.ingest.evidence_lost == 0
    assert report.ingest.episodes == 10
    header, rows = beam.report_rows(report)
    assert header[0] == "category" and rows[-1][0] == "overall"
    assert "ours" in beam.format_report(report)


def test_metrics_of_one_question() -> None:
    question = beam.BeamQuestion("q", "knowledge_update", ("4", "8"), ("4",), ("8",))
    ranked = ["8", "1", "2", "3", "5", "4"]
    row = beam.score_question("c", question, ranked, [{"kind": "episodic", "turn_id": "4"}])
    assert (row.recall_at_5, row.recall_at_10) == question_scores(ranked, question.evidence)[:2]
    assert (row.recall_at_5, row.recall_at_10) == (0.5, 1.0)
    assert row.in_context is True and row.update_first is True
    stale = beam.score_question("c", question, ["4", "8"], [{"kind": "episodic", "turn_id": "4"}])
    assert stale.update_first is False
    target = "Always include version numbers when I ask about libraries."
    instruction = beam.BeamQuestion("libs?", "instruction_following", ("9",), target=target)
    said = {"kind": "procedural", "content": "User's instruction: always include"}
    assert beam.score_question("c", instruction, [], [said]).in_context is False  # 2 of 6 words
    said["content"] += " version numbers for libraries."
    assert beam.score_question("c", instruction, [], [said]).in_context is True
