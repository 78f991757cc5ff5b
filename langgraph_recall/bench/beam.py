"""BEAM turn-retrieval benchmark: what our memory brings back for BEAM's probing questions.

BEAM ("Beyond a Million Tokens: Benchmarking and Enhancing Long-Term Memory in LLMs") gives
long user/assistant chats and, per chat, probing questions in ten categories, most naming the
message ids of their evidence (``source_chat_ids``). Every chat is one user's history:

* ``ours``: written through the package's public path — every message becomes an
  ``episodic`` memory with :func:`langgraph_recall.episodes.ingest_history` (default PII
  filter; the LoCoMo benchmark's episode windows), and every user message goes through an
  :class:`~langgraph_recall.nodes.ExtractNode` (the offline rule-based extractor, default PII
  filter, consolidation), all in the nodes' default namespace of a ``PostgresMemoryStore``.
  Each question searches that namespace (``store.search``, top 10) and, as the model would
  see it, runs :class:`~langgraph_recall.nodes.RetrieveNode` (defaults, with the same
  episode config) to get the memories put into the model's context.
* ``vector``: LangGraph's ``InMemoryStore`` (vector only) over the same messages.
* ``bm25``: ``rank-bm25`` on stemmed tokens over the same messages.

Scores per question: Recall@5 / Recall@10 of the evidence message ids (a memory's message is
its episode's ``turn_id``, or for an extracted fact the first of its ``source.message_ids``:
the message it was read from), per category and overall. For ``ours`` also the *in-context* rate:
the share of questions for which ``RetrieveNode`` put evidence into the context — an episode
of an evidence message, or (for ``instruction_following`` / ``preference_following``) a
stored memory stating the instruction or preference being tested
(:func:`states_target`). For ``knowledge_update`` the *update first* rate: the updated
message ranks above the original (the original absent counts as above).

Run::

    python -m langgraph_recall.bench.beam --data DIR              # every chat under DIR
    python -m langgraph_recall.bench.beam --limit-chats 1

Data (not shipped): ``--data DIR`` or ``$LANGGRAPH_RECALL_BEAM_DIR``, a folder holding chat
folders (``chat.json`` + ``probing_questions.json``) at any depth
(:func:`~langgraph_recall.bench._data.beam_data_dir`). The Postgres server:
``$LANGGRAPH_RECALL_BENCH_POSTGRES_URI``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.runnables import RunnableConfig

from langgraph_recall.bench._common import (
    POSTGRES_URI,
    CachingEmbeddings,
    content_index,
    temp_database,
)
from langgraph_recall.bench._data import BEAM_ENV, beam_data_dir
from langgraph_recall.bench._locomo_data import Conversation, Turn
from langgraph_recall.bench._locomo_report import question_scores
from langgraph_recall.bench._locomo_retrievers import (
    AFTER_TURNS,
    CONTEXT_TURNS,
    ENGLISH_STOP_WORDS,
    BM25Retriever,
    InMemoryVectorRetriever,
    episode_config,
    stemmed_tokens,
)
from langgraph_recall.bench.progress import OnProgress, Progress, print_progress
from langgraph_recall.errors import BenchmarkDataError

__all__ = [
    "BeamChat",
    "BeamQuestion",
    "BeamReport",
    "load_chat",
    "load_chats",
    "main",
    "run",
    "states_target",
    "update_first",
]

RETRIEVERS = ("ours", "vector", "bm25")
TOP_K = 10
CONTEXT_CATEGORIES = ("instruction_following", "preference_following", "knowledge_update")
"""Categories whose in-context rate the report singles out."""
_TARGET_FIELDS = {
    "instruction_following": "instruction_being_tested",
    "preference_following": "preference_being_tested",
}
_ANCHOR = re.compile(r"^(?P<month>[A-Za-z]+)-(?P<day>\d{1,2})-(?P<year>\d{4})$")


# ---------------------------------------------------------------------------- data


@dataclass(frozen=True)
class BeamQuestion:
    """One probing question with the message ids of its evidence.

    ``original`` / ``updated``: a ``knowledge_update`` question's two sides (else empty);
    ``target``: the instruction or preference an ``*_following`` question tests.
    """

    text: str
    category: str
    evidence: tuple[str, ...]
    original: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    target: str = ""


@dataclass(frozen=True)
class BeamChat:
    """A BEAM chat: its messages in order (as LoCoMo-style turns) and its questions."""

    chat_id: str
    turns: tuple[Turn, ...]
    roles: Mapping[str, str]
    questions: tuple[BeamQuestion, ...]

    def as_conversation(self) -> Conversation:
        """The messages as a conversation for the baseline retrievers (no questions)."""
        return Conversation(self.chat_id, self.turns, ())


def _anchor_time(raw: object) -> datetime | None:
    match = _ANCHOR.match(str(raw or "").strip())
    if match is None:
        return None
    try:
        return datetime.strptime(
            f"{match['month'][:3]} {match['day']} {match['year']}", "%b %d %Y"
        ).replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def _ids(raw: object) -> tuple[str, ...]:
    """Message ids of a ``source_chat_ids`` value: a list, or a dict of lists."""
    found: list[str] = []
    if isinstance(raw, Mapping):
        for value in raw.values():
            found.extend(_ids(value))
    elif isinstance(raw, list):
        for value in raw:
            found.extend(_ids(value) if isinstance(value, list | Mapping) else [str(value)])
    elif isinstance(raw, int) and not isinstance(raw, bool):
        found.append(str(raw))
    return tuple(dict.fromkeys(found))


def chat_from_records(
    chat_id: str, chat: Sequence[Mapping[str, Any]], probing: Mapping[str, Any]
) -> BeamChat:
    """A chat from BEAM's ``chat.json`` (batches of sessions of messages) and
    ``probing_questions.json`` (category -> questions). Questions without evidence ids
    (``abstention``) are left out. A message's time is its session's latest ``time_anchor``
    (one second per message after it, so the order is kept).

    Raises:
        BenchmarkDataError: The data is not in BEAM's layout.
    """
    turns: list[Turn] = []
    roles: dict[str, str] = {}
    when: datetime | None = None
    step = 0
    try:
        for batch_number, batch in enumerate(chat, start=1):
            for session_number, session in enumerate(batch["turns"], start=1):
                previous: str | None = None
                for message in session:
                    when = _anchor_time(message.get("time_anchor")) or when
                    step += 1
                    role = "user" if message["role"] == "user" else "assistant"
                    turn = Turn(
                        dia_id=str(message["id"]),
                        speaker="User" if role == "user" else "Assistant",
                        text=str(message["content"]),
                        session=batch_number * 1000 + session_number,
                        when=when + timedelta(seconds=step) if when else None,
                        previous=previous,
                    )
                    roles[turn.dia_id] = role
                    turns.append(turn)
                    previous = turn.content
        questions: list[BeamQuestion] = []
        for category, entries in probing.items():
            for entry in entries:
                source = entry.get("source_chat_ids")
                evidence = _ids(source)
                if not evidence:
                    continue
                sides = source if isinstance(source, Mapping) else {}
                questions.append(
                    BeamQuestion(
                        text=str(entry["question"]),
                        category=str(category),
                        evidence=evidence,
                        original=_ids(sides.get("original_info")),
                        updated=_ids(sides.get("updated_info")),
                        target=str(entry.get(_TARGET_FIELDS.get(category, ""), "") or ""),
                    )
                )
    except (KeyError, TypeError, AttributeError) as exc:
        raise BenchmarkDataError(f"BEAM chat {chat_id!r} is not in BEAM's layout: {exc}") from exc
    return BeamChat(chat_id, tuple(turns), roles, tuple(questions))


def load_chat(folder: Path, chat_id: str | None = None) -> BeamChat:
    """One chat folder (``chat.json`` + ``probing_questions.json``)."""
    folder = Path(folder)
    chat = json.loads((folder / "chat.json").read_text())
    questions_file = folder / "probing_questions.json"
    probing = json.loads(questions_file.read_text()) if questions_file.exists() else {}
    return chat_from_records(chat_id or folder.name, chat, probing)


def _chat_order(path: Path) -> tuple[Any, ...]:
    return tuple(int(part) if part.isdigit() else part for part in path.parts)


def load_chats(data_dir: str | Path | None = None) -> list[BeamChat]:
    """Every chat under the BEAM folder, named by its path (``100K-1``), in natural order.

    Raises:
        BenchmarkDataError: No BEAM data there; the message says where to get it.
    """
    root = beam_data_dir(data_dir)
    folders = sorted((p.parent for p in root.rglob("chat.json")), key=_chat_order)
    return [
        load_chat(folder, "-".join(folder.relative_to(root).parts) or folder.name)
        for folder in folders
    ]


# ---------------------------------------------------------------------------- metrics


def _words(text: str) -> set[str]:
    return {w for w in stemmed_tokens(text) if w not in ENGLISH_STOP_WORDS and len(w) > 1}


def states_target(content: str, target: str, *, share: float = 0.6) -> bool:
    """Whether a memory's text states ``target`` (an instruction or preference): it holds
    at least ``share`` of the target's content words (stemmed, stop words dropped).

    Example:
        >>> states_target("User's instruction: always format code with syntax highlighting.",
        ...               "Always format all code snippets with syntax highlighting.")
        True
        >>> states_target("User likes tea.", "Always format code with syntax highlighting.")
        False
    """
    wanted = _words(target)
    return bool(wanted) and len(wanted & _words(content)) >= share * len(wanted)


def update_first(ranked: Sequence[str], original: Sequence[str], updated: Sequence[str]) -> bool:
    """Whether an updated message ranks above every original one (an original absent from
    ``ranked`` is below; no updated message in ``ranked`` is ``False``).

    Example:
        >>> update_first(["9", "3"], ["3"], ["9"]), update_first(["3", "9"], ["3"], ["9"])
        (True, False)
    """
    position = {key: i for i, key in reversed(list(enumerate(ranked)))}
    best_update = min((position[k] for k in updated if k in position), default=None)
    if best_update is None:
        return False
    best_original = min((position[k] for k in original if k in position), default=len(ranked))
    return best_update < best_original


@dataclass
class Scores:
    """Mean Recall@5 / Recall@10 (percent) over ``n`` questions; for ``ours`` also the
    in-context and update-first rates (percent; ``None`` where not measured)."""

    n: int = 0
    recall_at_5: float = 0.0
    recall_at_10: float = 0.0
    in_context: float | None = None
    update_first: float | None = None


@dataclass
class QuestionResult:
    """One question's outcome for one retriever."""

    chat_id: str
    category: str
    recall_at_5: float
    recall_at_10: float
    in_context: bool | None = None
    update_first: bool | None = None


