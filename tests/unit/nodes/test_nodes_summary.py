"""Summaries never drop the question: the current turn (last user message and everything
after it) is never folded; when the kept turns alone exceed the budget, older tool results
are shortened first (with a marker, tool-call pairs intact), then older turns are folded.

A hypothesis property test drives random conversations (tool-call groups, huge tool
results, agent loops still in progress) and budgets through the planner and through
``SummarizeNode`` + ``add_messages``, as a graph applies its update."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages

from langgraph_recall._memory.messages import (
    count_tokens,
    group_units,
    plan_summary,
    shrink_tool_result,
)
from langgraph_recall.extraction.rules import message_text
from langgraph_recall.nodes import SUMMARY_BLOCK_ID, MemoryState, SummarizeNode
from tests._hypothesis import thorough
from tests.unit.nodes.nodes_support import pairs_intact


@st.composite
def agent_conversations(draw: st.DrawFn) -> list[BaseMessage]:
    msgs: list[BaseMessage] = []
    turns = draw(st.integers(1, 12))
    for turn in range(turns):
        msgs.append(HumanMessage("ask " * draw(st.integers(1, 80)), id=f"h{turn}"))
        for step in range(draw(st.integers(0, 3))):
            ids = [f"c{turn}_{step}_{k}" for k in range(draw(st.integers(1, 3)))]
            calls = [{"name": "search", "args": {"q": i}, "id": i} for i in ids]
            msgs.append(AIMessage("", tool_calls=calls, id=f"a{turn}_{step}"))
            for call_id in ids:
                size = draw(st.sampled_from([5, 50, 400, 3000]))
                msgs.append(ToolMessage("row " * size, tool_call_id=call_id, id=f"t{call_id}"))
        last = turn == turns - 1
        if not last or draw(st.booleans()):  # the last turn may still be in its tool loop
            msgs.append(AIMessage("answer " * draw(st.integers(1, 60)), id=f"r{turn}"))
    return msgs


def _current_turn(msgs: list[BaseMessage]) -> list[BaseMessage]:
    last = max(i for i, m in enumerate(msgs) if isinstance(m, HumanMessage))
    return msgs[last:]


@settings(max_examples=thorough(200), deadline=None)
@given(
    agent_conversations(),
    st.integers(200, 4000),
    st.integers(0, 4),
    st.sampled_from([20, 100, 500]),
)
def test_summaries_never_drop_the_question(
    msgs: list[BaseMessage], max_tokens: int, keep_turns: int, tool_chars: int
) -> None:
    summary_tokens = max_tokens // 5
    budget = 0.8 * max_tokens - summary_tokens
    plan = plan_summary(
        msgs,
        max_tokens=max_tokens,
        keep_turns=keep_turns,
        summary_tokens=summary_tokens,
        tool_result_chars=tool_chars,
    )
    current = _current_turn(msgs)
    if plan is None:
        assert count_tokens(msgs) + summary_tokens <= 0.8 * max_tokens or not any(
            shrink_tool_result(m, tool_chars) for m in current if isinstance(m, ToolMessage)
        )
        return
    originals = {m.id: m for m in msgs}
    folded = {m.id for m in plan.fold}
    # the question and everything after it stay
    assert not folded & {m.id for m in current}
    assert [m.id for m in plan.keep[-len(current) :]] == [m.id for m in current]
    # whole units only, on both sides; shortened copies replace their originals in place
    assert plan.fold + [originals[m.id] for m in plan.keep] == msgs
    assert pairs_intact(plan.fold) and pairs_intact(plan.keep)
    # whole turns: when anything is folded, the kept part opens with the user
    if plan.fold:
        assert isinstance(plan.keep[0], HumanMessage)
    by_id = {m.id: m for m in plan.keep}
    for short in plan.shrunk:
        original = originals[short.id]
        assert isinstance(original, ToolMessage) and by_id[short.id] is short
        assert short.tool_call_id == original.tool_call_id and short.name == original.name
        assert message_text(short).endswith("characters kept]")
        assert len(message_text(short)) < len(message_text(original))
    # shortening comes before folding; nothing is shortened that did not need it
    if count_tokens([originals[m.id] for m in plan.keep]) <= budget:
        assert plan.shrunk == []
    if count_tokens(plan.keep) > budget:  # over budget only when nothing more may go
        assert plan.keep[0].id == current[0].id
        for message in plan.keep:
            if isinstance(message, ToolMessage):
                assert shrink_tool_result(message, tool_chars) is None
    # applied as a graph applies it: the question is still there, pairs still intact
    update = SummarizeNode(max_tokens=max_tokens, keep_turns=keep_turns)._update(plan, "s")
    state = add_messages(msgs, update["messages"])  # type: ignore[arg-type]
    convo = [m for m in state if m.id != SUMMARY_BLOCK_ID]
    assert [m.id for m in convo] == [m.id for m in plan.keep]
    assert pairs_intact(convo)
    assert convo[-len(current)].content == current[0].content


def test_a_huge_current_turn_keeps_its_question_and_shrinks_tool_results() -> None:
    node = SummarizeNode(max_tokens=600, keep_turns=2, tool_result_chars=100)
    builder = StateGraph(MemoryState)
    builder.add_node(node)
    builder.add_edge(START, node.label)
    graph = builder.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "agent"}}
    history: list[BaseMessage] = []
    for turn in range(3):
        history += [
            HumanMessage(f"old question {turn}", id=f"h{turn}"),
            AIMessage("ok", id=f"r{turn}"),
        ]
    question = HumanMessage("Compare the three reports and tell me which is newest?", id="q")
    calls = [{"name": "fetch", "args": {"n": n}, "id": f"c{n}"} for n in range(3)]
    loop = [question, AIMessage("", tool_calls=calls, id="call")]
    loop += [ToolMessage(f"report {n} " * 800, tool_call_id=f"c{n}", id=f"t{n}") for n in range(3)]
    out = graph.invoke({"messages": history + loop}, config)
    kept = [m for m in out["messages"] if m.id != SUMMARY_BLOCK_ID]
    # turns before the last two are folded; the kept turns fit once tool results shrink
    assert [m.id for m in kept] == ["h2", "r2", "q", "call", "t0", "t1", "t2"]
    assert kept[2].content == question.content  # the question, verbatim
    for message in kept[4:]:
        assert message_text(message).endswith("of 7200 characters kept]")
    assert "old question 0" in out["summary"]
    again = graph.invoke({"messages": []}, config)  # idempotent: nothing shrinks twice
    assert [m.content for m in again["messages"]] == [m.content for m in out["messages"]]


def test_shortening_alone_does_not_touch_the_summary() -> None:
    node = SummarizeNode(max_tokens=300, keep_turns=1, tool_result_chars=50)
    msgs: list[BaseMessage] = [
        HumanMessage("why?", id="h"),
        AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": "c"}], id="a"),
        ToolMessage("x " * 2000, tool_call_id="c", id="t"),
    ]
    out = node.invoke({"messages": msgs})
    assert list(out) == ["messages"] and [m.id for m in out["messages"]] == ["t"]
    assert group_units(msgs)[1][1].id == "t"
