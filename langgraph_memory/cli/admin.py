"""``langgraph-memory inspect`` and ``forget``: look at and erase one user's data.

Both work on the namespace ``("memories", <user>)`` — where the memory nodes write by
default — of the store on ``--postgres DSN`` / ``$LANGGRAPH_MEMORY_POSTGRES_URI``, else the
embedded Postgres in ``$LANGGRAPH_MEMORY_HOME``, and on the user's conversation threads
(checkpoints whose metadata carries ``user_id``) in the Postgres checkpointer on the same
database, or in Redis with ``--redis``.

Example:
    ```python
    from langgraph_memory.cli import main

    main(["inspect", "--user", "demo-1234abcd"])
    main(["forget", "--user", "demo-1234abcd", "--yes"])
    ```
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import SearchItem

from langgraph_memory.cli._backends import (
    describe_dsn,
    open_checkpointer,
    open_store,
    resolve_dsn,
)
from langgraph_memory.cli._console import CliError, Console, shorten

__all__ = [
    "MemoryRow",
    "cmd_forget",
    "cmd_inspect",
    "memory_rows",
    "user_namespace",
    "user_threads",
]

MAX_LISTED = 1000


def user_namespace(user: str) -> tuple[str, ...]:
    """The namespace of ``user``'s memories (the nodes' default template).

    Example:
        ```python
        assert user_namespace("u1") == ("memories", "u1")
        ```
    """
    if not user or not user.strip():
        raise CliError("--user must be a non-empty user id (e.g. --user demo-1234abcd)")
    return ("memories", user)


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
        rows = memory_rows(store.search(("memories", "u1"), include_invalid=True))
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


def user_threads(saver: Any, user: str) -> dict[str, int]:
    """``thread_id -> checkpoint count`` of the conversations run for ``user``.

    LangGraph copies ``configurable["user_id"]`` into each checkpoint's metadata, so the
    threads are found with a metadata filter.

    Example:
        ```python
        with open_checkpointer(None, None) as saver:
            print(user_threads(saver, "demo-1234abcd"))
        ```
    """
    counts: dict[str, int] = {}
    for item in saver.list(None, filter={"user_id": user}):
        thread_id = str(item.config["configurable"]["thread_id"])
        counts[thread_id] = counts.get(thread_id, 0) + 1
    return counts


def _history_lines(store: Any, row: MemoryRow) -> list[str]:
    lines = []
    for entry in store.history(row.namespace, row.key):
        text = entry.new_text if entry.new_text is not None else entry.old_text
        actor = f" by {entry.actor}" if entry.actor else ""
        lines.append(f"{_stamp(entry.at)}  {entry.action:<10}{actor}  {shorten(str(text), 60)}")
    return lines


def cmd_inspect(args: Any, console: Console | None = None) -> int:
    """``langgraph-memory inspect --user ID``: memories with kind, importance, validity, history."""
    out = console or Console()
    namespace = user_namespace(args.user)
    dsn = resolve_dsn(args.postgres)
    with open_store(dsn) as store:
        items = store.search(namespace, limit=MAX_LISTED, include_invalid=True)
        rows = memory_rows(items)
        out.heading(f"Memories of {args.user} ({describe_dsn(dsn)})")
        with open_checkpointer(dsn, args.redis) as saver:
            threads = user_threads(saver, args.user)
        described = ", ".join(f"{t} ({n} checkpoints)" for t, n in sorted(threads.items()))
        out.line(f"  conversation threads: {described or 'none'}")
        if not rows:
            out.line(f"  no memories for user {args.user!r}")
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


def cmd_forget(args: Any, console: Console | None = None) -> int:
    """``langgraph-memory forget --user ID [--yes]``: erase everything of one user: memories,
    their embeddings and history, and the user's conversation threads."""
    out = console or Console()
    namespace = user_namespace(args.user)
    dsn = resolve_dsn(args.postgres)
    with contextlib.ExitStack() as stack:
        store = stack.enter_context(open_store(dsn))
        items = store.search(namespace, limit=MAX_LISTED, include_invalid=True)
        history = sum(len(store.history(tuple(i.namespace), i.key)) for i in items)
        saver = stack.enter_context(open_checkpointer(dsn, args.redis))
        threads = user_threads(saver, args.user)
        out.heading(f"Erase {args.user} ({describe_dsn(dsn)})")
        out.line(
            f"  found {len(items)} memories with {history} history entries, "
            f"{len(threads)} conversation threads with {sum(threads.values())} checkpoints"
        )
        if not args.yes:
            if not sys.stdin.isatty():
                raise CliError("refusing to erase without confirmation: add --yes")
            answer = input(f"  erase everything of {args.user!r}? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                out.line("  nothing erased")
                return 1
        erased = store.forget(namespace)
        for thread_id in threads:
            saver.delete_thread(thread_id)
        left = store.search(namespace, limit=1, include_invalid=True)
        out.ok(f"erased {erased} memories (with their embeddings and history) of {args.user}")
        out.ok(f"deleted {len(threads)} conversation threads ({sum(threads.values())} checkpoints)")
        if left or user_threads(saver, args.user):
            raise CliError("data of this user is still present after forget; please report")
    return 0