@dataclass
class RetrieverResult:
    """One retriever's scores overall and per category."""

    name: str
    overall: Scores = field(default_factory=Scores)
    by_category: dict[str, Scores] = field(default_factory=dict)
    questions: list[QuestionResult] = field(default_factory=list)
    index_seconds: float = 0.0
    error: str | None = None


@dataclass
class IngestStats:
    """What the ``ours`` write path kept of the messages."""

    messages: int = 0
    episodes: int = 0
    facts: int = 0
    evidence_lost: int = 0  # evidence messages with no stored episode


@dataclass
class BeamReport:
    """Everything one run measured."""

    chats: list[str]
    questions: int
    embedder: str
    results: list[RetrieverResult]
    ingest: IngestStats = field(default_factory=IngestStats)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def result(self, name: str) -> RetrieverResult:
        """The named retriever's result."""
        return next(r for r in self.results if r.name == name)


def _rate(values: Sequence[bool | None]) -> float | None:
    known = [v for v in values if v is not None]
    return 100 * sum(known) / len(known) if known else None


def aggregate(rows: Sequence[QuestionResult]) -> Scores:
    """Mean scores of question results (pure).

    Example:
        >>> rows = [QuestionResult("c", "x", 1.0, 1.0, True), QuestionResult("c", "x", 0, 0.5)]
        >>> s = aggregate(rows)
        >>> (s.n, s.recall_at_5, s.recall_at_10, s.in_context)
        (2, 50.0, 75.0, 100.0)
    """
    if not rows:
        return Scores()
    n = len(rows)
    return Scores(
        n=n,
        recall_at_5=100 * sum(r.recall_at_5 for r in rows) / n,
        recall_at_10=100 * sum(r.recall_at_10 for r in rows) / n,
        in_context=_rate([r.in_context for r in rows]),
        update_first=_rate([r.update_first for r in rows]),
    )


