"""SQL of the Postgres memory store: named constants and builder functions (pure).

The store reads every statement here; the shared fragments live in
:mod:`~langgraph_recall.store.postgres._sql_clauses` and the search statements in
:mod:`~langgraph_recall.store.postgres._sql_search` (re-exported).

Every statement uses named placeholders (``%(name)s``); builders return
``psycopg.sql.Composed`` objects and never interpolate values.

Example:
    ```python
    from langgraph_recall.store.postgres import _sql

    query = _sql.search_recent_sql(scoped=True, include_invalid=False, filter_clause=None)
    assert "ORDER BY i.updated_at DESC" in query.as_string(None)
    ```
"""

from __future__ import annotations

import psycopg
from psycopg import sql

from langgraph_recall.store.postgres._migrations import (
    GLOBAL_LOCK,
    LOCK_BUCKETS,
    LOCK_CLASS,
    STATISTICS_LOCK,
    VectorMode,
)
from langgraph_recall.store.postgres._sql_clauses import (
    ACCESS_JOIN,
    NOT_EXPIRED,
    NOT_EXPIRED_TEXT,
    element,
    scope_clause,
    stats_scope,
)
from langgraph_recall.store.postgres._sql_clauses import CANDIDATE_COLUMNS as CANDIDATE_COLUMNS
from langgraph_recall.store.postgres._sql_clauses import ITEM_COLUMNS as ITEM_COLUMNS
from langgraph_recall.store.postgres._sql_clauses import SCOPE as SCOPE
from langgraph_recall.store.postgres._sql_clauses import VALID_AT as VALID_AT
from langgraph_recall.store.postgres._sql_clauses import visible_clause as visible_clause
from langgraph_recall.store.postgres._sql_entities import entity_links_sql as entity_links_sql
from langgraph_recall.store.postgres._sql_search import EXACT_VECTOR_SCALE as EXACT_VECTOR_SCALE
from langgraph_recall.store.postgres._sql_search import SCOPE_SCAN_ROWS as SCOPE_SCAN_ROWS
from langgraph_recall.store.postgres._sql_search import (
    build_search_hybrid_sql as build_search_hybrid_sql,
)
from langgraph_recall.store.postgres._sql_search import scope_search_sql as scope_search_sql
from langgraph_recall.store.postgres._sql_search import search_hybrid_sql as search_hybrid_sql
from langgraph_recall.store.postgres._sql_search import search_recent_sql as search_recent_sql

# The names imported above with ``as`` live in _sql_clauses / _sql_search: the store reads
# every statement here.

ANALYZE_ITEMS = "ANALYZE lgm_memory_items"
ADVISORY_LOCK = "SELECT pg_advisory_xact_lock(hashtext('langgraph_recall.store'))"
SERVER_ENCODING = "SELECT current_setting('server_encoding') AS encoding"
CREATE_VECTOR_EXTENSION = "CREATE EXTENSION IF NOT EXISTS vector"
VECTOR_VERSION = "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
APPLIED_MIGRATIONS = "SELECT v FROM lgm_store_migrations ORDER BY v"
RECORD_MIGRATION = "INSERT INTO lgm_store_migrations (v) VALUES (%(v)s) ON CONFLICT DO NOTHING"
READ_META = "SELECT name, value FROM lgm_store_meta"
WRITE_META = """
INSERT INTO lgm_store_meta (name, value) VALUES (%(name)s, %(value)s)
ON CONFLICT (name) DO NOTHING"""
# Bookkeeping (access counts, TTL refreshes) runs in a transaction of its own (``Sql.isolated``):
# its commit need not wait for the WAL flush (a crash may lose the last moment's bookkeeping,
# never a memory and never consistency), and it waits for a row lock only briefly.
BOOKKEEPING_SETTINGS = """
SELECT set_config('synchronous_commit', 'off', true), set_config('lock_timeout', %(wait)s, true)"""
# What an isolated bookkeeping statement may give way to (sent back, retried later).
BOOKKEEPING_GAVE_WAY = (psycopg.errors.LockNotAvailable, psycopg.errors.DeadlockDetected)
BOOKKEEPING_REFUSED = psycopg.errors.ReadOnlySqlTransaction
"""A read-only server (a hot standby): bookkeeping is dropped there, never the read."""
SET_HNSW_SEARCH = """
SELECT set_config('hnsw.ef_search', %(ef)s, true),
       set_config('hnsw.iterative_scan', 'relaxed_order', true)"""
