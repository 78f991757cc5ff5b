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
import re
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from langchain_core.embeddings import Embeddings

from langgraph_recall.bench._common import (
    POSTGRES_URI,
    CachingEmbeddings,
    CountingEmbeddings,
    embedded_database,
    format_table,
    temp_database,
)
from langgraph_recall.bench._data import LOCOMO_ENV, locomo_data_dir
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

CATEGORIES = (1, 2, 3, 4)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DEFAULT_RETRIEVERS = (
    "ours-pgvector",
    "ours-exact",
    "ours-pgvector-plain",
    "ours-pgvector-rrf",
    "inmemory-vector",
    "bm25-plain",
    "bm25-stemmed",
)
ALL_RETRIEVERS = (*DEFAULT_RETRIEVERS, "ours-loader", "ours-pgvector-diverse")
TOP_K = 10
# The fusion weights and the contextual-embedding choices were tuned on these conversations;
# the others of the data directory are held out (the report shows both groups).
TUNING_CONVERSATIONS = ("conv-26", "conv-30")
# Episodic context: how many earlier / later turns of the same session each episode carries
# as ``context`` (chosen on the tuning conversations only, with turn-composed embeddings:
# before/after 2/0 72.6/79.4, 2/1 71.6/79.3, 1/1 66.3/76.6, 3/1 70.3/78.9, 2/2 72.4/80.3,
# 2/3 68.1/78.7, 3/2 68.7/79.5, 4/2 71.0/78.4 R@5/R@10).
CONTEXT_TURNS = 2
AFTER_TURNS = 2
EPISODE_CONTEXT_CHARS = 4000  # no cut: a cut turn would be embedded a second time
INGEST_BATCH = 128
# The previous loader's context (2 earlier turns), for the ingest-speed comparison.
LOADER_CONTEXT_TURNS = 2
INGEST_TURNS = 150
# ``ours-pgvector-diverse``: results re-ranked out of the store's best DIVERSITY_POOL (its
# default candidate pool), each penalised by DIVERSITY_PENALTY times the largest Jaccard
# overlap of its window lines with a result already chosen. Tuning conversations only
# (R@5 / R@10; 0 = the store's order 72.4 / 80.3): 0.02 72.0 / 80.1, 0.05 71.8 / 79.4,
# 0.1 70.5 / 78.6, 0.2 69.9 / 77.3, 0.5 59.5 / 69.4.
DIVERSITY_POOL = 40
DIVERSITY_PENALTY = 0.05


# ---------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Turn:
    """One dialog turn."""

    dia_id: str
    speaker: str
    text: str
    session: int
    when: datetime | None
    previous: str | None  # the previous turn of the same session, as "Speaker: text"

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class Question:
    """One question with the dialog ids of its evidence."""

    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    """A LoCoMo conversation: its turns in order and its questions of categories 1–4."""

    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def _parse_session_time(raw: object) -> datetime | None:
    if not isinstance(raw, str):
        return None
    for pattern in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(raw.strip(), pattern).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    return None


def _evidence_ids(raw: object) -> tuple[str, ...]:
    ids: list[str] = []
    for entry in raw if isinstance(raw, list) else []:
        ids.extend(part for part in re.split(r"[;,\s]+", str(entry)) if part)
    return tuple(dict.fromkeys(ids))


def conversation_records(data_dir: str | Path | None = None) -> list[tuple[str, dict[str, Any]]]:
    """``(sample id, conversation data)`` of every conversation in the LoCoMo folder
    (:func:`~langgraph_recall.bench._data.locomo_data_dir` finds it): the upstream
    ``locomo10.json`` (a list of samples) or one conversation per ``*.json`` file, sorted by
    file name. The data has ``speaker_a``, ``session_N``, ``session_N_date_time`` and ``qa``.
    """
    records: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(locomo_data_dir(data_dir).glob("*.json")):
        loaded = json.loads(path.read_text())
        samples = loaded if isinstance(loaded, list) else [loaded]
        for index, data in enumerate(samples):
            name = f"conv-{path.stem}" if len(samples) == 1 else f"conv-{path.stem}-{index}"
            if "conversation" in data:  # the locomo10.json sample layout
                name = str(data.get("sample_id") or name)
                data = {**data["conversation"], "qa": data.get("qa", [])}
            records.append((name, data))
    return records


