"""Unit tests of the store's pure modules: namespaces, values, filters, exact vector cache."""

from __future__ import annotations

import typing
from datetime import datetime, timezone

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from langgraph.store.base import MatchCondition
from psycopg import sql

from langgraph_recall.errors import InvalidFilterError, InvalidNamespaceError, InvalidValueError
from langgraph_recall.store._filters import compile_filter, is_iso_datetime
from langgraph_recall.store._namespace import (
    decode_namespace,
    encode_namespace,
    matches_conditions,
    prefix_range,
    validate_namespace,
    validate_prefix,
)
from langgraph_recall.store._values import extract_text, prepare_value
from langgraph_recall.store._vector_cache import (
    VectorCache,
    VectorCacheRegistry,
    encode_vector,
    memory_vector,
    memory_vectors,
    unit_vector,
)
from langgraph_recall.store.postgres import _sql
from langgraph_recall.store.postgres._migrations import MIGRATIONS, MigrationContext, VectorMode
from tests._hypothesis import thorough

COLUMN = sql.SQL("i.value")


def render(filter_: dict) -> tuple[str, dict]:
    clause, params = compile_filter(filter_, COLUMN)
    return clause.as_string(None), params


# ----------------------------------------------------------------- namespaces
def test_namespace_encoding_round_trips_and_ranges_are_segment_exact() -> None:
    for ns in [("a",), ("memories", "u_1"), ("x", "y%", "z'")]:
        assert decode_namespace(encode_namespace(ns)) == ns
    low, high = prefix_range(("memories", "u_1")) or ("", "")
    inside = [encode_namespace(("memories", "u_1")), encode_namespace(("memories", "u_1", "d"))]
    outside = [encode_namespace(("memories", n)) for n in ["u_10", "u_1x", "U_1", "u%1", "u_"]]
    assert all(low <= e < high for e in inside)
    assert not any(low <= e < high for e in outside)
    assert prefix_range(()) is None


@pytest.mark.parametrize(
    "bad", [(), ("a", ""), ("a.b",), ("langgraph",), ("a", 1), "ab", ("\x00",)]
)
def test_bad_namespaces_raise(bad: object) -> None:
    with pytest.raises(InvalidNamespaceError):
        validate_namespace(bad)


def test_prefix_may_be_empty_and_conditions_support_wildcards() -> None:
    assert validate_prefix(()) == ()
    ns = ("a", "b", "c")
    assert matches_conditions(ns, [MatchCondition("prefix", ("a", "*"))])
    assert matches_conditions(ns, [MatchCondition("suffix", ("b", "c"))])
    assert not matches_conditions(ns, [MatchCondition("suffix", ("a", "c"))])
    assert not matches_conditions(("a",), [MatchCondition("prefix", ("a", "b"))])


# ----------------------------------------------------------------- values
def test_prepare_value_derives_memory_columns_and_normalises_times() -> None:
    naive = datetime(2024, 5, 1, 9, 30)
    record = prepare_value(
        ("m", "u"),
        "k",
        {
            "content": "Lives in Lyon",
            "kind": "semantic",
            "importance": 8,
            "valid_from": naive,
            "derived_from": ["k0", {"namespace": ["m", "v"], "key": "k1"}],
        },
    )
    assert record.text == "Lives in Lyon" and record.kind == "semantic"
    assert record.importance == 8.0
    assert record.valid_from == naive.replace(tzinfo=timezone.utc)
    assert record.value["valid_from"] == "2024-05-01T09:30:00+00:00"
    assert record.derived_from == [{"ns": "m.u.", "key": "k0"}, {"ns": "m.v.", "key": "k1"}]


