"""Every SQL statement the Postgres checkpointer and lease backend run, as named constants.

The checkpoint tables (``checkpoints``, ``checkpoint_blobs``, ``checkpoint_writes``,
``checkpoint_migrations``) belong to ``langgraph-checkpoint-postgres``; their migrations are
its ``MIGRATIONS`` list. Our own tables (``lgm_*``) have their own append-only migration list,
:data:`LGM_MIGRATIONS`, versioned in ``lgm_checkpoint_migrations`` and applied after the
official ones. All statements are parameterised (``%s`` placeholders).

**The write guard** (see :mod:`langgraph_recall.checkpoint._guard`) is the function
``lgm_write_guard``, called at the head of every ``put`` / ``put_writes`` statement. Each
thread has an advisory lock (class :data:`THREAD_LOCK_CLASS`, key ``hashtext(thread_id)``):
writers of the thread take it *shared* (they run side by side); acquiring its lease,
deleting, pruning and sweeping it take it *exclusive*. The guard's checks run after the
lock, in a VOLATILE function, so they see everything committed before the lock was granted
(a statement's own snapshot predates its lock waits). Lock order is always advisory lock,
then activity row, then other rows; multi-thread lockers take the keys in sorted order.
"""

from __future__ import annotations

import functools

from langgraph.checkpoint.postgres.base import MIGRATIONS as OFFICIAL_MIGRATIONS
from langgraph.checkpoint.postgres.base import SELECT_SQL as OFFICIAL_SELECT_SQL
from langgraph.checkpoint.serde.types import TASKS

from langgraph_recall.checkpoint.postgres import _lease_sql

__all__ = [
    "ACQUIRE_LEASE",
    "ACTIVITY_FORGET",
    "ANALYZE_CHECKPOINTS",
    "CLAIM_EXPIRED_THREADS",
    "COPY_BLOBS",
    "COPY_CHECKPOINTS",
    "COPY_WRITES",
    "COUNT_CHECKPOINTS",
    "DELETE_BLOBS_OF_CHANNEL",
    "DELETE_CHECKPOINTS_BY_IDS",
    "DELETE_THREADS",
    "DELETE_WRITES_BY_IDS",
    "FORGET_LEASES",
    "GET_TUPLE_BY_ID",
    "GET_TUPLE_LATEST",
    "LATEST_CHECKPOINT_ID",
    "LGM_INSERT_VERSION",
    "LGM_MIGRATIONS",
    "LGM_MIGRATIONS_TABLE",
    "LGM_SELECT_VERSION",
    "LIST_CHECKPOINTS",
    "LOCK_THREADS",
    "LOCK_THREADS_SHARED",
    "MARK_PRUNED",
    "MAX_ROWS_PER_STATEMENT",
    "MIGRATION_LOCK_KEY",
    "MIGRATION_UNLOCK",
    "OFFICIAL_INSERT_VERSION",
    "OFFICIAL_MIGRATIONS",
    "OFFICIAL_SELECT_VERSION",
    "PENDING_SENDS",
    "PRUNE_BLOB_KEYS",
    "PRUNE_CHECKPOINT_ROWS",
    "PRUNE_SENDS_PARENTS",
    "REFERENCED_VERSIONS",
    "RELEASE_LEASE",
    "RENEW_LEASE",
    "RETENTION_GUARD",
    "REVOKE_LEASES",
    "RUN_CHECKPOINTS",
    "RUN_THREADS",
    "SET_PARENT_NULL",
    "SWEEPABLE_THREADS",
    "THREAD_EXISTS",
    "THREAD_LOCK_CLASS",
    "TOUCH_ACTIVITY",
    "TRY_MIGRATION_LOCK",
    "TRY_MIGRATION_XACT_LOCK",
    "delta_chain_page",
    "delta_values",
    "guard_call",
    "put_blobs",
    "put_checkpoint",
    "put_writes",
    "write_guard",
]

# --------------------------------------------------------------------------- migrations

MIGRATION_LOCK_KEY = 7_310_482_991_113
"""Advisory lock key that serialises concurrent ``setup()`` calls."""