def score_question(
    chat_id: str,
    question: BeamQuestion,
    ranked: Sequence[str],
    context: Sequence[Mapping[str, Any]] | None = None,
) -> QuestionResult:
    """One question's scores from a retriever's ranked message ids and, when given, the
    memories put into the model's context (dicts with ``kind``, ``content`` and, for
    episodes, ``turn_id``).

    Example:
        >>> q = BeamQuestion("q?", "knowledge_update", ("3", "9"), ("3",), ("9",))
        >>> r = score_question("c", q, ["9", "1", "3"], [{"kind": "episodic", "turn_id": "9"}])
        >>> (r.recall_at_5, r.in_context, r.update_first)
        (1.0, True, True)
    """
    recall5, recall10, _ = question_scores(ranked, question.evidence)
    updates = question.category == "knowledge_update" and bool(question.updated)
    result = QuestionResult(chat_id, question.category, recall5, recall10)
    if updates:
        result.update_first = update_first(ranked[:TOP_K], question.original, question.updated)
    if context is not None:
        wanted = set(question.evidence)
        result.in_context = any(
            str(m.get("turn_id")) in wanted
            if m.get("kind") == "episodic"
            else bool(question.target) and states_target(str(m.get("content", "")), question.target)
            for m in context
        )
        if updates:
            order = [str(m.get("turn_id")) for m in context if m.get("kind") == "episodic"]
            result.update_first = bool(result.update_first) or update_first(
                order, question.original, question.updated
            )
    return result


