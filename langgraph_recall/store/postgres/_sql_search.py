"""The search statements of the Postgres memory store: recency, hybrid, one small scope (pure).

:func:`search_recent_sql` (no query), :func:`search_hybrid_sql` /
:func:`build_search_hybrid_sql` (BM25 and vector candidates through the indexes) and
:func:`scope_search_sql` (a scope of at most :data:`SCOPE_SCAN_ROWS` memories in one scan).
:mod:`~langgraph_recall.store.postgres._sql` re-exports them; the store reads them there.

Example:
    ```python
    from langgraph_recall.store.postgres._sql_search import search_hybrid_sql

    query = search_hybrid_sql(
        vector_mode="pgvector", scoped=True, include_invalid=False, filter_clause=None
    )
    assert "lex_ranked" in query.as_string(None)
    ```
"""

from __future__ import annotations

import functools

from psycopg import sql

from langgraph_recall.store.postgres._migrations import VectorMode
from langgraph_recall.store.postgres._sql_clauses import (
    ACCESS_JOIN,
    CANDIDATE_COLUMNS,
    ITEM_COLUMNS,
    SCOPE,
    element,
    scope_clause,
    stats_scope,
    visible_clause,
)

__all__ = [
    "EXACT_VECTOR_SCALE",
    "SCOPE_SCAN_ROWS",
    "build_search_hybrid_sql",
    "scope_search_sql",
    "search_hybrid_sql",
    "search_recent_sql",
]


def search_recent_sql(
    *, scoped: bool, include_invalid: bool, filter_clause: sql.Composable | None
) -> sql.Composed:
    """Search without a query: matches ordered by recency (``updated_at`` desc)."""
    return sql.SQL(
        """
SELECT {cols} FROM lgm_memory_items i {access}
WHERE {scope} AND {visible} AND {filter}
ORDER BY i.updated_at DESC, i.id DESC
LIMIT %(limit)s OFFSET %(offset)s"""
    ).format(
        cols=ITEM_COLUMNS,
        access=ACCESS_JOIN,
        scope=scope_clause(scoped),
        visible=visible_clause(include_invalid),
        filter=filter_clause or sql.SQL("true"),
    )


def search_hybrid_sql(
    *,
    vector_mode: VectorMode,
    scoped: bool,
    include_invalid: bool,
    filter_clause: sql.Composable | None,
    vector_type: str = "vector",
    linked: bool = False,
) -> sql.Composed:
    """:func:`build_search_hybrid_sql`, built once per shape when there is no filter."""
    if filter_clause is None:
        return _unfiltered_search_hybrid_sql(
            vector_mode, scoped, include_invalid, vector_type, linked
        )
    return build_search_hybrid_sql(
        vector_mode=vector_mode,
        scoped=scoped,
        include_invalid=include_invalid,
        filter_clause=filter_clause,
        vector_type=vector_type,
        linked=linked,
    )


@functools.lru_cache(maxsize=32)
def _unfiltered_search_hybrid_sql(
    vector_mode: VectorMode, scoped: bool, include_invalid: bool, vector_type: str, linked: bool
) -> sql.Composed:
    return build_search_hybrid_sql(
        vector_mode=vector_mode,
        scoped=scoped,
        include_invalid=include_invalid,
        filter_clause=None,
        vector_type=vector_type,
        linked=linked,
    )