TRY_MIGRATION_LOCK = "SELECT pg_try_advisory_lock(%s) AS locked"
"""Polled (never a blocking wait: a session blocked in a statement would deadlock with
another worker's ``CREATE INDEX CONCURRENTLY``, which waits for every open snapshot)."""
TRY_MIGRATION_XACT_LOCK = "SELECT pg_try_advisory_xact_lock(%s) AS locked"
MIGRATION_UNLOCK = "SELECT pg_advisory_unlock(%s)"

OFFICIAL_SELECT_VERSION = "SELECT v FROM checkpoint_migrations ORDER BY v DESC LIMIT 1"
OFFICIAL_INSERT_VERSION = (
    "INSERT INTO checkpoint_migrations (v) VALUES (%s) ON CONFLICT (v) DO NOTHING"
)

LGM_MIGRATIONS_TABLE = """CREATE TABLE IF NOT EXISTS lgm_checkpoint_migrations (
    v INTEGER PRIMARY KEY
)"""
LGM_SELECT_VERSION = "SELECT v FROM lgm_checkpoint_migrations ORDER BY v DESC LIMIT 1"
LGM_INSERT_VERSION = (
    "INSERT INTO lgm_checkpoint_migrations (v) VALUES (%s) ON CONFLICT (v) DO NOTHING"
)

THREAD_LOCK_CLASS = 1_818_717_489
"""First key of every per-thread advisory lock (the second is ``hashtext(thread_id)``)."""

# The first write guard, as migration 7 created it (superseded by the epoch-aware one of
# _lease_sql, appended below; kept verbatim: migrations are append-only).
_WRITE_GUARD_FUNCTION = f"""
CREATE OR REPLACE FUNCTION lgm_write_guard(
    p_thread text, p_ns text, p_token bigint, p_parent text,
    p_channels text[], p_versions text[]
) RETURNS text[] LANGUAGE plpgsql VOLATILE AS $guard$
DECLARE
    v_token bigint;
    v_live boolean;
    v_parent boolean;
    v_missing text[];
BEGIN
    PERFORM pg_advisory_xact_lock_shared({THREAD_LOCK_CLASS}, hashtext(p_thread));
    -- one query (a fresh snapshot, taken after the lock): the lease and the parent
    SELECT l.token, l.expires_at > clock_timestamp(), p_parent IS NULL OR EXISTS (
        SELECT 1 FROM checkpoints c
        WHERE c.thread_id = p_thread AND c.checkpoint_ns = p_ns AND c.checkpoint_id = p_parent
    )
    INTO v_token, v_live, v_parent
    FROM (SELECT 1) AS one LEFT JOIN lgm_thread_leases l ON l.thread_id = p_thread;
    IF p_token IS NULL THEN
        IF v_live THEN RETURN ARRAY['busy']; END IF;
    ELSIF v_token IS DISTINCT FROM p_token THEN
        RETURN ARRAY['stale', COALESCE(v_token::text, 'none')];
    END IF;
    IF NOT v_parent THEN RETURN ARRAY['parent']; END IF;
    IF cardinality(p_channels) = 0 THEN RETURN ARRAY['ok']; END IF;
    SELECT array_agg(r.channel ORDER BY r.channel) INTO v_missing
    FROM unnest(p_channels, p_versions) AS r (channel, version)
    WHERE NOT EXISTS (
        SELECT 1 FROM checkpoint_blobs b
        WHERE b.thread_id = p_thread AND b.checkpoint_ns = p_ns
          AND b.channel = r.channel AND b.version = r.version
    );
    IF v_missing IS NOT NULL THEN RETURN ARRAY['blobs'] || v_missing; END IF;
    RETURN ARRAY['ok'];
END
$guard$"""
"""The write guard: shared thread lock, then (seeing everything committed before it) the
lease rule, the parent and the reused blobs. Returns ``{ok}``, ``{busy}``,
``{stale, <current token or none>}``, ``{parent}`` or ``{blobs, <channels>...}``."""

