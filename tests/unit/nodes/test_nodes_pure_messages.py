"""Pure message logic: units, summary planning (with a property test), model input,
memory block rendering and budgets, prompt formatting, offline responder."""

from __future__ import annotations

from datetime import datetime, timezone

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langgraph_recall._memory.messages import (
    DEFAULT_TOOL_RESULT_CHARS,
    SummaryPlan,
    build_query,
    count_tokens,
    group_units,
    memory_line,
    model_input,
    offline_summary,
    plan_summary,
    render_memory_block,
    select_within_budget,
    shrink_tool_result,
    turn_messages,
)
from langgraph_recall.extraction import ExistingMemory, LLMExtractor, MemoryCandidate
from langgraph_recall.nodes import MEMORY_BLOCK_ID, SUMMARY_BLOCK_ID, ReflectNode, SummarizeNode
from langgraph_recall.offline import ScriptedChatModel, TemplatedResponder, memory_lines
from langgraph_recall.prompts import (
    DEFAULT_CONSOLIDATION_PROMPT,
    DEFAULT_EXTRACTION_PROMPT,
    DEFAULT_MEMORY_BLOCK_PROMPT,
    DEFAULT_REFLECTION_PROMPT,
    DEFAULT_SUMMARY_BLOCK_PROMPT,
    DEFAULT_SUMMARY_PROMPT,
    DEFAULT_SYSTEM_PROMPT,
)
from tests._hypothesis import thorough
from tests.unit.nodes.nodes_support import pairs_intact


def call(ids: list[str], text: str = "") -> AIMessage:
    return AIMessage(text, tool_calls=[{"name": "lookup", "args": {"q": i}, "id": i} for i in ids])


def test_group_units_keeps_parallel_tool_calls_together() -> None:
    msgs: list[BaseMessage] = [
        HumanMessage("q"),
        call(["a", "b"]),
        ToolMessage("ra", tool_call_id="a"),
        ToolMessage("rb", tool_call_id="b"),
        AIMessage("done"),
        ToolMessage("orphan", tool_call_id="zzz"),
    ]
    assert [len(u) for u in group_units(msgs)] == [1, 3, 2]  # orphan joins the previous unit
    assert group_units([ToolMessage("x", tool_call_id="q")])[0][0].content == "x"


def test_turn_messages_and_query() -> None:
    msgs: list[BaseMessage] = [
        HumanMessage("I moved to Beijing."),
        AIMessage("ok"),
        SystemMessage("<memory></memory>", id=MEMORY_BLOCK_ID),
        HumanMessage("Which city am I in?"),
        AIMessage("Beijing"),
    ]
    assert [m.content for m in turn_messages(msgs)] == ["Which city am I in?", "Beijing"]
    assert build_query(msgs) == "Which city am I in?\nI moved to Beijing."
    assert build_query([AIMessage("x")]) == ""


def test_model_input_puts_system_text_first() -> None:
    msgs: list[BaseMessage] = [
        HumanMessage("hi", id="h"),
        SystemMessage("block", id=MEMORY_BLOCK_ID),
        AIMessage("yo", id="a"),
        SystemMessage("summary", id=SUMMARY_BLOCK_ID),
    ]
    ordered = model_input(msgs, system_prompt="be nice")
    assert [m.content for m in ordered] == ["be nice", "summary", "block", "hi", "yo"]


def test_memory_line_and_budget() -> None:
    line = memory_line(
        {
            "content": "User lives in Shanghai.",
            "kind": "semantic",
            "valid_from": "2025-01-01T00:00:00+00:00",
            "invalid_at": "2026-11-29T10:00:00+00:00",
        }
    )
    expected = "(valid 2025-01-01 until 2026-11-29, no longer true)"
    assert line == f"- [semantic] User lives in Shanghai. {expected}"
    assert memory_line({"content": "x"}) == "- [semantic] x (validity unknown)"
    mems = [{"content": f"fact number {i} " * 5} for i in range(30)]
    kept = select_within_budget(mems, token_budget=100)
    lines = [SystemMessage(memory_line(m)) for m in kept]
    assert 0 < len(kept) < 30 and sum(count_tokens([m]) for m in lines) <= 100
    assert kept == mems[: len(kept)]


