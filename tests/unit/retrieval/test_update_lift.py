"""The update lift: a newer memory about the same subject ranks above the older one."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from langgraph_recall.extraction.consolidation import topic_terms
from langgraph_recall.retrieval import Candidate, RetrievalConfig, rank_explained

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
OLD = "The dashboard API averages 400 ms."
NEW = "The dashboard API now averages 250 ms."


def _pair(old_similarity: float) -> list[Candidate]:
    return [
        Candidate(
            "old",
            vector_similarity=old_similarity,
            vector_rank=1,
            event_time=NOW - timedelta(days=60),
            terms=topic_terms(OLD),
        ),
        Candidate(
            "new",
            vector_similarity=0.80,
            vector_rank=2,
            event_time=NOW - timedelta(days=5),
            terms=topic_terms(NEW),
        ),
        Candidate(
            "other",
            vector_similarity=0.10,
            vector_rank=3,
            event_time=NOW,
            terms=topic_terms("User likes tea."),
        ),
    ]


def test_the_newer_memory_outranks_the_one_it_updates_and_explain_shows_it() -> None:
    ranked = rank_explained(_pair(0.85), config=RetrievalConfig(), now=NOW)
    assert [c.id for c, _ in ranked][:2] == ["new", "old"]
    parts = dict((c.id, p) for c, p in ranked)
    assert parts["new"].update > 0 and parts["old"].update == 0
    assert abs(sum(parts["new"].contributions().values()) - parts["new"].score) < 1e-9


def test_off_or_far_apart_or_unrelated_nothing_moves() -> None:
    off = rank_explained(_pair(0.85), config=RetrievalConfig(update_lift=0.0), now=NOW)
    assert next(c.id for c, _ in off) == "old"
    far = rank_explained(_pair(2.0), config=RetrievalConfig(), now=NOW)  # gap > the lift
    assert next(c.id for c, _ in far) == "old"
    unrelated = [
        Candidate(
            "a",
            vector_similarity=0.9,
            vector_rank=1,
            event_time=NOW - timedelta(days=9),
            terms=topic_terms("User works at Initech."),
        ),
        Candidate(
            "b",
            vector_similarity=0.88,
            vector_rank=2,
            event_time=NOW,
            terms=topic_terms("User likes green tea."),
        ),
    ]
    ranked = rank_explained(unrelated, config=RetrievalConfig(recency_weight=0), now=NOW)
    assert [c.id for c, _ in ranked] == ["a", "b"]
    assert all(p.update == 0 for _, p in ranked)
