"""Exact vector search without pgvector: an in-process matrix per namespace scope.

Embeddings are stored as float32 ``bytea``, already in the store's similarity space (see
:func:`memory_vector`: unit vectors, or the mean of unit vectors for a memory embedded
with its context), and similarity is the inner product with the unit query vector — the
same as pgvector's ``<#>`` on the other path. For each searched namespace prefix the
store keeps a :class:`VectorCache` (row ids + the stored float32 matrix) and keeps
it in sync incrementally: rows carry the writing transaction id (``txid``); the cache
remembers the snapshot ``xmin`` of its last refresh and re-reads only rows written by
transactions at or after it (every earlier transaction has finished, so nothing is
missed). Transaction ids are comparable only within one server history: each refresh also
reads the server's epoch, and a cache filled on another history (a promoted standby whose
ids restarted lower, a restore) is emptied and read again (:meth:`VectorCache.same_history`).
A deleted row leaves no trace there, so each refresh also reads how many
indexed rows the scope holds (``lgm_memory_ns_stats``, kept exact by triggers): once the
cache holds more than that by :func:`VectorCache.dead_rows` above
``max(RECONCILE_MIN_DEAD, live / RECONCILE_DEAD_FRACTION)``, the store reads the scope's
live ids and :meth:`VectorCache.retain` drops the rest and compacts the matrix — whoever
deleted them (this process, another one, ``forget``, the TTL sweeper, decay). The cache
thus holds at most ~1.25× the live rows (plus a few hundred) and memory stays flat under
any mix of puts and deletes. Until then a dead row can never be returned: the candidate
query re-checks every id against the table with the same predicates as the pgvector
path, which is why both paths give the same results.

Example:
    ```python
    import numpy as np
    from langgraph_recall.store._vector_cache import VectorCache, encode_vector

    cache = VectorCache(dims=2)
    cache.apply([(1, encode_vector([1.0, 0.0])), (2, encode_vector([0.0, 1.0]))])
    ids, sims = cache.top(np.array([1.0, 0.1], dtype=np.float32), 1)
    assert ids.tolist() == [1]
    ```
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

__all__ = [
    "RECONCILE_DEAD_FRACTION",
    "RECONCILE_MIN_DEAD",
    "VectorCache",
    "VectorCacheRegistry",
    "decode_vector",
    "encode_vector",
    "memory_vector",
    "memory_vectors",
    "unit_vector",
]

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]

RECONCILE_MIN_DEAD = 256  # dead rows a cache may hold before it reconciles, at least ...
RECONCILE_DEAD_FRACTION = 4  # ... or a quarter of the live rows
MIN_CAPACITY = 64


def encode_vector(vector: Sequence[float] | FloatArray) -> bytes:
    """Little-endian float32 bytes (the exact path's ``bytea`` format)."""
    return np.asarray(vector, dtype="<f4").tobytes()


def decode_vector(raw: bytes) -> FloatArray:
    """Inverse of :func:`encode_vector`."""
    return np.frombuffer(raw, dtype="<f4").astype(np.float32)


def unit_vector(vector: Sequence[float] | FloatArray) -> FloatArray:
    """``vector`` scaled to length 1 (float32); a zero vector stays zero.

    Example:
        ```python
        from langgraph_recall.store._vector_cache import unit_vector

        assert unit_vector([3.0, 4.0]).tolist() == [0.6000000238418579, 0.800000011920929]
        ```
    """
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array


def memory_vector(vectors: Sequence[Sequence[float] | FloatArray]) -> FloatArray:
    """The stored vector of a memory: the mean of the unit vectors of its embedded texts.

    Its inner product with a unit query vector is the mean cosine similarity of the query
    to each text — for one text, plain cosine similarity. A memory indexed with context is
    embedded as its whole indexed text and as its own ``content``; the mean keeps the
    context's help without letting it outweigh what the memory says.

    Example:
        ```python
        from langgraph_recall.store._vector_cache import memory_vector, unit_vector

        blended = memory_vector([[1.0, 0.0], [0.0, 2.0]])
        assert blended.tolist() == [0.5, 0.5]
        assert float(blended @ unit_vector([1.0, 0.0])) == 0.5  # mean of cos 1 and cos 0
        ```
    """
    if not vectors:
        raise ValueError("memory_vector() needs at least one vector")
    row: FloatArray = memory_vectors(vectors, [len(vectors)])[0]
    return row


def memory_vectors(
    vectors: Sequence[Sequence[float] | FloatArray], sizes: Sequence[int]
) -> FloatArray:
    """:func:`memory_vector` for a whole batch in one numpy pass (one row per memory).

    ``vectors`` holds the texts' vectors of consecutive memories; ``sizes`` says how many
    belong to each memory (1 or more).

    Example:
        ```python
        from langgraph_recall.store._vector_cache import memory_vectors

        rows = memory_vectors([[2.0, 0.0], [1.0, 0.0], [0.0, 3.0]], [1, 2])
        assert rows.tolist() == [[1.0, 0.0], [0.5, 0.5]]
        ```
    """
    if not sizes:
        return np.zeros((0, 0), dtype=np.float32)
    if any(size < 1 for size in sizes) or sum(sizes) != len(vectors):
        raise ValueError("memory_vectors(): sizes must be >= 1 and add up to len(vectors)")
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    units = matrix / np.where(norms > 0, norms, 1.0)
    if all(size == 1 for size in sizes):
        return units.astype(np.float32)
    counts = np.asarray(sizes)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    mean: FloatArray = (np.add.reduceat(units, starts, axis=0) / counts[:, None]).astype(np.float32)
    return mean


class VectorCache:
    """Stored vectors of one namespace scope, addressable by row id (inner-product search)."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self.epoch: str | None = None
        self._empty()

    def _empty(self) -> None:
        self.watermark = "0"
        self._ids: IntArray = np.zeros(0, dtype=np.int64)
        self._matrix: FloatArray = np.zeros((0, self.dims), dtype=np.float32)
        self._size = 0
        self._row_of: dict[int, int] = {}
        self._free: list[int] = []

    def __len__(self) -> int:
        return len(self._row_of)

    @property
    def nbytes(self) -> int:
        """Bytes held by the id array and the matrix (allocated capacity, not just rows)."""
        return int(self._ids.nbytes + self._matrix.nbytes)

    def same_history(self, epoch: str) -> bool:
        """Whether the rows just read since :attr:`watermark` complete the cache: they do
        within one server history (``epoch``, see :mod:`langgraph_recall._pg.epoch`). After
        a promotion or a restore transaction ids may restart lower, so a watermark from the
        previous history would miss rows: the cache is emptied (and returns ``False``) so the
        caller reads the scope again from the start.

        Example:
            ```python
            from langgraph_recall.store._vector_cache import VectorCache, encode_vector

            cache = VectorCache(dims=2)
            assert cache.same_history("1/00000001/5")
            cache.apply([(1, encode_vector([1.0, 0.0]))])
            cache.watermark = "900"
            assert not cache.same_history("1/00000002/7")
            assert len(cache) == 0 and cache.watermark == "0"
            assert cache.same_history("1/00000002/7")
            ```
        """
        if self.epoch is None or self.epoch == epoch:
            self.epoch = epoch
            return True
        self._empty()
        self.epoch = epoch
        return False

    def dead_rows(self, live: int) -> int:
        """How many cached rows exceed ``live``, the number of indexed rows in the scope."""
        return max(0, len(self) - live)

    def should_reconcile(self, live: int) -> bool:
        """Whether enough deleted rows linger that :meth:`retain` should drop them."""
        return self.dead_rows(live) > max(RECONCILE_MIN_DEAD, live // RECONCILE_DEAD_FRACTION)

    def ids(self) -> set[int]:
        """The cached row ids."""
        return set(self._row_of)

    def retain(self, live_ids: Iterable[int], *, among: set[int] | None = None) -> int:
        """Drop the cached rows of ``among`` (default: all) that are not in ``live_ids``, and
        compact the matrix; returns how many rows were dropped.

        ``among`` is the set of ids cached when ``live_ids`` was read: rows another thread
        added since then are newer than that read and are kept.

        Example:
            ```python
            from langgraph_recall.store._vector_cache import VectorCache, encode_vector

            cache = VectorCache(dims=2)
            cache.apply([(1, encode_vector([1.0, 0.0])), (2, encode_vector([0.0, 1.0]))])
            assert cache.retain([2, 3]) == 1 and len(cache) == 1
            ```
        """
        live = set(live_ids)
        doomed = (self.ids() if among is None else among) - live
        keep = sorted(slot for row_id, slot in self._row_of.items() if row_id not in doomed)
        dropped = len(self._row_of) - len(keep)
        slots = np.asarray(keep, dtype=np.int64)
        capacity = max(len(keep), MIN_CAPACITY)
        ids = np.full(capacity, -1, dtype=np.int64)
        matrix = np.zeros((capacity, self.dims), dtype=np.float32)
        ids[: len(keep)] = self._ids[slots]
        matrix[: len(keep)] = self._matrix[slots]
        self._ids, self._matrix, self._size = ids, matrix, len(keep)
        self._row_of = {int(row_id): slot for slot, row_id in enumerate(ids[: len(keep)])}
        self._free = []
        return dropped

    def _grow(self, needed: int) -> None:
        capacity = len(self._ids)
        if needed <= capacity:
            return
        new_capacity = max(needed, capacity * 2, MIN_CAPACITY)
        ids = np.full(new_capacity, -1, dtype=np.int64)
        ids[:capacity] = self._ids
        matrix = np.zeros((new_capacity, self.dims), dtype=np.float32)
        matrix[:capacity] = self._matrix
        self._ids, self._matrix = ids, matrix

    def apply(self, rows: Iterable[tuple[int, bytes | None]]) -> None:
        """Insert, replace or (with ``None``) remove embeddings by row id."""
        for row_id, raw in rows:
            slot = self._row_of.get(row_id)
            if raw is None:
                if slot is not None:
                    del self._row_of[row_id]
                    self._ids[slot] = -1
                    self._matrix[slot] = 0.0
                    self._free.append(slot)
                continue
            vector = decode_vector(raw)
            if slot is None:
                if self._free:
                    slot = self._free.pop()
                else:
                    self._grow(self._size + 1)
                    slot = self._size
                    self._size += 1
                self._row_of[row_id] = slot
                self._ids[slot] = row_id
            self._matrix[slot] = vector

    def top(self, query: FloatArray, n: int) -> tuple[IntArray, FloatArray]:
        """Ids and similarities (inner product with the unit query) of the ``n`` best rows."""
        if not self._row_of or n <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        sims = self.similarities_all(query)
        live = self._ids[: self._size] >= 0
        sims = np.where(live, sims, -np.inf).astype(np.float32)
        n = min(n, int(live.sum()))
        part = np.argpartition(-sims, n - 1)[:n] if n < len(sims) else np.arange(len(sims))
        order = part[np.lexsort((self._ids[part], -sims[part]))]
        return self._ids[order], sims[order]

    def similarities_all(self, query: FloatArray) -> FloatArray:
        unit = unit_vector(query)
        # einsum, not BLAS: a single-threaded loop is as fast for matrix×vector and does not
        # stall on waking BLAS worker threads on a busy machine
        sims: FloatArray = np.einsum("ij,j->i", self._matrix[: self._size], unit.astype(np.float32))
        return sims

    def similarity(self, query: FloatArray, row_ids: Iterable[int]) -> dict[int, float]:
        """Similarity of ``query`` to each cached row id (missing ids omitted)."""
        unit = unit_vector(query)
        result: dict[int, float] = {}
        for row_id in row_ids:
            slot = self._row_of.get(row_id)
            if slot is not None:
                result[row_id] = float(self._matrix[slot] @ unit)
        return result


DEFAULT_CACHE_SCOPES = 10_000
"""Scopes one store keeps vectors of at most (``exact_cache_scopes``)."""
DEFAULT_CACHE_BYTES = 128 * 2**20
"""Bytes of vectors one store keeps at most (``exact_cache_bytes``): ~70,000 384-d vectors."""


class VectorCacheRegistry:
    """LRU of :class:`VectorCache` objects keyed by encoded namespace prefix, bounded in
    scopes and in bytes (the least recently searched scopes go first; the scope being
    searched always stays, however large).

    Example:
        ```python
        from langgraph_recall.store._vector_cache import VectorCacheRegistry, encode_vector

        registry = VectorCacheRegistry(dims=2, max_scopes=100, max_bytes=4096)
        for user in range(5):
            scope = f"m.u{user}."
            registry.get(scope).apply((row, encode_vector([1.0, 0.0])) for row in range(50))
            registry.trim(scope)
        assert registry.nbytes <= 4096 and "m.u4." in registry
        ```
    """

    def __init__(
        self,
        dims: int,
        max_scopes: int = DEFAULT_CACHE_SCOPES,
        max_bytes: int = DEFAULT_CACHE_BYTES,
    ) -> None:
        self.dims = dims
        self.max_scopes = max_scopes
        self.max_bytes = max_bytes
        self._caches: OrderedDict[str, VectorCache] = OrderedDict()
        self._counted: dict[str, int] = {}  # each scope's bytes when last trimmed
        self._total = 0  # their sum

    @property
    def nbytes(self) -> int:
        """Bytes the caches of every scope hold (allocated capacity)."""
        return sum(cache.nbytes for cache in self._caches.values())

    def rows(self) -> int:
        """Rows cached over every scope (a row cached by two scopes counts twice)."""
        return sum(len(cache) for cache in self._caches.values())

    @property
    def counted(self) -> int:
        """The running count of :attr:`nbytes` that eviction decides by (kept equal to it)."""
        return self._total

    def __contains__(self, scope: object) -> bool:
        return scope in self._caches

    def __len__(self) -> int:
        return len(self._caches)

    def get(self, scope: str) -> VectorCache:
        cache = self._caches.get(scope)
        if cache is None:
            cache = VectorCache(self.dims)
            self._caches[scope] = cache
            while len(self._caches) > self.max_scopes:
                self._evict(next(iter(self._caches)))
        else:
            self._caches.move_to_end(scope)
        return cache

    def trim(self, scope: str) -> None:
        """``scope``'s cache changed size: count it, and drop the least recently searched
        other scopes while the caches hold more than ``max_bytes``."""
        cache = self._caches.get(scope)
        if cache is None:
            return
        size = cache.nbytes
        self._total += size - self._counted.get(scope, 0)
        self._counted[scope] = size
        while self._total > self.max_bytes and len(self._caches) > 1:
            oldest = next(iter(self._caches))
            self._evict(oldest if oldest != scope else list(self._caches)[1])

    def _evict(self, scope: str) -> None:
        del self._caches[scope]
        self._total -= self._counted.pop(scope, 0)

    def drop(self, scope_prefix: str) -> None:
        """Forget every cache whose scope overlaps ``scope_prefix`` (after an erasure)."""
        for scope in list(self._caches):
            if scope.startswith(scope_prefix) or scope_prefix.startswith(scope):
                self._evict(scope)
