"""Bounded nodes: memory stays flat in long runs and user text reaches the store and the
extractor cut to a bound.

* ``ExtractNode(background=True)`` holds only unfinished jobs (at most ``max_pending``;
  a turn beyond that waits: back-pressure) and the last ``keep_reports`` reports; a soak of
  10,000 turns keeps the process memory flat, while ``flush()`` still waits for everything
  pending and re-raises failures — sync and async.
* A ~1.2 MB user message goes through ``RetrieveNode`` (query cut to ``max_query_chars``),
  the memory tools' ``recall`` and ``ExtractNode`` (each message cut to
  ``max_message_chars``) on our Postgres store, both vector paths, without a raw error;
  ``remember`` refuses model text longer than a memory may be, and writes nothing.
"""

from __future__ import annotations

import asyncio
import gc
import random
import string
import sys
import threading
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.memory import InMemoryStore

from langgraph_recall._memory.messages import DEFAULT_MAX_QUERY_CHARS, build_query
from langgraph_recall.extraction import LLMExtractor
from langgraph_recall.nodes import ExtractNode, RetrieveNode, create_memory_tools
from langgraph_recall.offline import ScriptedChatModel, tool_call_message
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests._hypothesis import thorough
from tests.reliability._figures import Figures
from tests.reliability.conftest import index_config

CONFIG: Any = {"configurable": {"user_id": "soak", "thread_id": "soak-thread"}}
_WORDS = random.Random(9)
HUGE = "I live in Oslo. " + " ".join(  # ~1.2 MB of distinct words: a 1.6 MB tsvector
    "".join(_WORDS.choices(string.ascii_lowercase, k=8)) for _ in range(133_000)
)


def _heap_blocks() -> int:
    gc.collect()
    return sys.getallocatedblocks()


def test_background_extraction_memory_stays_flat_over_10000_turns(figures: Figures) -> None:
    node = ExtractNode(store=InMemoryStore(), background=True, max_pending=64, keep_reports=50)
    texts = ["My name is Ann.", "ok thanks", "I live in Oslo.", "what time is it?"]
    levels: list[int] = []
    most_pending = 0
    try:
        for _round in range(5):
            for turn in range(2_000):
                node.invoke({"messages": [("user", texts[turn % len(texts)])]}, CONFIG)
                most_pending = max(most_pending, node.pending)
            reports = node.flush()
            assert len(reports) == 50  # the last keep_reports, not 2,000
            assert node.pending == 0
            levels.append(_heap_blocks())
    finally:
        node.close()
    growth = levels[-1] - levels[1]
    assert most_pending <= 64
    # a job held per turn would be ~9,000 jobs (tens of thousands of blocks) more
    assert growth < 3_000, f"heap grew by {growth} blocks over 6,000 turns: {levels}"
    assert len(node.reports) == 50
    figures.put("extract_background_turns", 10_000)
    figures.put("extract_background_jobs_held_max", most_pending)
    figures.put("extract_background_heap_growth_blocks", growth)


def test_background_failures_still_surface_after_their_jobs_are_dropped() -> None:
    model = ScriptedChatModel(responses=[])  # every extraction call fails
    node = ExtractNode(extractor=LLMExtractor(model), store=InMemoryStore(), background=True)
    for _ in range(200):
        node.invoke({"messages": [("user", "I live in Oslo.")]}, CONFIG)
    with pytest.raises(RuntimeError, match="ScriptedChatModel: call #1 ") as raised:
        node.flush()
    assert not isinstance(raised.value, TimeoutError)
    assert node.pending == 0
    assert node.flush() == []  # reported once, then cleared
    node.close()


