"""``MemoryMiddleware()`` given no model extracts with the agent's own model.

Before, it extracted with English regular expressions whatever model the agent ran:
"Ich heiße Jonas und wohne in München." was skipped, silently. Now the model of the first
model call (``ModelRequest.model``) is adopted; the offline ``TemplatedResponder`` gets the
rule-based extractor (its offline counterpart); choosing the rules because nothing was
given is logged once, at WARNING, with how to pass a model."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langgraph_recall.extraction import LLMExtractor, RuleBasedExtractor, choice, states_something
from langgraph_recall.middleware import MemoryMiddleware
from langgraph_recall.nodes import ExtractNode
from langgraph_recall.offline import ScriptedChatModel, TemplatedResponder, tool_call_message
from langgraph_recall.prompts import DEFAULT_EXTRACTION_PROMPT

GERMAN = "Ich heiße Jonas und wohne in München."
READS_GERMAN = {
    GERMAN: [
        {"content": "User's name is Jonas.", "slot": "name", "importance": 8},
        {"content": "User lives in Munich.", "slot": "location", "importance": 7},
    ]
}
"""What the fake model "understands": the memories it returns for a transcript line."""
EXTRACTION_OPENING = DEFAULT_EXTRACTION_PROMPT.split("\n", 1)[0]


def multilingual_model() -> ScriptedChatModel:
    """A fake LLM: answers the agent's turns, and answers the extraction prompt (a system
    message opening with the package's extraction prompt) with the memories it reads in
    the transcript."""

    def reply(messages: list[BaseMessage]) -> Any:
        first = messages[0]
        if isinstance(first, SystemMessage) and first.text.startswith(EXTRACTION_OPENING):
            transcript = messages[-1].text
            found = [m for line, ms in READS_GERMAN.items() if line in transcript for m in ms]
            return tool_call_message("ExtractionOutput", {"memories": found})
        return "Freut mich, Jonas!"

    return ScriptedChatModel(default=reply)


def extraction_calls(model: ScriptedChatModel) -> int:
    return sum(
        isinstance(c[0], SystemMessage) and c[0].text.startswith(EXTRACTION_OPENING)
        for c in model.calls
    )


@pytest.fixture
def fresh_warning(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The warning is once per process: start each test as a fresh process would."""
    monkeypatch.setattr(choice, "_warned", type(choice._warned)())
    yield


def contents(store: InMemoryStore, user: str) -> list[str]:
    return sorted(i.value["content"] for i in store.search(("memories", f"user_id:{user}")))


@pytest.mark.usefixtures("fresh_warning")
def test_a_german_fact_is_extracted_by_the_agents_model(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model, store = multilingual_model(), InMemoryStore()
    memory = MemoryMiddleware()
    agent = create_agent(
        model, tools=[], middleware=[memory], store=store, checkpointer=InMemorySaver()
    )
    with caplog.at_level(logging.WARNING, logger="langgraph_recall"):
        agent.invoke(
            {"messages": [("user", GERMAN)]},
            {"configurable": {"user_id": "jonas", "thread_id": "t1"}},
        )
    assert contents(store, "jonas") == ["User lives in Munich.", "User's name is Jonas."]
    assert memory.last_report is not None and memory.last_report.llm_calls["extract"] == 1
    assert extraction_calls(model) == 1
    assert memory.extract is not None and isinstance(memory.extract.extractor, LLMExtractor)
    assert memory.extract.extractor.model is model
    assert not caplog.records  # a model was found: nothing chosen implicitly


async def test_the_async_agent_adopts_the_model_too() -> None:
    model, store = multilingual_model(), InMemoryStore()
    agent = create_agent(model, tools=[], middleware=[MemoryMiddleware()], store=store)
    await agent.ainvoke({"messages": [("user", GERMAN)]}, {"configurable": {"user_id": "j2"}})
    assert contents(store, "j2") == ["User lives in Munich.", "User's name is Jonas."]


def test_the_rules_alone_miss_it_which_is_why_they_are_not_chosen_silently() -> None:
    store = InMemoryStore()
    memory = MemoryMiddleware(extractor=RuleBasedExtractor())
    agent = create_agent(multilingual_model(), tools=[], middleware=[memory], store=store)
    agent.invoke({"messages": [("user", GERMAN)]}, {"configurable": {"user_id": "j3"}})
    assert contents(store, "j3") == []
    assert memory.last_report is not None and memory.last_report.status == "skipped:prefilter"


def test_a_given_model_wins_over_the_agents() -> None:
    agent_model, extraction_model, store = multilingual_model(), multilingual_model(), None
    store = InMemoryStore()
    agent = create_agent(
        agent_model, tools=[], middleware=[MemoryMiddleware(extraction_model)], store=store
    )
    agent.invoke({"messages": [("user", GERMAN)]}, {"configurable": {"user_id": "j4"}})
    assert (extraction_calls(agent_model), extraction_calls(extraction_model)) == (0, 1)
    assert len(contents(store, "j4")) == 2


@pytest.mark.usefixtures("fresh_warning")
def test_the_offline_responder_gets_the_rule_based_extractor_without_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store, memory = InMemoryStore(), MemoryMiddleware()
    agent = create_agent(TemplatedResponder(), tools=[], middleware=[memory], store=store)
    with caplog.at_level(logging.WARNING, logger="langgraph_recall"):
        agent.invoke(
            {"messages": [("user", "My name is Ann Lee.")]}, {"configurable": {"user_id": "a"}}
        )
    assert memory.extract is not None and isinstance(memory.extract.extractor, RuleBasedExtractor)
    assert contents(store, "a") == ["User's name is Ann Lee."]
    assert not caplog.records


@pytest.mark.usefixtures("fresh_warning")
def test_rules_chosen_because_nothing_was_given_are_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="langgraph_recall"):
        first, second = ExtractNode(), ExtractNode()
    assert isinstance(first.extractor, RuleBasedExtractor)
    assert isinstance(second.extractor, RuleBasedExtractor)
    (record,) = caplog.records
    assert record.levelno == logging.WARNING and record.name == "langgraph_recall.extraction"
    message = record.getMessage()
    assert message.startswith("ExtractNode: no model given")
    assert "MemoryMiddleware(model)" in message and "ExtractNode(model=model)" in message
    assert "extractor=RuleBasedExtractor()" in message
    with caplog.at_level(logging.WARNING, logger="langgraph_recall"):
        ExtractNode(extractor=RuleBasedExtractor())  # chosen explicitly: never logged
        ExtractNode(model=TemplatedResponder())  # the offline pair: never logged
    assert len(caplog.records) == 1


SENTENCE = st.text(
    alphabet=st.characters(categories=["L"], exclude_characters="Iı"), min_size=3, max_size=12
).map(str.lower)
"""Lower-case words in any script (no English pronoun "I", which only the rules care about)."""


@given(st.lists(SENTENCE, min_size=3, max_size=8))
def test_a_statement_in_any_language_passes_the_models_prefilter(words: list[str]) -> None:
    statement = "zu " + " ".join(words) + "."  # opens with no English question word
    assert states_something(statement)
    assert states_something("Hallo! " + statement)
    assert not states_something(statement[:-1] + "?")  # a question costs no model call
