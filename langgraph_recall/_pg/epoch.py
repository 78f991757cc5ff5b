"""The server's history as a value: ``lgm_epoch()``, shared by leases and the store's caches.

``lgm_epoch()`` is ``<system id>/<timeline as 8 hex digits>/<start ms>``: a promotion starts
a new timeline, a restore into a new cluster has a new system identifier, a restart (crash
recovery) a new start time. Whatever the server learned before such an event may be gone
after it -- lease rows, sequence positions, transaction ids -- so anything a client derived
from the server's state (a fencing token, a cache watermark) is valid only within one epoch.
A standby in recovery answers ``recovery`` (it has no timeline of its own to write on); where
the server does not expose these functions the value is ``unknown``. It is computed once per
session (a session never changes server history: promotion ends recovery, not the server's
sessions) and kept in the ``lgm.epoch`` setting.
"""

from __future__ import annotations

__all__ = ["EPOCH_FUNCTION"]

EPOCH_FUNCTION = """
CREATE OR REPLACE FUNCTION lgm_epoch() RETURNS text LANGUAGE plpgsql VOLATILE AS $f$
DECLARE
    v_epoch text := current_setting('lgm.epoch', true);
BEGIN
    IF v_epoch IS NOT NULL AND v_epoch <> '' THEN RETURN v_epoch; END IF;
    IF pg_is_in_recovery() THEN RETURN 'recovery'; END IF;
    BEGIN
        SELECT s.system_identifier::text || '/'
            || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) || '/'
            || floor(extract(epoch FROM pg_postmaster_start_time()) * 1000)::bigint::text
        INTO v_epoch FROM pg_control_system() AS s;
    EXCEPTION WHEN OTHERS THEN
        v_epoch := 'unknown';
    END;
    PERFORM set_config('lgm.epoch', v_epoch, false);
    RETURN v_epoch;
END
$f$"""
"""``CREATE OR REPLACE FUNCTION lgm_epoch()`` (idempotent; savers and the store both run it)."""
