"""Hostile inputs for every public method of the checkpointers, and the checks around them.

* :data:`HOSTILE_TEXT`, :data:`HOSTILE_IDS`, :data:`HOSTILE_VALUES`, ... — hypothesis
  strategies of what users (and their users) send: NUL, unpaired surrogates, huge and
  empty text, huge / negative / non-int numbers, NaN, deep nesting, odd types and shapes.
* :func:`saver_calls` — a strategy of ``(method name, args, kwargs)`` covering every public
  method of a saver (``get_tuple``, ``list``, ``put``, ``put_writes``, ``delete_thread``,
  ``delete_for_runs``, ``copy_thread``, ``prune``, ``get_delta_channel_history``, ``sweep``,
  ``setup``) with hostile arguments.
* :func:`is_ours` — an exception a caller may see: one of ``langgraph_recall.errors``, or
  the documented ``TypeError`` of a str / non-list passed where a list of ids is expected.
* :func:`redis_snapshot` / ``table_snapshot`` (``_servers``) — the full stored state, to
  prove a failed call changed nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import redis
from hypothesis import strategies as st

from langgraph_recall.errors import LangGraphRecallError
from langgraph_recall.lease._protocol import FENCE_CONFIG_KEY

__all__ = [
    "HOSTILE_IDS",
    "HOSTILE_TEXT",
    "HOSTILE_VALUES",
    "Call",
    "deep",
    "is_ours",
    "redis_snapshot",
    "same_value",
    "saver_calls",
]

Call = tuple[str, tuple[Any, ...], dict[str, Any]]

SPECIAL_TEXT = [
    "",
    "\x00",
    "a\x00b",
    "\ud800",
    "a\udc80b",
    "x" * 1025,
    "é" * 600,
    "🙂" * 300,
    "{x}",
    "%00",
    "\\",
    "'; DROP TABLE checkpoints; --",
    "\u202e",
    "\ufeff",
]
HOSTILE_TEXT = st.one_of(
    st.sampled_from(SPECIAL_TEXT),
    st.text(max_size=40),  # any code point: surrogates and NUL included
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=20),
)
"""Text: mostly invalid somewhere (NUL, surrogates, over-long), sometimes fine."""

HOSTILE_IDS = st.one_of(
    HOSTILE_TEXT,
    st.sampled_from([None, 0, -1, 10**30, True, 1.5, math.nan, b"raw", ["t"], {"a": 1}]),
    st.uuids(),
    st.integers(),
)
"""Thread ids, checkpoint ids, namespaces, run ids, task ids: any type, any text."""


def deep(depth: int) -> Any:
    """A list nested ``depth`` levels."""
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


class _Opaque:
    """An object no serializer knows."""

    def __repr__(self) -> str:
        return "<opaque>"


SCALARS = st.one_of(
    HOSTILE_TEXT,
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([10**400, -(2**64), 2**64 - 1, 2**63]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([None, True, False, b"\x00\xff", bytearray(b"x"), 1e16, -0.0, 1e-7]),
)
HOSTILE_VALUES = st.one_of(
    SCALARS,
    st.recursive(
        SCALARS,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.tuples(inner, inner),
            st.dictionaries(st.one_of(HOSTILE_TEXT, st.integers()), inner, max_size=4),
        ),
        max_leaves=12,
    ),
    st.sampled_from([deep(300), deep(120), {"k": deep(260)}, {1, 2}, _Opaque(), "x" * 200_000]),
)
"""Channel values, pending writes, metadata values."""

METADATA = st.one_of(
    st.dictionaries(HOSTILE_TEXT, HOSTILE_VALUES, max_size=4),
    st.dictionaries(st.one_of(st.integers(), st.tuples(st.integers())), st.integers(), max_size=2),
    st.sampled_from([None, [], "meta", {"source": "loop", "step": 1}, {"x": deep(150)}]),
)


@st.composite
def configs(draw: st.DrawFn, *, with_checkpoint_id: bool = False) -> Any:
    """A config that is mostly well-formed with hostile ids, sometimes not a config at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(
            st.sampled_from([None, {}, [], "t", {"configurable": None}, {"configurable": []}])
        )
    configurable: dict[Any, Any] = {
        "thread_id": draw(st.one_of(st.just("good"), HOSTILE_IDS)),
    }
    if draw(st.booleans()):
        configurable["checkpoint_ns"] = draw(st.one_of(st.just(""), HOSTILE_IDS))
    if with_checkpoint_id or draw(st.booleans()):
        configurable["checkpoint_id"] = draw(
            st.one_of(st.just("1ef00000-0000-6000-8000-000000000001"), HOSTILE_IDS)
        )
    if draw(st.integers(0, 5)) == 0:
        configurable[FENCE_CONFIG_KEY] = draw(st.sampled_from([-1, 2**64, "3", True, 1.5, None]))
    config: dict[str, Any] = {"configurable": configurable}
    if draw(st.booleans()):
        config["metadata"] = draw(METADATA)
    return config


