"""The retrievers of the LoCoMo retrieval benchmark: ours (episodic, on Postgres) and the baselines.

Each :class:`Retriever` indexes one conversation at a time and answers a question with dia
ids; :func:`make_retriever` builds one by name (``DEFAULT_RETRIEVERS``, ``ALL_RETRIEVERS``).
The settings they run with (episode context, diversity) were chosen on the tuning
conversations only (see the comments). The public names are re-exported by
:mod:`langgraph_recall.bench.locomo`.
"""

from __future__ import annotations

import contextlib
import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from langchain_core.embeddings import Embeddings

from langgraph_recall.bench._common import content_index, temp_database
from langgraph_recall.bench._locomo_data import Conversation
from langgraph_recall.extraction.textnorm import ENGLISH_STOP_WORDS

__all__ = [
    "AFTER_TURNS",
    "ALL_RETRIEVERS",
    "CONTEXT_TURNS",
    "DEFAULT_RETRIEVERS",
    "DIVERSITY_PENALTY",
    "DIVERSITY_POOL",
    "ENGLISH_STOP_WORDS",
    "EPISODE_CONTEXT_CHARS",
    "INGEST_BATCH",
    "LOADER_CONTEXT_TURNS",
    "BM25Retriever",
    "EpisodicRetriever",
    "InMemoryVectorRetriever",
    "LoaderRetriever",
    "Retriever",
    "episode_config",
    "episode_turns",
    "episodic_retriever",
    "make_retriever",
    "open_store",
    "plain_tokens",
    "stemmed_tokens",
    "window_diversify",
]

DEFAULT_RETRIEVERS = (
    "ours-pgvector",
    "ours-exact",
    "ours-pgvector-plain",
    "ours-pgvector-rrf",
    "inmemory-vector",
    "bm25-plain",
    "bm25-stemmed",
)
ALL_RETRIEVERS = (
    *DEFAULT_RETRIEVERS,
    "ours-loader",
    "ours-pgvector-diverse",
    "ours-exact-unlinked",
)
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
# ``ours-pgvector-diverse``: results re-ranked out of the store's best DIVERSITY_POOL (its
# default candidate pool), each penalised by DIVERSITY_PENALTY times the largest Jaccard
# overlap of its window lines with a result already chosen. Tuning conversations only
# (R@5 / R@10; 0 = the store's order 72.4 / 80.3): 0.02 72.0 / 80.1, 0.05 71.8 / 79.4,
# 0.1 70.5 / 78.6, 0.2 69.9 / 77.3, 0.5 59.5 / 69.4.
DIVERSITY_POOL = 40
DIVERSITY_PENALTY = 0.05


class Retriever(Protocol):
    """Indexes one conversation at a time and answers questions with dia ids."""

    def index(self, conversation: Conversation) -> None: ...

    def search(self, question: str, k: int) -> list[str]: ...


_TOKEN = re.compile(r"\w+")


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

        self._store = InMemoryStore(index=content_index(self.dims, self.embeddings))
        self._namespace = ("locomo", conversation.sample_id)
        # InMemoryStore embeds each distinct text of a batch once and then fails ("Number of
        # embeddings (N) does not match number of indices (M)") when two puts share a text
        # ("Thanks!" twice in one chat): each batch holds distinct texts only.
        batch: list[PutOp] = []
        texts: set[str] = set()
        for turn in conversation.turns:
            if turn.content in texts:
                self._store.batch(batch)
                batch, texts = [], set()
            batch.append(PutOp(self._namespace, turn.dia_id, {"content": turn.content}))
            texts.add(turn.content)
        if batch:
            self._store.batch(batch)

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
def open_store(
    database: Callable[[], contextlib.AbstractContextManager[str]],
    embeddings: Embeddings,
    dims: int,
    retrieval: Any = None,
    link_entities: bool = True,
) -> Iterator[Any]:
    """A set-up ``PostgresMemoryStore`` on a fresh database of ``database``, indexing
    ``content`` with ``embeddings`` (``link_entities``: the store option)."""
    from langgraph_recall.store.postgres import PostgresMemoryStore

    index = content_index(dims, embeddings)
    with (
        database() as dsn,
        PostgresMemoryStore.from_conn_string(
            dsn,
            index=index,
            retrieval=retrieval,
            link_entities=link_entities,
        ) as store,
    ):
        store.setup()
        yield store


def episodic_retriever(
    stack: contextlib.ExitStack,
    database: Callable[[], contextlib.AbstractContextManager[str]],
    embeddings: Embeddings,
    dims: int,
    episodes: Any,
    retrieval: Any = None,
    diversity: float | None = None,
    link_entities: bool = True,
) -> EpisodicRetriever:
    """An :class:`EpisodicRetriever` on its own store (closed with ``stack``), whose embedder
    is ``embeddings`` composed per turn (:class:`~langgraph_recall.episodes.TurnEmbeddings`).
    """
    from langgraph_recall.episodes import TurnEmbeddings

    store = stack.enter_context(
        open_store(database, TurnEmbeddings(embeddings), dims, retrieval, link_entities)
    )
    return EpisodicRetriever(
        store, episodes=episodes, run_tag=uuid.uuid4().hex[:8], diversity=diversity
    )


def make_retriever(
    name: str,
    stack: contextlib.ExitStack,
    embeddings: Embeddings,
    dims: int,
    exact_dsn: str,
    pgvector_database: Callable[[], contextlib.AbstractContextManager[str]],
    context_turns: int = CONTEXT_TURNS,
    after_turns: int = AFTER_TURNS,
) -> Retriever:
    """The retriever named ``name`` (one of ``ALL_RETRIEVERS``); its stores close with
    ``stack``."""
    from langgraph_recall.retrieval import RetrievalConfig

    if name == "bm25-plain":
        return BM25Retriever(plain_tokens)
    if name == "bm25-stemmed":
        return BM25Retriever(stemmed_tokens)
    if name == "inmemory-vector":
        return InMemoryVectorRetriever(embeddings, dims)
    episodes = episode_config(context_turns, after_turns)
    if name == "ours-exact":
        return episodic_retriever(
            stack, lambda: temp_database(exact_dsn), embeddings, dims, episodes
        )
    if name == "ours-pgvector":
        return episodic_retriever(stack, pgvector_database, embeddings, dims, episodes)
    if name == "ours-pgvector-plain":
        return episodic_retriever(stack, pgvector_database, embeddings, dims, episode_config(0, 0))
    if name == "ours-pgvector-rrf":
        rrf = RetrievalConfig(fusion="rrf")
        return episodic_retriever(stack, pgvector_database, embeddings, dims, episodes, rrf)
    if name == "ours-pgvector-diverse":
        return episodic_retriever(
            stack, pgvector_database, embeddings, dims, episodes, diversity=DIVERSITY_PENALTY
        )
    if name == "ours-exact-unlinked":
        unlinked = RetrievalConfig(entity_weight=0.0)
        return episodic_retriever(
            stack,
            lambda: temp_database(exact_dsn),
            embeddings,
            dims,
            episodes,
            unlinked,
            link_entities=False,
        )
    if name == "ours-loader":
        store = stack.enter_context(open_store(pgvector_database, embeddings, dims))
        return LoaderRetriever(
            store, context_turns=LOADER_CONTEXT_TURNS, run_tag=uuid.uuid4().hex[:8]
        )
    raise ValueError(f"unknown retriever {name!r}; choose from {', '.join(ALL_RETRIEVERS)}")
