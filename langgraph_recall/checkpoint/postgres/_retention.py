"""Prune planning and retention programs (pure; see ``_common`` for how programs run).

:func:`plan_keep_last` decides, from the shape of a thread's checkpoint graph, which
checkpoints and blobs ``prune`` / a ``keep_last=`` put may delete without breaking
``DeltaChannel`` reconstruction; the ``*_program`` functions are the statements that apply
it, and the TTL sweep. :class:`ThreadedSweep` is the one shell here: the sync
saver's ``aprune`` / ``asweep`` / ``aforget_threads`` in a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph_recall.checkpoint import _config
from langgraph_recall.checkpoint.postgres import _sql
from langgraph_recall.checkpoint.postgres._common import (
    SWEEP_BATCH,
    Program,
    Stmt,
)

__all__ = [
    "MAX_SWEEP_BATCHES",
    "CheckpointShape",
    "PrunePlan",
    "SweepResult",
    "ThreadedSweep",
    "check_prune_args",
    "keep_last_program",
    "plan_keep_last",
    "put_keeping_last",
    "sweep_ttl_program",
]

MAX_SWEEP_BATCHES = 20
"""Upper bound of batches one sweep handles per policy (the rest waits for the next sweep)."""

# --------------------------------------------------------------------------- prune


@dataclass(frozen=True)
class CheckpointShape:
    """What prune needs to know about one stored checkpoint."""

    ns: str
    id: str
    parent: str | None
    v: int
    versions: Mapping[str, str]
    inline: frozenset[str] = frozenset()
    true_channels: frozenset[str] = frozenset()
    delta_counters: frozenset[str] = frozenset()
    root: str | None = None
    """For a subgraph checkpoint: the root-graph checkpoint its call started from."""

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> CheckpointShape:
        """Build from a ``PRUNE_CHECKPOINT_ROWS`` row."""
        return cls(
            ns=row["checkpoint_ns"],
            id=row["checkpoint_id"],
            parent=row["parent_checkpoint_id"],
            v=int(row["v"]),
            versions={k: str(v) for k, v in (row["versions"] or {}).items()},
            inline=frozenset(row["inline_channels"] or ()),
            true_channels=frozenset(row["true_channels"] or ()),
            delta_counters=frozenset(row["delta_counters"] or ()),
            root=row.get("root"),
        )


@dataclass
class PrunePlan:
    """What a prune of one thread deletes."""

    delete: dict[str, list[str]] = field(default_factory=dict)
    """Checkpoint ids to delete, per namespace."""
    garbage_blobs: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """Blob versions no kept checkpoint references, per (namespace, channel)."""

    def only(self, ns: str) -> PrunePlan:
        """The part of the plan that touches namespace ``ns``."""
        return PrunePlan(
            {ns: self.delete[ns]} if ns in self.delete else {},
            {key: v for key, v in self.garbage_blobs.items() if key[0] == ns},
        )

    @property
    def deleted_count(self) -> int:
        """Number of checkpoints the plan deletes."""
        return sum(len(ids) for ids in self.delete.values())


def plan_keep_last(
    shapes: Iterable[CheckpointShape],
    blob_keys: Iterable[tuple[str, str, str]],
    sends_holders: Iterable[tuple[str, str]],
    keep: int,
) -> PrunePlan:
    """Decide what to delete so each namespace keeps its newest ``keep`` checkpoints.

    ``DeltaChannel``-safe: a kept checkpoint whose delta channel has no stored value
    (no blob at its version, nothing inline) is rebuilt from ancestor writes, so the
    ancestors up to the nearest one holding a value (a ``_DeltaSnapshot``) are kept
    with their writes. A pre-v4 checkpoint keeps the parent it reads pending sends
    from. A subgraph call's namespace is dropped with the root checkpoint the call
    started from. Blobs that no kept checkpoint references are garbage.

    Example:
        ```python
        from langgraph_recall.checkpoint.postgres._retention import CheckpointShape, plan_keep_last

        a = CheckpointShape("", "1", None, 4, {"x": "v1"})
        b = CheckpointShape("", "2", "1", 4, {"x": "v2"})
        plan = plan_keep_last([a, b], [("", "x", "v1"), ("", "x", "v2")], [], keep=1)
        assert plan.delete == {"": ["1"]} and plan.garbage_blobs == {("", "x"): ["v1"]}
        ```
    """
    by_ns: dict[str, dict[str, CheckpointShape]] = {}
    for shape in shapes:
        by_ns.setdefault(shape.ns, {})[shape.id] = shape
    blobs = set(blob_keys)
    holders = set(sends_holders)
    plan = PrunePlan()
    referenced: set[tuple[str, str, str]] = set()
    root_kept = _kept(by_ns.get("", {}), "", blobs, holders, keep)
    for ns, checkpoints in by_ns.items():
        if ns == "":
            kept = root_kept
        elif _call_finished_with_dropped_root(ns, checkpoints, by_ns.get("", {}), root_kept):
            kept = set()
        else:
            kept = _kept(checkpoints, ns, blobs, holders, keep)
        doomed = sorted(set(checkpoints) - kept)
        if doomed:
            plan.delete[ns] = doomed
        for cid in kept:
            referenced.update((ns, ch, ver) for ch, ver in checkpoints[cid].versions.items())
    for ns, channel, version in sorted(blobs - referenced):
        if ns in plan.delete or ns not in by_ns:
            plan.garbage_blobs.setdefault((ns, channel), []).append(version)
    return plan


def _kept(
    checkpoints: Mapping[str, CheckpointShape],
    ns: str,
    blobs: set[tuple[str, str, str]],
    holders: set[tuple[str, str]],
    keep: int,
) -> set[str]:
    """The newest ``keep`` checkpoints of one namespace plus the ancestors they need."""
    delta = set().union(*(c.delta_counters for c in checkpoints.values()))
    delta |= {
        ch
        for c in checkpoints.values()
        for ch in c.true_channels
        if (ns, ch, c.versions.get(ch)) in blobs
    }

    def seeded(c: CheckpointShape, ch: str) -> bool:
        return ch in c.inline or (ns, ch, c.versions.get(ch)) in blobs

    newest = sorted(checkpoints, reverse=True)[:keep]
    kept = set(newest)
    for cid in newest:
        c = checkpoints[cid]
        if (
            c.v < 4
            and c.parent is not None
            and c.parent in checkpoints
            and (ns, c.parent) in holders
        ):
            kept.add(c.parent)
        need = {ch for ch in delta if ch in c.versions and not seeded(c, ch)}
        parent = c.parent
        while need and parent is not None and parent in checkpoints:
            kept.add(parent)
            ancestor = checkpoints[parent]
            need = {ch for ch in need if not seeded(ancestor, ch)}
            parent = ancestor.parent
    return kept


def _call_finished_with_dropped_root(
    ns: str,
    checkpoints: Mapping[str, CheckpointShape],
    roots: Mapping[str, CheckpointShape],
    root_kept: set[str],
) -> bool:
    """A subgraph *call*'s namespace (``node:task_id``) goes with the root checkpoint its
    call started from, once that one is saved and not kept (a ``checkpointer=True``
    subgraph's namespace has no task id and keeps its own history)."""
    if ":" not in ns:
        return False
    head = checkpoints[max(checkpoints)]
    return head.root is not None and head.root in roots and head.root not in root_kept


def keep_last_program(thread_id: str, keep: int) -> Program[int | None]:
    """Prune one thread to its newest ``keep`` checkpoints per namespace (``prune``).

    Must run in its own transaction. It first takes the thread's exclusive lock (behind
    writes in flight) and checks the lease rule: a thread with a live lease is only changed
    by its holder, and ``prune`` carries no token. Under the lock nothing else writes the
    thread, so the reads that follow agree with each other and with the deletes.

    Returns:
        The number of checkpoints deleted, or ``None`` if the thread has a live lease
        (nothing was changed then).
    """
    (guard,) = yield Stmt(_sql.RETENTION_GUARD, (thread_id, True), fetch=True)
    if guard["verdict"] != "ok":
        return None
    return (yield from _trim_program(thread_id, keep))


def put_keeping_last(
    put: Program[list[str]], thread_id: str, checkpoint_ns: str, keep: int
) -> Program[list[str]]:
    """``put`` followed, in its transaction, by trimming the namespace written to its
    newest ``keep`` checkpoints (``keep_last=``; DeltaChannel-safe like ``prune``).

    The thread's exclusive lock is taken first (the put's write guard then runs under it),
    so a concurrent write or prune of the thread waits instead of seeing half a trim; the
    lease rule is the put's own. A namespace at most ``keep`` long costs one ``count``.
    Returns what the put returns (the reused channels with no stored blob, or ``[]``).
    """
    yield Stmt(_sql.LOCK_THREADS, ([thread_id],))
    missing = yield from put
    if missing:  # nothing written: the saver puts again with those values
        return missing
    (row,) = yield Stmt(_sql.COUNT_CHECKPOINTS, (thread_id, checkpoint_ns), fetch=True)
    if int(row["n"]) > keep:
        yield from _trim_program(thread_id, keep, only=checkpoint_ns)
    return []


def _trim_program(thread_id: str, keep: int, only: str | None = None) -> Program[int]:
    """Delete what :func:`plan_keep_last` drops from a locked thread (``only``: in that
    namespace alone); returns the number of checkpoints deleted."""
    rows = yield Stmt(_sql.PRUNE_CHECKPOINT_ROWS, (thread_id,), fetch=True)
    blob_rows = yield Stmt(_sql.PRUNE_BLOB_KEYS, (thread_id,), fetch=True)
    holder_rows = yield Stmt(_sql.PRUNE_SENDS_PARENTS, (thread_id,), fetch=True)
    plan = plan_keep_last(
        [CheckpointShape.from_row(r) for r in rows],
        [(r["checkpoint_ns"], r["channel"], r["version"]) for r in blob_rows],
        [(r["checkpoint_ns"], r["checkpoint_id"]) for r in holder_rows],
        keep,
    )
    if only is not None:
        plan = plan.only(only)
    for ns, ids in plan.delete.items():
        yield Stmt(_sql.DELETE_WRITES_BY_IDS, (thread_id, ns, ids))
        yield Stmt(_sql.DELETE_CHECKPOINTS_BY_IDS, (thread_id, ns, ids))
        yield Stmt(_sql.SET_PARENT_NULL, (thread_id, ns, ids))
    for (ns, channel), versions in plan.garbage_blobs.items():
        yield Stmt(_sql.DELETE_BLOBS_OF_CHANNEL, (thread_id, ns, channel, versions))
    if plan.delete:  # a late put onto a deleted checkpoint is refused from now on
        newest = max(max(ids) for ids in plan.delete.values())
        yield Stmt(_sql.MARK_PRUNED, (thread_id, newest))
    return plan.deleted_count


def check_prune_args(
    thread_ids: Sequence[str], strategy: str, keep_last: int | None
) -> tuple[list[str], int]:
    """Validate ``prune`` arguments: the thread ids as strings and the checkpoints kept per
    namespace, ``0`` = delete (the rule every saver applies:
    :func:`~langgraph_recall.checkpoint._config.checked_prune`)."""
    return _config.checked_prune(thread_ids, strategy, keep_last)


# --------------------------------------------------------------------------- retention


def sweep_ttl_program(ttl_seconds: float, batch: int = SWEEP_BATCH) -> Program[list[str]]:
    """Delete one batch of threads idle longer than the TTL; returns their ids.

    A claimed thread with a live lease, or with a write in flight, is skipped: background
    retention never deletes part of a thread someone is using."""
    rows = yield Stmt(_sql.CLAIM_EXPIRED_THREADS, (ttl_seconds, batch), fetch=True)
    claimed = [r["thread_id"] for r in rows]
    if not claimed:
        return []
    rows = yield Stmt(_sql.SWEEPABLE_THREADS, (claimed,), fetch=True)
    expired = [r["thread_id"] for r in rows]
    if expired:
        yield Stmt(_sql.ACTIVITY_FORGET, (expired,))
        yield Stmt(_sql.FORGET_LEASES, (expired,))
        for sql in _sql.DELETE_THREADS[1:]:
            yield Stmt(sql, (expired,))
    return expired


@dataclass
class SweepResult:
    """What one ``sweep()`` did.

    Attributes:
        expired_threads: Threads deleted because they were idle longer than ``ttl``.
        pruned_checkpoints: Always 0 now: ``keep_last`` is applied by every ``put``
            (kept for compatibility).

    """

    expired_threads: list[str] = field(default_factory=list)
    pruned_checkpoints: int = 0


class ThreadedSweep:
    """Mixin of the sync ``PostgresSaver``: :meth:`asweep` runs :meth:`sweep` in a worker
    thread (its other ``a*`` methods come from ``ThreadedAsyncMethods``)."""

    def sweep(self) -> SweepResult:
        raise NotImplementedError

    async def asweep(self) -> SweepResult:
        """:meth:`sweep` in a worker thread."""
        return await asyncio.to_thread(self.sweep)
