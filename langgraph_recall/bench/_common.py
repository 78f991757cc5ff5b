"""Helpers shared by the retrieval and store benchmarks: databases, embedders, tables.

Example:
    ```python
    from langgraph_recall.bench._common import format_table

    print(format_table(["name", "ms"], [["a", "1.0"]]))
    ```
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import re
import statistics
import tempfile
import threading
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from langchain_core.embeddings import Embeddings
from langgraph.store.base import IndexConfig

if TYPE_CHECKING:
    from langgraph.store.postgres.base import PostgresIndexConfig

__all__ = [
    "POSTGRES_URI",
    "CachingEmbeddings",
    "CountingEmbeddings",
    "HashingEmbeddings",
    "content_index",
    "embedded_database",
    "format_table",
    "langgraph_hnsw_index",
    "percentile",
    "temp_database",
]

POSTGRES_URI = os.environ.get(
    "LANGGRAPH_RECALL_BENCH_POSTGRES_URI", "postgresql://postgres@127.0.0.1:5432/postgres"
)


def percentile(samples: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of ``samples`` (``fraction`` in [0, 1])."""
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def median(samples: Sequence[float]) -> float:
    """Median, NaN for no samples."""
    return statistics.median(samples) if samples else float("nan")


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table with columns padded to equal width."""
    widths = [len(h) for h in header]
    for row in rows:
        for column, cell in enumerate(row):
            widths[column] = max(widths[column], len(cell))

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def content_index(dims: int, embed: Embeddings) -> IndexConfig:
    """The index the benchmarks give every store: ``dims``-wide vectors of ``content``.

    Example:
        ```python
        from langgraph_recall.bench._common import HashingEmbeddings, content_index

        assert content_index(8, HashingEmbeddings(8))["fields"] == ["content"]
        ```
    """
    return {"dims": dims, "embed": embed, "fields": ["content"]}


def langgraph_hnsw_index(dims: int, embed: Embeddings) -> PostgresIndexConfig:
    """:func:`content_index` for LangGraph's ``PostgresStore``: HNSW on cosine distance.

    Example:
        ```python
        from langgraph_recall.bench._common import HashingEmbeddings, langgraph_hnsw_index

        assert langgraph_hnsw_index(8, HashingEmbeddings(8))["distance_type"] == "cosine"
        ```
    """
    return {
        "dims": dims,
        "embed": embed,
        "fields": ["content"],
        "ann_index_config": {"kind": "hnsw"},
        "distance_type": "cosine",
    }


@contextlib.contextmanager
def temp_database(admin_dsn: str = POSTGRES_URI) -> Iterator[str]:
    """A fresh database on the server of ``admin_dsn``, dropped afterwards."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    name = f"lgm_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_dsn, autocommit=True, connect_timeout=5) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_conninfo(admin_dsn, dbname=name)
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def embedded_database() -> Iterator[str]:
    """A fresh database on a private embedded Postgres 18 + pgvector (temporary home)."""
    from langgraph_recall.embedded import EmbeddedPostgres

    with (
        tempfile.TemporaryDirectory(prefix="lgm-bench-") as home,
        EmbeddedPostgres(Path(home), cleanup="stop") as server,
        temp_database(server.dsn()) as dsn,
    ):
        yield dsn


class CachingEmbeddings(Embeddings):
    """Wraps an embedder and remembers every vector (documents and queries apart).

    Lets several retrievers in one benchmark run share the embedding work, so their
    comparison measures retrieval, not the embedder twice.
    """

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self._documents: dict[str, list[float]] = {}
        self._queries: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._documents))
        if missing:
            vectors = self.inner.embed_documents(missing)
            with self._lock:
                self._documents.update(zip(missing, vectors, strict=True))
        with self._lock:
            return [self._documents[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            cached = self._queries.get(text)
        if cached is None:
            cached = self.inner.embed_query(text)
            with self._lock:
                self._queries[text] = cached
        return cached


class CountingEmbeddings(Embeddings):
    """Wraps an embedder and counts its work: ``embed_documents`` calls and texts embedded
    (the ingest cost measures: embedder calls and texts per memory)."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.calls = 0
        self.texts = 0
        self.chars = 0
        self._lock = threading.Lock()
        dims = getattr(inner, "dims", None)
        if isinstance(dims, int):
            self.dims = dims

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            self.calls += 1
            self.texts += len(texts)
            self.chars += sum(len(t) for t in texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


_WORD = re.compile(r"[a-z0-9]+")


class HashingEmbeddings(Embeddings):
    """Bag-of-words hashing embedder with ``dims`` dimensions (deterministic, no model).

    For benchmarks that measure concurrency or throughput rather than retrieval quality
    (and for tests): each lower-cased word goes to a signed bucket (md5, stable across
    processes), the sum is L2-normalised. ``calls`` records each call's kind and size.

    Example:
        ```python
        from langgraph_recall.bench._common import HashingEmbeddings

        embed = HashingEmbeddings(8)
        assert embed.embed_query("tea") == embed.embed_documents(["Tea!"])[0]
        ```
    """

    def __init__(self, dims: int = 64) -> None:
        self.dims = dims
        self.calls: list[tuple[str, int]] = []

    def _embed(self, text: str) -> list[float]:
        vec = [0.0] * self.dims
        for word in _WORD.findall(text.lower()):
            digest = hashlib.md5(word.encode()).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dims
            vec[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vec))
        if norm == 0.0:
            vec[0] = 1.0
            return vec
        return [v / norm for v in vec]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(("documents", len(texts)))
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.calls.append(("query", 1))
        return self._embed(text)