def build_search_hybrid_sql(
    *,
    vector_mode: VectorMode,
    scoped: bool,
    include_invalid: bool,
    filter_clause: sql.Composable | None,
    vector_type: str = "vector",
    linked: bool = False,
) -> sql.Composed:
    """Hybrid candidate query: top BM25 matches ∪ top vector neighbours, both signals filled.

    BM25 (``k1``, ``b``) runs on the stored ``tsvector``: term frequency from lexeme
    positions, document length ``doc_len``, document frequency counted over the scope's rows
    for the query's lexemes only, corpus size / average length from ``lgm_memory_ns_stats``
    (kept exact by triggers). Lexical candidates come from a GIN search for the query's
    rarest lexemes, OR-ed, as long as their document frequencies add up to at most
    ``lex_budget``: a query made only of words more common than that picks no lexical
    candidates (scoring thousands of documents for one common word would cost more than it
    ranks). Every vector candidate is BM25-scored as well, on all the query's lexemes, so
    both signals are filled for every candidate. Vector similarity is the inner product of
    the stored vector (unit, or a mean of unit vectors: ``memory_vector``) with the unit
    query vector ``qvec``. On the pgvector path the vector list is ``ORDER BY embedding <#>
    query LIMIT n_vec``: over the scope's own rows when the scope is small beside the table
    (:data:`EXACT_VECTOR_SCALE`), else through HNSW (``vector_ip_ops``); on the exact path
    the caller passes candidate ids ordered by exact similarity (``vec_ids``) and the query
    keeps the first ``n_vec`` that pass the same predicates. ``linked``: the memories
    ``%(link_ids)s`` (linked to the query's entities) that pass them are candidates too,
    scored the same way.
    """
    where = sql.SQL("{} AND {} AND {}").format(
        scope_clause(scoped), visible_clause(include_invalid), filter_clause or sql.SQL("true")
    )
    if vector_mode == "pgvector":
        # a scope small beside the table (EXACT_VECTOR_SCALE): exact distances over its rows
        # (the scope's btree; "+ 0" keeps the HNSW index out), else the HNSW index; the
        # condition is a one-time filter, so only one of the two branches runs
        vector_top = sql.SQL(
            """
vec_path AS MATERIALIZED (
    SELECT (SELECT n FROM corpus) ^ 2 <= %(exact_scale)s::float8 * %(n_vec)s
           * greatest((SELECT t.reltuples FROM pg_class t
                       WHERE t.oid = 'lgm_memory_items'::regclass), 1) AS exact
), vec_top AS (
    SELECT c.id, c.dist, c.tsv, c.doc_len, row_number() OVER (ORDER BY c.dist, c.id) AS rnk
    FROM ((SELECT i.id, i.tsv, i.doc_len, i.embedding <#> %(qvec)s::real[]::{t} AS dist
           FROM lgm_memory_items i
           WHERE (SELECT exact FROM vec_path)
             AND i.embedding IS NOT NULL AND {where}
           ORDER BY (i.embedding <#> %(qvec)s::real[]::{t}) + 0, i.id
           LIMIT %(n_vec)s)
          UNION ALL
          (SELECT i.id, i.tsv, i.doc_len, i.embedding <#> %(qvec)s::real[]::{t} AS dist
           FROM lgm_memory_items i
           WHERE NOT (SELECT exact FROM vec_path)
             AND i.embedding IS NOT NULL AND {where}
           ORDER BY i.embedding <#> %(qvec)s::real[]::{t}
           LIMIT %(n_vec)s)) c
)"""
        ).format(where=where, t=element(vector_type))
        # vector candidates reuse their distance: each recomputation detoasts an embedding
        similarity = sql.SQL("-coalesce(vt.dist, i.embedding <#> %(qvec)s::real[]::{t})").format(
            t=element(vector_type)
        )
    else:
        vector_top = sql.SQL(
            """
vec_top AS (
    SELECT c.id, c.tsv, c.doc_len, row_number() OVER (ORDER BY c.ord) AS rnk
    FROM (SELECT i.id, i.tsv, i.doc_len, v.ord
          FROM unnest(%(vec_ids)s::bigint[]) WITH ORDINALITY AS v(id, ord)
          JOIN lgm_memory_items i ON i.id = v.id
          WHERE i.embedding IS NOT NULL AND {where}
          ORDER BY v.ord
          LIMIT %(n_vec)s) c
)"""
        ).format(where=where)
        similarity = sql.Composed([sql.SQL("NULL::float8")])
    return sql.SQL(
        """
WITH q AS (
    SELECT tsvector_to_array(lgm_lexical_vector(%(cfg)s::regconfig, %(query)s)) AS lexemes
), corpus AS MATERIALIZED (
    SELECT coalesce(sum(s.n_docs), 0)::float8 AS n,
           coalesce(sum(s.total_len), 0)::float8 / greatest(coalesce(sum(s.n_docs), 0), 1)
               AS avgdl
    FROM lgm_memory_ns_stats s WHERE {stats_scope}
), any_lexeme AS (
    SELECT string_agg(
        '''' || replace(replace(l, '\\', '\\\\'), '''', '''''') || '''', ' | '
    )::tsquery AS query
    FROM unnest((SELECT lexemes FROM q)) AS l
), stats AS (
    -- the document frequencies of the query's lexemes over every row of the scope, counted
    -- here through the scope's btree or the full-text index (no table per lexeme)
    SELECT u.lexeme, count(*)::float8 AS df
    FROM lgm_memory_items i
    CROSS JOIN LATERAL unnest(ts_filter(setweight(i.tsv, 'A', (SELECT lexemes FROM q)), '{{a}}')) u
    WHERE i.tsv @@ (SELECT query FROM any_lexeme) AND {scope}
      AND u.lexeme = ANY((SELECT lexemes FROM q)::text[])
    GROUP BY u.lexeme
), chosen AS (
    SELECT c.lexeme FROM (
        SELECT s.lexeme, sum(s.df) OVER (ORDER BY s.df, s.lexeme) AS cumulative
        FROM stats s) c
    WHERE c.cumulative <= %(lex_budget)s
), tq AS (
    SELECT string_agg(
        '''' || replace(replace(c.lexeme, '\\', '\\\\'), '''', '''''') || '''', ' | '
    )::tsquery AS query
    FROM chosen c
), {vector_top}{link_top}, matched AS (
    SELECT i.id, i.tsv, i.doc_len FROM lgm_memory_items i
    WHERE i.tsv @@ (SELECT query FROM tq) AND {where}
    UNION ALL
    -- vector candidates are BM25-scored on every query lexeme, common ones included
    SELECT v.id, v.tsv, v.doc_len FROM vec_top v
    WHERE (v.tsv @@ (SELECT query FROM tq)) IS NOT TRUE{link_matched}
), terms AS (
    SELECT m.id, m.doc_len, u.lexeme,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf
    FROM matched m
    -- only the query's lexemes (weight A, then filtered): unnest yields a few rows, not all
    CROSS JOIN LATERAL unnest(ts_filter(setweight(m.tsv, 'A', (SELECT lexemes FROM q)), '{{a}}')) u
    WHERE u.lexeme = ANY((SELECT lexemes FROM q)::text[])
), lex AS (
    SELECT t.id,
           sum(ln(1 + (greatest(c.n, s.df) - s.df + 0.5) / (s.df + 0.5))
               * t.tf * (%(k1)s::float8 + 1)
               / (t.tf + %(k1)s::float8 * (1 - %(b)s::float8
                  + %(b)s::float8 * t.doc_len / greatest(c.avgdl, 1))))
               AS score
    FROM terms t JOIN stats s ON s.lexeme = t.lexeme CROSS JOIN corpus c
    GROUP BY t.id
), lex_ranked AS (
    SELECT l.id, l.score, row_number() OVER (ORDER BY l.score DESC, l.id) AS rnk FROM lex l
), cand AS (
    SELECT id FROM lex_ranked WHERE rnk <= %(n_lex)s UNION SELECT id FROM vec_top{link_cand}
)
SELECT {cols}, CASE WHEN lr.rnk <= %(n_lex)s THEN lr.rnk END AS lexical_rank,
       coalesce(lr.score, 0)::float8 AS lexical_score,
       vt.rnk AS vector_rank, {similarity} AS vector_similarity
FROM cand c
JOIN lgm_memory_items i ON i.id = c.id
{access}
LEFT JOIN lex_ranked lr ON lr.id = c.id
LEFT JOIN vec_top vt ON vt.id = c.id"""
    ).format(
        vector_top=vector_top,
        link_top=_LINK_TOP.format(where=where) if linked else sql.SQL(""),
        link_matched=_LINK_MATCHED if linked else sql.SQL(""),
        link_cand=sql.SQL(" UNION SELECT id FROM link_top") if linked else sql.SQL(""),
        where=where,
        cols=CANDIDATE_COLUMNS,
        access=ACCESS_JOIN,
        similarity=similarity,
        stats_scope=stats_scope(scoped),
        scope=scope_clause(scoped),
    )


