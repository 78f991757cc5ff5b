"""The Postgres memory store's configuration and the state its programs share (pure).

:class:`StoreState` validates the constructor's options and holds what the programs
(``_setup``, ``_batch``, ``_maintenance``, ``_bookkeeping``) read and update: the vector
mode the database was set up with, the exact-search caches, the access log.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from langgraph.store.base import IndexConfig, TTLConfig, ensure_embeddings

from langgraph_recall._pg.durability import checked_replicas_option
from langgraph_recall._pg.program import Stmt
from langgraph_recall.errors import ConfigurationError, InvalidValueError, MigrationError
from langgraph_recall.retrieval import RetrievalConfig
from langgraph_recall.store._access import AccessLog
from langgraph_recall.store._bounds import MAX_VALUE_BYTES, check_ttl
from langgraph_recall.store._embedding import check_vectors, default_embeddings
from langgraph_recall.store._namespace import prefix_range
from langgraph_recall.store._values import DEFAULT_MAX_VALUE_BYTES
from langgraph_recall.store._vector_cache import (
    DEFAULT_CACHE_BYTES,
    DEFAULT_CACHE_SCOPES,
    VectorCacheRegistry,
)
from langgraph_recall.store.postgres import _sql
from langgraph_recall.store.postgres._index import check_unit_length, index_options
from langgraph_recall.store.postgres._migrations import VectorMode
from langgraph_recall.store.postgres._types import Program, SetupReport

__all__ = ["ANALYZE_FIRST_AT", "MAX_EF_SEARCH", "StoreOptions", "StoreState"]

LARGE_SCOPES_KEPT = 4096  # large scopes remembered (least recently added forgotten first)
ANALYZE_FIRST_AT = 2000  # rows this store wrote before it first refreshes planner statistics
MAX_EF_SEARCH = 1000  # pgvector's upper bound of hnsw.ef_search


class ScopeSet:
    """A bounded set of namespace scopes (thread-safe; the oldest addition goes first).

    Example:
        ```python
        from langgraph_recall.store.postgres._state import ScopeSet

        scopes = ScopeSet(1)
        scopes.add("a")
        scopes.add("b")
        assert scopes.contains("b") and not scopes.contains("a")
        ```
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._scopes: dict[str, None] = {}
        self._lock = threading.Lock()

    def add(self, scope: str) -> None:
        """Remember ``scope``."""
        with self._lock:
            self._scopes[scope] = None
            while len(self._scopes) > self._size:
                del self._scopes[next(iter(self._scopes))]

    def contains(self, scope: str) -> bool:
        """Whether ``scope`` is remembered."""
        return scope in self._scopes


class StoreOptions(TypedDict, total=False):
    """The memory stores' tuning knobs (keyword arguments of the constructors and of
    ``from_conn_string``; every one is optional).

    Attributes:
        max_value_bytes: The largest JSON value a put may write (default 1 MiB, at most
            what one JSONB value holds comfortably).
        track_access: Record which memories searches return (access counts feed ranking
            and decay; default ``True``).
        access_flush_interval: Seconds the access counts wait before they are written
            (default 1.0; ``0`` writes them with every operation).
        ef_search: pgvector's ``hnsw.ef_search`` (1..1000, default 40).
        lexical_budget: Full-text candidates scored per search at most (default 300).
        hnsw_m: HNSW ``m`` of the index built at setup (default 16).
        hnsw_ef_construction: HNSW ``ef_construction`` (default 64).
        exact_cache_scopes: Namespace scopes whose vectors the exact search (no pgvector)
            keeps in memory (default 10,000; the least recently searched go first).
        exact_cache_bytes: Bytes of those vectors kept at most, over every scope (default
            128 MiB, ~70,000 384-d vectors; the scope being searched always stays).
        replicas: Acknowledge a write only once this many standbys hold it: ``setup()``
            checks that the server's commits wait for them (``synchronous_standby_names``,
            ``synchronous_commit``) and raises ``ConfigurationError`` saying what to set if
            not (default 0: whatever the server does).
        link_entities: Link each memory written to the entities it mentions (its
            ``entities`` field, else the offline finder on its indexed text), so that a
            search naming an entity reaches memories through it (``RetrievalConfig``'s
            ``entity_weight``). Default ``False``: the links cost batched writes about a
            third of their speed and, measured on LoCoMo and BEAM, raised no recall;
            ``False`` also removes the links of the memories it rewrites.
    """

    max_value_bytes: int
    track_access: bool
    access_flush_interval: float
    ef_search: int
    lexical_budget: int
    hnsw_m: int
    hnsw_ef_construction: int
    exact_cache_scopes: int
    exact_cache_bytes: int
    replicas: int
    link_entities: bool


