"""Helpers of the erasure tests: a memory graph, the ways apps pass ``user_id``, and
scanners that look for a user's text in every table (text and binary columns) of a
Postgres database and in every Redis key (names and values) under a prefix."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import redis
from langgraph.graph import START, MessagesState, StateGraph
from psycopg import sql

from langgraph_recall.nodes import (
    ExtractNode,
    InjectNode,
    MemoryState,
    ReflectNode,
    RespondNode,
    RetrieveNode,
    SummarizeNode,
)
from langgraph_recall.offline import TemplatedResponder
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests.fakes import HashingEmbeddings
from tests.reliability._servers import user_tables

__all__ = [
    "WAYS",
    "Ctx",
    "arun_user",
    "cli_store",
    "marker",
    "memory_graph",
    "pg_rows_with",
    "plain_graph",
    "redis_keys_with",
    "run_user",
]

WAYS = ("configurable", "configurable-int", "context-dict", "context-dataclass", "plain-graph")
"""How a turn passes ``user_id``: ``configurable`` (str / int), runtime ``context=`` (dict /
dataclass), or ``configurable`` on a graph without any memory node."""


@dataclass
class Ctx:
    """A dataclass runtime context, as apps declare with ``context_schema``."""

    user_id: str


@contextlib.contextmanager
def cli_store(dsn: str) -> Iterator[PostgresMemoryStore]:
    """Our store (set up) with as many dimensions as the CLI's default embedder, so
    ``langgraph-recall inspect/forget`` open the same database (they embed nothing), and
    the fast hashing embedder."""
    index: Any = {"dims": 384, "embed": HashingEmbeddings(384)}
    with PostgresMemoryStore.from_conn_string(dsn, index=index) as store:
        store.setup()
        yield store


def marker() -> str:
    """A unique word the rule-based extractor stores (``User's name is <marker>.``)."""
    return "Mk" + uuid.uuid4().hex[:14]


def memory_graph(store: Any, saver: Any) -> Any:
    """Every store-using node: summarize → retrieve → inject → respond → extract → reflect."""
    builder = StateGraph(MemoryState, context_schema=Ctx)
    builder.add_sequence(
        [
            SummarizeNode(max_tokens=4000),
            RetrieveNode(),
            InjectNode(),
            RespondNode(TemplatedResponder()),
            ExtractNode(),
            ReflectNode(threshold=10),
        ]
    )
    builder.add_edge(START, "summarize_conversation")
    return builder.compile(store=store, checkpointer=saver)


def plain_graph(saver: Any) -> Any:
    """A graph with none of our nodes (identity reaches checkpoints only via metadata)."""

    def echo(state: MessagesState) -> dict[str, Any]:
        return {"messages": [("assistant", f"noted: {state['messages'][-1].content}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("echo", echo)
    builder.add_edge(START, "echo")
    return builder.compile(checkpointer=saver)


def _call(user: str, way: str, thread: str) -> tuple[dict[str, Any], Any]:
    configurable: dict[str, Any] = {"thread_id": thread}
    context: Any = None
    if way in ("configurable", "plain-graph"):
        configurable["user_id"] = user
    elif way == "configurable-int":
        configurable["user_id"] = int(user)
    elif way == "context-dict":
        context = {"user_id": user}
    elif way == "context-dataclass":
        context = Ctx(user_id=user)
    else:  # pragma: no cover - a typo in a test
        raise AssertionError(way)
    return {"configurable": configurable}, context


def _turns(mark: str) -> list[str]:
    return [f"My name is {mark}.", f"I live in {mark}.", f"I work at {mark}."]


def run_user(graphs: tuple[Any, Any], user: str, way: str, thread: str, mark: str) -> None:
    """Three turns of ``user`` on ``thread`` carrying ``mark`` (sync)."""
    memory, plain = graphs
    config, context = _call(user, way, thread)
    graph = plain if way == "plain-graph" else memory
    for text in _turns(mark):
        graph.invoke({"messages": [("user", text)]}, config, context=context)


async def arun_user(graphs: tuple[Any, Any], user: str, way: str, thread: str, mark: str) -> None:
    """Async :func:`run_user`."""
    memory, plain = graphs
    config, context = _call(user, way, thread)
    graph = plain if way == "plain-graph" else memory
    for text in _turns(mark):
        await graph.ainvoke({"messages": [("user", text)]}, config, context=context)


def pg_rows_with(dsn: str, text: str) -> dict[str, int]:
    """Rows of every table holding ``text``: in the row's text form (JSONB, text,
    ``tsvector`` lexemes: case-insensitive) or as UTF-8 bytes inside a ``bytea`` column
    (checkpoint blobs and writes are msgpack)."""
    hits: dict[str, int] = {}
    needle = text.encode()
    with psycopg.connect(dsn, autocommit=True) as conn:
        for schema, name in user_tables(conn):
            binary = [
                str(column)
                for (column,) in conn.execute(
                    "SELECT column_name FROM information_schema.columns "
                    "WHERE table_schema = %s AND table_name = %s AND data_type = 'bytea'",
                    (schema, name),
                ).fetchall()
            ]
            conditions = [sql.SQL("strpos(lower(t::text), lower(%s)) > 0")]
            conditions += [
                sql.SQL("position(%s::bytea IN {}) > 0").format(sql.Identifier(column))
                for column in binary
            ]
            query = sql.SQL("SELECT count(*) FROM {} t WHERE {}").format(
                sql.Identifier(schema, name), sql.SQL(" OR ").join(conditions)
            )
            row = conn.execute(query, (text, *([needle] * len(binary)))).fetchone()
            if row and row[0]:
                hits[f"{schema}.{name}"] = int(row[0])
    return hits


def redis_keys_with(url: str, prefix: str, text: str) -> list[str]:
    """Keys under ``prefix`` whose name or any value holds ``text`` (as UTF-8 bytes)."""
    needle = text.encode()
    client = redis.Redis.from_url(url)
    found: list[str] = []
    try:
        for key in client.scan_iter(match=f"{prefix}*", count=1000):
            kind = client.type(key).decode()
            parts: list[bytes] = [key]
            if kind == "string":
                parts.append(client.get(key) or b"")
            elif kind == "hash":
                for field, value in client.hgetall(key).items():
                    parts += [field, value]
            elif kind == "zset":
                parts += list(client.zrange(key, 0, -1))
            elif kind == "list":
                parts += list(client.lrange(key, 0, -1))
            elif kind == "set":
                parts += list(client.smembers(key))
            if any(needle in part for part in parts):
                found.append(key.decode(errors="replace"))
    finally:
        client.close()
    return found
