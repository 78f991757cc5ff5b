"""The sync PostgresSaver under real LangGraph graphs: history, interrupts, prune, copy,
delete_for_runs, DeltaChannel safety, interop with the official saver, no instance lock."""

from __future__ import annotations

import operator
import threading
import uuid
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.checkpoint.postgres import PostgresSaver as OfficialPostgresSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from pg_saver_helpers import build_delta_graph, count_rows, thread, turn

from langgraph_recall.checkpoint.postgres import PostgresSaver
from tests.graph_helpers import chat_graph

pytestmark = pytest.mark.postgres


def contents(state: dict[str, Any]) -> list[str]:
    return [str(m.content) for m in state["messages"]]


def test_graph_state_and_history_round_trip(saver: PostgresSaver) -> None:
    graph = chat_graph(saver)
    for tid in ("t1", "t2"):
        for i in range(3):
            graph.invoke(turn(f"{tid}-{i}"), thread(tid))

    state = graph.get_state(thread("t1"))
    assert contents(state.values) == [
        x for i in range(3) for x in (f"t1-{i}", f"a:t1-{i}", f"b:t1-{i}")
    ]
    assert state.next == ()
    history = list(graph.get_state_history(thread("t1")))
    # per invoke: input checkpoint, after-input, after a, after b
    assert len(history) == 12
    ids = [h.config["configurable"]["checkpoint_id"] for h in history]
    assert ids == sorted(ids, reverse=True)
    assert [h.metadata["step"] for h in history[:4] if h.metadata] == [10, 9, 8, 7]
    assert contents(history[0].values) == contents(state.values)
    assert len(contents(history[-1].values)) == 0

    # metadata filter, limit and before through the saver API
    loops = list(saver.list(thread("t2"), filter={"source": "loop"}))
    assert len(loops) == 9 and all(t.metadata["source"] == "loop" for t in loops)
    limited = list(saver.list(thread("t2"), limit=2))
    assert len(limited) == 2
    older = list(saver.list(thread("t2"), before=limited[0].config))
    assert older[0].config == limited[1].config
    assert count_rows(saver.conn.conninfo, "checkpoints", "t2") == 12  # type: ignore[union-attr]


def test_interrupt_and_resume(saver: PostgresSaver) -> None:
    class State(TypedDict):
        answers: Annotated[list[str], operator.add]

    def ask(state: State) -> dict[str, Any]:
        reply = interrupt("approve?")
        return {"answers": [f"approved:{reply}"]}

    builder = StateGraph(State)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    graph = builder.compile(checkpointer=saver)

    result = graph.invoke({"answers": ["start"]}, thread("hitl"))
    assert result["__interrupt__"][0].value == "approve?"
    paused = graph.get_state(thread("hitl"))
    assert paused.next == ("ask",)
    assert paused.tasks[0].interrupts[0].value == "approve?"

    final = graph.invoke(Command(resume="yes"), thread("hitl"))
    assert final == {"answers": ["start", "approved:yes"]}
    assert graph.get_state(thread("hitl")).next == ()


def test_official_saver_reads_our_threads(saver: PostgresSaver) -> None:
    graph = chat_graph(saver)
    graph.invoke(turn("hello"), thread("shared"))
    official = OfficialPostgresSaver(saver.conn)
    theirs = chat_graph(official).get_state(thread("shared"))
    assert contents(theirs.values) == ["hello", "a:hello", "b:hello"]
    chat_graph(official).invoke(turn("again"), thread("shared"))
    assert contents(graph.get_state(thread("shared")).values)[-1] == "b:again"


class _SummaryState(TypedDict):
    summary: str
    turns: Annotated[list[str], operator.add]


def _summary_graph(checkpointer: Any) -> Any:
    """A graph whose ``summary`` channel is written once and left unchanged afterwards."""

    def write(state: _SummaryState) -> dict[str, Any]:
        return {"turns": ["kept"]}

    builder = StateGraph(_SummaryState)
    builder.add_node("write", write)
    builder.add_edge(START, "write")
    builder.add_edge("write", END)
    return builder.compile(checkpointer=checkpointer)


