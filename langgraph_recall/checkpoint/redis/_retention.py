"""Which checkpoints ``prune`` deletes from a Redis thread (pure).

Example:
    ```python
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from langgraph_recall.checkpoint.redis._retention import keep_latest_drops

    assert keep_latest_drops({}, {}, JsonPlusSerializer()) == []
    ```
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_recall.checkpoint.redis import _codec, _keys

__all__ = ["keep_latest_drops"]


def keep_latest_drops(
    parents: Mapping[str, str | None],
    records: Mapping[str, bytes],
    serde: SerializerProtocol,
    keep: int = 1,
) -> list[str]:
    """Members ``prune(strategy="keep_latest" | "keep_last")`` deletes from one thread.

    Keeps the newest ``keep`` checkpoints of each namespace and, when a kept one's
    metadata says a ``DeltaChannel`` has not snapshotted since
    (``counters_since_delta_snapshot``), every ancestor on its parent chain up to and
    including the one where each such channel was last snapshotted (or first written),
    so every kept checkpoint still rebuilds its value.
    """
    by_ns: dict[str, list[str]] = {}
    for member in records:
        by_ns.setdefault(member.partition(_keys.SEP)[0], []).append(member)
    kept: set[str] = set()
    for ns, members in by_ns.items():
        newest = sorted(members, key=lambda m: _keys.split_member(m)[1], reverse=True)[:keep]
        kept.update(newest)
        for current in newest:
            pending = set(_delta_counters(serde, records[current]))
            while pending:
                parent = parents.get(current)
                parent_member = f"{ns}{_keys.SEP}{_keys.quote(parent)}" if parent else None
                if parent_member is None or parent_member not in records:
                    break
                kept.add(parent_member)
                pending &= set(_delta_counters(serde, records[parent_member]))
                current = parent_member
    return sorted(m for m in records if m not in kept)


def _delta_counters(serde: SerializerProtocol, record: bytes) -> Mapping[str, Any]:
    metadata = _codec.decode_metadata(serde, record)
    counters = metadata.get("counters_since_delta_snapshot") or {}
    return counters if isinstance(counters, Mapping) else {}
