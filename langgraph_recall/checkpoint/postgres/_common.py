"""Pure helpers shared by the sync and async Postgres savers (no I/O here).

Database work is written once, as *programs* (:mod:`langgraph_recall._pg.program`):
generators that yield :class:`Stmt` objects and receive each statement's rows back. The
runners of :mod:`langgraph_recall._pg` execute them, so the sync and async savers differ
only by ``await``. Decisions (which migrations are pending, how a write is guarded) are
plain functions, unit-tested without a server; prune planning and retention programs live
in ``_retention.py``. Connections, pools, DSNs and the error map are the one Postgres layer's
(:mod:`langgraph_recall._pg`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from psycopg.types.json import Jsonb

from langgraph_recall._pg.program import Program, Rows, Stmt
from langgraph_recall.checkpoint import _config, _guard, _values
from langgraph_recall.checkpoint._config import ThreadTTLConfig
from langgraph_recall.checkpoint.postgres import _sql
from langgraph_recall.errors import ConfigurationError, MigrationError

__all__ = [
    "Program",
    "Rows",
    "Stmt",
    "check_verdict",
    "copy_thread_program",
    "delete_for_runs_program",
    "delete_threads_program",
    "pending_migrations",
    "put_program",
    "put_writes_program",
    "retention_seconds",
    "setup_program",
    "thread_ttl_seconds",
]

MIGRATION_LOCK_TIMEOUT = 120.0
"""Seconds ``setup()`` waits for another worker's ``setup()`` to finish."""

MIGRATION_LOCK_POLL = 0.05
"""Seconds between attempts to take the migration lock."""

SWEEP_BATCH = 500
"""Threads handled per sweep statement."""


# --------------------------------------------------------------------------- configuration


def retention_seconds(value: float | timedelta | None, what: str) -> float | None:
    """Normalise a TTL / interval given as seconds or ``timedelta``.

    Example:
        ```python
        from datetime import timedelta

        from langgraph_recall.checkpoint.postgres._common import retention_seconds

        assert retention_seconds(timedelta(minutes=1), "ttl") == 60.0
        ```
    """
    if value is None:
        return None
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if not seconds > 0:
        raise ConfigurationError(f"{what} must be a positive number of seconds, got {value!r}")
    return seconds


def thread_ttl_seconds(option: ThreadTTLConfig | None) -> float | None:
    """The Postgres savers' ``ttl=`` (a :class:`ThreadTTLConfig`, minutes, like the Redis
    savers) as the seconds a thread may stay idle before :meth:`sweep` deletes it.

    ``refresh_on_read=True`` is refused: on Postgres a thread's idle time counts from its
    last write (a read would have to write to refresh it).

    Raises:
        ConfigurationError: ``option`` is not a ``{"default_ttl": minutes}`` dict (e.g. a
            number of seconds or a ``timedelta``, what older versions took), or asks for
            ``refresh_on_read``.

    Example:
        ```python
        from langgraph_recall.checkpoint.postgres._common import thread_ttl_seconds

        assert thread_ttl_seconds({"default_ttl": 60}) == 3600.0
        assert thread_ttl_seconds(None) is None
        ```
    """
    if option is not None and not isinstance(option, Mapping):
        raise ConfigurationError(
            f"ttl must be a dict of minutes like {{'default_ttl': 60}}, got {option!r} "
            "(the Postgres savers no longer take seconds or a timedelta: pass "
            "{'default_ttl': minutes})"
        )
    ttl = _config.ThreadTTL.from_option(option)
    if ttl.refresh_on_read:
        raise ConfigurationError(
            "ttl['refresh_on_read'] is not supported by the Postgres savers: sweep() deletes "
            "threads idle since their last write; drop refresh_on_read, or keep a thread "
            "alive by writing to it (or holding its lease)"
        )
    return ttl.ttl_ms / 1000 if ttl.ttl_ms else None


def check_keep_last(keep_last: int | None) -> int | None:
    """Validate ``keep_last`` (checkpoints kept per thread and namespace)."""
    return None if keep_last is None else _config.checked_keep_last(keep_last)


@dataclass(frozen=True)
class ListArgs:
    """Validated ``list()`` arguments (see :func:`list_args`)."""

    config: RunnableConfig | None
    filter: dict[str, Any] | None
    before: RunnableConfig | None
    limit: int | None