def conversation_from_record(sample_id: str, data: dict[str, Any]) -> Conversation:
    """One conversation (turns of every session, questions of categories 1–4)."""
    turns: list[Turn] = []
    session = 1
    while f"session_{session}" in data:
        when = _parse_session_time(data.get(f"session_{session}_date_time"))
        previous: str | None = None
        for raw in data[f"session_{session}"]:
            turn = Turn(
                dia_id=str(raw["dia_id"]),
                speaker=str(raw["speaker"]),
                text=str(raw["text"]),
                session=session,
                when=when,
                previous=previous,
            )
            turns.append(turn)
            previous = turn.content
        session += 1
    questions = tuple(
        Question(str(q["question"]), int(q["category"]), _evidence_ids(q.get("evidence")))
        for q in data.get("qa", [])
        if q.get("category") in CATEGORIES and _evidence_ids(q.get("evidence"))
    )
    return Conversation(sample_id, tuple(turns), questions)


def load_conversation(path: Path) -> Conversation:
    """Read one LoCoMo conversation file (``{speaker_a, session_N, qa, ...}`` layout, or
    one sample of ``locomo10.json``)."""
    data = json.loads(Path(path).read_text())
    name = f"conv-{Path(path).stem}"
    if "conversation" in data:  # the locomo10.json sample layout
        name = str(data.get("sample_id") or name)
        data = {**data["conversation"], "qa": data.get("qa", [])}
    return conversation_from_record(name, data)


def load_conversations(data_dir: str | Path | None = None) -> list[Conversation]:
    """Every conversation of the LoCoMo folder (see :func:`conversation_records`).

    Raises:
        BenchmarkDataError: No LoCoMo data there; the message says how to download it.
    """
    return [conversation_from_record(name, data) for name, data in conversation_records(data_dir)]


# ---------------------------------------------------------------------------- retrievers


class Retriever(Protocol):
    """Indexes one conversation at a time and answers questions with dia ids."""

    def index(self, conversation: Conversation) -> None: ...

    def search(self, question: str, k: int) -> list[str]: ...


_TOKEN = re.compile(r"\w+")
ENGLISH_STOP_WORDS = frozenset(
    str.split(
        "a about above after again against all am an and any are as at be because been before "
        "being below between both but by can could did do does doing down during each few for "
        "from further had has have having he her here hers herself him himself his how i if "
        "in into is it its itself just me more most my myself no nor not now of off on once "
        "only or other our ours ourselves out over own same she should so some such than that "
        "the their theirs them themselves then there these they this those through to too "
        "under until up very was we were what when where which while who whom why will with "
        "would you your yours yourself yourselves s t d ll m re ve"
    )
)


def plain_tokens(text: str) -> list[str]:
    """Lower-cased word tokens."""
    return _TOKEN.findall(text.lower())


def stemmed_tokens(text: str) -> list[str]:
    """Lower-cased, English stop words removed, Snowball-stemmed tokens."""
    import snowballstemmer

    stemmer = snowballstemmer.stemmer("english")
    stems: list[str] = stemmer.stemWords(
        [t for t in plain_tokens(text) if t not in ENGLISH_STOP_WORDS]
    )
    return stems


class BM25Retriever:
    """``rank_bm25.BM25Okapi`` over the turns' content."""

    def __init__(self, tokenize: Callable[[str], list[str]]) -> None:
        self.tokenize = tokenize
        self._ids: list[str] = []
        self._bm25: Any = None

    def index(self, conversation: Conversation) -> None:
        from rank_bm25 import BM25Okapi

        self._ids = [t.dia_id for t in conversation.turns]
        self._bm25 = BM25Okapi([self.tokenize(t.content) for t in conversation.turns])

    def search(self, question: str, k: int) -> list[str]:
        scores = self._bm25.get_scores(self.tokenize(question))
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return [self._ids[i] for i in order[:k]]


