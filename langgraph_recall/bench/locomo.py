"""LoCoMo turn-retrieval benchmark: our store's hybrid search against vector-only and BM25.

Every dialog turn of a LoCoMo conversation becomes one memory in the conversation's own
namespace (``turn_id`` = its ``dia_id``, ``content`` = ``"Speaker: utterance"``,
``valid_from`` = its session's date and time, ``kind`` = ``episodic``). Every question of
categories 1–4 searches that namespace (``limit=10``) and is scored on the turns its
``evidence`` names: Recall@5, Recall@10 (fraction of evidence turns in the top k) and MRR
(reciprocal rank of the first evidence turn in the top 10), overall, per category and per
conversation.

Retrievers, all in the same run on the same embedder (default: the package's offline
``default_embeddings()``; one shared embedding cache so every retriever sees identical
vectors):

* ``ours-pgvector`` / ``ours-exact``: ``PostgresMemoryStore.search`` on embedded Postgres 18
  + pgvector (HNSW) and on the PostgreSQL 15 server without pgvector (exact search), fed
  through the package's episodic write path: each conversation is one user's history given
  to :func:`langgraph_recall.episodes.ingest_history` (default PII filter), so every turn
  becomes an ``episodic`` memory whose ``context`` holds the ``CONTEXT_TURNS`` turns before
  and ``AFTER_TURNS`` turns after it in its session, indexed on ``["context", "content"]``.
  The store's embedder is :class:`~langgraph_recall.episodes.TurnEmbeddings`: each turn is
  embedded once and an episode's whole text gets the mean of its turns' vectors (the store
  searches the mean similarity of that and the turn's own vector). Nothing here is specific
  to LoCoMo but the loader mapping a dialog turn to an ``EpisodeTurn``.
  The report also splits the questions into the tuning conversations (26, 30) and the
  held-out ones.
* ``ours-pgvector-plain``: the same path without context (the plain-turn ablation).
* ``ours-pgvector-rrf``: episodic, reciprocal rank fusion instead of the weighted sum.
* ``ours-pgvector-diverse`` (not in the default set; an experiment, not adopted): episodic,
  the store's best ``DIVERSITY_POOL`` results re-ranked MMR-style by how much of their
  window (context and turn) they share with the results already chosen
  (:func:`window_diversify`). It lowered recall on the tuning conversations at every
  strength tried; the row measures it beside the others.
* ``ours-exact-unlinked`` (not in the default set): ``ours-exact`` without entity links
  (``link_entities=False``, ``RetrievalConfig(entity_weight=0)``): the store as it ranked
  before links, for the before/after table in one run.
* ``ours-loader`` (not in the default set): the previous loader, ``put`` with a hand-built
  ``context`` of the 2 earlier turns, embedded jointly by the store (two embeddings per
  memory). The ingest-cost table compares it with the episodic path on the first
  ``--ingest-turns`` turns, each on its own uncached embedder, in the same run.
* ``inmemory-vector``: LangGraph's ``InMemoryStore`` (vector-only) on ``content``.
* ``bm25-plain`` / ``bm25-stemmed``: ``rank-bm25`` on lower-cased tokens, and with the
  Snowball English stemmer and stop words.

Image turns carry a BLIP caption of the shared photo; it is NOT indexed (it is not what
the speaker said; a memory layer would see it only if an image model described the
photo). Only this loader knows LoCoMo's format; retrieval has no rules written for it.

Run::

    python -m langgraph_recall.bench.locomo                         # all 5 dev conversations
    python -m langgraph_recall.bench.locomo --limit-conversations 1 --limit-questions 40
    python -m langgraph_recall.bench.locomo --retrievers ours-exact,bm25-stemmed

Data (not shipped: CC BY-NC 4.0): ``--data DIR`` or ``$LANGGRAPH_RECALL_LOCOMO_DIR``, a folder
holding the upstream ``locomo10.json`` or one conversation per ``*.json``
(:mod:`langgraph_recall.bench._data`; the error when it is missing says how to download it).
The PG 15 server for ``ours-exact``: ``$LANGGRAPH_RECALL_BENCH_POSTGRES_URI``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from langgraph_recall.bench._common import (
    POSTGRES_URI,
    CachingEmbeddings,
    CountingEmbeddings,
    embedded_database,
)
from langgraph_recall.bench._data import LOCOMO_ENV
from langgraph_recall.bench._locomo_data import (
    CATEGORIES,
    TUNING_CONVERSATIONS,
    Conversation,
    Question,
    Turn,
    load_conversation,
    load_conversations,
)
from langgraph_recall.bench._locomo_data import CATEGORY_NAMES as CATEGORY_NAMES
from langgraph_recall.bench._locomo_data import conversation_from_record as conversation_from_record
from langgraph_recall.bench._locomo_data import conversation_records as conversation_records
from langgraph_recall.bench._locomo_report import (
    IngestSpeed,
    LocomoReport,
    RetrieverResult,
    aggregate,
    format_report,
    question_scores,
)
from langgraph_recall.bench._locomo_report import Scores as Scores
from langgraph_recall.bench._locomo_retrievers import (
    AFTER_TURNS,
    CONTEXT_TURNS,
    DEFAULT_RETRIEVERS,
    LOADER_CONTEXT_TURNS,
    EpisodicRetriever,
    LoaderRetriever,
    Retriever,
    episode_config,
    make_retriever,
    open_store,
    window_diversify,
)
from langgraph_recall.bench._locomo_retrievers import ALL_RETRIEVERS as ALL_RETRIEVERS
from langgraph_recall.bench._locomo_retrievers import DIVERSITY_PENALTY as DIVERSITY_PENALTY
from langgraph_recall.bench._locomo_retrievers import DIVERSITY_POOL as DIVERSITY_POOL
from langgraph_recall.bench._locomo_retrievers import ENGLISH_STOP_WORDS as ENGLISH_STOP_WORDS
from langgraph_recall.bench._locomo_retrievers import EPISODE_CONTEXT_CHARS as EPISODE_CONTEXT_CHARS
from langgraph_recall.bench._locomo_retrievers import INGEST_BATCH as INGEST_BATCH
from langgraph_recall.bench._locomo_retrievers import BM25Retriever as BM25Retriever
from langgraph_recall.bench._locomo_retrievers import (
    InMemoryVectorRetriever as InMemoryVectorRetriever,
)
from langgraph_recall.bench._locomo_retrievers import episode_turns as episode_turns
from langgraph_recall.bench._locomo_retrievers import plain_tokens as plain_tokens
from langgraph_recall.bench._locomo_retrievers import stemmed_tokens as stemmed_tokens
from langgraph_recall.bench.progress import OnProgress, Progress, ProgressBar, print_progress

__all__ = [
    "Conversation",
    "LocomoReport",
    "Question",
    "Turn",
    "load_conversation",
    "load_conversations",
    "main",
    "run",
    "window_diversify",
]

# The data, the retrievers and the report live in _locomo_data, _locomo_retrievers and
# _locomo_report; the names imported above with ``as`` stay importable from here.
_make_retriever = make_retriever

TOP_K = 10
INGEST_TURNS = 150


# ---------------------------------------------------------------------------- run


def run(
    data_dir: Path | str | None = None,
    *,
    retrievers: Sequence[str] = DEFAULT_RETRIEVERS,
    limit_conversations: int | None = None,
    limit_questions: int | None = None,
    embeddings: Embeddings | None = None,
    dims: int | None = None,
    exact_dsn: str = POSTGRES_URI,
    pgvector_database: Callable[[], contextlib.AbstractContextManager[str]] = embedded_database,
    conversations: Sequence[Conversation] | None = None,
    context_turns: int = CONTEXT_TURNS,
    after_turns: int = AFTER_TURNS,
    ingest_turns: int = INGEST_TURNS,
    progress: OnProgress = print_progress,
) -> LocomoReport:
    """Run the benchmark and return its report (the CLI prints it; tests assert on it).

    Args:
        data_dir: The LoCoMo folder (default ``$LANGGRAPH_RECALL_LOCOMO_DIR``; see
            :func:`~langgraph_recall.bench._data.locomo_data_dir`).
        retrievers: Names from ``DEFAULT_RETRIEVERS``.
        limit_conversations: Use only the first N conversations.
        limit_questions: Use only the first N questions of each conversation.
        embeddings: Embedder for every vector retriever (default ``default_embeddings()``).
        dims: Its dimensions (default ``embeddings.dims`` or 384).
        exact_dsn: Admin DSN of a Postgres without pgvector for ``ours-exact``.
        pgvector_database: Yields the DSN of an empty database with pgvector for each
            ``ours-pgvector*`` retriever (default: a private embedded Postgres).
        conversations: Use these instead of loading ``data_dir`` (e.g. a slice).
        context_turns: Earlier turns of the same session each episode of the contextual
            ``ours-*`` retrievers carries as ``context`` (0 = none).
        after_turns: Later turns of the same session it carries.
        ingest_turns: Turns of the first conversation ingested by the previous loader and
            by the episodic path, each on its own uncached embedder, to compare their cost
            (0 = skip; skipped too when no ``ours-*`` retriever runs).
        progress: Receives the :class:`~langgraph_recall.bench.progress.Progress` events.
    """
    if conversations is None:
        conversations = load_conversations(data_dir)
    conversations = list(conversations)[:limit_conversations]
    if limit_questions is not None:
        conversations = [
            Conversation(c.sample_id, c.turns, c.questions[:limit_questions]) for c in conversations
        ]
    if embeddings is None:
        from langgraph_recall.embeddings import default_embeddings

        embeddings = default_embeddings()
    dims = dims or int(getattr(embeddings, "dims", 384))
    embedder_name = str(getattr(embeddings, "model_name", type(embeddings).__name__))
    shared = CachingEmbeddings(embeddings)
    n_questions = sum(len(c.questions) for c in conversations)
    progress(
        Progress(
            f"LoCoMo: {len(conversations)} conversations, "
            f"{sum(len(c.turns) for c in conversations)} turns, {n_questions} questions; "
            f"embedder {embedder_name}"
        )
    )
    results: list[RetrieverResult] = []
    for name in retrievers:
        result = RetrieverResult(name)
        results.append(result)
        per_question: list[tuple[int, str, tuple[float, float, float]]] = []
        search_times: list[float] = []
        try:
            with contextlib.ExitStack() as stack:
                retriever = make_retriever(
                    name,
                    stack,
                    shared,
                    dims,
                    exact_dsn,
                    pgvector_database,
                    context_turns,
                    after_turns,
                )
                for index, conversation in enumerate(conversations, start=1):
                    started = time.perf_counter()
                    retriever.index(conversation)
                    result.index_seconds += time.perf_counter() - started
                    for question in conversation.questions:
                        started = time.perf_counter()
                        ranked = retriever.search(question.text, TOP_K)
                        search_times.append((time.perf_counter() - started) * 1000)
                        per_question.append(
                            (
                                question.category,
                                conversation.sample_id,
                                question_scores(ranked, question.evidence),
                            )
                        )
                    done = aggregate([s for _, c, s in per_question if c == conversation.sample_id])
                    progress(
                        Progress(
                            f"{name} {conversation.sample_id}: {len(conversation.turns)} turns, "
                            f"{done.n} questions, R@5 {done.recall_at_5:.1f} "
                            f"R@10 {done.recall_at_10:.1f}",
                            index,
                            len(conversations),
                        )
                    )
        except Exception as exc:  # a missing service skips one retriever, not the run
            result.error = f"{type(exc).__name__}: {exc}"
            progress(Progress(f"{name} skipped: {result.error}"))
            continue
        result.overall = aggregate([s for _, _, s in per_question])
        result.by_category = {
            category: aggregate([s for c, _, s in per_question if c == category])
            for category in CATEGORIES
        }
        result.by_conversation = {
            c.sample_id: aggregate([s for _, cid, s in per_question if cid == c.sample_id])
            for c in conversations
        }
        result.by_split = {
            "tuning": aggregate([s for _, cid, s in per_question if cid in TUNING_CONVERSATIONS]),
            "held-out": aggregate(
                [s for _, cid, s in per_question if cid not in TUNING_CONVERSATIONS]
            ),
        }
        search_times.sort()
        result.search_ms_median = search_times[len(search_times) // 2] if search_times else 0.0
    speeds: list[IngestSpeed] = []
    if ingest_turns > 0 and conversations and any(n.startswith("ours-") for n in retrievers):
        try:
            speeds = measure_ingest(
                conversations[0],
                embeddings,
                dims,
                pgvector_database,
                turns=ingest_turns,
                episodes=episode_config(context_turns, after_turns),
            )
        except Exception as exc:  # a missing service skips the measurement, not the run
            progress(Progress(f"ingest speed skipped: {type(exc).__name__}: {exc}"))
        for speed in speeds:
            progress(
                Progress(
                    f"ingest {speed.path} {speed.turns} turns in {speed.seconds:.1f} s "
                    f"({speed.turns_per_second:.1f} turns/s, "
                    f"{speed.texts_per_memory:.2f} texts embedded per memory)"
                )
            )
    return LocomoReport(
        conversations=[c.sample_id for c in conversations],
        questions=n_questions,
        embedder=embedder_name,
        context_turns=context_turns,
        results=results,
        after_turns=after_turns,
        ingest=speeds,
    )


def measure_ingest(
    conversation: Conversation,
    embeddings: Embeddings,
    dims: int,
    database: Callable[[], contextlib.AbstractContextManager[str]],
    *,
    turns: int,
    episodes: Any,
    rounds: int = 2,
) -> list[IngestSpeed]:
    """Ingest the first ``turns`` turns with the previous loader (``put`` with a hand-built
    context, two embeddings per memory), with the episodic path (``ingest_history`` on
    :class:`~langgraph_recall.episodes.TurnEmbeddings`) and with the episodic path on a
    store that writes no entity links (``episodic-unlinked``), each on a fresh uncached
    counting embedder, in ``rounds`` rounds whose order alternates so that load on the
    machine falls on all alike."""
    from langgraph_recall.episodes import TurnEmbeddings

    part = Conversation(conversation.sample_id, conversation.turns[:turns], ())
    paths = ("loader", "episodic", "episodic-unlinked")
    totals = {path: IngestSpeed(path) for path in paths}
    order = [paths if r % 2 == 0 else paths[::-1] for r in range(rounds)]
    for pair in order:
        for path in pair:
            counter = CountingEmbeddings(embeddings)
            embedder: Embeddings = counter if path == "loader" else TurnEmbeddings(counter)
            linked = path != "episodic-unlinked"
            with open_store(database, embedder, dims, link_entities=linked) as store:
                tag = uuid.uuid4().hex[:8]
                retriever: Retriever = (
                    LoaderRetriever(store, context_turns=LOADER_CONTEXT_TURNS, run_tag=tag)
                    if path == "loader"
                    else EpisodicRetriever(store, episodes=episodes, run_tag=tag)
                )
                started = time.perf_counter()
                retriever.index(part)
                elapsed = time.perf_counter() - started
            total = totals[path]
            total.turns += len(part.turns)
            total.memories += len(part.turns)
            total.seconds += elapsed
            total.embed_calls += counter.calls
            total.texts_embedded += counter.texts
            total.chars_embedded += counter.chars
    return list(totals.values())


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point (``python -m langgraph_recall.bench.locomo``; ``--qa``:
    :mod:`langgraph_recall.bench.locomo_qa`)."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    if "--qa" in args_in:  # the end-to-end QA harness, with its own options
        from langgraph_recall.bench import locomo_qa

        return locomo_qa.main([a for a in args_in if a != "--qa"])
    parser = argparse.ArgumentParser(
        prog="python -m langgraph_recall.bench.locomo", description=__doc__
    )
    parser.add_argument(
        "--data", type=Path, default=None, help=f"LoCoMo folder (default ${LOCOMO_ENV})"
    )
    parser.add_argument("--retrievers", default=",".join(DEFAULT_RETRIEVERS))
    parser.add_argument("--limit-conversations", type=int, default=None)
    parser.add_argument("--limit-questions", type=int, default=None)
    parser.add_argument("--exact-dsn", default=POSTGRES_URI)
    parser.add_argument(
        "--context-turns",
        type=int,
        default=CONTEXT_TURNS,
        help="earlier turns of the same session indexed with each memory as its context",
    )
    parser.add_argument(
        "--after-turns",
        type=int,
        default=AFTER_TURNS,
        help="later turns of the same session indexed with each episode",
    )
    parser.add_argument(
        "--ingest-turns",
        type=int,
        default=INGEST_TURNS,
        help="turns ingested by the old loader and the episodic path to compare cost (0: skip)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args(args_in)
    with ProgressBar("locomo") as bar:
        result = run(
            args.data,
            retrievers=[r.strip() for r in args.retrievers.split(",") if r.strip()],
            limit_conversations=args.limit_conversations,
            limit_questions=args.limit_questions,
            exact_dsn=args.exact_dsn,
            context_turns=args.context_turns,
            after_turns=args.after_turns,
            ingest_turns=args.ingest_turns,
            progress=bar,
        )
    print(format_report(result))
    if args.json:
        args.json.write_text(json.dumps(result.to_json(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
