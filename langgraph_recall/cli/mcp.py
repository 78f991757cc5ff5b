"""``langgraph-recall mcp --user ID``: serve one user's memories to MCP clients over stdio.

Standard output carries the protocol; everything else goes to standard error.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from langgraph_recall.cli._backends import describe_dsn, open_store, resolve_dsn
from langgraph_recall.cli._console import CliError, Console

__all__ = ["cmd_mcp"]


def cmd_mcp(args: Any, console: Console | None = None) -> int:
    """Run the MCP server until the client closes standard input."""
    out = console or Console(sys.stderr)
    user = args.user
    if not user or not user.strip():
        raise CliError("--user must be a non-empty user id (e.g. --user demo-1234abcd)")
    try:
        import mcp  # noqa: F401

        from langgraph_recall.mcp_server import MemoryTools, build_server
    except ImportError as exc:
        raise CliError(
            f"the MCP server needs the mcp package ({exc.name}): "
            'pip install "langgraph-recall[mcp]"'
        ) from exc
    dsn = resolve_dsn(args.postgres)
    with open_store(dsn) as store:
        server = build_server(MemoryTools(store, user))
        out.line(f"  serving the memories of {user!r} ({describe_dsn(dsn)}) over stdio")
        asyncio.run(server.run_stdio_async())
    return 0
