"""Versioned, idempotent schema migrations of the Postgres memory store (append-only).

Each step is a function of the :class:`MigrationContext` (vector mode, dimensions) that
returns SQL; ``setup()`` applies the steps whose version is not yet recorded in
``lgm_store_migrations``. Never edit or reorder a released step: append a new one.

Example:
    ```python
    from langgraph_recall.store.postgres._migrations import MIGRATIONS, MigrationContext

    ctx = MigrationContext(vector_mode="exact", dims=64)
    assert all(isinstance(step(ctx), str) for step in MIGRATIONS)
    ```
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from langgraph_recall._pg.epoch import EPOCH_FUNCTION
from langgraph_recall.store._bounds import MAX_TIME, MAX_TTL_MINUTES, MIN_TIME

__all__ = [
    "CJK_CHARACTERS",
    "GLOBAL_LOCK",
    "LOCK_BUCKETS",
    "LOCK_CLASS",
    "MIGRATIONS",
    "MIGRATIONS_TABLE_SQL",
    "STATISTICS_LOCK",
    "MigrationContext",
    "VectorMode",
    "vector_index_sql",
]

VectorMode = Literal["pgvector", "exact"]

IP_INDEX = "lgm_memory_items_hnsw_ip"
"""The HNSW index (``vector_ip_ops``) vector search uses on the pgvector path."""


@dataclass(frozen=True)
class MigrationContext:
    """What a migration step may depend on."""

    vector_mode: VectorMode
    dims: int
    hnsw_m: int = 16
    hnsw_ef_construction: int = 64
    vector_type: str = "vector"  # pgvector column type: "vector" (float4) or "halfvec"
    text_search_config: str = "english"  # the regconfig lexical text is re-derived with


MIGRATIONS_TABLE_SQL = """
CREATE TABLE IF NOT EXISTS lgm_store_migrations (
    v integer PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
)"""


def _meta(_: MigrationContext) -> str:
    return """
CREATE TABLE IF NOT EXISTS lgm_store_meta (
    name text PRIMARY KEY,
    value text NOT NULL
)"""


def _items(_: MigrationContext) -> str:
    return """
CREATE TABLE IF NOT EXISTS lgm_memory_items (
    id bigserial PRIMARY KEY,
    ns text COLLATE "C" NOT NULL,
    key text NOT NULL,
    value jsonb NOT NULL,
    text text,
    tsv tsvector,
    doc_len integer NOT NULL DEFAULT 0,
    kind text,
    importance real,
    valid_from timestamptz NOT NULL DEFAULT now(),
    invalid_at timestamptz,
    expires_at timestamptz,
    ttl_minutes double precision,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    access_count integer NOT NULL DEFAULT 0,
    last_accessed_at timestamptz,
    derived_from jsonb,
    txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    CONSTRAINT lgm_memory_items_ns_key UNIQUE (ns, key)
) WITH (fillfactor = 90)"""


def _element(ctx: MigrationContext) -> str:
    """The pgvector type of the embedding column (a database keeps the one it started with)."""
    return "halfvec" if ctx.vector_type == "halfvec" else "vector"


def _embedding(ctx: MigrationContext) -> str:
    column = f"{_element(ctx)}({int(ctx.dims)})" if ctx.vector_mode == "pgvector" else "bytea"
    return f"ALTER TABLE lgm_memory_items ADD COLUMN IF NOT EXISTS embedding {column}"


def _indexes(_: MigrationContext) -> str:
    return """
CREATE INDEX IF NOT EXISTS lgm_memory_items_recent ON lgm_memory_items (ns, updated_at DESC);
CREATE INDEX IF NOT EXISTS lgm_memory_items_tsv ON lgm_memory_items USING gin (tsv);
CREATE INDEX IF NOT EXISTS lgm_memory_items_expires ON lgm_memory_items (expires_at)
    WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS lgm_memory_items_txid ON lgm_memory_items (txid);
