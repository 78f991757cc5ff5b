"""The savers' reads, written once as programs (no I/O here), and the decoding of their rows.

The row shape is the one the official saver reads (``langgraph.checkpoint.postgres.base``'s
documented ``SELECT_SQL``): the checkpoint with its blobs and pending writes aggregated into
one row, so a read is one round trip. Rows are decoded with the saver's serializer after the
connection went back to the pool.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    Checkpoint,
    CheckpointTuple,
    DeltaChannelHistory,
    PendingWrite,
    get_checkpoint_id,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.types import TASKS
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from langgraph_recall._pg.program import Program, Stmt
from langgraph_recall.checkpoint.postgres import _sql

__all__ = [
    "DELTA_PAGE_SIZE",
    "INLINE_DECODE_BYTES",
    "checkpoint_tuple",
    "delta_history_program",
    "get_tuple_program",
    "get_tuple_query",
    "list_program",
    "migrate_sends",
    "needs_sends_migration",
    "next_version",
    "pending_writes_size",
]

INLINE_DECODE_BYTES = 64 * 1024
"""Pending writes up to this many serialised bytes are decoded on the event loop by
``AsyncPostgresSaver``; larger ones in a worker thread (a thread hop costs more CPU than
decoding a few small writes)."""

DELTA_PAGE_SIZE = 1024
"""Checkpoints read per page while ``get_delta_channel_history`` walks a parent chain."""


def next_version(current: str | int | float | None) -> str:
    """The channel version after ``current``: the official saver's format (a zero-padded
    counter, ``.``, a random fraction), so versions from either saver compare as text.

    Example:
        ```python
        from langgraph_recall.checkpoint.postgres._read import next_version

        first = next_version(None)
        assert first.startswith("0" * 31 + "1.") and next_version(first) > first
        ```
    """
    if current is None:
        counter = 0
    elif isinstance(current, str):
        counter = int(current.split(".")[0])
    else:
        counter = int(current)
    return f"{counter + 1:032}.{random.random():016}"


def get_tuple_query(config: RunnableConfig) -> tuple[str, tuple[str, ...]]:
    """The ``get_tuple`` query for a (normalised) config: the named checkpoint, or the
    thread's latest, with its blobs and pending writes in one row.

    Example:
        ```python
        from langgraph_recall.checkpoint.postgres._read import get_tuple_query

        sql, args = get_tuple_query({"configurable": {"thread_id": "t"}})
        assert args == ("t", "") and sql.endswith("LIMIT 1")
        ```
    """
    configurable = config["configurable"]
    thread_id, checkpoint_ns = configurable["thread_id"], configurable.get("checkpoint_ns", "")
    checkpoint_id = get_checkpoint_id(config)
    if checkpoint_id:
        return _sql.GET_TUPLE_BY_ID, (thread_id, checkpoint_ns, checkpoint_id)
    return _sql.GET_TUPLE_LATEST, (thread_id, checkpoint_ns)


def needs_sends_migration(row: Mapping[str, Any]) -> bool:
    """A pre-v4 checkpoint reads its pending sends from its parent's writes."""
    return bool(row["checkpoint"]["v"] < 4 and row["parent_checkpoint_id"])


def migrate_sends(serde: SerializerProtocol, row: DictRow, sends: Mapping[str, Any]) -> None:
    """Fold a parent's pending sends (a :data:`~._sql.PENDING_SENDS` row) into ``row`` as
    the ``TASKS`` channel value, at the checkpoint's highest version."""
    if not sends["sends"]:
        return
    value = [serde.loads_typed((type_.decode(), blob)) for type_, blob in sends["sends"]]
    type_, blob = serde.dumps_typed(value)
    if row["channel_values"] is None:
        row["channel_values"] = []
    row["channel_values"].append((TASKS.encode(), type_.encode(), blob))
    versions = row["checkpoint"]["channel_versions"]
    versions[TASKS] = max(versions.values()) if versions else next_version(None)


def _with_sends(serde: SerializerProtocol, rows: list[DictRow]) -> Program[list[DictRow]]:
    """Migrate the pending sends of the pre-v4 checkpoints among ``rows`` (one query)."""
    by_parent: dict[str, list[DictRow]] = {}
    for row in rows:
        if needs_sends_migration(row):
            by_parent.setdefault(row["parent_checkpoint_id"], []).append(row)
    if by_parent:
        params = (rows[0]["thread_id"], list(by_parent))
        for sends in (yield Stmt(_sql.PENDING_SENDS, params, fetch=True)):
            for row in by_parent.get(sends["checkpoint_id"], ()):
                migrate_sends(serde, row, sends)
    return rows


