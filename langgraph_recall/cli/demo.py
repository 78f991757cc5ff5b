"""``langgraph-recall demo``: a multi-session conversation that shows what memory does.

Four sessions (four ``thread_id`` s) for one fresh ``user_id``:

1. the user introduces themselves ("My name is…", "I live in…") — memories are extracted;
2. a **new thread** asks "What's my name?" — answered from long-term memory;
3. "I moved to Lisbon." **supersedes** "lives in Berlin" (``invalid_at`` is set, nothing
   is deleted), and ``store.search(as_of=...)`` still answers what was true before;
4. a long thread passes the summariser's token budget: old turns are **folded** into a
   running summary and the checkpoint shrinks.

The graph is built from :mod:`langgraph_recall.nodes` (retrieve → inject → respond →
extract → summarize), compiled with our Postgres store and a Postgres or Redis
checkpointer.

``langgraph-recall demo --offline`` runs it; :func:`build_demo_graph` is the graph alone.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore, SearchItem

from langgraph_recall.cli._backends import ModelChoice
from langgraph_recall.cli._console import CliError, Console, shorten
from langgraph_recall.cli.admin import memory_rows, user_namespace
from langgraph_recall.errors import LangGraphRecallError

if TYPE_CHECKING:
    from langgraph_recall.store.postgres import PostgresMemoryStore

__all__ = [
    "DEMO_SUMMARY_TOKENS",
    "LONG_THREAD",
    "DemoReport",
    "build_demo_graph",
    "cmd_demo",
    "new_user_id",
    "run_demo",
]

DEMO_SUMMARY_TOKENS = 250
"""Token budget of the demo's summariser (small, so a short thread already folds)."""

INTRO = ("Hi! My name is Zhang San.", "I live in Berlin.", "I work at Acme Robotics.")
RECALL = ("What's my name?", "Which city do I live in?")
MOVE = ("I moved to Lisbon.", "Which city do I live in?")
CITY_QUERY = "Which city does the user live in?"
LONG_THREAD = (
    "I'm planning a trip to Japan next spring and would like to see the cherry blossoms.",
    "My favourite food is ramen, so I want to try a different ramen shop in every city.",
    "I'd like to start in Tokyo for four days and then take the train down to Kyoto.",
    "In Kyoto I want to visit the temples early in the morning before the crowds arrive.",
    "After Kyoto, maybe two days in Osaka for the street food and the castle park.",
    "Could the last two days be somewhere quiet by the sea before flying home from Tokyo?",
)


def new_user_id() -> str:
    """A fresh demo user id, so reruns start clean.

    Example:
        ```python
        from langgraph_recall.cli.demo import new_user_id

        assert new_user_id().startswith("demo-")
        ```
    """
    return f"demo-{uuid.uuid4().hex[:8]}"


def build_demo_graph(
    store: BaseStore,
    checkpointer: BaseCheckpointSaver[Any],
    choice: ModelChoice,
    *,
    summary_tokens: int = DEMO_SUMMARY_TOKENS,
) -> Any:
    """retrieve → inject → respond → extract → summarize, compiled with store + checkpointer.

    Offline (``choice.offline``) the extractor is the rule-based one and the summary is
    extractive; with a real model both use it.

    Example:
        ```python
        from langgraph_recall.cli._backends import choose_model, open_checkpointer, open_store
        from langgraph_recall.cli.demo import build_demo_graph

        with open_store(DB_URI) as store, open_checkpointer(DB_URI, None) as saver:
            graph = build_demo_graph(store, saver, choose_model(model=None, offline=True))
            config = {"configurable": {"user_id": "doc-demo", "thread_id": "doc-demo:1"}}
            out = graph.invoke({"messages": [("user", "Hi! My name is Zhang San.")]}, config)
        assert out["messages"][-1].type == "ai"
        ```
    """
    from langgraph_recall.extraction import RuleBasedExtractor
    from langgraph_recall.nodes import (
        ExtractNode,
        InjectNode,
        MemoryState,
        RespondNode,
        RetrieveNode,
        SummarizeNode,
    )

    llm = None if choice.offline else choice.model
    builder = StateGraph(MemoryState)
    builder.add_sequence(
        [
            ("retrieve", RetrieveNode()),
            ("inject", InjectNode()),
            ("respond", RespondNode(choice.model)),
            # offline mode is announced: its rule-based extractor is chosen on purpose
            ("extract", ExtractNode(model=llm, extractor=None if llm else RuleBasedExtractor())),
            ("summarize", SummarizeNode(model=llm, max_tokens=summary_tokens, keep_turns=2)),
        ]
    )
    builder.add_edge(START, "retrieve")
    return builder.compile(store=store, checkpointer=checkpointer)


