"""The SQL of Postgres leases and fencing tokens: functions, migrations and statements.

**Tokens** (the layout of :mod:`langgraph_recall.lease._tokens`): ``lgm_next_token(previous,
secret)`` is ``max(previous's sequence + 1, server clock in ms since 2025-01-01) * 10^6 +
secret``, where the six ``secret`` digits come from the acquiring worker's CSPRNG. They
are per thread (the thread's lease row holds its current token) and floored at the clock,
so a promoted asynchronous standby -- which may have lost the latest lease rows -- never
hands out a token again: every token it lost was issued in the past, below its clock.

**Epochs**: ``lgm_epoch()`` names the server's history: its system identifier, the
timeline it writes WAL on and when the server started (``<system id>/<timeline as 8 hex
digits>/<start ms>``). A promotion starts a new timeline, a restore into a new cluster has
a new system identifier, a restart (crash recovery) a new start time: every event that ends
the connections of the runs holding leases. Every lease row records the epoch it was taken or
last renewed on, and a lease is *live* only while its epoch is the server's
(``lgm_lease_live``): leases of runs that died with the old primary never make a thread
busy on the new one. The value is computed once per session (a session never changes
server history: promotion ends a standby's recovery, not its sessions' server) and kept
in the ``lgm.epoch`` setting; where the server does not expose these functions it is
``unknown`` and leases are live by their TTL alone, as before.

**The guard** (``lgm_write_guard``) compares the epoch, then the token: without a token, a
write is refused while the lease is live; with one, it passes only if the token equals the
thread's current one, and a refusal says what happened (``held`` / ``free`` / ``gone``),
never the token.
"""

from __future__ import annotations

from langgraph_recall._pg.epoch import EPOCH_FUNCTION
from langgraph_recall.lease._tokens import CLOCK_BASE_MS, SECRET_SPAN

__all__ = [
    "FORGET_LEASES",
    "RELEASE_LEASE",
    "RENEW_LEASE",
    "REVOKE_LEASES",
    "acquire_lease",
    "lease_migrations",
]

_CLOCK_MS = f"""
CREATE OR REPLACE FUNCTION lgm_clock_ms() RETURNS bigint LANGUAGE sql VOLATILE AS $f$
SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint - {CLOCK_BASE_MS}
$f$"""

_NEXT_TOKEN = f"""
CREATE OR REPLACE FUNCTION lgm_next_token(p_previous bigint, p_secret integer)
RETURNS bigint LANGUAGE sql VOLATILE AS $f$
SELECT greatest(coalesce(p_previous / {SECRET_SPAN} + 1, 0), lgm_clock_ms(), 0) * {SECRET_SPAN}
    + p_secret
$f$"""

_LEASE_LIVE = """
CREATE OR REPLACE FUNCTION lgm_lease_live(p_expires timestamptz, p_epoch text)
RETURNS boolean LANGUAGE sql VOLATILE AS $f$
SELECT p_expires > clock_timestamp() AND (p_epoch = '' OR p_epoch = lgm_epoch())
$f$"""

_CLOCK_PAST = f"""
CREATE OR REPLACE FUNCTION lgm_clock_past(p_token bigint) RETURNS void
LANGUAGE plpgsql VOLATILE AS $f$
DECLARE
    v_wait bigint;
BEGIN
    IF p_token IS NULL THEN RETURN; END IF;
    v_wait := p_token / {SECRET_SPAN} - lgm_clock_ms() + 1;
    IF v_wait > 0 THEN PERFORM pg_sleep(least(v_wait, 10000) / 1000.0); END IF;
END
$f$"""
"""Wait until the server clock is past ``p_token``'s sequence (at most 10 s): a deleted
thread keeps no row, so the clock must be above its last token before anyone can lease it
again (normally a millisecond or nothing)."""


def _write_guard(thread_lock_class: int) -> str:
    return f"""
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
    PERFORM pg_advisory_xact_lock_shared({thread_lock_class}, hashtext(p_thread));
    -- one query (a fresh snapshot, taken after the lock): the lease and the parent
    SELECT l.token, lgm_lease_live(l.expires_at, l.epoch), p_parent IS NULL OR EXISTS (
        SELECT 1 FROM checkpoints c
        WHERE c.thread_id = p_thread AND c.checkpoint_ns = p_ns AND c.checkpoint_id = p_parent
    )
    INTO v_token, v_live, v_parent
    FROM (SELECT 1) AS one LEFT JOIN lgm_thread_leases l ON l.thread_id = p_thread;
    IF p_token IS NULL THEN
        IF v_live THEN RETURN ARRAY['busy']; END IF;
    ELSIF v_token IS DISTINCT FROM p_token THEN
        RETURN ARRAY['stale', CASE WHEN v_token IS NULL THEN 'gone'
                                   WHEN v_live THEN 'held' ELSE 'free' END];
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


def _retention_guard(thread_lock_class: int) -> str:
    return f"""