CREATE INDEX IF NOT EXISTS lgm_memory_items_derived ON lgm_memory_items (id)
    WHERE derived_from IS NOT NULL"""


def _vector_index(ctx: MigrationContext) -> str:
    if ctx.vector_mode != "pgvector":
        return "SELECT 1"
    return (
        "CREATE INDEX IF NOT EXISTS lgm_memory_items_hnsw ON lgm_memory_items "
        f"USING hnsw (embedding {_element(ctx)}_cosine_ops) WITH (m = {int(ctx.hnsw_m)}, "
        f"ef_construction = {int(ctx.hnsw_ef_construction)})"
    )


def _history(_: MigrationContext) -> str:
    return """
CREATE TABLE IF NOT EXISTS lgm_memory_history (
    id bigserial PRIMARY KEY,
    ns text COLLATE "C" NOT NULL,
    key text NOT NULL,
    action text NOT NULL,
    old_text text,
    new_text text,
    old_value jsonb,
    new_value jsonb,
    actor text,
    at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS lgm_memory_history_item ON lgm_memory_history (ns, key, id)"""


def _try_timestamptz(_: MigrationContext) -> str:
    return r"""
CREATE OR REPLACE FUNCTION lgm_try_timestamptz(raw text) RETURNS timestamptz
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
    IF raw IS NULL OR raw !~ '^\d{4}-\d{2}-\d{2}' THEN
        RETURN NULL;
    END IF;
    IF raw ~ '[Tt ]\d{2}:\d{2}' AND raw ~ '(Z|z|[+-]\d{2}(:?\d{2})?)$' THEN
        RETURN raw::timestamptz;
    END IF;
    RETURN raw::timestamp AT TIME ZONE 'UTC';
EXCEPTION WHEN others THEN
    RETURN NULL;
END $$"""


def _lexicon(_: MigrationContext) -> str:
    """BM25 corpus statistics per namespace, kept exact by statement-level triggers.

    ``lgm_memory_lexicon`` holds the document frequency of every lexeme per namespace
    and ``lgm_memory_ns_stats`` the document count and total length; rows reaching zero
    are deleted, so erasing a namespace leaves none of its words behind.
    """
    return r"""
CREATE TABLE IF NOT EXISTS lgm_memory_lexicon (
    lexeme text NOT NULL,
    ns text COLLATE "C" NOT NULL,
    df integer NOT NULL,
    PRIMARY KEY (lexeme, ns)
);
CREATE TABLE IF NOT EXISTS lgm_memory_ns_stats (
    ns text COLLATE "C" PRIMARY KEY,
    n_docs bigint NOT NULL,
    total_len bigint NOT NULL
);
CREATE OR REPLACE FUNCTION lgm_memory_stats_apply(delta_lexemes jsonb, delta_docs jsonb)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lgm_memory_lexicon AS l (lexeme, ns, df)
    SELECT d.lexeme, d.ns, d.df
    FROM jsonb_to_recordset(delta_lexemes) AS d(lexeme text, ns text, df integer)
    ORDER BY d.lexeme, d.ns
    ON CONFLICT (lexeme, ns) DO UPDATE SET df = l.df + excluded.df;
    DELETE FROM lgm_memory_lexicon l
    USING jsonb_to_recordset(delta_lexemes) AS d(lexeme text, ns text, df integer)
    WHERE d.df < 0 AND l.lexeme = d.lexeme AND l.ns = d.ns AND l.df <= 0;
    INSERT INTO lgm_memory_ns_stats AS s (ns, n_docs, total_len)
    SELECT d.ns, d.n_docs, d.total_len
    FROM jsonb_to_recordset(delta_docs) AS d(ns text, n_docs bigint, total_len bigint)
    ORDER BY d.ns
    ON CONFLICT (ns) DO UPDATE SET n_docs = s.n_docs + excluded.n_docs,
                                   total_len = s.total_len + excluded.total_len;
    DELETE FROM lgm_memory_ns_stats s
    USING jsonb_to_recordset(delta_docs) AS d(ns text, n_docs bigint, total_len bigint)
    WHERE s.ns = d.ns AND s.n_docs <= 0;
END $$;
CREATE OR REPLACE FUNCTION lgm_memory_stats_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM lgm_memory_stats_apply(
        (SELECT coalesce(jsonb_agg(x), '[]') FROM (
            SELECT u.lexeme, n.ns, count(*) AS df
            FROM new_rows n CROSS JOIN LATERAL unnest(n.tsv) u GROUP BY 1, 2) x),
        (SELECT coalesce(jsonb_agg(x), '[]') FROM (
            SELECT n.ns, count(*) AS n_docs, sum(n.doc_len) AS total_len
            FROM new_rows n WHERE n.tsv IS NOT NULL GROUP BY 1) x));
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION lgm_memory_stats_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM lgm_memory_stats_apply(
        (SELECT coalesce(jsonb_agg(x), '[]') FROM (
            SELECT u.lexeme, o.ns, -count(*) AS df
            FROM old_rows o CROSS JOIN LATERAL unnest(o.tsv) u GROUP BY 1, 2) x),
        (SELECT coalesce(jsonb_agg(x), '[]') FROM (
            SELECT o.ns, -count(*) AS n_docs, -sum(o.doc_len) AS total_len
            FROM old_rows o WHERE o.tsv IS NOT NULL GROUP BY 1) x));
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION lgm_memory_stats_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
                   WHERE o.tsv IS DISTINCT FROM n.tsv OR o.ns <> n.ns) THEN
        RETURN NULL;
    END IF;
    PERFORM lgm_memory_stats_apply(
        (SELECT coalesce(jsonb_agg(x), '[]') FROM (
            SELECT c.lexeme, c.ns, sum(c.df) AS df FROM (
                SELECT u.lexeme, n.ns, 1 AS df
                FROM old_rows o JOIN new_rows n ON n.id = o.id
                CROSS JOIN LATERAL unnest(n.tsv) u WHERE o.tsv IS DISTINCT FROM n.tsv
                UNION ALL
                SELECT u.lexeme, o.ns, -1
                FROM old_rows o JOIN new_rows n ON n.id = o.id
                CROSS JOIN LATERAL unnest(o.tsv) u WHERE o.tsv IS DISTINCT FROM n.tsv
            ) c GROUP BY 1, 2 HAVING sum(c.df) <> 0) x),
        (SELECT coalesce(jsonb_agg(x), '[]') FROM (
            SELECT c.ns, sum(c.n_docs) AS n_docs, sum(c.total_len) AS total_len FROM (
                SELECT n.ns, (n.tsv IS NOT NULL)::int AS n_docs,
                       CASE WHEN n.tsv IS NULL THEN 0 ELSE n.doc_len END AS total_len
                FROM old_rows o JOIN new_rows n ON n.id = o.id
                WHERE o.tsv IS DISTINCT FROM n.tsv
                UNION ALL
                SELECT o.ns, -(o.tsv IS NOT NULL)::int,
                       CASE WHEN o.tsv IS NULL THEN 0 ELSE -o.doc_len END
                FROM old_rows o JOIN new_rows n ON n.id = o.id
                WHERE o.tsv IS DISTINCT FROM n.tsv
            ) c GROUP BY 1) x));
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS lgm_memory_stats_ins ON lgm_memory_items;
CREATE TRIGGER lgm_memory_stats_ins AFTER INSERT ON lgm_memory_items
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION lgm_memory_stats_insert();
DROP TRIGGER IF EXISTS lgm_memory_stats_del ON lgm_memory_items;
CREATE TRIGGER lgm_memory_stats_del AFTER DELETE ON lgm_memory_items
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION lgm_memory_stats_delete();
DROP TRIGGER IF EXISTS lgm_memory_stats_upd ON lgm_memory_items;
CREATE TRIGGER lgm_memory_stats_upd AFTER UPDATE ON lgm_memory_items
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION lgm_memory_stats_update();
INSERT INTO lgm_memory_lexicon (lexeme, ns, df)
SELECT u.lexeme, i.ns, count(*) FROM lgm_memory_items i CROSS JOIN LATERAL unnest(i.tsv) u
GROUP BY 1, 2 ON CONFLICT DO NOTHING;
INSERT INTO lgm_memory_ns_stats (ns, n_docs, total_len)
SELECT i.ns, count(*), sum(i.doc_len) FROM lgm_memory_items i WHERE i.tsv IS NOT NULL
GROUP BY 1 ON CONFLICT DO NOTHING"""


def _storage(_: MigrationContext) -> str:
    """Keep scan-hot columns inline and move embeddings out of the heap row.

    Lexical scoring reads ``tsv``/``value`` of every matching row; a 1.5 KB embedding
    inline would make each heap page hold only a few rows (HNSW keeps its own copy).
    (Embeddings are back in the row since :func:`_inline_embeddings`: the scope scan reads
    them all.)
    """
    return """