GET_ITEMS = sql.SQL(
    """
SELECT {cols}
FROM unnest(%(ns)s::text[], %(key)s::text[]) AS g(ns, key)
JOIN lgm_memory_items i ON i.ns = g.ns AND i.key = g.key
{access}
WHERE {not_expired}"""
).format(cols=ITEM_COLUMNS, access=ACCESS_JOIN, not_expired=NOT_EXPIRED)

REFRESH_TTL = """
INSERT INTO lgm_memory_access AS a (id, refreshed_until)
SELECT i.id, now() + i.ttl_minutes * interval '1 minute' FROM lgm_memory_items i
WHERE i.id = ANY(%(ids)s) AND i.ttl_minutes IS NOT NULL ORDER BY i.id
ON CONFLICT (id) DO UPDATE SET refreshed_until = excluded.refreshed_until"""

# Searches' access counts, written in batches (``_access.AccessLog``); ids of memories
# deleted meanwhile are skipped. Numbers and times travel in binary (``%(x)b``): dumping
# 1,024 timestamps as text cost the search that writes them ~4 ms of CPU (binary: ~1).
RECORD_ACCESS = """
INSERT INTO lgm_memory_access AS a (id, access_count, last_accessed_at)
SELECT i.id, t.n, t.last
FROM unnest(%(ids)b::bigint[], %(counts)b::integer[], %(last)b::timestamptz[]) AS t(id, n, last)
JOIN lgm_memory_items i ON i.id = t.id
ORDER BY i.id
ON CONFLICT (id) DO UPDATE
SET access_count = a.access_count + excluded.access_count,
    last_accessed_at = greatest(a.last_accessed_at, excluded.last_accessed_at)"""

DELETE_ITEMS = """
WITH gone AS (
    DELETE FROM lgm_memory_items i
    USING unnest(%(ns)s::text[], %(key)s::text[]) AS d(ns, key)
    WHERE i.ns = d.ns AND i.key = d.key
    RETURNING i.ns, i.key, i.text, i.value
)
INSERT INTO lgm_memory_history (ns, key, action, old_text, old_value, actor)
SELECT ns, key, 'delete', text, value, %(actor)s FROM gone"""

# The server's clock, read after the statement's locks, as ISO 8601 text in UTC.
_CLOCK_TEXT = (
    "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US') || '+00:00'"
)

# Closes a memory's validity interval at %(at)s (NULL: now, by the server's clock read after
# the namespace lock, so never before a valid_from a put committed meanwhile) — unless that
# is before its valid_from (the same interval a put would reject): then nothing changes and
# the row reports changed = 0.
INVALIDATE_ITEM = f"""
WITH moment AS MATERIALIZED (
    SELECT coalesce(%(at)s::timestamptz, clock_timestamp()) AS at,
           coalesce(%(at_text)s::text, {_CLOCK_TEXT}) AS at_text
), old AS (
    SELECT i.id, i.text, i.value, i.valid_from FROM lgm_memory_items i
    WHERE i.ns = %(ns)s AND i.key = %(key)s AND {NOT_EXPIRED_TEXT}
    FOR UPDATE OF i
), changed AS (
    UPDATE lgm_memory_items i
    SET invalid_at = m.at, updated_at = now(),
        value = jsonb_set(i.value, '{{invalid_at}}', to_jsonb(m.at_text))
    FROM old, moment m WHERE i.id = old.id AND old.valid_from <= m.at
    RETURNING i.ns, i.key, i.text, i.value
), logged AS (
    INSERT INTO lgm_memory_history (ns, key, action, old_text, new_text, old_value, new_value,
                                    actor)
    SELECT c.ns, c.key, 'invalidate', o.text, c.text, o.value, c.value, %(actor)s
    FROM changed c, old o
)
SELECT o.valid_from, (SELECT at FROM moment) AS at, (SELECT count(*) FROM changed) AS changed
FROM old o"""

