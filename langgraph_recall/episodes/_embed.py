"""Turn-composed embeddings: every turn of a conversation is embedded once.

An episode is indexed on its context and its turn (``"Speaker A: ...\\nSpeaker B: ..."``),
and each turn is also the context of its neighbours, so embedding every episode's whole
text embeds each turn three or four times — the cost of ingesting a conversation is
several embeddings per memory, each of a text several turns long. :class:`TurnEmbeddings`
wraps any LangChain ``Embeddings``: a document of several lines (turns) gets the
normalised mean of its lines' vectors, and a line's vector is computed once (kept in a
bounded LRU cache), so a history costs one short embedding per turn. Single-line texts
(facts, a turn alone) and queries go to the wrapped embedder unchanged.

Use it as the store's embedder for a namespace of episodes::

    PostgresMemoryStore.from_conn_string(dsn, index={"dims": 384,
        "embed": TurnEmbeddings(default_embeddings()), "fields": ["content"]})

Example:
    ```python
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from langgraph_recall.episodes import TurnEmbeddings

    inner = DeterministicFakeEmbedding(size=8)
    embedder = TurnEmbeddings(inner)
    whole, turn = embedder.embed_documents(["A: hi there\\nB: hello", "B: hello"])
    assert embedder.embedded == 2  # "A: hi there" and "B: hello", each once
    assert turn == inner.embed_documents(["B: hello"])[0]
    ```
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence

from langchain_core.embeddings import Embeddings

from langgraph_recall.errors import ConfigurationError, EmbeddingError

__all__ = ["TurnEmbeddings"]


def _lines(text: str) -> list[str]:
    return [line for line in (part.strip() for part in text.split("\n")) if line]


def _mean(vectors: Sequence[Sequence[float]]) -> list[float]:
    """The unit-length mean of ``vectors`` (pure)."""
    total = [math.fsum(column) for column in zip(*vectors, strict=True)]
    norm = math.sqrt(math.fsum(x * x for x in total))
    if not norm or not math.isfinite(norm):
        raise EmbeddingError("the turns' embeddings cancel out or are not finite")
    return [x / norm for x in total]


class TurnEmbeddings(Embeddings):
    """Embed multi-line documents as the mean of their lines, each line embedded once.

    Args:
        inner: The embedder of lines and queries.
        cache_size: Line vectors kept (least recently used dropped first).

    Attributes:
        calls: Calls made to ``inner.embed_documents``.
        embedded: Texts ``inner`` embedded (the cost: one per distinct turn).
    """

    def __init__(self, inner: Embeddings, *, cache_size: int = 20_000) -> None:
        if isinstance(cache_size, bool) or not isinstance(cache_size, int) or cache_size < 1:
            raise ConfigurationError("TurnEmbeddings: cache_size must be a positive int")
        self.inner = inner
        self.cache_size = cache_size
        self.calls = 0
        self.embedded = 0
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()
        dims = getattr(inner, "dims", None)
        if isinstance(dims, int):
            self.dims = dims
        self.model_name = f"{getattr(inner, 'model_name', type(inner).__name__)} (turn-composed)"

    def _vectors(self, keys: Sequence[str]) -> dict[str, list[float]]:
        with self._lock:
            found = {k: self._cache[k] for k in keys if k in self._cache}
            for key in found:
                self._cache.move_to_end(key)
        missing = [k for k in dict.fromkeys(keys) if k not in found]
        if missing:
            vectors = self.inner.embed_documents(missing)
            if len(vectors) != len(missing):
                raise EmbeddingError(
                    f"the embedder returned {len(vectors)} vectors for {len(missing)} texts"
                )
            fresh = dict(zip(missing, (list(map(float, v)) for v in vectors), strict=True))
            with self._lock:
                self.calls += 1
                self.embedded += len(missing)
                self._cache.update(fresh)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
            found.update(fresh)
        return found

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text: a single line as ``inner`` embeds it, several lines as
        the normalised mean of their (cached) line vectors."""
        parts = [_lines(text) if "\n" in text else [text] for text in texts]
        parts = [lines or [text] for lines, text in zip(parts, texts, strict=True)]
        vectors = self._vectors([line for lines in parts for line in lines])
        return [
            list(vectors[lines[0]]) if len(lines) == 1 else _mean([vectors[x] for x in lines])
            for lines in parts
        ]

    def embed_query(self, text: str) -> list[float]:
        """Queries are embedded by ``inner`` as they are."""
        return self.inner.embed_query(text)
