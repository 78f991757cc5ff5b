"""A small multi-worker chat service: FastAPI + a LangGraph chat graph + the thread lease.

The graph is a ``MessagesState`` chat with a deterministic, offline responder (no LLM):
each reply says which turn of the conversation it answers, so clients can check that no
turn was lost or reordered. Run it under several workers::

    LANGGRAPH_RECALL_CHECKPOINTER=postgres \\
    LANGGRAPH_RECALL_POSTGRES_URI=postgresql://postgres@127.0.0.1:5432/app \\
    uvicorn graphs.server:app --workers 4

Endpoints:
    * ``POST /threads/{thread_id}/turns`` with ``{"message": "..."}`` runs one turn and
      returns the reply and the whole conversation; **409** when the thread is busy
      (``ThreadBusyError``) or the run lost its lease (``LeaseLostError``).
    * ``GET /threads/{thread_id}``: the conversation (404 if unknown).
    * ``DELETE /threads/{thread_id}``: forget the thread.
    * ``GET /healthz``: checkpointer, where it stores (no password), lease strategy and this
      worker's pid.

Environment:
    * ``LANGGRAPH_RECALL_CHECKPOINTER``: ``postgres``, ``redis`` or ``memory`` (default;
      ``InMemorySaver``, which loses turns as soon as there are several workers).
    * ``LANGGRAPH_RECALL_POSTGRES_URI``: the Postgres of ``postgres`` (the README's name;
      unset: the embedded Postgres, :func:`langgraph_recall.embedded.default_dsn`; the
      retired ``LANGGRAPH_RECALL_POSTGRES_DSN`` is refused so it cannot point elsewhere).
    * ``LANGGRAPH_RECALL_REDIS_URL`` / ``LANGGRAPH_RECALL_REDIS_PREFIX``: the Redis of
      ``redis``.
    * ``LANGGRAPH_RECALL_LEASE``: ``reject`` (default), ``wait`` or ``off``;
      ``LANGGRAPH_RECALL_LEASE_TTL`` and ``LANGGRAPH_RECALL_LEASE_WAIT_TIMEOUT`` in seconds.
    * ``LANGGRAPH_RECALL_REPLY_DELAY``: seconds the responder "thinks" (simulated LLM latency).
    * ``LANGGRAPH_RECALL_SKIP_SETUP=1``: do not run the checkpointer's ``setup()`` at startup.

Example:
    ```python
    import httpx

    reply = httpx.post("http://127.0.0.1:8000/threads/chat-1/turns", json={"message": "hi"})
    print(reply.json()["reply"])  # "[turn 1] you said: hi"
    ```
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, HTTPException
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph
from pydantic import BaseModel

from langgraph_recall.cli._backends import describe_dsn
from langgraph_recall.embedded import ENV_DSN, resolve_postgres_dsn, resolve_redis_url
from langgraph_recall.errors import ConfigurationError, LeaseLostError, ThreadBusyError
from langgraph_recall.lease import InMemoryLeaseBackend, with_thread_lease

__all__ = ["ServerSettings", "app", "build_chat_graph", "reply_to"]

logger = logging.getLogger("langgraph_recall.server")

CHECKPOINTERS = ("memory", "postgres", "redis")
RETIRED_DSN_ENV = "LANGGRAPH_RECALL_POSTGRES_DSN"
LEASE_MODES = ("reject", "wait", "off")


@dataclass(frozen=True)
class ServerSettings:
    """The service's configuration, read from environment variables.

    Example:
        ```python
        settings = ServerSettings.from_env({"LANGGRAPH_RECALL_CHECKPOINTER": "redis"})
        assert settings.checkpointer == "redis" and settings.lease == "reject"
        ```
    """

    checkpointer: str = "memory"
    postgres_dsn: str | None = None
    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_prefix: str = "lgm"
    lease: str = "reject"
    lease_ttl: float = 30.0
    lease_wait_timeout: float = 30.0
    reply_delay: float = 0.0
    run_setup: bool = True

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> ServerSettings:
        """Parse settings from ``environ``; bad values raise ``ConfigurationError``."""
        get = environ.get
        checkpointer = get("LANGGRAPH_RECALL_CHECKPOINTER", "memory").strip().lower()
        if checkpointer not in CHECKPOINTERS:
            raise ConfigurationError(
                f"LANGGRAPH_RECALL_CHECKPOINTER={checkpointer!r}; use one of {CHECKPOINTERS}"
            )
        lease = get("LANGGRAPH_RECALL_LEASE", "reject").strip().lower()
        if lease not in LEASE_MODES:
            raise ConfigurationError(f"LANGGRAPH_RECALL_LEASE={lease!r}; use one of {LEASE_MODES}")
        if get(RETIRED_DSN_ENV):
            raise ConfigurationError(
                f"{RETIRED_DSN_ENV} is no longer read; set {ENV_DSN} (the name the README and "
                "the library use) to the Postgres this service should use"
            )
        defaults = cls()
        return cls(
            checkpointer=checkpointer,
            postgres_dsn=get(ENV_DSN),
            redis_url=resolve_redis_url(None),
            redis_prefix=get("LANGGRAPH_RECALL_REDIS_PREFIX", defaults.redis_prefix),
            lease=lease,
            lease_ttl=_seconds(environ, "LANGGRAPH_RECALL_LEASE_TTL", defaults.lease_ttl),
            lease_wait_timeout=_seconds(
                environ, "LANGGRAPH_RECALL_LEASE_WAIT_TIMEOUT", defaults.lease_wait_timeout
            ),
            reply_delay=_seconds(environ, "LANGGRAPH_RECALL_REPLY_DELAY", defaults.reply_delay),
            run_setup=get("LANGGRAPH_RECALL_SKIP_SETUP", "0").strip().lower()
            not in {"1", "true", "yes"},
        )


def _seconds(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        return float(raw)
    except ValueError:
        raise ConfigurationError(f"{name}={raw!r} is not a number of seconds") from None


def reply_to(messages: list[AnyMessage]) -> AIMessage:
    """The offline responder: numbers the turn and echoes the user's last message.

    Example:
        ```python
        reply = reply_to([HumanMessage("a"), AIMessage("x"), HumanMessage("b")])
        assert reply.content == "[turn 2] you said: b"
        ```
    """
    human = [m for m in messages if isinstance(m, HumanMessage)]
    last = human[-1].content if human else ""
    return AIMessage(f"[turn {len(human)}] you said: {last}")


def build_chat_graph(checkpointer: Any, reply_delay: float = 0.0) -> Any:
    """Compile the chat graph (one ``respond`` node) with ``checkpointer``."""

    async def respond(state: MessagesState) -> dict[str, list[AnyMessage]]:
        if reply_delay > 0:
            await asyncio.sleep(reply_delay)  # stands in for the LLM call
        return {"messages": [reply_to(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("respond", respond)
    builder.add_edge(START, "respond")
    return builder.compile(checkpointer=checkpointer)


@asynccontextmanager
async def _open_checkpointer(settings: ServerSettings) -> AsyncIterator[tuple[Any, str]]:
    """The checkpointer and a description of where it stores (no password)."""
    if settings.checkpointer == "postgres":
        from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver

        dsn = await asyncio.to_thread(resolve_postgres_dsn, settings.postgres_dsn)
        location = describe_dsn(dsn)
        logger.info("checkpointer: AsyncPostgresSaver on %s", location)
        async with AsyncPostgresSaver.from_conn_string(dsn) as saver:
            if settings.run_setup:
                await saver.setup()
            yield saver, location
    elif settings.checkpointer == "redis":
        from langgraph_recall.checkpoint.redis import AsyncRedisSaver

        async with AsyncRedisSaver.from_conn_string(
            settings.redis_url, prefix=settings.redis_prefix
        ) as saver:
            if settings.run_setup:
                await saver.asetup()
            yield saver, "Redis at " + settings.redis_url.rsplit("@", 1)[-1]
    else:
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver(), "this worker's memory"


def _lease_graph(graph: Any, settings: ServerSettings) -> Any:
    if settings.lease == "off":
        return graph
    backend = InMemoryLeaseBackend() if settings.checkpointer == "memory" else None
    return with_thread_lease(
        graph,
        backend,
        strategy="wait" if settings.lease == "wait" else "reject",
        ttl=settings.lease_ttl,
        wait_timeout=settings.lease_wait_timeout,
    )


class TurnRequest(BaseModel):
    """Body of ``POST /threads/{thread_id}/turns``."""

    message: str


def _as_json(messages: list[AnyMessage]) -> list[dict[str, Any]]:
    return [{"role": m.type, "content": m.content} for m in messages]


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Open the checkpointer for this worker process and build the leased graph."""
    settings = ServerSettings.from_env(os.environ)
    async with AsyncExitStack() as stack:
        saver, location = await stack.enter_async_context(_open_checkpointer(settings))
        graph = build_chat_graph(saver, settings.reply_delay)
        app.state.settings = settings
        app.state.location = location
        app.state.graph = _lease_graph(graph, settings)
        yield


