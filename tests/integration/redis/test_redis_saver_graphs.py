"""Real LangGraph graphs on :class:`RedisSaver` / :class:`AsyncRedisSaver` (real Redis)."""

from __future__ import annotations

import asyncio
import itertools
import operator
import threading
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from redis_saver_helpers import contents
from typing_extensions import TypedDict

from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from tests.graph_helpers import chat_graph, count_seen

pytestmark = pytest.mark.redis


def test_conversation_persists_across_saver_instances(
    saver: RedisSaver, redis_url: str, redis_prefix: str
) -> None:
    config = {"configurable": {"thread_id": "chat-1"}}
    chat_graph(saver, reply=count_seen).invoke(
        {"messages": [HumanMessage(content="hello")]}, config
    )

    # a second process/worker: a new saver on the same prefix sees the conversation
    with RedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as other:
        graph = chat_graph(other, reply=count_seen)
        state = graph.invoke({"messages": [HumanMessage(content="again")]}, config)
        assert contents(state) == ["hello", "a saw 1", "b saw 2", "again", "a saw 4", "b saw 5"]
        snapshot = graph.get_state(config)
        assert snapshot.next == ()
        assert snapshot.metadata["step"] == 6
        history = list(graph.get_state_history(config))
    assert [h.metadata["step"] for h in history] == [6, 5, 4, 3, 2, 1, 0, -1]
    assert [h.metadata["source"] for h in history][-1] == "input"
    ids = [h.config["configurable"]["checkpoint_id"] for h in history]
    assert ids == sorted(ids, reverse=True)
    # parent links chain the history
    for newer, older in itertools.pairwise(history):
        assert (
            newer.parent_config["configurable"]["checkpoint_id"]
            == (older.config["configurable"]["checkpoint_id"])
        )
    # the other thread is untouched
    assert (
        chat_graph(saver, reply=count_seen)
        .get_state({"configurable": {"thread_id": "chat-2"}})
        .values
        == {}
    )


def test_interrupt_and_resume(saver: RedisSaver) -> None:
    class State(TypedDict):
        request: str
        approved: bool
        log: Annotated[list[str], operator.add]

    def ask(state: State) -> dict[str, Any]:
        answer = interrupt({"question": f"approve {state['request']}?"})
        return {"approved": answer == "yes", "log": [f"asked:{answer}"]}

    def act(state: State) -> dict[str, Any]:
        return {"log": ["done" if state["approved"] else "skipped"]}

    builder = StateGraph(State)
    builder.add_node("ask", ask)
    builder.add_node("act", act)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "act")
    builder.add_edge("act", END)
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "approval"}}

    first = graph.invoke({"request": "refund", "log": []}, config)
    assert first["__interrupt__"][0].value == {"question": "approve refund?"}
    pending = graph.get_state(config)
    assert pending.next == ("ask",)
    assert pending.tasks[0].interrupts[0].value == {"question": "approve refund?"}

    # a fresh saver object (another worker) resumes from Redis
    resumed = chat_free = RedisSaver(saver.client, prefix=saver.prefix)
    graph2 = builder.compile(checkpointer=resumed)
    final = graph2.invoke(Command(resume="yes"), config)
    assert final["log"] == ["asked:yes", "done"]
    assert graph2.get_state(config).next == ()
    assert chat_free is resumed