_RETENTION_GUARD_FUNCTION = f"""
CREATE OR REPLACE FUNCTION lgm_retention_guard(p_thread text, p_wait boolean)
RETURNS text LANGUAGE plpgsql VOLATILE AS $guard$
BEGIN
    IF p_wait THEN
        PERFORM pg_advisory_xact_lock({THREAD_LOCK_CLASS}, hashtext(p_thread));
    ELSIF NOT pg_try_advisory_xact_lock({THREAD_LOCK_CLASS}, hashtext(p_thread)) THEN
        RETURN 'locked';
    END IF;
    IF EXISTS (
        SELECT 1 FROM lgm_thread_leases
        WHERE thread_id = p_thread AND expires_at > clock_timestamp()
    ) THEN
        RETURN 'busy';
    END IF;
    RETURN 'ok';
END
$guard$"""
"""Exclusive thread lock for retention (``prune`` waits, sweeps skip a thread in use),
then the lease rule: ``ok``, ``busy`` (a live lease: never pruned or swept) or ``locked``."""

_PUT_GUARD_FUNCTION = """
CREATE OR REPLACE FUNCTION lgm_put_guard(
    p_thread text, p_ns text, p_token bigint, p_parent text,
    p_channels text[], p_versions text[]
) RETURNS text[] LANGUAGE plpgsql VOLATILE AS $guard$
DECLARE
    v_verdict text[];
BEGIN
    v_verdict := lgm_write_guard(p_thread, p_ns, p_token, NULL, p_channels, p_versions);
    IF v_verdict[1] <> 'ok' OR p_parent IS NULL THEN RETURN v_verdict; END IF;
    -- after the guard's shared thread lock: a fresh snapshot sees every prune before it
    IF NOT EXISTS (
        SELECT 1 FROM checkpoints c
        WHERE c.thread_id = p_thread AND c.checkpoint_ns = p_ns AND c.checkpoint_id = p_parent
    ) AND EXISTS (
        SELECT 1 FROM lgm_thread_activity a
        WHERE a.thread_id = p_thread AND p_parent COLLATE "C" <= a.pruned_through
    ) THEN
        RETURN ARRAY['parent'];
    END IF;
    RETURN v_verdict;
END
$guard$"""
"""The guard of a ``put``: :data:`_WRITE_GUARD_FUNCTION` (lease rule, reused blobs), then
the parent rule. A parent that is not stored is refused only if retention deleted it:
its id sorts at or below the newest checkpoint id ``prune`` / ``keep_last`` /
``delete_for_runs`` ever deleted from the thread (``pruned_through``). A parent id that
was never written is accepted, as every official saver does (``graph.invoke`` with an
unknown ``checkpoint_id`` runs from scratch)."""

LGM_MIGRATIONS: list[str] = [
    LGM_MIGRATIONS_TABLE,
    """CREATE TABLE IF NOT EXISTS lgm_thread_leases (
    thread_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL DEFAULT '',
    token BIGINT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS lgm_thread_activity (
    thread_id TEXT PRIMARY KEY,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    swept_at TIMESTAMPTZ
)""",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS lgm_thread_activity_updated_at_idx "
    "ON lgm_thread_activity (updated_at)",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS lgm_checkpoints_run_id_idx "
    "ON checkpoints ((metadata ->> 'run_id'))",
    # threads written before this package managed the database (e.g. by the official saver)
    # become subject to TTL / keep-last retention, counted from the upgrade
    """INSERT INTO lgm_thread_activity (thread_id, updated_at)
SELECT DISTINCT thread_id, now() FROM checkpoints
ON CONFLICT (thread_id) DO NOTHING""",
    _WRITE_GUARD_FUNCTION,
    _RETENTION_GUARD_FUNCTION,
    # fencing tokens from one sequence: a token is never handed out twice, for any thread,
    # so deleting a thread can delete its lease row too (no tombstone naming the thread)
    "CREATE SEQUENCE IF NOT EXISTS lgm_lease_tokens AS bigint",
    "SELECT setval('lgm_lease_tokens', COALESCE((SELECT max(token) FROM lgm_thread_leases), 0)"
    " + 1, false)",
    # the tombstones earlier versions kept for deleted threads (and released leases)
    "DELETE FROM lgm_thread_leases WHERE expires_at < clock_timestamp()",
    # the parent rule: refuse only a parent retention deleted (never one never written)
    'ALTER TABLE lgm_thread_activity ADD COLUMN IF NOT EXISTS pruned_through TEXT COLLATE "C"',
    _PUT_GUARD_FUNCTION,
    # epochs and unguessable, clock-floored tokens (the sequence above is no longer used)
    *_lease_sql.lease_migrations(THREAD_LOCK_CLASS),
]
"""Our own migrations; the list position is the version. Append only."""