@pytest.mark.parametrize(
    "value",
    [
        {"content": float("inf")},
        {"nested": {"x": float("nan")}},
        {"content": ["a"]},
        {"importance": "high"},
        {"importance": True},
        {"importance": 0},
        {"kind": "rumour"},
        {"expires_at": 12},
        {"valid_from": "2024-13-45"},
        {1: "int key"},
        {"x": {2: "nested int key"}},
        {"x": b"bytes"},
        {"derived_from": "k1"},
        {"derived_from": [{"nokey": 1}]},
        {"content": "nul\x00byte"},
    ],
)
def test_invalid_values_raise(value: dict) -> None:
    with pytest.raises(InvalidValueError):
        prepare_value(("m",), "k", value)


@pytest.mark.parametrize("linking", [False, True])
@pytest.mark.parametrize("index", [False, True])
def test_entities_that_are_not_a_list_are_refused_by_every_store(
    linking: bool, index: bool
) -> None:
    """The same value is accepted or refused whether or not the store links entities and
    whether or not the put indexes: a value written without links can always be written
    back unchanged by a store that links them."""
    with pytest.raises(InvalidValueError, match="entities must be a list"):
        prepare_value(
            ("m",), "k", {"content": "x", "entities": "Ana"}, index=index, entities=linking
        )
    kept = prepare_value(
        ("m",), "k", {"content": "x", "entities": ["Ana"]}, index=index, entities=linking
    )
    assert kept.entities == (("ana",) if linking and index else ())


_FIELD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 12),
    st.text(max_size=12),
    st.lists(st.one_of(st.text(max_size=8), st.integers(), st.none()), max_size=4),
    st.dictionaries(st.sampled_from(["name", "type"]), st.text(max_size=8), max_size=2),
)


@settings(max_examples=thorough(300), deadline=None)
@given(
    st.fixed_dictionaries(
        {"content": st.text(alphabet="Ana Luna moved 12", min_size=1, max_size=12)},
        optional={"entities": _FIELD_VALUES, "extra": _FIELD_VALUES},
    )
)
@example({"content": "Ana moved", "entities": "Ana"})  # the case an outside tester found
def test_whether_a_value_is_accepted_does_not_depend_on_store_options(value: dict) -> None:
    """Property: a value is accepted or refused (with the same error) alike by a store that
    links entities and one that does not, and by an indexed put and an ``index=False`` one --
    so a value one store wrote can be written back unchanged by any other."""
    outcomes = set()
    for linking in (False, True):
        for index in (False, True):
            try:
                prepare_value(("m",), "k", value, index=index, entities=linking)
                outcomes.add("accepted")
            except InvalidValueError as exc:
                outcomes.add(str(exc))
    assert len(outcomes) == 1, outcomes


def test_size_cap_is_configurable() -> None:
    value = {"content": "x" * 1000}
    prepare_value(("m",), "k", value, max_value_bytes=2000)
    with pytest.raises(InvalidValueError, match="limit is 500"):
        prepare_value(("m",), "k", value, max_value_bytes=500)


def test_text_extraction_follows_index_fields() -> None:
    assert extract_text({"content": "c", "other": "o"}, None) == "c"
    assert extract_text({"other": "o"}, None) == '{"other": "o"}'
    assert extract_text({"a": {"b": "x"}, "l": ["p", "q"]}, ["a.b", "l[*]"]) == "x\np\nq"
    assert prepare_value(("m",), "k", {"content": "c"}, index=False).text is None


# ----------------------------------------------------------------- filters
def test_filter_compilation_is_parameterised() -> None:
    text, params = render({"name": "x'; DROP TABLE t; --"})
    assert "DROP" not in text
    assert '"x\'; DROP TABLE t; --"' in params.values()


def test_typed_comparisons_pick_sql_by_operand_type() -> None:
    number, params = render({"n": {"$gte": 10}})
    assert "::numeric" in number and "jsonb_typeof" in number and 10 in params.values()
    date, params = render({"d": {"$lt": "2024-05-01"}})
    assert "lgm_try_timestamptz" in date
    assert datetime(2024, 5, 1, tzinfo=timezone.utc) in params.values()
    text, _ = render({"s": {"$gt": "abc"}})
    assert 'COLLATE "C"' in text and "lgm_try_timestamptz" not in text


