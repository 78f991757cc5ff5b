"""Every SQL statement the Postgres checkpointer and lease backend run, as named constants.

The checkpoint tables (``checkpoints``, ``checkpoint_blobs``, ``checkpoint_writes``,
``checkpoint_migrations``) belong to ``langgraph-checkpoint-postgres``; their migrations are
its ``MIGRATIONS`` list. Our own tables (``lgm_*``) have their own append-only migration list,
:data:`LGM_MIGRATIONS`, versioned in ``lgm_checkpoint_migrations`` and applied after the
official ones. All statements are parameterised (``%s`` placeholders).
"""

from __future__ import annotations

import functools

from langgraph.checkpoint.postgres.base import MIGRATIONS as OFFICIAL_MIGRATIONS
from langgraph.checkpoint.postgres.base import SELECT_SQL as OFFICIAL_SELECT_SQL
from langgraph.checkpoint.serde.types import TASKS

__all__ = [
    "ACQUIRE_LEASE",
    "ACTIVITY_FORGET",
    "BUMP_TOKENS",
    "COPY_BLOBS",
    "COPY_CHECKPOINTS",
    "COPY_WRITES",
    "DELETE_BLOBS_OF_CHANNEL",
    "DELETE_CHECKPOINTS_BY_IDS",
    "DELETE_THREADS",
    "DELETE_WRITES_BY_IDS",
    "FENCE_TOKEN",
    "GET_TUPLE_BY_ID",
    "GET_TUPLE_LATEST",
    "LGM_INSERT_VERSION",
    "LGM_MIGRATIONS",
    "LGM_MIGRATIONS_TABLE",
    "LGM_SELECT_VERSION",
    "MAX_ROWS_PER_STATEMENT",
    "MIGRATION_LOCK_KEY",
    "MIGRATION_UNLOCK",
    "OFFICIAL_INSERT_VERSION",
    "OFFICIAL_MIGRATIONS",
    "OFFICIAL_SELECT_VERSION",
    "PRUNE_BLOB_KEYS",
    "PRUNE_CHECKPOINT_ROWS",
    "PRUNE_SENDS_PARENTS",
    "REFERENCED_VERSIONS",
    "RELEASE_LEASE",
    "RENEW_LEASE",
    "RUN_CHECKPOINTS",
    "SET_PARENT_NULL",
    "SNAPSHOT_ISOLATION",
    "SWEEP_DIRTY_THREADS",
    "SWEEP_EXPIRED_THREADS",
    "SWEEP_MARK_CLEAN",
    "THREAD_EXISTS",
    "TOUCH_ACTIVITY",
    "TRY_MIGRATION_LOCK",
    "TRY_MIGRATION_XACT_LOCK",
    "put_blobs",
    "put_checkpoint",
    "put_writes",
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

# --------------------------------------------------------------------------- writes

TOUCH_ACTIVITY = """
INSERT INTO lgm_thread_activity AS a (thread_id, updated_at) VALUES (%s, now())
ON CONFLICT (thread_id) DO UPDATE SET updated_at = EXCLUDED.updated_at
WHERE a.updated_at < EXCLUDED.updated_at - interval '1 second'
   OR (a.swept_at IS NOT NULL AND a.swept_at >= a.updated_at)
"""
"""Mark a thread written. The conflicting row is locked either way (a TTL sweep cannot
interleave), but it is rewritten at most once a second unless a keep-last sweep has seen
it since: a hot thread's puts then cost no extra row version, and TTL granularity is 1 s."""

FENCE_TOKEN = "SELECT token FROM lgm_thread_leases WHERE thread_id = %s FOR SHARE"


_PUT_TOUCH = """touched AS (
    INSERT INTO lgm_thread_activity AS a (thread_id, updated_at) VALUES (%s, now())
    ON CONFLICT (thread_id) DO UPDATE SET updated_at = EXCLUDED.updated_at
    WHERE a.updated_at < EXCLUDED.updated_at - interval '1 second'
       OR (a.swept_at IS NOT NULL AND a.swept_at >= a.updated_at)
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

_PUT_ROW = """
INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
SELECT %s::text, %s::text, %s::text, %s::text, %s::jsonb, %s::jsonb
WHERE {after}
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata
"""

_BLOB_ROW = "(%s::text, %s::text, %s::text, %s::bytea)"


@functools.cache
def put_checkpoint(blobs: int, *, touch: bool = True) -> str:
    """A whole ``put`` as ONE statement: touch the thread's activity row (as
    :data:`TOUCH_ACTIVITY` does), upsert ``blobs`` blob rows, then the checkpoint row.

    Parameters, in order: the thread id (if ``touch``); if ``blobs``: thread id, namespace,
    then channel, version, type, blob per blob; then the ``checkpoints`` row (thread id,
    namespace, checkpoint id, parent id, checkpoint, metadata). Atomic on its own, so it
    runs in autocommit in one round trip with no ``BEGIN``/``COMMIT``.

    The sub-statements of a ``WITH`` run in no defined order unless one reads another's
    output: each always-true one-time filter ``(SELECT count(*) FROM prev) >= 0`` makes
    a step run after the previous one, so the activity row is locked before anything is
    written (a TTL sweep cannot interleave) -- the order of the former multi-statement
    program. ``touch=False`` is for a fenced put whose transaction already touched the
    row and checked the token. One SQL text per blob count (few distinct ones: each is
    prepared once per connection); scalar parameters are much cheaper to adapt than
    arrays.

    Example:
        ```python
        sql = put_checkpoint(1)
        assert sql.count("%s") == 1 + 2 + 4 + 6
        ```
    """
    ctes: list[str] = []
    after = "true"
    if touch:
        ctes.append(_PUT_TOUCH)
        after = "(SELECT count(*) FROM touched) >= 0"
    if blobs:
        rows = ", ".join([_BLOB_ROW] * blobs)
        ctes.append(_PUT_BLOBS.format(rows=rows, after=after))
        after = "(SELECT count(*) FROM blobs) >= 0"
    head = "WITH " + ",\n".join(ctes) if ctes else ""
    return head + _PUT_ROW.format(after=after)


@functools.cache
def put_blobs(blobs: int) -> str:
    """Insert-if-absent ``blobs`` blob rows (thread id, namespace, then channel, version,
    type, blob per blob): the blobs of a put too large for one :func:`put_checkpoint`.

    Example:
        ```python
        assert put_blobs(3).count("%s") == 2 + 3 * 4
        ```
    """
    rows = ", ".join([_BLOB_ROW] * blobs)
    return "WITH " + _PUT_BLOBS.format(rows=rows, after="true") + "\nSELECT count(*) FROM blobs"


MAX_ROWS_PER_STATEMENT = 1000
"""Blob or write rows sent in one statement (Postgres allows 65535 parameters)."""

_WRITES_HEAD = """
INSERT INTO checkpoint_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
VALUES """
_WRITE_ROW = "(%s, %s, %s, %s, %s, %s, %s, %s, %s)"
_WRITES_CONFLICT = "\nON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)\n"


@functools.cache
def put_writes(rows: int, *, upsert: bool) -> str:
    """All of a task's ``rows`` writes in ONE statement (9 parameters per row, in
    ``checkpoint_writes`` column order): insert-if-absent per ``idx``, or with ``upsert``
    overwrite (special channels: error, interrupt...; the rows must then have distinct
    ``idx``: one statement cannot update a row twice).

    Example:
        ```python
        assert put_writes(2, upsert=False).count("%s") == 18
        ```
    """
    action = (
        "DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob"
        if upsert
        else "DO NOTHING"
    )
    return _WRITES_HEAD + ", ".join([_WRITE_ROW] * rows) + _WRITES_CONFLICT + action + "\n"


# --------------------------------------------------------------------------- deletes

DELETE_THREADS: tuple[str, ...] = (
    "DELETE FROM lgm_thread_activity WHERE thread_id = ANY(%s)",
    "DELETE FROM checkpoints WHERE thread_id = ANY(%s)",
    "DELETE FROM checkpoint_blobs WHERE thread_id = ANY(%s)",
    "DELETE FROM checkpoint_writes WHERE thread_id = ANY(%s)",
)
"""Everything of the given threads (one ``text[]`` parameter each)."""

BUMP_TOKENS = """
INSERT INTO lgm_thread_leases AS l (thread_id, owner, token, expires_at)
SELECT t, '', 1, '-infinity'::timestamptz FROM unnest(%s::text[]) AS t
ON CONFLICT (thread_id) DO UPDATE
SET token = l.token + 1, owner = '', expires_at = '-infinity'::timestamptz
"""
"""Advance the fencing token of deleted threads (and free their leases)."""

ACTIVITY_FORGET = "DELETE FROM lgm_thread_activity WHERE thread_id = ANY(%s)"

RUN_CHECKPOINTS = """
DELETE FROM checkpoints
WHERE metadata ->> 'run_id' = ANY(%s)
RETURNING thread_id, checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' AS versions
"""

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

SNAPSHOT_ISOLATION = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"

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

SWEEP_EXPIRED_THREADS = """
WITH expired AS (
    SELECT thread_id FROM lgm_thread_activity
    WHERE updated_at < now() - make_interval(secs => %s)
    ORDER BY updated_at
    LIMIT %s
    FOR UPDATE SKIP LOCKED
)
DELETE FROM lgm_thread_activity a USING expired e
WHERE a.thread_id = e.thread_id
RETURNING a.thread_id
"""
"""Claim (and forget) a batch of threads idle for longer than the TTL (seconds)."""

SWEEP_DIRTY_THREADS = """
SELECT thread_id FROM lgm_thread_activity
WHERE swept_at IS NULL OR swept_at < updated_at
ORDER BY updated_at
LIMIT %s
"""
"""Threads written since their last keep-last-N sweep."""

SWEEP_MARK_CLEAN = "UPDATE lgm_thread_activity SET swept_at = now() WHERE thread_id = %s"

# --------------------------------------------------------------------------- leases

ACQUIRE_LEASE = """
INSERT INTO lgm_thread_leases AS l (thread_id, owner, token, expires_at)
VALUES (%s, %s, 1, clock_timestamp() + make_interval(secs => %s))
ON CONFLICT (thread_id) DO UPDATE
SET owner = EXCLUDED.owner, token = l.token + 1, expires_at = EXCLUDED.expires_at
WHERE l.expires_at < clock_timestamp()
RETURNING token
"""
"""Compare-and-set: take the lease only if absent or expired; returns the new token."""

RENEW_LEASE = """
UPDATE lgm_thread_leases
SET expires_at = clock_timestamp() + make_interval(secs => %s)
WHERE thread_id = %s AND owner = %s AND token = %s
RETURNING token
"""

RELEASE_LEASE = """
UPDATE lgm_thread_leases SET owner = '', expires_at = '-infinity'::timestamptz
WHERE thread_id = %s AND owner = %s AND token = %s
"""
