"""Behaviour of the pure ranking core: fusion, Generative-Agents factors, config checks."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from datetime import datetime, timedelta, timezone

import pytest

from langgraph_recall.errors import ConfigurationError
from langgraph_recall.retrieval import Candidate, RetrievalConfig, rank
from langgraph_recall.retrieval._rank import (
    access_score,
    fuse_relevance,
    importance_score,
    recency_score,
)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)


def ids(ranked: list[tuple[Candidate, float]]) -> list[object]:
    return [candidate.id for candidate, _ in ranked]


def test_exact_token_match_beats_vague_semantic_neighbour_when_lexical_weighted() -> None:
    # "project ZEPHYR-7" matches the query token exactly but is semantically unremarkable;
    # the neighbour is semantically close but lacks the token.
    exact = Candidate("exact", lexical_score=9.5, lexical_rank=1, vector_similarity=0.78)
    vague = Candidate("vague", lexical_score=0.0, vector_similarity=0.86, vector_rank=1)
    other = Candidate("other", lexical_score=0.0, vector_similarity=0.70, vector_rank=2)
    lexical_heavy = RetrievalConfig(lexical_weight=0.7, vector_weight=0.3)
    vector_only = RetrievalConfig(lexical_weight=0.0, vector_weight=1.0)
    assert ids(rank([vague, exact, other], config=lexical_heavy, now=NOW))[0] == "exact"
    assert ids(rank([vague, exact, other], config=vector_only, now=NOW))[0] == "vague"


def test_default_config_uses_both_signals() -> None:
    both = Candidate("both", lexical_score=4.0, lexical_rank=2, vector_similarity=0.80)
    lexical_only = Candidate("lex", lexical_score=5.0, lexical_rank=1, vector_similarity=0.50)
    vector_only = Candidate("vec", lexical_score=0.0, vector_similarity=0.82, vector_rank=1)
    ranked = ids(rank([lexical_only, vector_only, both], config=RetrievalConfig(), now=NOW))
    assert ranked[0] == "both"


def test_recency_reorders_equal_relevance_only_when_weighted() -> None:
    old = Candidate(
        "old", vector_similarity=0.9, vector_rank=1, event_time=NOW - timedelta(days=90)
    )
    new = Candidate("new", vector_similarity=0.9, vector_rank=2, event_time=NOW)
    no_recency = RetrievalConfig(recency_weight=0.0)
    assert ids(rank([old, new], config=no_recency, now=NOW)) == ["old", "new"]
    assert ids(rank([old, new], config=RetrievalConfig(recency_weight=0.5), now=NOW)) == [
        "new",
        "old",
    ]


def test_recency_can_outweigh_relevance_with_a_large_weight() -> None:
    relevant_old = Candidate(
        "relevant-old", vector_similarity=0.9, vector_rank=1, event_time=NOW - timedelta(days=365)
    )
    weaker_new = Candidate("weaker-new", vector_similarity=0.6, vector_rank=2, event_time=NOW)
    heavy = RetrievalConfig(recency_weight=2.0, recency_half_life=timedelta(days=7))
    assert ids(rank([relevant_old, weaker_new], config=RetrievalConfig(), now=NOW))[0] == (
        "relevant-old"
    )
    assert ids(rank([relevant_old, weaker_new], config=heavy, now=NOW))[0] == "weaker-new"


def test_importance_changes_order_as_configured() -> None:
    trivial = Candidate("trivial", lexical_score=2.0, lexical_rank=1, importance=1)
    vital = Candidate("vital", lexical_score=1.9, lexical_rank=2, importance=10)
    filler = Candidate("filler", lexical_score=0.5, lexical_rank=3, importance=5)
    plain = RetrievalConfig(importance_weight=0.0)
    weighted = RetrievalConfig(importance_weight=0.5)
    assert ids(rank([trivial, vital, filler], config=plain, now=NOW))[0] == "trivial"
    assert ids(rank([trivial, vital, filler], config=weighted, now=NOW))[0] == "vital"


def test_access_reinforcement_changes_order_as_configured() -> None:
    seldom = Candidate("seldom", vector_similarity=0.80, vector_rank=1, access_count=0)
    often = Candidate(
        "often", vector_similarity=0.79, vector_rank=2, access_count=20, last_accessed=NOW
    )
    floor = Candidate("floor", vector_similarity=0.10, vector_rank=3)
    assert ids(rank([seldom, often, floor], config=RetrievalConfig(), now=NOW))[0] == "seldom"
    reinforced = RetrievalConfig(access_weight=0.3)
    assert ids(rank([seldom, often, floor], config=reinforced, now=NOW))[0] == "often"


def test_rrf_uses_ranks_not_score_gaps() -> None:
    a = Candidate("a", lexical_score=100.0, lexical_rank=1, vector_rank=10)
    b = Candidate("b", lexical_score=1.0, lexical_rank=2, vector_rank=1)
    config = RetrievalConfig(fusion="rrf", lexical_weight=0.5, vector_weight=0.5, rrf_k=1)
    fused = fuse_relevance([a, b], config)
    # a: 0.5/2 + 0.5/11, b: 0.5/3 + 0.5/2, normalised by 1.0/2
    assert fused[0] == pytest.approx((0.5 / 2 + 0.5 / 11) / 0.5)
    assert fused[1] == pytest.approx((0.5 / 3 + 0.5 / 2) / 0.5)
    assert ids(rank([a, b], config=config, now=NOW)) == ["b", "a"]


def test_weighted_fusion_is_min_max_normalised_mean() -> None:
    candidates = [
        Candidate("a", lexical_score=10.0, vector_similarity=0.5),
        Candidate("b", lexical_score=5.0, vector_similarity=0.9),
        Candidate("c", lexical_score=None, vector_similarity=0.7),
    ]
    config = RetrievalConfig(lexical_weight=1.0, vector_weight=3.0)
    fused = fuse_relevance(candidates, config)
    assert fused == pytest.approx([(1.0 + 0.0) / 4, (0.5 + 3.0) / 4, (0.0 + 1.5) / 4])
    assert all(0.0 <= value <= 1.0 for value in fused)


def test_duplicate_ids_are_merged_keeping_both_signals() -> None:
    from_lexical = Candidate("m", lexical_score=3.0, lexical_rank=1)
    from_vector = Candidate("m", vector_similarity=0.9, vector_rank=1, importance=8)
    other = Candidate("o", lexical_score=1.0, lexical_rank=2, vector_similarity=0.1, vector_rank=2)
    ranked = rank([from_lexical, other, from_vector], config=RetrievalConfig(), now=NOW)
    assert ids(ranked) == ["m", "o"]
    merged = ranked[0][0]
    assert (merged.lexical_rank, merged.vector_rank, merged.importance) == (1, 1, 8)
    assert merged.vector_similarity == 0.9


def test_scores_are_sorted_descending_and_ties_keep_list_position() -> None:
    tied = [Candidate(f"t{i}", vector_similarity=0.5, vector_rank=5 - i) for i in range(5)]
    ranked = rank(tied, config=RetrievalConfig(), now=NOW)
    assert ids(ranked) == ["t4", "t3", "t2", "t1", "t0"]
    scores = [score for _, score in ranked]
    assert scores == sorted(scores, reverse=True)


def test_min_relevance_drops_weak_candidates() -> None:
    strong = Candidate("strong", vector_similarity=0.9, vector_rank=1)
    weak = Candidate("weak", vector_similarity=0.1, vector_rank=2)
    ranked = rank([strong, weak], config=RetrievalConfig(min_relevance=0.5), now=NOW)
    assert ids(ranked) == ["strong"]


def test_empty_and_naive_now() -> None:
    assert rank([], config=RetrievalConfig(), now=NOW) == []
    with pytest.raises(ConfigurationError, match="timezone-aware"):
        rank([Candidate("a")], config=RetrievalConfig(), now=datetime(2026, 1, 1))


def test_factor_functions() -> None:
    config = RetrievalConfig(recency_half_life=timedelta(days=10))
    assert recency_score(NOW - timedelta(days=20), now=NOW, config=config) == pytest.approx(0.25)
    assert recency_score(NOW + timedelta(days=1), now=NOW, config=config) == 1.0
    assert recency_score(None, now=NOW, config=config) == 0.0
    assert importance_score(None) == pytest.approx(4 / 9)
    assert importance_score(55) == 1.0
    assert importance_score(-3) == 0.0
    seen = Candidate("a", access_count=3, last_accessed=NOW - timedelta(days=10))
    assert access_score(seen, max_count=3, now=NOW, config=config) == pytest.approx(0.5)
    assert access_score(Candidate("b"), max_count=3, now=NOW, config=config) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lexical_candidates": 0}, "lexical_candidates"),
        ({"vector_candidates": 2.5}, "vector_candidates"),
        ({"fusion": "max"}, "fusion"),
        ({"lexical_weight": -1.0}, "lexical_weight"),
        ({"recency_weight": float("nan")}, "recency_weight"),
        ({"lexical_weight": 0.0, "vector_weight": 0.0}, "must be > 0"),
        ({"bm25_b": 1.5}, "bm25_b"),
        ({"recency_half_life": timedelta(0)}, "recency_half_life"),
        ({"text_search_config": ""}, "text_search_config"),
        ({"entity_weight": True}, "entity_weight"),  # a bool is no weight
        ({"recency_weight": False}, "recency_weight"),
    ],
)
def test_config_rejects_bad_values(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        RetrievalConfig(**kwargs)  # type: ignore[arg-type]


def test_config_is_frozen() -> None:
    config = RetrievalConfig()
    with pytest.raises(FrozenInstanceError):
        config.fusion = "rrf"  # type: ignore[misc]
