"""Bad input and non-str ids on the Postgres savers (H8-13), and the pool defaults (H8-11/12).

Every method ``str()``-s ids like LangGraph (int thread ids work end to end, as on the
official saver) and rejects what Postgres cannot store with ``ConfigurationError`` before
any statement runs: nothing is written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from pg_saver_helpers import count_rows, turn

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.errors import ConfigurationError, InvalidFilterError
from tests.graph_helpers import chat_graph

pytestmark = pytest.mark.postgres

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


def row_counts(dsn: str) -> dict[str, int]:
    return {table: count_rows(dsn, table) for table in TABLES}


def messages_of(state: Any) -> list[str]:
    return [str(m.content) for m in state.values["messages"]]


def test_int_thread_ids_work_in_every_method(saver: PostgresSaver, postgres_dsn: str) -> None:
    graph = chat_graph(saver)
    graph.invoke(turn("hi"), {"configurable": {"thread_id": 5}})
    state = graph.get_state({"configurable": {"thread_id": 5}})
    assert messages_of(state) == ["hi", "a:hi", "b:hi"]
    assert state.config["configurable"]["thread_id"] == "5"

    latest = saver.get_tuple({"configurable": {"thread_id": 5}})
    assert latest is not None and latest.config["configurable"]["thread_id"] == "5"
    exact = {"thread_id": 5, "checkpoint_ns": "", "checkpoint_id": latest.checkpoint["id"]}
    same = saver.get_tuple({"configurable": exact})
    assert same is not None and same.checkpoint["id"] == latest.checkpoint["id"]
    listed = list(saver.list({"configurable": {"thread_id": 5}}))
    assert len(listed) == 4 and listed[0].checkpoint["id"] == latest.checkpoint["id"]
    assert len(list(saver.list({"configurable": {"thread_id": 5}}, limit=2))) == 2
    assert list(saver.list({"configurable": {"thread_id": 5}}, limit=-1)) == []

    saver.copy_thread(5, 6)
    assert count_rows(postgres_dsn, "checkpoints", "6") == 4
    saver.prune([6], strategy="keep_latest")
    assert count_rows(postgres_dsn, "checkpoints", "6") == 1
    saver.delete_thread(5)
    assert saver.get_tuple({"configurable": {"thread_id": "5"}}) is None
    assert count_rows(postgres_dsn, "checkpoints", "6") == 1


def bad_calls(saver: PostgresSaver) -> dict[str, Callable[[], Any]]:
    graph = chat_graph(saver)
    checkpoint = empty_checkpoint()
    return {
        "invoke NUL": lambda: graph.invoke(turn("x"), {"configurable": {"thread_id": "a\x00b"}}),
        "invoke surrogate": lambda: graph.invoke(
            turn("x"), {"configurable": {"thread_id": "\ud800"}}
        ),
        "get_tuple missing": lambda: saver.get_tuple({"configurable": {}}),
        "get_tuple NUL ns": lambda: saver.get_tuple(
            {"configurable": {"thread_id": "t", "checkpoint_ns": "\x00"}}
        ),
        "put surrogate": lambda: saver.put(
            {"configurable": {"thread_id": "t\udc80", "checkpoint_ns": ""}}, checkpoint, {}, {}
        ),
        "put missing": lambda: saver.put({"configurable": {}}, checkpoint, {}, {}),
        "put_writes NUL": lambda: saver.put_writes(
            {"configurable": {"thread_id": "t\x00", "checkpoint_ns": "", "checkpoint_id": "1"}},
            [("c", 1)],
            "task",
        ),
        "delete_thread NUL": lambda: saver.delete_thread("a\x00"),
        "copy_thread surrogate": lambda: saver.copy_thread("a", "b\ud800"),
        "prune NUL": lambda: saver.prune(["a\x00"]),
        "delete_for_runs NUL": lambda: saver.delete_for_runs(["r\x00"]),
        "list NUL filter key": lambda: list(saver.list(None, filter={"a\x00": 1})),
        "list surrogate filter value": lambda: list(saver.list(None, filter={"a": "\ud800"})),
        "list NUL thread": lambda: list(saver.list({"configurable": {"thread_id": "\x00"}})),
        "list str limit": lambda: list(saver.list(None, limit="3")),  # type: ignore[arg-type]
        "delta history surrogate": lambda: saver.get_delta_channel_history(
            config={"configurable": {"thread_id": "\ud800"}}, channels=["messages"]
        ),
    }


def test_bad_input_raises_configuration_error_and_writes_nothing(
    saver: PostgresSaver, postgres_dsn: str
) -> None:
    chat_graph(saver).invoke(turn("keep"), {"configurable": {"thread_id": "good"}})
    before = row_counts(postgres_dsn)
    for name, call in bad_calls(saver).items():
        with pytest.raises((ConfigurationError, InvalidFilterError)) as info:
            call()
        assert isinstance(info.value, ValueError), name
        message = str(info.value)
        assert any(hint in message for hint in ("NUL", "surrogate", "thread_id", "limit")), name
    assert row_counts(postgres_dsn) == before
    assert saver.get_tuple({"configurable": {"thread_id": "good"}}) is not None


def test_messages_say_what_to_fix(saver: PostgresSaver) -> None:
    with pytest.raises(ConfigurationError, match=r"config\['configurable'\]\['thread_id'\]"):
        saver.get_tuple({"configurable": {}})
    with pytest.raises(ConfigurationError, match="Postgres text cannot hold it"):
        saver.delete_thread("a\x00")
    with pytest.raises(ConfigurationError, match="not valid UTF-8 text"):
        saver.get_tuple({"configurable": {"thread_id": "a\ud800"}})


async def test_async_saver_int_ids_and_bad_input(
    async_saver: AsyncPostgresSaver, postgres_dsn: str
) -> None:
    graph = chat_graph(async_saver)
    await graph.ainvoke(turn("hi"), {"configurable": {"thread_id": 7}})
    state = await graph.aget_state({"configurable": {"thread_id": 7}})
    assert messages_of(state) == ["hi", "a:hi", "b:hi"]
    latest = await async_saver.aget_tuple({"configurable": {"thread_id": 7}})
    assert latest is not None and latest.config["configurable"]["thread_id"] == "7"
    listed = [t async for t in async_saver.alist({"configurable": {"thread_id": 7}}, limit=2)]
    assert len(listed) == 2 and listed[0].checkpoint["id"] == latest.checkpoint["id"]
    assert [t async for t in async_saver.alist(None, limit=-3)] == []

    before = row_counts(postgres_dsn)
    for call in (
        lambda: async_saver.aget_tuple({"configurable": {"thread_id": "a\ud800"}}),
        lambda: async_saver.aget_tuple({"configurable": {}}),
        lambda: async_saver.adelete_thread("a\x00"),
        lambda: async_saver.acopy_thread("a\x00", "b"),
        lambda: async_saver.aprune(["\ud800"]),
        lambda: async_saver.adelete_for_runs(["\x00"]),
        lambda: async_saver.aput(
            {"configurable": {"thread_id": "\x00"}}, empty_checkpoint(), {}, {}
        ),
        lambda: graph.ainvoke(turn("x"), {"configurable": {"thread_id": "a\x00"}}),
    ):
        with pytest.raises(ConfigurationError):
            await call()
    with pytest.raises(InvalidFilterError, match="filter key"):
        [t async for t in async_saver.alist(None, filter={"k\x00": 1})]
    assert row_counts(postgres_dsn) == before

    await async_saver.adelete_thread(7)
    assert await async_saver.aget_tuple({"configurable": {"thread_id": "7"}}) is None


def test_pool_defaults_and_overrides(postgres_dsn: str) -> None:
    with PostgresSaver.from_conn_string(postgres_dsn) as saver:
        pool: Any = saver.conn
        assert pool.timeout == 5.0  # H8-11: fail within 5 s during an outage
        assert pool.reconnect_timeout == 5.0  # H8-12: bounded reconnect backoff
    config: Any = {"timeout": 1.5, "reconnect_timeout": 30.0}
    with PostgresSaver.from_conn_string(postgres_dsn, pool_config=config) as saver:
        pool = saver.conn
        assert (pool.timeout, pool.reconnect_timeout) == (1.5, 30.0)


async def test_async_pool_defaults(postgres_dsn: str) -> None:
    async with AsyncPostgresSaver.from_conn_string(postgres_dsn) as saver:
        pool: Any = saver.conn
        assert (pool.timeout, pool.reconnect_timeout) == (5.0, 5.0)


async def test_sync_saver_async_methods_run_in_a_worker_thread(
    saver: PostgresSaver, postgres_dsn: str
) -> None:
    """Parity with RedisSaver: ``graph.ainvoke`` works on the sync saver too."""
    graph = chat_graph(saver)
    for text in ("one", "two"):
        await graph.ainvoke(turn(text), {"configurable": {"thread_id": 9}})
    state = await graph.aget_state({"configurable": {"thread_id": 9}})
    assert messages_of(state)[-3:] == ["two", "a:two", "b:two"]
    listed = [t async for t in saver.alist({"configurable": {"thread_id": 9}}, limit=3)]
    assert len(listed) == 3
    await saver.acopy_thread(9, 10)
    await saver.aprune(["10"], strategy="keep_last", keep_last=2)
    assert count_rows(postgres_dsn, "checkpoints", "10") == 2
    assert (await saver.asweep()).expired_threads == []
    await saver.adelete_thread(9)
    assert await saver.aget_tuple({"configurable": {"thread_id": 9}}) is None
    with pytest.raises(ConfigurationError, match="NUL"):
        await saver.aget_tuple({"configurable": {"thread_id": "\x00"}})
