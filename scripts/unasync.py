"""Generate the sync twin of an async module, so sync/async code is written once (psycopg's way).

Each entry of :data:`PAIRS` names an async source module, the sync module generated from it and
the names that change between them. The transformation works on the text:

* ``async def`` / ``async with`` / ``async for`` lose ``async``; ``await`` is dropped;
* every name of the pair's map (and of :data:`COMMON`) is replaced whole-word, in code,
  comments and docstrings alike (``AsyncConnection`` -> ``Connection``, ``aget`` -> ``get``);
* lines between ``# unasync: async-only`` and ``# unasync: end`` are dropped;
* lines between ``# unasync: sync-only`` and ``# unasync: end`` are commented-out code in the
  async source (``# x = 1``) and uncommented in the sync output;
* the result's imports and ``__all__`` are sorted and the unused imports dropped (``ruff
  check --select I,F401,RUF022 --fix``: an import only async code used goes, a sync-only one
  finds its place, a renamed export its rank), then it is formatted with ``ruff format`` and
  starts with a "generated" header.

Usage::

    python scripts/unasync.py           # regenerate every sync module
    python scripts/unasync.py --check   # exit 1 and name the stale ones (the test suite does this)
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COMMON: dict[str, str] = {
    "AsyncIterator": "Iterator",
    "AsyncIterable": "Iterable",
    "AsyncGenerator": "Generator",
    "AsyncConnection": "Connection",
    "AsyncConnectionPool": "ConnectionPool",
    "AsyncCursor": "Cursor",
    "AsyncExitStack": "ExitStack",
    "asynccontextmanager": "contextmanager",
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
    "__aiter__": "__iter__",
    "__anext__": "__next__",
    "StopAsyncIteration": "StopIteration",
}


@dataclass(frozen=True)
class Pair:
    """One async source and the sync module generated from it."""

    source: str
    target: str
    names: dict[str, str] = field(default_factory=dict)


PAIRS: list[Pair] = [
    Pair(
        "langgraph_recall/checkpoint/redis/aio.py",
        "langgraph_recall/checkpoint/redis/saver.py",
        {
            "redis.asyncio.cluster": "redis.cluster",
            "redis.asyncio": "redis",
            "AsyncRedisSaver": "RedisSaver",
            "BoundedAsyncRedisCluster": "BoundedRedisCluster",
            "AsyncRedisLeaseBackend": "RedisLeaseBackend",
            "LoopBridgedSyncMethods": "ThreadedAsyncMethods",
            "_bridge": "_threaded",
            "aclose": "close",
            "ainvoke": "invoke",
            "aget_tuple": "get_tuple",
            "alist": "list",
            "aput": "put",
            "aput_writes": "put_writes",
            "aget_delta_channel_history": "get_delta_channel_history",
            "aforget_threads": "forget_threads",
            "adelete_thread": "delete_thread",
            "adelete_for_runs": "delete_for_runs",
            "acopy_thread": "copy_thread",
            "aprune": "prune",
        },
    ),
    Pair(
        "langgraph_recall/checkpoint/postgres/aio.py",
        "langgraph_recall/checkpoint/postgres/sync.py",
        {
            "AsyncPostgresSaver": "PostgresSaver",
            "AsyncPostgresLeaseBackend": "PostgresLeaseBackend",
            "AsyncConnector": "SyncConnector",
            "AsyncConn": "SyncConn",
            "abuild_pool": "build_pool",
            "abehind_pooler": "behind_pooler",
            "aprobe": "probe",
            "arun_program": "run_program",
            "asyncio.sleep": "time.sleep",
            "aget_tuple": "get_tuple",
            "alist": "list",
            "aget_delta_channel_history": "get_delta_channel_history",
            "aput": "put",
            "aput_writes": "put_writes",
            "aforget_threads": "forget_threads",
            "adelete_thread": "delete_thread",
            "acopy_thread": "copy_thread",
            "adelete_for_runs": "delete_for_runs",
            "aprune": "prune",
            "asweep": "sweep",
        },
    ),
    Pair(
        "langgraph_recall/_pg/run_async.py",
        "langgraph_recall/_pg/run_sync.py",
        {
            "asyncio": "threading",
            "AsyncConn": "SyncConn",
            "AsyncConnector": "SyncConnector",
            "arun_program": "run_program",
            "_apipelined_transaction": "_pipelined_transaction",
            "_aexecute_alone": "_execute_alone",
            "aprobe": "probe",
            "abuild_pool": "build_pool",
            "acheck": "check",
            "aexecute": "execute",
            "anotice_pooler": "notice_pooler",
            "abehind_pooler": "behind_pooler",
        },
    ),
    Pair(
        "langgraph_recall/store/postgres/_statements_aio.py",
        "langgraph_recall/store/postgres/_statements_sync.py",
        {
            "AConn": "Conn",
            "ACursor": "Cursor",
            "async": "sync",
            "run_async": "run_sync",
            "aexecute": "execute",
        },
    ),
    Pair(
        "langgraph_recall/store/postgres/aio.py",
        "langgraph_recall/store/postgres/sync.py",
        {
            "AsyncPostgresMemoryStore": "PostgresMemoryStore",
            "AsyncStoreBase": "SyncStoreBase",
            "_async_store": "_sync_store",
            "_statements_aio": "_statements_sync",
            "run_async": "run_sync",
            "aprobe": "probe",
            "abuild_pool": "build_pool",
            "aexecute": "execute",
            "AConn": "Conn",
            "_arun": "_run",
            "_arun_unchecked": "_run_unchecked",
            "_aresolve_dsn": "_resolve_dsn",
            "_apause": "_pause",
            "_aembed_queries": "_embed_queries",
            "aembed_documents": "embed_documents",
            "aflush_access": "flush_access",
            "enter_async_context": "enter_context",
            "aclose": "close",
            "asyncio": "threading",
        },
    ),
]
"""Registered pairs (paths relative to the repository root)."""

_KEYWORD = re.compile(r"\basync\s+(?=(def|with|for)\b)")
_AWAIT = re.compile(r"\bawait\s+")
_MARK = re.compile(r"^\s*# unasync: (async-only|sync-only|end)\s*$")


def _header(pair: Pair) -> str:
    return (
        f"# Generated by scripts/unasync.py from {pair.source}:\n"
        "# edit that file, then run `python scripts/unasync.py` (the test suite fails while\n"
        "# this file is stale).\n"
    )


def _blocks(text: str) -> str:
    out: list[str] = []
    mode = ""
    for line in text.splitlines(keepends=True):
        mark = _MARK.match(line)
        if mark:
            kind = mark.group(1)
            if kind == "end":
                if not mode:
                    raise ValueError("'# unasync: end' without an open block")
                mode = ""
            elif mode:
                raise ValueError(f"'# unasync: {kind}' inside an open block")
            else:
                mode = kind
            continue
        if mode == "async-only":
            continue
        if mode == "sync-only":
            stripped = line.lstrip()
            if not stripped.startswith("#"):
                raise ValueError(f"sync-only lines must be commented out: {line!r}")
            indent = line[: len(line) - len(stripped)]
            body = stripped[1:]
            line = indent + (body[1:] if body.startswith(" ") else body)
        out.append(line)
    if mode:
        raise ValueError(f"'# unasync: {mode}' block never ends")
    return "".join(out)


def transform(text: str, names: dict[str, str]) -> str:
    """The sync text of an async module's ``text`` (before formatting)."""
    text = _blocks(text)
    text = _KEYWORD.sub("", text)
    text = _AWAIT.sub("", text)
    table = {**COMMON, **names}
    if table:
        words = "|".join(map(re.escape, sorted(table, key=len, reverse=True)))
        pattern = re.compile(rf"\b({words})\b")
        text = pattern.sub(lambda m: table[m.group(1)], text)
    return text


def _ruff(args: list[str], text: str, target: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--stdin-filename", str(target), "-"],
        input=text,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"ruff {args[0]} failed on the sync text of {target}: {done.stderr}")
    return done.stdout


def _format(text: str, target: Path) -> str:
    """``text`` with sorted imports and ``__all__``, unused imports dropped, formatted."""
    fix = ["check", "--select", "I,F401,RUF022", "--fix", "--exit-zero", "--quiet"]
    fixed = _ruff(fix, text, target)
    return _ruff(["format"], fixed, target)


def generate(pair: Pair) -> str:
    """The full generated text of ``pair.target``."""
    source = (ROOT / pair.source).read_text()
    return _format(_header(pair) + transform(source, pair.names), ROOT / pair.target)


def stale() -> list[str]:
    """Targets whose file differs from what their source generates."""
    return [p.target for p in PAIRS if (ROOT / p.target).read_text() != generate(p)]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        old = stale()
        for target in old:
            print(f"stale: {target} (run python scripts/unasync.py)")
        return 1 if old else 0
    for pair in PAIRS:
        text = generate(pair)
        path = ROOT / pair.target
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {pair.target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
