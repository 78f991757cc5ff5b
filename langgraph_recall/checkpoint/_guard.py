"""The write guard both checkpointers apply, as pure decisions and errors (no I/O).

Every write that adds or changes a thread's checkpoints passes one guard, evaluated
*atomically with the write* by the backend (inside the Redis Lua script, inside the
Postgres statement):

1. **No write path around a lease.** While the thread has a live lease, only its
   holder's fencing token is accepted: a write without a token is refused with
   :class:`~langgraph_recall.errors.ThreadBusyError`, a write whose token is not the
   thread's current one with :class:`~langgraph_recall.errors.StaleWriteError`. Without
   a live lease an unfenced write proceeds; a fenced one must still carry the current
   token. Erasure (``delete_thread``, ``delete_for_runs``) is never refused: it advances
   the token instead, so the holder's later writes fail.
2. **A checkpoint is whole or absent.** A ``put`` stores every value its checkpoint
   carries: a channel value it reuses from an earlier checkpoint (a channel with a value
   that is not in ``new_versions``) whose blob is not stored -- never written, or deleted
   meanwhile -- is written from the checkpoint instead of being left out. A ``put``
   whose parent was *deleted* by retention (``prune``, ``keep_last``,
   ``delete_for_runs``: a late write onto a pruned lineage) is refused with
   :class:`~langgraph_recall.errors.CheckpointIntegrityError`; a parent id that was never
   written is accepted, as every official saver does. A read that finds a stored
   checkpoint missing a channel value raises the same error.

Nothing is written when a guard refuses. This module holds what both savers share:
which channels a ``put`` reuses, and the messages of the errors, so the same input gets
the same outcome (and the same words) on every backend.

Example:
    ```python
    from langgraph_recall.checkpoint._guard import busy_error, reused_channels

    checkpoint = {"channel_values": {"a": 1, "b": [2]}, "channel_versions": {"a": "2", "b": "1"}}
    assert reused_channels(checkpoint, {"a": "2"}) == ["b"]
    assert "chat-1" in str(busy_error("chat-1", "put"))
    ```
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langgraph_recall.errors import CheckpointIntegrityError, StaleWriteError, ThreadBusyError

__all__ = [
    "POSTGRES_HINT",
    "REDIS_HINT",
    "RETENTION_HINT",
    "STALE_REASONS",
    "busy_error",
    "missing_blobs_error",
    "missing_parent_error",
    "reused_channels",
    "stale_error",
    "written_versions",
]

REDIS_HINT = (
    "the thread's keys expired (ttl) or were evicted while the turn ran. Set "
    "ttl={'default_ttl': ...} above your longest turn (a thread whose lease is held by "
    "with_thread_lease never expires), and use a maxmemory-policy that does not evict "
    "checkpoint keys"
)
"""How to avoid a half-gone Redis thread (the end of every Redis integrity message)."""

POSTGRES_HINT = (
    "a sweep (ttl / keep_last), prune() or delete_for_runs() removed it while the turn "
    "ran. Run turns under with_thread_lease (a leased thread is never swept or pruned), or "
    "set ttl above your longest turn"
)
"""How to avoid a half-gone Postgres thread (the end of every Postgres integrity message)."""

RETENTION_HINT = (
    "prune(), keep_last= or delete_for_runs() deleted it while this turn ran. Run turns "
    "under with_thread_lease (a leased thread is never pruned; erasure fences its holder out)"
)
"""How to avoid writing onto a pruned history (the end of every parent refusal)."""


def reused_channels(checkpoint: Mapping[str, Any], new_versions: Mapping[str, Any]) -> list[str]:
    """Channels whose stored value a ``put`` reuses instead of writing it.

    A channel with a value and a version, not in ``new_versions``, points at a blob an
    earlier ``put`` stored; the guard checks that blob still exists.

    Example:
        ```python
        from langgraph_recall.checkpoint._guard import reused_channels

        cp = {"channel_values": {"x": "v"}, "channel_versions": {"x": 1, "gone": 3}}
        assert reused_channels(cp, {}) == ["x"]
        assert reused_channels(cp, {"x": 1}) == []
        ```
    """
    values = checkpoint["channel_values"]
    return [
        channel
        for channel in checkpoint["channel_versions"]
        if channel in values and channel not in new_versions
    ]


def written_versions(
    checkpoint: Mapping[str, Any], new_versions: Mapping[str, Any]
) -> dict[str, Any]:
    """The ``channel -> version`` whose values a ``put`` writes: the channels of
    ``new_versions``, each at the version the checkpoint itself names for it (when it
    names one), so the checkpoint always finds the value it was written with -- a
    ``new_versions`` entry that disagrees with ``channel_versions`` would otherwise store
    the value where no read of this checkpoint looks.

    Example:
        ```python
        from langgraph_recall.checkpoint._guard import written_versions

        cp = {"channel_values": {"m": [1]}, "channel_versions": {"m": "1"}}
        assert written_versions(cp, {"m": "2", "other": "5"}) == {"m": "1", "other": "5"}
        ```
    """
    versions = checkpoint.get("channel_versions") or {}
    return {channel: versions.get(channel, version) for channel, version in new_versions.items()}


def busy_error(thread_id: str | Sequence[str], operation: str) -> ThreadBusyError:
    """The error for a write without the fencing token while another worker holds the lease
    (``thread_id``: one thread, or the threads a multi-thread call could not change).

    Example:
        ```python
        from langgraph_recall.checkpoint._guard import ThreadBusyError, busy_error

        err = busy_error("chat-1", "put")
        assert isinstance(err, ThreadBusyError) and "with_thread_lease" in str(err)
        assert "threads 'a', 'b' are leased" in str(busy_error(["a", "b"], "prune"))
        ```
    """
    if isinstance(thread_id, str):
        subject = f"thread {thread_id!r} is"
    else:
        subject = "threads " + ", ".join(repr(t) for t in thread_id) + " are"
    return ThreadBusyError(
        f"{subject} leased by another worker, and this {operation} carries no "
        "fencing token: it was refused and nothing was written. Run the graph through "
        "with_thread_lease(graph) (strategy='wait' queues behind the running turn), or "
        "retry once the lease holder has finished"
    )


STALE_REASONS: dict[str, str] = {
    "held": "another worker holds the thread's lease now",
    "free": (
        "the thread's lease moved on since (taken and released by another worker, or "
        "revoked by delete_for_runs)"
    ),
    "gone": (
        "the thread has no lease any more (deleted, swept or expired, or lost by a server "
        "that failed over or restarted from an older snapshot)"
    ),
}
"""Why a fenced write was refused (the guards' reason codes), in words. A refusal names
what happened, never a token: a token in an error would be a key to the thread."""


def stale_error(thread_id: str, reason: str) -> StaleWriteError:
    """The error for a write whose fencing token is not the thread's current one.

    ``reason`` is the guard's code (:data:`STALE_REASONS`); the message carries no token,
    neither the write's nor the current one.

    Example:
        ```python
        from langgraph_recall.checkpoint._guard import stale_error

        err = stale_error("t", "held")
        assert "another worker holds" in str(err) and "Nothing was written" in str(err)
        ```
    """
    what = STALE_REASONS.get(reason, "the thread's fencing token changed")
    return StaleWriteError(
        f"write to thread {thread_id!r} was refused: its fencing token is no longer the "
        f"thread's current one ({what}), so this worker lost its lease. Nothing was "
        "written; re-acquire the lease and reload the thread."
    )


def missing_parent_error(
    thread_id: str, checkpoint_ns: str, checkpoint_id: str, parent_id: str, hint: str
) -> CheckpointIntegrityError:
    """The error for a ``put`` whose parent checkpoint retention deleted.

    Example:
        ```python
        from langgraph_recall.checkpoint._guard import RETENTION_HINT, missing_parent_error

        err = missing_parent_error("t", "", "c2", "c1", RETENTION_HINT)
        assert "c1" in str(err) and "nothing was written" in str(err)
        ```
    """
    return CheckpointIntegrityError(
        f"cannot write checkpoint {checkpoint_id!r} of thread {thread_id!r} "
        f"(namespace {checkpoint_ns!r}): its parent checkpoint {parent_id!r} was deleted "
        "(this write continues a pruned history), so nothing was written. Reload the "
        "thread (get_tuple without checkpoint_id) and continue from its latest checkpoint. "
        f"Probably {hint}"
    )


def missing_blobs_error(
    thread_id: str,
    checkpoint_ns: str,
    checkpoint_id: str,
    channels: Iterable[str],
    hint: str,
) -> CheckpointIntegrityError:
    """The error for a stored checkpoint missing channel values it was written with (a
    read never returns it half-empty).

    Example:
        ```python
        from langgraph_recall.checkpoint._guard import REDIS_HINT, missing_blobs_error

        err = missing_blobs_error("t", "", "c1", ["messages"], REDIS_HINT)
        assert "messages" in str(err) and "delete_thread" in str(err)
        ```
    """
    names = ", ".join(repr(channel) for channel in sorted(channels))
    return CheckpointIntegrityError(
        f"checkpoint {checkpoint_id!r} of thread {thread_id!r} (namespace "
        f"{checkpoint_ns!r}) is missing the stored value of channel(s) {names}, so it "
        "is not returned half-empty. Read an earlier checkpoint by id, or remove the "
        f"thread with delete_thread(). Probably {hint}"
    )
