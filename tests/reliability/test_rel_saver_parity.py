"""Same input, same outcome on every backend (differential property test).

The same random sequence of operations — ``put`` (channel values and metadata with hostile
text: NUL, unpaired surrogates, emoji, RTL marks; ints beyond 64 bits, NaN, ``1e16``,
``-0.0``, bytes, nesting), ``put_writes``, ``get_tuple``, ``list`` (metadata filters with
containment, ``before``, ``limit``), ``copy_thread``, ``delete_thread`` — runs on
``RedisSaver`` and ``PostgresSaver``: every step must give the same result, or the same
error with the same message. Values read back must equal what was put, type for type
(``1e16`` stays a float, NUL stays NUL, nothing becomes ``'?'``). ``InMemorySaver`` (no
validation, equality-only filters) is the reference for the steps it applies to: what
both savers accept, it reads back the same way. Figures: ``saver_parity_steps``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_recall.checkpoint.postgres import PostgresSaver
from langgraph_recall.checkpoint.redis import RedisSaver
from langgraph_recall.checkpoint.redis._codec import matches_filter
from langgraph_recall.errors import LangGraphRecallError
from tests.reliability._figures import Figures
from tests.reliability._hostile import HOSTILE_TEXT, same_value

pytestmark = [pytest.mark.redis, pytest.mark.postgres]

PARITY = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)

LEAVES = st.one_of(
    HOSTILE_TEXT,
    st.integers(min_value=-(2**66), max_value=2**66),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([None, True, False, 0, 1, 1.0, 1e16, -0.0, 1e-7, b"a\x00b", 2**64 - 1]),
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(HOSTILE_TEXT, inner, max_size=3)
    ),
    max_leaves=8,
)
JSON_LEAVES = st.one_of(
    HOSTILE_TEXT,
    st.integers(min_value=-(2**65), max_value=2**65),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([None, True, False, 1, 1.0, 1e16]),
)
METADATA_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(HOSTILE_TEXT, inner, max_size=2)
    ),
    max_leaves=5,
)
CHANNELS = st.sampled_from(["messages", "summary", "count", "x\x00", "ü"])


@st.composite
def operations(draw: st.DrawFn) -> list[tuple[str, dict[str, Any]]]:
    """3-9 steps; a put of whole, well-formed checkpoints comes first."""
    steps: list[tuple[str, dict[str, Any]]] = []
    for position in range(draw(st.integers(3, 9))):
        kind = (
            "put"
            if position == 0
            else draw(
                st.sampled_from(["put", "put", "put_writes", "get", "list", "copy", "delete"])
            )
        )
        thread = draw(st.sampled_from(["t1", "t1", "t2", "t\x00", "t\ud800"]))
        if kind == "put":
            values = draw(st.dictionaries(CHANNELS, VALUES, min_size=1, max_size=3))
            metadata = draw(st.dictionaries(HOSTILE_TEXT, METADATA_VALUES, max_size=3))
            steps.append((kind, {"thread": thread, "values": values, "metadata": metadata}))
        elif kind == "put_writes":
            writes = draw(st.lists(st.tuples(CHANNELS, VALUES), min_size=1, max_size=3))
            task = draw(st.sampled_from(["task-1", "task-2", "t\x00sk"]))
            steps.append((kind, {"thread": thread, "writes": writes, "task": task}))
        elif kind == "get":
            steps.append((kind, {"thread": thread, "back": draw(st.integers(0, 2))}))
        elif kind == "list":
            wanted = draw(
                st.one_of(st.none(), st.dictionaries(HOSTILE_TEXT, METADATA_VALUES, max_size=1))
            )
            limit = draw(st.one_of(st.none(), st.integers(-1, 3)))
            steps.append(
                (
                    kind,
                    {
                        "thread": thread,
                        "filter": wanted,
                        "limit": limit,
                        "all": draw(st.booleans()),
                        "before": draw(st.booleans()),
                    },
                )
            )
        elif kind == "copy":
            steps.append(
                (kind, {"thread": thread, "target": draw(st.sampled_from(["t3", "t\x00"]))})
            )
        else:
            steps.append((kind, {"thread": thread}))
    return steps


class Runner:
    """Applies steps to one saver, remembering each thread's checkpoint ids."""

    def __init__(self, saver: Any, run: str) -> None:
        self.saver = saver
        self.run = run
        self.heads: dict[str, list[str]] = {}

    def tid(self, name: str) -> str:
        return f"{self.run}-{name}"

    def step(self, kind: str, args: dict[str, Any]) -> Any:
        thread = self.tid(args["thread"])
        history = self.heads.setdefault(args["thread"], [])
        if kind == "put":  # ids and versions from the step's position: the same everywhere
            number = args["position"] + 1
            checkpoint_id = f"1f0ce000-0000-6000-8000-{number:012d}"
            versions = {channel: f"{number:032}.0" for channel in args["values"]}
            checkpoint = {
                "v": 4, "ts": "2026-12-01T00:00:00+00:00", "id": checkpoint_id,
                "channel_values": args["values"], "channel_versions": versions,
                "versions_seen": {}, "updated_channels": sorted(versions),
            }  # fmt: skip
            configurable = {"thread_id": thread, "checkpoint_ns": ""}
            if history:
                configurable["checkpoint_id"] = history[-1]
            metadata = {**args["metadata"], "run": self.run, "step": number}
            stored = self.saver.put({"configurable": configurable}, checkpoint, metadata, versions)
            history.append(checkpoint_id)
            return stored["configurable"]
        if kind == "put_writes":
            if not history:
                return "no checkpoint"
            config = {
                "configurable": {
                    "thread_id": thread,
                    "checkpoint_ns": "",
                    "checkpoint_id": history[-1],
                }
            }
            self.saver.put_writes(config, args["writes"], args["task"])
            return None
        if kind == "get":
            config: dict[str, Any] = {"configurable": {"thread_id": thread}}
            if args["back"] and len(history) > args["back"]:
                config["configurable"]["checkpoint_id"] = history[-1 - args["back"]]
            return summarize(self.saver.get_tuple(config), self.run)
        if kind == "list":
            wanted = {**(args["filter"] or {}), "run": self.run}
            before = (
                {"configurable": {"checkpoint_id": history[-1]}}
                if args["before"] and history
                else None
            )
            target = None if args["all"] else {"configurable": {"thread_id": thread}}
            found = self.saver.list(target, filter=wanted, before=before, limit=args["limit"])
            return [summarize(item, self.run) for item in found]
        if kind == "copy":
            self.saver.copy_thread(thread, self.tid(args["target"]))
            self.heads[args["target"]] = list(history)
            return None
        self.saver.delete_thread(thread)
        history.clear()
        return None