# --------------------------------------------------------------------------- reads

GET_TUPLE_LATEST = (
    OFFICIAL_SELECT_SQL
    + "WHERE thread_id = %s AND checkpoint_ns = %s ORDER BY checkpoint_id DESC LIMIT 1"
)
"""The official saver's read of a thread's latest checkpoint, with blobs and pending writes."""

GET_TUPLE_BY_ID = (
    OFFICIAL_SELECT_SQL + "WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s"
)
"""The official saver's read of one named checkpoint, with blobs and pending writes."""

LIST_CHECKPOINTS = OFFICIAL_SELECT_SQL
"""``list()``: the checkpoint rows (with blobs and pending writes); add ``WHERE``/``ORDER``."""

PENDING_SENDS = f"""SELECT checkpoint_id,
    array_agg(array[type::bytea, blob] ORDER BY task_path, task_id, idx) AS sends
FROM checkpoint_writes
WHERE thread_id = %s AND checkpoint_id = ANY(%s) AND channel = '{TASKS}'
GROUP BY checkpoint_id"""
"""The pending sends a pre-v4 checkpoint reads from its parents' ``TASKS`` writes."""

LATEST_CHECKPOINT_ID = """SELECT checkpoint_id FROM checkpoints
WHERE thread_id = %s AND checkpoint_ns = %s ORDER BY checkpoint_id DESC LIMIT 1"""
"""The id of a namespace's newest checkpoint."""


def delta_chain_page(channels: int, *, first: bool) -> str:
    """A page of a namespace's checkpoints (newest first, from a cursor id down) with, per
    requested channel ``i``, its version ``v{i}``, whether a non-empty blob holds it
    (``b{i}``) and its inline value ``j{i}``: what ``get_delta_channel_history`` walks.

    Parameters: per channel its name four times, then thread, namespace, cursor, page size.
    ``first`` includes the cursor row (the target) itself.
    """
    columns = "".join(
        f""", checkpoint -> 'channel_versions' ->> %s AS v{i},
    EXISTS (SELECT 1 FROM checkpoint_blobs b
        WHERE b.thread_id = checkpoints.thread_id AND b.checkpoint_ns = checkpoints.checkpoint_ns
        AND b.channel = %s AND b.version = checkpoint -> 'channel_versions' ->> %s
        AND b.type <> 'empty') AS b{i},
    checkpoint -> 'channel_values' -> %s AS j{i}"""
        for i in range(channels)
    )
    return f"""SELECT checkpoint_id, parent_checkpoint_id{columns}
FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s
AND checkpoint_id {"<=" if first else "<"} %s ORDER BY checkpoint_id DESC LIMIT %s"""


def delta_values(writes: int, seeds: int) -> str:
    """The writes of ``writes`` channels on their chains and the ``seeds`` seed blobs, as one
    ``UNION ALL`` (rows: ``kind`` ``'w'``/``'b'``, channel, checkpoint_id, type, blob,
    task_id, task_path, idx, version).

    Parameters: per write channel thread, namespace, channel, chain ids; then per seed
    thread, namespace, channel, version.
    """
    branch_w = """SELECT 'w'::text AS kind, channel, checkpoint_id, type, blob, task_id,
    task_path, idx, NULL::text AS version FROM checkpoint_writes
WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND checkpoint_id = ANY(%s)"""
    branch_b = """SELECT 'b'::text, channel, NULL::text, type, blob, NULL::text, NULL::text,
    NULL::int, version FROM checkpoint_blobs
WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND version = %s"""
    return "\nUNION ALL\n".join([branch_w] * writes + [branch_b] * seeds)


