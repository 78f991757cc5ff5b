"""Every SQL statement the Postgres checkpointer and lease backend run, as named constants.

The checkpoint tables (``checkpoints``, ``checkpoint_blobs``, ``checkpoint_writes``,
``checkpoint_migrations``) belong to ``langgraph-checkpoint-postgres``; their migrations are
its ``MIGRATIONS`` list. Our own tables (``lgm_*``) have their own append-only migration list,
:data:`LGM_MIGRATIONS`, versioned in ``lgm_checkpoint_migrations`` and applied after the
official ones. All statements are parameterised (``%s`` placeholders).
"""

from __future__ import annotations

from langgraph.checkpoint.postgres.base import MIGRATIONS as OFFICIAL_MIGRATIONS
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
    "INSERT_WRITES",
    "LGM_INSERT_VERSION",
    "LGM_MIGRATIONS",
    "LGM_MIGRATIONS_TABLE",
    "LGM_SELECT_VERSION",
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
    "UPSERT_BLOBS",
    "UPSERT_CHECKPOINT",
    "UPSERT_WRITES",
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

UPSERT_BLOBS = """
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
VALUES (%s, %s, %s, %s, %s, %s)
ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
"""

UPSERT_CHECKPOINT = """
INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
VALUES (%s, %s, %s, %s, %s, %s)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata
"""

UPSERT_WRITES = """
INSERT INTO checkpoint_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob
"""

INSERT_WRITES = """
INSERT INTO checkpoint_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING
"""

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