def test_a_full_queue_makes_the_next_turn_wait() -> None:
    release = threading.Event()

    def slow(_: list[BaseMessage]) -> AIMessage:
        release.wait(30)
        return tool_call_message("ExtractionOutput", {"memories": []})

    model = ScriptedChatModel(default=slow)
    node = ExtractNode(
        extractor=LLMExtractor(model), store=InMemoryStore(), background=True, max_pending=3
    )
    done: list[int] = []

    def producer() -> None:
        for turn in range(6):
            node.invoke({"messages": [("user", f"I live in City{turn}.")]}, CONFIG)
            done.append(turn)

    worker = threading.Thread(target=producer)
    worker.start()
    deadline = time.monotonic() + 10
    while len(done) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    assert len(done) == 3 and node.pending == 3  # the 4th turn waits for a free slot
    release.set()
    worker.join(30)
    assert done == list(range(6))
    assert [r.status for r in node.flush()] == ["no-candidates"] * 6
    node.close()


async def test_async_background_extraction_stays_bounded(figures: Figures) -> None:
    node = ExtractNode(store=InMemoryStore(), background=True, max_pending=32, keep_reports=20)
    most_pending = 0
    texts = ["My name is Ann.", "ok thanks", "I live in Oslo."]
    for turn in range(5_000):
        await node.ainvoke({"messages": [("user", texts[turn % len(texts)])]}, CONFIG)
        most_pending = max(most_pending, node.pending)
        if turn % 500 == 0:
            await asyncio.sleep(0)
    reports = await node.aflush()
    assert len(reports) == 20 and node.pending == 0 and most_pending <= 32
    assert {r.status for r in reports} <= {"written", "skipped:prefilter"}
    figures.put("extract_async_jobs_held_max", most_pending)


@settings(max_examples=thorough(200), deadline=None)
@given(
    st.lists(
        st.tuples(st.booleans(), st.integers(0, 50_000)),
        min_size=1,
        max_size=8,
    ),
    st.integers(0, 3),
    st.integers(16, 5000),
)
def test_property_queries_are_bounded(
    shape: list[tuple[bool, int]], context_messages: int, max_chars: int
) -> None:
    messages: list[BaseMessage] = [
        HumanMessage(("word " * size)[:size] or "x") if human else AIMessage("a " * size)
        for human, size in shape
    ]
    query = build_query(messages, context_messages=context_messages, max_chars=max_chars)
    assert len(query) <= max_chars
    latest = next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)
    if latest is not None and str(latest.content).strip():
        first = query.split("\n")[0]  # the latest message's beginning comes first
        assert first and str(latest.content).strip().startswith(first)


@pytest.mark.postgres
def test_long_user_text_is_cut_to_a_bounded_query_on_every_path(
    any_dsn: str, figures: Figures
) -> None:
    with PostgresMemoryStore.from_conn_string(any_dsn, index=index_config()) as store:
        store.setup()
        extract = ExtractNode(store=store)
        report = extract.invoke({"messages": [("user", HUGE)]}, CONFIG)["memory_report"]
        assert report["status"] == "written"
        found = RetrieveNode(store=store).invoke({"messages": [("user", HUGE)]}, CONFIG)
        assert any("Oslo" in m["content"] for m in found["memories"])
        builder = StateGraph(MessagesState)
        builder.add_node("tools", ToolNode(create_memory_tools()))
        builder.add_edge(START, "tools")
        tools_graph = builder.compile(store=store)
        call = tool_call_message("recall", {"query": HUGE})
        out = tools_graph.invoke({"messages": [call]}, CONFIG)
        assert "Oslo" in str(out["messages"][-1].content)
        before = len(store.search(("memories", "soak"), limit=100, include_invalid=True))
        for args in ({"content": HUGE}, {"content": "User likes tea.", "slot": HUGE}):
            out = tools_graph.invoke({"messages": [tool_call_message("remember", args)]}, CONFIG)
            assert str(out["messages"][-1].content).startswith("Not stored:")
        assert len(store.search(("memories", "soak"), limit=100, include_invalid=True)) == before
    assert len(build_query([HumanMessage(HUGE)])) <= DEFAULT_MAX_QUERY_CHARS
    figures.add("long_query_paths", 5)