# Where a put of a value without valid_from starts its interval: the stored memory's
# valid_from (an update keeps it), else now() (a new memory).
VALID_FROM_OF = """
SELECT g.ns, g.key, coalesce(i.valid_from, now()) AS valid_from
FROM unnest(%(ns)s::text[], %(key)s::text[]) AS g(ns, key)
LEFT JOIN lgm_memory_items i ON i.ns = g.ns AND i.key = g.key"""

HISTORY_OF = """
SELECT h.ns, h.key, h.action, h.old_text, h.new_text, h.old_value, h.new_value, h.actor, h.at
FROM lgm_memory_history h WHERE h.ns = %(ns)s AND h.key = %(key)s ORDER BY h.id"""

# The namespaces a sweep changes, with their lock buckets: it sweeps them a few buckets per
# transaction (LOCK_NAMESPACES first), so it never holds every tenant's lock at once.
EXPIRED_NAMESPACES = (
    f"SELECT DISTINCT i.ns, hashtext(i.ns) & {LOCK_BUCKETS - 1} AS bucket "
    "FROM lgm_memory_items i WHERE i.expires_at <= now()"
)

# Deletes what has expired in the locked namespaces %(ns)s, and folds a read's TTL refresh
# into ``expires_at`` once that is past (one item-row rewrite per TTL period, not per read).
SWEEP_EXPIRED = """
WITH refreshed AS (
    SELECT i.id, r.refreshed_until
    FROM lgm_memory_items i JOIN lgm_memory_access r ON r.id = i.id
    WHERE i.expires_at <= now() AND r.refreshed_until > now() AND i.ns = ANY(%(ns)s::text[])
), gone AS (
    DELETE FROM lgm_memory_items i
    WHERE i.expires_at <= now() AND i.ns = ANY(%(ns)s::text[])
      AND NOT EXISTS (SELECT 1 FROM refreshed f WHERE f.id = i.id)
    RETURNING i.ns, i.key, i.text, i.value
), folded AS (
    UPDATE lgm_memory_items i SET expires_at = f.refreshed_until
    FROM refreshed f WHERE i.id = f.id
), logged AS (
    INSERT INTO lgm_memory_history (ns, key, action, old_text, old_value, actor)
    SELECT ns, key, 'expire', text, value, 'ttl' FROM gone
)
SELECT count(*) AS n FROM gone"""

# ``forget`` locks only what it touches. Before it deletes anything it finds, without
# changing a row, every (namespace, key) its erasure reaches: the scope's items and history
# rows (REACH_SCOPE), then round by round what was derived from them (REACH_LINEAGE, the
# read-only mirror of FORGET_LINEAGE). It locks those namespaces (LOCK_NAMESPACES: the one
# lock order), looks again under the locks and takes what is new only if it is free
# (TRY_LOCK_NAMESPACES: a try never waits, so it cannot deadlock); every delete is limited
# to the namespaces held, ``%(held)s`` (NULL: all, under the store-wide lock).
SCOPE_NAMESPACES = """
SELECT ns FROM lgm_memory_items WHERE ns >= %(ns_lo)s AND ns < %(ns_hi)s
UNION SELECT ns FROM lgm_memory_history WHERE ns >= %(ns_lo)s AND ns < %(ns_hi)s"""

REACH_SCOPE = """
SELECT ns, key FROM lgm_memory_items WHERE ns >= %(ns_lo)s AND ns < %(ns_hi)s
UNION SELECT ns, key FROM lgm_memory_history WHERE ns >= %(ns_lo)s AND ns < %(ns_hi)s"""

