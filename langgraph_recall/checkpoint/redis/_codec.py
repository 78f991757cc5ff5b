"""Pure encoding and decoding of what the Redis checkpointer stores (no I/O).

* a *record* (hash ``cp``): msgpack ``[checkpoint type, checkpoint bytes, metadata type,
  metadata bytes, valued channels]`` — the checkpoint without ``channel_values`` and the
  metadata, both through the saver's ``serde`` (so an ``EncryptedSerializer`` encrypts
  them), and the names of the channels that have a stored value (a read checks each one
  came back: a checkpoint is whole or an error; records of layout v1 have no list);
* *refs* (hash ``refs``): msgpack ``[parent id, run id, blob field...]`` in plain text,
  for the Lua scripts (loading blobs, garbage collection, ``delete_for_runs``);
* a *blob* (hash ``blobs``): ``type + NUL + serde bytes``;
* a *write* (hash ``w``): msgpack ``[task id, task path, idx, channel, type, bytes]``.

Example:
    ```python
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph_recall.checkpoint.redis._codec import decode_blob, encode_blob

    serde = JsonPlusSerializer()
    assert decode_blob(serde, encode_blob(serde, {"a": 1})) == {"a": 1}
    ```
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import ormsgpack
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    PendingWrite,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_recall.checkpoint import _guard, _values
from langgraph_recall.checkpoint.redis import _keys

__all__ = [
    "LoadedRow",
    "PutArgs",
    "decode_blob",
    "decode_delta_history",
    "decode_metadata",
    "decode_refs",
    "decode_row",
    "decode_write",
    "delta_depth",
    "encode_blob",
    "encode_put",
    "encode_refs",
    "encode_writes",
    "matches_filter",
    "next_version",
]


def encode_blob(serde: SerializerProtocol, value: Any, where: str = "channel value") -> bytes:
    """Serialize one channel value as ``type + NUL + bytes`` (checked by
    :func:`~langgraph_recall.checkpoint._values.dump_value`: what cannot be stored exactly
    raises ``InvalidValueError``)."""
    return _blob(*_values.dump_value(serde, value, where))


def _blob(type_: str, data: bytes) -> bytes:
    return type_.encode() + b"\x00" + data


def decode_blob(serde: SerializerProtocol, raw: bytes) -> Any:
    """Invert :func:`encode_blob`."""
    type_, _, data = raw.partition(b"\x00")
    return serde.loads_typed((type_.decode(), data))


def encode_refs(parent_id: str | None, run_id: str | None, fields: Sequence[str]) -> bytes:
    """The plain ``[parent, run, fields...]`` list the Lua scripts read (ids quoted)."""
    return ormsgpack.packb(
        [
            _keys.quote(parent_id) if parent_id else "",
            _keys.quote(run_id) if run_id else "",
            *fields,
        ]
    )


def decode_refs(raw: bytes) -> tuple[str | None, str | None, list[str]]:
    """``(parent id, run id, blob fields)`` of :func:`encode_refs` output."""
    parent, run, *fields = ormsgpack.unpackb(raw)
    return (_keys.unquote(parent) or None, _keys.unquote(run) or None, fields)


@dataclass(frozen=True)
class PutArgs:
    """What one ``put`` sends to the ``PUT`` script."""

    member: str
    record: bytes
    refs: bytes
    run_member: str
    blobs: list[bytes | str]
    depth: int


def delta_depth(metadata: Mapping[str, Any]) -> int:
    """How many newest checkpoints a ``DeltaChannel`` needs kept to rebuild its value.

    ``counters_since_delta_snapshot`` maps a channel to ``(updates, supersteps)`` since its
    last snapshot; the value is rebuilt from the writes of that many ancestors plus the
    snapshot checkpoint itself.
    """
    counters = metadata.get("counters_since_delta_snapshot") or {}
    steps = [int(pair[1]) for pair in counters.values() if isinstance(pair, (list, tuple))]
    return max(steps) + 2 if steps else 0


def encode_put(
    serde: SerializerProtocol,
    checkpoint: Checkpoint,
    checkpoint_ns: str,
    parent_id: str | None,
    metadata: Mapping[str, Any],
    new_versions: ChannelVersions,
    header_bytes: int = 0,
) -> PutArgs:
    """Serialize a checkpoint: record, refs and the blobs of the ``new_versions`` channels.

    ``metadata`` and the checkpoint were checked by ``_config.checked_put`` (whose size
    estimate is ``header_bytes``); each value by ``_values.dump_value``. The call's size
    is counted like the Postgres saver counts it (header + serialized values), so both
    refuse the same puts."""
    values = checkpoint["channel_values"]
    bare = {key: value for key, value in checkpoint.items() if key != "channel_values"}
    cp_type, cp_bytes = _values.dump_value(serde, bare, "checkpoint", limit=False)
    md_type, md_bytes = _values.dump_value(serde, metadata, "metadata", limit=False)
    valued = [channel for channel in checkpoint["channel_versions"] if channel in values]
    record = ormsgpack.packb([cp_type, cp_bytes, md_type, md_bytes, valued])
    fields = [
        _keys.blob_field(checkpoint_ns, channel, version)
        for channel, version in checkpoint["channel_versions"].items()
    ]
    blobs: list[bytes | str] = []
    size = header_bytes
    for channel, value in values.items():  # in the order the Postgres saver checks them
        version = new_versions.get(channel)
        if version is None:
            if type(value) is str:  # Postgres keeps it inline, so checks it: so do we
                _values.check_text(value, f"channel {channel!r}")
            continue
        type_, data = _values.dump_value(serde, value, f"channel {channel!r}")
        size += len(data)
        blobs.append(_keys.blob_field(checkpoint_ns, channel, version))
        blobs.append(_blob(type_, data))
    _values.check_call_size(size, "put")
    run_id = metadata.get("run_id")
    run = str(run_id) if run_id is not None else None
    member = _keys.checkpoint_member(checkpoint_ns, checkpoint["id"])
    return PutArgs(
        member=member,
        record=record,
        refs=encode_refs(parent_id, run, fields),
        run_member=_keys.run_member(run, member) if run else "",
        blobs=blobs,
        depth=delta_depth(metadata),
    )


def encode_writes(
    serde: SerializerProtocol,
    checkpoint_ns: str,
    checkpoint_id: str,
    task_id: str,
    task_path: str,
    writes: Sequence[tuple[str, Any]],
) -> list[bytes | str]:
    """Flat ``(field, payload, upsert)`` triples for the ``PUT_WRITES`` script.

    Special channels (``WRITES_IDX_MAP``) replace an existing write; regular ones are
    inserted only if absent, so replaying a task's writes is idempotent.
    """
    member = _keys.checkpoint_member(checkpoint_ns, checkpoint_id)
    args: list[bytes | str] = []
    size = 0
    for position, (channel, value) in enumerate(writes):
        idx = WRITES_IDX_MAP.get(channel, position)
        type_, data = _values.dump_value(serde, value, f"write to channel {channel!r}")
        payload = ormsgpack.packb([task_id, task_path, idx, channel, type_, data])
        size += len(data)
        args.append(_keys.write_field(member, task_id, idx))
        args.append(payload)
        args.append("1" if channel in WRITES_IDX_MAP else "0")
    _values.check_call_size(size, "put_writes")
    return args


def decode_write(
    serde: SerializerProtocol, raw: bytes
) -> tuple[tuple[str, str, int], PendingWrite]:
    """``(sort key, (task_id, channel, value))`` of one stored write."""
    task_id, task_path, idx, channel, type_, data = ormsgpack.unpackb(raw)
    value = serde.loads_typed((type_, data))
    return writes_sort_key(task_path, task_id, idx), (task_id, channel, value)


def decode_delta_history(
    serde: SerializerProtocol, channels: Sequence[str], rows: Sequence[Any]
) -> dict[str, DeltaChannelHistory]:
    """Build ``get_delta_channel_history``'s result from the ``DELTA_HISTORY`` reply.

    ``rows`` are the target's ancestors newest first: ``(member, writes, seed pairs)``.
    Like the base implementation, an ancestor's writes count for a channel until (and
    including) the ancestor whose stored value seeds it; writes replay in
    ``writes_sort_key`` order, oldest ancestor first.
    """
    remaining = set(channels)
    collected: dict[str, list[PendingWrite]] = {ch: [] for ch in channels}
    seeds: dict[str, Any] = {}
    for _member, writes, seed_pairs in rows:
        unpacked = sorted(
            (ormsgpack.unpackb(raw) for raw in writes),
            key=lambda w: writes_sort_key(w[1], w[0], w[2]),
        )
        for task_id, _path, _idx, channel, type_, data in reversed(unpacked):
            if channel in remaining:
                collected[channel].append((task_id, channel, serde.loads_typed((type_, data))))
        for i in range(0, len(seed_pairs), 2):
            channel = _keys.blob_channel(_text(seed_pairs[i]))
            if channel in remaining:
                seeds[channel] = decode_blob(serde, seed_pairs[i + 1])
                remaining.discard(channel)
    result: dict[str, DeltaChannelHistory] = {}
    for channel in channels:
        entry: DeltaChannelHistory = {"writes": list(reversed(collected[channel]))}
        if channel in seeds:
            entry["seed"] = seeds[channel]
        result[channel] = entry
    return result


def decode_metadata(serde: SerializerProtocol, record: bytes) -> CheckpointMetadata:
    """Only the metadata of a record (for filtering without decoding the checkpoint)."""
    unpacked = ormsgpack.unpackb(record)
    return cast(CheckpointMetadata, serde.loads_typed((unpacked[2], unpacked[3])))


def _contains(actual: Any, wanted: Any) -> bool:
    """Postgres ``jsonb @>`` containment (what the Postgres savers' filter runs)."""
    if isinstance(wanted, Mapping):
        return isinstance(actual, Mapping) and all(
            key in actual and _contains(actual[key], value) for key, value in wanted.items()
        )
    if isinstance(wanted, (list, tuple)):  # every wanted element is in some actual one
        return isinstance(actual, (list, tuple)) and all(
            any(_contains(item, part) for item in actual) for part in wanted
        )
    return _json_equal(actual, wanted)


def _json_equal(actual: Any, wanted: Any) -> bool:
    """JSON scalar equality: ``true`` is not ``1``, ``1`` is ``1.0``, ``null`` only ``null``."""
    if isinstance(actual, bool) or isinstance(wanted, bool):
        return type(actual) is type(wanted) and actual == wanted
    if isinstance(actual, (int, float)) and isinstance(wanted, (int, float)):
        return bool(actual == wanted)
    if isinstance(actual, str) and isinstance(wanted, str):
        return actual == wanted
    return actual is None and wanted is None


def matches_filter(metadata: Mapping[str, Any], wanted: Mapping[str, Any] | None) -> bool:
    """Metadata containment exactly like Postgres ``metadata @> filter``: every key must
    match; nested dicts match when they contain the wanted sub-dict, lists when every
    wanted element is contained in some element; ``True`` never matches ``1``.

    Example:
        ```python
        from langgraph_recall.checkpoint.redis._codec import matches_filter

        assert matches_filter({"tags": ["a", "b"], "n": 1}, {"tags": ["b"], "n": 1.0})
        assert not matches_filter({"flag": 1}, {"flag": True})
        ```
    """
    return not wanted or _contains(metadata, wanted)


LoadedRow = Sequence[Any]
"""One ``load`` reply of the ``LOAD`` script: member, record, refs, blob pairs, writes."""


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def decode_row(serde: SerializerProtocol, thread_id: str, row: LoadedRow) -> CheckpointTuple:
    """Turn one ``LOAD`` reply into a :class:`CheckpointTuple`.

    Raises:
        CheckpointIntegrityError: A channel the record lists as valued has no blob (its
            keys expired or were evicted apart): the checkpoint is never returned partial.
    """
    member, record, refs, blob_pairs, write_rows = row
    checkpoint_ns, checkpoint_id = _keys.split_member(_text(member))
    cp_type, cp_bytes, md_type, md_bytes, *valued = ormsgpack.unpackb(record)
    loaded = {_keys.blob_channel(_text(blob_pairs[i])) for i in range(0, len(blob_pairs), 2)}
    missing = [channel for channel in (valued[0] if valued else ()) if channel not in loaded]
    if missing:
        raise _guard.missing_blobs_error(
            thread_id, checkpoint_ns, checkpoint_id, missing, _guard.REDIS_HINT
        )
    checkpoint = serde.loads_typed((cp_type, cp_bytes))
    metadata = serde.loads_typed((md_type, md_bytes))
    parent_id = decode_refs(refs)[0] if refs else None
    values: dict[str, Any] = {}
    for i in range(0, len(blob_pairs), 2):
        raw = blob_pairs[i + 1]
        if raw.startswith(b"empty\x00"):
            continue
        values[_keys.blob_channel(_text(blob_pairs[i]))] = decode_blob(serde, raw)
    checkpoint["channel_values"] = values
    decoded = sorted((decode_write(serde, raw) for raw in write_rows), key=lambda w: w[0])
    config: RunnableConfig = {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": checkpoint_ns,
            "checkpoint_id": checkpoint_id,
        }
    }
    parent_config: RunnableConfig | None = None
    if parent_id:
        parent_config = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": parent_id,
            }
        }
    return CheckpointTuple(
        config=config,
        checkpoint=checkpoint,
        metadata=metadata,
        parent_config=parent_config,
        pending_writes=[write for _, write in decoded],
    )


def next_version(current: str | int | float | None) -> str:
    """Next channel version: zero-padded counter plus a random suffix (fork-safe blob keys)."""
    if current is None:
        number = 0
    elif isinstance(current, (int, float)):
        number = int(current)
    else:
        number = int(current.split(".")[0])
    return f"{number + 1:032}.{random.random():016}"
