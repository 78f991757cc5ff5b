"""The middleware without services: properties over random conversations, pure helpers,
errors, and every docstring example of the middleware and graphs modules.

The principle behind the properties: **what the model sees is not what is saved**. The
``<memory>`` block goes into each model request and never into the state; a running
summary replaces folded messages in the state and never separates a tool call from its
results, neither in the state nor in a request; and each request carries exactly one
system message, first (what every provider accepts).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.store.memory import InMemoryStore

from langgraph_recall.errors import ConfigurationError
from langgraph_recall.extraction import RuleBasedExtractor
from langgraph_recall.middleware import MemoryMiddleware, SummaryMiddleware
from langgraph_recall.middleware._core import lift_blocks, summary_rewrite
from langgraph_recall.middleware.react import llm_input
from langgraph_recall.nodes import MEMORY_BLOCK_ID, SUMMARY_BLOCK_ID
from tests._hypothesis import thorough
from tests.unit.middleware.middleware_support import (
    memory_agent,
    mentions_memory_block,
    scripted_model,
    tool_pairs_intact,
)

FACTS = [
    "My name is Zhang San.",
    "I live in Lisbon.",
    "I work at Acme.",
    "I moved to Porto.",
    "I prefer tea over coffee.",
]
turns = st.one_of(
    st.sampled_from(FACTS),
    st.builds(lambda n: "What's the weather in Kyoto? " + "please " * n, st.integers(0, 40)),
    st.builds(lambda n: "Tell me something. " + "more " * n, st.integers(0, 60)),
    st.just("What's my name?"),
)


@settings(
    max_examples=thorough(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    script=st.lists(turns, min_size=1, max_size=9),
    summarise=st.booleans(),
    threads=st.integers(1, 3),
)
def test_what_the_model_sees_is_not_what_is_saved(
    script: list[str], summarise: bool, threads: int
) -> None:
    model = scripted_model()
    saver = InMemorySaver()
    summary = SummaryMiddleware(max_tokens=300, keep_turns=1) if summarise else None
    agent, _ = memory_agent(model, store=InMemoryStore(), checkpointer=saver, summary=summary)
    for index, text in enumerate(script):
        config = {"configurable": {"user_id": "u1", "thread_id": f"t{index % threads}"}}
        calls_before = len(model.calls)
        out = agent.invoke({"messages": [("user", text)]}, config)
        saved = agent.get_state(config).values["messages"]
        for state in (out["messages"], saved):
            assert not mentions_memory_block(state)
            history = [m for m in state if m.id != SUMMARY_BLOCK_ID]
            assert not any(isinstance(m, SystemMessage) for m in history)
            assert tool_pairs_intact(history)
        for request in model.calls[calls_before:]:
            assert isinstance(request[0], SystemMessage)
            assert not any(isinstance(m, SystemMessage) for m in request[1:])
            assert tool_pairs_intact(request[1:])
            assert request[-1].text == text or isinstance(request[-1], ToolMessage)


messages_st = st.lists(
    st.one_of(
        st.builds(lambda t: HumanMessage(t), st.text(min_size=1, max_size=8)),
        st.builds(lambda t: AIMessage(t), st.text(min_size=1, max_size=8)),
        st.builds(lambda t: SystemMessage(t), st.text(min_size=1, max_size=8)),
        st.just(SystemMessage("summary", id=SUMMARY_BLOCK_ID)),
        st.just(SystemMessage("<memory>old</memory>", id=MEMORY_BLOCK_ID)),
    ),
    max_size=10,
)


@given(messages=messages_st, block=st.one_of(st.none(), st.just("<memory>new</memory>")))
def test_hook_input_has_one_leading_system_message_and_keeps_the_order(
    messages: list[BaseMessage], block: str | None
) -> None:
    out = llm_input(messages, block)
    systems = [m for m in out if isinstance(m, SystemMessage)]
    assert len(systems) <= 1 and (not systems or out[0] is systems[0])
    conversation = [m for m in messages if not isinstance(m, SystemMessage)]
    assert [m for m in out if not isinstance(m, SystemMessage)] == conversation
    text = systems[0].text if systems else ""
    assert ("<memory>old</memory>" in text) is False  # a stale block is replaced
    assert ("<memory>new</memory>" in text) == (block is not None)
    if any(m.id == SUMMARY_BLOCK_ID for m in messages):
        assert "summary" in text
        if block:
            assert text.index("summary") < text.index("<memory>new")


@given(n=st.integers(1, 12), data=st.data())
def test_summary_rewrite_keeps_order_and_drops_exactly_the_folded(n: int, data: Any) -> None:
    messages: list[BaseMessage] = [HumanMessage(f"m{i}", id=str(i)) for i in range(n)]
    if data.draw(st.booleans()):
        messages.insert(0, SystemMessage("old summary", id=SUMMARY_BLOCK_ID))
    folded = data.draw(st.sets(st.sampled_from([str(i) for i in range(n)])))
    block = SystemMessage("new summary", id=SUMMARY_BLOCK_ID)
    update = [RemoveMessage(id=i) for i in sorted(folded)] + [block]
    out = summary_rewrite(messages, update)
    assert out[0].id == REMOVE_ALL_MESSAGES and out[1] is block
    assert [m.id for m in out[2:]] == [str(i) for i in range(n) if str(i) not in folded]


def test_lift_blocks_without_blocks_is_the_identity() -> None:
    system = SystemMessage("Be brief.")
    messages = [HumanMessage("hi")]
    assert lift_blocks(system, messages) == (system, messages)


def test_no_store_is_a_configuration_error_naming_create_agent() -> None:
    agent, _ = memory_agent(scripted_model(), store=None, checkpointer=None)
    with pytest.raises(ConfigurationError, match=r"create_agent\(\.\.\., store=\.\.\.\)"):
        agent.invoke({"messages": [("user", "hi")]}, {"configurable": {"user_id": "u1"}})


def test_missing_user_id_is_a_configuration_error() -> None:
    agent, _ = memory_agent(scripted_model(), store=InMemoryStore(), checkpointer=None)
    with pytest.raises(ConfigurationError, match="missing 'user_id'"):
        agent.invoke({"messages": [("user", "hi")]})


def test_extraction_off_stores_nothing_and_no_memories_leaves_the_request_alone() -> None:
    store = InMemoryStore()
    model = scripted_model()
    agent, middleware = memory_agent(model, store=store, checkpointer=None, extraction="off")
    agent.invoke({"messages": [("user", "I live in Lisbon.")]}, context={"user_id": "u1"})
    assert middleware.extract is None and middleware.last_report is None
    assert store.search(("memories", "u1")) == []
    assert model.calls[-1][0].text == "You are a helpful assistant."


def test_bad_extraction_mode_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match="extraction must be"):
        MemoryMiddleware(extraction="later")  # type: ignore[arg-type]


def test_composes_with_langchains_summarization_middleware() -> None:
    """LangChain's SummarizationMiddleware beside ours: its summaries never contain our block
    (the block is not state), and recall keeps working after its folds."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import SummarizationMiddleware

    from tests.unit.middleware.middleware_support import get_weather

    model = scripted_model()
    summariser = scripted_model()
    store = InMemoryStore()
    agent = create_agent(
        model,
        tools=[get_weather],
        middleware=[
            SummarizationMiddleware(summariser, trigger=("messages", 6), keep=("messages", 2)),
            MemoryMiddleware(extractor=RuleBasedExtractor()),
        ],
        store=store,
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"user_id": "u1", "thread_id": "t"}}
    agent.invoke({"messages": [("user", "My name is Zhang San.")]}, config)
    for _ in range(3):
        agent.invoke({"messages": [("user", "What's the weather in Kyoto?")]}, config)
    out = agent.invoke({"messages": [("user", "What's my name?")]}, config)
    assert out["messages"][-1].text == "Your name is Zhang San."
    assert summariser.calls, "LangChain's middleware never summarised"
    assert not any(mentions_memory_block(request) for request in summariser.calls)
    assert not mentions_memory_block(agent.get_state(config).values["messages"])


def test_system_text_is_appended_to_content_blocks_without_touching_them() -> None:
    from langgraph_recall.middleware._core import append_system_text

    cached = {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    merged = append_system_text(SystemMessage(content=[cached]), "<memory>x</memory>")
    assert merged.content == [cached, {"type": "text", "text": "<memory>x</memory>"}]
    assert append_system_text(SystemMessage(""), "x").content == "x"