ALTER TABLE lgm_memory_items ALTER COLUMN embedding SET STORAGE EXTERNAL;
ALTER TABLE lgm_memory_items ALTER COLUMN tsv SET STORAGE MAIN;
ALTER TABLE lgm_memory_items ALTER COLUMN value SET STORAGE MAIN;
ALTER TABLE lgm_memory_items SET (toast_tuple_target = 256)"""


def _gin_without_pending_list(_: MigrationContext) -> str:
    """Searches must not scan GIN's pending list (linear; it grows with every put until a
    vacuum): insert into the full-text index directly."""
    return "ALTER INDEX lgm_memory_items_tsv SET (fastupdate = off)"


def _access_table(_: MigrationContext) -> str:
    """Access reinforcement (count, last access) in its own narrow table.

    A search touches its results; updating the wide item row made most of those updates
    non-HOT (a new heap tuple plus an HNSW, GIN and btree insert per result: ~20 ms per
    search at 100k memories). The item row keeps its legacy counters as a base; readers
    add this table's counts. Rows of deleted items are removed by a statement trigger.
    """
    return """
CREATE TABLE IF NOT EXISTS lgm_memory_access (
    id bigint PRIMARY KEY,
    access_count integer NOT NULL DEFAULT 0,
    last_accessed_at timestamptz
) WITH (fillfactor = 70);
CREATE OR REPLACE FUNCTION lgm_memory_access_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM lgm_memory_access a USING old_rows o WHERE a.id = o.id;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS lgm_memory_access_del ON lgm_memory_items;
CREATE TRIGGER lgm_memory_access_del AFTER DELETE ON lgm_memory_items
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION lgm_memory_access_delete()"""


def _inner_product_vectors(ctx: MigrationContext) -> str:
    """Vector similarity becomes the inner product with the unit query vector.

    Stored vectors are unit vectors, or the mean of unit vectors for a memory embedded
    both with its context and alone (``memory_vector``); the inner product then gives the
    mean cosine similarity, which cosine distance cannot. pgvector: legacy rows are
    normalised (inner product = their old cosine), an HNSW index with ``vector_ip_ops``
    replaces the cosine one. The exact path needs no DDL (it computes the inner product
    in process); rows written before this version by an embedder that does not return
    unit vectors keep their length until they are written again.
    """
    if ctx.vector_mode != "pgvector":
        return "SELECT 1"
    return f"""
