"""The LoCoMo retrieval benchmark's scores and report: what one run measured, and its tables.

:func:`question_scores` scores one question (Recall@5, Recall@10, reciprocal rank),
:func:`aggregate` a set of them; :class:`LocomoReport` is a run's result and
:func:`format_report` prints it. The public names are re-exported by
:mod:`langgraph_recall.bench.locomo`.

Example:
    ```python
    from langgraph_recall.bench._locomo_report import aggregate, question_scores

    scores = aggregate([question_scores(["D1:2", "D1:7"], ["D1:7"])])
    assert (scores.recall_at_5, scores.mrr) == (100.0, 50.0)
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from langgraph_recall.bench._common import format_table
from langgraph_recall.bench._locomo_data import CATEGORIES, CATEGORY_NAMES, TUNING_CONVERSATIONS
from langgraph_recall.bench._locomo_retrievers import AFTER_TURNS

__all__ = [
    "IngestSpeed",
    "LocomoReport",
    "RetrieverResult",
    "Scores",
    "aggregate",
    "format_report",
    "question_scores",
]


@dataclass
class Scores:
    """Mean Recall@5, Recall@10 and MRR (percent) over ``n`` questions."""

    n: int = 0
    recall_at_5: float = 0.0
    recall_at_10: float = 0.0
    mrr: float = 0.0


@dataclass
class RetrieverResult:
    """Scores of one retriever: overall, per category, per conversation; timings."""

    name: str
    overall: Scores = field(default_factory=Scores)
    by_category: dict[int, Scores] = field(default_factory=dict)
    by_conversation: dict[str, Scores] = field(default_factory=dict)
    by_split: dict[str, Scores] = field(default_factory=dict)
    index_seconds: float = 0.0
    search_ms_median: float = 0.0
    error: str | None = None


@dataclass
class IngestSpeed:
    """What ingesting the same turns cost one write path (its own, uncached embedder)."""

    path: str
    turns: int = 0
    memories: int = 0
    seconds: float = 0.0
    embed_calls: int = 0
    texts_embedded: int = 0
    chars_embedded: int = 0

    @property
    def turns_per_second(self) -> float:
        return self.turns / self.seconds if self.seconds > 0 else 0.0

    @property
    def texts_per_memory(self) -> float:
        return self.texts_embedded / self.memories if self.memories else 0.0


@dataclass
class LocomoReport:
    """Everything one run measured."""

    conversations: list[str]
    questions: int
    embedder: str
    context_turns: int
    results: list[RetrieverResult]
    after_turns: int = AFTER_TURNS
    ingest: list[IngestSpeed] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def question_scores(ranked: Sequence[str], evidence: Sequence[str]) -> tuple[float, float, float]:
    """(Recall@5, Recall@10, reciprocal rank within the top 10) for one question."""
    wanted = set(evidence)
    recall5 = len(wanted & set(ranked[:5])) / len(wanted)
    recall10 = len(wanted & set(ranked[:10])) / len(wanted)
    reciprocal = next((1.0 / (i + 1) for i, key in enumerate(ranked[:10]) if key in wanted), 0.0)
    return recall5, recall10, reciprocal


def aggregate(rows: Sequence[tuple[float, float, float]]) -> Scores:
    if not rows:
        return Scores()
    n = len(rows)
    return Scores(
        n=n,
        recall_at_5=100 * sum(r[0] for r in rows) / n,
        recall_at_10=100 * sum(r[1] for r in rows) / n,
        mrr=100 * sum(r[2] for r in rows) / n,
    )


def format_report(report: LocomoReport) -> str:
    """The overall/per-category table and the per-conversation Recall@10 table."""
    header = ["retriever", "R@5", "R@10", "MRR"]
    header += [f"c{c} {CATEGORY_NAMES[c]} R@5/R@10" for c in CATEGORIES]
    header += ["index s", "search ms"]
    rows: list[list[str]] = []
    for r in report.results:
        if r.error:
            rows.append([r.name, "skipped", "", "", "", "", "", "", "", ""])
            continue
        row = [
            r.name,
            f"{r.overall.recall_at_5:.1f}",
            f"{r.overall.recall_at_10:.1f}",
            f"{r.overall.mrr:.1f}",
        ]
        for c in CATEGORIES:
            s = r.by_category.get(c, Scores())
            row.append(f"{s.recall_at_5:.1f} / {s.recall_at_10:.1f} (n={s.n})")
        row += [f"{r.index_seconds:.1f}", f"{r.search_ms_median:.1f}"]
        rows.append(row)
    per_conversation_header = ["retriever", *(f"{c} R@5/R@10" for c in report.conversations)]
    per_conversation = [
        [
            r.name,
            *(
                f"{r.by_conversation[c].recall_at_5:.1f} / {r.by_conversation[c].recall_at_10:.1f}"
                for c in report.conversations
            ),
        ]
        for r in report.results
        if not r.error
    ]
    split_header = [
        "retriever",
        f"tuning ({', '.join(TUNING_CONVERSATIONS)}) R@5/R@10",
        "held-out (the others) R@5/R@10",
    ]
    splits = [
        [
            r.name,
            *(
                f"{r.by_split[g].recall_at_5:.1f} / {r.by_split[g].recall_at_10:.1f} "
                f"(n={r.by_split[g].n})"
                for g in ("tuning", "held-out")
            ),
        ]
        for r in report.results
        if not r.error and r.by_split
    ]
    return (
        f"LoCoMo turn retrieval ({len(report.conversations)} conversations, "
        f"{report.questions} questions of categories 1-4, embedder {report.embedder}, "
        f"episode context {report.context_turns} turns before, {report.after_turns} after)\n\n"
        + format_table(header, rows)
        + "\n\nPer conversation:\n\n"
        + format_table(per_conversation_header, per_conversation)
        + "\n\nTuning vs held-out conversations:\n\n"
        + format_table(split_header, splits)
        + _ingest_table(report)
    )


def _ingest_table(report: LocomoReport) -> str:
    if not report.ingest:
        return ""
    header = ["write path", "turns", "seconds", "turns/s", "embedder calls", "texts/memory"]
    header += ["chars embedded/memory"]
    rows = [
        [
            s.path,
            str(s.turns),
            f"{s.seconds:.1f}",
            f"{s.turns_per_second:.1f}",
            str(s.embed_calls),
            f"{s.texts_per_memory:.2f}",
            f"{s.chars_embedded / s.memories:.0f}" if s.memories else "0",
        ]
        for s in report.ingest
    ]
    speed = {s.path: s.turns_per_second for s in report.ingest}
    ratio = speed.get("episodic", 0.0) / speed["loader"] if speed.get("loader") else 0.0
    unlinked = speed.get("episodic-unlinked", 0.0)
    links = (
        f", episodic / episodic-unlinked = {speed['episodic'] / unlinked:.2f}x"
        if (unlinked and "episodic" in speed)
        else ""
    )
    return (
        "\n\nIngest cost (same turns, each path on its own uncached embedder, alternating "
        f"rounds): episodic / loader = {ratio:.2f}x turns/s{links}\n\n" + format_table(header, rows)
    )