CREATE OR REPLACE FUNCTION lgm_retention_guard(p_thread text, p_wait boolean)
RETURNS text LANGUAGE plpgsql VOLATILE AS $guard$
BEGIN
    IF p_wait THEN
        PERFORM pg_advisory_xact_lock({thread_lock_class}, hashtext(p_thread));
    ELSIF NOT pg_try_advisory_xact_lock({thread_lock_class}, hashtext(p_thread)) THEN
        RETURN 'locked';
    END IF;
    IF EXISTS (
        SELECT 1 FROM lgm_thread_leases
        WHERE thread_id = p_thread AND lgm_lease_live(expires_at, epoch)
    ) THEN
        RETURN 'busy';
    END IF;
    RETURN 'ok';
END
$guard$"""


def lease_migrations(thread_lock_class: int) -> list[str]:
    """The migrations that give leases epochs and unguessable, clock-floored tokens
    (appended to the saver's own list; each statement idempotent)."""
    return [
        "ALTER TABLE lgm_thread_leases ADD COLUMN IF NOT EXISTS epoch TEXT NOT NULL DEFAULT ''",
        _CLOCK_MS,
        _NEXT_TOKEN,
        EPOCH_FUNCTION,
        _LEASE_LIVE,
        _CLOCK_PAST,
        _write_guard(thread_lock_class),
        _retention_guard(thread_lock_class),
    ]


def acquire_lease(thread_lock_class: int) -> str:
    """The compare-and-set acquisition (named parameters ``thread``, ``owner``, ``ttl``,
    ``secret``): the thread's exclusive advisory lock first (so the acquisition waits for
    in-flight writes and every later write sees it), then take the row if it is absent,
    expired, from an ended epoch, or already this owner's (a retried acquisition whose
    reply was lost: a live lease keeps its token). Returns the token, or no row (busy)."""
    return f"""
WITH locked AS MATERIALIZED (
    SELECT pg_advisory_xact_lock({thread_lock_class}, hashtext(%(thread)s::text)) AS done
)
INSERT INTO lgm_thread_leases AS l (thread_id, owner, token, expires_at, epoch)
SELECT %(thread)s, %(owner)s, lgm_next_token(NULL, %(secret)s),
    clock_timestamp() + make_interval(secs => %(ttl)s), lgm_epoch()
FROM locked
ON CONFLICT (thread_id) DO UPDATE
SET owner = EXCLUDED.owner,
    token = CASE WHEN l.owner = EXCLUDED.owner AND lgm_lease_live(l.expires_at, l.epoch)
                 THEN l.token ELSE lgm_next_token(l.token, %(secret)s) END,
    expires_at = EXCLUDED.expires_at, epoch = EXCLUDED.epoch
WHERE l.owner = EXCLUDED.owner OR NOT lgm_lease_live(l.expires_at, l.epoch)
RETURNING token
"""


RENEW_LEASE = """
UPDATE lgm_thread_leases
SET expires_at = clock_timestamp() + make_interval(secs => %s), epoch = lgm_epoch()
WHERE thread_id = %s AND owner = %s AND token = %s
RETURNING token
"""
"""Extend a lease still held by (owner, token), stamping it with the server's epoch: a
holder that outlived a failover keeps its thread if it renews before anyone takes it."""

RELEASE_LEASE = """
UPDATE lgm_thread_leases SET owner = '', expires_at = '-infinity'::timestamptz
WHERE thread_id = %s AND owner = %s AND token = %s
"""
"""Free the lease if (owner, token) still holds it; the row keeps the token, the floor of
the thread's next one."""

FORGET_LEASES = """
WITH gone AS (DELETE FROM lgm_thread_leases WHERE thread_id = ANY(%s) RETURNING token)
SELECT lgm_clock_past(max(token)) FROM gone
"""
"""Drop the lease rows of deleted threads: a holder's later writes are refused (the thread
has no token), nothing names the thread after, and the next token -- floored at the clock
-- is above every one issued before (the statement waits until the clock is past the
last one, normally not at all)."""

REVOKE_LEASES = f"""
UPDATE lgm_thread_leases
SET token = lgm_next_token(token, floor(random() * {SECRET_SPAN})::integer), owner = '',
    expires_at = '-infinity'::timestamptz
WHERE thread_id = ANY(%s)
"""
"""Free the leases of threads that lost checkpoints but live on (``delete_for_runs``): the
holder's later writes are refused. (The new token is held by nobody and without a live
lease an unfenced write passes anyway, so its digits need not be secret.)"""