# --------------------------------------------------------------------------- writes

TOUCH_ACTIVITY = """
INSERT INTO lgm_thread_activity AS a (thread_id, updated_at) VALUES (%s, now())
ON CONFLICT (thread_id) DO UPDATE SET updated_at = EXCLUDED.updated_at
WHERE a.updated_at < EXCLUDED.updated_at - interval '1 second'
"""
"""Mark a thread written. The conflicting row is locked either way (a TTL sweep cannot
interleave), but it is rewritten at most once a second: a hot thread's puts then cost no
extra row version, and TTL granularity is 1 s. (``swept_at`` is no longer used.)"""


@functools.cache
def guard_call(reused: int, *, parent: bool = True) -> str:
    """The write guard's call, with scalar parameters only (arrays are costly to adapt on
    every write): thread id, namespace, token, the parent id (if ``parent``: the call is
    ``lgm_put_guard``, which adds the parent rule; else ``lgm_write_guard`` with ``NULL``),
    then ``reused`` channel names and ``reused`` versions.

    Example:
        ```python
        from langgraph_recall.checkpoint.postgres._sql import guard_call

        assert guard_call(0, parent=False).count("%s") == 3
        assert guard_call(2).count("%s") == 4 + 2 * 2
        ```
    """
    parent_sql = "%s::text" if parent else "NULL::text"
    if reused:
        names = "ARRAY[" + ", ".join(["%s::text"] * reused) + "]"
        arrays = f"{names}, {names}"
    else:
        arrays = "'{}'::text[], '{}'::text[]"
    function = "lgm_put_guard" if parent else "lgm_write_guard"
    return f"{function}(%s::text, %s::text, %s::bigint, {parent_sql}, {arrays})"


_REFUSAL = "CASE WHEN verdict[1] = 'ok' THEN NULL ELSE verdict END AS refusal"
"""``NULL`` when the guard says ``ok`` (nothing to decode on the hot path), else its verdict."""


@functools.cache
def write_guard(reused: int, *, parent: bool = True) -> str:
    """The write guard on its own (parameters as :func:`guard_call`), for a write too large
    for one statement or a copy. Returns one row: ``refusal``.

    Example:
        ```python
        from langgraph_recall.checkpoint.postgres._sql import write_guard

        assert write_guard(0).startswith("SELECT CASE")
        ```
    """
    return f"SELECT {_REFUSAL} FROM (SELECT {guard_call(reused, parent=parent)} AS verdict) g"


def _guard_cte(reused: int, *, parent: bool = True) -> str:
    return f"guard AS MATERIALIZED (SELECT {guard_call(reused, parent=parent)} AS verdict)"


_GUARD_OK = "(SELECT verdict[1] FROM guard) = 'ok'"
_GUARDED_RESULT = f"\nSELECT {_REFUSAL} FROM guard"

_PUT_TOUCH = """touched AS (
    INSERT INTO lgm_thread_activity AS a (thread_id, updated_at)
    SELECT %s::text, now() WHERE {after}
    ON CONFLICT (thread_id) DO UPDATE SET updated_at = EXCLUDED.updated_at
    WHERE a.updated_at < EXCLUDED.updated_at - interval '1 second'
    RETURNING 1
)"""

_PUT_BLOBS = """blobs AS (
    INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT %s::text, %s::text, b.channel, b.version, b.type, b.blob
    FROM (VALUES {rows}) AS b (channel, version, type, blob)
    WHERE {after}
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
    RETURNING 1
)"""

_PUT_ROW = """saved AS (
    INSERT INTO checkpoints
        (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
    SELECT %s::text, %s::text, %s::text, %s::text, %s::jsonb, %s::jsonb
    WHERE {after}
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
    DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata
    RETURNING 1
)"""

_BLOB_ROW = "(%s::text, %s::text, %s::text, %s::bytea)"