# Linked memories (``linked``): those of %(link_ids)s the search may show, BM25-scored
# like vector candidates when the lexical query did not match them.
_LINK_TOP = sql.SQL(
    """, link_top AS (
    SELECT i.id, i.tsv, i.doc_len FROM lgm_memory_items i
    WHERE i.id = ANY(%(link_ids)s::bigint[]) AND {where}
)"""
)
_LINK_MATCHED = sql.SQL(
    """
    UNION ALL
    SELECT k.id, k.tsv, k.doc_len FROM link_top k
    WHERE (k.tsv @@ (SELECT query FROM tq)) IS NOT TRUE
      AND NOT EXISTS (SELECT 1 FROM vec_top v WHERE v.id = k.id)"""
)

EXACT_VECTOR_SCALE = 2.5
"""On the candidate path, the vector candidates of a scope of ``n`` memories (with text) come
from exact distances over the scope's own rows when ``n² ≤ EXACT_VECTOR_SCALE · n_vec · N``
(``N`` the table's rows, as the planner last counted them), else from the HNSW index. A
filtered HNSW walk visits about ``n_vec · N / n`` rows before it has ``n_vec`` of the scope's
(~7.5 µs each here), an exact scan reads the scope's ``n`` rows (~3 µs each): measured on a
million memories, a 10,000-memory user costs ~30 ms either way, so the exact scan is chosen up
to ``10·√N`` memories (10,000 of a million, 3,162 of 100,000, 31,623 of ten million), where it
costs no more and is exact."""

