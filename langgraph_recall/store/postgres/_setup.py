"""The setup program: create or migrate the schema, choose pgvector or exact search (pure)."""

from __future__ import annotations

import logging

from langgraph_recall._pg.durability import SYNC_SETTINGS, check_replicas
from langgraph_recall._pg.program import Stmt
from langgraph_recall.errors import ConfigurationError
from langgraph_recall.store.postgres import _sql
from langgraph_recall.store.postgres._migrations import (
    MIGRATIONS,
    MIGRATIONS_TABLE_SQL,
    MigrationContext,
    VectorMode,
)
from langgraph_recall.store.postgres._state import StoreState
from langgraph_recall.store.postgres._types import Program, SetupReport

logger = logging.getLogger("langgraph_recall.store")

__all__ = ["HNSW_MAX_DIMS", "SetupPrograms", "check_index_dims"]


class SetupPrograms(StoreState):
    """Setup programs of the Postgres memory store."""

    def _setup_program(self) -> Program[SetupReport]:
        encoding = (yield Stmt(_sql.SERVER_ENCODING, fetch=True))[0]["encoding"]
        if encoding != "UTF8":  # text a user writes must come back as written
            raise ConfigurationError(
                f"the memory store needs a UTF8 database, this one is {encoding}; "
                "create it with CREATE DATABASE ... ENCODING 'UTF8'"
            )
        if self.replicas:
            sync = (yield Stmt(SYNC_SETTINGS, fetch=True))[0]
            check_replicas(
                self._target(), self.replicas, sync["commit_mode"], sync["standby_names"]
            )
        yield Stmt(_sql.ADVISORY_LOCK)
        yield Stmt(MIGRATIONS_TABLE_SQL)
        applied = {row["v"] for row in (yield Stmt(_sql.APPLIED_MIGRATIONS, fetch=True))}
        meta: dict[str, str] = {}
        if 0 in applied:
            meta = {r["name"]: r["value"] for r in (yield Stmt(_sql.READ_META, fetch=True))}
        mode: VectorMode
        if "vector_mode" in meta:
            mode = "pgvector" if meta["vector_mode"] == "pgvector" else "exact"
        else:
            outcome = yield Stmt(_sql.CREATE_VECTOR_EXTENSION, tolerate_error=True)
            mode = "exact" if isinstance(outcome, Exception) else "pgvector"
            if isinstance(outcome, Exception):
                logger.info("pgvector unavailable (%s); using exact vector search", outcome)
        ctx = MigrationContext(
            vector_mode=mode,
            dims=self.dims,
            hnsw_m=self.hnsw_m,
            hnsw_ef_construction=self.hnsw_ef_construction,
            vector_type=meta.get("vector_type", "vector" if 0 in applied else self.vector_type),
            text_search_config=self.retrieval.text_search_config,
        )
        check_index_dims(mode, ctx.vector_type, self.dims)
        new: list[int] = []
        if any(version not in applied for version in range(len(MIGRATIONS))):
            yield Stmt(_sql.LOCK_STORE)  # a migration may rewrite rows: no writer runs meanwhile
        for version, step in enumerate(MIGRATIONS):
            if version in applied:
                continue
            yield Stmt(step(ctx))
            yield Stmt(_sql.RECORD_MIGRATION, {"v": version})
            new.append(version)
        for name, value in (
            ("vector_mode", mode),
            ("dims", str(self.dims)),
            ("vector_type", ctx.vector_type),
        ):
            yield Stmt(_sql.WRITE_META, {"name": name, "value": value})
        meta = {r["name"]: r["value"] for r in (yield Stmt(_sql.READ_META, fetch=True))}
        self._adopt_meta(meta)
        if meta.get("vector_index") == "deferred":
            logger.warning(
                "the HNSW index is missing: a bulk_load(rebuild_index=True) dropped it and has "
                "not finished (searches scan every vector until it is built); run that load "
                "again with rebuild_index=True (the same resume_key skips what it wrote; "
                "`langgraph-recall import FILE --resume --rebuild-index`) to build it"
            )
        version_rows = yield Stmt(_sql.VECTOR_VERSION, fetch=True)
        report = SetupReport(
            vector_mode=self.vector_mode or mode,
            pgvector_version=version_rows[0]["extversion"] if version_rows else None,
            dims=self.dims,
            schema_version=len(MIGRATIONS),
            applied=tuple(new),
        )
        self.setup_report = report
        logger.info(
            "memory store ready: vector_mode=%s pgvector=%s dims=%d migrations applied=%s",
            report.vector_mode,
            report.pgvector_version,
            report.dims,
            list(report.applied),
        )
        return report


HNSW_MAX_DIMS = {"vector": 2000, "halfvec": 4000}
"""The most dimensions pgvector's HNSW index takes per column type."""


def check_index_dims(mode: VectorMode, vector_type: str, dims: int) -> None:
    """Refuse, before any migration, an index pgvector cannot build (the server would fail
    the migration with a bare "column cannot have more than 2000 dimensions").

    Example:
        ```python
        from langgraph_recall.errors import ConfigurationError
        from langgraph_recall.store.postgres._setup import check_index_dims

        check_index_dims("pgvector", "halfvec", 3072)  # fits
        check_index_dims("exact", "vector", 3072)  # no index: any size
        try:
            check_index_dims("pgvector", "vector", 3072)
        except ConfigurationError as exc:
            assert "halfvec" in str(exc)
        ```
    """
    limit = HNSW_MAX_DIMS.get(vector_type)
    if mode != "pgvector" or limit is None or dims <= limit:
        return
    raise ConfigurationError(
        f"pgvector's HNSW index takes at most {limit:,} dimensions of {vector_type}; this "
        f"store's embeddings have {dims:,}: use ann_index_config={{'vector_type': 'halfvec'}} "
        f"(up to {HNSW_MAX_DIMS['halfvec']:,}) or an embedding model with fewer dimensions"
    )