@functools.cache
def put_checkpoint(blobs: int, *, reused: int = 0, guarded: bool = True) -> str:
    """A whole ``put`` as ONE statement: the write guard, then touch the thread's activity
    row (as :data:`TOUCH_ACTIVITY` does), upsert ``blobs`` blob rows, then the checkpoint
    row -- each write only if the guard said ``ok``. Returns one row: ``refusal``
    (``NULL``: written).

    Parameters, in order: if ``guarded``, the :func:`guard_call` ones (thread id,
    namespace, token, parent id, ``reused`` channels, their versions); the thread id (touch);
    if ``blobs``: thread id, namespace, then channel, version, type, blob per blob; then
    the ``checkpoints`` row (thread id, namespace, checkpoint id, parent id, checkpoint,
    metadata). Atomic on its own, so it runs in autocommit in one round trip with no
    ``BEGIN``/``COMMIT``, fenced or not.

    The sub-statements of a ``WITH`` run in no defined order unless one reads another's
    output: each one-time filter on the previous step (``verdict[1] = 'ok'``, or the
    always-true ``(SELECT count(*) FROM prev) >= 0``) makes a step run after it, so the
    thread lock is taken and the guard decided before the activity row is locked and
    anything is written. ``guarded=False`` is for a large put whose transaction ran
    :func:`write_guard` (and wrote its blobs) first. One SQL text per blob and reused
    count (few distinct ones: each is prepared once per connection); scalar parameters
    are much cheaper to adapt than arrays.

    Example:
        ```python
        from langgraph_recall.checkpoint.postgres._sql import put_checkpoint

        sql = put_checkpoint(1)
        assert sql.count("%s") == 4 + 1 + 2 + 4 + 6
        ```
    """
    ctes = [_guard_cte(reused)] if guarded else []
    ok = _GUARD_OK if guarded else "true"
    ctes.append(_PUT_TOUCH.format(after=ok))
    after = f"{ok} AND (SELECT count(*) FROM touched) >= 0"
    if blobs:
        rows = ", ".join([_BLOB_ROW] * blobs)
        ctes.append(_PUT_BLOBS.format(rows=rows, after=after))
        after = f"{ok} AND (SELECT count(*) FROM blobs) >= 0"
    ctes.append(_PUT_ROW.format(after=after))
    result = _GUARDED_RESULT if guarded else "\nSELECT NULL AS refusal FROM saved"
    return "WITH " + ",\n".join(ctes) + result


@functools.cache
def put_blobs(blobs: int) -> str:
    """Insert-if-absent ``blobs`` blob rows (thread id, namespace, then channel, version,
    type, blob per blob): the blobs of a put too large for one :func:`put_checkpoint`.

    Example:
        ```python
        from langgraph_recall.checkpoint.postgres._sql import put_blobs

        assert put_blobs(3).count("%s") == 2 + 3 * 4
        ```
    """
    rows = ", ".join([_BLOB_ROW] * blobs)
    return "WITH " + _PUT_BLOBS.format(rows=rows, after="true") + "\nSELECT count(*) FROM blobs"


MAX_ROWS_PER_STATEMENT = 1000
"""Blob or write rows sent in one statement (Postgres allows 65535 parameters)."""

_WRITES_HEAD = """written AS (
    INSERT INTO checkpoint_writes
        (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
    SELECT * FROM (VALUES {rows}) AS w
    WHERE {after}
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
    {action}
    RETURNING 1
)"""
_WRITE_ROW = (
    "(%s::text, %s::text, %s::text, %s::text, %s::text, %s::int, %s::text, %s::text, %s::bytea)"
)


