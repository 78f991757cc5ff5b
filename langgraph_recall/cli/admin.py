"""``langgraph-recall inspect`` and ``forget``: look at and erase one user's data.

With ``--query TEXT`` ``inspect`` instead runs the search the ``retrieve`` node runs and
prints, per result, each term of its score (lexical, vector, recency, importance, access,
time match, entity, update; they add up to the final score): ``search(..., explain=True)``.

Both work on the user's namespaces — ``("memories", <user>)``, where the memory nodes
write by default, plus any other namespace the nodes recorded for the user, and the
bookkeeping namespace ``("memory_meta", <user>)`` — of the store on ``--postgres DSN`` /
``$LANGGRAPH_RECALL_POSTGRES_URI``, else the embedded Postgres in ``$LANGGRAPH_RECALL_HOME``,
and on the user's conversation threads in the Postgres checkpointer on the same database
(or in Redis with ``--redis``): threads the nodes recorded for the user and threads whose
checkpoint metadata carries the user id (as text or as a number). User ids are used as the
nodes use them (``alice@example.com``, ``org.team/user``: see
:func:`~langgraph_recall._internal.identity.encode_label`). ``forget`` runs
:func:`langgraph_recall.forget_user`, which looks again afterwards: it never reports success
while anything of the user is left.

Example:
    ```python
    from langgraph_recall.cli import main

    db = ["--postgres", DB_URI]
    assert main(["inspect", "--user", "demo-1234abcd", *db]) == 0
    assert main(["inspect", "--user", "demo-1234abcd", "--query", "where do I live?", *db]) == 0
    assert main(["forget", "--user", "demo-1234abcd", "--yes", *db]) == 0
    ```
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import SearchItem

from langgraph_recall.cli._backends import (
    describe_dsn,
    open_checkpointer,
    open_store,
    resolve_dsn,
)
from langgraph_recall.cli._console import CliError, Console, shorten
from langgraph_recall.erasure import UserData, find_user_data, forget_user
from langgraph_recall.nodes import user_namespace as nodes_user_namespace

__all__ = [
    "EXPLAIN_HEADER",
    "MemoryRow",
    "cmd_forget",
    "cmd_inspect",
    "describe_threads",
    "explain_rows",
    "memory_rows",
    "user_namespace",
]

MAX_LISTED = 1000


def _user(user: str) -> str:
    if not user or not user.strip():
        raise CliError("--user must be a non-empty user id (e.g. --user demo-1234abcd)")
    return user


def user_namespace(user: str) -> tuple[str, ...]:
    """The namespace of ``user``'s memories (the nodes' default template, same encoding).

    Example:
        ```python
        from langgraph_recall.cli.admin import user_namespace

        assert user_namespace("u1") == ("memories", "user_id:u1")
        assert user_namespace("ann@example.com") == ("memories", "user_id:ann@example%2Ecom")
        ```
    """
    return nodes_user_namespace(_user(user))


@dataclass(frozen=True)
class MemoryRow:
    """One memory as ``inspect`` shows it (pure data, built from a ``SearchItem``)."""

    key: str
    namespace: tuple[str, ...]
    kind: str
    importance: Any
    valid_from: str
    invalid_at: str
    content: str
    history: list[str] = field(default_factory=list)

    @property
    def is_valid(self) -> bool:
        """True when the memory has not been superseded/invalidated."""
        return not self.invalid_at


def _stamp(value: Any) -> str:
    return str(value)[:19].replace("T", " ") if value else ""


def memory_rows(items: Sequence[SearchItem]) -> list[MemoryRow]:
    """Rows for ``items``: valid memories first, then superseded ones; newest first.

    Example:
        ```python
        from langgraph.store.memory import InMemoryStore

        from langgraph_recall.cli.admin import memory_rows

        store = InMemoryStore()  # `inspect` passes include_invalid=True to our store
        store.put(("memories", "u1"), "k1", {"content": "User likes tea.", "kind": "preference"})
        rows = memory_rows(store.search(("memories", "u1")))
        assert [(row.key, row.kind, row.content) for row in rows] == [
            ("k1", "preference", "User likes tea.")
        ]
        ```
    """
    rows = [
        MemoryRow(
            key=item.key,
            namespace=tuple(item.namespace),
            kind=str(item.value.get("kind", "")),
            importance=item.value.get("importance", ""),
            valid_from=_stamp(item.value.get("valid_from")),
            invalid_at=_stamp(item.value.get("invalid_at")),
            content=str(item.value.get("content", item.value)),
        )
        for item in items
    ]
    return sorted(rows, key=lambda r: (not r.is_valid, r.valid_from), reverse=False)


def describe_threads(data: UserData) -> str:
    """One line: each thread with its checkpoint count and how it was found.

    Example:
        ```python
        from langgraph_recall.cli.admin import describe_threads
        from langgraph_recall.erasure import UserData

        data = UserData("u", (("memory_meta", "u"),), {}, {"t1": 3}, {"t1": ("registry",)})
        assert describe_threads(data) == "t1 (3 checkpoints, registry)"
        ```
    """
    return ", ".join(
        f"{thread} ({count} checkpoints, {'+'.join(data.found_by.get(thread, ()))})"
        for thread, count in sorted(data.threads.items())
    )


EXPLAIN_HEADER = [
    "#",
    "key",
    "kind",
    "lexical",
    "vector",
    "recency",
    "importance",
    "access",
    "time match",
    "entity",
    "update",
    "score",
    "content",
]
"""Columns of ``inspect --query``: the eight terms of the score, then the score."""


def explain_rows(items: Sequence[SearchItem]) -> list[list[Any]]:
    """Table rows for explained search results (pure), best first as searched.

    Each row holds the eight terms of the item's score and the score itself; an item
    without an explanation (a store without ``explain``) shows only its score.

    Example:
        ```python
        from datetime import datetime, timezone

        from langgraph_recall.cli.admin import explain_rows
        from langgraph_recall.retrieval import ScoreBreakdown
        from langgraph_recall.store.postgres import ExplainedSearchItem

        now = datetime.now(timezone.utc)
        parts = ScoreBreakdown(0.25, 0.5, 0.125, 0.0625, 0.0, 0.0, 0.9375)
        item = ExplainedSearchItem(("memories", "u1"), "k1", {"content": "tea"}, now, now,
                                   0.9375, explanation=parts)
        assert explain_rows([item])[0][3:12] == [0.25, 0.5, 0.125, 0.0625, 0.0, 0.0, 0.0, 0.0,
                                                  0.9375]
        ```
    """
    rows: list[list[Any]] = []
    for position, item in enumerate(items, start=1):
        parts = getattr(item, "explanation", None)
        terms: list[Any] = list(parts.contributions().values()) if parts is not None else [None] * 8
        rows.append(
            [
                position,
                item.key[:8],
                str(item.value.get("kind", "")),
                *terms,
                item.score,
                shorten(str(item.value.get("content", item.value)), 50),
            ]
        )
    return rows


def _inspect_query(args: Any, store: Any, data: UserData, out: Console, user: str) -> int:
    query = str(args.query)
    if not query.strip():
        raise CliError('--query must be non-empty text, e.g. --query "where do I live?"')
    if args.limit < 1:
        raise CliError("--limit must be >= 1")
    items = [
        item
        for namespace in data.namespaces[:-1]
        for item in store.search(namespace, query=query, limit=args.limit, explain=True)
    ]
    items.sort(key=lambda i: -(i.score or 0.0))
    items = items[: args.limit]
    out.heading(f"Why these memories of {user} come back for {query!r}")
    if not items:
        out.line(f"  no memories for user {user!r} match")
        return 0
    out.table(EXPLAIN_HEADER, explain_rows(items))
    out.line(
        "  score = lexical + vector + recency + importance + access + time match + entity "
        "+ update (each term is its factor times its RetrievalConfig weight; update lifts a "
        "newer memory that states a change above an older one; entity links a memory to the "
        "people, places and projects the query names)"
    )
    return 0


def _history_lines(store: Any, row: MemoryRow) -> list[str]:
    lines = []
    for entry in store.history(row.namespace, row.key):
        text = entry.new_text if entry.new_text is not None else entry.old_text
        actor = f" by {entry.actor}" if entry.actor else ""
        lines.append(f"{_stamp(entry.at)}  {entry.action:<10}{actor}  {shorten(str(text), 60)}")
    return lines


def cmd_inspect(args: Any, console: Console | None = None) -> int:
    """``langgraph-recall inspect --user ID``: memories with kind, importance, validity,
    history, the user's conversation threads and bookkeeping entries."""
    out = console or Console()
    user = _user(args.user)
    dsn = resolve_dsn(args.postgres)
    with (
        open_store(dsn) as store,
        open_checkpointer(dsn, args.redis, redis_prefix=args.redis_prefix) as saver,
    ):
        url = getattr(args, "langgraph_url", None)
        data = find_user_data(store, saver, user, langgraph_url=url)
        if getattr(args, "query", None) is not None:
            return _inspect_query(args, store, data, out, user)
        rows = memory_rows(_memories(store, data))
        out.heading(f"Memories of {user} ({describe_dsn(dsn)})")
        out.line(f"  conversation threads: {describe_threads(data) or 'none'}")
        if data.served:
            where = f"the one at {url}" if url else "pass --langgraph-url to reach it"
            out.line(
                f"  run by a LangGraph server, which keeps its own copy: {len(data.served)} "
                f"threads ({where})"
            )
        extra = [ns for ns in data.namespaces[:-1] if ns != user_namespace(user)]
        if extra:
            out.line(f"  other namespaces of this user: {', '.join(map(repr, extra))}")
        if data.legacy:
            out.line(
                "  written by 0.1 (not read by the nodes since 0.2; forget erases them): "
                + ", ".join(f"{ns!r} ({data.items.get(ns, 0)})" for ns in data.legacy)
            )
        meta = data.items.get(data.namespaces[-1], 0)
        out.line(f"  bookkeeping entries (thread links, reflection cursor): {meta}")
        if not rows:
            out.line(f"  no memories for user {user!r}")
            return 0
        valid = sum(r.is_valid for r in rows)
        out.line(f"  {len(rows)} memories: {valid} valid, {len(rows) - valid} superseded")
        out.table(
            ["key", "kind", "imp", "valid_from", "invalid_at", "content"],
            [
                [
                    r.key[:8],
                    r.kind,
                    r.importance,
                    r.valid_from,
                    r.invalid_at or "(valid)",
                    shorten(r.content, 50),
                ]
                for r in rows
            ],
        )
        if args.history:
            out.heading("History (oldest first)")
            for row in rows:
                out.line(f"  {row.key[:8]}  {shorten(row.content, 60)}")
                for line in _history_lines(store, row):
                    out.line(f"      {line}")
    return 0