def test_plan_summary_cuts_at_turn_boundary() -> None:
    msgs: list[BaseMessage] = []
    for i in range(12):
        msgs += [
            HumanMessage(f"question {i} " * 10, id=f"h{i}"),
            call([f"c{i}"]),
            ToolMessage("result " * 10, tool_call_id=f"c{i}", id=f"t{i}"),
            AIMessage("answer " * 10, id=f"a{i}"),
        ]
    assert plan_summary(msgs, max_tokens=100_000) is None
    plan = plan_summary(msgs, max_tokens=800, keep_turns=2, summary_tokens=100)
    assert isinstance(plan, SummaryPlan)
    assert [m.id for m in plan.keep if isinstance(m, HumanMessage)] == ["h10", "h11"]
    assert plan.fold + plan.keep == msgs


def test_plan_summary_shrinks_kept_turns_to_fit() -> None:
    msgs: list[BaseMessage] = [HumanMessage("short", id="h0"), AIMessage("x " * 2000, id="a0")]
    msgs += [HumanMessage("latest", id="h1"), AIMessage("fine", id="a1")]
    plan = plan_summary(msgs, max_tokens=1000, keep_turns=2)
    assert plan is not None and [m.id for m in plan.keep] == ["h1", "a1"]


# -- property test: random conversations with tool calls ---------------------------------
@st.composite
def conversations(draw: st.DrawFn) -> list[BaseMessage]:
    msgs: list[BaseMessage] = []
    for n in range(1, draw(st.integers(1, 25)) + 1):
        msgs.append(HumanMessage("word " * draw(st.integers(1, 60)), id=f"h{n}"))
        for _ in range(draw(st.integers(0, 3))):
            ids = [f"c{n}_{k}_{len(msgs)}" for k in range(draw(st.integers(1, 3)))]
            msgs.append(
                AIMessage(
                    "",
                    tool_calls=[{"name": "t", "args": {}, "id": i} for i in ids],
                    id=f"a{len(msgs)}",
                )
            )
            for i in ids:
                msgs.append(
                    ToolMessage(
                        "out " * draw(st.integers(1, 80)), tool_call_id=i, id=f"t{len(msgs)}"
                    )
                )
        if draw(st.booleans()):
            msgs.append(AIMessage("reply " * draw(st.integers(1, 50)), id=f"r{len(msgs)}"))
    return msgs


@settings(max_examples=thorough(150), deadline=None)
@given(conversations(), st.integers(300, 3000), st.integers(0, 4))
def test_summary_plan_never_splits_tool_calls(
    msgs: list[BaseMessage], max_tokens: int, keep_turns: int
) -> None:
    summary_tokens = max_tokens // 5
    plan = plan_summary(
        msgs, max_tokens=max_tokens, keep_turns=keep_turns, summary_tokens=summary_tokens
    )
    if plan is None:
        return
    originals = {m.id: m for m in msgs}
    assert plan.fold + [originals[m.id] for m in plan.keep] == msgs
    assert pairs_intact(plan.keep) and pairs_intact(plan.fold)
    assert not isinstance(plan.keep[0], ToolMessage)
    current = turn_messages(msgs) or group_units(msgs)[-1]
    shortest = [
        (shrink_tool_result(m, DEFAULT_TOOL_RESULT_CHARS) or m) if isinstance(m, ToolMessage) else m
        for m in current
    ]
    if count_tokens(shortest) <= 0.8 * max_tokens - summary_tokens:
        assert count_tokens(plan.keep) + summary_tokens <= max_tokens


def test_offline_summary_is_incremental_and_bounded() -> None:
    first = offline_summary(
        "", [HumanMessage("I use Postgres. It is fast."), call(["x"], "ok")], max_words=50
    )
    assert first == "user: I use Postgres.\nassistant: ok [called lookup]"
    second = offline_summary(first, [HumanMessage("word " * 500)], max_words=60)
    assert second.startswith(first) and second.endswith("word …")  # each message clipped
    third = offline_summary(second, [HumanMessage(f"fact {i}.") for i in range(40)], max_words=30)
    # whole lines are dropped, oldest first, under a leading "…" line
    assert third.splitlines() == ["…", *(f"user: fact {i}." for i in range(31, 40))]
    assert len(third.split()) <= 30