@functools.cache
def put_writes(rows: int, *, upsert: bool, guarded: bool = True) -> str:
    """All of a task's ``rows`` writes in ONE statement, behind the write guard: its
    thread id, namespace and token (if ``guarded``), then 9 per row in
    ``checkpoint_writes`` column order. Insert-if-absent per ``idx``, or with ``upsert``
    overwrite (special channels: error, interrupt...; the rows must then have distinct
    ``idx``: one statement cannot update a row twice). Returns one row: ``refusal``.

    Example:
        ```python
        from langgraph_recall.checkpoint.postgres._sql import put_writes

        assert put_writes(2, upsert=False).count("%s") == 3 + 18
        ```
    """
    action = (
        "DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob"
        if upsert
        else "DO NOTHING"
    )
    written = _WRITES_HEAD.format(
        rows=", ".join([_WRITE_ROW] * rows),
        after=_GUARD_OK if guarded else "true",
        action=action,
    )
    if guarded:
        return "WITH " + _guard_cte(0, parent=False) + ",\n" + written + _GUARDED_RESULT
    return "WITH " + written + "\nSELECT NULL AS refusal"


# --------------------------------------------------------------------------- thread locks

_LOCK_KEYS = """
SELECT count({function}({THREAD_LOCK_CLASS}, k)) AS locked
FROM (SELECT DISTINCT hashtext(t) AS k FROM unnest(%s::text[]) AS t ORDER BY 1) AS keys
"""

LOCK_THREADS = _LOCK_KEYS.format(
    function="pg_advisory_xact_lock", THREAD_LOCK_CLASS=THREAD_LOCK_CLASS
)
"""Take the exclusive lock of each thread (one ``text[]``; in key order: no deadlocks).
Erasure takes it without checking leases: it waits for in-flight writes, then wins."""

LOCK_THREADS_SHARED = _LOCK_KEYS.format(
    function="pg_advisory_xact_lock_shared", THREAD_LOCK_CLASS=THREAD_LOCK_CLASS
)
"""Take the shared lock of each thread, in key order (``copy_thread``: source and target)."""

RETENTION_GUARD = "SELECT lgm_retention_guard(%s, %s) AS verdict"
"""Exclusive lock of one thread, then the lease rule (``ok`` / ``busy`` / ``locked``)."""

# --------------------------------------------------------------------------- deletes

DELETE_THREADS: tuple[str, ...] = (
    "DELETE FROM lgm_thread_activity WHERE thread_id = ANY(%s)",
    "DELETE FROM checkpoints WHERE thread_id = ANY(%s)",
    "DELETE FROM checkpoint_blobs WHERE thread_id = ANY(%s)",
    "DELETE FROM checkpoint_writes WHERE thread_id = ANY(%s)",
)
"""Everything of the given threads (one ``text[]`` parameter each)."""

FORGET_LEASES = _lease_sql.FORGET_LEASES
REVOKE_LEASES = _lease_sql.REVOKE_LEASES

ACTIVITY_FORGET = "DELETE FROM lgm_thread_activity WHERE thread_id = ANY(%s)"

ANALYZE_CHECKPOINTS = (
    "ANALYZE checkpoints, checkpoint_blobs, checkpoint_writes, lgm_thread_activity, "
    "lgm_thread_leases"
)
"""Resample the planner statistics of every checkpoint table: ``pg_stats`` quotes sampled
values (thread ids, metadata, blobs) until the next ``ANALYZE``."""

RUN_THREADS = "SELECT DISTINCT thread_id FROM checkpoints WHERE metadata ->> 'run_id' = ANY(%s)"
"""The threads holding checkpoints of the given runs (to lock before deleting)."""

RUN_CHECKPOINTS = """
DELETE FROM checkpoints
WHERE metadata ->> 'run_id' = ANY(%s) AND thread_id = ANY(%s)
RETURNING thread_id, checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' AS versions
"""
"""Delete the runs' checkpoints in the locked threads (run ids, thread ids)."""

MARK_PRUNED = """
INSERT INTO lgm_thread_activity AS a (thread_id, pruned_through) VALUES (%s, %s)
ON CONFLICT (thread_id) DO UPDATE
SET pruned_through = GREATEST(a.pruned_through, EXCLUDED.pruned_through)
"""
"""Record the newest checkpoint id retention deleted from a thread (thread id, that id):
a later ``put`` onto a deleted parent is refused (:data:`_PUT_GUARD_FUNCTION`)."""

DELETE_WRITES_BY_IDS = """
DELETE FROM checkpoint_writes
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)
"""

