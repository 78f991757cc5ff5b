"""Store benchmark: batched put throughput and search latency at 10k and 100k memories.

All memories go into ONE namespace (the hard case: no partition pruning). Texts are
random but English-like (Zipf-distributed common words plus names, places and code
words, 8–30 tokens), so the full-text index sees realistic posting lists. Vectors are
random unit 384-d vectors handed out by a precomputed-vector embedder, so embedding
time is excluded and only the store is measured.

Stores, side by side in one run, each loaded to every size in ``--sizes`` in turn:

* ``ours-pgvector``: ``PostgresMemoryStore`` on embedded Postgres 18 + pgvector (HNSW),
  hybrid search (BM25 candidates ∪ vector candidates, fused by ``retrieval.rank``).
* ``ours-exact``: the same store on PostgreSQL 15 without pgvector (exact vector search).
* ``langgraph-pgvector``: LangGraph's ``PostgresStore`` + pgvector HNSW (vector-only search).
* ``inmemory``: LangGraph's ``InMemoryStore`` (vector-only, brute force in Python).

Run::

    python -m langgraph_recall.bench.store                          # sizes 10000,100000
    python -m langgraph_recall.bench.store --sizes 10000 --queries 50 --json store.json
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langgraph_recall.bench._common import (
    POSTGRES_URI,
    content_index,
    embedded_database,
    format_table,
    langgraph_hnsw_index,
    median,
    percentile,
    temp_database,
)
from langgraph_recall.bench.progress import OnProgress, Progress, ProgressBar, print_progress

__all__ = ["PrecomputedEmbeddings", "StoreResult", "main", "random_texts", "run"]

DIMS = 384


def _words(text: str) -> list[str]:
    return text.split()


DEFAULT_STORES = ("ours-pgvector", "ours-exact", "langgraph-pgvector", "inmemory")
NAMESPACE = ("bench", "user-1")

_COMMON = _words(
    "the be to of and a in that have it for not on with he as you do at this but his by "
    "from they we say her she or an will my one all would there their what so up out if "
    "about who get which go me when make can like time no just him know take people into "
    "year your good some could them see other than then now look only come its over think "
    "also back after use two how our work first well way even new want because any these "
    "give day most us is was are been has had were said did made went got meeting project "
    "deadline coffee trip family birthday doctor gym book movie music dinner weekend "
    "office team report budget flight hotel garden dog cat school class exam concert "
    "recipe bike run yoga painting camping beach mountain city train car phone laptop"
)
_RARE = _words(
    "Alice Bob Carol Dmitri Elena Farah Gustav Hiro Ines Jamal Kenji Lucia Marta Nadia "
    "Omar Priya Quentin Rosa Sven Tariq Lisbon Osaka Nairobi Toronto Krakow Denver Zephyr "
    "Orion Atlas Nimbus Falcon Quartz Helix Borealis Aurora Pegasus"
)


_SYLLABLES = _words(
    "ka ri to mel an sor vi len tra po ge lu nim dar es ba fen cor ul pri sta mo de han "
    "zel tor ia bre ne go vas lin ter qui rom pa"
)


def _vocabulary(size: int, seed: int) -> list[str]:
    """Common English words first, then ``size`` pronounceable made-up words (Zipf tail)."""
    rng = random.Random(seed)
    made_up: dict[str, None] = {}
    while len(made_up) < size:
        made_up["".join(rng.choices(_SYLLABLES, k=rng.randint(2, 4)))] = None
    return [*_COMMON, *made_up]


def random_texts(n: int, seed: int = 7, vocabulary_size: int = 20_000) -> list[str]:
    """``n`` English-like memory texts: 8–30 words drawn from a Zipf (s=1) vocabulary.

    The vocabulary is the common English words above followed by ``vocabulary_size``
    made-up words, so posting lists have realistic lengths (a few very common terms, a
    long tail of rare ones). Each text also names a person or place and, 30% of the
    time, a code word like ``ORION-42``.
    """
    rng = random.Random(seed)
    vocabulary = _vocabulary(vocabulary_size, seed=3)
    # the same draws as weights=1/(rank+1), without re-summing the weights for every text
    cumulative = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(vocabulary))))
    texts: list[str] = []
    for i in range(n):
        words = rng.choices(vocabulary, cum_weights=cumulative, k=rng.randint(8, 30))
        words.insert(rng.randrange(len(words)), rng.choice(_RARE))
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), f"{rng.choice(_RARE).upper()}-{i % 997}")
        texts.append(" ".join(words).capitalize() + ".")
    return texts


class PrecomputedEmbeddings(Embeddings):
    """Hands out pre-registered vectors by text (random unit vectors for unknown texts).

    Keeps embedding cost (a dict lookup) out of the store measurements.
    """

    def __init__(self, dims: int = DIMS, seed: int = 11) -> None:
        self.dims = dims
        self._rng = np.random.default_rng(seed)
        # float32 rows (views into the registered matrices): a million 384-d vectors take
        # 1.5 GB here, not the ~12 GB of Python float lists
        self._vectors: dict[str, np.ndarray] = {}

    def register(self, texts: Sequence[str]) -> None:
        matrix = self._rng.standard_normal((len(texts), self.dims)).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        self._vectors.update(zip(texts, matrix, strict=True))

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of ``texts`` as one float32 matrix."""
        return np.stack([self._get(t) for t in texts])

    def _get(self, text: str) -> np.ndarray:
        vector = self._vectors.get(text)
        if vector is None:
            self.register([text])
            vector = self._vectors[text]
        return vector

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        rows: list[list[float]] = np.stack([self._get(t) for t in texts]).tolist()
        return rows

    def embed_query(self, text: str) -> list[float]:
        vector: list[float] = self._get(text).tolist()
        return vector