def test_offline_summary_keeps_user_facts_over_assistant_chatter() -> None:
    turns = [
        HumanMessage("My name is Ana. Hi!"),
        AIMessage("Nice to meet you, Ana! How can I help you today?"),
        HumanMessage("I work at Google."),
        AIMessage("Great, tell me more about it please."),
    ]
    summary = offline_summary("", turns, max_words=19)
    assert summary.splitlines() == [
        "…",
        "user: My name is Ana.",
        "user: I work at Google.",
        "assistant: Great, tell me more about it please.",
    ]


# -- prompts: each default formats with the variables its node supplies ---------------------
def test_default_prompts_format_with_node_variables() -> None:
    now = datetime(2026, 11, 29, tzinfo=timezone.utc)
    ex = LLMExtractor(ScriptedChatModel())
    system, human = ex.extraction_messages([HumanMessage("I like tea")], now)
    assert "2026-11-29" in str(system.content) and "semantic, episodic" in str(system.content)
    assert human.content == "user: I like tea"
    (consolidation,) = ex.consolidation_messages(
        [MemoryCandidate("User likes tea.", slot="preference:tea")],
        [ExistingMemory("k", {"content": "User likes coffee.", "slot": "preference:coffee"})],
    )
    text = str(consolidation.content)
    assert "C0: [semantic] User likes tea. (subject: user, slot: preference:tea)" in text
    assert "M0: [semantic] User likes coffee." in text
    block = render_memory_block([{"content": "User likes tea."}], DEFAULT_MEMORY_BLOCK_PROMPT)
    assert block.startswith("<memory>") and block.endswith("</memory>")
    node = SummarizeNode(max_tokens=1000)
    plan = SummaryPlan(fold=[HumanMessage("old stuff")], keep=[])
    (request,) = node._summary_request("previous summary", plan)
    assert "previous summary" in str(request.content) and "user: old stuff" in str(request.content)
    assert "{" not in DEFAULT_SUMMARY_BLOCK_PROMPT.format(summary="s")
    (reflection,) = ReflectNode()._request([{"content": "User likes tea."}])
    assert "0: User likes tea." in str(reflection.content)
    for prompt, variables in [
        (DEFAULT_EXTRACTION_PROMPT, {"now": "x", "kinds": "y"}),
        (DEFAULT_CONSOLIDATION_PROMPT, {"now": "x", "candidates": "c", "existing": "e"}),
        (DEFAULT_SUMMARY_PROMPT, {"summary": "s", "messages": "m", "max_words": 5}),
        (DEFAULT_REFLECTION_PROMPT, {"memories": "m", "max_insights": 2}),
    ]:
        assert "{" not in prompt.format(**variables)
    assert DEFAULT_SYSTEM_PROMPT.format() == DEFAULT_SYSTEM_PROMPT


# -- offline models ----------------------------------------------------------------------------
def test_templated_responder_answers_from_memory_block() -> None:
    block = SystemMessage(
        render_memory_block(
            [
                {"content": "User's name is Zhang San.", "kind": "semantic"},
                {"content": "User lives in Beijing.", "kind": "semantic"},
                {"content": "User works at Acme.", "kind": "semantic"},
                {"content": "User loves Python.", "kind": "preference"},
            ],
            DEFAULT_MEMORY_BLOCK_PROMPT,
        )
    )
    responder = TemplatedResponder()
    ask = lambda q: responder.invoke([block, HumanMessage(q)]).content  # noqa: E731
    assert ask("What's my name?") == "Your name is Zhang San (from memory)."
    assert ask("Which city am I in now?") == "You live in Beijing (from memory)."
    assert ask("Where do I work?") == "You work at Acme (from memory)."
    assert ask("What do I like?") == "You love Python (from memory)."
    assert "not an LLM" in ask("What is the capital of Peru?")
    assert "not an LLM" in ask("I like tea.")
    assert "not an LLM" in responder.invoke([HumanMessage("What's my name?")]).content
    assert len(memory_lines([block])) == 4


def test_scripted_model_logs_calls_and_fails_clearly() -> None:
    model = ScriptedChatModel(responses=["one", lambda msgs: f"echo {msgs[-1].content}"])
    assert model.invoke("a").content == "one"
    assert model.invoke("b").content == "echo b"
    assert [c[-1].content for c in model.calls] == ["a", "b"]
    try:
        model.invoke("c")
    except RuntimeError as exc:
        assert "call #3" in str(exc)
    else:
        raise AssertionError("expected an error when the script runs out")