def summarize(item: CheckpointTuple | None, run: str) -> Any:
    """What a read returns, ids made independent of the run."""
    if item is None:
        return None
    configurable = item.config["configurable"]
    parent = (item.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    return (
        configurable["thread_id"].removeprefix(f"{run}-"),
        configurable["checkpoint_id"],
        parent,
        item.checkpoint["channel_values"],
        {k: v for k, v in item.metadata.items() if k != "run"},
        [tuple(w) for w in item.pending_writes or ()],
    )


def outcome(runner: Runner, kind: str, args: dict[str, Any]) -> tuple[str, Any]:
    try:
        return "ok", runner.step(kind, args)
    except LangGraphRecallError as exc:
        return "error", (type(exc).__name__, str(exc).replace(runner.run, "RUN"))


def same_json(left: Any, right: Any) -> bool:
    """Metadata equality: like :func:`same_value`, tuples read back as lists (JSON)."""
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        return len(left) == len(right) and all(map(same_json, left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same_json(left[k], right[k]) for k in left)
    return same_value(left, right)


def same_read(left: Any, right: Any) -> bool:
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(same_read, left, right))
    if left is None or right is None or not isinstance(left, tuple):
        return same_value(left, right)
    *ids_l, values_l, metadata_l, writes_l = left
    *ids_r, values_r, metadata_r, writes_r = right
    return (
        ids_l == ids_r
        and same_value(values_l, values_r)
        and same_json(metadata_l, metadata_r)
        and same_value(writes_l, writes_r)
    )


@pytest.fixture
def savers(redis_url: str, redis_prefix: str, postgres_dsn: str) -> Iterator[tuple[Any, Any]]:
    with (
        RedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as redis_saver,
        PostgresSaver.from_conn_string(postgres_dsn) as postgres_saver,
    ):
        redis_saver.setup()
        postgres_saver.setup()
        yield redis_saver, postgres_saver


def _list(filter: dict[str, Any], limit: int | None = None) -> tuple[str, dict[str, Any]]:
    return "list", {"thread": "t1", "filter": filter, "limit": limit, "all": True, "before": False}


SEEN_BEFORE = [  # cases that once broke one backend, always tried first
    [("put", {"thread": "t1", "values": {"summary": "a\x00b"}, "metadata": {}}),
     ("get", {"thread": "t1", "back": 0})],
    [("put", {"thread": "t1", "values": {"summary": "a\ud800b"}, "metadata": {}}),
     ("get", {"thread": "t1", "back": 0})],
    [("put", {"thread": "t1", "values": {"n": 1e16, "z": -0.0}, "metadata": {"f": [1, {"g": 1}]}}),
     _list({"f": [{"g": True}]}), _list({"f": [1.0]}, 1), _list({"f": [{"g": 1}]})],
    [("put", {"thread": "t1", "values": {"n": 1}, "metadata": {"x": 6.821546081694577e16}})],
]  # fmt: skip


@PARITY
@given(steps=operations())
@example(steps=SEEN_BEFORE[0])
@example(steps=SEEN_BEFORE[1])
@example(steps=SEEN_BEFORE[2])
@example(steps=SEEN_BEFORE[3])
def test_same_input_same_outcome_on_every_backend(
    savers: tuple[Any, Any], steps: list[tuple[str, dict[str, Any]]], figures: Figures
) -> None:
    run = uuid.uuid4().hex[:8]
    redis_runner, postgres_runner = Runner(savers[0], run), Runner(savers[1], run)
    reference = Runner(InMemorySaver(), run)
    reference_valid = True  # InMemorySaver has no copy_thread: it stops applying after one
    for position, (kind, step_args) in enumerate(steps):
        args = {**step_args, "position": position}
        on_redis = outcome(redis_runner, kind, args)
        on_postgres = outcome(postgres_runner, kind, args)
        figures.add("saver_parity_steps")
        figures.add("saver_parity_differences", 0)
        same = (
            on_redis == on_postgres
            if on_redis[0] == "error"
            else (on_postgres[0] == "ok" and same_read(on_redis[1], on_postgres[1]))
        )
        if not same:
            figures.add("saver_parity_differences")
        assert same, (kind, args, on_redis, on_postgres)
        if on_redis[0] == "error":
            continue
        if kind == "put":  # what was accepted reads back exactly, type for type
            stored = savers[0].get_tuple({"configurable": on_redis[1]})
            assert stored is not None and same_value(
                stored.checkpoint["channel_values"], args["values"]
            )
        reference_valid = reference_valid and kind != "copy"
        if reference_valid and _reference_applies(kind, args):
            expected = reference.step(kind, args)
            assert same_read(on_redis[1], expected), (kind, args, on_redis, expected)


def _reference_applies(kind: str, args: dict[str, Any]) -> bool:
    """InMemorySaver filters by equality of top-level values (not containment) and lists
    ``list(None)`` thread by thread (ours: newest first across threads): compare one
    thread's list without a filter."""
    if kind == "list":
        return not args["filter"] and not args["all"]
    return kind in ("put", "get", "put_writes", "delete")


def test_redis_filters_are_postgres_containment() -> None:
    """The Redis saver's metadata filter is Postgres ``jsonb @>`` (checked against the
    server by the parity property above): lists contain, ``True`` is not ``1``."""
    assert matches_filter({"tags": ["a", "b"], "n": 1}, {"tags": ["b"], "n": 1.0})
    assert matches_filter({"a": [{"x": 1, "y": 2}]}, {"a": [{"x": 1}]})
    assert not matches_filter({"flag": 1}, {"flag": True})
    assert not matches_filter({"a": [1, 2]}, {"a": 1})
    assert not matches_filter({"a": "1"}, {"a": 1})