UPDATE lgm_memory_items SET embedding = l2_normalize(embedding)
WHERE embedding IS NOT NULL AND abs(vector_norm(embedding::vector) - 1) > 1e-6;
{vector_index_sql(ctx)};
DROP INDEX IF EXISTS lgm_memory_items_hnsw"""


def vector_index_sql(ctx: MigrationContext) -> str:
    """The pgvector path's HNSW index (what setup creates and a bulk load rebuilds)."""
    return (
        f"CREATE INDEX IF NOT EXISTS {IP_INDEX} ON lgm_memory_items "
        f"USING hnsw (embedding {_element(ctx)}_ip_ops) WITH (m = {int(ctx.hnsw_m)}, "
        f"ef_construction = {int(ctx.hnsw_ef_construction)})"
    )


def _refreshed_expiry(_: MigrationContext) -> str:
    """A read's TTL refresh is written to the narrow access row, not the item row.

    Rewriting ``lgm_memory_items.expires_at`` on every read was a non-HOT update (the
    column is indexed, the pages full): a new heap tuple and HNSW, GIN and btree entries
    per returned memory, ~25 ms per search of 10 TTL'd results at 100k memories. An item
    is now unexpired while ``expires_at`` or its ``refreshed_until`` lies ahead; the
    sweeper folds a due refresh back into ``expires_at``.

    The check is a function declared cheap (``COST 1``): as an inline ``EXISTS`` its
    sub-plan cost was charged to every row a plan filters, which tipped the planner from
    scanning a small namespace exactly to the approximate HNSW walk. It runs only for
    items whose ``expires_at`` has passed.
    """
    return """
ALTER TABLE lgm_memory_access ADD COLUMN IF NOT EXISTS refreshed_until timestamptz;
CREATE OR REPLACE FUNCTION lgm_memory_refreshed(item bigint) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE COST 1 AS $$
    SELECT EXISTS (SELECT 1 FROM lgm_memory_access r
                   WHERE r.id = item AND r.refreshed_until > now())
$$"""


