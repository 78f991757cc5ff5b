"""The entity-link statement of the Postgres memory store (pure).

:func:`entity_links_sql` finds the memories of a search's scope that are linked to the
entities its query names (``lgm_memory_entities``), with the strength of each link; the
search then adds the strongest as candidates and gives every candidate its link
(:mod:`~langgraph_recall.store.postgres._batch`). :mod:`~langgraph_recall.store.postgres._sql`
re-exports it.

An entity's *rarity* is its inverse document frequency within the scope, on [0, 1]:
``ln((n + 1) / df) / ln(n + 1)`` for ``df`` of the scope's ``n`` memories naming it (1 for
an entity one memory names, near 0 for one every memory names: the user's own name). A
memory's link is the noisy-or of the rarities of the query's entities it names,
``1 - Π(1 - rarity)``. With two hops, the entities named by the strongest ``cap`` linked
memories link further, each at the strength of the memory that named it times its own
rarity, and those second-hop links count half.

Example:
    ```python
    from langgraph_recall.store.postgres._sql_entities import entity_links_sql

    query = entity_links_sql(scoped=True, include_invalid=False, filter_clause=None, hops=2)
    assert "lgm_memory_entities" in query.as_string(None)
    ```
"""

from __future__ import annotations

from psycopg import sql

from langgraph_recall.store.postgres._sql_clauses import scope_clause, stats_scope, visible_clause

__all__ = ["HOP_DECAY", "entity_links_sql"]

HOP_DECAY = 0.5
"""What a second-hop link counts, relative to a first-hop link of the same strength."""

_RARITY = "ln((c.n + 1) / least(greatest(d.df, 1), c.n)) / ln(c.n + 1)"


def entity_links_sql(
    *,
    scoped: bool,
    include_invalid: bool,
    filter_clause: sql.Composable | None,
    hops: int = 1,
) -> sql.Composed:
    """The scope's visible memories linked to ``%(entities)s`` (normalised names), strongest
    first, at most ``%(link_rows)s``: columns ``id``, ``link`` (in [0, 1]) and ``via`` (the
    entities that link it). ``hops=2`` follows the entities of the ``%(cap)s`` strongest."""
    where = sql.SQL("{} AND {} AND {}").format(
        scope_clause(scoped), visible_clause(include_invalid), filter_clause or sql.SQL("true")
    )
    escope = sql.SQL("e.ns >= %(ns_lo)s AND e.ns < %(ns_hi)s" if scoped else "true")
    first = sql.SQL(
        """
WITH q AS (
    SELECT DISTINCT x AS entity FROM unnest(%(entities)s::text[]) AS x
), corpus AS MATERIALIZED (
    SELECT greatest(coalesce(sum(s.n_docs), 0), 1)::float8 AS n
    FROM lgm_memory_ns_stats s WHERE {stats_scope}
), rare AS MATERIALIZED (
    SELECT d.entity, {rarity} AS rarity
    FROM (SELECT e.entity, count(*)::float8 AS df FROM lgm_memory_entities e
          WHERE e.entity IN (SELECT entity FROM q) AND {escope}
          GROUP BY e.entity) d
    CROSS JOIN corpus c
), hop1 AS MATERIALIZED (
    SELECT e.id, 1 - exp(sum(ln(greatest(1 - r.rarity, 1e-9)))) AS link,
           array_agg(e.entity ORDER BY r.rarity DESC, e.entity) AS via
    FROM lgm_memory_entities e
    JOIN rare r ON r.entity = e.entity
    JOIN lgm_memory_items i ON i.id = e.id
    WHERE {escope} AND {where}
    GROUP BY e.id
)"""
    ).format(
        stats_scope=stats_scope(scoped),
        rarity=sql.SQL(_RARITY),
        escope=escope,
        where=where,
    )
    if hops < 2:
        return sql.SQL(
            "{first}\nSELECT h.id, h.link, h.via FROM hop1 h WHERE h.link > 0 "
            "ORDER BY h.link DESC, h.id DESC LIMIT %(link_rows)s"
        ).format(first=first)
    second = sql.SQL(
        """, seeds AS (
    SELECT h.id, h.link FROM hop1 h WHERE h.link > 0 ORDER BY h.link DESC, h.id DESC LIMIT %(cap)s
), bridge AS (
    SELECT e.entity, max(s.link) AS strength
    FROM lgm_memory_entities e JOIN seeds s ON s.id = e.id
    WHERE e.entity NOT IN (SELECT entity FROM q)
    GROUP BY e.entity
), rare2 AS MATERIALIZED (
    SELECT d.entity, d.strength * {rarity} AS rarity
    FROM (SELECT b.entity, b.strength, count(*)::float8 AS df
          FROM bridge b JOIN lgm_memory_entities e ON e.entity = b.entity
          WHERE {escope}
          GROUP BY b.entity, b.strength) d
    CROSS JOIN corpus c
), hop2 AS (
    SELECT e.id, {decay} * (1 - exp(sum(ln(greatest(1 - r.rarity, 1e-9))))) AS link,
           array_agg(e.entity ORDER BY r.rarity DESC, e.entity) AS via
    FROM lgm_memory_entities e
    JOIN rare2 r ON r.entity = e.entity
    JOIN lgm_memory_items i ON i.id = e.id
    WHERE {escope} AND {where}
    GROUP BY e.id
)
SELECT l.id, l.link, l.via FROM (
    SELECT DISTINCT ON (x.id) x.id, x.link, x.via
    FROM (SELECT * FROM hop1 UNION ALL SELECT * FROM hop2) x
    ORDER BY x.id, x.link DESC
) l
WHERE l.link > 0
ORDER BY l.link DESC, l.id DESC LIMIT %(link_rows)s"""
    ).format(rarity=sql.SQL(_RARITY), escope=escope, where=where, decay=sql.Literal(HOP_DECAY))
    return sql.Composed([first, second])
