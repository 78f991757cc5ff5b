"""The diversity re-rank of the LoCoMo experiment row (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from langgraph_recall.bench.locomo import window_diversify


@dataclass
class Item:
    """What the re-rank reads of a search result: its value and score."""

    value: dict[str, Any] = field(default_factory=dict)
    score: float | None = None


def _episode(turn: int, score: float) -> Item:
    """The episode of turn ``turn`` with its two neighbours as context."""
    context = "\n".join(f"S: t{n}" for n in (turn - 1, turn + 1))
    return Item({"content": f"S: t{turn}", "context": context}, score)


_items = st.lists(
    st.builds(
        _episode,
        st.integers(min_value=0, max_value=30),
        st.floats(min_value=0.0, max_value=2.0, allow_nan=False),
    ),
    max_size=25,
).map(lambda items: sorted(items, key=lambda i: -(i.score or 0.0)))


@given(_items, st.integers(min_value=0, max_value=30))
def test_without_penalty_the_order_is_the_stores(items: list[Item], k: int) -> None:
    assert window_diversify(items, k, penalty=0.0) == items[:k]


@given(_items, st.integers(min_value=0, max_value=30), st.floats(min_value=0.0, max_value=5.0))
def test_it_chooses_k_distinct_results_of_the_pool(
    items: list[Item], k: int, penalty: float
) -> None:
    chosen = window_diversify(items, k, penalty=penalty)
    assert len(chosen) == min(k, len(items))
    assert len({id(i) for i in chosen}) == len(chosen)
    assert all(any(c is i for i in items) for c in chosen)
    if chosen:
        assert chosen[0] is items[0]  # nothing is chosen yet when the first is picked


def test_a_neighbours_window_is_penalised_and_a_distant_turn_moves_up() -> None:
    best, neighbour, distant = _episode(10, 1.0), _episode(11, 0.95), _episode(20, 0.9)
    items = [best, neighbour, distant]
    assert window_diversify(items, 2, penalty=0.0) == [best, neighbour]
    # windows {t9,t10,t11} and {t10,t11,t12} share 2 of 4 lines: 0.95 - 0.5 * 0.5 < 0.9
    assert window_diversify(items, 2, penalty=0.5) == [best, distant]
    assert window_diversify(items, 3, penalty=0.5) == [best, distant, neighbour]