class InMemoryVectorRetriever:
    """LangGraph's ``InMemoryStore`` with a vector index on ``content``."""

    def __init__(self, embeddings: Embeddings, dims: int) -> None:
        self.embeddings = embeddings
        self.dims = dims
        self._store: Any = None
        self._namespace: tuple[str, ...] = ()

    def index(self, conversation: Conversation) -> None:
        from langgraph.store.base import PutOp
        from langgraph.store.memory import InMemoryStore

        self._store = InMemoryStore(
            index={"dims": self.dims, "embed": self.embeddings, "fields": ["content"]}
        )
        self._namespace = ("locomo", conversation.sample_id)
        self._store.batch(
            [PutOp(self._namespace, t.dia_id, {"content": t.content}) for t in conversation.turns]
        )

    def search(self, question: str, k: int) -> list[str]:
        return [item.key for item in self._store.search(self._namespace, query=question, limit=k)]


class EpisodicRetriever:
    """Our ``PostgresMemoryStore`` fed through the package's episodic path:
    :func:`langgraph_recall.episodes.ingest_history` (one conversation = one user's
    history; default PII filter; batches of ``INGEST_BATCH``), searched with
    ``store.search``; a result's turn is its episode's ``turn_id``."""

    def __init__(
        self, store: Any, *, episodes: Any, run_tag: str, diversity: float | None = None
    ) -> None:
        self.store = store
        self.episodes = episodes
        self.run_tag = run_tag
        self.diversity = diversity  # None: the store's order
        self._namespace: tuple[str, ...] = ()

    def index(self, conversation: Conversation) -> None:
        from langgraph_recall.episodes import ingest_history

        report = ingest_history(
            self.store,
            episode_turns(conversation),
            user_id=conversation.sample_id,
            namespace=("locomo", self.run_tag, "{user_id}"),
            config=self.episodes,
            batch_size=INGEST_BATCH,
        )
        self._namespace = report.namespace

    def search(self, question: str, k: int) -> list[str]:
        if self.diversity is None:
            found = self.store.search(self._namespace, query=question, limit=k)
        else:
            pool = self.store.search(self._namespace, query=question, limit=DIVERSITY_POOL)
            found = window_diversify(pool, k, penalty=self.diversity)
        return [str(item.value.get("turn_id", item.key)) for item in found]


def _window(item: Any) -> frozenset[str]:
    value = item.value
    lines = [*str(value.get("context") or "").split("\n"), str(value.get("content", ""))]
    return frozenset(line for line in lines if line.strip())


def window_diversify(items: Sequence[Any], k: int, *, penalty: float) -> list[Any]:
    """The best ``k`` of ``items`` (search results, best first) chosen greedily by
    ``score - penalty * max Jaccard(window, window of a result already chosen)``, a
    window being the set of lines of an episode's ``context`` and ``content`` (MMR with
    turn overlap as the similarity). ``penalty=0`` keeps the store's order.

    Example:
        >>> from types import SimpleNamespace as Item
        >>> a = Item(value={"content": "A: x", "context": "B: y"}, score=1.0)
        >>> b = Item(value={"content": "B: y", "context": "A: x"}, score=0.9)
        >>> c = Item(value={"content": "C: z"}, score=0.5)
        >>> [i.value["content"] for i in window_diversify([a, b, c], 2, penalty=1.0)]
        ['A: x', 'C: z']
    """
    windows = [_window(item) for item in items]
    scores = [float(item.score or 0.0) for item in items]
    chosen: list[int] = []
    left = list(range(len(items)))
    while left and len(chosen) < k:

        def value(i: int) -> tuple[float, int]:
            overlap = max(
                (len(windows[i] & windows[j]) / len(windows[i] | windows[j]) for j in chosen),
                default=0.0,
            )
            return scores[i] - penalty * overlap, -i

        best = max(left, key=value)
        chosen.append(best)
        left.remove(best)
    return [items[i] for i in chosen]