def list_args(
    config: RunnableConfig | None,
    filter: Mapping[str, Any] | None,
    before: RunnableConfig | None,
    limit: int | None,
) -> ListArgs:
    """Validate and normalise ``list()`` arguments before any query runs.

    Ids are ``str()``-ed; NUL / unpaired surrogates in ids or filter text raise
    :class:`ConfigurationError`; a negative ``limit`` lists nothing (like the Redis saver).

    Example:
        ```python
        from langgraph_recall.checkpoint.postgres._common import list_args

        args = list_args({"configurable": {"thread_id": 5}}, None, None, -1)
        assert args.config["configurable"]["thread_id"] == "5" and args.limit == 0
        ```
    """
    before = _config.checked_before(before)
    return ListArgs(
        config=None if config is None else _config.normalized_config(config),
        filter=_config.checked_filter(filter),
        before=before,
        limit=_config.checked_limit(limit),
    )


# --------------------------------------------------------------------------- migrations


def pending_migrations(
    migrations: Sequence[str], current: int, *, in_transaction: bool
) -> list[tuple[int, str]]:
    """Migrations after version ``current``, rewritten to run inside a transaction if needed.

    ``CREATE INDEX CONCURRENTLY`` cannot run in a transaction block; there it becomes a
    plain ``CREATE INDEX`` (same index, it just locks the table while it builds).

    Example:
        ```python
        from langgraph_recall.checkpoint.postgres._common import pending_migrations

        steps = pending_migrations(["SELECT 1", "CREATE INDEX CONCURRENTLY i ON t(x)"], 0,
                                   in_transaction=True)
        assert steps == [(1, "CREATE INDEX i ON t(x)")]
        ```
    """
    steps = []
    for version in range(current + 1, len(migrations)):
        sql = migrations[version]
        if in_transaction:
            sql = sql.replace("INDEX CONCURRENTLY", "INDEX")
        steps.append((version, sql))
    return steps


def setup_program(*, in_transaction: bool) -> Program[None]:
    """Apply the official migrations, then ours (each list idempotent and versioned)."""
    for create, select, insert, migrations in (
        (
            _sql.OFFICIAL_MIGRATIONS[0],
            _sql.OFFICIAL_SELECT_VERSION,
            _sql.OFFICIAL_INSERT_VERSION,
            _sql.OFFICIAL_MIGRATIONS,
        ),
        (
            _sql.LGM_MIGRATIONS_TABLE,
            _sql.LGM_SELECT_VERSION,
            _sql.LGM_INSERT_VERSION,
            _sql.LGM_MIGRATIONS,
        ),
    ):
        yield Stmt(create)
        rows = yield Stmt(select, fetch=True)
        current = int(rows[0]["v"]) if rows else -1
        for version, sql in pending_migrations(migrations, current, in_transaction=in_transaction):
            yield Stmt(sql)
            yield Stmt(insert, (version,))


def migration_lock_timed_out(target: str) -> MigrationError:
    """Error raised when another ``setup()`` holds the migration lock for too long."""
    return MigrationError(
        f"setup() on {target} waited {MIGRATION_LOCK_TIMEOUT:.0f}s for another worker's "
        "setup() to finish; retry, or run setup() once before starting the workers"
    )


# --------------------------------------------------------------------------- puts


def fence_token(config: RunnableConfig) -> int | None:
    """The fencing token a write carries (``configurable[FENCE_CONFIG_KEY]``), if any.

    Example:
        ```python
        from langgraph_recall.checkpoint.postgres._common import fence_token
        from langgraph_recall.lease import FENCE_CONFIG_KEY

        assert fence_token({"configurable": {FENCE_CONFIG_KEY: 3}}) == 3
        assert fence_token({"configurable": {}}) is None
        ```
    """
    return _config.checked_fence_token(config)


@dataclass(frozen=True)
class GuardedWrite:
    """What a guarded write is, to run the write guard and word its refusal.

    Attributes:
        thread_id: The thread written.
        operation: The public method (``"put"``, ``"put_writes"``, ``"copy_thread"``).
        token: The fencing token the write carries (``None``: unfenced).
        checkpoint_ns: The namespace written.
        checkpoint_id: The checkpoint a ``put`` writes.
        parent_id: Its parent, if any (must exist).
        reused: ``(channel, version)`` of the stored values a ``put`` reuses (must exist).
    """

    thread_id: str
    operation: str
    token: int | None = None
    checkpoint_ns: str = ""
    checkpoint_id: str = ""
    parent_id: str | None = None
    reused: tuple[tuple[str, str], ...] = ()

    @property
    def params(self) -> tuple[Any, ...]:
        """The :func:`~._sql.guard_call` parameters of a ``put`` (with the parent)."""
        return (
            self.thread_id,
            self.checkpoint_ns,
            self.token,
            self.parent_id,
            *(channel for channel, _ in self.reused),
            *(version for _, version in self.reused),
        )

    @property
    def lease_params(self) -> tuple[Any, ...]:
        """The :func:`~._sql.guard_call` parameters of a write with no parent to check."""
        return (self.thread_id, self.checkpoint_ns, self.token)


