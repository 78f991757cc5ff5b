"""Pure helpers of the savers' reads (no I/O): the ``get_tuple`` query and row decoding.

The row shape is the official saver's ``SELECT_SQL``: the checkpoint with its blobs and
pending writes aggregated into one row, so a read is one round trip.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import Checkpoint, CheckpointTuple, get_checkpoint_id
from langgraph.checkpoint.postgres.base import BasePostgresSaver
from psycopg.rows import DictRow

from langgraph_memory.checkpoint.postgres import _sql

__all__ = [
    "INLINE_DECODE_BYTES",
    "checkpoint_tuple",
    "get_tuple_query",
    "migrate_sends",
    "needs_sends_migration",
    "pending_writes_size",
]

INLINE_DECODE_BYTES = 64 * 1024
"""Pending writes up to this many serialised bytes are decoded on the event loop by
``AsyncPostgresSaver``; larger ones in a worker thread (as the official saver always
does: a thread hop costs more CPU than decoding a few small writes)."""


def get_tuple_query(config: RunnableConfig) -> tuple[str, tuple[str, ...]]:
    """The official saver's ``get_tuple`` query for a (normalised) config: the named
    checkpoint, or the thread's latest, with its blobs and pending writes in one row.

    Example:
        ```python
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


def migrate_sends(saver: BasePostgresSaver, row: DictRow, sends: Mapping[str, Any] | None) -> None:
    """Fold a parent's pending sends (``SELECT_PENDING_SENDS_SQL`` row) into ``row``."""
    if sends:
        if row["channel_values"] is None:
            row["channel_values"] = []
        saver._migrate_pending_sends(sends["sends"], row["checkpoint"], row["channel_values"])


def pending_writes_size(row: Mapping[str, Any]) -> int:
    """Serialised bytes of a ``SELECT_SQL`` row's pending writes (their blobs).

    Example:
        ```python
        assert pending_writes_size({"pending_writes": None}) == 0
        ```
    """
    return sum(len(w[3] or b"") for w in row["pending_writes"] or ())


def checkpoint_tuple(saver: BasePostgresSaver, row: Mapping[str, Any]) -> CheckpointTuple:
    """Decode a row of the official ``SELECT_SQL`` into a :class:`CheckpointTuple`
    (what the official sync saver's ``_load_checkpoint_tuple`` returns)."""
    thread_id, checkpoint_ns = row["thread_id"], row["checkpoint_ns"]
    stored = row["checkpoint"]
    parent_id = row["parent_checkpoint_id"]
    return CheckpointTuple(
        {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": row["checkpoint_id"],
            }
        },
        cast(
            Checkpoint,
            {
                **stored,
                "channel_values": {
                    **(stored.get("channel_values") or {}),
                    **saver._load_blobs(row["channel_values"]),
                },
            },
        ),
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
        saver._load_writes(row["pending_writes"]),
    )