@dataclass
class SizeResult:
    """Measurements of one store at one size."""

    size: int
    put_per_second: float
    search_p50_ms: float
    search_p95_ms: float


@dataclass
class StoreResult:
    """One store across all sizes."""

    name: str
    search_kind: str
    sizes: list[SizeResult] = field(default_factory=list)
    error: str | None = None


@contextlib.contextmanager
def _ours(
    database: Callable[[], contextlib.AbstractContextManager[str]], embeddings: Embeddings
) -> Iterator[Any]:
    from langgraph_recall.store.postgres import PostgresMemoryStore

    with (
        database() as dsn,
        PostgresMemoryStore.from_conn_string(dsn, index=content_index(DIMS, embeddings)) as store,
    ):
        store.setup()
        yield store


@contextlib.contextmanager
def _langgraph_pgvector(embeddings: Embeddings) -> Iterator[Any]:
    from langgraph.store.postgres import PostgresStore

    with (
        embedded_database() as dsn,
        PostgresStore.from_conn_string(dsn, index=langgraph_hnsw_index(DIMS, embeddings)) as store,
    ):
        store.setup()
        yield store


@contextlib.contextmanager
def _inmemory(embeddings: Embeddings) -> Iterator[Any]:
    from langgraph.store.memory import InMemoryStore

    yield InMemoryStore(index=content_index(DIMS, embeddings))


def _open(name: str, embeddings: Embeddings, exact_dsn: str) -> Any:
    if name == "ours-pgvector":
        return _ours(embedded_database, embeddings)
    if name == "ours-exact":
        return _ours(lambda: temp_database(exact_dsn), embeddings)
    if name == "langgraph-pgvector":
        return _langgraph_pgvector(embeddings)
    if name == "inmemory":
        return _inmemory(embeddings)
    raise ValueError(f"unknown store {name!r}; choose from {', '.join(DEFAULT_STORES)}")


