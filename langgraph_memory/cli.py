"""The ``langgraph-memory`` command line (subcommands are added per capability)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every subcommand."""
    from langgraph_memory import __version__

    parser = argparse.ArgumentParser(
        prog="langgraph-memory",
        description="Memory for LangGraph agents: checkpointers, a memory store, memory nodes.",
    )
    parser.add_argument("--version", action="version", version=f"langgraph-memory {__version__}")
    parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
