"""``langgraph-recall export`` and ``import``: one user's memories in and out as JSON Lines.

``export --user ID [--out FILE]`` writes the user's memories (with validity, kind,
importance, links and audit history) in the format of :mod:`langgraph_recall.transfer`;
``import FILE`` (``-`` for standard input) puts them into the store, batch by batch, with
progress on standard error; ``import --from-langgraph-store DSN`` copies the items of
LangGraph's ``PostgresStore`` on ``DSN`` instead.

Example:
    ```python
    import os
    import tempfile

    from langgraph_recall.cli import main

    db = ["--postgres", DB_URI]
    path = os.path.join(tempfile.mkdtemp(), "doc-cli.jsonl")
    assert main(["export", "--user", "doc-cli", "--out", path, *db]) == 0
    assert main(["import", path, *db]) == 0
    ```
"""

from __future__ import annotations

import contextlib
import json
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from langgraph_recall.cli._backends import describe_dsn, open_store, resolve_dsn
from langgraph_recall.cli._console import CliError, Console
from langgraph_recall.errors import BulkLoadWarning

__all__ = ["cmd_export", "cmd_import", "parse_prefix"]


def parse_prefix(text: str | None) -> tuple[str, ...] | None:
    """``--prefix`` as a JSON list of labels (labels may hold ``/`` or spaces).

    Example:
        ```python
        from langgraph_recall.cli.transfer import parse_prefix

        assert parse_prefix('["memories", "team"]') == ("memories", "team")
        assert parse_prefix(None) is None
        ```
    """
    if text is None:
        return None
    try:
        labels = json.loads(text)
    except ValueError:
        labels = None
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        raise CliError(
            f"--prefix must be a JSON list of labels, e.g. '[\"memories\"]', got {text!r}"
        )
    return tuple(labels)


@contextlib.contextmanager
def _output(path: str | None) -> Iterator[TextIO]:
    if path is None or path == "-":
        yield sys.stdout
        return
    try:
        stream = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise CliError(f"cannot write {path!r}: {exc.strerror}") from None
    with stream:
        yield stream