REACH_LINEAGE = """
WITH f AS (SELECT * FROM unnest(%(ns)s::text[], %(key)s::text[]) AS g(ns, key))
SELECT i.ns, i.key FROM lgm_memory_items i
WHERE i.derived_from IS NOT NULL AND EXISTS (
    SELECT 1 FROM jsonb_array_elements(i.derived_from) r
    JOIN f ON (r ->> 'ns') = f.ns AND (r ->> 'key') = f.key
)
UNION
SELECT h.ns, h.key FROM lgm_memory_history h
WHERE (h.old_value ? 'derived_from' OR h.new_value ? 'derived_from')
  AND EXISTS (
    SELECT 1 FROM f JOIN (
        SELECT * FROM lgm_memory_sources(h.old_value, h.ns)
        UNION ALL SELECT * FROM lgm_memory_sources(h.new_value, h.ns)
    ) s ON s.ns = f.ns AND s.key = f.key
  )"""

TRY_LOCK_NAMESPACES = f"""
SELECT coalesce(bool_and(pg_try_advisory_xact_lock({LOCK_CLASS}, b)), true) AS locked
FROM (SELECT DISTINCT hashtext(n) & {LOCK_BUCKETS - 1} AS b
      FROM unnest(%(ns)s::text[]) AS n) AS t"""

_HELD = "(%(held)s::text[] IS NULL OR {alias}.ns = ANY(%(held)s::text[]))"

FORGET_SCOPE = f"""
DELETE FROM lgm_memory_items i WHERE i.ns >= %(ns_lo)s AND i.ns < %(ns_hi)s
  AND {_HELD.format(alias="i")}
RETURNING i.ns, i.key"""

FORGET_HISTORY_SCOPE = f"""
WITH gone AS (
    DELETE FROM lgm_memory_history h WHERE h.ns >= %(ns_lo)s AND h.ns < %(ns_hi)s
      AND {_HELD.format(alias="h")}
    RETURNING h.ns, h.key
)
SELECT DISTINCT ns, key FROM gone"""

# One round of erasure. ``%(ns)s``/``%(key)s``: the sources found last round — memories
# erased, or once derived from what is erased; ``%(purge)s`` flags those whose whole
# history goes too (every one but a memory that lives on re-pointed elsewhere). Deletes
# that history; every memory derived from a source (``derived_from``); and every history
# row of a memory that was derived from a source in some version (deleted or re-pointed
# since: the ``derived_from`` of its old/new value names the source). Returns the next
# sources: those memories (``item``), and the memories whose history named a source
# (``live`` when one still exists: it keeps its row and the history of its other versions,
# but what was derived from it may quote the erased text, so it is a source too).
FORGET_LINEAGE = f"""
WITH f AS (
    SELECT * FROM unnest(%(ns)s::text[], %(key)s::text[], %(purge)s::boolean[])
        AS g(ns, key, purge)
), own AS (
    DELETE FROM lgm_memory_history h USING f
    WHERE f.purge AND h.ns = f.ns AND h.key = f.key
), items AS (
    DELETE FROM lgm_memory_items i
    WHERE i.derived_from IS NOT NULL AND {_HELD.format(alias="i")} AND EXISTS (
        SELECT 1 FROM jsonb_array_elements(i.derived_from) r
        JOIN f ON (r ->> 'ns') = f.ns AND (r ->> 'key') = f.key
    )
    RETURNING i.ns, i.key
), lineage AS (
    DELETE FROM lgm_memory_history h
    WHERE (h.old_value ? 'derived_from' OR h.new_value ? 'derived_from')
      AND {_HELD.format(alias="h")}
      AND NOT EXISTS (SELECT 1 FROM f WHERE f.purge AND f.ns = h.ns AND f.key = h.key)
      AND EXISTS (
        SELECT 1 FROM f JOIN (
            SELECT * FROM lgm_memory_sources(h.old_value, h.ns)
            UNION ALL SELECT * FROM lgm_memory_sources(h.new_value, h.ns)
        ) s ON s.ns = f.ns AND s.key = f.key
      )
    RETURNING h.ns, h.key
)
SELECT ns, key, true AS item, false AS live FROM items
UNION ALL
SELECT l.ns, l.key, false, EXISTS (
    SELECT 1 FROM lgm_memory_items i WHERE i.ns = l.ns AND i.key = l.key
) FROM (SELECT DISTINCT ns, key FROM lineage) l"""