def _time_bounds(_: MigrationContext) -> str:
    """Every stored time is one Python can read back, and no interval ends before it starts.

    Rows written before this version may hold times outside ``_bounds.MIN_TIME`` ..
    ``MAX_TIME`` (a ``valid_from`` of year 1 at +14:00 is a BC timestamp, and reading it
    failed every search of its namespace): they are clamped into the range, and an interval
    that ended before it started is closed at its start (never valid either way, as before).
    A TTL beyond ``MAX_TTL_MINUTES`` (stored when a put also gave ``expires_at``) made
    every read's TTL refresh overflow; it is capped.
    Constraints then keep every writer inside the rules the store checks at its door.
    """
    low, high = f"'{MIN_TIME.isoformat()}'::timestamptz", f"'{MAX_TIME.isoformat()}'::timestamptz"
    last = f"({high} - interval '1 microsecond')"
    ttl = repr(MAX_TTL_MINUTES)

    def clamp(column: str) -> str:  # NULL stays NULL (least/greatest would skip it)
        return (
            f"CASE WHEN {column} < {low} THEN {low} "
            f"WHEN {column} >= {high} THEN {last} ELSE {column} END"
        )

    def outside(column: str) -> str:
        return f"({column} < {low} OR {column} >= {high})"

    def inside(column: str) -> str:
        return f"({column} IS NULL OR ({column} >= {low} AND {column} < {high}))"

    return f"""
UPDATE lgm_memory_items SET valid_from = {clamp("valid_from")},
    invalid_at = {clamp("invalid_at")}, expires_at = {clamp("expires_at")}
WHERE {outside("valid_from")} OR {outside("invalid_at")} OR {outside("expires_at")};
UPDATE lgm_memory_items SET invalid_at = valid_from WHERE invalid_at < valid_from;
UPDATE lgm_memory_items SET ttl_minutes = {ttl} WHERE ttl_minutes > {ttl};
ALTER TABLE lgm_memory_items DROP CONSTRAINT IF EXISTS lgm_memory_items_times;
ALTER TABLE lgm_memory_items ADD CONSTRAINT lgm_memory_items_times CHECK (
    {inside("valid_from")} AND {inside("invalid_at")} AND {inside("expires_at")}
    AND (invalid_at IS NULL OR invalid_at >= valid_from)
    AND (ttl_minutes IS NULL OR ttl_minutes <= {ttl}))"""


def _erasure_lineage(_: MigrationContext) -> str:
    """What ``forget`` needs to find every version of every memory derived from a source.

    ``lgm_memory_sources(value, ns)`` reads the ``derived_from`` refs of a stored value
    (history keeps values as written: keys of the same namespace, or ``{"namespace",
    "key"}`` objects) as encoded ``(ns, key)`` pairs, like ``_values._derived_refs``; a
    partial index finds the history rows that have any.
    """
    return r"""
CREATE OR REPLACE FUNCTION lgm_memory_sources(v jsonb, home text)
RETURNS TABLE (ns text, key text) LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN jsonb_typeof(r) = 'object' AND jsonb_typeof(r -> 'namespace') = 'array'
                THEN (SELECT coalesce(string_agg(l.label || '.', '' ORDER BY l.n), '')
                      FROM jsonb_array_elements_text(r -> 'namespace')
                           WITH ORDINALITY AS l(label, n))
                ELSE home END,
           CASE WHEN jsonb_typeof(r) = 'string' THEN r #>> '{}' ELSE r ->> 'key' END
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(v -> 'derived_from') = 'array'
                                   THEN v -> 'derived_from' ELSE '[]'::jsonb END) AS r
$$;
CREATE INDEX IF NOT EXISTS lgm_memory_history_derived ON lgm_memory_history (id)
    WHERE old_value ? 'derived_from' OR new_value ? 'derived_from'"""


