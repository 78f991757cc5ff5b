"""The exact path's vector caches stay within their byte and scope bounds, count their bytes
right after any sequence of searches, growths, compactions and erasures, and never drop the
scope being searched."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langgraph_recall.errors import ConfigurationError
from langgraph_recall.store._vector_cache import VectorCacheRegistry, encode_vector
from langgraph_recall.store.postgres._programs import MemoryPrograms
from tests.fakes import HashingEmbeddings

ROW = encode_vector([1.0, 0.0])

steps = st.lists(
    st.one_of(
        st.tuples(st.just("search"), st.integers(0, 7), st.integers(0, 300)),
        st.tuples(st.just("compact"), st.integers(0, 7), st.integers(0, 300)),
        st.tuples(st.just("erase"), st.integers(0, 7), st.just(0)),
    ),
    max_size=40,
)


@given(steps, st.integers(1, 6), st.integers(512, 8192))
def test_caches_stay_within_their_bounds_and_count_their_bytes(
    ops: list[tuple[str, int, int]], max_scopes: int, max_bytes: int
) -> None:
    registry = VectorCacheRegistry(dims=2, max_scopes=max_scopes, max_bytes=max_bytes)
    next_row = 0
    for action, user, rows in ops:
        scope = f"m.u{user}."
        if action == "erase":
            registry.drop(scope)
            assert scope not in registry
            continue
        cache = registry.get(scope)
        if action == "search":  # a refresh brings the scope's new rows
            cache.apply((next_row + i, ROW) for i in range(rows))
            next_row += rows
        else:  # a compaction keeps the newest ``rows`` rows
            cache.retain(sorted(cache.ids())[-rows:] if rows else [])
        registry.trim(scope)
        assert scope in registry  # the scope being searched always stays
        alone = registry.rows() == len(cache)
        assert registry.nbytes <= max_bytes or alone  # only a scope larger than all may exceed
        assert len(registry) <= max_scopes
        assert registry.counted == registry.nbytes  # the running count is the real one


HUGE = pytest.param(-(10**5000), id="5000-digits")


@pytest.mark.parametrize("option", ["exact_cache_scopes", "exact_cache_bytes"])
@pytest.mark.parametrize("value", [0, -1, HUGE, 2.5, True, "10", None])
def test_cache_bounds_must_be_positive_integers(option: str, value: object) -> None:
    options: dict[str, Any] = {option: value}
    with pytest.raises(ConfigurationError, match=option):
        MemoryPrograms(index={"dims": 8, "embed": HashingEmbeddings(8)}, **options)
