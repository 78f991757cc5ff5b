"""The QA report tables (pure): what each column shows for known results."""

from __future__ import annotations

from langgraph_recall.bench import locomo_qa
from langgraph_recall.bench._qa_metrics import AnswerScores


def _report() -> locomo_qa.QAReport:
    memory = locomo_qa.MethodResult(
        "memory",
        overall=AnswerScores(n=4, judged=4, j=75.0, f1=62.5, bleu1=50.0),
        by_category={
            1: AnswerScores(n=1, judged=1, j=0.0),
            2: AnswerScores(n=1, judged=1, j=100.0),
            3: AnswerScores(),
            4: AnswerScores(n=2, judged=2, j=100.0),
        },
        tokens_per_answer=412.4,
        answer_llm_calls_per_question=1.0,
        answer_ms_p50=812.0,
        answer_ms_p95=1490.6,
        ingest_turns=20,
        ingest_llm_calls=15,
        ingest_llm_calls_per_turn=0.75,
        ingest_ms_per_turn_p50=950.0,
        ingest_ms_per_turn_p95=2100.0,
        ingest_errors=1,
        memories=31,
    )
    full = locomo_qa.MethodResult(
        "full-context",
        overall=AnswerScores(n=4, judged=4, j=100.0, f1=90.0, bleu1=88.0),
        by_category={c: AnswerScores() for c in locomo_qa.CATEGORIES},
        tokens_per_answer=15696.0,
        answer_llm_calls_per_question=1.0,
    )
    return locomo_qa.QAReport(
        conversations=["conv-26"],
        questions=4,
        model="gpt-4o-mini",
        judge_model="gpt-4o-mini",
        embedder="e5",
        episodic=False,
        token_budget=1000,
        methods=[memory, full],
        judge_calls=6,
        cache_hits=2,
        cache_misses=10,
    )


def test_score_and_cost_rows_show_the_numbers() -> None:
    report = _report()
    memory, full = locomo_qa.score_rows(report)
    assert memory == [
        "memory",
        "4",
        "75.0",
        "62.5",
        "50.0",
        "0.0 (1)",
        "100.0 (1)",
        "0.0 (0)",
        "100.0 (2)",
    ]
    assert full[:5] == ["full-context", "4", "100.0", "90.0", "88.0"]
    memory_cost, full_cost = locomo_qa.cost_rows(report)
    assert memory_cost == [
        "memory",
        "412",
        "1.00",
        "812 / 1491",
        "20",
        "0.75",
        "950 / 2100",
        "1",
        "31",
    ]
    assert full_cost == ["full-context", "15696", "1.00", "0 / 0", "0", "-", "-", "-", "-"]
    assert len(locomo_qa.SCORE_HEADER) == len(memory) and len(locomo_qa.COST_HEADER) == len(
        memory_cost
    )


def test_format_report_names_the_setting_and_has_both_tables() -> None:
    text = locomo_qa.format_report(_report())
    assert text.startswith(
        "LoCoMo QA (1 conversations, 4 questions of categories 1-4; model gpt-4o-mini"
    )
    assert "| memory " in text and "| full-context " in text and "Costs:" in text
    assert "Judge calls this run: 6; cache hits 2, misses 10" in text
    data = _report().to_json()
    assert data["methods"][0]["overall"]["j"] == 75.0
    assert data["methods"][1]["name"] == "full-context"