class LoaderRetriever:
    """The previous loader (``ours-loader``): ``put`` with a hand-built ``context`` — the up
    to ``context_turns`` turns before each turn in its session, ``index=["context",
    "content"]`` — embedded by the store's own embedder (whole text and ``content``: two
    embeddings per memory). Kept to measure the episodic path's ingest speed against it.
    """

    def __init__(self, store: Any, *, context_turns: int, run_tag: str) -> None:
        self.store = store
        self.context_turns = context_turns
        self.run_tag = run_tag
        self._namespace: tuple[str, ...] = ()

    def index(self, conversation: Conversation) -> None:
        from langgraph.store.base import PutOp

        self._namespace = ("locomo", self.run_tag, conversation.sample_id)
        ops: list[PutOp] = []
        earlier: list[str] = []  # the turns before this one in the same session
        for position, turn in enumerate(conversation.turns):
            if position == 0 or conversation.turns[position - 1].session != turn.session:
                earlier = []
            value: dict[str, Any] = {"content": turn.content, "kind": "episodic"}
            if turn.when is not None:
                value["valid_from"] = turn.when.isoformat()
            fields: list[str] | None = None
            if self.context_turns > 0:
                fields = ["context", "content"]
                if earlier:
                    value["context"] = "\n".join(earlier[-self.context_turns :])
            earlier.append(turn.content)
            ops.append(PutOp(self._namespace, turn.dia_id, value, index=fields))
        for start in range(0, len(ops), 256):
            self.store.batch(ops[start : start + 256])

    def search(self, question: str, k: int) -> list[str]:
        return [item.key for item in self.store.search(self._namespace, query=question, limit=k)]


def episode_config(context_turns: int, after_turns: int) -> Any:
    """The :class:`~langgraph_recall.episodes.EpisodeConfig` of the episodic retrievers:
    every turn (both speakers are people) with ``context_turns`` earlier and
    ``after_turns`` later turns of its session as context."""
    from langgraph_recall.episodes import EpisodeConfig

    return EpisodeConfig(
        roles=("user", "assistant"),
        context_before=context_turns,
        context_after=after_turns,
        max_context_chars=EPISODE_CONTEXT_CHARS,
        min_words=0,
    )


def episode_turns(conversation: Conversation) -> list[Any]:
    """The conversation as :class:`~langgraph_recall.episodes.EpisodeTurn` s (the only
    LoCoMo-specific step: dialog id, speaker, session number and date)."""
    from langgraph_recall.episodes import EpisodeTurn

    return [
        EpisodeTurn(t.text, "user", t.speaker, t.dia_id, str(t.session), t.when)
        for t in conversation.turns
    ]


@contextlib.contextmanager
def _store(
    database: Callable[[], contextlib.AbstractContextManager[str]],
    embeddings: Embeddings,
    dims: int,
    retrieval: Any = None,
) -> Iterator[Any]:
    from langgraph_recall.store.postgres import PostgresMemoryStore

    index = {"dims": dims, "embed": embeddings, "fields": ["content"]}
    with (
        database() as dsn,
        PostgresMemoryStore.from_conn_string(
            dsn,
            index=index,  # type: ignore[arg-type]
            retrieval=retrieval,
        ) as store,
    ):
        store.setup()
        yield store


def _episodic(
    stack: contextlib.ExitStack,
    database: Callable[[], contextlib.AbstractContextManager[str]],
    embeddings: Embeddings,
    dims: int,
    episodes: Any,
    retrieval: Any = None,
    diversity: float | None = None,
) -> EpisodicRetriever:
    from langgraph_recall.episodes import TurnEmbeddings

    store = stack.enter_context(_store(database, TurnEmbeddings(embeddings), dims, retrieval))
    return EpisodicRetriever(
        store, episodes=episodes, run_tag=uuid.uuid4().hex[:8], diversity=diversity
    )