def test_update_state_and_fork_from_history(saver: RedisSaver) -> None:
    graph = chat_graph(saver, reply=count_seen)
    config = {"configurable": {"thread_id": "fork"}}
    graph.invoke({"messages": [HumanMessage(content="one")]}, config)
    graph.invoke({"messages": [HumanMessage(content="two")]}, config)

    updated = graph.update_state(config, {"messages": [AIMessage(content="edited")]})
    assert contents(graph.get_state(config).values)[-1] == "edited"
    assert graph.get_state(config).metadata["source"] == "update"
    assert (
        updated["configurable"]["checkpoint_id"]
        == (graph.get_state(config).config["configurable"]["checkpoint_id"])
    )

    # fork from the end of the first turn: replaying it starts a new branch
    after_first = next(
        h
        for h in graph.get_state_history(config)
        if contents(h.values) == ["one", "a saw 1", "b saw 2"]
    )
    branch = graph.invoke({"messages": [HumanMessage(content="alt")]}, after_first.config)
    assert contents(branch) == ["one", "a saw 1", "b saw 2", "alt", "a saw 4", "b saw 5"]
    latest = graph.get_state(config)
    assert latest.parent_config is not None
    # the original branch is still in the history
    all_values = [contents(h.values) for h in graph.get_state_history(config)]
    assert any(v[-1] == "edited" for v in all_values)


def test_subgraph_namespaces_and_list_filters(saver: RedisSaver) -> None:
    class Inner(TypedDict):
        items: Annotated[list[str], operator.add]

    inner = StateGraph(Inner)
    inner.add_node("leaf", lambda s: {"items": ["leaf"]})
    inner.add_edge(START, "leaf")
    inner.add_edge("leaf", END)

    outer = StateGraph(Inner)
    outer.add_node("sub", inner.compile())
    outer.add_node("after", lambda s: {"items": ["after"]})
    outer.add_edge(START, "sub")
    outer.add_edge("sub", "after")
    outer.add_edge("after", END)
    graph = outer.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "nested"}, "metadata": {"tenant": "acme"}}
    result = graph.invoke({"items": []}, config)
    assert result["items"] == ["leaf", "after"]

    everything = list(saver.list({"configurable": {"thread_id": "nested"}}))
    namespaces = {t.config["configurable"]["checkpoint_ns"] for t in everything}
    assert "" in namespaces and len(namespaces) >= 2
    root_only = list(saver.list({"configurable": {"thread_id": "nested", "checkpoint_ns": ""}}))
    assert {t.config["configurable"]["checkpoint_ns"] for t in root_only} == {""}
    assert len(root_only) < len(everything)
    # custom metadata from config["metadata"] is stored and filterable, ANDed with others
    acme = list(saver.list({"configurable": {"thread_id": "nested"}}, filter={"tenant": "acme"}))
    assert len(acme) == len(everything)
    inputs = list(saver.list(None, filter={"tenant": "acme", "source": "input", "step": -1}))
    # one input checkpoint per namespace (root and subgraph)
    assert sorted(t.config["configurable"]["checkpoint_ns"] for t in inputs) == sorted(namespaces)
    assert list(saver.list(None, filter={"tenant": "other"})) == []
    limited = list(saver.list(None, limit=2))
    assert [t.checkpoint["id"] for t in limited] == sorted(
        (t.checkpoint["id"] for t in everything), reverse=True
    )[:2]