@contextlib.contextmanager
def _input(path: str) -> Iterator[TextIO]:
    if path == "-":
        yield sys.stdin
        return
    try:
        stream = open(path, encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise CliError(f"cannot read {path!r}: {exc.strerror}") from None
    with stream:
        yield stream


def cmd_export(args: Any, console: Console | None = None) -> int:
    """``langgraph-recall export --user ID | --prefix JSON [--out FILE] [--no-history]``."""
    from langgraph_recall.transfer import export_memories

    out = console or Console(sys.stderr)
    prefix = parse_prefix(args.prefix)
    user = args.user
    if (user is None) == (prefix is None):
        raise CliError("export needs exactly one of --user ID and --prefix JSON")
    if user is not None and not user.strip():
        raise CliError("--user must be a non-empty user id (e.g. --user demo-1234abcd)")
    dsn = resolve_dsn(args.postgres)
    with open_store(dsn) as store, _output(args.out) as stream:
        report = export_memories(
            store, stream, user_id=user, namespace_prefix=prefix, history=args.history
        )
    where = args.out if args.out not in (None, "-") else "standard output"
    out.ok(
        f"exported {_count(report.items, 'memory', 'memories')} from {describe_dsn(dsn)} to {where}"
    )
    if report.items == 0:
        whose = f"user {user!r}" if user is not None else f"prefix {args.prefix}"
        out.warn(
            f"{describe_dsn(dsn)} holds no memory of {whose}: check the id (as your app passes "
            "it in configurable user_id) and the database; `langgraph-recall inspect --user ID` "
            "lists what a user has"
        )
    return 0


def _count(n: int, one: str, many: str) -> str:
    """``1 memory`` / ``2 memories``."""
    return f"{n} {one if n == 1 else many}"


@contextlib.contextmanager
def _open_langgraph_store(dsn: str) -> Iterator[Any]:
    try:
        import psycopg
        from langgraph.store.postgres import PostgresStore
    except ImportError as exc:
        raise CliError(
            "reading LangGraph's PostgresStore needs langgraph-checkpoint-postgres: pip install "
            '"langgraph-recall[postgres]"'
        ) from exc
    try:
        with PostgresStore.from_conn_string(dsn) as store:
            yield store
    except psycopg.errors.UndefinedTable as exc:
        raise CliError(
            f"{describe_dsn(dsn)} holds no LangGraph PostgresStore ({exc.diag.message_primary}): "
            "give --from-langgraph-store the database your LangGraph app's store writes to"
        ) from None


def _lines_in(path: str) -> int:
    """Memory lines of an export file (for the progress bar)."""
    with open(path, "rb") as stream:
        return max(0, sum(1 for line in stream if line.strip()) - 1)


@contextlib.contextmanager
def _progress(out: Console, total: int | None) -> Iterator[Callable[[int], None]]:
    """A bar on a terminal; elsewhere one line per committed group of batches."""
    try:
        from tqdm import tqdm
    except ImportError:  # an extra of the package; lines do as well
        tqdm = None
    if tqdm is None or not sys.stderr.isatty():
        yield lambda done: out.line(f"  {done} memories imported")
        return

    with tqdm(total=total, desc="importing", unit=" memories", file=sys.stderr) as bar:

        def advance(done: int) -> None:
            bar.update(done - bar.n)

        yield advance


def cmd_import(args: Any, console: Console | None = None) -> int:
    """``langgraph-recall import FILE [--resume] [--rebuild-index]`` /
    ``import --from-langgraph-store DSN``."""
    from langgraph_recall.transfer import copy_memories, import_memories

    out = console or Console(sys.stderr)
    if (args.file is None) == (args.from_langgraph_store is None):
        raise CliError(
            "import needs a FILE (or - for standard input) or --from-langgraph-store DSN"
        )
    if args.batch_size is not None and args.batch_size < 1:
        raise CliError("--batch-size must be >= 1")
    if args.prefix is not None and args.file is not None:
        raise CliError(
            "--prefix selects what --from-langgraph-store copies; an import of a FILE takes "
            "every line of it"
        )
    if args.resume and args.file is None:
        raise CliError(
            "--resume resumes a FILE import; copying from LangGraph's store again gives the "
            "same items (run it again without --resume)"
        )
    dsn = resolve_dsn(args.postgres)
    with open_store(dsn) as store:
        if args.file is not None:
            total = _lines_in(args.file) if _readable(args.file) else None
            rebuilds = args.rebuild_index and store.vector_mode == "pgvector"
            written = 0
            with _input(args.file) as stream, _progress(out, total) as bar:

                def progress(done: int) -> None:
                    nonlocal written
                    written = done
                    bar(done)
                    if rebuilds and done == total:  # the last batch committed
                        out.line("  all written; building the HNSW index (can take minutes)")

                try:
                    with warnings.catch_warnings():  # said below, in the import's words
                        warnings.simplefilter("ignore", BulkLoadWarning)
                        report = import_memories(
                            store,
                            stream,
                            batch_size=args.batch_size,
                            progress=progress,
                            resume=args.resume,
                            rebuild_index=args.rebuild_index,
                        )
                except KeyboardInterrupt:
                    again = " ".join(["langgraph-recall import", args.file, "--resume"])
                    out.warn(
                        f"stopped after {_count(written, 'memory', 'memories')} were "
                        f"written; `{again}` (with the same options) goes on from there"
                    )
                    raise
            source = "standard input" if args.file == "-" else args.file
        else:
            prefix = parse_prefix(args.prefix) or ()
            with (
                _open_langgraph_store(args.from_langgraph_store) as old,
                _progress(out, None) as copied,
            ):
                report = copy_memories(
                    old,
                    store,
                    namespace_prefix=prefix,
                    batch_size=args.batch_size,
                    progress=copied,
                    rebuild_index=args.rebuild_index,
                )
            source = f"LangGraph's PostgresStore ({describe_dsn(args.from_langgraph_store)})"
    if report.recorded is not None:
        held = _count(report.items + report.skipped, "memory", "memories")
        out.warn(
            f"{source} held {held}, fewer than the {report.recorded} this import recorded "
            "when it ran before (a truncated file?): the ones not in it stay stored; import "
            "the whole file again with --resume to check every batch and finish the import"
        )
    skipped = f", {report.skipped} already there from an earlier run" if report.skipped else ""
    out.ok(
        f"imported {_count(report.items, 'memory', 'memories')} from {source} into "
        f"{describe_dsn(dsn)} ({_count(report.batches, 'transaction', 'transactions')}{skipped})"
    )
    return 0


def _readable(path: str) -> bool:
    import os

    return os.path.isfile(path) and os.access(path, os.R_OK)