@dataclass
class Turn:
    """One user turn's outcome."""

    reply: str
    messages_before_summary: int
    messages_after: int
    report: dict[str, Any]
    summary: str


@dataclass
class DemoReport:
    """What the demo showed (for tests and notebooks).

    Attributes:
        user_id: The demo user.
        name_answer: The answer to "What's my name?" in a new thread.
        city_before / city_after: Answers to "Which city do I live in?" before/after the move.
        superseded: Contents of memories invalidated by the move.
        as_of_then / as_of_now: Top search results for the city, at a time before the
            move and now.
        folds: ``(before, after)`` message counts of every turn that folded.
        summary: The running summary at the end of the long thread.
        memories: Contents of all memories (valid or not) at the end.
        seconds: Wall time of the demo.
    """

    user_id: str
    name_answer: str = ""
    city_before: str = ""
    city_after: str = ""
    superseded: list[str] = field(default_factory=list)
    as_of_then: list[str] = field(default_factory=list)
    as_of_now: list[str] = field(default_factory=list)
    folds: list[tuple[int, int]] = field(default_factory=list)
    summary: str = ""
    memories: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _last_ai(messages: Sequence[BaseMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return message.text if hasattr(message, "text") else str(message.content)
    return ""


def _run_turn(graph: Any, text: str, config: RunnableConfig) -> Turn:
    counts: list[int] = []
    values: dict[str, Any] = {}
    for values in graph.stream({"messages": [("user", text)]}, config, stream_mode="values"):
        counts.append(len(values.get("messages", [])))
    messages = values.get("messages", [])
    return Turn(
        reply=_last_ai(messages),
        messages_before_summary=max(counts) if counts else 0,
        messages_after=counts[-1] if counts else 0,
        report=dict(values.get("memory_report") or {}),
        summary=str(values.get("summary") or ""),
    )


def _describe_report(report: dict[str, Any]) -> str | None:
    counts = report.get("counts") or {}
    words = {
        "added": "added",
        "updated": "updated",
        "invalidated": "superseded",
        "reinforced": "reinforced",
    }
    parts = [f"{counts[k]} {label}" for k, label in words.items() if counts.get(k)]
    return "memory: " + ", ".join(parts) if parts else None


def _contents(items: Sequence[SearchItem]) -> list[str]:
    return [str(item.value.get("content", item.value)) for item in items]


class _Session:
    """Runs turns of one thread and prints them."""

    def __init__(self, console: Console, graph: Any, user_id: str, thread: str) -> None:
        self.console = console
        self.graph = graph
        self.config: RunnableConfig = {
            "configurable": {"user_id": user_id, "thread_id": f"{user_id}:{thread}"}
        }

    def turn(self, text: str, *, show_counts: bool = False) -> Turn:
        result = _run_turn(self.graph, text, self.config)
        self.console.say("user", text)
        self.console.say("assistant", result.reply)
        described = _describe_report(result.report)
        if described:
            self.console.note(described)
        if show_counts:
            if result.messages_after < result.messages_before_summary:
                self.console.note(
                    f"summariser folded old turns: {result.messages_before_summary} -> "
                    f"{result.messages_after} messages in the checkpoint"
                )
            else:
                self.console.note(f"{result.messages_after} messages in the checkpoint")
        return result


def run_demo(
    console: Console,
    *,
    store: PostgresMemoryStore,
    checkpointer: BaseCheckpointSaver[Any],
    choice: ModelChoice,
    user_id: str | None = None,
    summary_tokens: int = DEMO_SUMMARY_TOKENS,
) -> DemoReport:
    """Run the four demo sessions, printing to ``console``; returns what was shown.

    The four sessions take a while (``tests/integration/cli`` runs them); the graph alone is
    :func:`build_demo_graph`.
    """
    started = time.perf_counter()
    user = user_id or new_user_id()
    report = DemoReport(user_id=user)
    namespace = user_namespace(user)  # the nodes' namespace: the id encoded as they encode it
    graph = build_demo_graph(store, checkpointer, choice, summary_tokens=summary_tokens)
    existing = store.search(namespace, limit=100, include_invalid=True)
    if existing:
        console.warn(
            f"user {user} already has {len(existing)} memories from an earlier run, so the "
            f"answers below build on them; run without --user for a clean run, or first: "
            f"langgraph-recall forget --user {user} --yes"
        )

    console.heading(f"Session 1 · thread '{user}:intro' · the user introduces themselves")
    intro = _Session(console, graph, user, "intro")
    for text in INTRO:
        intro.turn(text)

    console.heading(f"Session 2 · NEW thread '{user}:recall' · cross-thread recall")
    console.step("this thread has no history; the answers come from long-term memory")
    recall = _Session(console, graph, user, "recall")
    report.name_answer = recall.turn(RECALL[0]).reply
    report.city_before = recall.turn(RECALL[1]).reply

    console.heading(f"Session 3 · NEW thread '{user}:move' · an update supersedes a fact")
    before_move = datetime.now(timezone.utc)
    time.sleep(0.01)  # the move happens strictly after `before_move`
    move = _Session(console, graph, user, "move")
    move.turn(MOVE[0])
    everything = store.search(namespace, limit=100, include_invalid=True)
    moved_at = before_move.strftime("%Y-%m-%d %H:%M:%S")  # the rows' format, UTC
    for row in memory_rows(everything):
        if not row.is_valid and row.invalid_at >= moved_at:
            report.superseded.append(row.content)
            console.note(f"superseded, not deleted: {row.content!r} (invalid_at {row.invalid_at})")
    report.city_after = move.turn(MOVE[1]).reply

    console.heading("Temporal query · store.search(as_of=...)")
    then = store.search(namespace, query=CITY_QUERY, as_of=before_move, limit=1)
    now = store.search(namespace, query=CITY_QUERY, limit=1)
    report.as_of_then, report.as_of_now = _contents(then), _contents(now)
    stamp = before_move.strftime("%H:%M:%S")
    console.line(f"  as_of {stamp} (before the move): {', '.join(report.as_of_then) or '-'}")
    console.line(f"  now:                             {', '.join(report.as_of_now) or '-'}")

    console.heading(
        f"Session 4 · thread '{user}:trip' · a long thread gets summarised "
        f"(budget {summary_tokens} tokens)"
    )
    trip = _Session(console, graph, user, "trip")
    for text in LONG_THREAD:
        result = trip.turn(text, show_counts=True)
        if result.messages_after < result.messages_before_summary:
            report.folds.append((result.messages_before_summary, result.messages_after))
        report.summary = result.summary or report.summary
    if report.summary:
        console.line("  running summary: " + shorten(report.summary, 300))

    console.heading(f"What the store holds for {user}")
    rows: list[list[Any]] = []
    items = store.search(namespace, limit=100, include_invalid=True)
    for row in memory_rows(items):
        report.memories.append(row.content)
        rows.append(
            [
                row.kind,
                row.importance,
                row.valid_from,
                row.invalid_at or "(valid)",
                shorten(row.content, 48),
            ]
        )
    console.table(["kind", "imp", "valid_from", "invalid_at", "content"], rows)
    report.seconds = time.perf_counter() - started
    return report


def cmd_demo(args: Any, console: Console | None = None) -> int:
    """``langgraph-recall demo`` (argparse handler): ``main(["demo", "--offline"])``."""
    from langgraph_recall.cli._backends import (
        OFFLINE_NOTICE,
        choose_model,
        describe_dsn,
        open_checkpointer,
        open_store,
        resolve_dsn,
    )

    out = console or Console()
    started = time.perf_counter()
    choice = choose_model(model=args.model, offline=args.offline)
    out.heading("langgraph-recall demo")
    if choice.offline:
        out.warn(OFFLINE_NOTICE)
        out.step("set OPENAI_API_KEY or pass --model NAME to use a real model")
    else:
        out.line(f"  {choice.description}")
    dsn = resolve_dsn(args.postgres)
    out.step(f"memory store: {describe_dsn(dsn)} (starting…)")
    with open_store(dsn) as store:
        mode = getattr(store, "vector_mode", "?")
        out.step(
            f"memory store ready in {time.perf_counter() - started:.1f}s, vector search: {mode}"
        )
        with open_checkpointer(dsn, args.redis) as saver:
            where = args.redis if args.redis else describe_dsn(dsn)
            out.step(f"checkpointer: {type(saver).__name__} on {where}")
            out.step("loading the offline embedding model and running four sessions…")
            try:
                report = run_demo(
                    out, store=store, checkpointer=saver, choice=choice, user_id=args.user
                )
            except Exception as exc:
                if choice.offline or isinstance(exc, CliError | LangGraphRecallError):
                    raise
                raise CliError(
                    f"the model call failed ({type(exc).__name__}: {exc}); check "
                    "OPENAI_API_KEY / OPENAI_BASE_URL / --model, or run with --offline"
                ) from exc
    flags = f" --postgres '{args.postgres}'" if args.postgres else ""
    flags += f" --redis {args.redis}" if args.redis else ""
    out.heading("Done")
    out.ok(
        f"demo finished in {time.perf_counter() - started:.1f}s "
        f"({len(report.memories)} memories for {report.user_id})"
    )
    out.line(f"  inspect them:  langgraph-recall inspect --user {report.user_id}{flags}")
    out.line(f"  erase them:    langgraph-recall forget --user {report.user_id}{flags} --yes")
    return 0