# After an erasure the planner statistics (pg_stats: most common values and elements,
# histograms) still quote the erased rows until the next ANALYZE: ``forget`` refreshes them
# right after its erasure commits, in a transaction of its own that holds no namespace lock
# (ANALYZE never samples a deleted row: once the delete is committed the row is dead to it),
# so other tenants write while it samples. It takes the store-wide lock shared (a migrating
# setup waits for it, and it for setup), then STATISTICS_LOCK, which only refreshes take:
# two of them queue there instead of on ANALYZE's table locks. ANALYZE keeps a table's old
# statistics when its sample holds no row at all — a table the erasure emptied — so each
# table first gets a placeholder row only this transaction ever sees (ANALYZE samples the
# transaction's own inserts; ns '' is no namespace's encoding, id 0 no item's, and no writer
# ever touches them), deleted again before the commit.
ANALYZE_STORE = f"""
SELECT pg_advisory_xact_lock_shared({LOCK_CLASS}, {GLOBAL_LOCK});
SELECT pg_advisory_xact_lock({LOCK_CLASS}, {STATISTICS_LOCK});
INSERT INTO lgm_memory_items (ns, key, value) VALUES ('', '', '{{}}') ON CONFLICT DO NOTHING;
INSERT INTO lgm_memory_history (ns, key, action) VALUES ('', '', 'placeholder');
INSERT INTO lgm_memory_ns_stats (ns, n_docs, total_len) VALUES ('', 0, 0)
    ON CONFLICT DO NOTHING;
INSERT INTO lgm_memory_access (id) VALUES (0) ON CONFLICT DO NOTHING;
INSERT INTO lgm_memory_entities (id, ns, entity) VALUES (0, '', '') ON CONFLICT DO NOTHING;
ANALYZE lgm_memory_items, lgm_memory_history, lgm_memory_ns_stats, lgm_memory_access,
    lgm_memory_entities;
DELETE FROM lgm_memory_items WHERE ns = '' AND key = '';
DELETE FROM lgm_memory_history WHERE ns = '' AND key = '';
DELETE FROM lgm_memory_ns_stats WHERE ns = '';
DELETE FROM lgm_memory_access WHERE id = 0;
DELETE FROM lgm_memory_entities WHERE id = 0 AND entity = ''"""

# The half-lives elapsed are capped at ±1000 (0.5^1000 ≈ 1e-301): Postgres raises an
# underflow error for power(0.5, x) beyond ~1075, e.g. a one-hour half-life and a memory
# last touched two months ago.
DECAY_SCORE = sql.SQL(
    "(coalesce(i.importance, 5) / 10.0) "
    "* power(0.5, greatest(-1000, least(1000, extract(epoch FROM now() - "
    "coalesce(a.last_accessed_at, i.last_accessed_at, i.updated_at)) "
    "/ %(half_life)s))) * (1 + ln(1 + i.access_count + coalesce(a.access_count, 0)))"
)


# Every transaction that changes items or their statistics takes its locks first, in one
# global order (``_migrations._lock_order``): the store-wide lock shared, then the buckets of
# the namespaces it writes, ascending; only then does it touch a row. Writers of one
# namespace thereby serialise before their first statement: each then runs with a snapshot
# that sees every earlier writer, and its history rows (add vs update, old text/value) chain
# exactly. ``forget`` locks the namespaces its erasure reaches the same way (see
# REACH_LINEAGE); only when those keep changing under it does it take the store-wide lock
# exclusively (LOCK_STORE) and run alone.
LOCK_NAMESPACES = "SELECT lgm_memory_lock(%(ns)s::text[]) AS n"
LOCK_STORE = f"SELECT pg_advisory_xact_lock({LOCK_CLASS}, {GLOBAL_LOCK})"
# Bookkeeping (``Sql.isolated``) locks the namespaces of the memories it touches, the same way.
LOCK_NAMESPACES_OF_IDS = """
SELECT lgm_memory_lock(ARRAY(
    SELECT DISTINCT i.ns FROM lgm_memory_items i WHERE i.id = ANY(%(ids)s::bigint[]))) AS n"""


