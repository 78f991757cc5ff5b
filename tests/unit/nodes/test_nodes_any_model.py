"""Extraction with any chat model: native structured output, tool
calling that answers in prose, text-only models (JSON mode, code fences, ``<think>``), and
models whose answers cannot be read (a ConfigurationError after N tries); sync and async,
in real LangGraph graphs."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from pydantic import BaseModel

from graphs.memory_agent import build_graph
from langgraph_recall.errors import ConfigurationError
from langgraph_recall.extraction import LLMExtractor
from langgraph_recall.extraction.llm import ExtractionOutput
from langgraph_recall.extraction.structured import StructuredCaller, parse_json_reply
from langgraph_recall.nodes import ExtractNode, ReflectNode
from langgraph_recall.offline import ScriptedChatModel, tool_call_message
from tests.fakes import HashingEmbeddings, TextOnlyChatModel

NOW = datetime(2026, 11, 29, tzinfo=timezone.utc)
TEA = {"memories": [{"content": "User likes tea.", "slot": "preference:tea", "importance": 6}]}


class City(BaseModel):
    name: str
    population: int = 0


def new_store() -> InMemoryStore:
    return InMemoryStore(index={"dims": 64, "embed": HashingEmbeddings(64)})


# -- reading replies (pure) ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"name": "Oslo"}', {"name": "Oslo"}),
        ('```json\n{"name": "Oslo"}\n```', {"name": "Oslo"}),
        ('```\n{"name": "Oslo"}\n```', {"name": "Oslo"}),
        ('Sure! Here it is: {"name": "Oslo", "population": 709000}. Anything else?',
         {"name": "Oslo", "population": 709000}),
        ('<think>The user wants {"a": 1}…</think>\n{"name": "Oslo"}', {"name": "Oslo"}),
        ('[{"content": "x"}]', [{"content": "x"}]),
        ('{not json} then {"name": "Oslo"}', {"name": "Oslo"}),
    ],
)  # fmt: skip
def test_json_is_read_from_any_text_reply(reply: str, expected: Any) -> None:
    assert parse_json_reply(reply) == expected


@pytest.mark.parametrize("reply", ["", "I cannot help with that.", "```json\n```", "{broken"])
def test_text_without_json_is_refused(reply: str) -> None:
    with pytest.raises(ValueError, match="no JSON object"):
        parse_json_reply(reply)


def test_bare_list_and_wrapped_answers_fit_a_one_list_schema() -> None:
    caller = StructuredCaller(TextOnlyChatModel(reply=lambda _: ""), ExtractionOutput)
    bare = caller.read('[{"content": "User likes tea."}]')
    wrapped = caller.read('{"ExtractionOutput": {"memories": [{"content": "User likes tea."}]}}')
    assert [m.content for m in bare.memories] == [m.content for m in wrapped.memories]


# -- each kind of model --------------------------------------------------------------------
def test_a_tool_calling_model_uses_native_structured_output() -> None:
    model = ScriptedChatModel(responses=[tool_call_message("City", {"name": "Oslo"})])
    caller = StructuredCaller(model, City)
    assert caller.mode == "native"
    assert caller.invoke("Capital of Norway?") == City(name="Oslo")
    assert model.bound_tools == [["City"]]


def test_a_tool_calling_model_that_answers_in_prose_is_still_read() -> None:
    model = ScriptedChatModel(responses=['I think it is {"name": "Oslo"}.'])
    assert StructuredCaller(model, City).invoke("Capital of Norway?").name == "Oslo"
    assert len(model.calls) == 1


def test_a_text_only_model_gets_json_instructions_and_its_json_is_read() -> None:
    model = TextOnlyChatModel(reply=lambda _: '```json\n{"name": "Oslo"}\n```')
    caller = StructuredCaller(model, City)
    assert caller.mode == "json"
    assert caller.invoke([HumanMessage("Capital of Norway?")]).name == "Oslo"
    (request,) = model.calls
    assert len(request) == 1 and "JSON schema" in str(request[0].content)
    assert '"title":"City"' in str(request[0].content)
    assert str(request[0].content).startswith("Capital of Norway?")


def test_generic_fake_chat_model_works_in_json_mode() -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage('{"name": "Oslo"}')]))
    assert StructuredCaller(model, City).invoke("Capital?").name == "Oslo"


def test_an_unreadable_reply_is_retried_with_the_reason() -> None:
    replies = iter(["Oslo, I believe.", '{"name": "Oslo"}'])
    model = TextOnlyChatModel(reply=lambda _: next(replies))
    caller = StructuredCaller(model, City)
    assert caller.invoke("Capital?").name == "Oslo"
    assert caller.calls == 2
    retry = str(model.calls[1][-1].content)
    assert "could not be used (no JSON object in the reply)" in retry


def test_a_model_that_never_answers_usably_fails_with_a_configuration_error() -> None:
    model = TextOnlyChatModel(reply=lambda _: '{"population": "many"}')
    caller = StructuredCaller(model, City, attempts=2)
    with pytest.raises(ConfigurationError) as raised:
        caller.invoke("Capital?")
    message = str(raised.value)
    assert "TextOnlyChatModel gave no usable City in 2 tries (json mode" in message
    assert "name: Field required" in message and "raise attempts=" in message
    assert isinstance(raised.value, ValueError)
    assert len(model.calls) == 2


def test_model_errors_are_not_retried() -> None:
    def broken(_: list[BaseMessage]) -> str:
        raise TimeoutError("upstream timed out")

    model = TextOnlyChatModel(reply=broken)
    with pytest.raises(TimeoutError):
        StructuredCaller(model, City).invoke("Capital?")
    assert len(model.calls) == 1


def test_structured_caller_options_are_checked() -> None:
    model = TextOnlyChatModel(reply=lambda _: "")
    with pytest.raises(ConfigurationError, match="mode 'xml'"):
        StructuredCaller(model, City, mode="xml")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="attempts must be an int >= 1"):
        StructuredCaller(model, City, attempts=0)
    with pytest.raises(ConfigurationError, match="use mode='json'"):
        StructuredCaller(model, City, mode="native")
    assert StructuredCaller(ScriptedChatModel(), City, mode="json").mode == "json"


async def test_async_calls_read_and_retry_the_same_way() -> None:
    replies = iter(["no idea", "```json\n" + json.dumps(TEA) + "\n```"])
    model = TextOnlyChatModel(reply=lambda _: next(replies))
    found = await LLMExtractor(model).aextract([HumanMessage("I like tea.")], now=NOW)
    assert [(c.content, c.slot) for c in found] == [("User likes tea.", "preference:tea")]
    assert len(model.calls) == 2


# -- in real graphs ---------------------------------------------------------------------------
def _json_router(table: dict[str, dict[str, Any]], reply: str = "OK.") -> TextOnlyChatModel:
    """A text-only model answering each JSON-mode request by the schema it asks for."""

    def answer(messages: list[BaseMessage]) -> str:
        prompt = "\n".join(str(m.content) for m in messages)
        for title, payload in table.items():
            if f'"title":"{title}"' in prompt:
                return "```json\n" + json.dumps(payload) + "\n```"
        return reply

    return TextOnlyChatModel(reply=answer)


def test_memory_agent_with_a_text_only_model_remembers_across_threads() -> None:
    store = new_store()
    model = _json_router(
        {
            "ExtractionOutput": {
                "memories": [{"content": "User lives in Lisbon.", "slot": "location"}]
            },
            "ConsolidationOutput": {"decisions": []},
        },
        reply="Noted.",
    )
    graph = build_graph(model, store=store, checkpointer=InMemorySaver())
    out = graph.invoke(
        {"messages": [("user", "I live in Lisbon.")]},
        {"configurable": {"user_id": "u", "thread_id": "t1"}},
    )
    assert out["memory_report"]["status"] == "written"
    assert out["memory_report"]["llm_calls"] == {"extract": 1, "consolidate": 0}
    graph.invoke(
        {"messages": [("user", "Which city do I live in?")]},
        {"configurable": {"user_id": "u", "thread_id": "t2"}},
    )
    last_request = model.calls[-1]
    assert any("User lives in Lisbon." in str(m.content) for m in last_request)
    assert [i.value["content"] for i in store.search(("memories", "user_id:u"))] == [
        "User lives in Lisbon."
    ]


async def test_extract_node_with_an_unusable_model_reports_the_configuration_error() -> None:
    store = new_store()
    model = TextOnlyChatModel(reply=lambda _: "I'd rather not.")
    node = ExtractNode(extractor=LLMExtractor(model, attempts=2), store=store, on_error="report")
    out = await node.ainvoke(
        {"messages": [HumanMessage("I live in Lisbon.")]},
        {"configurable": {"user_id": "u", "thread_id": "t"}},
    )
    assert out["memory_report"]["status"].startswith("error: ConfigurationError: TextOnlyChatModel")
    assert "in 2 tries" in out["memory_report"]["status"]
    assert store.search(("memories", "user_id:u")) == []
    with pytest.raises(ConfigurationError, match="gave no usable ExtractionOutput"):
        ExtractNode(extractor=LLMExtractor(model, attempts=1), store=store).invoke(
            {"messages": [HumanMessage("I live in Lisbon.")]},
            {"configurable": {"user_id": "u", "thread_id": "t"}},
        )


def test_llm_extractor_reports_how_it_reads_the_model() -> None:
    assert LLMExtractor(ScriptedChatModel()).structured_output == "native"
    assert LLMExtractor(TextOnlyChatModel(reply=lambda _: "")).structured_output == "json"
    assert LLMExtractor(ScriptedChatModel(), structured_output="json").structured_output == "json"


async def test_reflection_works_with_a_text_only_model() -> None:
    store = new_store()
    ns = ("memories", "user_id:u")
    for key, text in [("a", "User loves hiking."), ("b", "User lives in Bergen.")]:
        store.put(ns, key, {"content": text, "importance": 8, "kind": "semantic"})
    model = _json_router(
        {
            "ReflectionOutput": {
                "insights": [{"content": "User enjoys Bergen's hills.", "sources": [0, 1]}]
            }
        }
    )
    out = await ReflectNode(model=model, store=store, threshold=10).ainvoke(
        {"messages": []}, {"configurable": {"user_id": "u"}}
    )
    assert out["reflection_report"]["written"] == 1
    (reflection,) = [i.value for i in store.search(ns) if i.value["kind"] == "reflection"]
    assert reflection["content"] == "User enjoys Bergen's hills."
    assert sorted(reflection["derived_from"]) == ["a", "b"]


def test_the_entities_a_model_names_are_kept_with_the_memory() -> None:
    """The extraction schema carries the entities a memory names; the written value keeps
    them (the store links the memory through them) and a model that names none leaves the
    field out (the store then finds them in the text)."""
    extractor = LLMExtractor(TextOnlyChatModel(reply=lambda _: "{}"))
    output = ExtractionOutput.model_validate(
        {
            "memories": [
                {
                    "content": "User's sister Ana moved to Lisbon.",
                    "subject": "user's sister",
                    "entities": ["Ana", " Lisbon ", ""],
                },
                {"content": "User likes tea."},
            ]
        }
    )
    plain, named = sorted(extractor.to_candidates(output, NOW), key=lambda c: c.content)
    assert named.entities == ("Ana", "Lisbon") and plain.entities == ()
    store = new_store()
    model = _json_router(
        {
            "ExtractionOutput": {
                "memories": [
                    {"content": "User's sister Ana lives in Lisbon.", "entities": ["Ana", "Lisbon"]}
                ]
            },
            "ConsolidationOutput": {"decisions": []},
        },
        reply="Noted.",
    )
    graph = build_graph(model, store=store, checkpointer=InMemorySaver())
    graph.invoke(
        {"messages": [("user", "My sister Ana lives in Lisbon.")]},
        {"configurable": {"user_id": "u", "thread_id": "t1"}},
    )
    [item] = store.search(("memories", "user_id:u"))
    assert item.value["entities"] == ["Ana", "Lisbon"]
