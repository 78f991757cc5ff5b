"""Versioned, idempotent schema migrations of the Postgres memory store (append-only).

Each step is a function of the :class:`MigrationContext` (vector mode, dimensions) that
returns SQL; ``setup()`` applies the steps whose version is not yet recorded in
``lgm_store_migrations``. Never edit or reorder a released step: append a new one.

Example:
    ```python
    from langgraph_memory.store.postgres._migrations import MIGRATIONS, MigrationContext

    ctx = MigrationContext(vector_mode="exact", dims=64)
    assert all(isinstance(step(ctx), str) for step in MIGRATIONS)
    ```
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = ["MIGRATIONS", "MIGRATIONS_TABLE_SQL", "MigrationContext", "VectorMode"]

VectorMode = Literal["pgvector", "exact"]


@dataclass(frozen=True)
class MigrationContext:
    """What a migration step may depend on."""

    vector_mode: VectorMode
    dims: int
    hnsw_m: int = 16
    hnsw_ef_construction: int = 64


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


def _embedding(ctx: MigrationContext) -> str:
    column = f"vector({int(ctx.dims)})" if ctx.vector_mode == "pgvector" else "bytea"
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
        f"USING hnsw (embedding vector_cosine_ops) WITH (m = {int(ctx.hnsw_m)}, "
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


MIGRATIONS: list[Callable[[MigrationContext], str]] = [
    _meta,
    _items,
    _embedding,
    _indexes,
    _vector_index,
    _history,
    _try_timestamptz,
]
