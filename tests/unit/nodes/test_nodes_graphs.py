"""The nodes in real LangGraph graphs on LangGraph's InMemoryStore / InMemorySaver (no
services): cross-thread recall, supersession, isolation, cost accounting, background
extraction, block replacement, summarisation, reflection and the memory-tools agent."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.store.memory import InMemoryStore

from langgraph_recall._memory.messages import count_tokens
from langgraph_recall.errors import ConfigurationError
from langgraph_recall.extraction import PIIFilter, RuleBasedExtractor
from langgraph_recall.graphs import aflush, build_graph
from langgraph_recall.graphs import build_memory_tools_graph as build_tools_graph
from langgraph_recall.nodes import (
    MEMORY_BLOCK_ID,
    SUMMARY_BLOCK_ID,
    ExtractNode,
    MemoryState,
    RetrieveNode,
    SummarizeNode,
)
from langgraph_recall.offline import ScriptedChatModel, tool_call_message
from tests.fakes import HashingEmbeddings
from tests.unit.nodes.nodes_support import (
    TURN_1,
    TURN_MOVE,
    TURN_SINCE,
    Scenario,
    TableModel,
    fact,
    memory_block,
    tool_round,
)


def new_store() -> InMemoryStore:
    return InMemoryStore(index={"dims": 64, "embed": HashingEmbeddings(64)})


def current(store: InMemoryStore, user: str = "zhang") -> dict[str, dict[str, Any]]:
    items = store.search(("memories", f"user_id:{user}"), limit=100)
    return {i.value["content"]: i.value for i in items if "invalid_at" not in i.value}


@pytest.mark.parametrize("mode", ["rules", "llm"])
def test_city_scenario_on_in_memory_store(mode: str) -> None:
    store = new_store()
    run = Scenario(store, mode, checkpointer=InMemorySaver())
    first = run.turn("t1", TURN_1)
    assert first["memory_report"]["counts"]["added"] == 3

    run.turn("t2", "What's my name?")
    assert "Zhang San" in run.last_block()
    assert "[semantic] User's name is Zhang San." in run.last_block()

    before_move = datetime.now(timezone.utc)
    time.sleep(0.01)
    moved = run.turn("t3", TURN_MOVE)
    assert moved["memory_report"]["counts"]["invalidated"] == 1

    run.turn("t4", "Which city am I in now?")
    block = run.last_block()
    assert "Beijing" in block and "Shanghai" not in block

    all_items = {i.value["content"]: i.value for i in store.search(("memories", "user_id:zhang"))}
    shanghai = all_items["User lives in Shanghai."]
    assert datetime.fromisoformat(shanghai["invalid_at"]) > before_move
    assert shanghai["invalid_at"] == all_items["User lives in Beijing."]["valid_from"]
    assert "User's name is Zhang San." in current(store)  # no collateral invalidation

    run.turn("t5", TURN_SINCE)
    acme = current(store)["User works at Acme."]
    now = datetime.now(timezone.utc)
    may = datetime(now.year if now.month > 5 else now.year - 1, 5, 1, tzinfo=timezone.utc)
    assert datetime.fromisoformat(acme["valid_from"]) == may

    run.turn("t6", "What's my name?", user="li")
    assert "Zhang" not in run.last_block()
    assert store.search(("memories", "user_id:li")) == []


def test_llm_mode_costs_are_counted_and_batched() -> None:
    table = {
        TURN_1: [
            fact("User's name is Zhang San.", "name"),
            fact("User lives in Shanghai.", "location"),
            fact("User loves Python.", "preference:python"),
        ],
        "My name is Zhang San, I moved to Beijing and I love Python.": [
            fact("User's name is Zhang San.", "name"),
            fact("User lives in Beijing.", "location"),
            fact("User loves Python.", "preference:python"),
        ],
    }
    tm = TableModel(table)
    store = new_store()
    graph = build_graph(tm.model, store=store, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t", "user_id": "u"}}

    out = graph.invoke({"messages": [("user", TURN_1)]}, config)
    report = out["memory_report"]
    assert report["llm_calls"] == {"extract": 1, "consolidate": 0}  # nothing to consolidate with
    assert report["total_llm_calls"] == 1

    out = graph.invoke({"messages": [("user", "Hi! What's my name?")]}, config)
    assert out["memory_report"]["status"] == "skipped:prefilter"
    assert out["memory_report"]["total_llm_calls"] == 0
    assert len(tm.calls_of("extraction")) == 1

    text = "My name is Zhang San, I moved to Beijing and I love Python."
    out = graph.invoke({"messages": [("user", text)]}, config)
    report = out["memory_report"]
    assert report["llm_calls"] == {"extract": 1, "consolidate": 1}
    (consolidation,) = tm.calls_of("consolidation")
    prompt = str(consolidation[0].content)
    assert all(f"C{i}:" in prompt for i in range(3))  # one call for all candidates
    assert report["counts"] == {
        "added": 1,
        "updated": 0,
        "invalidated": 1,
        "reinforced": 2,
        "skipped": 0,
    }
    snapshot = graph.memory_stats.snapshot()
    assert snapshot["llm_calls"] == {"respond": 3, "extract": 2, "consolidate": 1}
    assert snapshot["events"]["turns_without_extraction_call"] == 1


def test_memory_block_is_replaced_not_piled_up() -> None:
    store = new_store()
    graph = build_graph(None, store=store, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t", "user_id": "u"}}
    for text in ["My name is Ann.", "I live in Oslo.", "What's my name?", "Where am I?"]:
        out = graph.invoke({"messages": [("user", text)]}, config)
    blocks = [m for m in out["messages"] if m.id == MEMORY_BLOCK_ID]
    assert len(blocks) == 1 and "Oslo" in str(blocks[0].content)
    assert out["messages"][-1].content == "You live in Oslo (from memory)."


def test_identity_and_store_errors_are_clear() -> None:
    graph = build_graph(None, store=new_store())
    with pytest.raises(ConfigurationError, match="user_id"):
        graph.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "t"}})
    with pytest.raises(ConfigurationError, match="no store"):
        RetrieveNode().invoke({"messages": [("user", "hi")]}, {"configurable": {"user_id": "u"}})
    with pytest.raises(ConfigurationError, match="messages_key"):
        RetrieveNode(store=new_store()).invoke({"msgs": []}, {"configurable": {"user_id": "u"}})


def test_nodes_in_a_custom_graph_with_custom_keys() -> None:
    class State(MemoryState, total=False):
        chat: Any

    store = new_store()
    builder = StateGraph(MemoryState)
    builder.add_node(ExtractNode(store=store, namespace=("mem", "{org}", "{user_id}")))
    builder.add_edge(START, "extract_memories")
    graph = builder.compile()
    graph.invoke(
        {"messages": [HumanMessage("I live in Lima.")]},
        {"configurable": {"user_id": "u", "org": "acme"}},
    )
    assert [i.value["content"] for i in store.search(("mem", "org:acme", "user_id:u"))] == [
        "User lives in Lima."
    ]


def test_pii_never_reaches_the_store() -> None:
    store = new_store()
    graph = build_graph(None, store=store)
    config = {"configurable": {"thread_id": "t", "user_id": "u"}}
    out = graph.invoke(
        {
            "messages": [
                (
                    "user",
                    "My email is ann@example.com. My phone number is +1 415 555 0100. "
                    "My card number is 4111 1111 1111 1111. My API key is "
                    "sk-abcdefghijklmnopqrstuvwx. I live in Lima.",
                )
            ]
        },
        config,
    )
    assert out["memory_report"]["pii_dropped"] == 4
    assert [i.value["content"] for i in store.search(("memories", "user_id:u"))] == [
        "User lives in Lima."
    ]

    redacting = build_graph(None, store=store, pii=PIIFilter(mode="redact"))
    redacting.invoke({"messages": [("user", "My email is bob@example.org.")]}, config)
    contents = {i.value["content"] for i in store.search(("memories", "user_id:u"))}
    assert "User's email is [EMAIL]." in contents


def test_background_extraction_sync_flush() -> None:
    store = new_store()
    graph = build_graph(None, store=store, extraction="background")
    config = {"configurable": {"thread_id": "t", "user_id": "u"}}
    out = graph.invoke({"messages": [("user", "I live in Oslo.")]}, config)
    assert out["memory_report"]["status"] == "pending"
    graph.invoke({"messages": [("user", "I moved to Bergen.")]}, config)
    reports = graph.flush()
    assert [r.status for r in reports] == ["written", "written"]
    assert list(current(store, "u")) == ["User lives in Bergen."]
    graph.extract_node.close()


async def test_background_extraction_async_flush_and_async_nodes() -> None:
    store = new_store()
    graph = build_graph(None, store=store, extraction="background", checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t", "user_id": "u"}}
    await graph.ainvoke({"messages": [("user", "My name is Ann. I live in Oslo.")]}, config)
    await graph.ainvoke({"messages": [("user", "I moved to Bergen.")]}, config)
    await aflush(graph)
    assert sorted(current(store, "u")) == ["User lives in Bergen.", "User's name is Ann."]
    out = await graph.ainvoke({"messages": [("user", "Which city am I in?")]}, config)
    assert out["messages"][-1].content == "You live in Bergen (from memory)."


def test_summarization_keeps_budget_tool_pairs_and_shrinks_checkpoints() -> None:
    max_tokens = 1500
    summarize = SummarizeNode(max_tokens=max_tokens, keep_turns=2)
    builder = StateGraph(MemoryState)
    builder.add_node(summarize)
    builder.add_edge(START, summarize.label)
    saver = InMemorySaver()
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "long"}}
    sent = 0
    for n in range(24):  # 24 rounds x 5 messages = 120 messages
        out = graph.invoke({"messages": tool_round(n, words=40)}, config)
        sent += 5
        msgs = out["messages"]
        assert count_tokens(msgs) <= max_tokens
        convo = [m for m in msgs if m.id != SUMMARY_BLOCK_ID]
        for i, m in enumerate(convo):  # no ToolMessage without its AIMessage right before
            if isinstance(m, ToolMessage):
                prev = next(p for p in reversed(convo[:i]) if not isinstance(p, ToolMessage))
                assert isinstance(prev, AIMessage) and m.tool_call_id in {
                    c["id"] for c in prev.tool_calls
                }
    assert sent == 120
    state = graph.get_state(config).values
    kept_humans = [m.id for m in state["messages"] if isinstance(m, HumanMessage)]
    assert kept_humans[-2:] == ["h22", "h23"]
    assert [m.id for m in state["messages"][-5:]] == ["h23", "ai23", "ta23", "tb23", "a23"]
    assert len(state["messages"]) < 20
    assert sum(m.id == SUMMARY_BLOCK_ID for m in state["messages"]) == 1
    assert "turn" in state["summary"]
    assert isinstance(state["messages"][0], SystemMessage) or any(
        m.id == SUMMARY_BLOCK_ID for m in state["messages"]
    )


def test_summarization_with_model_and_overflow_extraction() -> None:
    store = new_store()
    summary_model = ScriptedChatModel(default="The user talked about many things.")
    extract = ExtractNode(store=store)
    node = SummarizeNode(model=summary_model, max_tokens=300, keep_turns=1, extract=extract)
    builder = StateGraph(MemoryState)
    builder.add_node(node)
    builder.add_edge(START, node.label)
    graph = builder.compile(checkpointer=InMemorySaver(), store=store)
    config = {"configurable": {"thread_id": "t", "user_id": "u"}}
    msgs = [HumanMessage("I live in Quito. " + "blah " * 100), AIMessage("ok " * 100)]
    msgs += [HumanMessage("next " * 50), AIMessage("fine")]
    out = graph.invoke({"messages": msgs}, config)
    assert out["summary"] == "The user talked about many things."
    assert "user: I live in Quito." in str(summary_model.calls[0][0].content)
    assert list(current(store, "u")) == ["User lives in Quito."]
    assert node.stats.snapshot()["llm_calls"] == {"summarize": 1}


def test_reflection_writes_derived_memories() -> None:
    store = new_store()
    graph = build_graph(None, store=store, reflect_threshold=15)
    config = {"configurable": {"thread_id": "t", "user_id": "u"}}
    out = graph.invoke({"messages": [("user", TURN_1)]}, config)
    report = out["reflection_report"]
    assert report["accumulated_importance"] == 20 and report["written"] >= 1
    items = {i.key: i.value for i in store.search(("memories", "user_id:u"), limit=50)}
    reflections = [v for v in items.values() if v["kind"] == "reflection"]
    assert reflections and all(set(r["derived_from"]) <= set(items) for r in reflections)
    again = graph.invoke({"messages": [("user", "What's my name?")]}, config)
    assert again["reflection_report"]["written"] == 0  # cursor moved, nothing new


def test_memory_tools_agent_remember_recall_forget() -> None:
    store = new_store()
    replies: list[Any] = [
        tool_call_message("remember", {"content": "User lives in Oslo.", "slot": "location"}),
        "Noted.",
        tool_call_message("remember", {"content": "User lives in Bergen.", "slot": "location"}),
        "Updated.",
        tool_call_message("remember", {"content": "User's email is a@b.com"}),
        "Sorry.",
        tool_call_message("recall", {"query": "Where does the user live?"}),
        lambda msgs: "You live in Bergen." if "Bergen" in str(msgs[-1].content) else "?",
    ]
    model = ScriptedChatModel(responses=replies)
    graph = build_tools_graph(model, store=store, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t", "user_id": "u"}}
    graph.invoke({"messages": [("user", "I live in Oslo")]}, config)
    graph.invoke({"messages": [("user", "I moved to Bergen")]}, config)
    out = graph.invoke({"messages": [("user", "my email is a@b.com")]}, config)
    assert "personal data (email)" in str(out["messages"][-2].content)
    out = graph.invoke({"messages": [("user", "where do I live?")]}, config)
    assert out["messages"][-1].content == "You live in Bergen."
    assert list(current(store, "u")) == ["User lives in Bergen."]
    assert model.bound_tools[0] == ["remember", "recall", "forget"]
    assert "Bergen" in memory_block(model.calls[-1])

    key = next(
        i.key for i in store.search(("memories", "user_id:u")) if "invalid_at" not in i.value
    )
    forget_model = ScriptedChatModel(
        responses=[tool_call_message("forget", {"memory_id": key}), "Done."]
    )
    graph2 = build_tools_graph(forget_model, store=store)
    out = graph2.invoke({"messages": [("user", "forget where I live")]}, config)
    assert out["messages"][-2].content == f"Forgot {key}."
    assert current(store, "u") == {}


def test_existing_messages_state_graph_gets_memory_with_two_nodes() -> None:
    """A user's MessagesState graph: add RetrieveNode(inject=True) before and ExtractNode
    after their own model node; nothing else changes."""
    from langgraph.graph import MessagesState

    from langgraph_recall.nodes import model_input

    seen: list[list[Any]] = []

    def my_model_node(state: MessagesState) -> dict[str, Any]:
        messages = model_input(state["messages"])
        seen.append(messages)
        return {"messages": [AIMessage("ok")]}

    store = new_store()
    builder = StateGraph(MessagesState)
    builder.add_sequence([RetrieveNode(inject=True), my_model_node, ExtractNode()])
    builder.add_edge(START, "retrieve_memories")
    graph = builder.compile(store=store, checkpointer=InMemorySaver())
    graph.invoke(
        {"messages": [("user", "I live in Lima.")]},
        {"configurable": {"thread_id": "a", "user_id": "u"}},
    )
    out = graph.invoke(
        {"messages": [("user", "Where do I live?")]},
        {"configurable": {"thread_id": "b", "user_id": "u"}},
    )
    assert memory_block(seen[-1]).count("User lives in Lima.") == 1
    assert seen[-1][0].id == MEMORY_BLOCK_ID
    assert sum(m.id == MEMORY_BLOCK_ID for m in out["messages"]) == 1


def test_langgraph_json_lists_importable_graphs() -> None:
    import importlib.util
    import json
    from pathlib import Path

    from langgraph.graph.state import CompiledStateGraph

    root = Path(__file__).resolve().parents[3] / "graphs"
    spec = json.loads((root / "langgraph.json").read_text())
    assert set(spec["graphs"]) >= {"memory_agent", "memory_tools_agent"}
    for target in spec["graphs"].values():
        path, attr = target.split(":")
        module_spec = importlib.util.spec_from_file_location("graph_under_test", root / path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        assert isinstance(getattr(module, attr), CompiledStateGraph)


def test_extraction_failure_raises_or_is_reported() -> None:
    broken = ScriptedChatModel(responses=[])  # any model call fails: script is empty
    state = {"messages": [HumanMessage("I live in Lima.")]}
    config = {"configurable": {"user_id": "u", "thread_id": "t"}}
    with pytest.raises(RuntimeError, match="call #1"):
        ExtractNode(model=broken, store=new_store()).invoke(state, config)
    node = ExtractNode(model=broken, store=new_store(), on_error="report")
    out = node.invoke(state, config)
    assert out["memory_report"]["status"].startswith("error: RuntimeError")
    assert node.stats.snapshot()["events"]["errors"] == 1
    with pytest.raises(ConfigurationError, match="on_error"):
        ExtractNode(on_error="ignore")  # type: ignore[arg-type]


def test_model_supplied_text_is_pii_filtered_too() -> None:
    store = new_store()
    ns = ("memories", "user_id:u")
    store.put(ns, "job", {"content": "User is an engineer.", "slot": "role", "kind": "semantic"})
    model = ScriptedChatModel(
        responses=[
            tool_call_message(
                "ExtractionOutput",
                {"memories": [fact("User is a backend engineer.", "role")]},
            ),
            tool_call_message(
                "ConsolidationOutput",
                {
                    "decisions": [
                        {
                            "candidate": 0,
                            "action": "UPDATE",
                            "target": 0,
                            "content": "User is a backend engineer, mail eng@corp.example.com",
                        }
                    ]
                },
            ),
        ]
    )
    node = ExtractNode(model=model, store=store)
    out = node.invoke(
        {"messages": [HumanMessage("I'm a backend engineer.")]},
        {"configurable": {"user_id": "u", "thread_id": "t"}},
    )
    assert out["memory_report"]["counts"]["updated"] == 1
    assert out["memory_report"]["pii_dropped"] == 1
    item = store.get(ns, "job")
    assert item is not None and item.value["content"] == "User is a backend engineer."


def test_reflection_with_a_model_links_sources_and_filters_pii() -> None:
    from langgraph_recall.nodes import ReflectNode

    store = new_store()
    ns = ("memories", "user_id:u")
    for key, text in [("a", "User loves hiking."), ("b", "User lives in Bergen.")]:
        store.put(ns, key, {"content": text, "importance": 8, "kind": "semantic"})
    model = ScriptedChatModel(
        responses=[
            tool_call_message(
                "ReflectionOutput",
                {
                    "insights": [
                        {"content": "User enjoys the outdoors near Bergen.", "sources": [0, 1]},
                        {"content": "User can be reached at u@example.com.", "sources": [0]},
                    ]
                },
            )
        ]
    )
    node = ReflectNode(model=model, store=store, threshold=10)
    out = node.invoke({"messages": []}, {"configurable": {"user_id": "u"}})
    assert out["reflection_report"]["written"] == 1
    (reflection,) = [i.value for i in store.search(ns) if i.value["kind"] == "reflection"]
    assert reflection["content"] == "User enjoys the outdoors near Bergen."
    assert sorted(reflection["derived_from"]) == ["a", "b"]
    assert node.stats.snapshot()["llm_calls"] == {"reflect": 1}
    assert "0: User loves hiking." in str(model.calls[0][0].content)


def test_summarizer_clips_long_model_summaries_and_validates_options() -> None:
    long_summary = "The user said " + "many things " * 400
    node = SummarizeNode(
        model=ScriptedChatModel(default=long_summary), max_tokens=400, max_summary_tokens=60
    )
    msgs = [HumanMessage("x " * 1000, id="h1"), AIMessage("y", id="a1")]
    msgs += [HumanMessage("z", id="h2"), AIMessage("w", id="a2")]
    out = node.invoke({"messages": msgs})
    block = next(m for m in out["messages"] if m.id == SUMMARY_BLOCK_ID)
    assert count_tokens([block]) <= 60 and out["summary"].startswith("… ")
    for bad in ({"max_summary_tokens": 5}, {"keep_turns": -1}, {"trigger_fraction": 1.5}):
        with pytest.raises(ConfigurationError):
            SummarizeNode(max_tokens=400, **bad)  # type: ignore[arg-type]


async def test_memory_tools_agent_async() -> None:
    store = new_store()
    model = ScriptedChatModel(
        responses=[
            tool_call_message("remember", {"content": "User lives in Oslo.", "slot": "location"}),
            "Noted.",
            tool_call_message("recall", {"query": "lives"}),
            lambda msgs: str(msgs[-1].content).split(": ", 1)[0],
        ]
    )
    graph = build_tools_graph(model, store=store)
    config = {"configurable": {"thread_id": "t", "user_id": "u"}}
    await graph.ainvoke({"messages": [("user", "I live in Oslo")]}, config)
    out = await graph.ainvoke({"messages": [("user", "what do you know?")]}, config)
    key = out["messages"][-1].content
    item = await store.aget(("memories", "user_id:u"), key)
    assert item is not None and item.value["content"] == "User lives in Oslo."
    forget = ScriptedChatModel(responses=[tool_call_message("forget", {"memory_id": key}), "ok"])
    await build_tools_graph(forget, store=store).ainvoke(
        {"messages": [("user", "forget it")]}, config
    )
    assert current(store, "u") == {}


def test_respond_node_streams_tokens() -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    model = GenericFakeChatModel(messages=iter([AIMessage("hello there friend")]))
    graph = build_graph(model, store=new_store(), extractor=RuleBasedExtractor())
    chunks = [
        chunk.content
        for chunk, meta in graph.stream(
            {"messages": [("user", "hi")]},
            {"configurable": {"user_id": "u", "thread_id": "t"}},
            stream_mode="messages",
        )
        if meta["langgraph_node"] == "respond"
    ]
    assert chunks == ["hello", " ", "there", " ", "friend"]