def get_tuple_program(serde: SerializerProtocol, config: RunnableConfig) -> Program[DictRow | None]:
    """Read the row of the checkpoint ``config`` names (or the thread's latest)."""
    query, args = get_tuple_query(config)
    rows = yield Stmt(query, args, fetch=True)
    if not rows:
        return None
    return (yield from _with_sends(serde, rows[:1]))[0]


def list_program(
    serde: SerializerProtocol,
    config: RunnableConfig | None,
    filter: Mapping[str, Any] | None,
    before: RunnableConfig | None,
    limit: int | None,
) -> Program[list[DictRow]]:
    """Read the rows ``list()`` yields (validated arguments), newest first."""
    wheres: list[str] = []
    params: list[Any] = []
    if config is not None:
        configurable = config["configurable"]
        wheres.append("thread_id = %s")
        params.append(configurable["thread_id"])
        if configurable.get("checkpoint_ns") is not None:
            wheres.append("checkpoint_ns = %s")
            params.append(configurable["checkpoint_ns"])
        if checkpoint_id := get_checkpoint_id(config):
            wheres.append("checkpoint_id = %s")
            params.append(checkpoint_id)
    if filter:
        wheres.append("metadata @> %s")
        params.append(Jsonb(filter))
    if before is not None:
        wheres.append("checkpoint_id < %s")
        params.append(get_checkpoint_id(before))
    query = _sql.LIST_CHECKPOINTS
    if wheres:
        query += "WHERE " + " AND ".join(wheres)
    query += " ORDER BY checkpoint_id DESC"
    if limit is not None:
        query += " LIMIT %s"
        params.append(int(limit))
    rows = yield Stmt(query, params, fetch=True)
    return (yield from _with_sends(serde, rows))


# --------------------------------------------------------------------------- delta history


@dataclass
class _Walk:
    """One channel's walk up the parent chain: the checkpoints whose writes it replays and,
    where it stopped on a stored value, that value's version (blob) or inline value."""

    at: str | None
    chain: list[str] = field(default_factory=list)
    done: bool = False
    seed_version: str | None = None
    inline: Any = None
    has_inline: bool = False


def _advance(walk: _Walk, index: int, pages: Mapping[str, DictRow]) -> None:
    """Follow parents while their rows are read; stop on a stored value or the root."""
    while walk.at is not None and walk.at in pages:
        row = pages[walk.at]
        walk.chain.append(walk.at)
        blob, inline = row[f"b{index}"], row[f"j{index}"]
        if blob or inline is not None:
            # a blob wins: for a DeltaChannel snapshot the inline value is a ``true`` marker
            walk.seed_version = row[f"v{index}"]
            walk.inline, walk.has_inline = inline, not blob
            walk.done = True
            return
        walk.at = row["parent_checkpoint_id"]
    walk.done = walk.done or walk.at is None


def delta_history_program(
    serde: SerializerProtocol, config: RunnableConfig, channels: Sequence[str]
) -> Program[dict[str, DeltaChannelHistory]]:
    """``get_delta_channel_history``: each channel's writes along the target's parent chain
    (oldest first, each checkpoint's in ``writes_sort_key`` order) back to the nearest
    ancestor storing a value for it (the ``seed``), in two kinds of query: pages of the
    chain, then the writes and seed blobs of every channel in one ``UNION ALL``."""
    channels = list(channels)
    if not channels:
        return {}
    configurable = config["configurable"]
    thread_id, ns = configurable["thread_id"], configurable.get("checkpoint_ns", "")
    target = get_checkpoint_id(config)
    if not target:
        latest = yield Stmt(_sql.LATEST_CHECKPOINT_ID, (thread_id, ns), fetch=True)
        if not latest:
            return {channel: {"writes": []} for channel in channels}
        target = str(latest[0]["checkpoint_id"])
    names = [name for channel in channels for name in (channel,) * 4]
    pages: dict[str, DictRow] = {}
    walks: list[_Walk] = []
    cursor, first = target, True
    while True:
        sql = _sql.delta_chain_page(len(channels), first=first)
        page = yield Stmt(sql, (*names, thread_id, ns, cursor, DELTA_PAGE_SIZE), fetch=True)
        pages.update((row["checkpoint_id"], row) for row in page)
        if first:
            if target not in pages:
                break  # no such checkpoint: nothing to replay
            walks = [_Walk(pages[target]["parent_checkpoint_id"]) for _ in channels]
        for index, walk in enumerate(walks):
            if not walk.done:
                _advance(walk, index, pages)
        if all(walk.done for walk in walks) or len(page) < DELTA_PAGE_SIZE:
            break
        cursor, first = page[-1]["checkpoint_id"], False
    if not walks:
        return {channel: {"writes": []} for channel in channels}
    chained = [(ch, w) for ch, w in zip(channels, walks, strict=True) if w.chain]
    seeded = [(ch, w) for ch, w in zip(channels, walks, strict=True) if w.seed_version]
    rows: list[DictRow] = []
    if chained or seeded:
        params: list[Any] = []
        for channel, walk in chained:
            params.extend((thread_id, ns, channel, walk.chain))
        for channel, walk in seeded:
            params.extend((thread_id, ns, channel, walk.seed_version))
        sql = _sql.delta_values(len(chained), len(seeded))
        rows = yield Stmt(sql, params, fetch=True)
    return _delta_result(serde, channels, walks, rows)


