"""The newest statement of a value: a newer clause stating a change of the asked value ranks
above an older text stating that value, within the page, and nothing else moves."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_recall.retrieval import RetrievalConfig
from langgraph_recall.retrieval._updates import (
    ValueStatement,
    query_terms,
    restated_first,
    value_statement,
)
from tests._hypothesis import thorough

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
QUERY = "What is the test coverage of my API integration module?"
ASKED = query_terms(QUERY)


def test_a_value_is_read_with_the_asked_words_near_it() -> None:
    old = value_statement(
        "I'm trying to reach 100% test coverage on my API integration module, and I've "
        "currently reached 65% after my first run. Here is my suite.",
        ASKED,
        QUERY,
    )
    new = value_statement(
        "Can you help with mocks? Coverage for my API integration has recently improved "
        "to 78%, and I want more edge cases.",
        ASKED,
        QUERY,
    )
    assert {"coverage", "api", "integration"} <= old.asked
    assert {"coverage", "api", "integration"} <= new.changed


def test_a_value_far_from_the_asked_words_or_named_by_the_query_is_not_a_statement() -> None:
    text = (
        "My API integration module is finally tidy and the coverage report looks good to "
        "me after all the refactoring we did. I also walked 12 miles yesterday."
    )
    assert value_statement(text, ASKED, QUERY) == ValueStatement()
    versioned = "What is the coverage of the Bootstrap 5.3.0 gallery module?"
    said = "The gallery module uses Bootstrap 5.3.0 and the coverage tool."
    assert value_statement(said, query_terms(versioned), versioned) == ValueStatement()


def test_no_change_or_nothing_older_keeps_the_order() -> None:
    a = frozenset({"test", "coverage", "api"})
    same = [(ValueStatement(a), NOW - timedelta(days=d)) for d in (3, 2, 1)]
    assert restated_first(same) == [0, 1, 2]
    older_change_below = [(ValueStatement(a), NOW), (ValueStatement(a, a), NOW - timedelta(1))]
    assert restated_first(older_change_below) == [0, 1]


def test_a_change_about_other_words_does_not_pass() -> None:
    older = ValueStatement(frozenset({"test", "coverage", "api", "integration", "module"}))
    other = ValueStatement(frozenset({"module"}), frozenset({"module"}))
    assert restated_first([(older, NOW - timedelta(9)), (other, NOW)]) == [0, 1]


def test_a_chain_of_changes_ranks_newest_first() -> None:
    a = frozenset({"daily", "quota", "call"})
    rows = [
        (ValueStatement(a), NOW - timedelta(30)),
        (ValueStatement(a, a), NOW - timedelta(20)),
        (ValueStatement(a, a), NOW - timedelta(10)),
    ]
    assert restated_first(rows) == [2, 1, 0]


_WORDS = st.frozensets(st.sampled_from(["quota", "call", "daily", "api", "key", "limit"]))


@settings(max_examples=thorough(200), deadline=None, database=None)
@given(
    st.lists(
        st.tuples(_WORDS, _WORDS, st.booleans(), st.integers(0, 40) | st.none()),
        max_size=8,
    )
)
def test_restated_first_only_moves_newer_changes_up(
    rows: list[tuple[frozenset[str], frozenset[str], bool, int | None]],
) -> None:
    """A permutation; the texts that state no change keep their relative order; each text
    that moved up states a change and now stands above an older text whose value it restates
    (not always right above it: two changes of overlapping values may both move above it)."""
    statements = [
        (
            ValueStatement(asked, changed if says else frozenset()),
            None if day is None else NOW - timedelta(days=day),
        )
        for asked, changed, says, day in rows
    ]
    order = restated_first(statements)
    assert sorted(order) == list(range(len(statements)))
    still = [i for i in order if not statements[i][0].changed]
    assert still == sorted(still)
    for position, index in enumerate(order):
        if index <= position:  # did not move up
            continue
        moved, when = statements[index]
        assert moved.changed and when is not None
        # it restates the value of an older text it now stands above
        assert any(
            (older_when := statements[other][1]) is not None
            and older_when < when
            and len(statements[other][0].asked & moved.changed) >= 2
            and 3 * len(statements[other][0].asked & moved.changed)
            >= len(statements[other][0].asked)
            for other in order[position + 1 :]
        ), (index, order)


def _row(key: int, content: str, days: int, bm25: float) -> dict[str, Any]:
    when = NOW - timedelta(days=days)
    return {
        "id": key, "ns": "m", "key": str(key),
        "value": json.dumps({"content": content, "kind": "episodic"}),
        "created_at": when, "updated_at": when, "valid_from": when, "importance": None,
        "access_count": 0, "last_accessed_at": None,
        "lexical_score": bm25, "lexical_rank": key, "vector_rank": key,
    }  # fmt: skip


def _order(rows: list[dict[str, Any]], query: str, limit: int) -> list[str]:
    from langgraph_recall.store._ranking import rank_rows
    from langgraph_recall.store._types import MemorySearchOp

    similarity = {1: 0.92, 2: 0.85, 3: 0.80, 4: 0.70}
    op = MemorySearchOp(("m",), query=query, limit=limit, as_of=NOW)
    ranked = rank_rows(rows, similarity, op, RetrievalConfig())
    for _, parts in ranked:  # the terms still add up to the score
        assert abs(sum(parts.contributions().values()) - parts.score) < 1e-9
    return [row["key"] for row, _ in ranked]


NEW = "User: Help me mock axios? My API integration coverage has recently improved to 78%."
ROWS = [
    _row(1, "User: I've reached 65% test coverage on my API integration module so far.", 40, 6),
    _row(2, "User: Lunch was great, I'll write 12 more tests after it.", 20, 2),
    _row(3, NEW, 10, 1.5),
    _row(4, "User: I deploy on Fridays.", 5, 1),
]


def test_the_store_puts_the_restated_value_first_within_the_page() -> None:
    assert _order(ROWS, QUERY, 3) == ["3", "1", "2"]


def test_a_question_about_the_past_or_a_page_without_the_update_is_left_alone() -> None:
    past = "What was the test coverage of my API integration module before?"
    assert _order(ROWS, past, 4) == ["1", "2", "3", "4"]
    assert _order(ROWS, QUERY, 2) == ["1", "2"]  # the update is not in the page: it stays out