def test_prune_copy_and_delete_for_runs_on_real_threads(saver: RedisSaver, raw_redis: Any) -> None:
    graph = chat_graph(saver, reply=count_seen)
    for thread in ("keep", "prune-me"):
        for turn, run in enumerate(("run-1", "run-2")):
            config = {
                "configurable": {"thread_id": thread},
                "metadata": {"run_id": f"{thread}-{run}"},
            }
            graph.invoke({"messages": [HumanMessage(content=f"t{turn}")]}, config)

    saver.copy_thread("keep", "keep-copy")
    original = list(saver.list({"configurable": {"thread_id": "keep"}}))
    copy = list(saver.list({"configurable": {"thread_id": "keep-copy"}}))
    assert [t.checkpoint["id"] for t in copy] == [t.checkpoint["id"] for t in original]
    assert [t.checkpoint["channel_values"] for t in copy] == [
        t.checkpoint["channel_values"] for t in original
    ]
    # the copy is a real thread: it continues independently
    state = graph.invoke(
        {"messages": [HumanMessage(content="copy only")]},
        {"configurable": {"thread_id": "keep-copy"}},
    )
    assert contents(state)[-3] == "copy only"
    assert len(list(saver.list({"configurable": {"thread_id": "keep"}}))) == len(original)

    saver.prune(["prune-me"], strategy="keep_latest")
    left = list(saver.list({"configurable": {"thread_id": "prune-me"}}))
    assert len(left) == 1 and left[0].parent_config is None
    assert len(contents(left[0].checkpoint["channel_values"])) == 6
    # the blobs hash only keeps what the surviving checkpoint references
    keys = saver._thread_keys("prune-me")
    assert raw_redis.hlen(keys.blobs) == len(left[0].checkpoint["channel_values"]) == 1
    follow = graph.invoke(
        {"messages": [HumanMessage(content="after prune")]},
        {"configurable": {"thread_id": "prune-me"}},
    )
    assert len(contents(follow)) == 9

    saver.delete_for_runs(["keep-run-1"])
    runs = {t.metadata.get("run_id") for t in saver.list({"configurable": {"thread_id": "keep"}})}
    assert runs == {"keep-run-2"}
    assert saver.get_tuple({"configurable": {"thread_id": "keep"}}) is not None

    saver.prune(["keep", "keep-copy"], strategy="delete")
    assert saver.get_tuple({"configurable": {"thread_id": "keep"}}) is None
    threads = {t.config["configurable"]["thread_id"] for t in saver.list(None)}
    assert threads == {"prune-me"}


async def test_async_saver_runs_graphs(async_saver: AsyncRedisSaver) -> None:
    graph = chat_graph(async_saver, reply=count_seen)
    config = {"configurable": {"thread_id": "async-1"}}
    await graph.ainvoke({"messages": [HumanMessage(content="hi")]}, config)
    state = await graph.ainvoke({"messages": [HumanMessage(content="there")]}, config)
    assert contents(state) == ["hi", "a saw 1", "b saw 2", "there", "a saw 4", "b saw 5"]
    history = [s async for s in graph.aget_state_history(config)]
    assert len(history) == 8
    snapshot = await graph.aget_state(config)
    assert snapshot.metadata["step"] == 6

    # concurrent runs on different threads
    results = await asyncio.gather(
        *(
            graph.ainvoke(
                {"messages": [HumanMessage(content=f"c{i}")]},
                {"configurable": {"thread_id": f"con-{i}"}},
            )
            for i in range(8)
        )
    )
    assert [contents(r)[0] for r in results] == [f"c{i}" for i in range(8)]

    # the sync API works from another thread (like graph.invoke in a worker thread)
    outcome: dict[str, Any] = {}

    def worker() -> None:
        outcome["state"] = graph.invoke({"messages": [HumanMessage(content="sync")]}, config)
        outcome["listed"] = len(list(async_saver.list(config)))

    thread = threading.Thread(target=worker)
    thread.start()
    while thread.is_alive():
        await asyncio.sleep(0.01)
    assert contents(outcome["state"])[-3:] == ["sync", "a saw 7", "b saw 8"]
    assert outcome["listed"] == 12
    # ...but not on the loop's own thread
    with pytest.raises(ValueError, match="async methods"):
        async_saver.get_tuple(config)


async def test_sync_saver_also_serves_ainvoke(saver: RedisSaver) -> None:
    graph = chat_graph(saver, reply=count_seen)
    config = {"configurable": {"thread_id": "mixed"}}
    graph.invoke({"messages": [HumanMessage(content="sync turn")]}, config)
    state = await graph.ainvoke({"messages": [HumanMessage(content="async turn")]}, config)
    assert contents(state) == [
        "sync turn",
        "a saw 1",
        "b saw 2",
        "async turn",
        "a saw 4",
        "b saw 5",
    ]
    assert len([s async for s in graph.aget_state_history(config)]) == 8
