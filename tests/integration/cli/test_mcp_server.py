"""``langgraph-recall mcp`` driven by the MCP SDK's own client over stdio, on real Postgres."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from langgraph_recall.nodes import user_namespace
from langgraph_recall.store.postgres import PostgresMemoryStore

pytestmark = pytest.mark.postgres


def _result(reply: Any) -> Any:
    assert not reply.is_error, reply.content
    return reply.structured_content["result"]


async def test_tools_over_stdio_are_scoped_to_one_user(postgres_dsn: str) -> None:
    with PostgresMemoryStore.from_conn_string(postgres_dsn) as store:
        store.setup()
        store.put(user_namespace("bob"), "b1", {"content": "Bob lives in Oslo."})
    command = [sys.executable, "-m", "langgraph_recall.cli", "mcp", "--user", "ann"]
    params = StdioServerParameters(
        command=command[0], args=[*command[1:], "--postgres", postgres_dsn]
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = sorted(tool.name for tool in (await session.list_tools()).tools)
        assert names == ["forget", "list_memories", "recall", "remember"]

        lyon = _result(
            await session.call_tool(
                "remember", {"content": "Ann lives in Lyon.", "kind": "semantic", "importance": 7}
            )
        )
        tea = _result(
            await session.call_tool("remember", {"content": "Ann likes tea.", "kind": "preference"})
        )
        found = _result(await session.call_tool("recall", {"query": "where does Ann live?"}))
        assert found[0]["key"] == lyon and found[0]["importance"] == 7
        assert "Bob lives in Oslo." not in json.dumps(found)  # another user's memory
        listed = _result(await session.call_tool("list_memories", {}))
        assert {m["key"] for m in listed} == {lyon, tea}

        assert _result(await session.call_tool("forget", {"key": tea})) is True
        assert _result(await session.call_tool("forget", {"key": "b1"})) is False  # Bob's
        listed = _result(await session.call_tool("list_memories", {"limit": 10}))
        assert [m["key"] for m in listed] == [lyon]

        refused = await session.call_tool("remember", {"content": "x", "kind": "gossip"})
        assert refused.is_error and "kind must be one of" in refused.content[0].text
        refused = await session.call_tool("recall", {"query": "tea", "limit": 0})
        assert refused.is_error and "limit must be an int from 1 to 100" in refused.content[0].text

    with PostgresMemoryStore.from_conn_string(postgres_dsn) as store:
        ann = store.search(user_namespace("ann"))
        assert [(item.key, item.value["content"]) for item in ann] == [(lyon, "Ann lives in Lyon.")]
        assert store.get(user_namespace("bob"), "b1") is not None


def test_mcp_needs_a_user() -> None:
    from langgraph_recall.cli import main

    assert main(["mcp", "--help"]) == 0
    assert main(["mcp", "--user", " ", "--postgres", "postgresql://127.0.0.1/x"]) == 2
