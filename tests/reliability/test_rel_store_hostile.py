"""Hostile input to every public method of both Postgres memory stores, on both vector paths.

Hypothesis drives ``put``, ``get``, ``search`` (filters, ``as_of``, ``query``, ``limit``,
``offset``), ``list_namespaces``, ``delete``, ``batch``, ``invalidate``, ``history``,
``forget``, ``forget_decayed``, ``sweep`` and ``flush_access`` of ``PostgresMemoryStore`` and
of ``AsyncPostgresMemoryStore`` (its ``a*`` methods, on its own event loop), on PG 15
(exact) and embedded PG 18 (pgvector), with extreme dates and offsets, huge / NaN / infinite
/ 5,000-digit numbers, wrong types, deep nesting, megabyte strings, NUL bytes and lone
surrogates. Every call either raises one of our errors — from the store's own checks, not a
driver error translated after the fact — and leaves every table unchanged, or is accepted
and then reads back equal, and every namespace stays searchable.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import (
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
)

from langgraph_recall.errors import LangGraphRecallError
from langgraph_recall.store._bounds import check_time
from langgraph_recall.store.postgres import (
    AsyncPostgresMemoryStore,
    DecayConfig,
    HistoryEntry,
    MemorySearchOp,
    PostgresMemoryStore,
)
from tests._hypothesis import thorough
from tests.reliability._figures import Figures
from tests.reliability._servers import table_snapshot
from tests.reliability.conftest import index_config
from tests.reliability.test_rel_bad_input import FILTERS, KEYS, LIMITS, NAMESPACES, same_json

pytestmark = [pytest.mark.postgres]

HOSTILE = settings(
    max_examples=thorough(60),
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
MAX_VALUE_BYTES = 2 * 1024 * 1024  # lets megabyte texts reach the full-text limit
SEED_NS, OTHER_NS = ("h", "u1"), ("h", "u2")

# ---------------------------------------------------------------- strategies

ZONES = st.one_of(
    st.none(),
    st.sampled_from([14, -14, 8, -12, 0]).map(lambda h: timezone(timedelta(hours=h))),
    st.sampled_from([23 * 60 + 59, -(23 * 60 + 59), 330]).map(
        lambda m: timezone(timedelta(minutes=m))
    ),
)
EDGE_DATETIMES = st.one_of(
    st.datetimes(datetime(1, 1, 1), datetime(1, 1, 3), timezones=ZONES),
    st.datetimes(
        datetime(9999, 12, 29), datetime(9999, 12, 31, 23, 59, 59, 999999), timezones=ZONES
    ),
    st.datetimes(datetime(1900, 1, 1), datetime(2100, 1, 1), timezones=ZONES),
)
TIMES = st.one_of(
    EDGE_DATETIMES,
    EDGE_DATETIMES.map(lambda moment: moment.isoformat()),
    st.sampled_from(
        [
            "0001-01-01T00:00:00+14:00",
            "9999-12-31T23:59:59-14:00",
            "0000-01-01",
            "10000-01-01T00:00:00",
            "2024-02-30",
            "2024-05-01",
            "2024-05-01T09:00:00Z",
            "",
            "yesterday",
            "2024-05-01\x00",
        ]
    ),
    st.integers(),
    st.floats(),
    st.lists(st.integers(), max_size=2),
)
NUMBERS = st.one_of(
    st.integers(-(10**700), 10**700),
    st.sampled_from([s * 10**k for k in (15, 16, 308, 309, 639, 640, 4300, 5000) for s in (1, -1)]),
    st.floats(),
    st.sampled_from([1e308, -0.0, 5e-324, 1.7976931348623157e308, 2.0**53 + 1]),
    st.booleans(),
)
HUGE_TEXT = st.sampled_from([70_000, 300_000, 1_250_000]).flatmap(
    lambda size: st.sampled_from(
        [
            ("lorem " * (size // 6 + 1))[:size],  # one word: a tiny tsvector
            " ".join(str(n) for n in range(size // 6)),  # distinct words: ~2.3x as tsvector
        ]
    )
)
TEXT = st.one_of(
    st.text(max_size=20),
    st.text(max_size=8).map(lambda s: s + "\x00"),
    st.text(max_size=8).map(lambda s: "\ud800" + s),
    st.sampled_from(["名前 🙂", "'; DROP TABLE lgm_memory_items; --", "Lyon"]),
)


def nested(depth: int, as_list: bool) -> Any:
    node: Any = "leaf"
    for level in range(depth):
        node = [node] if as_list and level % 2 else {"k": node}
    return node


DEEP = st.builds(nested, st.integers(90, 2500), st.booleans())
JSON_LEAF = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT)
KEY_TEXT = st.one_of(TEXT, st.integers(), st.tuples(st.integers()))
MEMORY_VALUES = st.fixed_dictionaries(
    {"content": st.one_of(TEXT, HUGE_TEXT, NUMBERS, st.lists(TEXT, max_size=2))},
    optional={
        "kind": st.one_of(
            st.sampled_from(["semantic", "episodic", "bogus"]),
            st.lists(st.integers(), max_size=2),
            st.dictionaries(TEXT, TEXT, max_size=1),
            NUMBERS,
        ),
        "importance": NUMBERS,
        "valid_from": TIMES,
        "invalid_at": TIMES,
        "expires_at": TIMES,
        "derived_from": st.one_of(
            st.lists(st.one_of(TEXT, st.just("seed")), max_size=2),
            st.lists(
                st.fixed_dictionaries(
                    {"key": st.one_of(TEXT, st.integers())},
                    optional={"namespace": st.one_of(st.just(list(SEED_NS)), TEXT, NAMESPACES)},
                ),
                max_size=2,
            ),
            NUMBERS,
            TEXT,
        ),
        "n": NUMBERS,
        "deep": DEEP,
        "extra": st.dictionaries(KEY_TEXT, JSON_LEAF, max_size=2),
    },
)
VALUES = st.one_of(
    MEMORY_VALUES,
    MEMORY_VALUES,  # twice: most values look like memories
    st.lists(JSON_LEAF, max_size=2),
    TEXT,
    NUMBERS,
    st.none(),  # put(value=None) deletes
)
GOOD_NS = st.sampled_from([SEED_NS, OTHER_NS, ("h", "u1", "deep")])
NS = st.one_of(GOOD_NS, GOOD_NS, NAMESPACES)
PREFIX = st.one_of(st.sampled_from([(), ("h",), SEED_NS]), NAMESPACES)
KEY = st.one_of(st.sampled_from(["seed", "other", "k1"]), KEYS, TEXT)
TTL = st.one_of(st.none(), NUMBERS, st.text(max_size=3), st.sampled_from([1e-300, 0.001]))
INDEX = st.one_of(
    st.none(),
    st.just(False),
    st.just(["content"]),
    st.lists(st.one_of(TEXT, st.integers()), max_size=2),
    TEXT,
    st.just(True),
)
QUERY = st.one_of(st.none(), TEXT, HUGE_TEXT, st.integers(), st.just(""))
HOSTILE_FILTERS = st.one_of(
    st.none(),
    FILTERS,
    st.integers(1, 2500).map(lambda depth: nested_filter(depth)),
    st.builds(
        lambda op, t: {"valid_from": {op: t}}, st.sampled_from(["$gt", "$lte", "$eq"]), TIMES
    ),
    st.builds(lambda op, n: {"n": {op: n}}, st.sampled_from(["$gt", "$eq", "$in", "$ne"]), NUMBERS),
    st.builds(lambda n: {"n": {"$in": [n]}}, NUMBERS),
)
MAX_DEPTHS = st.one_of(
    st.none(), st.integers(-3, 5), st.integers(10**20, 10**30), st.floats(), TEXT
)
SPANS = st.one_of(
    st.timedeltas(),
    st.sampled_from([timedelta(0), timedelta.max, -timedelta(days=1), timedelta(microseconds=1)]),
    NUMBERS,
)


def nested_filter(depth: int) -> dict[str, Any]:
    filter_: dict[str, Any] = {"kind": "semantic"}
    for level in range(depth):
        filter_ = {"$and": [filter_]} if level % 3 else {"a": filter_}
    return filter_


@dataclass(frozen=True)
class Lazy:
    """An argument built inside the call (its constructor's errors are the call's errors)."""

    factory: Any
    kwargs: dict[str, Any] = field(default_factory=dict)

    def build(self) -> Any:
        return self.factory(**self.kwargs)


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:  # hostile arguments can be megabytes
        text = f"{self.name}{self.args!r} {self.kwargs!r}"
        return text if len(text) < 600 else text[:600] + "..."


MATCH = st.builds(
    MatchCondition,
    match_type=st.one_of(st.sampled_from(["prefix", "suffix"]), TEXT),
    path=st.one_of(PREFIX, st.just(("h", "*"))),
)
OPS = st.one_of(
    st.builds(PutOp, NS, KEY, VALUES, index=INDEX, ttl=TTL),
    st.builds(GetOp, NS, KEY),
    st.builds(SearchOp, PREFIX, HOSTILE_FILTERS, LIMITS, LIMITS, QUERY),
    st.builds(
        MemorySearchOp,
        PREFIX,
        HOSTILE_FILTERS,
        LIMITS,
        LIMITS,
        QUERY,
        as_of=st.one_of(st.none(), TIMES),
    ),
    st.builds(
        ListNamespacesOp,
        st.one_of(st.none(), st.tuples(MATCH), st.lists(st.integers(), max_size=1)),
        MAX_DEPTHS,
        LIMITS,
        LIMITS,
    ),
    st.integers(),
    TEXT,
)
CALLS = st.one_of(
    st.builds(
        lambda ns, key, value, index, ttl: Call(
            "put", (ns, key, value), {"index": index, "ttl": ttl}
        ),
        NS,
        KEY,
        VALUES,
        INDEX,
        TTL,
    ),
    st.builds(lambda ns, key, value: Call("put", (ns, key, value)), NS, KEY, MEMORY_VALUES),
    st.builds(lambda ns, key: Call("get", (ns, key)), NS, KEY),
    st.builds(
        lambda prefix, query, filter_, limit, offset, as_of, invalid: Call(
            "search",
            (prefix,),
            {
                "query": query,
                "filter": filter_,
                "limit": limit,
                "offset": offset,
                "as_of": as_of,
                "include_invalid": invalid,
            },
        ),
        PREFIX,
        QUERY,
        HOSTILE_FILTERS,
        LIMITS,
        LIMITS,
        st.one_of(st.none(), TIMES),
        st.booleans(),
    ),
    st.builds(
        lambda prefix, suffix, depth, limit, offset: Call(
            "list_namespaces",
            (),
            {
                "prefix": prefix,
                "suffix": suffix,
                "max_depth": depth,
                "limit": limit,
                "offset": offset,
            },
        ),
        st.one_of(st.none(), PREFIX),
        st.one_of(st.none(), PREFIX),
        MAX_DEPTHS,
        LIMITS,
        LIMITS,
    ),
    st.builds(lambda ns, key: Call("delete", (ns, key)), NS, KEY),
    st.builds(
        lambda ops: Call("batch", (ops,)),
        st.one_of(st.lists(OPS, max_size=4), st.integers(), st.none(), TEXT),
    ),
    st.builds(
        lambda ns, key, at: Call("invalidate", (ns, key), {"at": at}),
        NS,
        st.one_of(st.just("seed"), KEY),
        st.one_of(st.none(), TIMES),
    ),
    st.builds(lambda ns, key: Call("history", (ns, key)), NS, KEY),
    st.builds(lambda prefix: Call("forget", (prefix,)), PREFIX),
    st.builds(
        lambda prefix, config: Call("forget_decayed", (prefix,), {"config": config}),
        PREFIX,
        st.one_of(
            st.none(),
            st.builds(
                lambda threshold, half_life, min_age, mode, kinds: Lazy(
                    DecayConfig,
                    {
                        "threshold": threshold,
                        "half_life": half_life,
                        "min_age": min_age,
                        "mode": mode,
                        "kinds": kinds,
                    },
                ),
                NUMBERS,
                SPANS,
                SPANS,
                st.sampled_from(["invalidate", "delete", "forget"]),
                st.one_of(st.none(), st.tuples(TEXT), TEXT),
            ),
            TEXT,
            st.integers(),
        ),
    ),
    st.just(Call("sweep")),
    st.just(Call("flush_access")),
)

# ---------------------------------------------------------------- drivers


class Driver:
    """Calls a store's public method by name: the method itself, or — for the async store —
    its ``a*`` twin awaited on the store's own event loop."""

    def __init__(self, store: Any, loop: asyncio.AbstractEventLoop | None, dsn: str) -> None:
        self.store, self.loop, self.dsn = store, loop, dsn

    def __call__(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.loop is None:
            return getattr(self.store, name)(*args, **kwargs)

        async def call() -> Any:
            return await getattr(self.store, "a" + name)(*args, **kwargs)

        return asyncio.run_coroutine_threadsafe(call(), self.loop).result(timeout=120)


@contextlib.contextmanager
def async_driver(dsn: str) -> Iterator[Driver]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="hostile-async-store", daemon=True)
    thread.start()

    def run(coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=120)

    opener = AsyncPostgresMemoryStore.from_conn_string(
        dsn, index=index_config(), max_value_bytes=MAX_VALUE_BYTES
    )
    store = run(opener.__aenter__())
    try:
        run(store.asetup())
        yield Driver(store, loop, dsn)
    finally:
        run(opener.__aexit__(None, None, None))
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


