"""The store's embedding requests and the checks on what an embedder returns (pure).

A program asks its runner for vectors with :class:`EmbedDocuments` (memories) or
:class:`EmbedQueries` (search queries); the runner calls the embedder, sync or async.

Example:
    ```python
    from langgraph_recall.store._embedding import check_vectors

    check_vectors([[0.6, 0.8]], count=1, dims=2)
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from langchain_core.embeddings import Embeddings

from langgraph_recall.errors import ConfigurationError, EmbeddingError
from langgraph_recall.store._values import PreparedValue

__all__ = [
    "EmbedDocuments",
    "EmbedQueries",
    "check_vectors",
    "default_embeddings",
    "texts_to_embed",
]


@dataclass(frozen=True)
class EmbedDocuments:
    """Request: embed texts as documents (``embed_documents``)."""

    texts: list[str]


@dataclass(frozen=True)
class EmbedQueries:
    """Request: embed texts as queries (``embed_query`` each)."""

    texts: list[str]


def default_embeddings() -> tuple[Embeddings, int]:
    """The package's default embedder and its dimensions (``index=None``)."""
    try:
        from langgraph_recall.embeddings import DEFAULT_EMBEDDING_DIMS
        from langgraph_recall.embeddings import default_embeddings as default

        return default(), int(DEFAULT_EMBEDDING_DIMS)
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise ConfigurationError(
            "no index= given and the default embedder is unavailable "
            f"({exc}); install langgraph-recall[embeddings] or pass "
            "index={'dims': ..., 'embed': ...}"
        ) from exc


def check_vectors(vectors: Sequence[Sequence[float]], *, count: int, dims: int) -> None:
    """Refuse what an embedder returned for ``count`` texts unless it is ``count`` finite
    ``dims``-dimensional vectors (finite as float32, the stored precision)."""
    if len(vectors) != count:
        raise EmbeddingError(f"the embedder returned {len(vectors)} vectors for {count} texts")
    for vector in vectors:
        if len(vector) != dims:
            raise EmbeddingError(
                f"the embedder returned a {len(vector)}-dimensional vector; "
                f"the store is configured for dims={dims}"
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


def texts_to_embed(upserts: Sequence[tuple[PreparedValue, float | None]]) -> list[str]:
    """Texts to embed for the upserts, in order: each indexed text, then its ``content``
    alone when it was indexed with context (see ``focus_text``)."""
    texts: list[str] = []
    for prepared, _ in upserts:
        if prepared.text:
            texts.append(prepared.text)
            if prepared.content_text:
                texts.append(prepared.content_text)
    return texts