def _from_ann(from_ann: int | None, given: int, default: int, ann_name: str, name: str) -> int:
    """An HNSW parameter from ``ann_index_config`` or the keyword, refusing a contradiction."""
    if from_ann is None:
        return given
    if given not in (default, from_ann):
        raise ConfigurationError(
            f"ann_index_config[{ann_name!r}]={from_ann} contradicts {name}={given}; give one"
        )
    return from_ann


class StoreState:
    """Configuration, validation and the state behind both stores' programs."""

    def _target(self) -> str:  # pragma: no cover
        """The server, as error messages name it (each store class says)."""
        raise NotImplementedError

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
        exact_cache_scopes: int = DEFAULT_CACHE_SCOPES,
        exact_cache_bytes: int = DEFAULT_CACHE_BYTES,
        replicas: int = 0,
        link_entities: bool = False,
    ) -> None:
        self.replicas = checked_replicas_option(replicas)
        if not isinstance(link_entities, bool):
            raise ConfigurationError(f"link_entities must be True or False, got {link_entities!r}")
        self.link_entities = link_entities
        if index is None:
            self.embeddings, self.dims = default_embeddings()
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
        if self.retrieval.entity_weight and not self.link_entities:
            raise ConfigurationError(
                "RetrievalConfig(entity_weight=...) ranks by entity links, which this store "
                "does not write: pass link_entities=True to the store (memories written "
                "before have no links until they are written again), or leave entity_weight "
                "at 0"
            )
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
        self._read_only_until = 0.0  # monotonic time until which bookkeeping is skipped
        self._read_only_warned = False
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
        for name, bound in (
            ("exact_cache_scopes", exact_cache_scopes),
            ("exact_cache_bytes", exact_cache_bytes),
        ):
            if not (isinstance(bound, int) and not isinstance(bound, bool) and bound > 0):
                got = f"{bound!r}"[:40] if not isinstance(bound, int) else "a number below 1"
                raise ConfigurationError(f"{name} must be a positive integer, got {got}")
        self._caches = VectorCacheRegistry(self.dims, exact_cache_scopes, exact_cache_bytes)
        self._cache_lock = threading.Lock()
        self._refresh_lock = threading.Lock()
        self._refresh_retry: set[int] = set()
        # scopes seen holding more than SCOPE_SCAN_ROWS memories (searched by candidates)
        self._large_scopes = ScopeSet(LARGE_SCOPES_KEPT)

    # ------------------------------------------------------------------ helpers
    @property
    def refresh_on_read(self) -> bool:
        """Whether reads refresh TTLs unless a call says otherwise (``TTLConfig``)."""
        return bool((self.ttl_config or {}).get("refresh_on_read", True))

    def _ensure_mode(self) -> Program[VectorMode]:
        if self.vector_mode is not None:
            return self.vector_mode
        rows = yield Stmt(_sql.READ_META, tolerate_error=True, fetch=True)
        meta = {} if isinstance(rows, Exception) else {r["name"]: r["value"] for r in rows}
        if "vector_mode" not in meta:
            raise MigrationError("the memory store schema is missing; call store.setup() first")
        return self._adopt_meta(meta)

    def _adopt_meta(self, meta: Mapping[str, str]) -> VectorMode:
        """Take the vector mode (and element type) the database was set up with."""
        dims = int(meta.get("dims", self.dims))
        if dims != self.dims:
            raise ConfigurationError(
                f"the database was set up for {dims}-dimensional embeddings but this store "
                f"embeds {self.dims} dimensions; use the same embedder or a new database"
            )
        mode: VectorMode = "pgvector" if meta["vector_mode"] == "pgvector" else "exact"
        self.vector_mode = mode
        if mode == "pgvector":
            stored = meta.get("vector_type", "vector")
            if self._vector_type_given and stored != self.vector_type:
                raise ConfigurationError(
                    f"the database was set up with vector_type={stored!r} embeddings but this "
                    f"store asks for vector_type={self.vector_type!r}; use {stored!r} (or leave "
                    "it out) or a new database"
                )
            self.vector_type = stored
        return mode

    def _check_vectors(self, vectors: Sequence[Sequence[float]], count: int) -> None:
        check_vectors(vectors, count=count, dims=self.dims)
        if vectors and self.index_options.unit_length_required:
            check_unit_length(vectors, self.index_options.distance_type)

    def _scope_params(self, prefix: tuple[str, ...]) -> dict[str, Any]:
        bounds = prefix_range(prefix)
        return {"ns_lo": bounds[0], "ns_hi": bounds[1]} if bounds else {}
