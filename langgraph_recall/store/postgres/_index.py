"""The ``index=`` options of the memory store: each one honoured or rejected, never ignored (pure).

Accepted keys are LangGraph's ``PostgresIndexConfig``: ``dims``, ``embed``, ``fields``,
``distance_type`` and ``ann_index_config``.

* ``distance_type``: the store ranks by cosine similarity of unit-normalised embeddings.
  ``"cosine"`` (the default) is that. ``"inner_product"`` and ``"l2"`` are honoured for
  unit-length embeddings — what OpenAI, e5, MiniLM and most embedders return — where
  they order results exactly as cosine does (inner product = cosine, L2² = 2 − 2·cosine);
  the store then checks every embedding is unit length and raises ``EmbeddingError`` for
  one that is not, instead of ranking by a metric it was not asked for.
* ``ann_index_config``: ``kind="hnsw"`` (the only kind) with ``m`` / ``ef_construction``
  (the HNSW build parameters, same as the store's ``hnsw_m`` / ``hnsw_ef_construction``)
  and ``vector_type``: ``"vector"`` (float4, the default) or ``"halfvec"`` (float2: half
  the storage and index size; on the pgvector path the column, the HNSW index and the
  query vector are ``halfvec``; the exact path keeps float4 — there is no index to
  shrink — and ranks the same up to float2 rounding). A database keeps the type it was
  set up with: a store configured otherwise on it is a ``ConfigurationError``.
  ``"ivfflat"``, ``"flat"``, ``"bit"`` and unknown keys are rejected with a
  ``ConfigurationError`` saying what to use.

Example:
    ```python
    from langgraph_recall.store.postgres._index import index_options

    options = index_options({"dims": 8, "embed": None, "distance_type": "inner_product",
                             "ann_index_config": {"kind": "hnsw", "m": 24}})
    assert options.unit_length_required and options.hnsw_m == 24
    ```
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph_recall.errors import ConfigurationError, EmbeddingError

__all__ = ["UNIT_TOLERANCE", "IndexOptions", "check_unit_length", "index_options"]

INDEX_KEYS = ("dims", "embed", "fields", "distance_type", "ann_index_config")
ANN_KEYS = ("kind", "vector_type", "m", "ef_construction")
DISTANCE_TYPES = ("cosine", "inner_product", "l2")
VECTOR_TYPES = ("vector", "halfvec")
UNIT_TOLERANCE = 1e-3
"""How far from 1 an embedding's length may be under ``inner_product`` / ``l2``."""


@dataclass(frozen=True)
class IndexOptions:
    """What the ``index=`` options ask of the store.

    Attributes:
        distance_type: The metric asked for.
        unit_length_required: Whether embeddings must be unit length (``inner_product``
            and ``l2``, which then rank exactly as cosine).
        hnsw_m: HNSW ``m`` from ``ann_index_config``, if given.
        hnsw_ef_construction: HNSW ``ef_construction`` from ``ann_index_config``, if given.
        vector_type: ``"vector"`` (float4) or ``"halfvec"`` (float2) on the pgvector path.
    """

    distance_type: str = "cosine"
    unit_length_required: bool = False
    vector_type: str = "vector"
    hnsw_m: int | None = None
    hnsw_ef_construction: int | None = None


def _positive_int(config: Mapping[str, Any], name: str) -> int | None:
    value = config.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 1:
        raise ConfigurationError(
            f"index ann_index_config[{name!r}] must be an integer > 1, got {value!r}"
        )
    return value


def index_options(index: Mapping[str, Any] | None) -> IndexOptions:
    """Validate ``index`` beyond ``dims``/``embed`` (see the module docstring).

    Raises:
        ConfigurationError: an unknown key, or a value the store cannot honour.
    """
    if index is None:
        return IndexOptions()
    unknown = sorted(set(index) - set(INDEX_KEYS))
    if unknown:
        raise ConfigurationError(
            f"unknown index option(s) {unknown}; the store takes {list(INDEX_KEYS)}"
        )
    distance = index.get("distance_type") or "cosine"
    if distance not in DISTANCE_TYPES:
        raise ConfigurationError(
            f"index distance_type={distance!r} is not supported; use one of {DISTANCE_TYPES}"
        )
    ann = index.get("ann_index_config") or {}
    if not isinstance(ann, Mapping):
        raise ConfigurationError("index ann_index_config must be a dict, e.g. {'kind': 'hnsw'}")
    unknown = sorted(set(ann) - set(ANN_KEYS))
    if unknown:
        raise ConfigurationError(
            f"unknown ann_index_config option(s) {unknown}; the store takes {list(ANN_KEYS)}"
        )
    kind = ann.get("kind", "hnsw")
    if kind != "hnsw":
        raise ConfigurationError(
            f"ann_index_config kind={kind!r} is not supported: the store builds an HNSW "
            "index where pgvector exists and searches exactly where it does not; "
            "use kind='hnsw' (or leave it out)"
        )
    vector_type = ann.get("vector_type", "vector")
    if vector_type not in VECTOR_TYPES:
        raise ConfigurationError(
            f"ann_index_config vector_type={vector_type!r} is not supported: the store keeps "
            "float4 or float2 vectors; use vector_type='vector' or 'halfvec' (or leave it out)"
        )
    return IndexOptions(
        distance_type=distance,
        unit_length_required=distance != "cosine",
        hnsw_m=_positive_int(ann, "m"),
        hnsw_ef_construction=_positive_int(ann, "ef_construction"),
        vector_type=vector_type,
    )


def check_unit_length(vectors: Sequence[Sequence[float]], distance_type: str) -> None:
    """Raise unless every vector is unit length (under ``inner_product`` / ``l2``).

    Raises:
        EmbeddingError: naming the length found and the fix.
    """
    for vector in vectors:
        length = math.sqrt(math.fsum(float(x) * float(x) for x in vector))
        if abs(length - 1.0) > UNIT_TOLERANCE:
            raise EmbeddingError(
                f"index distance_type={distance_type!r} is honoured for unit-length "
                f"embeddings (where it ranks exactly as cosine), but the embedder returned "
                f"a vector of length {length:.4g}; normalise the embeddings or use "
                "distance_type='cosine'"
            )