DELETE_CHECKPOINTS_BY_IDS = """
DELETE FROM checkpoints
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)
"""

SET_PARENT_NULL = """
UPDATE checkpoints SET parent_checkpoint_id = NULL
WHERE thread_id = %s AND checkpoint_ns = %s AND parent_checkpoint_id = ANY(%s)
"""

REFERENCED_VERSIONS = """
SELECT DISTINCT v.key AS channel, v.value AS version
FROM checkpoints c
CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v
WHERE c.thread_id = %s AND c.checkpoint_ns = %s
"""

DELETE_BLOBS_OF_CHANNEL = """
DELETE FROM checkpoint_blobs
WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND version = ANY(%s)
"""

# --------------------------------------------------------------------------- prune

PRUNE_CHECKPOINT_ROWS = """
SELECT
    checkpoint_ns,
    checkpoint_id,
    parent_checkpoint_id,
    COALESCE((checkpoint ->> 'v')::int, 1) AS v,
    checkpoint -> 'channel_versions' AS versions,
    ARRAY(
        SELECT key FROM jsonb_each(checkpoint -> 'channel_values')
        WHERE value <> 'null'::jsonb
    ) AS inline_channels,
    ARRAY(
        SELECT key FROM jsonb_each(checkpoint -> 'channel_values')
        WHERE value = 'true'::jsonb
    ) AS true_channels,
    COALESCE(
        ARRAY(SELECT jsonb_object_keys(metadata -> 'counters_since_delta_snapshot')),
        '{}'::text[]
    ) AS delta_counters,
    metadata -> 'parents' ->> '' AS root
FROM checkpoints
WHERE thread_id = %s
"""
"""Shape of a thread's checkpoint graph: enough to decide what prune keeps."""

PRUNE_BLOB_KEYS = """
SELECT checkpoint_ns, channel, version FROM checkpoint_blobs WHERE thread_id = %s
"""

PRUNE_SENDS_PARENTS = f"""
SELECT DISTINCT checkpoint_ns, checkpoint_id FROM checkpoint_writes
WHERE thread_id = %s AND channel = '{TASKS}'
"""
"""Checkpoints holding pending sends that a pre-v4 child migrates at read time."""

COUNT_CHECKPOINTS = (
    "SELECT count(*) AS n FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s"
)
"""How many checkpoints a thread's namespace holds (``keep_last`` trims only above N)."""

# --------------------------------------------------------------------------- copy

THREAD_EXISTS = "SELECT 1 AS found FROM checkpoints WHERE thread_id = %s LIMIT 1"

COPY_CHECKPOINTS = """
INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
SELECT %s, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
FROM checkpoints WHERE thread_id = %s
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO NOTHING
"""

COPY_BLOBS = """
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
SELECT %s, checkpoint_ns, channel, version, type, blob
FROM checkpoint_blobs WHERE thread_id = %s
ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
"""

COPY_WRITES = """
INSERT INTO checkpoint_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT %s, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob
FROM checkpoint_writes WHERE thread_id = %s
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING
"""

# --------------------------------------------------------------------------- retention

CLAIM_EXPIRED_THREADS = """
SELECT thread_id FROM lgm_thread_activity
WHERE updated_at < now() - make_interval(secs => %s)
ORDER BY updated_at
LIMIT %s
FOR UPDATE SKIP LOCKED
"""
"""Claim (lock the activity rows of) a batch of threads idle for longer than the TTL."""

SWEEPABLE_THREADS = """
SELECT t AS thread_id FROM unnest(%s::text[]) AS t
WHERE lgm_retention_guard(t, false) = 'ok'
"""
"""Of the claimed threads, those nobody is writing and whose lease is not live (locked
exclusively until the sweep commits)."""

# --------------------------------------------------------------------------- leases

ACQUIRE_LEASE = _lease_sql.acquire_lease(THREAD_LOCK_CLASS)
RENEW_LEASE = _lease_sql.RENEW_LEASE
RELEASE_LEASE = _lease_sql.RELEASE_LEASE