def upsert_sql(vector_mode: VectorMode, dims: int, vector_type: str = "vector") -> sql.Composed:
    """Multi-row upsert of prepared values, recording add/update/invalidate history.

    Parameters are parallel arrays (one element per item) plus ``cfg`` and ``actor``.
    The vectors travel as ONE parameter, ``vectors``: a flat binary ``real[]``
    (pgvector: ``_float4_array.Float4Array``) or float32 ``bytea`` (exact path), and ``slot``
    says which ``dims``-long run of it is each item's vector (NULL: no vector; a NULL
    slice bound makes the slice NULL).
    """
    width = sql.Literal(int(dims))
    if vector_mode == "pgvector":
        embedding_value = sql.SQL(
            "(%(vectors)s::real[])[n.slot * {w} + 1 : (n.slot + 1) * {w}]::{t}"
        ).format(w=width, t=element(vector_type))
    else:
        embedding_value = sql.SQL(
            "substring(%(vectors)s::bytea FROM n.slot * {w} * 4 + 1 FOR {w} * 4)"
        ).format(w=width)
    return sql.SQL(
        """
WITH incoming AS (
    SELECT * FROM unnest(
        %(ns)s::text[], %(key)s::text[], %(value)s::text[]::jsonb[], %(text)s::text[],
        %(kind)s::text[], %(importance)b::real[], %(valid_from)b::timestamptz[],
        %(invalid_at)b::timestamptz[], %(expires_at)b::timestamptz[], %(ttl)b::float8[],
        %(derived)s::text[]::jsonb[], %(slot)b::integer[], %(entities)s::text[]::jsonb[]
    ) AS n(ns, key, value, text, kind, importance, valid_from, invalid_at, expires_at,
           ttl_minutes, derived_from, slot, entities)
), old AS (
    SELECT i.ns, i.key, i.text, i.value, i.invalid_at, i.valid_from
    FROM lgm_memory_items i JOIN incoming n ON i.ns = n.ns AND i.key = n.key
), upserted AS (
    -- the row proposed for insertion already carries the valid_from an update keeps: the
    -- CHECK constraints judge that row before ON CONFLICT turns it into an update
    INSERT INTO lgm_memory_items AS i (
        ns, key, value, text, tsv, doc_len, kind, importance, valid_from, invalid_at,
        expires_at, ttl_minutes, derived_from, embedding, txid)
    SELECT n.ns, n.key, n.value, n.text, t.tsv, t.doc_len, n.kind, n.importance,
           coalesce(n.valid_from, o.valid_from, now()), n.invalid_at,
           coalesce(n.expires_at, now() + n.ttl_minutes * interval '1 minute'),
           n.ttl_minutes, n.derived_from, {embedding_value}, pg_current_xact_id()
    FROM incoming n
    LEFT JOIN old o ON o.ns = n.ns AND o.key = n.key
    CROSS JOIN LATERAL (
        SELECT v.tsv, (SELECT coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0)
                       FROM unnest(v.tsv) u)::integer AS doc_len
        FROM (SELECT CASE WHEN n.text IS NULL THEN NULL
                          ELSE lgm_lexical_vector(%(cfg)s::regconfig, n.text) END AS tsv) v
    ) t
    ON CONFLICT (ns, key) DO UPDATE SET
        value = excluded.value, text = excluded.text, tsv = excluded.tsv,
        doc_len = excluded.doc_len, kind = excluded.kind, importance = excluded.importance,
        valid_from = coalesce((excluded.value ->> 'valid_from')::timestamptz, i.valid_from),
        invalid_at = excluded.invalid_at, expires_at = excluded.expires_at,
        ttl_minutes = excluded.ttl_minutes, derived_from = excluded.derived_from,
        embedding = excluded.embedding, txid = excluded.txid, updated_at = now()
    RETURNING i.id, i.ns, i.key, i.text, i.value, i.invalid_at
), reset AS (  -- a put restarts the TTL: an earlier read's refresh no longer applies
    UPDATE lgm_memory_access a SET refreshed_until = NULL
    FROM upserted u WHERE a.id = u.id AND a.refreshed_until IS NOT NULL
), unlinked AS (  -- an update keeps only the entity links of what it now says
    DELETE FROM lgm_memory_entities e USING upserted u, incoming n
    WHERE e.id = u.id AND n.ns = u.ns AND n.key = u.key
      AND NOT (coalesce(n.entities, '[]'::jsonb) ? e.entity)
), linked AS (
    INSERT INTO lgm_memory_entities (id, ns, entity)
    SELECT u.id, u.ns, x.entity
    FROM upserted u JOIN incoming n ON n.ns = u.ns AND n.key = u.key
    CROSS JOIN LATERAL jsonb_array_elements_text(coalesce(n.entities, '[]'::jsonb)) AS x(entity)
    ORDER BY u.id, x.entity
    ON CONFLICT (id, entity) DO NOTHING
)
INSERT INTO lgm_memory_history (ns, key, action, old_text, new_text, old_value, new_value, actor)
SELECT u.ns, u.key,
       CASE WHEN o.key IS NULL THEN 'add'
            WHEN u.invalid_at IS NOT NULL AND o.invalid_at IS NULL THEN 'invalidate'
            ELSE 'update' END,
       o.text, u.text, o.value, u.value, %(actor)s
FROM upserted u LEFT JOIN old o ON o.ns = u.ns AND o.key = u.key"""
    ).format(embedding_value=embedding_value)


