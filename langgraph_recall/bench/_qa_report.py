"""Results of the QA harness and their tables (pure).

Example:
    Not executed (it needs data or a model)::

        from langgraph_recall.bench._qa_report import format_report

        print(format_report(report))  # a QAReport from langgraph_recall.bench.locomo_qa.run
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from langgraph_recall.bench._common import format_table
from langgraph_recall.bench._qa_data import CATEGORIES, CATEGORY_NAMES
from langgraph_recall.bench._qa_metrics import AnswerScores

__all__ = [
    "COST_HEADER",
    "SCORE_HEADER",
    "AnswerRecord",
    "MethodResult",
    "QAReport",
    "cost_rows",
    "format_report",
    "score_rows",
]


@dataclass
class AnswerRecord:
    """One answered question."""

    conversation: str
    question: str
    category: int
    gold: str
    answer: str
    correct: bool | None
    f1: float
    bleu1: float
    tokens: int
    latency_ms: float
    llm_calls: int


@dataclass
class MethodResult:
    """Scores and costs of one method (``memory`` or ``full-context``)."""

    name: str
    overall: AnswerScores = field(default_factory=AnswerScores)
    by_category: dict[int, AnswerScores] = field(default_factory=dict)
    tokens_per_answer: float = 0.0
    answer_llm_calls_per_question: float = 0.0
    answer_ms_p50: float = 0.0
    answer_ms_p95: float = 0.0
    ingest_turns: int = 0
    ingest_llm_calls: int = 0
    ingest_llm_calls_per_turn: float = 0.0
    ingest_ms_per_turn_p50: float = 0.0
    ingest_ms_per_turn_p95: float = 0.0
    ingest_errors: int = 0
    memories: int = 0
    answers: list[AnswerRecord] = field(default_factory=list)


@dataclass
class QAReport:
    """Everything one run measured."""

    conversations: list[str]
    questions: int
    model: str
    judge_model: str
    embedder: str
    episodic: bool
    token_budget: int
    methods: list[MethodResult]
    judge_calls: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    cache_path: str | None = None

    def method(self, name: str) -> MethodResult:
        """The result of method ``name``."""
        return next(m for m in self.methods if m.name == name)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data."""
        return asdict(self)


SCORE_HEADER = [
    "method",
    "n",
    "J",
    "F1",
    "BLEU-1",
    *(f"c{c} {CATEGORY_NAMES[c]} J (n)" for c in CATEGORIES),
]
COST_HEADER = [
    "method",
    "tokens injected / answer",
    "LLM calls / answer",
    "answer ms p50 / p95",
    "turns ingested",
    "LLM calls / ingested turn",
    "ingest ms / turn p50 / p95",
    "extraction errors",
    "memories stored",
]


def score_rows(report: QAReport) -> list[list[str]]:
    """Rows of the scores table (see :data:`SCORE_HEADER`)."""
    rows = []
    for m in report.methods:
        row = [
            m.name,
            str(m.overall.n),
            f"{m.overall.j:.1f}",
            f"{m.overall.f1:.1f}",
            f"{m.overall.bleu1:.1f}",
        ]
        for c in CATEGORIES:
            s = m.by_category.get(c, AnswerScores())
            row.append(f"{s.j:.1f} ({s.n})")
        rows.append(row)
    return rows


def cost_rows(report: QAReport) -> list[list[str]]:
    """Rows of the costs table (see :data:`COST_HEADER`)."""
    rows = []
    for m in report.methods:
        ingested = m.ingest_turns > 0
        rows.append(
            [
                m.name,
                f"{m.tokens_per_answer:.0f}",
                f"{m.answer_llm_calls_per_question:.2f}",
                f"{m.answer_ms_p50:.0f} / {m.answer_ms_p95:.0f}",
                str(m.ingest_turns),
                f"{m.ingest_llm_calls_per_turn:.2f}" if ingested else "-",
                f"{m.ingest_ms_per_turn_p50:.0f} / {m.ingest_ms_per_turn_p95:.0f}"
                if ingested
                else "-",
                str(m.ingest_errors) if ingested else "-",
                str(m.memories) if m.name == "memory" else "-",
            ]
        )
    return rows


def format_report(report: QAReport) -> str:
    """The scores table (J, F1, BLEU-1 overall and J per category) and the costs table."""
    return (
        f"LoCoMo QA ({len(report.conversations)} conversations, {report.questions} questions "
        f"of categories 1-4; model {report.model}, judge {report.judge_model}, embedder "
        f"{report.embedder}, token budget {report.token_budget}, episodic "
        f"{'on' if report.episodic else 'off'})\n\n"
        + format_table(SCORE_HEADER, score_rows(report))
        + "\n\nCosts:\n\n"
        + format_table(COST_HEADER, cost_rows(report))
        + f"\n\nJudge calls this run: {report.judge_calls}; cache hits {report.cache_hits}, "
        f"misses {report.cache_misses}" + (f" ({report.cache_path})" if report.cache_path else "")
    )