def _delta_result(
    serde: SerializerProtocol, channels: Sequence[str], walks: Sequence[_Walk], rows: list[DictRow]
) -> dict[str, DeltaChannelHistory]:
    writes: dict[tuple[str, str], list[DictRow]] = {}
    blobs: dict[tuple[str, str], DictRow] = {}
    for row in rows:
        if row["kind"] == "w":
            writes.setdefault((row["channel"], row["checkpoint_id"]), []).append(row)
        else:
            blobs[(row["channel"], row["version"])] = row
    result: dict[str, DeltaChannelHistory] = {}
    for channel, walk in zip(channels, walks, strict=True):
        collected: list[PendingWrite] = []
        for checkpoint_id in reversed(walk.chain):
            found = writes.get((channel, checkpoint_id), [])
            found.sort(key=lambda w: writes_sort_key(w["task_path"], w["task_id"], w["idx"]))
            collected.extend(
                (w["task_id"], channel, serde.loads_typed((w["type"], w["blob"]))) for w in found
            )
        entry: DeltaChannelHistory = {"writes": collected}
        if walk.seed_version is not None:
            blob = blobs.get((channel, walk.seed_version))
            if blob is not None and blob["type"] != "empty":
                entry["seed"] = serde.loads_typed((blob["type"], blob["blob"]))
            elif walk.has_inline:
                entry["seed"] = walk.inline
        result[channel] = entry
    return result


# --------------------------------------------------------------------------- decoding


def pending_writes_size(row: Mapping[str, Any]) -> int:
    """Serialised bytes of a checkpoint row's pending writes (their blobs).

    Example:
        ```python
        from langgraph_recall.checkpoint.postgres._read import pending_writes_size

        assert pending_writes_size({"pending_writes": None}) == 0
        ```
    """
    return sum(len(w[3] or b"") for w in row["pending_writes"] or ())


def checkpoint_tuple(serde: SerializerProtocol, row: DictRow) -> CheckpointTuple:
    """Decode a checkpoint row (the official ``SELECT_SQL`` shape) into a
    :class:`CheckpointTuple`: blobs over the inline values, writes in ``writes_sort_key``
    order."""
    thread_id, checkpoint_ns = row["thread_id"], row["checkpoint_ns"]
    stored = row["checkpoint"]
    parent_id = row["parent_checkpoint_id"]
    values = dict(stored.get("channel_values") or {})
    for channel, type_, blob in row["channel_values"] or ():
        if type_ != b"empty":
            values[channel.decode()] = serde.loads_typed((type_.decode(), blob))
    writes = sorted(
        row["pending_writes"] or (),
        key=lambda w: writes_sort_key(w[4].decode(), w[0].decode(), int(w[5])),
    )
    return CheckpointTuple(
        {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": row["checkpoint_id"],
            }
        },
        cast(Checkpoint, {**stored, "channel_values": values}),
        row["metadata"],
        (
            {
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": checkpoint_ns,
                    "checkpoint_id": parent_id,
                }
            }
            if parent_id
            else None
        ),
        [
            (task.decode(), channel.decode(), serde.loads_typed((type_.decode(), blob)))
            for task, channel, type_, blob, _, _ in writes
        ],
    )