def check_verdict(write: GuardedWrite, rows: Rows) -> list[str]:
    """Raise the write guard's refusal (the write wrote nothing); return the reused
    channels whose blob is missing (nothing was written: store them too and retry), or
    ``[]`` if the guard said ``ok``.

    Raises:
        ThreadBusyError: The thread has a live lease and the write carries no token.
        StaleWriteError: The write's token is not the thread's current one.
        CheckpointIntegrityError: The parent was deleted by retention (``prune``,
            ``keep_last``, ``delete_for_runs``).

    Example:
        ```python
        from langgraph_recall.checkpoint.postgres._common import GuardedWrite, check_verdict

        write = GuardedWrite("t", "put", token=3)
        assert check_verdict(write, [{"refusal": None}]) == []
        assert check_verdict(write, [{"refusal": ["blobs", "messages"]}]) == ["messages"]
        # check_verdict(write, [{"refusal": ["stale", "held"]}]) raises StaleWriteError
        ```
    """
    verdict = rows[0]["refusal"] if rows else None
    if verdict is None:
        return []
    code = verdict[0]
    if code == "busy":
        raise _guard.busy_error(write.thread_id, write.operation)
    if code == "stale":
        raise _guard.stale_error(write.thread_id, verdict[1] if len(verdict) > 1 else "")
    if code == "parent":
        raise _guard.missing_parent_error(
            write.thread_id,
            write.checkpoint_ns,
            write.checkpoint_id,
            write.parent_id or "",
            _guard.RETENTION_HINT,
        )
    return list(verdict[1:])


def is_delta_snapshot(value: Any) -> bool:
    """Whether a channel value is a ``DeltaChannel`` snapshot, which ``put`` marks ``true``
    inline (the official saver's layout, read by its ``prune``) and stores as a blob.

    LangGraph exports no public name for the snapshot type; it documents it (in
    ``langgraph.checkpoint.serde.types``) as a ``NamedTuple`` with the one field ``value``.
    We match that documented shape and module rather than import the private class. A
    user value of the same shape would only get the marker too: reads still decode its blob.

    Example:
        ```python
        from typing import NamedTuple

        from langgraph_recall.checkpoint.postgres._common import is_delta_snapshot

        class Boxed(NamedTuple):
            value: int

        assert not is_delta_snapshot(Boxed(1)) and not is_delta_snapshot((1,))
        ```
    """
    kind = type(value)
    return (
        isinstance(value, tuple)
        and kind.__module__ == _DELTA_SNAPSHOT_MODULE
        and getattr(kind, "_fields", None) == ("value",)
    )


_DELTA_SNAPSHOT_MODULE = "langgraph.checkpoint.serde.types"


def _primitive(value: Any) -> bool:
    """Whether a channel value is a primitive: inline in ``checkpoints.checkpoint`` when
    JSONB holds it exactly, else a blob that every ``put`` writes (never one it reuses)."""
    return value is None or isinstance(value, (str, int, float, bool))