def _make_retriever(
    name: str,
    stack: contextlib.ExitStack,
    embeddings: Embeddings,
    dims: int,
    exact_dsn: str,
    pgvector_database: Callable[[], contextlib.AbstractContextManager[str]],
    context_turns: int = CONTEXT_TURNS,
    after_turns: int = AFTER_TURNS,
) -> Retriever:
    from langgraph_recall.retrieval import RetrievalConfig

    if name == "bm25-plain":
        return BM25Retriever(plain_tokens)
    if name == "bm25-stemmed":
        return BM25Retriever(stemmed_tokens)
    if name == "inmemory-vector":
        return InMemoryVectorRetriever(embeddings, dims)
    episodes = episode_config(context_turns, after_turns)
    if name == "ours-exact":
        return _episodic(stack, lambda: temp_database(exact_dsn), embeddings, dims, episodes)
    if name == "ours-pgvector":
        return _episodic(stack, pgvector_database, embeddings, dims, episodes)
    if name == "ours-pgvector-plain":
        return _episodic(stack, pgvector_database, embeddings, dims, episode_config(0, 0))
    if name == "ours-pgvector-rrf":
        rrf = RetrievalConfig(fusion="rrf")
        return _episodic(stack, pgvector_database, embeddings, dims, episodes, rrf)
    if name == "ours-pgvector-diverse":
        return _episodic(
            stack, pgvector_database, embeddings, dims, episodes, diversity=DIVERSITY_PENALTY
        )
    if name == "ours-loader":
        store = stack.enter_context(_store(pgvector_database, embeddings, dims))
        return LoaderRetriever(
            store, context_turns=LOADER_CONTEXT_TURNS, run_tag=uuid.uuid4().hex[:8]
        )
    raise ValueError(f"unknown retriever {name!r}; choose from {', '.join(ALL_RETRIEVERS)}")


# ---------------------------------------------------------------------------- metrics


@dataclass
class Scores:
    """Mean Recall@5, Recall@10 and MRR (percent) over ``n`` questions."""

    n: int = 0
    recall_at_5: float = 0.0
    recall_at_10: float = 0.0
    mrr: float = 0.0


@dataclass
class RetrieverResult:
    """Scores of one retriever: overall, per category, per conversation; timings."""

    name: str
    overall: Scores = field(default_factory=Scores)
    by_category: dict[int, Scores] = field(default_factory=dict)
    by_conversation: dict[str, Scores] = field(default_factory=dict)
    by_split: dict[str, Scores] = field(default_factory=dict)
    index_seconds: float = 0.0
    search_ms_median: float = 0.0
    error: str | None = None


@dataclass
class IngestSpeed:
    """What ingesting the same turns cost one write path (its own, uncached embedder)."""

    path: str
    turns: int = 0
    memories: int = 0
    seconds: float = 0.0
    embed_calls: int = 0
    texts_embedded: int = 0
    chars_embedded: int = 0

    @property
    def turns_per_second(self) -> float:
        return self.turns / self.seconds if self.seconds > 0 else 0.0

    @property
    def texts_per_memory(self) -> float:
        return self.texts_embedded / self.memories if self.memories else 0.0


@dataclass
class LocomoReport:
    """Everything one run measured."""

    conversations: list[str]
    questions: int
    embedder: str
    context_turns: int
    results: list[RetrieverResult]
    after_turns: int = AFTER_TURNS
    ingest: list[IngestSpeed] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def question_scores(ranked: Sequence[str], evidence: Sequence[str]) -> tuple[float, float, float]:
    """(Recall@5, Recall@10, reciprocal rank within the top 10) for one question."""
    wanted = set(evidence)
    recall5 = len(wanted & set(ranked[:5])) / len(wanted)
    recall10 = len(wanted & set(ranked[:10])) / len(wanted)
    reciprocal = next((1.0 / (i + 1) for i, key in enumerate(ranked[:10]) if key in wanted), 0.0)
    return recall5, recall10, reciprocal