def list_namespaces_sql(bounded: bool) -> sql.Composed:
    """Distinct namespaces from ``%(ns_lo)s`` (below ``%(ns_hi)s`` when ``bounded``) that
    hold an unexpired item — a loose index scan: one index probe per namespace, not a
    scan of every item."""
    below = sql.SQL("AND i.ns < %(ns_hi)s" if bounded else "")
    return sql.SQL(
        """
WITH RECURSIVE walk(ns) AS (
    SELECT min(i.ns) FROM lgm_memory_items i WHERE i.ns >= %(ns_lo)s {below}
  UNION ALL
    SELECT (SELECT min(i.ns) FROM lgm_memory_items i WHERE i.ns > w.ns {below})
    FROM walk w WHERE w.ns IS NOT NULL
)
SELECT w.ns FROM walk w
WHERE w.ns IS NOT NULL AND EXISTS (
    SELECT 1 FROM lgm_memory_items i
    WHERE i.ns = w.ns AND {not_expired}
)"""
    ).format(below=below, not_expired=NOT_EXPIRED)


def cache_refresh_sql(scoped: bool) -> sql.Composed:
    """Rows written since the exact-path cache watermark (``txid >= %(since)s``).

    The first row carries the new watermark (``xmin`` of this statement's snapshot, so
    every transaction older than it is visible here), the server's ``epoch``
    (:mod:`langgraph_recall._pg.epoch`: a watermark from another server history means
    nothing here) and ``live``, the number of indexed rows in the scope (they are the rows
    with an embedding); the others carry ``id, embedding``.
    """
    return sql.SQL(
        """
SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin, lgm_epoch() AS epoch,
       (SELECT coalesce(sum(s.n_docs), 0) FROM lgm_memory_ns_stats s WHERE {stats_scope})::bigint
           AS live,
       NULL::bigint AS id, NULL::bytea AS embedding
UNION ALL
SELECT NULL, NULL, NULL, i.id, i.embedding::bytea FROM lgm_memory_items i
WHERE i.txid >= %(since)s::xid8 AND {scope}"""
    ).format(scope=scope_clause(scoped), stats_scope=stats_scope(scoped))


def cache_live_ids_sql(scoped: bool) -> sql.Composed:
    """Ids of the scope's rows that have an embedding (the exact-path cache keeps only these)."""
    return sql.SQL(
        "SELECT i.id FROM lgm_memory_items i WHERE i.embedding IS NOT NULL AND {scope}"
    ).format(scope=scope_clause(scoped))


def decay_namespaces_sql(scoped: bool) -> sql.Composed:
    """The namespaces a decay run changes, with their lock buckets (it retires them a few
    buckets per transaction, ``LOCK_NAMESPACES`` first)."""
    return sql.SQL(
        "SELECT DISTINCT i.ns, hashtext(i.ns) & {mask} AS bucket FROM lgm_memory_items i "
        "WHERE {scope} AND i.invalid_at IS NULL"
    ).format(scope=scope_clause(scoped), mask=sql.Literal(LOCK_BUCKETS - 1))