def test_threads_the_official_saver_wrote_continue_under_our_value_rule(
    saver: PostgresSaver,
) -> None:
    """The official saver keeps every primitive inline; ours keeps a long or NUL text in a
    blob. A thread it wrote, whose long text channel is unchanged in our next put, must
    continue whole (the write guard must not ask for a blob that never existed)."""
    official = OfficialPostgresSaver(saver.conn)
    plain = "long summary " * 200
    first = _summary_graph(official).invoke({"summary": plain, "turns": []}, thread("old"))
    assert first["summary"] == plain
    ours = _summary_graph(saver)
    second = ours.invoke({"turns": ["again"]}, thread("old"))
    assert second["summary"] == plain and second["turns"][-1] == "kept"
    assert ours.get_state(thread("old")).values["summary"] == plain
    third = ours.invoke({"turns": ["once more"]}, thread("old"))
    assert third["summary"] == plain
    assert third["turns"] == ["kept", "again", "kept", "once more", "kept"]


def test_copy_thread_then_threads_diverge(saver: PostgresSaver) -> None:
    graph = chat_graph(saver)
    graph.invoke(turn("one"), thread("src"))
    graph.invoke(turn("two"), thread("src"))
    saver.copy_thread("src", "dst")

    src_history = list(graph.get_state_history(thread("src")))
    dst_history = list(graph.get_state_history(thread("dst")))
    assert [contents(h.values) for h in dst_history] == [contents(h.values) for h in src_history]
    assert count_rows(saver.conn.conninfo, "checkpoint_blobs", "dst") == count_rows(  # type: ignore[union-attr]
        saver.conn.conninfo,  # type: ignore[union-attr]
        "checkpoint_blobs",
        "src",
    )

    graph.invoke(turn("only-dst"), thread("dst"))
    assert contents(graph.get_state(thread("dst")).values)[-1] == "b:only-dst"
    assert contents(graph.get_state(thread("src")).values)[-1] == "b:two"


def test_delete_for_runs_removes_one_run(saver: PostgresSaver) -> None:
    graph = chat_graph(saver)
    run_keep, run_drop = str(uuid.uuid4()), str(uuid.uuid4())
    # LangGraph copies configurable scalars (like a server's run_id) into checkpoint metadata
    graph.invoke(turn("keep"), thread("runs", run_id=run_keep))
    graph.invoke(turn("drop"), thread("runs", run_id=run_drop))
    before = list(saver.list(thread("runs")))
    assert {t.metadata.get("run_id") for t in before} == {run_keep, run_drop}

    saver.delete_for_runs([run_drop])
    after = list(saver.list(thread("runs")))
    assert {t.metadata.get("run_id") for t in after} == {run_keep}
    assert len(after) == 4
    assert contents(graph.get_state(thread("runs")).values) == ["keep", "a:keep", "b:keep"]


def test_prune_keep_latest_collects_unreferenced_blobs(saver: PostgresSaver) -> None:
    graph = chat_graph(saver)
    dsn = saver.conn.conninfo  # type: ignore[union-attr]
    for i in range(4):
        graph.invoke(turn(f"p{i}"), thread("prune"))
        graph.invoke(turn(f"o{i}"), thread("other"))
    state_before = contents(graph.get_state(thread("prune")).values)
    blobs_before = count_rows(dsn, "checkpoint_blobs", "prune")

    saver.prune(["prune"], strategy="keep_latest")

    assert count_rows(dsn, "checkpoints", "prune") == 1
    # the kept checkpoint references one version of each stored channel
    assert count_rows(dsn, "checkpoint_blobs", "prune") < blobs_before
    assert contents(graph.get_state(thread("prune")).values) == state_before
    assert count_rows(dsn, "checkpoints", "other") == 16
    graph.invoke(turn("after"), thread("prune"))
    assert contents(graph.get_state(thread("prune")).values)[-3:] == [
        "after",
        "a:after",
        "b:after",
    ]

    saver.prune(["prune"], strategy="keep_last", keep_last=3)
    assert count_rows(dsn, "checkpoints", "prune") == 3
    saver.prune(["prune"], strategy="delete")
    assert count_rows(dsn, "checkpoints", "prune") == 0
    assert count_rows(dsn, "checkpoint_blobs", "prune") == 0