@st.composite
def checkpoints(draw: st.DrawFn) -> tuple[Any, Any]:
    """``(checkpoint, new_versions)`` with hostile channel names, values and versions."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from([None, [], "cp", {}])), {}
    checkpoint: dict[str, Any] = {
        "v": 4,
        "ts": "2026-12-01T00:00:00+00:00",
        "channel_versions": {},
        "versions_seen": {},
        "updated_channels": None,
    }
    good_id = "1f0ce000-0000-6000-8000-" + draw(st.integers(0, 10**12 - 1)).__format__("012d")
    checkpoint["id"] = draw(st.one_of(st.just(good_id), HOSTILE_IDS))
    channels = draw(
        st.dictionaries(
            st.one_of(st.just("messages"), HOSTILE_IDS.filter(_hashable)),
            HOSTILE_VALUES,
            max_size=3,
        )
    )
    versions = {
        channel: draw(st.one_of(st.just("00000000000000000000000000000001.5"), HOSTILE_IDS))
        for channel in channels
    }
    checkpoint["channel_values"] = channels
    checkpoint["channel_versions"] = {k: v for k, v in versions.items() if _hashable(v)}
    if draw(st.integers(0, 4)) == 0:
        checkpoint["versions_seen"] = {draw(HOSTILE_TEXT): {"x": draw(HOSTILE_VALUES)}}
    new_versions: Any = (
        versions if draw(st.integers(0, 9)) else draw(st.sampled_from([None, [], "v"]))
    )
    return checkpoint, new_versions


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


WRITES = st.one_of(
    st.lists(st.tuples(st.one_of(st.just("messages"), HOSTILE_IDS), HOSTILE_VALUES), max_size=3),
    st.sampled_from(
        [None, "writes", [("only-one",)], [["c", 1, 2]], [("__error__", ValueError("x"))]]
    ),
)
FILTERS = st.one_of(
    st.none(), METADATA, st.dictionaries(st.just("step"), HOSTILE_VALUES, max_size=1)
)
LIMITS = st.one_of(
    st.none(), st.integers(), st.sampled_from([10**30, -(10**30), True, 1.5, "3", math.nan])
)
ID_LISTS = st.one_of(st.lists(HOSTILE_IDS, max_size=3), HOSTILE_IDS)


@st.composite
def saver_calls(draw: st.DrawFn, *, sweep: bool) -> Call:
    """One public method call with hostile arguments (``sweep``: the saver has ``sweep``)."""
    methods = ["get_tuple", "list", "put", "put_writes", "delete_thread", "delete_for_runs",
               "copy_thread", "prune", "get_delta_channel_history", "setup"]  # fmt: skip
    if sweep:
        methods.append("sweep")
    name = draw(st.sampled_from(methods))
    if name == "get_tuple":
        return name, (draw(configs()),), {}
    if name == "list":
        kwargs = {
            "filter": draw(FILTERS),
            "before": draw(st.one_of(st.none(), configs())),
            "limit": draw(LIMITS),
        }
        return name, (draw(st.one_of(st.none(), configs())),), kwargs
    if name == "put":
        checkpoint, new_versions = draw(checkpoints())
        return name, (draw(configs()), checkpoint, draw(METADATA), new_versions), {}
    if name == "put_writes":
        args = (
            draw(configs(with_checkpoint_id=True)),
            draw(WRITES),
            draw(HOSTILE_IDS),
            draw(st.one_of(st.just(""), HOSTILE_IDS)),
        )
        return name, args, {}
    if name == "delete_thread":
        return name, (draw(HOSTILE_IDS),), {}
    if name == "delete_for_runs":
        return name, (draw(ID_LISTS),), {}
    if name == "copy_thread":
        return name, (draw(st.one_of(st.just("good"), HOSTILE_IDS)), draw(HOSTILE_IDS)), {}
    if name == "prune":
        strategy = draw(st.sampled_from(["keep_latest", "keep_last", "delete", "bogus", None, 3]))
        keep = draw(st.sampled_from([1, 2, 0, -1, True, 1.5, "2", 10**30]))
        return name, (draw(ID_LISTS),), {"strategy": strategy, "keep_last": keep}
    if name == "get_delta_channel_history":
        channels = draw(st.one_of(st.lists(HOSTILE_IDS, max_size=3), HOSTILE_IDS))
        return name, (), {"config": draw(configs()), "channels": channels}
    return name, (), {}


def is_ours(error: BaseException) -> bool:
    """An error a caller may see: ours, or our documented TypeError for a non-list of ids."""
    if isinstance(error, LangGraphRecallError):
        return True
    return type(error) is TypeError and "must be a list" in str(error)


def redis_snapshot(client: redis.Redis, prefix: str) -> dict[bytes, Any]:
    """Every key under ``prefix`` with its full content (TTLs aside)."""
    state: dict[bytes, Any] = {}
    for key in sorted(client.scan_iter(match=f"{prefix}*", count=1000)):
        kind = client.type(key)
        if kind == b"hash":
            state[key] = sorted(client.hgetall(key).items())
        elif kind == b"zset":
            state[key] = client.zrange(key, 0, -1, withscores=True)
        elif kind == b"string":
            state[key] = client.get(key)
        else:
            state[key] = kind
    return state


def same_value(left: Any, right: Any) -> bool:
    """Strict equality for values read back: same types (``1 != 1.0 != True``), NaN equal
    to NaN, tuples and lists distinct only where both backends keep them apart."""
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left):
        return math.isnan(right)
    if type(left) is not type(right):
        return False
    if isinstance(left, Mapping):
        return left.keys() == right.keys() and all(same_value(left[k], right[k]) for k in left)
    if isinstance(left, (list, tuple)):
        return len(left) == len(right) and all(map(same_value, left, right))
    return bool(left == right)