# ---------------------------------------------------------------------------- ours


class OursRetriever:
    """The package's public path on one ``PostgresMemoryStore`` (see the module doc)."""

    def __init__(self, store: Any, *, run_tag: str, extract: bool = True) -> None:
        from langgraph_recall.nodes import ExtractNode, RetrieveNode

        self.store = store
        self.run_tag = run_tag
        self.episodes = episode_config(CONTEXT_TURNS, AFTER_TURNS)
        self.extractor = ExtractNode(store=store) if extract else None
        self.retrieve = RetrieveNode(store=store, episodes=self.episodes)
        self.user_id = ""
        self.turn_of: dict[str, str] = {}
        self.fact_turn: dict[str, str] = {}
        self.message_of: dict[str, str] = {}  # every stored memory's message: both of the above
        self.stats = IngestStats()

    def _config(self) -> RunnableConfig:
        return {"configurable": {"user_id": self.user_id, "thread_id": self.user_id}}

    def index(self, chat: BeamChat) -> None:
        from langchain_core.messages import HumanMessage

        from langgraph_recall.episodes import EpisodeTurn, ingest_history

        self.user_id = f"beam-{self.run_tag}-{chat.chat_id}"
        history = [
            EpisodeTurn(t.text, chat.roles[t.dia_id], t.speaker, t.dia_id, str(t.session), t.when)
            for t in chat.turns
        ]
        report = ingest_history(self.store, history, user_id=self.user_id, config=self.episodes)
        if self.extractor is not None:
            for turn in chat.turns:
                if chat.roles[turn.dia_id] != "user":
                    continue
                stamp = {"timestamp": turn.when.isoformat()} if turn.when else {}
                message = HumanMessage(turn.text, id=turn.dia_id, additional_kwargs=stamp)
                self.extractor.invoke({"messages": [message]}, config=self._config())
        stored = self.store.search(report.namespace, limit=100_000)
        self.turn_of = {
            item.key: str(item.value["turn_id"])
            for item in stored
            if item.value.get("kind") == "episodic" and "turn_id" in item.value
        }
        self.fact_turn = {  # an extracted fact counts as the message it was read from
            item.key: str(said[0])
            for item in stored
            if item.value.get("kind") != "episodic"
            and (said := (item.value.get("source") or {}).get("message_ids"))
        }
        self.message_of = {**self.fact_turn, **self.turn_of}
        kept = set(self.turn_of.values())
        evidence = {e for q in chat.questions for e in q.evidence}
        self.stats.messages += len(chat.turns)
        self.stats.episodes += len(self.turn_of)
        self.stats.facts += sum(1 for i in stored if i.value.get("kind") != "episodic")
        self.stats.evidence_lost += len(evidence - kept)
        self.namespace = report.namespace

    def search(self, question: str, k: int) -> list[str]:
        found = self.store.search(self.namespace, query=question, limit=k)
        return [
            str(item.value.get("turn_id") or self.fact_turn.get(item.key, item.key))
            for item in found
        ]

    def context(self, question: str) -> list[dict[str, Any]]:
        """The memories ``RetrieveNode`` puts into the model's context for ``question``."""
        out = self.retrieve.invoke({"messages": [("user", question)]}, config=self._config())
        return [{**m, "turn_id": self.message_of.get(str(m.get("key")))} for m in out["memories"]]


