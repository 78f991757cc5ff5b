"""Score explanations: the terms ``rank_explained`` reports add up to the score ``rank`` uses."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_recall.errors import ConfigurationError
from langgraph_recall.retrieval import (
    Candidate,
    RetrievalConfig,
    TimeWindow,
    rank,
    rank_explained,
)
from tests._hypothesis import thorough

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)

weights = st.floats(min_value=0.0, max_value=3.0, allow_nan=False)
candidates = st.lists(
    st.builds(
        Candidate,
        id=st.integers(0, 30),
        lexical_score=st.none() | st.floats(0.0, 20.0),
        lexical_rank=st.none() | st.integers(1, 50),
        vector_similarity=st.none() | st.floats(-1.0, 1.0),
        vector_rank=st.none() | st.integers(1, 50),
        importance=st.none() | st.floats(1.0, 10.0),
        event_time=st.none() | st.integers(0, 400).map(lambda d: NOW - timedelta(days=d)),
        last_accessed=st.none() | st.integers(0, 400).map(lambda d: NOW - timedelta(days=d)),
        access_count=st.integers(0, 50),
        states_change=st.booleans(),
        entity_link=st.sampled_from([0.0, 0.0, 0.3, 1.0]) | st.floats(0.0, 1.0),
        entities=st.just(("luna",)),
    ),
    max_size=25,
)
configs = st.builds(
    RetrievalConfig,
    fusion=st.sampled_from(["weighted", "rrf"]),
    lexical_weight=st.floats(0.05, 3.0),
    vector_weight=st.floats(0.05, 3.0),
    relevance_weight=weights,
    recency_weight=weights,
    importance_weight=weights,
    access_weight=weights,
    time_match_weight=weights,
    update_weight=weights,
    entity_weight=weights,
)
windows = st.none() | st.just(
    TimeWindow((NOW - timedelta(days=40)).date(), (NOW - timedelta(days=10)).date())
)


@settings(max_examples=thorough(300), deadline=None)
@given(candidates, configs, windows)
def test_explained_terms_add_up_to_the_score_rank_orders_by(
    found: list[Candidate], config: RetrievalConfig, window: TimeWindow | None
) -> None:
    """Property: for any candidates and weights, the eight contributions sum to the score,
    and the explained ranking is exactly ``rank``'s (same order, same scores)."""
    explained = rank_explained(found, config=config, now=NOW, time_window=window)
    plain = rank(found, config=config, now=NOW, time_window=window)
    assert [(c.id, parts.score) for c, parts in explained] == [(c.id, s) for c, s in plain]
    for _, parts in explained:
        assert sum(parts.contributions().values()) == parts.score
        assert all(value >= 0.0 for value in parts.contributions().values())
        assert parts.lexical + parts.vector <= config.relevance_weight + 1e-9


@settings(max_examples=thorough(300), deadline=None)
@given(candidates, configs, windows, st.integers(-2, 30))
def test_a_limited_ranking_is_the_head_of_the_whole_one(
    found: list[Candidate], config: RetrievalConfig, window: TimeWindow | None, limit: int
) -> None:
    """Property: ``limit=k`` returns exactly the first ``k`` of the whole ranking, with the
    same breakdowns (a page's ranking does not depend on how much of it is built)."""
    whole = rank_explained(found, config=config, now=NOW, time_window=window)
    head = rank_explained(found, config=config, now=NOW, time_window=window, limit=limit)
    assert head == whole[: max(limit, 0)]


def test_explanation_keeps_the_raw_signals_beside_the_terms() -> None:
    [(_, parts)] = rank_explained(
        [Candidate("a", lexical_score=3.5, lexical_rank=2, vector_similarity=0.42, vector_rank=1)],
        config=RetrievalConfig(),
        now=NOW,
    )
    assert (parts.bm25, parts.similarity, parts.lexical_rank, parts.vector_rank) == (
        3.5,
        0.42,
        2,
        1,
    )
    assert parts.time_match == 0.0  # no time window: the term is off, not guessed


def test_a_limit_that_is_not_an_int_is_refused() -> None:
    found = [Candidate("a", lexical_score=1.0, lexical_rank=1)]
    for bad in (2.5, float("inf"), "3", True):
        with pytest.raises(ConfigurationError, match="limit"):
            rank_explained(found, config=RetrievalConfig(), now=NOW, limit=bad)  # type: ignore[arg-type]
    assert rank_explained(found, config=RetrievalConfig(), now=NOW, limit=-1) == []
