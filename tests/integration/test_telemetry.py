"""OpenTelemetry spans of the real Postgres store, the Postgres saver and the memory nodes,
caught with the SDK's in-memory exporter; and nothing at all without a tracer provider."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.graph import END, START, MessagesState, StateGraph
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.errors import InvalidValueError
from langgraph_recall.nodes import RetrieveNode, user_namespace
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from tests.fakes import HashingEmbeddings

pytestmark = pytest.mark.postgres

SECRET = "Zebulon-7781"  # user text, user id and thread id: must appear in no attribute
INDEX: Any = {"dims": 64, "embed": HashingEmbeddings(64)}


class _Gate(SimpleSpanProcessor):
    """Exports only while a test of this module records (the global provider is set once
    per process and stays; other tests must not fill the exporter)."""

    recording = False

    def on_end(self, span: ReadableSpan) -> None:
        if self.recording:
            super().on_end(span)


_EXPORTER = InMemorySpanExporter()
_GATE = _Gate(_EXPORTER)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    if not getattr(provider, "_langgraph_recall_gate", False):
        provider.add_span_processor(_GATE)
        provider._langgraph_recall_gate = True  # type: ignore[attr-defined]
    _EXPORTER.clear()
    _GATE.recording = True
    try:
        yield _EXPORTER
    finally:
        _GATE.recording = False
        _EXPORTER.clear()


def _named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [span for span in exporter.get_finished_spans() if span.name == name]


def _no_user_data(exporter: InMemorySpanExporter) -> None:
    for span in exporter.get_finished_spans():
        for key, value in (span.attributes or {}).items():
            assert SECRET not in str(value), (span.name, key, value)
            assert "user_id:" not in str(value), (span.name, key, value)


def test_store_operations_have_spans(postgres_dsn: str, spans: InMemorySpanExporter) -> None:
    namespace = user_namespace(SECRET)
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=INDEX) as store:
        store.setup()
        store.put(namespace, SECRET, {"content": f"{SECRET} lives in Lyon", "kind": "semantic"})
        store.put(namespace, "k2", {"content": "likes tea"})
        hits = store.search(namespace, query=f"where does {SECRET} live?")
        assert store.get(namespace, "k2") is not None
        store.delete(namespace, "k2")
        with pytest.raises(InvalidValueError):
            store.put(namespace, "bad", {"content": "x", "importance": 99})

    (search,) = _named(spans, "search_memory")
    attributes = dict(search.attributes or {})
    assert attributes["gen_ai.operation.name"] == "search_memory"
    assert attributes["gen_ai.memory.records"] == len(hits) == 2
    assert attributes["langgraph_recall.namespace.depth"] == 2
    assert attributes["langgraph_recall.search.has_query"] is True
    assert attributes["langgraph_recall.store.vector_mode"] in ("exact", "pgvector")
    assert attributes["db.system.name"] == "postgresql"
    updates = _named(spans, "update_memory")
    assert [dict(s.attributes or {}).get("gen_ai.memory.records") for s in updates[:2]] == [1, 1]
    failed = updates[2]
    assert failed.status.status_code is StatusCode.ERROR
    assert dict(failed.attributes or {})["error.type"] == "InvalidValueError"
    assert len(_named(spans, "get_memory")) == 1
    assert len(_named(spans, "delete_memory")) == 1
    _no_user_data(spans)


async def test_async_store_has_the_same_spans(
    postgres_dsn: str, spans: InMemorySpanExporter
) -> None:
    namespace = user_namespace(SECRET)
    async with AsyncPostgresMemoryStore.from_conn_string(postgres_dsn, index=INDEX) as store:
        await store.asetup()
        await store.aput(namespace, "k1", {"content": f"{SECRET} likes tea"})
        assert len(await store.asearch(namespace)) == 1
    (search,) = _named(spans, "search_memory")
    assert dict(search.attributes or {})["gen_ai.memory.records"] == 1
    assert dict(search.attributes or {})["langgraph_recall.search.has_query"] is False
    assert len(_named(spans, "update_memory")) == 1
    _no_user_data(spans)


def _graph(store: Any, checkpointer: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("retrieve", RetrieveNode(store=store))
    builder.add_edge(START, "retrieve")
    builder.add_edge("retrieve", END)
    return builder.compile(checkpointer=checkpointer, store=store)


def test_saver_and_node_spans(postgres_dsn: str, spans: InMemorySpanExporter) -> None:
    config = {"configurable": {"thread_id": SECRET, "user_id": SECRET}}
    with (
        PostgresMemoryStore.from_conn_string(postgres_dsn, index=INDEX) as store,
        PostgresSaver.from_conn_string(postgres_dsn) as saver,
    ):
        store.setup()
        saver.setup()
        store.put(user_namespace(SECRET), "k1", {"content": "lives in Lyon"})
        graph = _graph(store, saver)
        graph.invoke({"messages": [("user", f"I am {SECRET}; where do I live?")]}, config)
        assert graph.get_state(config).values["messages"]
        assert saver.get_tuple({"configurable": {"thread_id": "nobody"}}) is None

    puts = _named(spans, "checkpoint put")
    assert puts and all(dict(s.attributes or {})["db.system.name"] == "postgresql" for s in puts)
    writes = _named(spans, "checkpoint put_writes")
    assert writes and all(
        int(dict(s.attributes or {})["langgraph_recall.checkpoint.writes"]) >= 1 for s in writes
    )
    found = [dict(s.attributes or {}) for s in _named(spans, "checkpoint get_tuple")]
    assert {"langgraph_recall.checkpoint.found": True}.items() <= found[-2].items()
    assert found[-1]["langgraph_recall.checkpoint.found"] is False
    (node,) = _named(spans, "memory_node retrieve_memories")
    assert dict(node.attributes or {})["langgraph_recall.node"] == "retrieve_memories"
    # the node's store calls (its search, with the thread link written alongside) are
    # its children
    (search,) = _named(spans, "batch_memory")
    assert search.parent is not None and search.parent.span_id == node.context.span_id
    assert dict(search.attributes or {})["langgraph_recall.search.has_query"] is True
    _no_user_data(spans)


async def test_async_saver_spans(postgres_dsn: str, spans: InMemorySpanExporter) -> None:
    config = {"configurable": {"thread_id": SECRET, "user_id": SECRET}}
    async with (
        AsyncPostgresMemoryStore.from_conn_string(postgres_dsn, index=INDEX) as store,
        AsyncPostgresSaver.from_conn_string(postgres_dsn) as saver,
    ):
        await store.asetup()
        await saver.setup()
        graph = _graph(store, saver)
        await graph.ainvoke({"messages": [("user", "hello")]}, config)
    assert _named(spans, "checkpoint put") and _named(spans, "checkpoint put_writes")
    assert _named(spans, "memory_node retrieve_memories")
    _no_user_data(spans)


def test_nothing_happens_without_a_provider() -> None:
    """With the API installed but no provider set, no span is built and the store's batch
    never even describes its operations."""
    code = textwrap.dedent(
        """
        import langgraph_recall.telemetry as telemetry
        from langgraph.store.base import SearchOp

        def refuse(ops):
            raise AssertionError("described an operation with nowhere to send it")

        telemetry.store_operation = refuse
        assert telemetry.start_store_span([SearchOp(("m",))]) is None
        assert telemetry.start_span("x", {}) is None
        with telemetry.span("x") as current:
            assert current is None
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


@pytest.mark.redis
def test_redis_saver_spans(redis_url: str, redis_prefix: str, spans: InMemorySpanExporter) -> None:
    from langgraph_recall.checkpoint.redis import RedisSaver

    config = {"configurable": {"thread_id": SECRET, "user_id": SECRET}}
    with RedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as saver:
        builder = StateGraph(MessagesState)
        builder.add_node("echo", lambda state: {"messages": [("ai", "hi")]})
        builder.add_edge(START, "echo")
        builder.add_edge("echo", END)
        graph = builder.compile(checkpointer=saver)
        graph.invoke({"messages": [("user", SECRET)]}, config)
        assert saver.get_tuple(config) is not None
    for name in ("checkpoint put", "checkpoint put_writes", "checkpoint get_tuple"):
        found = _named(spans, name)
        assert found and all(dict(s.attributes or {})["db.system.name"] == "redis" for s in found)
    assert dict(_named(spans, "checkpoint get_tuple")[-1].attributes or {})[
        "langgraph_recall.checkpoint.found"
    ]
    _no_user_data(spans)
