"""``create_agent`` + our middleware on the real Postgres (store and savers) and Redis.

A scripted tool-calling model (it calls ``get_weather`` and answers only from its input)
drives real LangChain v1 agents, sync and async:

* cross-thread recall: a fact said on one thread is in the model request on another;
* the ``<memory>`` block reaches the model but never the saved state (checked in the
  saver's own rows, not only through ``get_state``);
* extraction is stored (``lgm_memory_items``) through ``ExtractNode``'s pipeline (PII too);
* after sliding summaries, every tool call is still next to its results;
* ``create_react_agent`` with :class:`MemoryPreModelHook`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import psycopg
import pytest
from langchain_core.messages import SystemMessage
from langgraph.prebuilt import create_react_agent

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.checkpoint.redis import RedisSaver
from langgraph_recall.middleware import MemoryPreModelHook, SummaryMiddleware
from langgraph_recall.nodes import SUMMARY_BLOCK_ID
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from tests.fakes import HashingEmbeddings
from tests.unit.middleware.middleware_support import (
    get_weather,
    memory_agent,
    mentions_memory_block,
    scripted_model,
    tool_pairs_intact,
)

pytestmark = pytest.mark.postgres

TURN_1 = "Hi, my name is Zhang San. What's the weather in Lisbon?"
NS = ("memories", "user_id:u1")


def index() -> dict[str, Any]:
    return {"dims": 64, "embed": HashingEmbeddings(64)}


@pytest.fixture
def store(postgres_dsn: str) -> Iterator[PostgresMemoryStore]:
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=index()) as memories:
        memories.setup()
        yield memories


@pytest.fixture
async def astore(postgres_dsn: str) -> AsyncIterator[AsyncPostgresMemoryStore]:
    async with AsyncPostgresMemoryStore.from_conn_string(postgres_dsn, index=index()) as memories:
        await memories.asetup()
        yield memories


@pytest.fixture
def saver(postgres_dsn: str) -> Iterator[PostgresSaver]:
    with PostgresSaver.from_conn_string(postgres_dsn) as checkpointer:
        checkpointer.setup()
        yield checkpointer


def rows_with_block(dsn: str, channel: str | None = None) -> int:
    """Checkpoint rows (blobs, writes, checkpoints) whose bytes contain a memory block; with
    ``channel``, only the blobs and writes of that channel."""
    sources = [("checkpoint_blobs", "blob"), ("checkpoint_writes", "blob")]
    if channel is None:
        sources.append(("checkpoints", "checkpoint::text::bytea"))
    where = "" if channel is None else " AND channel = %s"
    total = 0
    with psycopg.connect(dsn) as conn:
        for table, column in sources:
            query = (
                f"SELECT count(*) FROM {table} WHERE position('<memory>'::bytea IN {column}) > 0"
            )
            row = conn.execute(query + where, () if channel is None else (channel,)).fetchone()
            total += row[0] if row else 0
    return total


def stored_contents(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT value->>'content' FROM lgm_memory_items").fetchall()
    return {str(r[0]) for r in rows}


def check_recall_turns(model: Any, first: dict[str, Any], second: dict[str, Any]) -> None:
    assert [m.type for m in first["messages"]] == ["human", "ai", "tool", "ai"]
    assert first["messages"][-1].text == "It is Sunny in Lisbon, 21°C."
    assert second["messages"][-1].text == "Your name is Zhang San."
    request = model.calls[-1]
    assert isinstance(request[0], SystemMessage)
    assert request[0].text.startswith("You are a helpful assistant.\n\n<memory>")
    assert "User's name is Zhang San." in request[0].text
    assert sum(isinstance(m, SystemMessage) for m in request) == 1
    for state in (first, second):
        assert not mentions_memory_block(state["messages"])
        assert not any(isinstance(m, SystemMessage) for m in state["messages"])


def test_create_agent_recalls_across_threads_sync_postgres(
    store: PostgresMemoryStore, saver: PostgresSaver, postgres_dsn: str
) -> None:
    model = scripted_model()
    agent, memory = memory_agent(model, store=store, checkpointer=saver)
    first = agent.invoke(
        {"messages": [("user", TURN_1)]}, {"configurable": {"user_id": "u1", "thread_id": "a"}}
    )
    assert memory.last_report is not None and memory.last_report.counts["added"] == 1
    second = agent.invoke(
        {"messages": [("user", "What's my name?")]},
        {"configurable": {"user_id": "u1", "thread_id": "b"}},
    )
    check_recall_turns(model, first, second)
    saved = agent.get_state({"configurable": {"thread_id": "b"}}).values["messages"]
    assert not mentions_memory_block(saved)
    # another user sees nothing of u1's
    other = agent.invoke(
        {"messages": [("user", "What's my name?")]},
        {"configurable": {"user_id": "u2", "thread_id": "c"}},
    )
    assert other["messages"][-1].text == "I don't know your name."
    assert rows_with_block(postgres_dsn) == 0
    assert "User's name is Zhang San." in stored_contents(postgres_dsn)


async def test_create_agent_recalls_across_threads_async_postgres_context_identity(
    astore: AsyncPostgresMemoryStore, postgres_dsn: str
) -> None:
    model = scripted_model()
    async with AsyncPostgresSaver.from_conn_string(postgres_dsn) as saver:
        await saver.setup()
        agent, memory = memory_agent(
            model, store=astore, checkpointer=saver, extraction="background"
        )
        first = await agent.ainvoke(
            {"messages": [("user", TURN_1)]},
            {"configurable": {"thread_id": "a"}},
            context={"user_id": "u1"},
        )
        reports = await memory.aflush()
        assert [r.counts.get("added") for r in reports] == [1]
        second = await agent.ainvoke(
            {"messages": [("user", "What's my name?")]},
            {"configurable": {"thread_id": "b"}},
            context={"user_id": "u1"},
        )
        check_recall_turns(model, first, second)
        await memory.aflush()
    assert rows_with_block(postgres_dsn) == 0
    hits = await astore.asearch(NS, query="name")
    assert [h.value["content"] for h in hits] == ["User's name is Zhang San."]


def test_create_agent_on_redis_saver_keeps_block_out_of_redis(
    store: PostgresMemoryStore, redis_url: str, redis_prefix: str
) -> None:
    import redis

    model = scripted_model()
    with RedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as saver:
        saver.setup()
        agent, _ = memory_agent(model, store=store, checkpointer=saver)
        first = agent.invoke(
            {"messages": [("user", TURN_1)]}, {"configurable": {"user_id": "u1", "thread_id": "a"}}
        )
        second = agent.invoke(
            {"messages": [("user", "What's my name?")]},
            {"configurable": {"user_id": "u1", "thread_id": "b"}},
        )
        check_recall_turns(model, first, second)
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(match=f"{redis_prefix}*", count=500))
    assert keys, "the Redis saver stored nothing"
    for key in keys:
        kind = client.type(key)
        values: list[bytes] = []
        if kind == b"string":
            values = [client.get(key) or b""]
        elif kind == b"hash":
            values = list(client.hgetall(key).values())
        elif kind == b"list":
            values = list(client.lrange(key, 0, -1))
        elif kind == b"zset":
            values = list(client.zrange(key, 0, -1))
        assert not any(b"<memory>" in value for value in values), key


def test_extraction_applies_the_nodes_pii_filter(
    store: PostgresMemoryStore, saver: PostgresSaver, postgres_dsn: str
) -> None:
    model = scripted_model()
    agent, memory = memory_agent(model, store=store, checkpointer=saver)
    agent.invoke(
        {"messages": [("user", "My email is zhang.san@example.com. I live in Lisbon.")]},
        {"configurable": {"user_id": "u1", "thread_id": "a"}},
    )
    report = memory.last_report
    assert report is not None and report.pii_dropped >= 1
    contents = stored_contents(postgres_dsn)
    assert "User lives in Lisbon." in contents
    assert not any("example.com" in text for text in contents)


def test_summary_middleware_keeps_tool_pairs_and_bounds_the_checkpoint(
    store: PostgresMemoryStore, saver: PostgresSaver, postgres_dsn: str
) -> None:
    model = scripted_model()
    agent, memory = memory_agent(
        model,
        store=store,
        checkpointer=saver,
        summary=SummaryMiddleware(max_tokens=400, keep_turns=1),
    )
    config = {"configurable": {"user_id": "u1", "thread_id": "long"}}
    sizes = []
    out: dict[str, Any] = {}
    for turn in range(10):
        text = f"Turn {turn}: what's the weather in Kyoto? " + "I plan to walk a lot. " * 8
        out = agent.invoke({"messages": [("user", text)]}, config)
        messages = out["messages"]
        sizes.append(len(messages))
        assert tool_pairs_intact([m for m in messages if m.id != SUMMARY_BLOCK_ID])
        request = model.calls[-1]
        assert tool_pairs_intact(request[1:])
        assert sum(isinstance(m, SystemMessage) for m in request) == 1
    assert out["messages"][0].id == SUMMARY_BLOCK_ID
    assert "<conversation_summary>" in model.calls[-1][0].text  # the summary reaches the model
    assert max(sizes[4:]) <= 9 and sizes[-1] < 4 * 10  # without summaries: 40
    saved = saver.get_tuple({"configurable": {"thread_id": "long"}})
    assert saved is not None
    assert len(saved.checkpoint["channel_values"]["messages"]) == sizes[-1]
    assert rows_with_block(postgres_dsn) == 0
    assert memory.stats.snapshot()["events"]["turns"] == 10


async def test_summary_middleware_async_on_async_saver(
    astore: AsyncPostgresMemoryStore, postgres_dsn: str
) -> None:
    model = scripted_model()
    async with AsyncPostgresSaver.from_conn_string(postgres_dsn) as saver:
        await saver.setup()
        agent, _ = memory_agent(
            model,
            store=astore,
            checkpointer=saver,
            summary=SummaryMiddleware(max_tokens=400, keep_turns=1),
        )
        config = {"configurable": {"user_id": "u1", "thread_id": "long"}}
        for turn in range(8):
            text = f"Turn {turn}: what's the weather in Kyoto? " + "I plan to walk a lot. " * 8
            out = await agent.ainvoke({"messages": [("user", text)]}, config)
            assert tool_pairs_intact([m for m in out["messages"] if m.id != SUMMARY_BLOCK_ID])
        assert out["messages"][0].id == SUMMARY_BLOCK_ID and len(out["messages"]) <= 9


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
def test_react_agent_pre_model_hook_recalls_without_touching_state(
    store: PostgresMemoryStore, saver: PostgresSaver, postgres_dsn: str
) -> None:
    store.put(NS, "name", {"content": "User's name is Zhang San.", "kind": "semantic"})
    model = scripted_model()
    agent = create_react_agent(
        model,
        tools=[get_weather],
        prompt="You are a helpful assistant.",
        pre_model_hook=MemoryPreModelHook(),
        store=store,
        checkpointer=saver,
    )
    config = {"configurable": {"user_id": "u1", "thread_id": "r"}}
    out = agent.invoke({"messages": [("user", "What's the weather in Lisbon?")]}, config)
    assert out["messages"][-1].text == "It is Sunny in Lisbon, 21°C."
    out = agent.invoke({"messages": [("user", "What's my name?")]}, config)
    assert out["messages"][-1].text == "Your name is Zhang San."
    assert tool_pairs_intact(out["messages"]) and not mentions_memory_block(out["messages"])
    request = model.calls[-1]
    assert [type(m).__name__ for m in request[:2]] == ["SystemMessage", "SystemMessage"]
    assert request[0].text == "You are a helpful assistant." and "Zhang San" in request[1].text
    # create_react_agent keeps the hook's llm_input_messages in a channel of its own (the
    # last model input is checkpointed there, by LangGraph's design); the history is clean
    assert rows_with_block(postgres_dsn, channel="messages") == 0
    assert rows_with_block(postgres_dsn, channel="llm_input_messages") > 0