def _aggregate(rows: Sequence[tuple[float, float, float]]) -> Scores:
    if not rows:
        return Scores()
    n = len(rows)
    return Scores(
        n=n,
        recall_at_5=100 * sum(r[0] for r in rows) / n,
        recall_at_10=100 * sum(r[1] for r in rows) / n,
        mrr=100 * sum(r[2] for r in rows) / n,
    )


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
                retriever = _make_retriever(
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
                    done = _aggregate(
                        [s for _, c, s in per_question if c == conversation.sample_id]
                    )
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
        result.overall = _aggregate([s for _, _, s in per_question])
        result.by_category = {
            category: _aggregate([s for c, _, s in per_question if c == category])
            for category in CATEGORIES
        }
        result.by_conversation = {
            c.sample_id: _aggregate([s for _, cid, s in per_question if cid == c.sample_id])
            for c in conversations
        }
        result.by_split = {
            "tuning": _aggregate([s for _, cid, s in per_question if cid in TUNING_CONVERSATIONS]),
            "held-out": _aggregate(
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
    context, two embeddings per memory) and with the episodic path (``ingest_history`` on
    :class:`~langgraph_recall.episodes.TurnEmbeddings`), each on a fresh uncached counting
    embedder, in ``rounds`` alternating rounds (loader, episodic, episodic, loader, ...)
    so that load on the machine falls on both alike."""
    from langgraph_recall.episodes import TurnEmbeddings

    part = Conversation(conversation.sample_id, conversation.turns[:turns], ())
    totals = {"loader": IngestSpeed("loader"), "episodic": IngestSpeed("episodic")}
    order = [
        ("loader", "episodic") if r % 2 == 0 else ("episodic", "loader") for r in range(rounds)
    ]
    for pair in order:
        for path in pair:
            counter = CountingEmbeddings(embeddings)
            embedder: Embeddings = counter if path == "loader" else TurnEmbeddings(counter)
            with _store(database, embedder, dims) as store:
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


def format_report(report: LocomoReport) -> str:
    """The overall/per-category table and the per-conversation Recall@10 table."""
    header = ["retriever", "R@5", "R@10", "MRR"]
    header += [f"c{c} {CATEGORY_NAMES[c]} R@5/R@10" for c in CATEGORIES]
    header += ["index s", "search ms"]
    rows: list[list[str]] = []
    for r in report.results:
        if r.error:
            rows.append([r.name, "skipped", "", "", "", "", "", "", "", ""])
            continue
        row = [
            r.name,
            f"{r.overall.recall_at_5:.1f}",
            f"{r.overall.recall_at_10:.1f}",
            f"{r.overall.mrr:.1f}",
        ]
        for c in CATEGORIES:
            s = r.by_category.get(c, Scores())
            row.append(f"{s.recall_at_5:.1f} / {s.recall_at_10:.1f} (n={s.n})")
        row += [f"{r.index_seconds:.1f}", f"{r.search_ms_median:.1f}"]
        rows.append(row)
    per_conversation_header = ["retriever", *(f"{c} R@5/R@10" for c in report.conversations)]
    per_conversation = [
        [
            r.name,
            *(
                f"{r.by_conversation[c].recall_at_5:.1f} / {r.by_conversation[c].recall_at_10:.1f}"
                for c in report.conversations
            ),
        ]
        for r in report.results
        if not r.error
    ]
    split_header = [
        "retriever",
        f"tuning ({', '.join(TUNING_CONVERSATIONS)}) R@5/R@10",
        "held-out (the others) R@5/R@10",
    ]
    splits = [
        [
            r.name,
            *(
                f"{r.by_split[g].recall_at_5:.1f} / {r.by_split[g].recall_at_10:.1f} "
                f"(n={r.by_split[g].n})"
                for g in ("tuning", "held-out")
            ),
        ]
        for r in report.results
        if not r.error and r.by_split
    ]
    return (
        f"LoCoMo turn retrieval ({len(report.conversations)} conversations, "
        f"{report.questions} questions of categories 1-4, embedder {report.embedder}, "
        f"episode context {report.context_turns} turns before, {report.after_turns} after)\n\n"
        + format_table(header, rows)
        + "\n\nPer conversation:\n\n"
        + format_table(per_conversation_header, per_conversation)
        + "\n\nTuning vs held-out conversations:\n\n"
        + format_table(split_header, splits)
        + _ingest_table(report)
    )


def _ingest_table(report: LocomoReport) -> str:
    if not report.ingest:
        return ""
    header = ["write path", "turns", "seconds", "turns/s", "embedder calls", "texts/memory"]
    header += ["chars embedded/memory"]
    rows = [
        [
            s.path,
            str(s.turns),
            f"{s.seconds:.1f}",
            f"{s.turns_per_second:.1f}",
            str(s.embed_calls),
            f"{s.texts_per_memory:.2f}",
            f"{s.chars_embedded / s.memories:.0f}" if s.memories else "0",
        ]
        for s in report.ingest
    ]
    speed = {s.path: s.turns_per_second for s in report.ingest}
    ratio = speed.get("episodic", 0.0) / speed["loader"] if speed.get("loader") else 0.0
    return (
        "\n\nIngest cost (same turns, each path on its own uncached embedder, alternating "
        f"rounds): episodic / loader = {ratio:.2f}x turns/s\n\n" + format_table(header, rows)
    )


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
