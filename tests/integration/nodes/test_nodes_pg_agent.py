"""The memory nodes and example graphs on our PostgresMemoryStore (real Postgres) with real
checkpointers: cross-thread recall with as_of, consolidation, PII, summarisation."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from psycopg import sql

from langgraph_recall._memory.messages import count_tokens
from langgraph_recall.checkpoint.postgres import PostgresSaver
from langgraph_recall.graphs import aflush, build_graph
from langgraph_recall.nodes import SUMMARY_BLOCK_ID, MemoryState, SummarizeNode
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from tests.unit.nodes.nodes_support import TURN_1, TURN_MOVE, TURN_SINCE, Scenario, tool_round

pytestmark = pytest.mark.postgres

NS = ("memories", "user_id:zhang")


def contents(items: Any) -> set[str]:
    return {str(i.value["content"]) for i in items}


@pytest.mark.parametrize("mode", ["rules", "llm"])
def test_city_scenario_with_as_of(
    mode: str, memory_store: PostgresMemoryStore, postgres_dsn: str
) -> None:
    with PostgresSaver.from_conn_string(postgres_dsn) as saver:
        saver.setup()
        run = Scenario(memory_store, mode, checkpointer=saver)
        run.turn("t1", TURN_1)
        run.turn("t2", "What's my name?")
        assert "User's name is Zhang San." in run.last_block()

        before_move = datetime.now(timezone.utc)
        time.sleep(0.02)
        run.turn("t3", TURN_MOVE)
        run.turn("t4", "Which city am I in now?")
        block = run.last_block()
        assert "Beijing" in block and "Shanghai" not in block

        now_cities = contents(memory_store.search(NS, query="city lives in", limit=20))
        then_cities = contents(
            memory_store.search(NS, query="city lives in", limit=20, as_of=before_move)
        )
        assert (
            "User lives in Beijing." in now_cities and "User lives in Shanghai." not in now_cities
        )
        assert (
            "User lives in Shanghai." in then_cities and "User lives in Beijing." not in then_cities
        )
        assert "User's name is Zhang San." in now_cities | contents(
            memory_store.search(NS, query="name", limit=20)
        )

        shanghai = next(
            i
            for i in memory_store.search(NS, query="Shanghai", include_invalid=True, limit=20)
            if i.value["content"] == "User lives in Shanghai."
        )
        history = memory_store.history(NS, shanghai.key)
        assert history[0].action == "add" and history[-1].action in {"invalidate", "update"}
        assert {entry.actor for entry in history} == {"extract_memories"}
        assert shanghai.value["invalid_at"]

        run.turn("t5", TURN_SINCE)
        acme = next(
            i for i in memory_store.search(NS, query="Acme") if "Acme" in i.value["content"]
        )
        now = datetime.now(timezone.utc)
        may = datetime(now.year if now.month > 5 else now.year - 1, 5, 1, tzinfo=timezone.utc)
        assert datetime.fromisoformat(acme.value["valid_from"]) == may
        last_summer = datetime(may.year, 6, 1, tzinfo=timezone.utc)
        assert "User works at Acme." in contents(
            memory_store.search(NS, query="works at", as_of=last_summer)
        )

        run.turn("t6", "What's my name?", user="li")
        assert "Zhang" not in run.last_block()
        assert memory_store.search(("memories", "user_id:li"), query="name") == []


def test_consolidation_noop_and_supersede_on_postgres(memory_store: PostgresMemoryStore) -> None:
    graph = build_graph(None, store=memory_store)
    config = {"configurable": {"thread_id": "t", "user_id": "zhang"}}
    graph.invoke({"messages": [("user", "I work at Google. I love Python.")]}, config)
    out = graph.invoke({"messages": [("user", "I love Python.")]}, config)
    assert out["memory_report"]["counts"]["reinforced"] == 1
    (python,) = [
        i for i in memory_store.search(NS, query="Python") if "Python" in i.value["content"]
    ]
    assert python.value["importance"] == 6 and python.value["reinforcements"] == 1

    out = graph.invoke({"messages": [("user", "I joined Microsoft.")]}, config)
    assert out["memory_report"]["counts"] == {
        "added": 1,
        "updated": 0,
        "invalidated": 1,
        "reinforced": 0,
        "skipped": 0,
    }
    current = contents(memory_store.search(NS, query="works at", limit=20))
    assert "User works at Microsoft." in current and "User works at Google." not in current
    assert "User loves Python." in contents(memory_store.search(NS, query="Python"))


def test_fifty_fact_conversation_has_no_collateral_invalidation(
    memory_store: PostgresMemoryStore,
) -> None:
    statements = [f"I love topic{i}." for i in range(20)]
    statements += [f"I speak Language{i}." for i in range(10)]
    statements += ["My name is Ann Lee.", "I live in Oslo.", "I work at Acme.", "I'm vegan."]
    statements += [f"I use Tool{i}." for i in range(10)]
    statements += ["I moved to Bergen.", "I joined Globex.", "I love topic3.", "I hate topic4."]
    statements += ["My favorite color is green.", "I'm allergic to nuts."]
    graph = build_graph(None, store=memory_store)
    config = {"configurable": {"thread_id": "t", "user_id": "ann"}}
    for text in statements:
        graph.invoke({"messages": [("user", text)]}, config)
    ns = ("memories", "user_id:ann")
    everything = memory_store.search(ns, include_invalid=True, limit=100)
    invalid = sorted(str(i.value["content"]) for i in everything if i.value.get("invalid_at"))
    assert invalid == ["User lives in Oslo.", "User loves topic4.", "User works at Acme."]
    assert len(memory_store.search(ns, limit=100)) == 46


def test_pii_never_reaches_the_database(
    memory_store: PostgresMemoryStore, postgres_dsn: str
) -> None:
    secrets = {
        "email": "zhang.san@example.com",
        "phone": "+1 415 555 0100",
        "card": "4111 1111 1111 1111",
        "key": "sk-proj-abcdefghijklmnopqrstuvwxyz0123",
    }
    graph = build_graph(None, store=memory_store, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t", "user_id": "zhang"}}
    graph.invoke(
        {
            "messages": [
                (
                    "user",
                    f"My email is {secrets['email']}. My phone number is {secrets['phone']}. "
                    f"My card number is {secrets['card']}. My API key is {secrets['key']}. "
                    "I live in Lima.",
                )
            ]
        },
        config,
    )
    graph.invoke({"messages": [("user", f"Remember that my email is {secrets['email']}")]}, config)
    assert contents(memory_store.search(NS, limit=20)) == {"User lives in Lima."}
    with psycopg.connect(postgres_dsn) as conn:
        tables = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables WHERE "
            "table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'"
        ).fetchall()
        assert tables
        dump = ""
        for schema, table in tables:
            query = sql.SQL("SELECT t::text FROM {}.{} AS t").format(
                sql.Identifier(schema), sql.Identifier(table)
            )
            dump += "\n".join(row[0] for row in conn.execute(query).fetchall())
    assert "Lima" in dump
    digits = dump.replace(" ", "")
    for value in secrets.values():
        assert value not in dump
        assert value.replace(" ", "") not in digits


def test_summarization_with_postgres_checkpointer(postgres_dsn: str) -> None:
    max_tokens = 1500
    node = SummarizeNode(max_tokens=max_tokens, keep_turns=2)
    builder = StateGraph(MemoryState)
    builder.add_node(node)
    builder.add_edge(START, node.label)
    with PostgresSaver.from_conn_string(postgres_dsn) as saver:
        saver.setup()
        graph = builder.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "long"}}
        sizes = []
        for n in range(24):  # 120 messages with tool calls
            out = graph.invoke({"messages": tool_round(n, words=40)}, config)
            assert count_tokens(out["messages"]) <= max_tokens
            sizes.append(len(graph.get_state(config).values["messages"]))
        stored = graph.get_state(config).values["messages"]
    assert max(sizes) < 30 and sizes[-1] < 20
    assert [m.id for m in stored[-5:]] == ["h23", "ai23", "ta23", "tb23", "a23"]
    assert sum(m.id == SUMMARY_BLOCK_ID for m in stored) == 1
    for i, m in enumerate(stored):
        if isinstance(m, ToolMessage):
            previous = stored[i - 1]
            assert isinstance(previous, ToolMessage) or (
                isinstance(previous, AIMessage) and previous.tool_calls
            )


async def test_async_graph_background_extraction_on_async_store(
    amemory_store: AsyncPostgresMemoryStore,
) -> None:
    graph = build_graph(None, store=amemory_store, extraction="background")
    config = {"configurable": {"thread_id": "t", "user_id": "zhang"}}
    await graph.ainvoke({"messages": [("user", TURN_1)]}, config)
    await graph.ainvoke({"messages": [("user", TURN_MOVE)]}, config)
    await aflush(graph)
    out = await graph.ainvoke({"messages": [("user", "Which city am I in now?")]}, config)
    assert out["messages"][-1].content == "You live in Beijing (from memory)."
    current = contents(await amemory_store.asearch(NS, query="lives in", limit=20))
    assert "User lives in Beijing." in current and "User lives in Shanghai." not in current


def _remembers_then_recalls(*places: str) -> Any:
    """A scripted model that remembers where the user lives, once per turn, then recalls it
    and answers with the id of the memory recalled."""
    from langgraph_recall.offline import ScriptedChatModel, tool_call_message

    responses: list[Any] = []
    for place in places:
        content = f"User lives in {place}."
        responses += [tool_call_message("remember", {"content": content, "slot": "location"}), "ok"]
    responses += [
        tool_call_message("recall", {"query": "lives"}),
        lambda msgs: str(msgs[-1].content).split(": ", 1)[0],
    ]
    return ScriptedChatModel(responses=responses)


def test_memory_tools_agent_on_postgres(memory_store: PostgresMemoryStore) -> None:
    from langgraph_recall.graphs import build_memory_tools_graph as build_tools_graph
    from langgraph_recall.offline import ScriptedChatModel, tool_call_message

    graph = build_tools_graph(_remembers_then_recalls("Oslo", "Bergen"), store=memory_store)
    config = {"configurable": {"thread_id": "t", "user_id": "zhang"}}
    graph.invoke({"messages": [("user", "I live in Oslo")]}, config)
    graph.invoke({"messages": [("user", "I moved to Bergen")]}, config)
    assert contents(memory_store.search(NS, query="lives")) == {"User lives in Bergen."}
    key = graph.invoke({"messages": [("user", "recall")]}, config)["messages"][-1].content
    forget = ScriptedChatModel(responses=[tool_call_message("forget", {"memory_id": key}), "ok"])
    build_tools_graph(forget, store=memory_store).invoke({"messages": [("user", "x")]}, config)
    assert memory_store.search(NS, query="lives") == []
    assert [e.action for e in memory_store.history(NS, key)][-1] == "invalidate"


async def test_memory_tools_agent_on_the_async_store(
    amemory_store: AsyncPostgresMemoryStore,
) -> None:
    """The same tools awaited: ``forget`` closes the memory through ``ainvalidate`` (the store
    declares the capability), leaving it as history, as the sync tools do."""
    from langgraph_recall.graphs import build_memory_tools_graph as build_tools_graph
    from langgraph_recall.offline import ScriptedChatModel, tool_call_message

    graph = build_tools_graph(_remembers_then_recalls("Oslo"), store=amemory_store)
    config = {"configurable": {"thread_id": "t", "user_id": "zhang"}}
    await graph.ainvoke({"messages": [("user", "I live in Oslo")]}, config)
    key = (await graph.ainvoke({"messages": [("user", "recall")]}, config))["messages"][-1].content
    forget = ScriptedChatModel(responses=[tool_call_message("forget", {"memory_id": key}), "ok"])
    await build_tools_graph(forget, store=amemory_store).ainvoke(
        {"messages": [("user", "x")]}, config
    )
    assert await amemory_store.asearch(NS, query="lives") == []
    assert [e.action for e in await amemory_store.ahistory(NS, key)][-1] == "invalidate"
