"""The entity term of the ranking: memories linked to the entities a query names.

Weight 0 is exactly the ranking without links; a linked memory never loses to the same
memory unlinked; the term is at most its weight; memories found only through a link are
scaled by the searched candidates' range instead of stretching it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_recall.errors import ConfigurationError
from langgraph_recall.retrieval import Candidate, RetrievalConfig, rank_explained
from tests._hypothesis import thorough

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)

candidates = st.lists(
    st.builds(
        Candidate,
        id=st.integers(0, 40),
        lexical_score=st.none() | st.floats(0.0, 20.0),
        lexical_rank=st.none() | st.integers(1, 50),
        vector_similarity=st.none() | st.floats(-1.0, 1.0),
        vector_rank=st.none() | st.integers(1, 50),
        importance=st.none() | st.floats(1.0, 10.0),
        event_time=st.none() | st.integers(0, 400).map(lambda d: NOW - timedelta(days=d)),
        states_change=st.booleans(),
        entity_link=st.floats(0.0, 1.0),
        entities=st.sampled_from([(), ("luna",), ("luna", "lisbon")]),
    ),
    max_size=25,
)
fusions = st.sampled_from(["weighted", "rrf"])


def _order(found: list[Candidate], config: RetrievalConfig) -> list[tuple[object, float]]:
    return [(c.id, parts.score) for c, parts in rank_explained(found, config=config, now=NOW)]


@settings(max_examples=thorough(300), deadline=None)
@given(candidates, fusions)
def test_weight_zero_ranks_exactly_as_without_links(found: list[Candidate], fusion: str) -> None:
    config = RetrievalConfig(fusion=fusion, entity_weight=0.0)  # type: ignore[arg-type]
    unlinked = [replace(c, entity_link=0.0, entities=()) for c in found]
    assert _order(found, config) == _order(unlinked, config)
    for _, parts in rank_explained(found, config=config, now=NOW):
        assert parts.entity == 0.0 and parts.entities == ()


@settings(max_examples=thorough(300), deadline=None)
@given(candidates, st.floats(0.01, 2.0))
def test_the_entity_term_is_the_weight_times_the_link_and_adds_up(
    found: list[Candidate], weight: float
) -> None:
    config = RetrievalConfig(entity_weight=weight, update_weight=0.0)
    for candidate, parts in rank_explained(found, config=config, now=NOW):
        assert 0.0 <= parts.entity <= weight + 1e-12
        assert parts.entity == pytest.approx(weight * candidate.entity_link, abs=1e-12)
        assert parts.entities == (candidate.entities if parts.entity else ())
        assert sum(parts.contributions().values()) == pytest.approx(parts.score, abs=1e-12)


@settings(max_examples=thorough(300), deadline=None)
@given(candidates, st.integers(0, 24), st.floats(0.01, 1.0), st.floats(0.01, 2.0))
def test_a_stronger_link_never_ranks_a_memory_lower(
    found: list[Candidate], pick: int, more: float, weight: float
) -> None:
    """Raising one searched memory's link (the others unchanged) never moves it down."""
    ids = {c.id for c in found}
    if not found:
        return
    target = found[pick % len(found)]
    if target.lexical_rank is None and target.vector_rank is None:
        return  # a linked-only memory's link also sets whether the range excludes it
    config = RetrievalConfig(entity_weight=weight, update_weight=0.0)
    raised = min(target.entity_link + more, 1.0)
    before = [c.id for c, _ in rank_explained(found, config=config, now=NOW)]
    lifted = [replace(c, entity_link=raised) if c.id == target.id else c for c in found]
    after = [c.id for c, _ in rank_explained(lifted, config=config, now=NOW)]
    assert set(before) == set(after) <= ids
    assert after.index(target.id) <= before.index(target.id)


def test_a_rare_link_lifts_the_evidence_the_search_ranked_low() -> None:
    question = [
        Candidate("top", lexical_score=4.0, lexical_rank=1, vector_similarity=0.9, vector_rank=1),
        Candidate(
            "second", lexical_score=3.0, lexical_rank=2, vector_similarity=0.8, vector_rank=2
        ),
        Candidate(
            "evidence",
            lexical_score=1.0,
            lexical_rank=3,
            vector_similarity=0.7,
            vector_rank=3,
            entity_link=1.0,
            entities=("luna",),
        ),
    ]
    plain = [
        c.id for c, _ in rank_explained(question, config=RetrievalConfig(entity_weight=0), now=NOW)
    ]
    linked = rank_explained(question, config=RetrievalConfig(entity_weight=0.6), now=NOW)
    assert plain == ["top", "second", "evidence"]
    assert [c.id for c, _ in linked] == ["top", "evidence", "second"]
    assert linked[1][1].entity == pytest.approx(0.6) and linked[1][1].entities == ("luna",)


def test_a_memory_found_only_through_a_link_does_not_stretch_the_fusion_range() -> None:
    searched = [
        Candidate("a", lexical_score=2.0, lexical_rank=1, vector_similarity=0.8, vector_rank=1),
        Candidate("b", lexical_score=1.0, lexical_rank=2, vector_similarity=0.6, vector_rank=2),
    ]
    linked_only = Candidate("far", vector_similarity=-0.5, entity_link=0.5, entities=("x",))
    config = RetrievalConfig(entity_weight=0.2, recency_weight=0, importance_weight=0)
    alone = {c.id: p for c, p in rank_explained(searched, config=config, now=NOW)}
    both = {c.id: p for c, p in rank_explained([*searched, linked_only], config=config, now=NOW)}
    for key in ("a", "b"):
        assert (both[key].lexical, both[key].vector) == (alone[key].lexical, alone[key].vector)
    assert both["far"].lexical == both["far"].vector == 0.0
    assert both["far"].score == pytest.approx(0.1)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"entity_weight": -0.1},
        {"entity_weight": float("nan")},
        {"entity_hops": 0},
        {"entity_hops": 3},
        {"entity_hops": True},
        {"entity_candidates": 0},
    ],
)
def test_entity_settings_are_checked(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError):
        RetrievalConfig(**kwargs)  # type: ignore[arg-type]