def run(
    *,
    sizes: Sequence[int] = (10_000, 100_000),
    stores: Sequence[str] = DEFAULT_STORES,
    queries: int = 100,
    batch_size: int = 500,
    exact_dsn: str = POSTGRES_URI,
    progress: OnProgress = print_progress,
) -> list[StoreResult]:
    """Load every store to each size in turn and time puts and searches.

    Args:
        sizes: Increasing memory counts to measure at (one namespace).
        stores: Names from ``DEFAULT_STORES``.
        queries: Searches per size (after 5 warm-up searches).
        batch_size: Puts per ``batch`` call.
        exact_dsn: Admin DSN of a Postgres without pgvector (``ours-exact``).
        progress: Receives the :class:`~langgraph_recall.bench.progress.Progress` events.
    """
    from langgraph.store.base import PutOp

    sizes = sorted(sizes)
    texts = random_texts(sizes[-1])
    rng = random.Random(99)
    query_texts = [
        " ".join(rng.sample(texts[rng.randrange(sizes[0])].rstrip(".").split(), 4))
        for _ in range(queries + 5)
    ]
    embeddings = PrecomputedEmbeddings()
    embeddings.register(texts)
    embeddings.register(query_texts)
    results: list[StoreResult] = []
    step, steps = 0, len(stores) * len(sizes)
    for name in stores:
        kind = "hybrid" if name.startswith("ours") else "vector"
        result = StoreResult(name, kind)
        results.append(result)
        try:
            with _open(name, embeddings, exact_dsn) as store:
                loaded = 0
                for size in sizes:
                    started = time.perf_counter()
                    for start in range(loaded, size, batch_size):
                        chunk = range(start, min(start + batch_size, size))
                        store.batch(
                            [PutOp(NAMESPACE, f"m{i}", {"content": texts[i]}) for i in chunk]
                        )
                    put_rate = (size - loaded) / (time.perf_counter() - started)
                    loaded = size
                    progress(Progress(f"{name} loaded {size} memories ({put_rate:,.0f} puts/s)"))
                    for query in query_texts[:5]:
                        store.search(NAMESPACE, query=query, limit=10)
                    samples: list[float] = []
                    for query in query_texts[5:]:
                        started = time.perf_counter()
                        found = store.search(NAMESPACE, query=query, limit=10)
                        samples.append((time.perf_counter() - started) * 1000)
                        if len(found) != 10:
                            raise RuntimeError(f"{name} returned {len(found)} results, not 10")
                    result.sizes.append(
                        SizeResult(size, put_rate, median(samples), percentile(samples, 0.95))
                    )
                    step += 1
                    progress(
                        Progress(
                            f"{name} search at {size}: p50 {median(samples):.2f} ms, "
                            f"p95 {percentile(samples, 0.95):.2f} ms",
                            step,
                            steps,
                        )
                    )
        except Exception as exc:  # a missing service skips one store, not the run
            result.error = f"{type(exc).__name__}: {exc}"
            step += len(sizes) - len(result.sizes)
            progress(Progress(f"{name} skipped: {result.error}", step, steps))
    return results


def format_results(results: Sequence[StoreResult]) -> str:
    """One row per store and size, with ratios to ``ours-pgvector`` at the same size."""
    reference = {s.size: s for r in results if r.name == "ours-pgvector" for s in r.sizes}
    header = ["store", "search", "memories", "puts/s", "search p50 ms", "search p95 ms", "p95 ×"]
    rows: list[list[str]] = []
    for r in results:
        if r.error:
            rows.append([r.name, r.search_kind, "-", "skipped", "", "", ""])
            continue
        for s in r.sizes:
            ref = reference.get(s.size)
            ratio = f"{s.search_p95_ms / ref.search_p95_ms:.2f}" if ref else "-"
            rows.append(
                [
                    r.name,
                    r.search_kind,
                    f"{s.size:,}",
                    f"{s.put_per_second:,.0f}",
                    f"{s.search_p50_ms:.2f}",
                    f"{s.search_p95_ms:.2f}",
                    ratio,
                ]
            )
    return (
        "Store benchmark (one namespace, random 384-d vectors, embedding excluded; "
        "p95 × = relative to ours-pgvector)\n\n" + format_table(header, rows)
    )


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point (``python -m langgraph_recall.bench.store``)."""
    parser = argparse.ArgumentParser(
        prog="python -m langgraph_recall.bench.store", description=__doc__
    )
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--stores", default=",".join(DEFAULT_STORES))
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--exact-dsn", default=POSTGRES_URI)
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args(argv)
    with ProgressBar("store") as bar:
        results = run(
            sizes=[int(s) for s in args.sizes.split(",") if s.strip()],
            stores=[s.strip() for s in args.stores.split(",") if s.strip()],
            queries=args.queries,
            batch_size=args.batch_size,
            exact_dsn=args.exact_dsn,
            progress=bar,
        )
    print(format_results(results))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump([asdict(r) for r in results], handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