def test_logical_operators_nest() -> None:
    text, params = render(
        {"$or": [{"a": 1}, {"$and": [{"b": {"$in": [1, 2]}}, {"c": {"$exists": False}}]}]}
    )
    assert " OR " in text and " AND " in text and "IS NULL" in text
    assert ["1", "2"] in params.values()


@pytest.mark.parametrize(
    "bad",
    [
        {"a": {"$regex": "x"}},
        {"$nor": [{"a": 1}]},
        {"$or": []},
        {"$and": {"a": 1}},
        {"a": {"$in": "x"}},
        {"a": {"$exists": 1}},
        {"a": {"$gt": None}},
        {"a": {"$gt": [1]}},
        {"a": {"$gt": float("nan")}},
        {"a": {"$eq": 1, "b": 2}},
        {"": 1},
        ["a"],
        {"\x00": 1},
        {"a": {"b\x00": 1}},
        {"a": {"$in": ["x\x00"]}},
        {"a": "\ud800"},
    ],
)
def test_bad_filters_raise(bad: object) -> None:
    with pytest.raises(InvalidFilterError):
        compile_filter(bad, COLUMN)  # type: ignore[arg-type]


def test_iso_detection() -> None:
    assert is_iso_datetime("2024-05-01") and is_iso_datetime("2024-05-01T10:00:00Z")
    assert not is_iso_datetime("2024-13-01") and not is_iso_datetime("yesterday")


# ----------------------------------------------------------------- exact cache
def test_vector_cache_top_update_and_remove() -> None:
    cache = VectorCache(dims=3)
    cache.apply(  # stored as the store writes them: unit vectors (memory_vector)
        [
            (1, encode_vector(memory_vector([[1, 0, 0]]))),
            (2, encode_vector(memory_vector([[0, 1, 0]]))),
            (3, encode_vector(memory_vector([[1, 1, 0]]))),
        ]
    )
    query = np.array([1, 0.1, 0], dtype=np.float32)
    ids, sims = cache.top(query, 2)
    assert ids.tolist() == [1, 3] and sims[0] > sims[1]
    cache.apply([(1, None), (2, encode_vector([1, 0, 0]))])
    ids, _ = cache.top(query, 3)
    assert ids.tolist() == [2, 3]
    assert len(cache) == 2
    assert cache.similarity(query, [2, 99]).keys() == {2}


def test_memory_vector_inner_product_is_mean_cosine() -> None:
    own, with_context = [2.0, 0.0, 0.0], [1.0, 1.0, 0.0]
    stored = memory_vector([with_context, own])
    query = unit_vector([1.0, 0.2, 0.0])
    cosines = [float(unit_vector(v) @ query) for v in (with_context, own)]
    assert float(stored @ query) == pytest.approx(sum(cosines) / 2, abs=1e-6)
    # one text: a unit vector, so the inner product is the plain cosine similarity
    single = memory_vector([own])
    assert float(np.linalg.norm(single)) == pytest.approx(1.0)
    cache = VectorCache(dims=3)
    cache.apply([(7, encode_vector(stored)), (8, encode_vector(single))])
    sims = cache.similarity(np.array([5.0, 1.0, 0.0], dtype=np.float32), [7, 8])
    assert sims[7] == pytest.approx(sum(cosines) / 2, abs=1e-6)
    assert sims[8] == pytest.approx(cosines[1], abs=1e-6)
    with pytest.raises(ValueError):
        memory_vector([])


def test_memory_vectors_batch_equals_one_by_one() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(7, 5)).tolist()
    sizes = [1, 2, 1, 2, 1]
    batch = memory_vectors(vectors, sizes)
    expected, start = [], 0
    for size in sizes:
        expected.append(memory_vector(vectors[start : start + size]))
        start += size
    np.testing.assert_allclose(batch, np.stack(expected), atol=1e-6)
    assert memory_vectors(vectors[:2], [1, 1]).shape == (2, 5)
    with pytest.raises(ValueError):
        memory_vectors(vectors, [2, 2])