CJK_CHARACTERS = (
    r"\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    r"\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
"""Han ideographs, kana and Hangul as a Postgres regex character-class body (written without
spaces between words, so the text-search parsers keep a whole run as one token)."""


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _cjk_lexical(ctx: MigrationContext) -> str:
    """Lexical text that matches Chinese, Japanese and Korean as it matches English.

    Postgres' parsers keep a run of CJK characters as one token, so "西湖" never matched
    "用户住在杭州西湖区". ``lgm_lexical_text`` rewrites every run of CJK characters
    as its overlapping character bigrams (a single character stays a unigram), separated
    by spaces from the text around it (one pass over the characters: linear in the text);
    text without CJK characters is returned as it is.
    ``lgm_lexical_vector(cfg, text)`` is the one ``tsvector`` of a document *and* of a query,
    so a query's bigrams are found in every document containing them. Stored rows with
    CJK characters are re-derived with the text-search configuration of the store that
    runs ``setup()`` (the statistics triggers keep BM25's document frequencies exact).
    """
    cls = f"[{CJK_CHARACTERS}]"
    cfg = _sql_literal(ctx.text_search_config)
    return rf"""
CREATE OR REPLACE FUNCTION lgm_lexical_text(doc text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE WHEN doc !~ '{cls}' THEN doc ELSE (
        SELECT string_agg(CASE WHEN NOT c.cjk THEN c.ch
                               WHEN c.next_cjk THEN ' ' || c.ch || c.next_ch || ' '
                               WHEN NOT c.prev_cjk THEN ' ' || c.ch || ' '
                               ELSE ' ' END, '' ORDER BY c.i)
        FROM (SELECT u.ch, u.i, u.cjk, lead(u.ch) OVER w AS next_ch,
                     coalesce(lead(u.cjk) OVER w, false) AS next_cjk,
                     coalesce(lag(u.cjk) OVER w, false) AS prev_cjk
              FROM (SELECT x.ch, x.i, x.ch ~ '{cls}' AS cjk
                    FROM unnest(string_to_array(doc, NULL)) WITH ORDINALITY AS x(ch, i)) u
              WINDOW w AS (ORDER BY u.i)) c
    ) END
$$;
CREATE OR REPLACE FUNCTION lgm_lexical_vector(cfg regconfig, doc text) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT to_tsvector(cfg, lgm_lexical_text(doc))
$$;
UPDATE lgm_memory_items i SET tsv = d.tsv, doc_len = d.doc_len
FROM (
    SELECT r.id, v.tsv,
           (SELECT coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0)
            FROM unnest(v.tsv) u)::integer AS doc_len
    FROM lgm_memory_items r
    CROSS JOIN LATERAL (SELECT lgm_lexical_vector({cfg}::regconfig, r.text) AS tsv) v
    WHERE r.text ~ '{cls}'
) d
WHERE i.id = d.id AND i.tsv IS DISTINCT FROM d.tsv"""


LOCK_CLASS = 0x4C474D
"""``"LGM"``: the first key of the store's two-int advisory locks (apart from bigint keys)."""
LOCK_BUCKETS = 128
"""Namespace lock buckets (a power of two): a transaction holds at most this many locks."""
GLOBAL_LOCK = -1
"""Second key of the store-wide lock: shared by every writer; exclusive for a migrating
``setup`` and for the rare ``forget`` whose reach keeps changing under it."""
STATISTICS_LOCK = -2
"""Second key of the lock only statistics refreshes take (after an erasure), one at a time."""


def _lock_order(_: MigrationContext) -> str:
    """The one lock order of every transaction that changes items or their statistics.

    ``lgm_memory_lock(namespaces)`` takes the store-wide lock in shared mode, then one
    transaction-scoped advisory lock per namespace bucket (``hashtext(ns)``, LOCK_BUCKETS
    buckets), in ascending bucket order, before the transaction touches any row. Every row
    a write locks belongs to one namespace (its item, its ``lgm_memory_lexicon`` and
    ``lgm_memory_ns_stats`` rows, its access row), so two transactions that could wait for
    each other's rows first meet at a bucket lock, taken in one global order: a deadlock
    between them is impossible. ``forget`` locks the namespaces its erasure reaches the
    same way, taking any it finds later only with a try-lock, which never waits.
    """
    return f"""
CREATE OR REPLACE FUNCTION lgm_memory_lock(namespaces text[]) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    bucket integer;
    taken integer := 0;
BEGIN
    PERFORM pg_advisory_xact_lock_shared({LOCK_CLASS}, {GLOBAL_LOCK});
    FOR bucket IN
        SELECT DISTINCT hashtext(n) & {LOCK_BUCKETS - 1} FROM unnest(namespaces) AS n ORDER BY 1
    LOOP
        PERFORM pg_advisory_xact_lock({LOCK_CLASS}, bucket);
        taken := taken + 1;
    END LOOP;
    RETURN taken;
END $$"""


def _server_epoch(_: MigrationContext) -> str:
    # the exact-path cache compares it on each refresh: a watermark (a transaction id) is
    # meaningful only within one server history (a promoted standby's ids restart lower)
    return f"""
DO $epoch$ BEGIN
    IF to_regprocedure('lgm_epoch()') IS NULL THEN
        EXECUTE {_dollar_quoted(EPOCH_FUNCTION)};
    END IF;
END $epoch$"""


def _bulk_loads(_: MigrationContext) -> str:
    """The batches of each named bulk load that committed (``bulk_load(resume_key=...)``):
    a load started again skips them, once each batch's ``digest`` (a hash of its puts'
    namespaces and keys) shows it is the same load. Names, counts and digests only, no
    memory; ``batch = -1`` holds the load's batch size, ``batch = -2`` its total once it
    finished."""
    return """
CREATE TABLE IF NOT EXISTS lgm_memory_loads (
    name text NOT NULL,
    batch integer NOT NULL,
    items integer NOT NULL,
    digest text,
    PRIMARY KEY (name, batch)
)"""


def _without_lexicon(_: MigrationContext) -> str:
    """BM25's document frequencies are counted from the scope at search time; the lexicon goes.

    ``lgm_memory_lexicon`` kept one row per (lexeme, namespace) -- about nine B-tree rows per
    memory, the largest table after the items at scale, and a statement trigger's work on every
    put. A search now counts the frequencies of its own few lexemes over the scope's rows
    (the scope's btree or the full-text index, whichever the planner finds cheaper), as the
    one-statement scope scan always did. ``lgm_memory_ns_stats`` (one row per namespace:
    document count and total length) stays, kept exact by the same statement triggers, which
    no longer unnest any ``tsvector``.
    """
    return r"""
CREATE OR REPLACE FUNCTION lgm_memory_ns_stats_apply(delta_docs jsonb)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lgm_memory_ns_stats AS s (ns, n_docs, total_len)
    SELECT d.ns, d.n_docs, d.total_len
    FROM jsonb_to_recordset(delta_docs) AS d(ns text, n_docs bigint, total_len bigint)
    WHERE d.n_docs <> 0 OR d.total_len <> 0
    ORDER BY d.ns
    ON CONFLICT (ns) DO UPDATE SET n_docs = s.n_docs + excluded.n_docs,
                                   total_len = s.total_len + excluded.total_len;
    DELETE FROM lgm_memory_ns_stats s
    USING jsonb_to_recordset(delta_docs) AS d(ns text, n_docs bigint, total_len bigint)
    WHERE s.ns = d.ns AND s.n_docs <= 0;
END $$;
CREATE OR REPLACE FUNCTION lgm_memory_stats_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM lgm_memory_ns_stats_apply((SELECT coalesce(jsonb_agg(x), '[]') FROM (
        SELECT n.ns, count(*) AS n_docs, sum(n.doc_len) AS total_len
        FROM new_rows n WHERE n.tsv IS NOT NULL GROUP BY 1) x));
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION lgm_memory_stats_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM lgm_memory_ns_stats_apply((SELECT coalesce(jsonb_agg(x), '[]') FROM (
        SELECT o.ns, -count(*) AS n_docs, -sum(o.doc_len) AS total_len
        FROM old_rows o WHERE o.tsv IS NOT NULL GROUP BY 1) x));
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION lgm_memory_stats_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
                   WHERE o.ns <> n.ns OR (o.tsv IS NULL) <> (n.tsv IS NULL)
                      OR (n.tsv IS NOT NULL AND o.doc_len <> n.doc_len)) THEN
        RETURN NULL;
    END IF;
    PERFORM lgm_memory_ns_stats_apply((SELECT coalesce(jsonb_agg(x), '[]') FROM (
        SELECT c.ns, sum(c.n_docs) AS n_docs, sum(c.total_len) AS total_len FROM (
            SELECT n.ns, (n.tsv IS NOT NULL)::int AS n_docs,
                   CASE WHEN n.tsv IS NULL THEN 0 ELSE n.doc_len END AS total_len
            FROM old_rows o JOIN new_rows n ON n.id = o.id
            UNION ALL
            SELECT o.ns, -(o.tsv IS NOT NULL)::int,
                   CASE WHEN o.tsv IS NULL THEN 0 ELSE -o.doc_len END
            FROM old_rows o JOIN new_rows n ON n.id = o.id
        ) c GROUP BY 1) x));
    RETURN NULL;
END $$;
DROP FUNCTION IF EXISTS lgm_memory_stats_apply(jsonb, jsonb);
DROP TABLE IF EXISTS lgm_memory_lexicon"""


def _entity_links(_: MigrationContext) -> str:
    """The entities each memory mentions, for search to link memories through them.

    One row per (memory, entity): the entity's normalised name and the memory's namespace,
    so a search reads only its own scope's links (``(entity, ns)``: a name's rows of one
    user are a range of that index). A statement trigger removes the rows of deleted items
    (``delete``, TTL sweeps, decay, ``forget``), as it does their access rows; the upsert
    replaces an updated memory's. Memories written before this version have no links until
    they are written again.
    """
    return """
CREATE TABLE IF NOT EXISTS lgm_memory_entities (
    id bigint NOT NULL,
    ns text COLLATE "C" NOT NULL,
    entity text NOT NULL,
    PRIMARY KEY (id, entity)
);
CREATE INDEX IF NOT EXISTS lgm_memory_entities_name ON lgm_memory_entities (entity, ns);
CREATE OR REPLACE FUNCTION lgm_memory_entities_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM lgm_memory_entities e USING old_rows o WHERE e.id = o.id;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS lgm_memory_entities_del ON lgm_memory_items;
CREATE TRIGGER lgm_memory_entities_del AFTER DELETE ON lgm_memory_items
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION lgm_memory_entities_delete()"""


def _inline_embeddings(_: MigrationContext) -> str:
    """Embeddings stay in their row (``MAIN``) instead of in the TOAST table (``EXTERNAL``).

    A search of a scope of up to ``scan_rows`` memories reads every embedding of the scope in
    one statement (the scope scan); out of line, each one cost a probe of the TOAST index and
    a read of its chunk -- about 300 buffers for a 100-memory user instead of about 35 (p95
    of a first search of 400 users among 2,000: 8.1 -> 7.2 ms, 384-d). A row with its
    embedding is ~2.1 KB (three to a page); an embedding too large for a page
    (over ~1,900 dimensions in float4) still moves out. Rows written before keep theirs out
    of line until they are written again (or ``VACUUM FULL lgm_memory_items``)."""
    return "ALTER TABLE lgm_memory_items ALTER COLUMN embedding SET STORAGE MAIN"


def _dollar_quoted(text: str) -> str:
    return f"$body${text}$body$"


MIGRATIONS: list[Callable[[MigrationContext], str]] = [
    _meta,
    _items,
    _embedding,
    _indexes,
    _vector_index,
    _history,
    _try_timestamptz,
    _lexicon,
    _storage,
    _gin_without_pending_list,
    _access_table,
    _inner_product_vectors,
    _refreshed_expiry,
    _time_bounds,
    _erasure_lineage,
    _lock_order,
    _server_epoch,
    _cjk_lexical,
    _bulk_loads,
    _without_lexicon,
    _entity_links,
    _inline_embeddings,
]