app = FastAPI(title="langgraph-recall chat service", lifespan=lifespan)


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


@app.post("/threads/{thread_id}/turns")
async def post_turn(thread_id: str, turn: TurnRequest) -> dict[str, Any]:
    """Run one conversation turn on ``thread_id``."""
    graph = app.state.graph
    try:
        result = await graph.ainvoke({"messages": [HumanMessage(turn.message)]}, _config(thread_id))
    except (ThreadBusyError, LeaseLostError) as exc:
        raise HTTPException(status_code=409, detail=str(exc)) from exc
    messages: list[AnyMessage] = result["messages"]
    return {
        "thread_id": thread_id,
        "reply": messages[-1].content,
        "messages": _as_json(messages),
        "worker": os.getpid(),
    }


@app.get("/threads/{thread_id}")
async def get_thread(thread_id: str) -> dict[str, Any]:
    """The conversation stored for ``thread_id``."""
    snapshot = await app.state.graph.aget_state(_config(thread_id))
    if not snapshot.values:
        raise HTTPException(status_code=404, detail=f"thread {thread_id!r} has no state")
    return {
        "thread_id": thread_id,
        "messages": _as_json(snapshot.values["messages"]),
        "worker": os.getpid(),
    }


@app.delete("/threads/{thread_id}", status_code=204)
async def delete_thread(thread_id: str) -> None:
    """Delete every checkpoint of ``thread_id``."""
    await app.state.graph.checkpointer.adelete_thread(thread_id)


@app.get("/healthz")
async def healthz() -> dict[str, Any]:
    """Liveness plus what this worker serves with."""
    settings: ServerSettings = app.state.settings
    return {
        "checkpointer": settings.checkpointer,
        "location": app.state.location,
        "lease": settings.lease,
        "worker": os.getpid(),
    }