@pytest.fixture(params=["exact-sync", "exact-async", "pgvector-sync", "pgvector-async"])
def driver(request: pytest.FixtureRequest) -> Iterator[Driver]:
    path, flavour = str(request.param).split("-")
    dsn = str(request.getfixturevalue("postgres_dsn" if path == "exact" else "embedded_dsn"))
    if flavour == "async":
        with async_driver(dsn) as opened:
            yield opened
        return
    with PostgresMemoryStore.from_conn_string(
        dsn, index=index_config(), max_value_bytes=MAX_VALUE_BYTES
    ) as store:
        store.setup()
        yield Driver(store, None, dsn)


# ---------------------------------------------------------------- checks


def resolved(value: Any) -> Any:
    return value.build() if isinstance(value, Lazy) else value


def expected_value(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` as the store returns it: times as ISO strings (naive = UTC), tuples as
    lists (checked separately from JSON equality)."""
    plain = {name: item for name, item in value.items() if name not in TIME_FIELDS}
    return json.loads(json.dumps(plain))  # type: ignore[no-any-return]


TIME_FIELDS = ("valid_from", "invalid_at", "expires_at")


def expires_soon(value: dict[str, Any], ttl: Any) -> bool:
    """Whether an accepted put may legitimately have expired by the time it is read."""
    soon = datetime.now(timezone.utc) + timedelta(seconds=30)
    if value.get("expires_at") is not None and check_time(value["expires_at"], "x") <= soon:
        return True
    return isinstance(ttl, (int, float)) and ttl < 1


def reads_back(driver: Driver, namespace: Any, key: Any, value: Any, ttl: Any = None) -> None:
    got = driver("get", namespace, key)
    if value is None:
        assert got is None
        return
    if got is None:
        assert expires_soon(value, ttl), (namespace, key)
        return
    assert isinstance(got, Item)
    stored = dict(got.value)
    for name in TIME_FIELDS:
        if value.get(name) is not None:
            assert check_time(stored.pop(name), name) == check_time(value[name], name)
    assert same_json(stored, expected_value(value)), (stored, value)


def writes_back(driver: Driver, namespace: Any, key: Any, index: Any = None) -> None:
    """Whatever the store holds can be put back unchanged (finding 11: a value ``invalidate``
    wrote could not be written back)."""
    item = driver("get", namespace, key)
    if item is None:
        return
    driver("put", namespace, key, item.value, index=index)
    again = driver("get", namespace, key)
    assert again is not None and same_json(again.value, item.value), (item.value, again)


def verify(driver: Driver, call: Call, result: Any) -> None:
    """An accepted call did what it says, and what it wrote reads back equal."""
    args, kwargs = call.args, call.kwargs
    if call.name == "put":
        reads_back(driver, args[0], args[1], args[2], kwargs.get("ttl"))
        writes_back(driver, args[0], args[1], kwargs.get("index"))
    elif call.name == "get":
        assert result is None or (isinstance(result, Item) and result.key == str(args[1]))
    elif call.name == "search":
        prefix = tuple(args[0])
        assert all(isinstance(item, SearchItem) for item in result)
        assert all(tuple(item.namespace[: len(prefix)]) == prefix for item in result)
        assert len(result) <= max(int(kwargs["limit"]), 0)
    elif call.name == "list_namespaces":
        assert all(isinstance(ns, tuple) for ns in result)
    elif call.name == "delete":
        assert driver("get", args[0], args[1]) is None
    elif call.name == "batch":
        ops = list(args[0])
        assert len(result) == len(ops)
        final = {(tuple(op.namespace), op.key): op for op in ops if isinstance(op, PutOp)}
        for (namespace, key), op in final.items():
            reads_back(driver, namespace, key, op.value, op.ttl)
            writes_back(driver, namespace, key, op.index)
    elif call.name == "invalidate":
        if result:
            stored = driver("get", args[0], args[1]).value["invalid_at"]
            at = kwargs["at"]
            if at is not None:
                assert check_time(stored, "at") == check_time(at, "at")
        writes_back(driver, args[0], args[1])
    elif call.name == "history":
        assert all(isinstance(entry, HistoryEntry) for entry in result)
    elif call.name == "forget":
        assert isinstance(result, int) and result >= 0
        assert driver("search", tuple(args[0]), limit=1000) == []
    elif call.name in ("forget_decayed", "sweep"):
        assert isinstance(result, int) and result >= 0


@given(call=CALLS)
@HOSTILE
def test_hostile_input_to_every_public_method_is_rejected_cleanly_or_reads_back(
    driver: Driver, call: Call, figures: Figures
) -> None:
    driver("put", SEED_NS, "seed", {"content": "seed fact Lyon", "valid_from": "2024-01-01"})
    driver("put", OTHER_NS, "other", {"content": "other fact", "importance": 5})
    before = table_snapshot(driver.dsn)
    figures.add("store_hostile_inputs")
    try:
        args = tuple(resolved(arg) for arg in call.args)
        kwargs = {name: resolved(arg) for name, arg in call.kwargs.items()}
        result = driver(call.name, *args, **kwargs)
    except Exception as exc:  # classified below
        if not isinstance(exc, LangGraphRecallError):
            figures.add("store_raw_errors")
            raise AssertionError(
                f"raw {type(exc).__module__}.{type(exc).__name__} from {call!r}"
            ) from exc
        if isinstance(exc.__cause__, psycopg.Error):
            figures.add("store_db_refusals")
            raise AssertionError(f"the database refused what the door let in: {call!r}") from exc
        assert table_snapshot(driver.dsn) == before, f"rejected {call!r} changed the database"
        figures.add("store_hostile_rejected")
        return
    verify(driver, call, result)
    figures.add("store_hostile_accepted")
    # whatever was accepted, every namespace stays readable, on every route
    for prefix in ((), ("h",), SEED_NS):
        driver("search", prefix, limit=100)
        driver("search", prefix, query="seed fact", include_invalid=True)
    driver("list_namespaces", prefix=("h",))
    driver("history", SEED_NS, "seed")
