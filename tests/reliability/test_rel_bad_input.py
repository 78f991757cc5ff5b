"""Bad input, property-based (hypothesis): every input is either rejected with a specific
exception AND changes nothing (all tables snapshotted before/after), or behaves exactly
like LangGraph's ``InMemoryStore`` (the reference model for plain ``BaseStore`` semantics).

Covers namespaces, keys, values, filters, limits/offsets, embedders that return bad
vectors, malformed Postgres DSNs and Redis URLs, and random op sequences compared with
the reference. Example counts are modest so the suite stays fast.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.embeddings import Embeddings
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from langgraph_recall.checkpoint.postgres import PostgresSaver
from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph_recall.errors import (
    EmbeddingError,
    InvalidConnectionStringError,
    InvalidFilterError,
    InvalidNamespaceError,
    InvalidValueError,
    LangGraphRecallError,
)
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests._hypothesis import thorough
from tests.reliability._figures import Figures
from tests.reliability._servers import table_snapshot
from tests.reliability.conftest import DIMS, index_config

pytestmark = [pytest.mark.postgres]

FUZZ = settings(
    max_examples=thorough(50),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)

# ---------------------------------------------------------------- strategies

SAFE_TEXT = st.text(min_size=1, max_size=40)  # no surrogates (hypothesis default)
LABELS = st.one_of(
    SAFE_TEXT,
    st.just(""),
    st.builds(lambda a, b: f"{a}.{b}", SAFE_TEXT, SAFE_TEXT),
    st.builds(lambda a: f"{a}\x00", SAFE_TEXT),
    st.text(min_size=200, max_size=400),
    st.sampled_from(["*", "langgraph", "u_1", "u%1", "'; DROP TABLE x; --", "名前", "🙂"]),
    st.integers(),
    st.none(),
    st.binary(max_size=5),
    st.floats(allow_nan=True),
)
NAMESPACES = st.one_of(
    st.tuples(),
    st.lists(LABELS, min_size=1, max_size=4).map(tuple),
    st.lists(SAFE_TEXT, min_size=1, max_size=3),  # a list, not a tuple
    SAFE_TEXT,  # a bare string
    st.none(),
    st.integers(),
)
KEYS = st.one_of(
    SAFE_TEXT,
    st.just(""),
    st.builds(lambda a: f"{a}\x00", SAFE_TEXT),
    st.text(min_size=1000, max_size=1100, alphabet="ab"),
    st.integers(),
    st.none(),
    st.floats(allow_nan=True),
)
JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)
BAD_LEAVES = st.one_of(
    st.just(math.nan),
    st.just(math.inf),
    st.just(-math.inf),
    st.binary(max_size=4),
    st.sets(st.integers(), max_size=2),
    st.builds(object),
    st.complex_numbers(allow_nan=False, allow_infinity=False),
    st.text(max_size=5).map(lambda s: s + "\x00"),
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(SAFE_TEXT, inner, max_size=3)
    ),
    max_leaves=8,
)
ANY_LEAVES = st.one_of(JSON_LEAVES, BAD_LEAVES)
ANY_VALUES = st.recursive(
    ANY_LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(SAFE_TEXT, st.integers()), inner, max_size=3),
    ),
    max_leaves=8,
)
MEMORY_FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "content": st.one_of(
            st.text(max_size=40), st.integers(), st.integers(65_000, 70_000).map("y".__mul__)
        ),
        "kind": st.one_of(st.sampled_from(["semantic", "episodic", "bogus", ""]), st.integers()),
        "importance": st.one_of(
            st.integers(-5, 15), st.floats(allow_nan=True), st.text(max_size=3), st.booleans()
        ),
        "valid_from": st.one_of(st.sampled_from(["2024-05-01", "not a date", ""]), st.integers()),
        "derived_from": st.one_of(st.lists(SAFE_TEXT, max_size=2), st.integers(), SAFE_TEXT),
    },
)
VALUES = st.one_of(
    st.dictionaries(SAFE_TEXT, JSON_VALUES, max_size=4),  # plain BaseStore values
    st.dictionaries(SAFE_TEXT, ANY_VALUES, max_size=4),
    MEMORY_FIELDS,
    st.lists(JSON_LEAVES, max_size=3),
    st.text(max_size=10),
    st.integers(),
    st.builds(lambda n: {"content": "x" * n}, st.integers(60_000, 80_000)),
)
OPERATORS = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists"]
# NUL bytes anywhere in filters (a defect once, fixed) are in the strategies below too
FILTER_TEXT = st.one_of(st.text(max_size=30), st.text(max_size=5).map(lambda s: s + "\x00"))
FILTER_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(),
    FILTER_TEXT,
    st.binary(max_size=4),
    st.sets(st.integers(), max_size=2),
    st.builds(object),
    st.complex_numbers(),
)
FILTER_VALUES = st.one_of(FILTER_LEAVES, st.lists(FILTER_LEAVES, max_size=3))
FIELD_NAMES = st.one_of(st.sampled_from(["a", "b", "n", "content", ""]), FILTER_TEXT)
FILTERS = st.recursive(
    st.one_of(
        st.dictionaries(FIELD_NAMES, FILTER_VALUES, max_size=2),
        st.dictionaries(
            FIELD_NAMES,
            st.dictionaries(
                st.one_of(st.sampled_from([*OPERATORS, "$regex", "$where", "$like"]), FILTER_TEXT),
                FILTER_VALUES,
                max_size=2,
            ),
            max_size=2,
        ),
    ),
    lambda inner: st.one_of(
        st.dictionaries(st.sampled_from(["$and", "$or", "$not"]), st.lists(inner, max_size=2)),
        st.dictionaries(FIELD_NAMES, inner, max_size=1),
    ),
    max_leaves=6,
)
# one JSON type per field: Python's 0 == False / 1 == True makes InMemoryStore match
# {"n": False} against n=0, which JSON (and our store) does not
SIMPLE_FILTERS = st.fixed_dictionaries(
    {},
    optional={
        "a": st.sampled_from(["x", "y", "z"]),
        "b": st.sampled_from(["x", "y"]),
        "n": st.integers(0, 3),
    },
)
LIMITS = st.one_of(
    st.integers(-5, 30),
    st.integers(2**31, 2**63 - 1),
    st.floats(allow_nan=True),
    st.text(max_size=3),
    st.none(),
    st.booleans(),
    st.integers(2**63, 10**30),
)

# ---------------------------------------------------------------- helpers

PUT_NAMESPACE_ERRORS = (InvalidNamespaceError,)


@pytest.fixture
def fuzz_store(postgres_dsn: str) -> Iterator[tuple[PostgresMemoryStore, str]]:
    with PostgresMemoryStore.from_conn_string(
        postgres_dsn, index=index_config(), pool_config={"max_size": 2}
    ) as store:
        store.setup()
        yield store, postgres_dsn


def wipe(store: PostgresMemoryStore) -> None:
    """Erase everything through the public API (hypothesis reuses the store per example)."""
    for (root,) in store.list_namespaces(max_depth=1, limit=10_000):
        store.forget((root,))


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "ok", call()
    except Exception as exc:
        return "error", exc


def rejected_cleanly(
    dsn: str, call: Callable[[], Any], errors: tuple[type[BaseException], ...]
) -> tuple[str, Any]:
    """Run ``call``; if it raises, the error must be one of ``errors`` and no table may
    have changed. Returns ``("ok", result)`` or ``("error", exc)``."""
    before = table_snapshot(dsn)
    kind, result = outcome(call)
    if kind == "error":
        assert isinstance(result, errors), (type(result).__mro__, result)
        assert isinstance(result, LangGraphRecallError)
        assert table_snapshot(dsn) == before, "a rejected call changed the database"
    return kind, result


def normalised(value: Any) -> Any:
    """JSON round trip (tuples → lists), as the store returns values."""
    return json.loads(json.dumps(value))


def same_json(ours: Any, theirs: Any) -> bool:
    """Equal as JSON; numbers compare to 15 significant digits (JSONB stores numbers as
    ``numeric``: a float like 3.602879701896397e16 comes back as the int 36028797018963970)."""
    if isinstance(theirs, float) and isinstance(ours, (int, float)) and not isinstance(ours, bool):
        return math.isclose(ours, theirs, rel_tol=1e-15, abs_tol=0.0)
    if isinstance(theirs, dict):
        return (
            isinstance(ours, dict)
            and ours.keys() == theirs.keys()
            and all(same_json(ours[k], theirs[k]) for k in theirs)
        )
    if isinstance(theirs, list):
        return (
            isinstance(ours, list)
            and len(ours) == len(theirs)
            and all(same_json(a, b) for a, b in zip(ours, theirs, strict=True))
        )
    return type(ours) is type(theirs) and ours == theirs


def items_by_key(items: list[Any]) -> dict[tuple[tuple[str, ...], str], Any]:
    return {(tuple(item.namespace), item.key): normalised(item.value) for item in items}


# ---------------------------------------------------------------- namespaces and keys


@pytest.mark.slow
@FUZZ
@given(namespace=NAMESPACES, key=KEYS)
def test_namespaces_and_keys(
    fuzz_store: tuple[PostgresMemoryStore, str], namespace: Any, key: Any, figures: Figures
) -> None:
    store, dsn = fuzz_store
    figures.add("hypothesis_inputs")
    wipe(store)
    reference = InMemoryStore()
    value = {"content": "namespace fuzz", "n": 1}
    kind, _ = rejected_cleanly(
        dsn,
        lambda: store.batch([PutOp(namespace, key, value)]),
        (InvalidNamespaceError, InvalidValueError),
    )
    if kind == "ok":
        reference.put(tuple(namespace), key, value)
        got = store.get(namespace, key)
        assert got is not None and got.value == value
        assert store.search(namespace, limit=1000) != []
        listed = store.list_namespaces(prefix=namespace)
        assert listed == reference.list_namespaces(prefix=tuple(namespace))
        store.delete(namespace, key)
        assert store.get(namespace, key) is None
        return
    # whatever was rejected for writing is rejected (or harmless) for reading too; a
    # TypeError is accepted only where LangGraph's own BaseStore/InMemoryStore raises it
    reads: list[Callable[[Any], Any]] = [
        lambda target: target.get(namespace, key),
        lambda target: target.search(namespace),
        lambda target: target.list_namespaces(prefix=namespace),
        lambda target: target.put(namespace, key, value),
        lambda target: target.delete(namespace, key),
    ]
    for read in reads:
        before = table_snapshot(dsn)
        read_kind, result = outcome(lambda: read(store))  # noqa: B023
        if read_kind == "ok":
            assert result in (None, [])
            continue
        assert table_snapshot(dsn) == before, "a rejected call changed the database"
        if isinstance(result, TypeError) and not isinstance(result, LangGraphRecallError):
            ref_kind, ref_result = outcome(lambda: read(reference))  # noqa: B023
            assert ref_kind == "error" and isinstance(ref_result, TypeError), result
        else:
            assert isinstance(result, (*PUT_NAMESPACE_ERRORS, InvalidValueError)), result


# ---------------------------------------------------------------- values


@FUZZ
@given(value=VALUES)
def test_values(fuzz_store: tuple[PostgresMemoryStore, str], value: Any, figures: Figures) -> None:
    store, dsn = fuzz_store
    figures.add("hypothesis_inputs")
    namespace = ("values", "u1")
    good = {"content": "the previous good value", "n": 1}
    store.put(namespace, "k", good)
    kind, _ = rejected_cleanly(dsn, lambda: store.put(namespace, "k", value), (InvalidValueError,))
    got = store.get(namespace, "k")
    if kind == "error":
        assert got is not None and got.value == good, "a failed put must keep the old value"
        assert [entry.action for entry in store.history(namespace, "k")][-1] in ("add", "update")
        return
    reference = InMemoryStore()
    reference.put(namespace, "k", value)
    expected = reference.get(namespace, "k")
    assert got is not None and expected is not None
    stored = dict(got.value)
    for field in ("valid_from", "invalid_at", "expires_at"):  # normalised to ISO strings
        if field in value:
            stored.pop(field)
            expected.value.pop(field)
    assert same_json(stored, normalised(expected.value)), (stored, expected.value)


# ---------------------------------------------------------------- filters


def _seed_filter_docs(store: PostgresMemoryStore, reference: InMemoryStore) -> None:
    docs = [
        {"a": "x", "b": "y", "n": 0},
        {"a": "y", "n": 1},
        {"a": "z", "b": None, "n": 2},
        {"b": "x", "n": 3, "c": {"d": 1}},
        {"a": "q", "n": 1.5},
    ]
    for i, doc in enumerate(docs):
        for target in (store, reference):
            target.put(("filters", "u1"), f"d{i}", doc)


@pytest.mark.slow
@FUZZ
@given(filter_=FILTERS)
def test_filters(
    fuzz_store: tuple[PostgresMemoryStore, str], filter_: Any, figures: Figures
) -> None:
    store, dsn = fuzz_store
    figures.add("hypothesis_inputs")
    reference = InMemoryStore()
    _seed_filter_docs(store, reference)
    kind, result = rejected_cleanly(
        dsn, lambda: store.search(("filters",), filter=filter_, limit=100), (InvalidFilterError,)
    )
    if kind == "ok":
        assert all(item.namespace == ("filters", "u1") for item in result)
        assert len(result) <= 5


@FUZZ
@given(filter_=SIMPLE_FILTERS)
def test_equality_filters_match_in_memory_store(
    fuzz_store: tuple[PostgresMemoryStore, str], filter_: dict[str, Any], figures: Figures
) -> None:
    store, _ = fuzz_store
    figures.add("hypothesis_inputs")
    reference = InMemoryStore()
    _seed_filter_docs(store, reference)
    ours = items_by_key(store.search(("filters",), filter=filter_, limit=100))
    theirs = items_by_key(reference.search(("filters",), filter=filter_, limit=100))
    assert ours == theirs, filter_


# ---------------------------------------------------------------- limits and offsets


@FUZZ
@given(limit=LIMITS, offset=LIMITS, max_depth=st.one_of(st.none(), st.integers(-2, 4)))
def test_limits_and_offsets(
    fuzz_store: tuple[PostgresMemoryStore, str],
    limit: Any,
    offset: Any,
    max_depth: Any,
    figures: Figures,
) -> None:
    store, dsn = fuzz_store
    figures.add("hypothesis_inputs")
    reference = InMemoryStore()
    for i in range(4):
        for target in (store, reference):
            target.put(("lim", f"u{i % 2}", f"s{i}"), f"k{i}", {"content": f"item {i}"})
    kind, result = rejected_cleanly(
        dsn, lambda: store.search(("lim",), limit=limit, offset=offset), (InvalidValueError,)
    )
    if kind == "ok":
        expected = reference.search(("lim",), limit=limit, offset=offset)
        assert len(result) == len(expected)
        assert {(i.namespace, i.key) for i in result} <= {
            (("lim", f"u{i % 2}", f"s{i}"), f"k{i}") for i in range(4)
        }
    if isinstance(limit, int) and isinstance(offset, int):
        ours = outcome(
            lambda: store.list_namespaces(
                prefix=("lim",), max_depth=max_depth, limit=limit, offset=offset
            )
        )
        theirs = outcome(
            lambda: reference.list_namespaces(
                prefix=("lim",), max_depth=max_depth, limit=limit, offset=offset
            )
        )
        assert ours[0] == theirs[0], (ours, theirs)
        if ours[0] == "ok":
            assert sorted(ours[1]) == sorted(theirs[1])


# ---------------------------------------------------------------- embeddings


class ScriptedEmbeddings(Embeddings):
    """Returns whatever vectors the test scripted (possibly wrong)."""

    def __init__(self, vectors: Any) -> None:
        self.vectors = vectors

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.vectors  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        return self.vectors[0] if self.vectors else []  # type: ignore[no-any-return]


FINITE = st.floats(-1, 1, allow_nan=False)
BAD_VECTORS = st.one_of(
    st.lists(
        st.lists(FINITE, min_size=1, max_size=DIMS * 2).filter(lambda v: len(v) != DIMS),
        min_size=1,
        max_size=2,
    ),
    st.lists(FINITE, min_size=DIMS, max_size=DIMS).flatmap(
        lambda v: st.sampled_from([math.nan, math.inf, -math.inf]).flatmap(
            lambda bad: st.integers(0, DIMS - 1).map(lambda i: [[*v[:i], bad, *v[i + 1 :]]])
        )
    ),
    st.just([]),  # no vector for one text
    st.lists(FINITE, min_size=DIMS, max_size=DIMS).map(lambda v: [v, v]),  # too many
)


@FUZZ
@given(vectors=BAD_VECTORS)
def test_bad_embedder_vectors(postgres_dsn: str, vectors: Any, figures: Figures) -> None:
    figures.add("hypothesis_inputs")
    index = {"dims": DIMS, "embed": ScriptedEmbeddings(vectors)}
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=index) as store:  # type: ignore[arg-type]
        store.setup()
        before = table_snapshot(postgres_dsn)
        with pytest.raises(EmbeddingError):
            store.put(("emb", "u1"), "k", {"content": "one text to embed"})
        query_vector = vectors[0] if vectors else []
        if len(query_vector) != DIMS or not all(math.isfinite(x) for x in query_vector):
            with pytest.raises(EmbeddingError):
                store.search(("emb",), query="a query")
        else:  # embed_query itself returned a good vector
            assert store.search(("emb",), query="a query") == []
        assert table_snapshot(postgres_dsn) == before


# ---------------------------------------------------------------- connection strings

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
MALFORMED_DSNS = st.one_of(
    st.builds(lambda w: f"host='{w}", WORD),  # unterminated quote
    st.builds(lambda a, b: f"{a} {b}", WORD, WORD),  # missing "="
    st.builds(lambda w: f"={w}", WORD),
    st.builds(lambda w: f"postgresql://{w}@127.0.0.1:5432/db?{w}=1", WORD),  # unknown option
    st.builds(lambda w: f"postgresql://%{w}zz@127.0.0.1/db", WORD),
)
BAD_PORT_DSNS = st.one_of(
    st.builds(lambda p: f"postgresql://127.0.0.1:{p}/db", st.integers(65536, 10**6)),
    st.builds(lambda w: f"postgresql://127.0.0.1:{w}/db", WORD),
    st.builds(lambda w: f"{w}sql://127.0.0.1:5432/db", WORD.filter(lambda w: w != "postgre")),
)
MALFORMED_REDIS = st.one_of(
    st.builds(
        lambda w: f"{w}://127.0.0.1:6379/0",
        WORD.filter(lambda w: w not in {"redis", "rediss", "unix"}),
    ),
    st.builds(lambda p: f"redis://127.0.0.1:{p}/0", st.integers(65536, 10**6)),
    st.builds(lambda w: f"redis://127.0.0.1:{w}/0", WORD),
    st.builds(lambda w: f"redis://:{w}@/0", WORD),
    st.just(""),
    st.just("redis://"),
    st.none(),
    st.integers(),
)


@FUZZ
@given(dsn=MALFORMED_DSNS)
def test_malformed_dsns_are_rejected_fast(dsn: str, figures: Figures) -> None:
    figures.add("hypothesis_inputs")
    for opener in (
        lambda: PostgresSaver.from_conn_string(dsn),
        lambda: PostgresMemoryStore.from_conn_string(dsn, index=index_config()),
    ):
        start = time.monotonic()
        with pytest.raises(InvalidConnectionStringError) as info, opener():
            pass
        assert time.monotonic() - start < 5.0
        assert isinstance(info.value, ValueError)


@FUZZ
@given(dsn=BAD_PORT_DSNS)
def test_saver_rejects_bad_port_or_scheme(dsn: str, figures: Figures) -> None:
    figures.add("hypothesis_inputs")
    with pytest.raises(InvalidConnectionStringError), PostgresSaver.from_conn_string(dsn):
        pass


@FUZZ
@given(url=MALFORMED_REDIS)
def test_malformed_redis_urls_are_rejected(url: Any, figures: Figures) -> None:
    figures.add("hypothesis_inputs")
    start = time.monotonic()
    with pytest.raises(InvalidConnectionStringError), RedisSaver.from_conn_string(url):
        pass
    assert time.monotonic() - start < 5.0


async def test_async_redis_saver_rejects_malformed_urls() -> None:
    for url in ("http://127.0.0.1:6379/0", "redis://127.0.0.1:99999/0", "redis://"):
        with pytest.raises(InvalidConnectionStringError):
            async with AsyncRedisSaver.from_conn_string(url):
                pass


# ---------------------------------------------------------------- differential sequences

SMALL_NS = st.sampled_from([("d", "u1"), ("d", "u2"), ("d", "u1", "x"), ("e", "u1")])
SMALL_KEYS = st.sampled_from(["k1", "k2", "k3"])
SMALL_VALUES = st.fixed_dictionaries(
    {"a": st.sampled_from(["x", "y"]), "n": st.integers(0, 3)},
    optional={"content": st.sampled_from(["tea", "coffee", "lyon"])},
)
OPS = st.lists(
    st.one_of(
        st.builds(lambda ns, k, v: PutOp(ns, k, v), SMALL_NS, SMALL_KEYS, SMALL_VALUES),
        st.builds(lambda ns, k: PutOp(ns, k, None), SMALL_NS, SMALL_KEYS),
        st.builds(lambda ns, k: GetOp(ns, k), SMALL_NS, SMALL_KEYS),
        st.builds(
            lambda prefix, f: SearchOp(prefix, f, 100, 0, None),
            st.sampled_from([(), ("d",), ("d", "u1"), ("e",), ("x",)]),
            st.one_of(st.none(), SIMPLE_FILTERS),
        ),
        st.builds(
            lambda prefix, depth: ListNamespacesOp(
                (MatchCondition("prefix", prefix),) if prefix else None, depth, 100, 0
            ),
            st.sampled_from([(), ("d",), ("d", "*"), ("e", "u1")]),
            st.one_of(st.none(), st.integers(1, 3)),
        ),
    ),
    min_size=1,
    max_size=12,
)


def _comparable(result: Any) -> Any:
    if isinstance(result, list) and result and hasattr(result[0], "key"):
        return items_by_key(result)
    if isinstance(result, list):
        return sorted(result)
    if result is not None and hasattr(result, "key"):
        return (tuple(result.namespace), result.key, normalised(result.value))
    return result


@FUZZ
@given(ops=OPS)
def test_op_sequences_match_in_memory_store(
    fuzz_store: tuple[PostgresMemoryStore, str], ops: list[Any], figures: Figures
) -> None:
    store, _ = fuzz_store
    figures.add("hypothesis_inputs")
    store.batch(
        [
            PutOp(ns, k, None)
            for ns in [("d", "u1"), ("d", "u2"), ("d", "u1", "x"), ("e", "u1")]
            for k in ["k1", "k2", "k3"]
        ]
    )
    reference = InMemoryStore()
    live: dict[tuple[tuple[str, ...], str], dict[str, Any]] = {}
    for op in ops:  # one op per batch: reads see earlier writes in both stores
        ours = store.batch([op])[0]
        if isinstance(op, ListNamespacesOp):
            # InMemoryStore keeps listing a namespace after its last item is deleted;
            # the reference here is an InMemoryStore holding only the live items
            rebuilt = InMemoryStore()
            for (namespace, key), value in live.items():
                rebuilt.put(namespace, key, value)
            theirs = rebuilt.batch([op])[0]
        else:
            theirs = reference.batch([op])[0]
        if isinstance(op, PutOp):
            if op.value is None:
                live.pop((op.namespace, op.key), None)
            else:
                live[(op.namespace, op.key)] = op.value
        assert _comparable(ours) == _comparable(theirs), op


# ---------------------------------------------------------------- regressions of fixed bugs
# H8-3 … H8-8 (coord/bugs-H4.md), found by this suite and fixed by the store's owner.


def test_put_rejects_bad_namespace_with_our_error(
    fuzz_store: tuple[PostgresMemoryStore, str],
) -> None:
    store, _ = fuzz_store
    for namespace in [(), ("ops", "a.b"), ("ops", ""), ("langgraph", "x")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(namespace, "k", {"content": "x"})


def test_huge_limits_are_rejected_or_clamped(
    fuzz_store: tuple[PostgresMemoryStore, str],
) -> None:
    store, dsn = fuzz_store
    store.put(("a", "b"), "k", {"content": "hello"})
    for kwargs in ({"limit": 10**20}, {"offset": 10**20}, {"offset": 10**20, "query": "hello"}):
        rejected_cleanly(dsn, lambda: store.search(("a",), **kwargs), (InvalidValueError,))  # noqa: B023


def test_boolean_limits_behave_like_in_memory_store(
    fuzz_store: tuple[PostgresMemoryStore, str],
) -> None:
    store, dsn = fuzz_store
    store.put(("a", "b"), "k", {"content": "hello"})
    for kwargs in ({"limit": True}, {"offset": False}, {"limit": 5, "offset": True}):
        kind, result = rejected_cleanly(
            dsn,
            lambda: store.search(("a",), **kwargs),  # noqa: B023
            (InvalidValueError,),
        )
        reference = InMemoryStore()
        reference.put(("a", "b"), "k", {"content": "hello"})
        assert kind == "error" or len(result) == len(reference.search(("a",), **kwargs))


def test_surrogates_are_rejected_with_our_errors(
    fuzz_store: tuple[PostgresMemoryStore, str],
) -> None:
    store, dsn = fuzz_store
    calls = [
        lambda: store.batch([PutOp(("a", "\ud800"), "k", {"content": "x"})]),
        lambda: store.put(("a",), "\udfff", {"content": "x"}),
        lambda: store.put(("a",), "k", {"content": "\ud800"}),
        lambda: store.search(("a",), query="\ud800"),
    ]
    for call in calls:
        rejected_cleanly(dsn, call, (InvalidNamespaceError, InvalidValueError))


def test_oversize_namespace_and_key_are_rejected_cleanly(
    fuzz_store: tuple[PostgresMemoryStore, str],
) -> None:
    import random

    store, dsn = fuzz_store
    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"

    def noise(n: int) -> str:
        return "".join(rng.choice(letters) for _ in range(n))

    for namespace, key in [(("a", noise(3000)), "k"), (("a", noise(2000)), noise(1024))]:
        rejected_cleanly(
            dsn,
            lambda: store.put(namespace, key, {"content": "x"}),  # noqa: B023
            (InvalidNamespaceError, InvalidValueError),
        )


@pytest.mark.slow
def test_store_rejects_malformed_dsn_like_the_saver() -> None:
    from tests.reliability.test_rel_errors import _opens, _time_failure

    for dsn in ("postgresql://127.0.0.1:99999/db", "postgresql://127.0.0.1:abc/db"):
        run = _opens(lambda: PostgresMemoryStore.from_conn_string(dsn, index=index_config()))  # noqa: B023
        error, _ = _time_failure(run, 5.0)
        assert isinstance(error, InvalidConnectionStringError), error


def test_nul_bytes_in_filters_are_rejected(fuzz_store: tuple[PostgresMemoryStore, str]) -> None:
    store, dsn = fuzz_store
    store.put(("a",), "k", {"content": "x", "a": "x"})
    for filter_ in (
        {"\x00": 1},
        {"a": {"b\x00": 1}},
        {"a": {"$gt": "x\x00"}},
        {"a": "x\x00"},
        {"a": {"$in": ["x\x00"]}},
    ):
        rejected_cleanly(
            dsn,
            lambda: store.search(("a",), filter=filter_),  # noqa: B023
            (InvalidFilterError,),
        )