@contextlib.contextmanager
def _ours(embeddings: Embeddings, dims: int, dsn: str, extract: bool) -> Iterator[OursRetriever]:
    from langgraph_recall.episodes import TurnEmbeddings
    from langgraph_recall.store.postgres import PostgresMemoryStore

    index = content_index(dims, TurnEmbeddings(embeddings))
    with (
        temp_database(dsn) as url,
        PostgresMemoryStore.from_conn_string(url, index=index) as store,
    ):
        store.setup()
        yield OursRetriever(store, run_tag=uuid.uuid4().hex[:8], extract=extract)


# ---------------------------------------------------------------------------- run


def run(
    data_dir: Path | str | None = None,
    *,
    retrievers: Sequence[str] = RETRIEVERS,
    chats: Sequence[BeamChat] | None = None,
    limit_chats: int | None = None,
    limit_questions: int | None = None,
    extract: bool = True,
    embeddings: Embeddings | None = None,
    dims: int | None = None,
    dsn: str = POSTGRES_URI,
    progress: OnProgress = print_progress,
) -> BeamReport:
    """Run the benchmark and return its report (the CLI prints it; tests assert on it).

    Args:
        data_dir: The BEAM folder (default ``$LANGGRAPH_RECALL_BEAM_DIR``).
        retrievers: Names from ``RETRIEVERS``.
        chats: Use these instead of loading ``data_dir``.
        limit_chats: Use only the first N chats.
        limit_questions: Use only the first N questions of each chat.
        extract: Also run the offline extractor over the user messages (``ours``).
        embeddings: Embedder of the vector retrievers (default ``default_embeddings()``).
        dims: Its dimensions (default ``embeddings.dims`` or 384).
        dsn: Admin DSN of the Postgres server ``ours`` creates its database on.
        progress: Receives :class:`~langgraph_recall.bench.progress.Progress` events.

    Raises:
        BenchmarkDataError: No BEAM data, or an unknown retriever name.
    """
    unknown = sorted(set(retrievers) - set(RETRIEVERS))
    if unknown:
        raise BenchmarkDataError(f"unknown BEAM retriever(s) {unknown}; choose from {RETRIEVERS}")
    chosen = list(chats if chats is not None else load_chats(data_dir))[:limit_chats]
    if limit_questions is not None:
        chosen = [
            BeamChat(c.chat_id, c.turns, c.roles, c.questions[:limit_questions]) for c in chosen
        ]
    if embeddings is None:
        from langgraph_recall.embeddings import default_embeddings

        embeddings = default_embeddings()
    dims = dims or int(getattr(embeddings, "dims", 384))
    embedder = str(getattr(embeddings, "model_name", type(embeddings).__name__))
    shared = CachingEmbeddings(embeddings)
    n_questions = sum(len(c.questions) for c in chosen)
    progress(Progress(f"BEAM: {len(chosen)} chats, {n_questions} questions; embedder {embedder}"))
    results: list[RetrieverResult] = []
    stats = IngestStats()
    for name in retrievers:
        result = RetrieverResult(name)
        results.append(result)
        try:
            with contextlib.ExitStack() as stack:
                ours: OursRetriever | None = None
                baseline: Any = None
                if name == "ours":
                    ours = stack.enter_context(_ours(shared, dims, dsn, extract))
                elif name == "vector":
                    baseline = InMemoryVectorRetriever(shared, dims)
                else:
                    baseline = BM25Retriever(stemmed_tokens)
                for number, chat in enumerate(chosen, start=1):
                    started = time.perf_counter()
                    if ours is not None:
                        ours.index(chat)
                    else:
                        baseline.index(chat.as_conversation())
                    result.index_seconds += time.perf_counter() - started
                    for question in chat.questions:
                        if ours is not None:
                            ranked = ours.search(question.text, TOP_K)
                            context = ours.context(question.text)
                            row = score_question(chat.chat_id, question, ranked, context)
                        else:
                            ranked = baseline.search(question.text, TOP_K)
                            row = score_question(chat.chat_id, question, ranked)
                        result.questions.append(row)
                    done = aggregate([r for r in result.questions if r.chat_id == chat.chat_id])
                    progress(
                        Progress(
                            f"{name} {chat.chat_id}: {len(chat.turns)} messages, {done.n} "
                            f"questions, R@10 {done.recall_at_10:.1f}",
                            number,
                            len(chosen),
                        )
                    )
                if ours is not None:
                    stats = ours.stats
        except Exception as exc:  # a missing service skips one retriever, not the run
            result.error = f"{type(exc).__name__}: {exc}"
            progress(Progress(f"{name} skipped: {result.error}"))
            continue
        result.overall = aggregate(result.questions)
        categories = sorted({r.category for r in result.questions})
        result.by_category = {
            c: aggregate([r for r in result.questions if r.category == c]) for c in categories
        }
    return BeamReport([c.chat_id for c in chosen], n_questions, embedder, results, stats)