SCOPE_SCAN_ROWS = 2000
"""Namespace scopes of at most this many memories are searched by one scan of the scope
(:func:`scope_search_sql`): BM25 statistics counted from the scope's own rows and exact
vector distances, in one statement, no index but the scope's btree. Larger scopes take the
candidate path (:func:`build_search_hybrid_sql`: full-text index, HNSW)."""


def scope_search_sql(
    *,
    include_invalid: bool,
    filter_clause: sql.Composable | None,
    vector_type: str = "vector",
    vectors: VectorMode = "pgvector",
    linked: bool = False,
) -> sql.Composed:
    """Hybrid search of one small scope in one statement (built once per shape when there
    is no filter).

    Reads the scope's rows once (at most ``%(scan_rows)s + 1``: the ``scope_rows`` column
    says how many it saw; more than ``scan_rows`` means the scope is too large and the
    answer incomplete, so the caller takes the candidate path). It ranks exactly as
    :func:`build_search_hybrid_sql` does: document frequencies, corpus size and average
    length over every row of the scope (what the candidate path counts and
    ``lgm_memory_ns_stats`` holds), lexical candidates are the visible rows holding one of
    the rarest query lexemes within ``lex_budget``, vector candidates the ``n_vec`` nearest
    visible rows — by exact distance here (``vectors="pgvector"``), not the HNSW
    approximation; on the exact path (``vectors="exact"``) the first ``n_vec`` visible ones
    of ``%(vec_ids)s``, the ids the caller ordered by the similarity it computed
    (``vector_similarity`` is then NULL) — and every candidate is BM25-scored on all query
    lexemes. ``linked``: the visible rows of ``%(link_ids)s`` (linked to the query's
    entities) are candidates too. Its plan reads the scope's btree and nothing else,
    whatever the values: it is safe to prepare.
    """
    if filter_clause is None:
        return _unfiltered_scope_search(include_invalid, vector_type, vectors, linked)
    return _scope_search(include_invalid, filter_clause, vector_type, vectors, linked)


