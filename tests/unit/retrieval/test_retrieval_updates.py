"""Updates that win: a newer memory that states a change ranks above the older fact it updates."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_recall.errors import ConfigurationError
from langgraph_recall.retrieval import (
    Candidate,
    RetrievalConfig,
    asks_about_the_past,
    rank,
    rank_explained,
    states_change,
)
from tests._hypothesis import thorough
from tests.unit.retrieval.test_retrieval_explain import candidates

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
CONFIG = RetrievalConfig()


def _pair(*, newer_states_change: bool = True, newer_similarity: float = 0.76) -> list[Candidate]:
    older = Candidate(
        "older",
        lexical_score=4.0,
        lexical_rank=1,
        vector_similarity=0.80,
        vector_rank=1,
        event_time=NOW - timedelta(days=40),
    )
    newer = Candidate(
        "newer",
        lexical_score=3.6,
        lexical_rank=2,
        vector_similarity=newer_similarity,
        vector_rank=2,
        event_time=NOW - timedelta(days=10),
        states_change=newer_states_change,
    )
    filler = Candidate(
        "filler", lexical_score=0.5, lexical_rank=3, vector_similarity=0.2, vector_rank=3
    )
    return [older, newer, filler]


def test_a_newer_change_statement_ranks_above_the_older_fact_it_updates() -> None:
    without = [c.id for c, _ in rank(_pair(), config=CONFIG, now=NOW, updates=False)]
    assert without[:2] == ["older", "newer"]
    explained = rank_explained(_pair(), config=CONFIG, now=NOW)
    assert [c.id for c, _ in explained][:2] == ["newer", "older"]
    parts = {c.id: p for c, p in explained}
    assert 0 < parts["newer"].update <= CONFIG.update_weight
    assert parts["older"].update == 0 and parts["filler"].update == 0
    assert parts["newer"].score == pytest.approx(sum(parts["newer"].contributions().values()))
    assert parts["newer"].score > parts["older"].score


@pytest.mark.parametrize(
    ("case", "candidates", "kwargs"),
    [
        ("the query asks about the past", _pair(), {"updates": False}),
        ("the newer memory states no change", _pair(newer_states_change=False), {}),
        ("the newer memory is about something else", _pair(newer_similarity=0.1), {}),
        ("the term is off", _pair(), {"config": RetrievalConfig(update_weight=0.0)}),
    ],
)
def test_the_older_fact_keeps_its_place_when(
    case: str, candidates: list[Candidate], kwargs: dict[str, object]
) -> None:
    options: dict[str, object] = {"config": CONFIG, "now": NOW, **kwargs}
    ranked = rank_explained(candidates, **options)  # type: ignore[arg-type]
    assert [c.id for c, _ in ranked][:2] == ["older", "newer"], case
    assert all(parts.update == 0 for _, parts in ranked), case


def test_a_chain_of_updates_ranks_newest_first() -> None:
    """Three statements of one fact, each a change of the one before: newest first."""
    chain = [
        Candidate(
            f"v{n}",
            lexical_score=4.0 - 0.2 * n,
            lexical_rank=n + 1,
            vector_similarity=0.8 - 0.02 * n,
            vector_rank=n + 1,
            event_time=NOW - timedelta(days=30 - 10 * n),
            states_change=n > 0,
        )
        for n in range(3)
    ]
    chain.append(Candidate("other", lexical_score=0.1, lexical_rank=9, vector_similarity=0.1))
    ranked = [c.id for c, _ in rank(chain, config=CONFIG, now=NOW)]
    assert ranked[:3] == ["v2", "v1", "v0"]


configs = st.builds(
    RetrievalConfig,
    fusion=st.sampled_from(["weighted", "rrf"]),
    recency_weight=st.floats(0.0, 1.0),
    update_weight=st.floats(0.0, 1.0),
    update_similarity=st.floats(0.05, 1.0),
)


@settings(max_examples=thorough(300), deadline=None)
@given(candidates, configs)
def test_the_update_term_only_lifts_a_change_above_an_older_peer(
    found: list[Candidate], config: RetrievalConfig
) -> None:
    """Property: the update term is in [0, update_weight] and only a change statement gets
    it; a lifted memory passes at least one older candidate of similar relevance it was
    behind; memories that state no change keep their order among themselves; and with the
    term off the ranking is exactly the plain one."""
    plain = rank_explained(found, config=config, now=NOW, updates=False)
    lifted = rank_explained(found, config=config, now=NOW)
    assert {c.id for c, _ in plain} == {c.id for c, _ in lifted}
    before = {c.id: i for i, (c, _) in enumerate(plain)}
    after = {c.id: i for i, (c, _) in enumerate(lifted)}
    for candidate, parts in lifted:
        assert 0.0 <= parts.update <= config.update_weight
        assert parts.score == pytest.approx(sum(parts.contributions().values()))
        if parts.update:
            assert candidate.states_change and candidate.event_time is not None
            passed = [
                c
                for c, _ in plain
                if before[c.id] < before[candidate.id] and after[c.id] > after[candidate.id]
            ]
            assert any(
                c.event_time is not None and c.event_time < candidate.event_time for c in passed
            )
    steady = [c.id for c, p in lifted if not p.update]
    assert steady == [c.id for c, _ in plain if c.id in set(steady)]
    off = RetrievalConfig(
        fusion=config.fusion, recency_weight=config.recency_weight, update_weight=0.0
    )
    assert [(c.id, p.score) for c, p in rank_explained(found, config=off, now=NOW)] == [
        (c.id, p.score) for c, p in rank_explained(found, config=off, now=NOW, updates=False)
    ]


@settings(max_examples=thorough(200), deadline=None)
@given(candidates, configs)
def test_a_lazy_change_flag_ranks_as_the_flag_does_and_is_read_at_most_once(
    found: list[Candidate], config: RetrievalConfig
) -> None:
    """Property: giving ``states_change`` as a function ranks exactly as the plain flag
    (scores and order), and each function is called at most once (the store's reads the
    memory's text; it is asked only for a candidate with an older one within reach)."""
    asked: list[object] = []

    def lazy(candidate: Candidate) -> Candidate:
        def says() -> bool:
            asked.append(candidate.id)
            return bool(candidate.states_change)

        return replace(candidate, states_change=says if candidate.states_change else False)

    eager = rank_explained(found, config=config, now=NOW)
    deferred = rank_explained([lazy(c) for c in found], config=config, now=NOW)
    assert [(c.id, p) for c, p in deferred] == [(c.id, p) for c, p in eager]
    assert len(asked) == len(set(asked))


@pytest.mark.parametrize(
    "text",
    [
        "The dashboard API response time has recently improved to 250ms.",
        "Commits merged into main have now reached 165.",
        "I need to reflect the new daily quota of 1,200 calls per day.",
        "I've added two projects, so now I have a total of 10 cards.",
        "I switched from Django to FastAPI.",
        "I don't use Jenkins anymore.",
        "我现在改用FastAPI了。",
        "截止日期调整为4月5日。",
        "测试覆盖率提高到78%。",
        "我不再喝咖啡了。",
    ],
)
def test_change_statements_are_recognised(text: str) -> None:
    assert states_change(text)


@pytest.mark.parametrize(
    "text",
    [
        "The dashboard API averages 400 ms.",
        "Now, let's write the tests.",
        "Now let's add a login page.",
        "Can you suggest a new feature?",
        "I use Django for the backend.",
        "我住在杭州。",
        "以后代码注释都用英文。",
    ],
)
def test_statements_of_a_state_are_not_changes(text: str) -> None:
    assert not states_change(text)


@pytest.mark.parametrize(
    ("query", "past"),
    [
        ("What was the original deadline for the first sprint?", True),
        ("Which framework did I use before FastAPI?", True),
        ("What did I previously set the quota to?", True),
        ("我以前用什么框架？", True),
        ("最初的截止日期是哪天？", True),
        ("What is the deadline for the first sprint?", False),
        ("How many commits are in main?", False),
        ("我现在用什么框架？", False),
    ],
)
def test_queries_about_the_past_are_recognised(query: str, past: bool) -> None:
    assert asks_about_the_past(query) is past


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"update_weight": -0.1}, "update_weight"),
        ({"update_similarity": 0.0}, "update_similarity"),
        ({"update_similarity": 1.5}, "update_similarity"),
        ({"update_similarity": True}, "update_similarity"),
    ],
)
def test_update_settings_are_validated(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        RetrievalConfig(**kwargs)  # type: ignore[arg-type]


def _row(key: int, value: dict[str, object], day: int, bm25: float) -> dict[str, object]:
    import json

    when = NOW - timedelta(days=day)
    return {
        "id": key, "ns": "m", "key": str(key), "value": json.dumps(value),
        "created_at": when, "updated_at": when, "valid_from": when, "importance": None,
        "access_count": 0, "last_accessed_at": None,
        "lexical_score": bm25, "lexical_rank": key, "vector_rank": key,
    }  # fmt: skip


@pytest.mark.parametrize("kind", ["semantic", "episodic"])
def test_the_store_lifts_a_stated_change_but_never_an_episode(kind: str) -> None:
    """Through the store's ranking glue: a fact that states a change passes the older fact;
    an episode (a whole turn) with the same words does not."""
    from langgraph_recall.store._ranking import rank_rows
    from langgraph_recall.store._types import MemorySearchOp

    rows = [
        _row(1, {"content": "The quota is 1,000 calls.", "kind": kind}, 40, 4.0),
        _row(2, {"content": "The quota is now 1,200 calls.", "kind": kind}, 10, 3.7),
        _row(3, {"content": "I deploy on Fridays.", "kind": kind}, 5, 0.2),
    ]
    similarity = {1: 0.80, 2: 0.78, 3: 0.1}
    op = MemorySearchOp(("m",), query="What is the quota?", limit=3, as_of=NOW)
    order = [row["key"] for row, _ in rank_rows(rows, similarity, op, CONFIG)]
    assert order[:2] == (["2", "1"] if kind == "semantic" else ["1", "2"])
    past = MemorySearchOp(("m",), query="What was the quota before?", limit=3, as_of=NOW)
    assert [row["key"] for row, _ in rank_rows(rows, similarity, past, CONFIG)][:2] == ["1", "2"]
