"""The batch program: gets, searches, listings, puts and deletes in one transaction (pure).

The keyed statements (gets, the namespace locks, upserts, deletes) are prepared: their plan
does not depend on the values (key lookups), and a prepared write saves the server a parse
and a plan per batch (~12 % of a single ``put``). Searches stay unprepared (see
``_statements_aio``). psycopg prepares nothing on a connection with ``prepare_threshold=None``
(what the store is given behind a transaction pooler).

The batch is planned (``store._plan``) and embedded before its first statement; its reads
see the state before its writes, and every writer takes its namespace locks first, in one
global order. Effects outside the database (access counts) come after its last statement.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import numpy as np
from langgraph.store.base import Item, ListNamespacesOp, Op, PutOp, Result, SearchItem
from psycopg import sql

from langgraph_recall._pg.program import Stmt
from langgraph_recall.extraction.entities import find_entities
from langgraph_recall.retrieval import ScoreBreakdown
from langgraph_recall.store._bounds import MAX_ROWS
from langgraph_recall.store._embedding import EmbedDocuments, EmbedQueries, texts_to_embed
from langgraph_recall.store._filters import compile_filter
from langgraph_recall.store._namespace import (
    decode_namespace,
    encode_namespace,
    matches_conditions,
    prefix_range,
)
from langgraph_recall.store._plan import Plan, plan_batch
from langgraph_recall.store._ranking import rank_rows, search_item
from langgraph_recall.store._types import MemorySearchOp, current_actor
from langgraph_recall.store._values import PreparedValue, check_interval
from langgraph_recall.store._vector_cache import (
    VectorCache,
    encode_vector,
    memory_vectors,
    unit_vector,
)
from langgraph_recall.store.postgres import _sql
from langgraph_recall.store.postgres._bookkeeping import BookkeepingPrograms
from langgraph_recall.store.postgres._float4_array import Float4Array
from langgraph_recall.store.postgres._migrations import VectorMode
from langgraph_recall.store.postgres._state import MAX_EF_SEARCH
from langgraph_recall.store.postgres._types import Program
from langgraph_recall.telemetry import end_span, records, start_store_span

Clause = sql.Composable

__all__ = ["LINKS_READ", "BatchPrograms"]

LINKS_READ = 500
"""A search reads at most this many linked memories (the strongest links, the newest first
among equally strong ones): each candidate among them gets its link, a candidate beyond them
none; the ``entity_candidates`` strongest may join the candidates."""


def _id_array(ids: np.ndarray[Any, Any]) -> str:
    """Row ids as a Postgres array literal (``{3,1,2}``): psycopg's list dumper spends ~4 µs
    an element, ~0.7 ms on the ~180 ids an exact-path search passes."""
    return "{" + ",".join(map(str, ids.tolist())) + "}"


class BatchPrograms(BookkeepingPrograms):
    """Batch programs of the Postgres memory store."""

    def _batch_program(self, ops: list[Op]) -> Program[list[Result]]:
        started = start_store_span(ops)
        if started is None:
            return (yield from self._batch_steps(ops))
        try:
            results = yield from self._batch_steps(ops)
        except GeneratorExit:  # abandoned by the runner: the span still ends
            end_span(started)
            raise
        except Exception as exc:
            end_span(started, exc, {"langgraph_recall.store.vector_mode": self.vector_mode or ""})
            raise
        writes = sum(isinstance(op, PutOp) for op in ops)
        end_span(
            started,
            attributes={
                "gen_ai.memory.records": records(results) + writes,
                "langgraph_recall.store.vector_mode": self.vector_mode or "",
            },
        )
        return results

    def _planned(self, ops: Sequence[Op]) -> Program[tuple[Plan[Clause], list[list[float]]]]:
        """The batch's plan (every op validated) and the vectors of the texts its puts embed."""
        plan = plan_batch(
            ops,
            fields=self.fields,
            max_value_bytes=self.max_value_bytes,
            compile_filter=_compile_filter,
            entities=self.link_entities,
        )
        texts = texts_to_embed(plan.upserts)
        doc_vectors: list[list[float]] = []
        if texts:
            doc_vectors = yield EmbedDocuments(texts)
            self._check_vectors(doc_vectors, len(texts))
        return plan, doc_vectors

    def _batch_steps(self, ops: list[Op]) -> Program[list[Result]]:
        plan, doc_vectors = yield from self._planned(ops)
        queries = sorted({op.query for _, op, _, _ in plan.searches if op.query})
        query_vectors: dict[str, list[float]] = {}
        if queries:
            vectors = yield EmbedQueries(queries)
            self._check_vectors(vectors, len(queries))
            query_vectors = dict(zip(queries, vectors, strict=True))
        yield from self._ensure_mode()

        if plan.gets:
            yield from self._get_all(plan)
        # a batch that is one search needs no transaction: its statement runs alone
        alone = len(ops) == 1
        for position, search, clause, params in plan.searches:
            plan.results[position] = yield from self._search(
                search, clause, params, query_vectors, plan, alone=alone
            )
        for position, list_op in plan.lists:
            plan.results[position] = yield from self._list_namespaces(list_op)
        written = sorted(
            {encode_namespace(p.namespace) for p, _ in plan.upserts}
            | {encode_namespace(ns) for ns, _ in plan.deletes}
        )
        if written:  # every writer takes its locks first, in one global order
            yield Stmt(_sql.LOCK_NAMESPACES, {"ns": written}, prepare=True)
        analyze = False
        if plan.upserts:
            analyze = yield from self._upsert(plan.upserts, doc_vectors)
        if plan.deletes:
            yield Stmt(
                _sql.DELETE_ITEMS,
                {
                    "ns": [encode_namespace(ns) for ns, _ in plan.deletes],
                    "key": [key for _, key in plan.deletes],
                    "actor": current_actor(),
                },
                prepare=True,
            )
        # effects outside the database come after the transaction's last statement: a
        # transaction the runner retries (deadlock victim) runs this program again
        if self.track_access and plan.accessed:
            self._access.record(plan.accessed, datetime.now(timezone.utc))
        yield from self._refresh_ttl(plan.refresh)
        yield from self._write_access(force=False)
        if analyze:
            # after the batch committed, alone: holding the batch's namespace locks through
            # an ANALYZE (and through waiting for another one) would stop other tenants'
            # writes; one that gives way to a lock is simply tried at the next threshold
            yield Stmt(_sql.ANALYZE_ITEMS, isolated=True)
        return plan.results

    def _get_all(self, plan: Plan[Clause]) -> Program[None]:
        params = {
            "ns": [encode_namespace(op.namespace) for _, op in plan.gets],
            "key": [op.key for _, op in plan.gets],
        }
        rows = yield Stmt(_sql.GET_ITEMS, params, fetch=True, prepare=True)
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

    def _search(
        self,
        op: MemorySearchOp,
        clause: Clause | None,
        filter_params: dict[str, Any],
        query_vectors: Mapping[str, list[float]],
        plan: Plan[Clause],
        *,
        alone: bool = False,
    ) -> Program[list[SearchItem]]:
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
            rows = yield Stmt(query, params, fetch=True, alone=alone)
            scored: Sequence[tuple[dict[str, Any], ScoreBreakdown | None]] = [
                (row, None) for row in rows
            ]
        else:
            scored = yield from self._hybrid(
                op, clause, params, query_vectors[op.query], alone=alone
            )
        plan.accessed.extend(row["id"] for row, _ in scored)
        if op.refresh_ttl:
            plan.refresh.extend(row["id"] for row, _ in scored if row["ttl_minutes"] is not None)
        return [search_item(row, parts, op.explain) for row, parts in scored]

    def _hybrid(
        self,
        op: MemorySearchOp,
        clause: Clause | None,
        params: dict[str, Any],
        query_vector: list[float],
        *,
        alone: bool = False,
    ) -> Program[list[tuple[dict[str, Any], ScoreBreakdown]]]:
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
        links = yield from self._entity_links(op, clause, params)
        linked = bool(links)
        if linked:
            params["link_ids"] = list(links)[: config.entity_candidates]
        scope = encode_namespace(op.namespace_prefix)
        if (
            self.vector_mode == "pgvector"
            and op.namespace_prefix
            and not self._large_scopes.contains(scope)
        ):
            params.update(
                qvec=Float4Array(unit_vector(query_vector)), scan_rows=_sql.SCOPE_SCAN_ROWS
            )
            scan = self._scope_scan_sql(op, clause, "pgvector", linked=linked)
            rows = yield Stmt(scan, params, fetch=True, alone=alone, prepare=True)
            if not rows or rows[0]["scope_rows"] <= _sql.SCOPE_SCAN_ROWS:
                rows = [row for row in rows if row["id"] is not None]
                nearness = {row["id"]: row["vector_similarity"] for row in rows}
                return rank_rows(rows, nearness, op, config, links)
            self._large_scopes.add(scope)  # the candidate path from now on
        statement = _sql.search_hybrid_sql(
            vector_mode=self.vector_mode or "exact",
            scoped=bool(op.namespace_prefix),
            include_invalid=op.include_invalid,
            filter_clause=clause,
            vector_type=self.vector_type,
            linked=linked,
        )
        similarity: Mapping[int, float | None]
        if self.vector_mode == "pgvector":
            params.update(
                qvec=Float4Array(unit_vector(query_vector)), exact_scale=_sql.EXACT_VECTOR_SCALE
            )
            ef = min(max(self.ef_search, n_vec), MAX_EF_SEARCH)  # deep pages: iterative scan
            yield Stmt(_sql.SET_HNSW_SEARCH, {"ef": str(ef)})
            rows = yield Stmt(statement, params, fetch=True)
            similarity = {row["id"]: row["vector_similarity"] for row in rows}
        else:
            query = np.asarray(query_vector, dtype=np.float32)
            cache = yield from self._refreshed_cache(op.namespace_prefix)
            # a small scope: one prepared scan of its rows (see scope_search_sql)
            scope_scan = self._exact_scan(op, clause, cache, linked=linked)
            fetch = n_vec * 4 + 16
            while True:
                with self._cache_lock:
                    ids, _ = cache.top(query, fetch)
                params["vec_ids"] = _id_array(ids)
                if scope_scan is not None:
                    params["scan_rows"] = _sql.SCOPE_SCAN_ROWS
                    rows = yield Stmt(scope_scan, params, fetch=True, prepare=True)
                    if rows and rows[0]["scope_rows"] > _sql.SCOPE_SCAN_ROWS:
                        self._large_scopes.add(scope)  # the candidate path from now on
                        scope_scan = None
                        continue
                    rows = [row for row in rows if row["id"] is not None]
                else:
                    rows = yield Stmt(statement, params, fetch=True)
                found = sum(1 for row in rows if row["vector_rank"] is not None)
                if found >= n_vec or len(ids) >= len(cache):
                    break
                fetch *= 4
            with self._cache_lock:
                similarity = cache.similarity(query, [row["id"] for row in rows])
        return rank_rows(rows, similarity, op, config, links)

    def _entity_links(
        self, op: MemorySearchOp, clause: Clause | None, params: dict[str, Any]
    ) -> Program[dict[int, tuple[float, tuple[str, ...]]]]:
        """The memories of the search's scope linked to the entities its query names
        (strongest first), with their link strength and the entities that link them; none
        when ``entity_weight`` is 0 or the query names no entity (no statement then)."""
        config = self.retrieval
        entities = find_entities(op.query) if op.query and config.entity_weight else ()
        if not entities:
            return {}
        statement = _sql.entity_links_sql(
            scoped=bool(op.namespace_prefix),
            include_invalid=op.include_invalid,
            filter_clause=clause,
            hops=config.entity_hops,
        )
        link_params = {
            **params,
            "entities": list(entities),
            "cap": min(config.entity_candidates, MAX_ROWS),  # a bigint parameter
            "link_rows": LINKS_READ,
        }
        rows = yield Stmt(statement, link_params, fetch=True)
        return {row["id"]: (float(row["link"]), tuple(row["via"])) for row in rows}

    def _exact_scan(
        self, op: MemorySearchOp, clause: Clause | None, cache: VectorCache, *, linked: bool
    ) -> sql.Composed | None:
        """The one-statement scan of ``op``'s scope on the exact path, or ``None`` when the
        scope is not known to be small (no namespace prefix, a scope seen above
        :data:`~langgraph_recall.store.postgres._sql.SCOPE_SCAN_ROWS`, or more vectors
        cached than that): the candidate path, planned for its values, answers those."""
        scope = encode_namespace(op.namespace_prefix)
        if not op.namespace_prefix or self._large_scopes.contains(scope):
            return None
        with self._cache_lock:
            cached = len(cache)
        if cached > _sql.SCOPE_SCAN_ROWS:
            self._large_scopes.add(scope)
            return None
        return self._scope_scan_sql(op, clause, "exact", linked=linked)

    def _scope_scan_sql(
        self, op: MemorySearchOp, clause: Clause | None, vectors: VectorMode, *, linked: bool
    ) -> sql.Composed:
        return _sql.scope_search_sql(
            include_invalid=op.include_invalid,
            filter_clause=clause,
            vector_type=self.vector_type,
            vectors=vectors,
            linked=linked,
        )

    def _refreshed_cache(self, prefix: tuple[str, ...]) -> Program[VectorCache]:
        scope = encode_namespace(prefix)
        scope_params = self._scope_params(prefix)
        while True:
            with self._cache_lock:
                cache = self._caches.get(scope)
                since = cache.watermark
            rows = yield Stmt(
                _sql.cache_refresh_sql(bool(prefix)), {"since": since, **scope_params}, fetch=True
            )
            head = next(row for row in rows if row["xmin"] is not None)
            with self._cache_lock:
                if cache.same_history(head["epoch"]):
                    break
            # another server history (a promoted standby, a restore): re-read everything
        with self._cache_lock:
            cache.apply((row["id"], row["embedding"]) for row in rows if row["id"] is not None)
            cache.watermark = head["xmin"]
            self._caches.trim(scope)
            cached = cache.ids() if cache.should_reconcile(int(head["live"])) else None
        if cached is not None:  # rows deleted since (by anyone) linger in the matrix
            live = yield Stmt(_sql.cache_live_ids_sql(bool(prefix)), scope_params, fetch=True)
            with self._cache_lock:
                cache.retain((row["id"] for row in live), among=cached)
                self._caches.trim(scope)
        return cache

    def _list_namespaces(self, op: ListNamespacesOp) -> Program[list[tuple[str, ...]]]:
        literal: list[str] = []
        for condition in op.match_conditions or ():
            if condition.match_type == "prefix":
                for label in condition.path:
                    if label == "*":
                        break
                    literal.append(label)
                break
        bounds = prefix_range(tuple(literal))
        rows = yield Stmt(
            _sql.list_namespaces_sql(bounds is not None),
            {"ns_lo": bounds[0], "ns_hi": bounds[1]} if bounds else {"ns_lo": ""},
            fetch=True,
        )
        namespaces = [decode_namespace(row["ns"]) for row in rows]
        namespaces = [ns for ns in namespaces if matches_conditions(ns, op.match_conditions)]
        if op.max_depth is not None:
            namespaces = list({ns[: op.max_depth] for ns in namespaces})
        namespaces.sort()
        return namespaces[op.offset : op.offset + op.limit]

    def _upsert(
        self, upserts: list[tuple[PreparedValue, float | None]], doc_vectors: list[list[float]]
    ) -> Program[bool]:
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
            "entities": [json.dumps(p.entities, ensure_ascii=False) for p, _ in upserts],
            "slot": slots,
            "vectors": (
                Float4Array(vectors) if self.vector_mode == "pgvector" else encode_vector(vectors)
            ),
            "cfg": self.retrieval.text_search_config,
            "actor": current_actor(),
        }
        open_ended = [p for p, _ in upserts if p.invalid_at is not None and p.valid_from is None]
        if open_ended:  # their interval starts where the stored memory's does (or now)
            rows = yield Stmt(
                _sql.VALID_FROM_OF,
                {
                    "ns": [encode_namespace(p.namespace) for p in open_ended],
                    "key": [p.key for p in open_ended],
                },
                fetch=True,
            )
            starts = {(row["ns"], row["key"]): row["valid_from"] for row in rows}
            for p in open_ended:
                assert p.invalid_at is not None
                check_interval(
                    starts[(encode_namespace(p.namespace), p.key)], p.invalid_at, "invalid_at"
                )
        yield Stmt(
            _sql.upsert_sql(self.vector_mode or "exact", self.dims, self.vector_type),
            params,
            prepare=True,
        )
        self._written += len(upserts)
        if self._written >= self._analyze_at:
            self._analyze_at = self._written * 2
            return True
        return False


def _compile_filter(value_filter: dict[str, Any]) -> tuple[Clause, dict[str, Any]]:
    return compile_filter(value_filter, sql.SQL("i.value"))


def _json_or_none(refs: list[dict[str, str]] | None) -> str | None:
    return None if refs is None else json.dumps(refs, ensure_ascii=False)