@functools.lru_cache(maxsize=32)
def _unfiltered_scope_search(
    include_invalid: bool, vector_type: str, vectors: VectorMode, linked: bool
) -> sql.Composed:
    return _scope_search(include_invalid, None, vector_type, vectors, linked)


def _scope_search(
    include_invalid: bool,
    filter_clause: sql.Composable | None,
    vector_type: str,
    vectors: VectorMode,
    linked: bool,
) -> sql.Composed:
    shown = sql.SQL("{} AND {}").format(
        visible_clause(include_invalid), filter_clause or sql.SQL("true")
    )
    similarity: sql.Composable
    nearness: sql.Composable
    query_vector: sql.Composable = sql.SQL("")
    if vectors == "pgvector":
        # the query vector cast once: a prepared (generic) plan casts a parameter again for
        # every row it meets (~0.15 ms of a ~1 ms statement over 100 rows, 384-d)
        query_vector = sql.SQL("qv AS MATERIALIZED (SELECT %(qvec)s::real[]::{t} AS v), ").format(
            t=element(vector_type)
        )
        nearness = sql.SQL("i.embedding <#> (SELECT v FROM qv)")
        vec_top = sql.SQL(
            """SELECT r.id, row_number() OVER (ORDER BY r.dist, r.id) AS rnk
    FROM scope_rows r WHERE r.dist IS NOT NULL
    ORDER BY r.dist, r.id LIMIT %(n_vec)s"""
        )
        # the candidate's own row is read anyway: its distance again, instead of a join of
        # every candidate with the scope's rows (the planner nests that loop: 100 x 40)
        similarity = sql.SQL("-({})").format(nearness)
    else:  # "dist" only marks a possible vector candidate: the caller gives the order
        nearness = sql.SQL("0::float8")
        vec_top = sql.SQL(
            """SELECT r.id, row_number() OVER (ORDER BY v.ord) AS rnk
    FROM unnest(%(vec_ids)s::bigint[]) WITH ORDINALITY AS v(id, ord)
    JOIN scope_rows r ON r.id = v.id
    WHERE r.dist IS NOT NULL
    ORDER BY v.ord LIMIT %(n_vec)s"""
        )
        similarity = sql.SQL("NULL::float8")
    return sql.SQL(
        """
WITH {query_vector}q AS (
    SELECT tsvector_to_array(lgm_lexical_vector(%(cfg)s::regconfig, %(query)s)) AS lexemes
), tq AS (
    SELECT string_agg(
        '''' || replace(replace(l, '\\', '\\\\'), '''', '''''') || '''', ' | '
    )::tsquery AS query
    FROM unnest((SELECT lexemes FROM q)) AS l
), scope_rows AS MATERIALIZED (
    SELECT i.id, i.tsv, i.doc_len, s.shown,
           CASE WHEN s.shown AND i.embedding IS NOT NULL THEN {nearness} END AS dist
    FROM lgm_memory_items i CROSS JOIN LATERAL (SELECT {shown} AS shown) s
    WHERE {scope}
    LIMIT %(scan_rows)s + 1
), corpus AS MATERIALIZED (
    SELECT count(*) FILTER (WHERE r.tsv IS NOT NULL)::float8 AS n,
           coalesce(sum(r.doc_len) FILTER (WHERE r.tsv IS NOT NULL), 0)::float8
               / greatest(count(*) FILTER (WHERE r.tsv IS NOT NULL), 1) AS avgdl,
           count(*) AS n_rows
    FROM scope_rows r
), terms AS MATERIALIZED (
    SELECT r.id, r.doc_len, r.shown, u.lexeme,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf
    FROM scope_rows r
    CROSS JOIN LATERAL unnest(ts_filter(setweight(r.tsv, 'A', (SELECT lexemes FROM q)), '{{a}}')) u
    WHERE r.tsv @@ (SELECT query FROM tq) AND u.lexeme = ANY((SELECT lexemes FROM q)::text[])
), stats AS (
    SELECT t.lexeme, count(*)::float8 AS df FROM terms t GROUP BY t.lexeme
), chosen AS (
    SELECT c.lexeme FROM (
        SELECT s.lexeme, sum(s.df) OVER (ORDER BY s.df, s.lexeme) AS cumulative
        FROM stats s) c
    WHERE c.cumulative <= %(lex_budget)s
), vec_top AS (
    {vec_top}
){linked_rows}, scored AS (
    SELECT t.id FROM terms t JOIN chosen c ON c.lexeme = t.lexeme WHERE t.shown
    UNION SELECT v.id FROM vec_top v{link_rows}
), lex AS (
    SELECT t.id,
           sum(ln(1 + (greatest(c.n, s.df) - s.df + 0.5) / (s.df + 0.5))
               * t.tf * (%(k1)s::float8 + 1)
               / (t.tf + %(k1)s::float8 * (1 - %(b)s::float8
                  + %(b)s::float8 * t.doc_len / greatest(c.avgdl, 1))))
               AS score
    FROM terms t JOIN scored d ON d.id = t.id JOIN stats s ON s.lexeme = t.lexeme
    CROSS JOIN corpus c
    GROUP BY t.id
), lex_ranked AS (
    SELECT l.id, l.score, row_number() OVER (ORDER BY l.score DESC, l.id) AS rnk FROM lex l
), cand AS (
    SELECT u.id, min(u.lex_rnk) AS lex_rnk, max(u.lex_score) AS lex_score,
           min(u.vec_rnk) AS vec_rnk
    FROM (
        SELECT id, rnk AS lex_rnk, score AS lex_score, NULL::bigint AS vec_rnk, false AS linked
        FROM lex_ranked
        UNION ALL SELECT id, NULL, NULL, rnk, false FROM vec_top{link_cands}
    ) u
    GROUP BY u.id
    HAVING min(u.lex_rnk) <= %(n_lex)s OR min(u.vec_rnk) IS NOT NULL OR bool_or(u.linked)
)
SELECT {cols}, CASE WHEN c.lex_rnk <= %(n_lex)s THEN c.lex_rnk END AS lexical_rank,
       coalesce(c.lex_score, 0)::float8 AS lexical_score,
       c.vec_rnk AS vector_rank, {similarity} AS vector_similarity,
       (SELECT n_rows FROM corpus) AS scope_rows
FROM (SELECT id, lex_rnk, lex_score, vec_rnk FROM cand
      UNION ALL SELECT NULL::bigint, NULL::bigint, NULL::float8, NULL::bigint
      WHERE NOT EXISTS (SELECT 1 FROM cand)) c
LEFT JOIN lgm_memory_items i ON i.id = c.id
{access}"""
    ).format(
        query_vector=query_vector,
        nearness=nearness,
        vec_top=vec_top,
        similarity=similarity,
        shown=shown,
        linked_rows=sql.SQL(
            ", linked_rows AS (\n    SELECT r.id FROM scope_rows r "
            "WHERE r.shown AND r.id = ANY(%(link_ids)s::bigint[])\n)"
            if linked
            else ""
        ),
        link_rows=sql.SQL("\n    UNION SELECT id FROM linked_rows" if linked else ""),
        link_cands=sql.SQL(
            "\n        UNION ALL SELECT id, NULL, NULL, NULL, true FROM linked_rows"
            if linked
            else ""
        ),
        scope=SCOPE,
        cols=CANDIDATE_COLUMNS,
        access=ACCESS_JOIN,
    )