# ---------------------------------------------------------------------------- report


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def report_rows(report: BeamReport) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the per-category table: R@10 of each retriever and the
    in-context / update-first rates of ``ours``."""
    ran = [r for r in report.results if r.error is None]
    header = ["category", "n", *(f"{r.name} R@5" for r in ran), *(f"{r.name} R@10" for r in ran)]
    header += ["in context", "update first"]
    categories = sorted({c for r in ran for c in r.by_category})
    ours = next((r for r in ran if r.name == "ours"), None)
    rows: list[list[str]] = []
    for label in [*categories, "overall"]:

        def scores(r: RetrieverResult, label: str = label) -> Scores:
            return r.overall if label == "overall" else r.by_category.get(label, Scores())

        mine = scores(ours) if ours is not None else Scores()
        n = scores(ran[0]).n if ran else 0
        rows.append(
            [
                label,
                str(n),
                *(_cell(scores(r).recall_at_5) for r in ran),
                *(_cell(scores(r).recall_at_10) for r in ran),
                _cell(mine.in_context),
                _cell(mine.update_first),
            ]
        )
    return header, rows


def format_report(report: BeamReport) -> str:
    """The report as text tables."""
    from langgraph_recall.bench._common import format_table

    header, rows = report_rows(report)
    ingest = report.ingest
    lines = [
        f"BEAM turn retrieval: {len(report.chats)} chats ({', '.join(report.chats)}), "
        f"{report.questions} questions; embedder {report.embedder}",
        format_table(header, rows),
        f"ours ingest: {ingest.messages} messages -> {ingest.episodes} episodes "
        f"+ {ingest.facts} extracted memories; evidence messages not stored: "
        f"{ingest.evidence_lost}",
    ]
    lines += [f"{r.name}: FAILED {r.error}" for r in report.results if r.error]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", default=None, help=f"the BEAM folder (default ${BEAM_ENV})")
    parser.add_argument("--limit-chats", type=int, default=None)
    parser.add_argument("--limit-questions", type=int, default=None)
    parser.add_argument("--retrievers", default=",".join(RETRIEVERS))
    parser.add_argument("--no-extract", action="store_true", help="episodes only")
    parser.add_argument("--json", default=None, help="write the report as JSON")
    args = parser.parse_args(argv)
    report = run(
        args.data,
        retrievers=[r for r in args.retrievers.split(",") if r],
        limit_chats=args.limit_chats,
        limit_questions=args.limit_questions,
        extract=not args.no_extract,
    )
    print(format_report(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_json(), indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
