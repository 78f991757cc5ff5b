"""``index=`` options: every LangGraph option is honoured or rejected, none silently ignored."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langgraph_recall.errors import ConfigurationError, EmbeddingError
from langgraph_recall.store.postgres._index import check_unit_length, index_options
from langgraph_recall.store.postgres._programs import MemoryPrograms
from tests.fakes import HashingEmbeddings

BASE = {"dims": 8, "embed": HashingEmbeddings(8)}


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"distance_type": "hamming"}, "distance_type"),
        ({"ann_index_config": {"vector_type": "bit"}}, "'bit'"),
        ({"ann_index_config": {"kind": "ivfflat"}}, "ivfflat"),
        ({"ann_index_config": {"kind": "flat"}}, "flat"),
        ({"ann_index_config": {"nlist": 100}}, "nlist"),
        ({"ann_index_config": {"m": 1}}, "'m'"),
        ({"ann_index_config": "hnsw"}, "must be a dict"),
        ({"field": ["text"]}, "unknown index option"),
    ],
)
def test_an_index_option_the_store_cannot_honour_is_rejected_by_name(
    extra: dict[str, object], needle: str
) -> None:
    with pytest.raises(ConfigurationError, match=needle):
        MemoryPrograms(index={**BASE, **extra})  # type: ignore[typeddict-item]


def test_halfvec_is_accepted_and_kept() -> None:
    store = MemoryPrograms(index={**BASE, "ann_index_config": {"vector_type": "halfvec"}})  # type: ignore[typeddict-unknown-key]
    assert store.vector_type == "halfvec" and store.index_options.vector_type == "halfvec"


def test_hnsw_parameters_from_ann_index_config_are_used() -> None:
    store = MemoryPrograms(
        index={**BASE, "ann_index_config": {"kind": "hnsw", "m": 24, "ef_construction": 80}}  # type: ignore[typeddict-unknown-key]
    )
    assert (store.hnsw_m, store.hnsw_ef_construction) == (24, 80)
    with pytest.raises(ConfigurationError, match="contradicts"):
        MemoryPrograms(index={**BASE, "ann_index_config": {"m": 24}}, hnsw_m=32)  # type: ignore[typeddict-unknown-key]


@given(
    st.lists(st.floats(-10, 10, allow_nan=False), min_size=2, max_size=16).filter(
        lambda v: abs(sum(x * x for x in v) ** 0.5 - 1) > 0.01
    )
)
def test_inner_product_and_l2_refuse_embeddings_that_are_not_unit_length(
    vector: list[float],
) -> None:
    """Property: under inner_product/l2 (honoured as cosine for unit vectors) any vector
    whose length is not 1 is an EmbeddingError, never a silently different ranking."""
    for distance in ("inner_product", "l2"):
        assert index_options({**BASE, "distance_type": distance}).unit_length_required
        with pytest.raises(EmbeddingError, match="unit-length"):
            check_unit_length([vector], distance)
    norm = sum(x * x for x in vector) ** 0.5
    if norm > 0:
        check_unit_length([[x / norm for x in vector]], "l2")  # normalised: accepted