def test_prune_is_delta_channel_safe(saver: PostgresSaver) -> None:
    graph = build_delta_graph(saver)
    dsn = saver.conn.conninfo  # type: ignore[union-attr]
    for i in range(5):
        graph.invoke({"items": [f"in{i}"]}, thread("delta"))
    expected = graph.get_state(thread("delta")).values["items"]
    assert len(expected) == 10
    total = count_rows(dsn, "checkpoints", "delta")

    # the official saver refuses to prune a DeltaChannel thread
    with pytest.raises(NotImplementedError):
        OfficialPostgresSaver(saver.conn).prune(["delta"], strategy="keep_latest")

    saver.prune(["delta"], strategy="keep_latest")
    kept = count_rows(dsn, "checkpoints", "delta")
    assert 1 < kept < total  # the chain back to the latest snapshot survives
    assert graph.get_state(thread("delta")).values["items"] == expected
    history = saver.get_delta_channel_history(config=thread("delta"), channels=["items"])
    assert "seed" in history["items"]

    graph.invoke({"items": ["more"]}, thread("delta"))
    assert graph.get_state(thread("delta")).values["items"] == [*expected, "more", "n11"]


def test_pooled_calls_are_not_serialised(saver: PostgresSaver) -> None:
    graph = chat_graph(saver)
    graph.invoke(turn("x"), thread("busy"))
    held = threading.Event()
    release = threading.Event()

    def hold_a_cursor() -> None:
        with saver._connector.cursor() as cur:
            cur.execute("SELECT 1")
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold_a_cursor)
    holder.start()
    try:
        assert held.wait(10)
        done = threading.Event()
        result: list[Any] = []

        def read() -> None:
            result.append(saver.get_tuple(thread("busy")))
            done.set()

        threading.Thread(target=read).start()
        # finishes while the other cursor is still open: no instance-wide lock
        assert done.wait(10)
        assert result[0] is not None
    finally:
        release.set()
        holder.join()


def test_prune_drops_finished_subgraph_calls(saver: PostgresSaver) -> None:
    class Inner(TypedDict):
        log: Annotated[list[str], operator.add]

    def inner_step(state: Inner) -> dict[str, Any]:
        return {"log": [f"inner{len(state['log'])}"]}

    inner = StateGraph(Inner)
    inner.add_node("step", inner_step)
    inner.add_edge(START, "step")
    inner.add_edge("step", END)

    def interrupting_step(state: Inner) -> dict[str, Any]:
        return {"log": [f"answer:{interrupt('?')}"]}

    outer = StateGraph(Inner)
    outer.add_node("sub", inner.compile())
    outer.add_node("ask", interrupting_step)
    outer.add_edge(START, "sub")
    outer.add_edge("sub", "ask")
    outer.add_edge("ask", END)
    graph = outer.compile(checkpointer=saver)
    dsn = saver.conn.conninfo  # type: ignore[union-attr]

    for i in range(3):
        graph.invoke({"log": [f"in{i}"]}, thread("subs"))
        graph.invoke(Command(resume=str(i)), thread("subs"))

    def namespaces(tid: str) -> set[str]:
        return {t.config["configurable"]["checkpoint_ns"] for t in saver.list(thread(tid))}

    assert len([ns for ns in namespaces("subs") if ns.startswith("sub:")]) == 3
    expected = graph.get_state(thread("subs")).values
    saver.copy_thread("subs", "unpruned")

    saver.prune(["subs"], strategy="keep_latest")

    assert namespaces("subs") == {""}
    assert count_rows(dsn, "checkpoints", "subs") == 1
    assert graph.get_state(thread("subs")).values == expected
    # the pruned thread behaves exactly like its unpruned copy from here on
    for tid in ("subs", "unpruned"):
        graph.invoke({"log": ["again"]}, thread(tid))
        graph.invoke(Command(resume="x"), thread(tid))
    assert graph.get_state(thread("subs")).values == graph.get_state(thread("unpruned")).values
