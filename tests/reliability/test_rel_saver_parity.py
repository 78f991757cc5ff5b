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

A second property pins the official savers' semantics: random sequences of ``put`` (onto
the head, an older checkpoint, a never-written id or none; changing some channels, and
sometimes naming a value no put stored a blob for), ``put_writes``, ``get_tuple``,
``list``, ``delete_thread`` and ``prune`` (every strategy, ``keep_last`` 0-3) give on both
our savers what ``InMemorySaver`` gives (with a model of ``prune``, which it lacks), except
the two documented decisions: a put onto a parent retention deleted is refused, and a
value named without a stored blob is kept. Figures: ``official_semantics_steps``.
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
from langgraph_recall.errors import CheckpointIntegrityError, LangGraphRecallError
from tests._hypothesis import thorough
from tests.reliability._figures import Figures
from tests.reliability._hostile import HOSTILE_TEXT, same_value

pytestmark = [pytest.mark.redis, pytest.mark.postgres]

PARITY = settings(
    max_examples=thorough(60),
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


# --------------------------------------------------------------------------- official semantics

OFFICIAL = settings(
    max_examples=thorough(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
NAMESPACES = ("", "inner")
PLAIN_CHANNELS = ("messages", "count", "ctx")
UNKNOWN_IDS = ("1f0ce000-0000-6000-8000-999999999999", "0000-never-written")
"""Parent ids nobody wrote: one above every id a run writes, one below."""


@st.composite
def official_steps(draw: st.DrawFn) -> list[tuple[str, dict[str, Any]]]:
    """4-14 steps of put / put_writes / get / list / delete / prune on two threads."""
    steps: list[tuple[str, dict[str, Any]]] = []
    for _ in range(draw(st.integers(4, 14))):
        kind = draw(
            st.sampled_from(["put"] * 5 + ["put_writes", "get", "list", "delete", "prune"] * 1)
        )
        thread = draw(st.sampled_from(["a", "a", "b"]))
        ns = draw(st.sampled_from(NAMESPACES))
        if kind == "put":
            parent = draw(st.sampled_from(["head", "head", "older", "unknown", "none"]))
            args = {
                "parent": parent,
                "back": draw(st.integers(1, 3)),
                "unknown": draw(st.sampled_from(UNKNOWN_IDS)),
                "changed": sorted(draw(st.sets(st.sampled_from(PLAIN_CHANNELS)))),
                "unblobbed": draw(st.booleans()),  # a value named without a blob
            }
        elif kind == "put_writes":
            args = {
                "back": draw(st.integers(0, 2)),
                "task": draw(st.sampled_from(["t1", "t2"])),
                "channel": draw(st.sampled_from(["messages", "__error__", "__interrupt__"])),
            }
        elif kind == "get":
            args = {"back": draw(st.integers(0, 3))}
        elif kind == "list":
            args = {
                "limit": draw(st.one_of(st.none(), st.integers(1, 3))),
                "before": draw(st.booleans()),
                "any_ns": draw(st.booleans()),
            }
        elif kind == "prune":
            args = {
                "strategy": draw(st.sampled_from(["keep_latest", "keep_last", "delete"])),
                "keep_last": draw(st.one_of(st.none(), st.integers(0, 3))),
                "both": draw(st.booleans()),
            }
        else:
            args = {}
        steps.append((kind, {"thread": thread, "ns": ns, **args}))
    return steps


class Model:
    """What the caller wrote, to derive each step's config and the expected outcome."""

    def __init__(self) -> None:
        self.values: dict[str, dict[str, Any]] = {}  # checkpoint id -> values put
        self.versions: dict[str, dict[str, str]] = {}
        self.history: dict[tuple[str, str], list[str]] = {}  # ids put, oldest first
        self.stored: dict[tuple[str, str], list[str]] = {}  # ids still stored
        self.pruned_through: dict[str, str] = {}  # thread -> newest id retention deleted
        self.step = 0

    def refused_parent(self, thread: str, ns: str, parent: str | None) -> bool:
        """Our documented decision: a parent retention deleted is refused."""
        if parent is None or parent in self.stored.get((thread, ns), []):
            return False
        return parent <= self.pruned_through.get(thread, "")

    def prune(self, thread: str, keep: int) -> None:
        for (t, ns), ids in list(self.stored.items()):
            if t != thread:
                continue
            gone = sorted(ids)[: max(len(ids) - keep, 0)] if keep else list(ids)
            self.stored[(t, ns)] = [i for i in ids if i not in gone]
            if gone and keep:
                self.pruned_through[t] = max([self.pruned_through.get(t, ""), *gone])
        if not keep:
            self.delete(thread)

    def delete(self, thread: str) -> None:
        for key in list(self.stored):
            if key[0] == thread:
                self.stored[key] = []
        self.pruned_through.pop(thread, None)


def reference_prune(saver: InMemorySaver, thread: str, keep: int) -> None:
    """What prune does, on InMemorySaver (which has none): keep the newest ``keep`` per
    namespace, drop the rest with their writes; a kept child of a dropped checkpoint is
    left with no parent (as the official Postgres saver's prune leaves it)."""
    if not keep:
        saver.delete_thread(thread)
        return
    for ns, checkpoints in saver.storage[thread].items():
        gone = sorted(checkpoints)[: max(len(checkpoints) - keep, 0)]
        for checkpoint_id in gone:
            del checkpoints[checkpoint_id]
            saver.writes.pop((thread, ns, checkpoint_id), None)
        for checkpoint_id, (checkpoint, metadata, parent) in list(checkpoints.items()):
            if parent in gone:
                checkpoints[checkpoint_id] = (checkpoint, metadata, None)


def observed(item: CheckpointTuple | None, run: str) -> Any:
    """A read as the caller sees it (run prefix removed; writes in a stable order)."""
    if item is None:
        return None
    parent = (item.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    return (
        item.config["configurable"]["thread_id"].removeprefix(f"{run}-"),
        item.config["configurable"]["checkpoint_ns"],
        item.config["configurable"]["checkpoint_id"],
        parent,
        item.checkpoint["channel_values"],
        dict(item.metadata),
        sorted((str(t), str(c), repr(v)) for t, c, v in item.pending_writes or ()),
    )


def build_put(
    model: Model, run: str, args: dict[str, Any], number: int
) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """The config, checkpoint and ``new_versions`` of a put step: the parent's values and
    versions (as LangGraph carries them), the changed channels at a new version, and
    maybe a value named at a version no put ever stored a blob for."""
    parent = put_parent(model, args)
    values = dict(model.values.get(parent or "", {}))
    versions = dict(model.versions.get(parent or "", {}))
    new_versions: dict[str, str] = {}
    for channel in args["changed"]:
        fresh = {"messages": [f"m{number}"], "count": number}.get(channel, {"at": number})
        values[channel] = fresh
        new_versions[channel] = versions[channel] = f"{number:032}.0"
    if args["unblobbed"]:
        values["note"], versions["note"] = [f"n{number}"], f"{number:032}.1"
    checkpoint = {
        "v": 4, "ts": "2026-12-01T00:00:00+00:00",
        "id": f"1f0ce000-0000-6000-8000-{number:012d}",
        "channel_values": values, "channel_versions": versions,
        "versions_seen": {}, "updated_channels": sorted(new_versions),
    }  # fmt: skip
    configurable = {"thread_id": f"{run}-{args['thread']}", "checkpoint_ns": args["ns"]}
    if parent is not None:
        configurable["checkpoint_id"] = parent
    return {"configurable": configurable}, checkpoint, new_versions


def official_step(
    saver: Any, model: Model, run: str, kind: str, args: dict[str, Any], number: int
) -> Any:
    """Apply one step to ``saver`` (the model decides ids, parents and values)."""
    thread, ns = f"{run}-{args['thread']}", args["ns"]
    history = model.history.get((args["thread"], ns), [])
    if kind == "put":
        config, checkpoint, new_versions = build_put(model, run, args, number)
        return saver.put(config, checkpoint, {"step": number}, new_versions)
    if kind == "put_writes":
        stored = model.stored.get((args["thread"], ns), [])
        if len(stored) <= args["back"]:
            return "no checkpoint"
        conf = {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
        conf["configurable"]["checkpoint_id"] = sorted(stored)[-1 - args["back"]]
        saver.put_writes(conf, [(args["channel"], f"w{number}")], args["task"])
        return None
    if kind == "get":
        conf = {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
        if args["back"] and len(history) >= args["back"]:
            conf["configurable"]["checkpoint_id"] = history[-args["back"]]
        return observed(saver.get_tuple(conf), run)
    if kind == "list":
        conf = {"configurable": {"thread_id": thread}}
        if not args["any_ns"]:
            conf["configurable"]["checkpoint_ns"] = ns
        before = (
            {"configurable": {"checkpoint_id": history[-1]}} if args["before"] and history else None
        )
        found = [observed(t, run) for t in saver.list(conf, before=before, limit=args["limit"])]
        if args["any_ns"]:  # InMemorySaver lists namespace by namespace: compare as a set
            return sorted(found, key=repr) if args["limit"] is None else len(found)
        return found
    if kind == "prune":
        threads = [thread, f"{run}-b"] if args["both"] else [thread]
        if isinstance(saver, InMemorySaver):
            for one in threads:
                reference_prune(saver, one, prune_keep(args))
        else:
            saver.prune(threads, strategy=args["strategy"], keep_last=args["keep_last"])
        return None
    saver.delete_thread(thread)
    return None


def prune_keep(args: dict[str, Any]) -> int:
    """How many checkpoints per namespace a prune step keeps (0: the threads go)."""
    if args["keep_last"] is not None:
        return int(args["keep_last"])
    return 0 if args["strategy"] == "delete" else 1


def apply_to_model(model: Model, kind: str, args: dict[str, Any], number: int, stored: Any) -> None:
    key = (args["thread"], args["ns"])
    if kind == "put":
        checkpoint_id = stored["configurable"]["checkpoint_id"]
        model.history.setdefault(key, []).append(checkpoint_id)
        model.stored.setdefault(key, [])
        if checkpoint_id not in model.stored[key]:
            model.stored[key].append(checkpoint_id)
    elif kind == "prune":
        for thread in ["a", "b"] if args["both"] else [args["thread"]]:
            model.prune(thread, prune_keep(args))
    elif kind == "delete":
        model.delete(args["thread"])


def put_parent(model: Model, args: dict[str, Any]) -> str | None:
    history = model.history.get((args["thread"], args["ns"]), [])
    if args["parent"] == "head" and history:
        return history[-1]
    if args["parent"] == "older" and len(history) > args["back"]:
        return history[-1 - args["back"]]
    return args["unknown"] if args["parent"] == "unknown" else None


def without_unblobbed(read: Any) -> Any:
    """A read with the values InMemorySaver drops (named, never given a blob) removed."""
    if isinstance(read, list):
        return [without_unblobbed(r) for r in read]
    if not isinstance(read, tuple) or len(read) != 7:
        return read
    values = {k: v for k, v in read[4].items() if k != "note"}
    return (*read[:4], values, *read[5:])


@OFFICIAL
@given(steps=official_steps())
def test_our_savers_give_the_official_savers_results(
    savers: tuple[Any, Any], steps: list[tuple[str, dict[str, Any]]], figures: Figures
) -> None:
    """Random put / put_writes / get / list / delete / prune sequences give, on both our
    savers, what InMemorySaver gives -- except the two documented decisions: a put onto
    a parent retention deleted is refused (nothing written), and a value a checkpoint
    names without a stored blob is kept (InMemorySaver drops it)."""
    run = uuid.uuid4().hex[:8]
    model, reference = Model(), InMemorySaver()
    for number, (kind, args) in enumerate(steps, start=1):
        figures.add("official_semantics_steps")
        refused = kind == "put" and model.refused_parent(
            args["thread"], args["ns"], put_parent(model, args)
        )
        results = []
        for saver in savers:
            try:
                results.append(("ok", official_step(saver, model, run, kind, args, number)))
            except CheckpointIntegrityError as exc:
                results.append(("refused", str(exc).replace(run, "RUN")))
        assert results[0] == results[1], (kind, args, results)
        if refused:
            assert results[0][0] == "refused" and "was deleted" in results[0][1], results
            continue
        assert results[0][0] == "ok", (kind, args, results)
        ours = results[0][1]
        if kind == "put":  # what the caller put, to derive later steps and check reads
            _, checkpoint, _ = build_put(model, run, args, number)
            model.values[checkpoint["id"]] = checkpoint["channel_values"]
            model.versions[checkpoint["id"]] = checkpoint["channel_versions"]
        expected = official_step(reference, model, run, kind, args, number)
        if kind in ("get", "list"):
            assert without_unblobbed(ours) == expected, (kind, args, ours, expected)
            for read in ours if isinstance(ours, list) else [ours]:
                if isinstance(read, tuple):  # ours reads back exactly what was put
                    assert read[4] == model.values[read[2]], (read, model.values[read[2]])
        apply_to_model(model, kind, args, number, ours)