def put_program(
    serde: SerializerProtocol,
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    new_versions: ChannelVersions,
) -> tuple[Program[list[str]], RunnableConfig]:
    """Serialise a checkpoint and return the program that stores it atomically.

    Primitive channel values stay inline in ``checkpoints.checkpoint`` (as the official
    saver stores them); others go to ``checkpoint_blobs`` for the channels in
    ``new_versions``. The program is the single statement :func:`~._sql.put_checkpoint`
    (the write guard -- lease rule, parent and reused blobs --, then touch the activity
    row, upsert blobs, upsert the row; run ``alone``, in autocommit), fenced or not. A
    put with more blobs than one statement holds runs the guard, the blob chunks and the
    row in one transaction.

    The program returns the reused channels (not in ``new_versions``) whose value has no
    stored blob -- never written, or deleted meanwhile --, having written nothing; ``[]``
    once stored. The saver then runs the put again with :func:`widened_versions`, so the
    checkpoint is stored whole.
    """
    config = _config.normalized_config(config)
    configurable = config["configurable"]
    thread_id = configurable["thread_id"]
    checkpoint_ns = configurable.get("checkpoint_ns", "")
    token = fence_token(config)
    checked = _config.checked_put(config, checkpoint, metadata, new_versions)
    new_versions = _guard.written_versions(checkpoint, new_versions)
    write, blob_params, row = _put_parts(
        serde, thread_id, checkpoint_ns, token, configurable, checkpoint, checked, new_versions
    )
    blobs = (len(blob_params) - 2) // 4
    limit = _sql.MAX_ROWS_PER_STATEMENT

    def program() -> Program[list[str]]:
        reused = len(write.reused)
        if blobs <= limit:
            sql = _sql.put_checkpoint(blobs, reused=reused)
            params = (*(blob_params if blobs else ()), *row)
            rows = yield Stmt(sql, (*write.params, thread_id, *params), fetch=True, alone=True)
            return check_verdict(write, rows)
        guard = _sql.write_guard(reused)
        missing = check_verdict(write, (yield Stmt(guard, write.params, fetch=True)))
        if missing:
            return missing
        for at in range(0, blobs, limit):
            chunk = blob_params[2 + 4 * at : 2 + 4 * min(blobs, at + limit)]
            yield Stmt(_sql.put_blobs(len(chunk) // 4), (thread_id, checkpoint_ns, *chunk))
        yield Stmt(_sql.put_checkpoint(0, guarded=False), (thread_id, *row))
        return []

    return program(), put_config(config, checkpoint)


def put_config(config: RunnableConfig, checkpoint: Checkpoint) -> RunnableConfig:
    """What ``put`` returns: the stored checkpoint's thread, namespace and id."""
    configurable = _config.normalized_config(config)["configurable"]
    return {
        "configurable": {
            "thread_id": configurable["thread_id"],
            "checkpoint_ns": configurable.get("checkpoint_ns", ""),
            "checkpoint_id": checkpoint["id"],
        }
    }


def widened_versions(
    checkpoint: Checkpoint, new_versions: ChannelVersions, missing: Sequence[str]
) -> ChannelVersions:
    """``new_versions`` plus the ``missing`` reused channels at their versions: the put
    that stores their values from the checkpoint (it reuses none of them).

    Example:
        ```python
        from langgraph.checkpoint.base import empty_checkpoint

        from langgraph_recall.checkpoint.postgres._common import widened_versions

        checkpoint = empty_checkpoint()
        checkpoint["channel_versions"] = {"a": "1", "b": "2"}
        assert widened_versions(checkpoint, {"a": "1"}, ["b"]) == {"a": "1", "b": "2"}
        ```
    """
    versions = checkpoint["channel_versions"]
    return {**new_versions, **{channel: versions[channel] for channel in missing}}


def _put_parts(
    serde: SerializerProtocol,
    thread_id: str,
    checkpoint_ns: str,
    token: int | None,
    configurable: Mapping[str, Any],
    checkpoint: Checkpoint,
    checked: _config.CheckedPut,
    new_versions: ChannelVersions,
) -> tuple[GuardedWrite, list[Any], tuple[Any, ...]]:
    """The guarded write, blob parameters (thread id, namespace, then four per blob) and
    ``checkpoints`` row of one ``put`` that writes the blobs of ``new_versions``."""
    size = checked.header_bytes
    copy = checkpoint.copy()
    inline: dict[str, Any] = {}
    blob_params: list[Any] = [thread_id, checkpoint_ns]
    for key, value in checkpoint["channel_values"].items():
        if type(value) is str:  # checked even if unchanged: it may be copied inline
            _values.check_text(value, f"channel {key!r}")
        if is_delta_snapshot(value):
            inline[key] = True
        elif _values.fits_jsonb(value):  # primitives JSONB holds exactly stay inline
            inline[key] = value
            continue
        version = new_versions.get(key)
        if version is None and _primitive(value):
            # A primitive JSONB cannot hold exactly is written as a blob at every put, changed
            # or not: a parent written before that rule kept it inline, with no blob to reuse.
            version = checkpoint["channel_versions"].get(key)
        if version is not None:
            type_, data = _values.dump_value(serde, value, f"channel {key!r}")
            size += len(data)
            blob_params.extend((key, _config.checked_version(version), type_, data))
    _values.check_call_size(size, "put")
    copy["channel_values"] = inline
    values, versions = checkpoint["channel_values"], checkpoint["channel_versions"]
    write = GuardedWrite(
        thread_id,
        "put",
        token,
        checkpoint_ns,
        checkpoint["id"],
        configurable.get("checkpoint_id") or None,
        tuple(
            (channel, str(versions[channel]))
            for channel in _guard.reused_channels(checkpoint, new_versions)
            if not _primitive(values[channel])
        ),
    )
    row = (
        thread_id,
        checkpoint_ns,
        checkpoint["id"],
        configurable.get("checkpoint_id"),
        Jsonb(copy),
        Jsonb(checked.metadata),
    )
    return write, blob_params, row


def put_writes_program(
    serde: SerializerProtocol,
    config: RunnableConfig,
    writes: Sequence[tuple[str, Any]],
    task_id: str,
    task_path: str,
) -> Program[None]:
    """Serialise pending writes and return the program that stores them atomically.

    Idempotent per ``(task_id, idx)``: regular writes insert-if-absent; when every write
    is a special channel (error, interrupt, ...) they are upserted (the last write of a
    repeated special channel wins). All rows go in one statement behind the write guard
    (lease rule); it runs ``alone`` in autocommit. More rows than one statement holds run
    the guard, then the chunks, in one transaction.
    """
    config = _config.normalized_config(config)
    configurable = config["configurable"]
    thread_id = configurable["thread_id"]
    checkpoint_id = configurable.get("checkpoint_id")
    if not checkpoint_id:
        raise ConfigurationError(
            "put_writes needs config['configurable']['checkpoint_id'] (the checkpoint "
            "the writes belong to, as returned by put)"
        )
    token = fence_token(config)
    pairs, task_id, task_path = _config.checked_writes(writes, task_id, task_path)
    upsert = all(channel in WRITES_IDX_MAP for channel, _ in pairs)
    checkpoint_ns = configurable.get("checkpoint_ns", "")
    by_idx: dict[int, tuple[Any, ...]] = {}
    size = 0
    for idx, (channel, value) in enumerate(pairs):
        key = WRITES_IDX_MAP.get(channel, idx)
        # every value is checked (like on Redis), even one a later write replaces
        type_, data = _values.dump_value(serde, value, f"write to channel {channel!r}")
        size += len(data)
        if upsert or key not in by_idx:
            by_idx[key] = (
                thread_id,
                checkpoint_ns,
                checkpoint_id,
                task_id,
                task_path,
                key,
                channel,
                type_,
                data,
            )
    _values.check_call_size(size, "put_writes")
    rows = list(by_idx.values())
    limit = _sql.MAX_ROWS_PER_STATEMENT
    write = GuardedWrite(thread_id, "put_writes", token, checkpoint_ns)

    def program() -> Program[None]:
        if not rows:
            return
        if len(rows) <= limit:
            sql = _sql.put_writes(len(rows), upsert=upsert)
            params = [*write.lease_params, *(p for row in rows for p in row)]
            check_verdict(write, (yield Stmt(sql, params, fetch=True, alone=True)))
            return
        guard = _sql.write_guard(0, parent=False)
        check_verdict(write, (yield Stmt(guard, write.lease_params, fetch=True)))
        for at in range(0, len(rows), limit):
            chunk = rows[at : at + limit]
            sql = _sql.put_writes(len(chunk), upsert=upsert, guarded=False)
            yield Stmt(sql, [p for row in chunk for p in row])

    return program()


# --------------------------------------------------------------------------- deletes / copies


def delete_threads_program(thread_ids: Sequence[str]) -> Program[None]:
    """Delete whole threads with their lease rows (one transaction).

    Erasure always wins: it takes the threads' exclusive locks (waiting for in-flight
    writes), never checks leases, and frees them, so a holder's later writes fail."""
    ids = _config.checked_ids(thread_ids)
    yield Stmt(_sql.LOCK_THREADS, (ids,))
    yield Stmt(_sql.ACTIVITY_FORGET, (ids,))
    yield Stmt(_sql.FORGET_LEASES, (ids,))
    for sql in _sql.DELETE_THREADS[1:]:
        yield Stmt(sql, (ids,))


def forget_threads_program(thread_ids: Sequence[str]) -> Program[None]:
    """Erasure: :func:`delete_threads_program`, then the checkpoint tables' planner
    statistics resampled in the same transaction, so ``pg_stats`` quotes nothing of them."""
    yield from delete_threads_program(thread_ids)
    yield Stmt(_sql.ANALYZE_CHECKPOINTS)


def copy_thread_program(source: str, target: str) -> Program[None]:
    """Copy every checkpoint, blob and write (all namespaces) of a thread.

    A write into ``target`` without a token: refused while ``target`` has a live lease.
    Both threads are locked shared, so neither is pruned or deleted halfway."""
    source, target = _config.checked_thread_id(source), _config.checked_thread_id(target)
    yield Stmt(_sql.LOCK_THREADS_SHARED, ([source, target],))
    write = GuardedWrite(target, "copy_thread")
    guard = _sql.write_guard(0, parent=False)
    check_verdict(write, (yield Stmt(guard, write.lease_params, fetch=True)))
    for sql in (_sql.COPY_CHECKPOINTS, _sql.COPY_BLOBS, _sql.COPY_WRITES):
        yield Stmt(sql, (target, source))
    rows = yield Stmt(_sql.THREAD_EXISTS, (target,), fetch=True)
    if rows:
        yield Stmt(_sql.TOUCH_ACTIVITY, (target,))


def _gc_blobs_program(thread_id: str, ns: str, freed: Iterable[tuple[str, str]]) -> Program[int]:
    """Delete blobs no remaining checkpoint of ``(thread_id, ns)`` references."""
    freed_set = set(freed)
    if not freed_set:
        return 0
    rows = yield Stmt(_sql.REFERENCED_VERSIONS, (thread_id, ns), fetch=True)
    referenced = {(r["channel"], r["version"]) for r in rows}
    by_channel: dict[str, list[str]] = {}
    for channel, version in sorted(freed_set - referenced):
        by_channel.setdefault(channel, []).append(version)
    for channel, versions in by_channel.items():
        yield Stmt(_sql.DELETE_BLOBS_OF_CHANNEL, (thread_id, ns, channel, versions))
    return sum(len(v) for v in by_channel.values())


def delete_for_runs_program(run_ids: Sequence[str]) -> Program[int]:
    """Delete checkpoints whose metadata ``run_id`` is listed, with their writes and
    the blobs nothing else references. Returns the number of checkpoints deleted.

    Erasure, like :func:`delete_threads_program`: the affected threads are locked
    exclusively (in-flight writes finish first), leases are not checked, and their
    fencing tokens advance."""
    ids = _config.checked_ids(run_ids, "run_ids")
    found = yield Stmt(_sql.RUN_THREADS, (ids,), fetch=True)
    threads = sorted({row["thread_id"] for row in found})
    if not threads:
        return 0
    yield Stmt(_sql.LOCK_THREADS, (threads,))
    rows = yield Stmt(_sql.RUN_CHECKPOINTS, (ids, threads), fetch=True)
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["thread_id"], row["checkpoint_ns"]), []).append(row)
    for (thread_id, ns), deleted in groups.items():
        ids = [r["checkpoint_id"] for r in deleted]
        yield Stmt(_sql.DELETE_WRITES_BY_IDS, (thread_id, ns, ids))
        freed = {(ch, str(ver)) for r in deleted for ch, ver in (r["versions"] or {}).items()}
        yield from _gc_blobs_program(thread_id, ns, freed)
    newest: dict[str, str] = {}
    for row in rows:  # a late put onto a deleted checkpoint is refused from now on
        newest[row["thread_id"]] = max(row["checkpoint_id"], newest.get(row["thread_id"], ""))
    for thread_id, checkpoint_id in sorted(newest.items()):
        yield Stmt(_sql.MARK_PRUNED, (thread_id, checkpoint_id))
    if rows:
        yield Stmt(_sql.REVOKE_LEASES, (sorted({row["thread_id"] for row in rows}),))
    return len(rows)


# --------------------------------------------------------------------------- leases


def check_lease_args(thread_id: str, owner: str, ttl: float) -> None:
    """Validate lease arguments (non-empty ids, positive finite TTL in seconds)."""
    if not isinstance(thread_id, str) or not thread_id:
        raise ConfigurationError(f"thread_id must be a non-empty str, got {thread_id!r}")
    if not isinstance(owner, str) or not owner:
        raise ConfigurationError(f"lease owner must be a non-empty str, got {owner!r}")
    _config.checked_text(thread_id, "thread_id")
    _config.checked_text(owner, "lease owner")
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not 0 < ttl < 1e9:
        raise ConfigurationError(f"lease ttl must be a positive number of seconds, got {ttl!r}")
