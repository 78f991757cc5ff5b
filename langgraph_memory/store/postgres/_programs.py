"""The I/O-free programs of the Postgres memory store (validation, planning, SQL sequencing).

Every operation is a generator that yields :class:`Sql` / :class:`EmbedDocuments` /
:class:`EmbedQueries` requests and receives their results; the sync and async stores
only run them. All input is validated before the first request, and all SQL of one
program runs in one transaction, so a failing operation writes nothing.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    SearchItem,
    SearchOp,
    TTLConfig,
    ensure_embeddings,
)
from psycopg import sql

from langgraph_memory.errors import (
    ConfigurationError,
    EmbeddingError,
    InvalidNamespaceError,
    InvalidValueError,
    MigrationError,
)
from langgraph_memory.retrieval import (
    Candidate,
    RetrievalConfig,
    ScoreBreakdown,
    query_time_window,
    rank_explained,
)
from langgraph_memory.store._bounds import (
    MAX_ROWS,
    MAX_VALUE_BYTES,
    bound_query,
    check_rows,
    check_time,
    check_ttl,
    shown,
)
from langgraph_memory.store._filters import compile_filter
from langgraph_memory.store._namespace import (
    decode_namespace,
    encode_namespace,
    matches_conditions,
    prefix_range,
    validate_namespace,
    validate_prefix,
)
from langgraph_memory.store._values import (
    DEFAULT_MAX_VALUE_BYTES,
    PreparedValue,
    check_interval,
    prepare_value,
    validate_key,
)
from langgraph_memory.store.postgres import _sql
from langgraph_memory.store.postgres._access import AccessLog
from langgraph_memory.store.postgres._erasure import erase_scope
from langgraph_memory.store.postgres._exact import (
    VectorCacheRegistry,
    encode_vector,
    memory_vectors,
    unit_vector,
)
from langgraph_memory.store.postgres._float4_array import Float4Array
from langgraph_memory.store.postgres._index import check_unit_length, index_options
from langgraph_memory.store.postgres._migrations import (
    MIGRATIONS,
    MIGRATIONS_TABLE_SQL,
    MigrationContext,
    VectorMode,
)
from langgraph_memory.store.postgres._types import (
    DecayConfig,
    EmbedDocuments,
    EmbedQueries,
    ExplainedSearchItem,
    HistoryEntry,
    MemorySearchOp,
    Plan,
    Program,
    SetupReport,
    Sql,
    current_actor,
)

logger = logging.getLogger("langgraph_memory.store")

ANALYZE_FIRST_AT = 2000  # rows this store wrote before it first refreshes planner statistics
MAX_EF_SEARCH = 1000  # pgvector's upper bound of hnsw.ef_search

__all__ = ["MemoryPrograms"]


def _default_embeddings() -> tuple[Embeddings, int]:
    try:
        from langgraph_memory.embeddings import DEFAULT_EMBEDDING_DIMS, default_embeddings

        return default_embeddings(), int(DEFAULT_EMBEDDING_DIMS)
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise ConfigurationError(
            "no index= given and the default embedder is unavailable "
            f"({exc}); install langgraph-memory[embeddings] or pass "
            "index={'dims': ..., 'embed': ...}"
        ) from exc


def _from_ann(from_ann: int | None, given: int, default: int, ann_name: str, name: str) -> int:
    """An HNSW parameter from ``ann_index_config`` or the keyword, refusing a contradiction."""
    if from_ann is None:
        return given
    if given not in (default, from_ann):
        raise ConfigurationError(
            f"ann_index_config[{ann_name!r}]={from_ann} contradicts {name}={given}; give one"
        )
    return from_ann


def _as_utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


class MemoryPrograms:
    """Configuration, validation and the I/O-free programs behind both stores."""

    def __init__(
        self,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        retrieval: RetrievalConfig | None = None,
        max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
        track_access: bool = True,
        access_flush_interval: float = 1.0,
        ef_search: int = 40,
        lexical_budget: int = 300,
        hnsw_m: int = 16,
        hnsw_ef_construction: int = 64,
        exact_cache_scopes: int = 32,
    ) -> None:
        if index is None:
            self.embeddings, self.dims = _default_embeddings()
            self.fields: list[str] | None = None
        else:
            if "dims" not in index or "embed" not in index:
                raise ConfigurationError("index needs 'dims' and 'embed' (an Embeddings object)")
            self.embeddings = ensure_embeddings(index["embed"])
            self.dims = int(index["dims"])
            fields = index.get("fields")
            self.fields = list(fields) if fields else None
        if self.dims <= 0:
            raise ConfigurationError(f"index dims must be positive, got {self.dims}")
        self.index_options = index_options(index)
        hnsw_m = _from_ann(self.index_options.hnsw_m, hnsw_m, 16, "m", "hnsw_m")
        hnsw_ef_construction = _from_ann(
            self.index_options.hnsw_ef_construction,
            hnsw_ef_construction,
            64,
            "ef_construction",
            "hnsw_ef_construction",
        )
        self.index_config = index
        self.ttl_config = ttl
        if ttl:
            try:
                check_ttl(ttl.get("default_ttl"))
            except InvalidValueError as exc:
                raise ConfigurationError(f"TTLConfig default_ttl: {exc}") from None
        self.retrieval = retrieval or RetrievalConfig()
        if not (isinstance(max_value_bytes, int) and 0 < max_value_bytes <= MAX_VALUE_BYTES):
            raise ConfigurationError(
                f"max_value_bytes must be a positive integer up to {MAX_VALUE_BYTES} "
                "(what one JSONB value holds comfortably)"
            )
        self.max_value_bytes = max_value_bytes
        self.track_access = track_access
        if not (math.isfinite(access_flush_interval) and access_flush_interval >= 0):
            raise ConfigurationError("access_flush_interval must be a number of seconds >= 0")
        self._access = AccessLog(access_flush_interval)
        if not (isinstance(ef_search, int) and 1 <= ef_search <= MAX_EF_SEARCH):
            raise ConfigurationError(f"ef_search must be an integer from 1 to {MAX_EF_SEARCH}")
        self.ef_search = ef_search
        if lexical_budget <= 0 or hnsw_m <= 1 or hnsw_ef_construction <= 0:
            raise ConfigurationError("lexical_budget, hnsw_m and hnsw_ef_construction must be > 0")
        self.lexical_budget = lexical_budget
        self.hnsw_m = hnsw_m
        self.hnsw_ef_construction = hnsw_ef_construction
        # Bulk loads outrun autovacuum's ANALYZE, and stale statistics make the planner scan a
        # namespace instead of the full-text index; refresh them on a doubling schedule.
        self._written = 0
        self._analyze_at = ANALYZE_FIRST_AT
        self.vector_mode: VectorMode | None = None
        # pgvector element type: the database's (set at its setup) unless asked otherwise
        self.vector_type = self.index_options.vector_type
        ann: Any = (index or {}).get("ann_index_config") or {}  # a Mapping (index_options)
        self._vector_type_given = "vector_type" in ann
        self.setup_report: SetupReport | None = None
        self._caches = VectorCacheRegistry(self.dims, exact_cache_scopes)
        self._cache_lock = threading.Lock()
        self._refresh_lock = threading.Lock()
        self._refresh_retry: set[int] = set()

    # ------------------------------------------------------------------ helpers
    def _search_op(
        self,
        namespace_prefix: tuple[str, ...],
        query: str | None,
        filter: dict[str, Any] | None,
        limit: int,
        offset: int,
        refresh_ttl: bool | None,
        as_of: datetime | None,
        include_invalid: bool,
        explain: bool = False,
    ) -> MemorySearchOp:
        # validated before the op is queued: a merged batch must not carry a bad op
        namespace_prefix = validate_prefix(namespace_prefix)
        if refresh_ttl is None:
            refresh_ttl = (self.ttl_config or {}).get("refresh_on_read", True)
        return MemorySearchOp(
            namespace_prefix,  # checked (and made a tuple) by _normalise_search
            filter,
            limit,
            offset,
            query,
            refresh_ttl,
            as_of,
            include_invalid,
            bool(explain),
        )

    def _ensure_mode(self) -> Program:
        if self.vector_mode is not None:
            return self.vector_mode
        rows = yield Sql(_sql.READ_META, tolerate_error=True)
        meta = {} if isinstance(rows, Exception) else {r["name"]: r["value"] for r in rows}
        if "vector_mode" not in meta:
            raise MigrationError("the memory store schema is missing; call store.setup() first")
        self._adopt_meta(meta)
        return self.vector_mode

    def _adopt_meta(self, meta: Mapping[str, str]) -> None:
        dims = int(meta.get("dims", self.dims))
        if dims != self.dims:
            raise ConfigurationError(
                f"the database was set up for {dims}-dimensional embeddings but this store "
                f"embeds {self.dims} dimensions; use the same embedder or a new database"
            )
        mode = meta["vector_mode"]
        self.vector_mode = "pgvector" if mode == "pgvector" else "exact"
        if self.vector_mode == "pgvector":
            stored = meta.get("vector_type", "vector")
            if self._vector_type_given and stored != self.vector_type:
                raise ConfigurationError(
                    f"the database was set up with vector_type={stored!r} embeddings but this "
                    f"store asks for vector_type={self.vector_type!r}; use {stored!r} (or leave "
                    "it out) or a new database"
                )
            self.vector_type = stored

    def _check_vectors(self, vectors: Sequence[Sequence[float]], count: int) -> None:
        if len(vectors) != count:
            raise EmbeddingError(f"the embedder returned {len(vectors)} vectors for {count} texts")
        for vector in vectors:
            if len(vector) != self.dims:
                raise EmbeddingError(
                    f"the embedder returned a {len(vector)}-dimensional vector; "
                    f"the store is configured for dims={self.dims}"
                )
        if not vectors:
            return
        try:  # stored as float32: 1e39 would become infinity there
            with np.errstate(over="ignore"):
                finite = bool(np.isfinite(np.asarray(vectors, dtype=np.float32)).all())
        except (TypeError, ValueError, OverflowError) as exc:
            raise EmbeddingError(f"the embedder returned non-numeric values: {exc}") from exc
        if not finite:
            raise EmbeddingError(
                "the embedder returned NaN or infinite values (or values beyond float32)"
            )
        if self.index_options.unit_length_required:
            check_unit_length(vectors, self.index_options.distance_type)

    # ------------------------------------------------------------------ programs
    def _setup_program(self) -> Program:
        encoding = (yield Sql(_sql.SERVER_ENCODING))[0]["encoding"]
        if encoding != "UTF8":  # text a user writes must come back as written
            raise ConfigurationError(
                f"the memory store needs a UTF8 database, this one is {encoding}; "
                "create it with CREATE DATABASE ... ENCODING 'UTF8'"
            )
        yield Sql(_sql.ADVISORY_LOCK)
        yield Sql(MIGRATIONS_TABLE_SQL)
        applied = {row["v"] for row in (yield Sql(_sql.APPLIED_MIGRATIONS))}
        meta: dict[str, str] = {}
        if 0 in applied:
            meta = {r["name"]: r["value"] for r in (yield Sql(_sql.READ_META))}
        mode: VectorMode
        if "vector_mode" in meta:
            mode = "pgvector" if meta["vector_mode"] == "pgvector" else "exact"
        else:
            outcome = yield Sql(_sql.CREATE_VECTOR_EXTENSION, tolerate_error=True)
            mode = "exact" if isinstance(outcome, Exception) else "pgvector"
            if isinstance(outcome, Exception):
                logger.info("pgvector unavailable (%s); using exact vector search", outcome)
        ctx = MigrationContext(
            vector_mode=mode,
            dims=self.dims,
            hnsw_m=self.hnsw_m,
            hnsw_ef_construction=self.hnsw_ef_construction,
            vector_type=meta.get("vector_type", "vector" if 0 in applied else self.vector_type),
        )
        new: list[int] = []
        if any(version not in applied for version in range(len(MIGRATIONS))):
            yield Sql(_sql.LOCK_STORE)  # a migration may rewrite rows: no writer runs meanwhile
        for version, step in enumerate(MIGRATIONS):
            if version in applied:
                continue
            yield Sql(step(ctx))
            yield Sql(_sql.RECORD_MIGRATION, {"v": version})
            new.append(version)
        for name, value in (
            ("vector_mode", mode),
            ("dims", str(self.dims)),
            ("vector_type", ctx.vector_type),
        ):
            yield Sql(_sql.WRITE_META, {"name": name, "value": value})
        meta = {r["name"]: r["value"] for r in (yield Sql(_sql.READ_META))}
        self._adopt_meta(meta)
        version_rows = yield Sql(_sql.VECTOR_VERSION)
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

    def _plan(self, ops: list[Op]) -> Plan:
        plan = Plan(results=[None] * len(ops))
        latest_put: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for position, op in enumerate(ops):
            if isinstance(op, GetOp):
                validate_prefix(op.namespace)
                validate_key(op.key)
                plan.gets.append((position, op))
            elif isinstance(op, (SearchOp, MemorySearchOp)):
                search = self._normalise_search(op)
                # no filter → no clause, so the search SQL of that shape is built once
                clause: sql.Composable | None = None
                params: dict[str, Any] = {}
                if search.filter is not None:
                    clause, params = compile_filter(search.filter, sql.SQL("i.value"))
                plan.searches.append((position, search, clause, params))
            elif isinstance(op, ListNamespacesOp):
                plan.lists.append((position, _checked_list_op(op)))
            elif isinstance(op, PutOp):
                namespace = validate_namespace(op.namespace, allow_reserved=True)
                latest_put[(namespace, validate_key(op.key))] = op
            else:
                raise InvalidValueError(f"unknown store operation {type(op).__name__}")
        # a stable (namespace, key) order keeps concurrent upserts from deadlocking
        for (namespace, key), put in sorted(latest_put.items(), key=lambda entry: entry[0]):
            if put.value is None:
                plan.deletes.append((namespace, key))
                continue
            if put.index not in (None, False) and not (
                isinstance(put.index, list) and all(isinstance(f, str) for f in put.index)
            ):
                raise InvalidValueError(
                    "index must be False, None or a list of field paths such as "
                    f"['content'], got {shown(put.index)}"
                )
            fields = put.index if isinstance(put.index, list) else self.fields
            prepared = prepare_value(
                namespace,
                key,
                put.value,
                fields=fields,
                index=put.index is not False,
                max_value_bytes=self.max_value_bytes,
            )
            plan.upserts.append((prepared, check_ttl(put.ttl)))
        return plan

    def _normalise_search(self, op: SearchOp | MemorySearchOp) -> MemorySearchOp:
        prefix = validate_prefix(op.namespace_prefix)
        limit = check_rows(op.limit, "limit")  # bool is an int, as in InMemoryStore
        offset = check_rows(op.offset, "offset")
        query = op.query
        if query is not None:
            if not isinstance(query, str):
                raise InvalidValueError(f"query must be a string, got {type(query).__name__}")
            query = bound_query(query)
        if isinstance(op, MemorySearchOp):
            as_of = check_time(op.as_of, "as_of") if op.as_of is not None else None
            return op._replace(
                namespace_prefix=prefix, limit=limit, offset=offset, query=query, as_of=as_of
            )
        return MemorySearchOp(prefix, op.filter, limit, offset, query, op.refresh_ttl)

    def _batch_program(self, ops: list[Op]) -> Program:
        plan = self._plan(ops)
        texts = _texts_to_embed(plan.upserts)
        doc_vectors: list[list[float]] = []
        if texts:
            doc_vectors = yield EmbedDocuments(texts)
            self._check_vectors(doc_vectors, len(texts))
        queries = sorted({op.query for _, op, _, _ in plan.searches if op.query})
        query_vectors: dict[str, list[float]] = {}
        if queries:
            vectors = yield EmbedQueries(queries)
            self._check_vectors(vectors, len(queries))
            query_vectors = dict(zip(queries, vectors, strict=True))
        yield from self._ensure_mode()

        if plan.gets:
            yield from self._get_all(plan)
        for position, search, clause, params in plan.searches:
            plan.results[position] = yield from self._search(
                search, clause, params, query_vectors, plan
            )
        for position, list_op in plan.lists:
            plan.results[position] = yield from self._list_namespaces(list_op)
        written = sorted(
            {encode_namespace(p.namespace) for p, _ in plan.upserts}
            | {encode_namespace(ns) for ns, _ in plan.deletes}
        )
        if written:  # every writer takes its locks first, in one global order
            yield Sql(_sql.LOCK_NAMESPACES, {"ns": written})
        if plan.upserts:
            yield from self._upsert(plan.upserts, doc_vectors)
        if plan.deletes:
            yield Sql(
                _sql.DELETE_ITEMS,
                {
                    "ns": [encode_namespace(ns) for ns, _ in plan.deletes],
                    "key": [key for _, key in plan.deletes],
                    "actor": current_actor(),
                },
            )
        # effects outside the database come after the transaction's last statement: a
        # transaction the runner retries (deadlock victim) runs this program again
        if self.track_access and plan.accessed:
            self._access.record(plan.accessed, datetime.now(timezone.utc))
        yield from self._refresh_ttl(plan.refresh)
        yield from self._write_access(force=False)
        return plan.results

    def _refresh_ttl(self, ids: list[int]) -> Program:
        """Extend the TTL of what the batch read, in its own transaction (see ``Sql.isolated``).

        A refresh that gave way to a lock is retried with the next operation; the lock's
        holder is a put (which restarts the TTL anyway), a delete, or another bookkeeping
        statement.
        """
        with self._refresh_lock:
            pending = sorted(set(ids) | self._refresh_retry)
            self._refresh_retry.clear()
        if not pending:
            return
        outcome = yield Sql(
            _sql.REFRESH_TTL, {"ids": pending}, isolated=True, locks=_sql.LOCK_NAMESPACES_OF_IDS
        )
        if isinstance(outcome, Exception):
            with self._refresh_lock:
                self._refresh_retry.update(pending)

    def _write_access(self, *, force: bool) -> Program:
        """Write the searches' pending access counts if due (or ``force``), in their own
        transaction; counts that gave way to a lock go back to the log for the next try."""
        if not (force or self._access.due()):
            return
        batch = self._access.drain()
        if batch is None:
            return
        outcome = yield Sql(
            _sql.RECORD_ACCESS, batch.params(), isolated=True, locks=_sql.LOCK_NAMESPACES_OF_IDS
        )
        if isinstance(outcome, Exception):
            self._access.restore(batch)

    def _flush_access_program(self) -> Program:
        yield from self._write_access(force=True)

    def _get_all(self, plan: Plan) -> Program:
        params = {
            "ns": [encode_namespace(op.namespace) for _, op in plan.gets],
            "key": [op.key for _, op in plan.gets],
        }
        rows = yield Sql(_sql.GET_ITEMS, params)
        by_key = {(row["ns"], row["key"]): row for row in rows}
        for position, op in plan.gets:
            row = by_key.get((encode_namespace(op.namespace), op.key))
            if row is None:
                continue
            plan.results[position] = Item(
                value=row["value"],
                key=row["key"],
                namespace=decode_namespace(row["ns"]),
                created_at=row["created_at"],
                updated_at=row["updated_at"],
            )
            if op.refresh_ttl and row["ttl_minutes"] is not None:
                plan.refresh.append(row["id"])

    def _scope_params(self, prefix: tuple[str, ...]) -> dict[str, Any]:
        bounds = prefix_range(prefix)
        return {"ns_lo": bounds[0], "ns_hi": bounds[1]} if bounds else {}

    def _search(
        self,
        op: MemorySearchOp,
        clause: sql.Composable | None,
        filter_params: dict[str, Any],
        query_vectors: Mapping[str, list[float]],
        plan: Plan,
    ) -> Program:
        if op.limit == 0:
            return []
        scoped = bool(op.namespace_prefix)
        params: dict[str, Any] = {
            **filter_params,
            **self._scope_params(op.namespace_prefix),
            "as_of": op.as_of,
            "limit": op.limit,
            "offset": op.offset,
        }
        if not op.query:
            query = _sql.search_recent_sql(
                scoped=scoped, include_invalid=op.include_invalid, filter_clause=clause
            )
            rows = yield Sql(query, params)
            scored: list[tuple[dict[str, Any], ScoreBreakdown | None]] = [
                (row, None) for row in rows
            ]
        else:
            scored = yield from self._hybrid(op, clause, params, query_vectors[op.query])
        plan.accessed.extend(row["id"] for row, _ in scored)
        if op.refresh_ttl:
            plan.refresh.extend(row["id"] for row, _ in scored if row["ttl_minutes"] is not None)
        return [_search_item(row, parts, op.explain) for row, parts in scored]

    def _hybrid(
        self,
        op: MemorySearchOp,
        clause: sql.Composable | None,
        params: dict[str, Any],
        query_vector: list[float],
    ) -> Program:
        config = self.retrieval
        wanted = min(op.offset + op.limit, MAX_ROWS)  # a bigint parameter
        n_lex = max(config.lexical_candidates, wanted)
        n_vec = max(config.vector_candidates, wanted)
        params.update(
            query=op.query,
            cfg=config.text_search_config,
            k1=config.bm25_k1,
            b=config.bm25_b,
            lex_budget=self.lexical_budget,
            n_lex=n_lex,
            n_vec=n_vec,
        )
        statement = _sql.search_hybrid_sql(
            vector_mode=self.vector_mode or "exact",
            scoped=bool(op.namespace_prefix),
            include_invalid=op.include_invalid,
            filter_clause=clause,
            vector_type=self.vector_type,
        )
        similarity: dict[int, float] = {}
        if self.vector_mode == "pgvector":
            params["qvec"] = Float4Array(unit_vector(query_vector))
            ef = min(max(self.ef_search, n_vec), MAX_EF_SEARCH)  # deep pages: iterative scan
            yield Sql(_sql.SET_HNSW_SEARCH, {"ef": str(ef)})
            rows = yield Sql(statement, params)
        else:
            query = np.asarray(query_vector, dtype=np.float32)
            cache = yield from self._refreshed_cache(op.namespace_prefix)
            fetch = n_vec * 4 + 16
            while True:
                with self._cache_lock:
                    ids, _ = cache.top(query, fetch)
                params["vec_ids"] = ids.tolist()
                rows = yield Sql(statement, params)
                found = sum(1 for row in rows if row["vector_rank"] is not None)
                if found >= n_vec or len(ids) >= len(cache):
                    break
                fetch *= 4
            with self._cache_lock:
                similarity = cache.similarity(query, [row["id"] for row in rows])
        by_id = {row["id"]: row for row in rows}
        candidates = [
            Candidate(
                id=row["id"],
                lexical_score=row["lexical_score"],
                lexical_rank=row["lexical_rank"],
                vector_similarity=(
                    row["vector_similarity"]
                    if self.vector_mode == "pgvector"
                    else similarity.get(row["id"])
                ),
                vector_rank=row["vector_rank"],
                importance=row["importance"],
                event_time=row["valid_from"] or row["updated_at"],
                last_accessed=row["last_accessed_at"],
                access_count=row["access_count"],
            )
            for row in rows
        ]
        now = _as_utc(op.as_of) if op.as_of is not None else datetime.now(timezone.utc)
        window = query_time_window(op.query) if op.query and config.time_match_weight else None
        ranked = rank_explained(candidates, config=config, now=now, time_window=window)
        page = ranked[op.offset : op.offset + op.limit]
        return [
            ({**by_id[candidate.id], "value": json.loads(by_id[candidate.id]["value"])}, parts)
            for candidate, parts in page
        ]

    def _refreshed_cache(self, prefix: tuple[str, ...]) -> Program:
        scope = encode_namespace(prefix)
        with self._cache_lock:
            cache = self._caches.get(scope)
            since = cache.watermark
        scope_params = self._scope_params(prefix)
        rows = yield Sql(_sql.cache_refresh_sql(bool(prefix)), {"since": since, **scope_params})
        head = next(row for row in rows if row["xmin"] is not None)
        with self._cache_lock:
            cache.apply((row["id"], row["embedding"]) for row in rows if row["id"] is not None)
            cache.watermark = head["xmin"]
            cached = cache.ids() if cache.should_reconcile(int(head["live"])) else None
        if cached is not None:  # rows deleted since (by anyone) linger in the matrix
            live = yield Sql(_sql.cache_live_ids_sql(bool(prefix)), scope_params)
            with self._cache_lock:
                cache.retain((row["id"] for row in live), among=cached)
        return cache

    def _list_namespaces(self, op: ListNamespacesOp) -> Program:
        literal: list[str] = []
        for condition in op.match_conditions or ():
            if condition.match_type == "prefix":
                for label in condition.path:
                    if label == "*":
                        break
                    literal.append(label)
                break
        bounds = prefix_range(tuple(literal))
        rows = yield Sql(
            _sql.list_namespaces_sql(bounds is not None),
            {"ns_lo": bounds[0], "ns_hi": bounds[1]} if bounds else {"ns_lo": ""},
        )
        namespaces = [decode_namespace(row["ns"]) for row in rows]
        namespaces = [ns for ns in namespaces if matches_conditions(ns, op.match_conditions)]
        if op.max_depth is not None:
            namespaces = list({ns[: op.max_depth] for ns in namespaces})
        namespaces.sort()
        return namespaces[op.offset : op.offset + op.limit]

    def _upsert(
        self, upserts: list[tuple[PreparedValue, float | None]], doc_vectors: list[list[float]]
    ) -> Program:
        sizes = [2 if p.content_text else 1 for p, _ in upserts if p.text]
        vectors = memory_vectors(doc_vectors, sizes)
        slots: list[int | None] = []
        filled = 0
        for prepared, _ in upserts:
            slots.append(filled if prepared.text else None)
            filled += bool(prepared.text)
        params = {
            "ns": [encode_namespace(p.namespace) for p, _ in upserts],
            "key": [p.key for p, _ in upserts],
            "value": [p.value_json for p, _ in upserts],
            "text": [p.text for p, _ in upserts],
            "kind": [p.kind for p, _ in upserts],
            "importance": [p.importance for p, _ in upserts],
            "valid_from": [p.valid_from for p, _ in upserts],
            "invalid_at": [p.invalid_at for p, _ in upserts],
            "expires_at": [p.expires_at for p, _ in upserts],
            "ttl": [ttl for _, ttl in upserts],
            "derived": [_json_or_none(p.derived_from) for p, _ in upserts],
            "slot": slots,
            "vectors": (
                Float4Array(vectors) if self.vector_mode == "pgvector" else encode_vector(vectors)
            ),
            "cfg": self.retrieval.text_search_config,
            "actor": current_actor(),
        }
        open_ended = [p for p, _ in upserts if p.invalid_at is not None and p.valid_from is None]
        if open_ended:  # their interval starts where the stored memory's does (or now)
            rows = yield Sql(
                _sql.VALID_FROM_OF,
                {
                    "ns": [encode_namespace(p.namespace) for p in open_ended],
                    "key": [p.key for p in open_ended],
                },
            )
            starts = {(row["ns"], row["key"]): row["valid_from"] for row in rows}
            for p in open_ended:
                assert p.invalid_at is not None
                check_interval(
                    starts[(encode_namespace(p.namespace), p.key)], p.invalid_at, "invalid_at"
                )
        yield Sql(_sql.upsert_sql(self.vector_mode or "exact", self.dims, self.vector_type), params)
        self._written += len(upserts)
        if self._written >= self._analyze_at:
            self._analyze_at = self._written * 2
            yield Sql(_sql.ANALYZE_ITEMS)

    def _invalidate_program(
        self, namespace: tuple[str, ...], key: str, at: datetime | None
    ) -> Program:
        namespace = validate_namespace(namespace)
        validate_key(key)
        moment = check_time(at, "at") if at is not None else None  # None: the server's now
        yield from self._ensure_mode()
        yield Sql(_sql.LOCK_NAMESPACES, {"ns": [encode_namespace(namespace)]})
        rows = yield Sql(
            _sql.INVALIDATE_ITEM,
            {
                "ns": encode_namespace(namespace),
                "key": key,
                "at": moment,
                "at_text": None if moment is None else moment.isoformat(),
                "actor": current_actor(),
            },
        )
        if not rows:
            return False
        if not rows[0]["changed"]:
            check_interval(rows[0]["valid_from"], rows[0]["at"], "at")
        return True

    def _history_program(self, namespace: tuple[str, ...], key: str) -> Program:
        namespace = validate_namespace(namespace)
        validate_key(key)
        yield from self._ensure_mode()
        rows = yield Sql(_sql.HISTORY_OF, {"ns": encode_namespace(namespace), "key": key})
        return [
            HistoryEntry(
                namespace=decode_namespace(row["ns"]),
                key=row["key"],
                action=row["action"],
                old_text=row["old_text"],
                new_text=row["new_text"],
                old_value=row["old_value"],
                new_value=row["new_value"],
                actor=row["actor"],
                at=row["at"],
            )
            for row in rows
        ]

    def _forget_program(self, namespace_prefix: tuple[str, ...], analyze: bool = True) -> Program:
        prefix = validate_prefix(namespace_prefix)
        if not prefix:
            raise InvalidNamespaceError(
                "forget() needs a non-empty namespace prefix such as ('memories', user_id)"
            )
        yield from self._ensure_mode()
        yield Sql(_sql.LOCK_STORE)  # its lineage reaches namespaces found as it goes: alone
        total = yield from erase_scope(self._scope_params(prefix), analyze=bool(analyze))
        with self._cache_lock:
            self._caches.drop(encode_namespace(prefix))
        return total

    def _sweep_program(self) -> Program:
        yield from self._ensure_mode()
        namespaces = [row["ns"] for row in (yield Sql(_sql.EXPIRED_NAMESPACES))]
        if not namespaces:
            return 0
        yield Sql(_sql.LOCK_NAMESPACES, {"ns": namespaces})
        rows = yield Sql(_sql.SWEEP_EXPIRED, {"ns": namespaces})
        return int(rows[0]["n"]) if rows else 0

    def _decay_program(self, namespace_prefix: tuple[str, ...], config: DecayConfig) -> Program:
        prefix = validate_prefix(namespace_prefix)
        if not isinstance(config, DecayConfig):
            raise ConfigurationError(f"config must be a DecayConfig, got {type(config).__name__}")
        yield from self._ensure_mode()
        yield from self._write_access(force=True)  # decay reads the access counts
        params = {  # "now" is the server's: one clock for valid_from and invalid_at
            **self._scope_params(prefix),
            "half_life": config.half_life.total_seconds(),
            "min_age": config.min_age,
            "threshold": config.threshold,
            "kinds": list(config.kinds) if config.kinds else None,
        }
        scope = self._scope_params(prefix)
        namespaces = [
            row["ns"] for row in (yield Sql(_sql.decay_namespaces_sql(bool(prefix)), scope))
        ]
        if not namespaces:
            return 0
        yield Sql(_sql.LOCK_NAMESPACES, {"ns": namespaces})
        params["ns"] = namespaces
        rows = yield Sql(_sql.decay_sql(config.mode == "delete", bool(prefix)), params)
        return int(rows[0]["n"]) if rows else 0


def _search_item(row: Mapping[str, Any], parts: ScoreBreakdown | None, explain: bool) -> SearchItem:
    """A search result; with ``explain``, an :class:`ExplainedSearchItem` carrying ``parts``."""
    fields: dict[str, Any] = {
        "namespace": decode_namespace(row["ns"]),
        "key": row["key"],
        "value": row["value"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "score": None if parts is None else parts.score,
    }
    return ExplainedSearchItem(**fields, explanation=parts) if explain else SearchItem(**fields)


def _checked_list_op(op: ListNamespacesOp) -> ListNamespacesOp:
    """``op`` with its conditions and counts checked (negative counts slice like
    ``InMemoryStore``'s; huge ones are clamped)."""
    conditions = op.match_conditions or ()
    if not isinstance(conditions, (list, tuple)):
        raise InvalidValueError("match_conditions must be a tuple of MatchCondition")
    checked: list[MatchCondition] = []
    for condition in conditions:
        if not isinstance(condition, MatchCondition) or condition.match_type not in (
            "prefix",
            "suffix",
        ):
            raise InvalidValueError(
                f"match condition {shown(condition)} is not a prefix/suffix MatchCondition"
            )
        path: Any = condition.path
        if isinstance(path, str):  # one label (a "." in it is refused, as in any label)
            path = (path,)
        checked.append(condition._replace(path=validate_prefix(path)))
    conditions = tuple(checked)
    max_depth = op.max_depth
    if max_depth is not None:
        max_depth = check_rows(max_depth, "max_depth", allow_negative=True)
    return op._replace(
        match_conditions=tuple(conditions),
        max_depth=max_depth,
        limit=check_rows(op.limit, "limit", allow_negative=True),
        offset=check_rows(op.offset, "offset", allow_negative=True),
    )


def _texts_to_embed(upserts: Sequence[tuple[PreparedValue, float | None]]) -> list[str]:
    """Texts to embed for the upserts, in order: each indexed text, then its ``content``
    alone when it was indexed with context (see ``focus_text``)."""
    texts: list[str] = []
    for prepared, _ in upserts:
        if prepared.text:
            texts.append(prepared.text)
            if prepared.content_text:
                texts.append(prepared.content_text)
    return texts


def _json_or_none(refs: list[dict[str, str]] | None) -> str | None:
    import json

    return None if refs is None else json.dumps(refs, ensure_ascii=False)