def decay_sql(delete: bool, scoped: bool) -> sql.Composed:
    """Retire memories of the locked namespaces ``%(ns)s`` whose decay score is below
    ``%(threshold)s`` and that are older than ``min_age``."""
    candidates = sql.SQL(
        """
SELECT i.id FROM lgm_memory_items i {access}
WHERE {scope} AND i.ns = ANY(%(ns)s::text[])
  AND i.invalid_at IS NULL AND {not_expired} AND i.valid_from <= now()
  AND i.created_at < now() - %(min_age)s::interval
  AND {score} < %(threshold)s
  AND (%(kinds)s::text[] IS NULL OR i.kind = ANY(%(kinds)s::text[]))
FOR UPDATE OF i"""
    ).format(
        access=ACCESS_JOIN,
        scope=scope_clause(scoped),
        not_expired=NOT_EXPIRED,
        score=DECAY_SCORE,
    )
    if delete:
        change = sql.SQL(
            """
DELETE FROM lgm_memory_items i USING doomed d WHERE i.id = d.id
RETURNING i.ns, i.key, i.text AS old_text, NULL::text AS new_text,
          i.value AS old_value, NULL::jsonb AS new_value"""
        )
        action = sql.Literal("delete")
    else:
        change = sql.SQL(
            """
UPDATE lgm_memory_items i
SET invalid_at = now(), updated_at = now(),
    value = jsonb_set(i.value, '{invalid_at}', to_jsonb(
        to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '+00:00'))
FROM doomed d WHERE i.id = d.id
RETURNING i.ns, i.key, i.text AS old_text, i.text AS new_text,
          i.value - 'invalid_at' AS old_value, i.value AS new_value"""
        )
        action = sql.Literal("invalidate")
    return sql.SQL(
        """
WITH doomed AS ({candidates}), changed AS ({change}), logged AS (
    INSERT INTO lgm_memory_history (ns, key, action, old_text, new_text, old_value, new_value,
                                    actor)
    SELECT ns, key, {action}, old_text, new_text, old_value, new_value, 'decay' FROM changed
)
SELECT count(*) AS n FROM changed"""
    ).format(candidates=candidates, change=change, action=action)


# Bulk loads (``bulk_load``): which batches of a named load committed, and the vector index a
# load with ``rebuild_index`` dropped (``lgm_store_meta`` name ``vector_index``: ``deferred``).
LOAD_STATE = "SELECT batch, items, digest FROM lgm_memory_loads WHERE name = %(name)s"
INDEX_STATE = "SELECT value FROM lgm_store_meta WHERE name = 'vector_index'"
START_LOAD = """
INSERT INTO lgm_memory_loads (name, batch, items) VALUES (%(name)s, -1, %(items)s)
ON CONFLICT (name, batch) DO NOTHING"""
RECORD_LOAD_BATCH = """
INSERT INTO lgm_memory_loads (name, batch, items, digest)
VALUES (%(name)s, %(batch)s, %(items)s, %(digest)s)
ON CONFLICT (name, batch) DO UPDATE SET items = excluded.items, digest = excluded.digest"""
FINISH_LOAD = """
INSERT INTO lgm_memory_loads (name, batch, items) VALUES (%(name)s, -2, %(items)s)
ON CONFLICT (name, batch) DO UPDATE SET items = excluded.items"""
SET_META = """
INSERT INTO lgm_store_meta (name, value) VALUES (%(name)s, %(value)s)
ON CONFLICT (name) DO UPDATE SET value = excluded.value"""
DELETE_META = "DELETE FROM lgm_store_meta WHERE name = %(name)s"
VECTOR_ROWS = "SELECT count(*) AS n FROM lgm_memory_items WHERE embedding IS NOT NULL"
INDEX_MEMORY = "SELECT set_config('maintenance_work_mem', %(kb)s || 'kB', true)"