def test_focus_text_only_for_content_indexed_with_context() -> None:
    with_context = prepare_value(
        ("m", "u"),
        "k",
        {"content": "Bo: yes, every Sunday", "context": "Al: still swimming?"},
        fields=["context", "content"],
    )
    assert with_context.text == "Al: still swimming?\nBo: yes, every Sunday"
    assert with_context.content_text == "Bo: yes, every Sunday"
    plain = prepare_value(("m", "u"), "k", {"content": "Bo: yes", "context": "Al: hi"})
    assert plain.text == "Bo: yes" and plain.content_text is None
    other = prepare_value(("m", "u"), "k", {"content": "x", "summary": "y"}, fields=["summary"])
    assert other.text == "y" and other.content_text is None
    no_context = prepare_value(("m", "u"), "k", {"content": "x"}, fields=["context", "content"])
    assert no_context.text == "x" and no_context.content_text is None


def test_cache_registry_is_lru_and_drops_overlapping_scopes() -> None:
    registry = VectorCacheRegistry(dims=2, max_scopes=2)
    first = registry.get("m.u1.")
    registry.get("m.u2.")
    registry.get("m.u3.")
    assert registry.get("m.u1.") is not first
    registry.drop("m.")
    assert registry.get("m.u3.") is not None


# ----------------------------------------------------------------- SQL
def test_migrations_render_for_both_vector_modes() -> None:
    for mode in ("pgvector", "exact"):
        steps = [step(MigrationContext(vector_mode=mode, dims=8)) for step in MIGRATIONS]  # type: ignore[arg-type]
        joined = "\n".join(steps)
        assert ("vector(8)" in joined) == (mode == "pgvector")
        assert ("hnsw" in joined) == (mode == "pgvector")


def test_search_sql_uses_range_not_like() -> None:
    for mode in ("pgvector", "exact"):
        text = _sql.search_hybrid_sql(
            vector_mode=mode,
            scoped=True,
            include_invalid=False,
            filter_clause=None,  # type: ignore[arg-type]
        ).as_string(None)
        assert "LIKE" not in text and "i.ns >= %(ns_lo)s" in text
        assert ("<#>" in text) == (mode == "pgvector")


def test_a_str_match_condition_path_is_one_label() -> None:
    """LangGraph's suites pass ``MatchCondition("suffix", "public")``: one label, never a
    sequence of one-character labels; a dotted str is refused as any dotted label is."""
    from langgraph.store.base import ListNamespacesOp, MatchCondition

    from langgraph_recall.errors import InvalidNamespaceError
    from langgraph_recall.store._plan import checked_list_op

    op = checked_list_op(ListNamespacesOp(match_conditions=[MatchCondition("suffix", "public")]))
    assert op.match_conditions == (MatchCondition("suffix", ("public",)),)
    with pytest.raises(InvalidNamespaceError, match="period"):
        checked_list_op(ListNamespacesOp(match_conditions=[MatchCondition("prefix", "a.b")]))


@settings(max_examples=thorough(200), deadline=None)
@given(
    mode=st.sampled_from(typing.get_args(VectorMode)),
    vector_type=st.sampled_from(["vector", "halfvec"]),
    dims=st.integers(min_value=1, max_value=20_000),
)
def test_setup_refuses_exactly_the_indexes_pgvector_cannot_build(
    mode: VectorMode, vector_type: str, dims: int
) -> None:
    """pgvector's HNSW takes 2,000 dims of vector and 4,000 of halfvec; the exact path has
    no index, so any size goes."""
    from langgraph_recall.errors import ConfigurationError
    from langgraph_recall.store.postgres._setup import check_index_dims

    limit = {"vector": 2000, "halfvec": 4000}[vector_type]
    if mode == "pgvector" and dims > limit:
        with pytest.raises(ConfigurationError, match="halfvec"):
            check_index_dims(mode, vector_type, dims)
    else:
        check_index_dims(mode, vector_type, dims)