def _memories(store: Any, data: UserData, *, bookkeeping: bool = False) -> list[SearchItem]:
    """The user's items: everything under the user's namespaces, and what lies exactly in
    a 0.1 namespace of the user (never under it: 0.1 layouts could overlap)."""
    own = data.namespaces if bookkeeping else data.namespaces[:-1]
    items = [
        item
        for namespace in own
        for item in store.search(namespace, limit=MAX_LISTED, include_invalid=True)
    ]
    for namespace in data.legacy:
        if bookkeeping or namespace not in data.legacy_meta:
            found = store.search(namespace, limit=MAX_LISTED, include_invalid=True)
            items += [item for item in found if tuple(item.namespace) == namespace]
    return items


def _confirm(user: str, out: Console) -> bool:
    if not sys.stdin.isatty():
        out.warn("refusing to erase without confirmation: add --yes (nothing erased)")
        return False
    answer = input(f"  erase everything of {user!r}? [y/N] ")
    if answer.strip().lower() in ("y", "yes"):
        return True
    out.line("  nothing erased")
    return False


def cmd_forget(args: Any, console: Console | None = None) -> int:
    """``langgraph-recall forget --user ID [--yes]``: erase everything of one user — memories,
    their embeddings, history and derived memories, bookkeeping entries and every
    conversation thread run for the user — then check that nothing is left."""
    out = console or Console()
    user = _user(args.user)
    dsn = resolve_dsn(args.postgres)
    with contextlib.ExitStack() as stack:
        store = stack.enter_context(open_store(dsn))
        saver = stack.enter_context(
            open_checkpointer(dsn, args.redis, redis_prefix=args.redis_prefix)
        )
        url = getattr(args, "langgraph_url", None)
        data = find_user_data(store, saver, user, langgraph_url=url)
        history = sum(
            len(store.history(tuple(item.namespace), item.key))
            for item in _memories(store, data, bookkeeping=True)
        )
        out.heading(f"Erase {user} ({describe_dsn(dsn)})")
        meta = data.items.get(data.namespaces[-1], 0)
        out.line(
            f"  found {data.memories} memories and {meta} bookkeeping entries with {history} "
            f"history entries, {len(data.threads)} conversation threads with "
            f"{data.checkpoints} checkpoints"
        )
        if not args.yes and not _confirm(user, out):
            return 1
        unheld = "drop" if args.drop_unheld_threads else "keep"
        report = forget_user(store, saver, user, unheld_threads=unheld, langgraph_url=url)
        if not report.complete:
            raise CliError(
                f"data of {user!r} is still present after forget: "
                + "; ".join(report.residue)
                + " (a worker may still be running for this user; run forget again)"
            )
        out.ok(
            f"erased {data.memories} memories and {meta} bookkeeping entries of {user} "
            f"({report.items_erased} items in all, with embeddings, history and derived memories)"
        )
        places = "the store, the checkpointer" + (
            f" and the LangGraph server at {url}" if url else ""
        )
        out.ok(
            f"deleted {len(report.threads)} conversation threads ({report.checkpoints} "
            f"checkpoints); checked again: nothing of this user is left in {places}"
        )
        if not url:
            out.line(
                "  not reached: a LangGraph server's own copy of conversations (none of "
                "these threads was run by one; if your graphs run on `langgraph dev` or "
                "LangGraph Platform, pass --langgraph-url)"
            )
    return 0
