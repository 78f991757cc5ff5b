"""PII caught in every field.

Principle: PII is matched on normalised text (NFKC, Unicode separators, Unicode letters,
zero-width characters removed) and the right span of the *original* text is redacted;
every free-text field that reaches the store passes one gate (``PIIFilter.screen``), so
no writer and no field bypasses it.

* regression: every form the attack used, through ``find_pii`` and through the default
  ``ExtractNode``, the ``remember`` tool's ``slot`` and ``LLMExtractor``'s ``subject``;
* properties: a generator of PII variants (separators, Unicode forms, zero-width
  characters, case, sentences in six languages) is caught with the exact span; clean text
  with dates, prices, order numbers and versions is not; every field of any shape is
  screened; and every writer (ExtractNode with rules and with an LLM, the memory tools,
  ReflectNode, summarisation with extraction) leaves no PII in any row of any table of a
  real Postgres store, in ``drop`` and in ``redact`` mode.

Figures: ``pii_variants_tried`` / ``pii_variants_caught``, ``pii_clean_tried`` /
``pii_false_positives``, ``pii_store_variants_tried`` / ``pii_store_rows_with_pii``.
"""

from __future__ import annotations

import itertools
import json
import re
from datetime import datetime, timezone
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from psycopg import sql

from graphs.memory_tools_agent import build_graph as build_tools_graph
from langgraph_recall.bench import locomo
from langgraph_recall.episodes import EpisodeConfig, ingest_history
from langgraph_recall.extraction import LLMExtractor, PIIFilter, RuleBasedExtractor, find_pii
from langgraph_recall.extraction.pii import STRUCTURAL_FIELDS
from langgraph_recall.extraction.types import MemoryCandidate
from langgraph_recall.nodes import (
    ExtractNode,
    MemoryState,
    ReflectNode,
    SummarizeNode,
    user_namespace,
)
from langgraph_recall.offline import ScriptedChatModel, tool_call_message
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests._hypothesis import thorough
from tests.conftest import locomo_dir
from tests.fakes import TextOnlyChatModel
from tests.reliability._figures import Figures
from tests.reliability._pii_variants import (
    CLEAN_CORPUS,
    Variant,
    canonical,
    clean_sentences,
    pii_variants,
)
from tests.reliability._servers import user_tables

pytestmark = [pytest.mark.postgres]

PURE = settings(max_examples=thorough(300), deadline=None, database=None)
GATE = settings(max_examples=thorough(150), deadline=None, database=None)
STORE = settings(
    max_examples=thorough(30),
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # slow examples: report, do not shrink
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
_users = itertools.count()
NOW = datetime(2026, 11, 29, tzinfo=timezone.utc)

# -- regression: finding 6 ---------------------------------------------------------------
FINDING_6 = [  # (text, the PII in it, category)
    ("张三@qq.com", "张三@qq.com", "email"),
    ("card 4111/1111/1111/1111", "4111/1111/1111/1111", "card"),
    ("SSN 123\u201345\u20136789", "123\u201345\u20136789", "national_id"),
    ("UK NINO ab123456c", "ab123456c", "national_id"),
    ("josé@example.com", "josé@example.com", "email"),
    ("ann\uff20example.com", "ann\uff20example.com", "email"),
    ("phone 415/555/0100", "415/555/0100", "phone"),
    ("card 4111.1111.1111.1111", "4111.1111.1111.1111", "card"),
    ("card 4111\u20131111\u20131111\u20131111", "4111\u20131111\u20131111\u20131111", "card"),
    ("the passcode is 4821", "4821", "secret"),
    ("pw is hunter2", "hunter2", "secret"),
    ("Mein Passwort ist Sonnenschein42", "Sonnenschein42", "secret"),
    ("我的密码是abc123", "abc123", "secret"),
]


@pytest.mark.parametrize(("text", "value", "category"), FINDING_6)
def test_pii_caught_in_every_field_regression_finding_6(
    text: str, value: str, category: str
) -> None:
    """Each form of finding 6 is found, with its category and its exact span."""
    matches = find_pii(text)
    assert [(m.category, text[m.start : m.end]) for m in matches] == [(category, value)]
    assert PIIFilter().clean(text) is None
    assert PIIFilter(mode="redact").clean(text) == text.replace(value, f"[{category.upper()}]")


def dump(dsn: str) -> str:
    """Every row of every user table of the database, as text."""
    rows: list[str] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for schema, name in user_tables(conn):
            query = sql.SQL("SELECT t::text FROM {} AS t").format(sql.Identifier(schema, name))
            rows.extend(str(row[0]) for row in conn.execute(query).fetchall())
    return "\n".join(rows)


def stored(dump_text: str, value: str, core: str) -> bool:
    """True when the value, in any form, is in the dumped rows."""
    if len(core) >= 7 and value in dump_text:
        return True
    pattern = r"(?<![0-9a-z])" + re.escape(core) + r"(?![0-9a-z])"
    return re.search(pattern, canonical(dump_text)) is not None


def test_pii_caught_in_every_field_regression_finding_6_writers(
    store: PostgresMemoryStore, postgres_dsn: str
) -> None:
    """The writers of finding 6 store none of it: the default ExtractNode, the remember
    tool's ``slot`` and the ``subject`` an LLMExtractor returns."""
    config = {"configurable": {"user_id": "zhang", "thread_id": "t"}}
    node = ExtractNode(store=store)
    said = [
        "My email is 张三@qq.com.",
        "My card number is 4111/1111/1111/1111.",
        "My SSN is 123\u201345\u20136789.",
        "Remember that my NINO is ab123456c.",
        "I live in Lima.",
    ]
    reports = [node.invoke({"messages": [HumanMessage(text)]}, config) for text in said]
    assert [r["memory_report"]["pii_dropped"] for r in reports] == [1, 1, 1, 1, 0]

    tools_model = ScriptedChatModel(
        responses=[
            tool_call_message(
                "remember", {"content": "User's login is set.", "slot": "张三@qq.com"}
            ),
            "Noted.",
        ]
    )
    out = build_tools_graph(tools_model, store=store, checkpointer=InMemorySaver()).invoke(
        {"messages": [("user", "remember my login")]}, config
    )
    assert "personal data (email)" in str(out["messages"][-2].content)

    llm = ScriptedChatModel(
        responses=[
            tool_call_message(
                "ExtractionOutput",
                {"memories": [{"content": "User likes tea.", "subject": "zhang.san@qq.com"}]},
            )
        ]
    )
    report = ExtractNode(model=llm, store=store).invoke(
        {"messages": [HumanMessage("I like tea, says zhang.san@qq.com")]}, config
    )["memory_report"]
    assert report["pii_dropped"] == 1

    rows = dump(postgres_dsn)
    assert "User lives in Lima." in rows
    for _, value, _ in FINDING_6[:4]:
        assert not stored(rows, value, canonical(value)), value
    assert not stored(rows, "zhang.san@qq.com", "zhang.san@qq.com")


# -- properties over find_pii ------------------------------------------------------------
@pytest.mark.parametrize("category", ["email", "phone", "card", "national_id", "secret"])
@PURE
@given(data=st.data())
def test_pii_variants_are_caught_with_their_exact_span(
    category: str, data: st.DataObject, figures: Figures
) -> None:
    """Any variant is found with its category; redaction replaces exactly its characters."""
    variant: Variant = data.draw(pii_variants(category))
    figures.add("pii_variants_tried")
    matches = find_pii(variant.text)
    spans = [variant.text[m.start : m.end] for m in matches]
    assert spans == [variant.value], (variant, matches)
    assert matches[0].category == variant.category
    placeholder = f"[{variant.category.upper()}]"
    redacted = PIIFilter(mode="redact").clean(variant.text)
    assert redacted == variant.text.replace(variant.value, placeholder, 1)
    assert PIIFilter().clean(variant.text) is None
    assert find_pii(redacted or "") == []  # redaction is complete: nothing left to find
    figures.add("pii_variants_caught")


@PURE
@given(data=st.data())
def test_password_statements_in_seven_languages_are_caught(
    data: st.DataObject, figures: Figures
) -> None:
    variant: Variant = data.draw(pii_variants("password"))
    figures.add("pii_variants_tried")
    matches = find_pii(variant.text)
    assert [variant.text[m.start : m.end] for m in matches] == [variant.value], variant
    assert [m.category for m in matches] == ["secret"]
    figures.add("pii_variants_caught")


@PURE
@given(text=clean_sentences())
def test_clean_sentences_survive_the_filter(text: str, figures: Figures) -> None:
    """Dates, prices, order numbers, versions, counts: no false positive."""
    figures.add("pii_clean_tried")
    found = find_pii(text)
    figures.add("pii_false_positives", len(found))
    assert found == [], [(m.kind, text[m.start : m.end]) for m in found]
    assert PIIFilter().clean(text) == text


def _locomo_turns() -> list[str]:
    return [turn.content for c in locomo.load_conversations(locomo_dir()) for turn in c.turns]


def test_real_conversations_and_tricky_text_survive_the_filter(figures: Figures) -> None:
    """The hand-written corpus of look-alikes and every LoCoMo turn: no false positive."""
    texts = [*CLEAN_CORPUS, *_locomo_turns()]
    flagged = {text: find_pii(text) for text in texts}
    false_positives = {
        t: [t[m.start : m.end] for m in found] for t, found in flagged.items() if found
    }
    figures.add("pii_clean_tried", len(texts))
    figures.add("pii_false_positives", sum(len(v) for v in false_positives.values()))
    assert len(texts) > 2000
    assert false_positives == {}


@PURE
@given(data=st.data())
def test_offline_rules_keep_pii_whole_for_the_filter(data: st.DataObject) -> None:
    """No rule (sentence or clause split, value capture) cuts a PII value in pieces that
    the filter would no longer recognise ("zoë@пример。рф" split at its "。")."""
    variant: Variant = data.draw(pii_variants())
    found = RuleBasedExtractor().extract_text(f"Remember that {variant.text}", now=NOW)
    assert found, variant
    pieces = {variant.core[i : i + 6] for i in range(max(1, len(variant.core) - 5))}
    for candidate in found:
        text = canonical(candidate.content)
        if any(piece in text for piece in pieces):
            assert PIIFilter().clean(candidate.content) is None, (variant, candidate)


# -- the gate: every field ---------------------------------------------------------------
FIELD_NAMES = st.from_regex(r"[a-z][a-z_]{0,12}", fullmatch=True).filter(
    lambda name: name not in STRUCTURAL_FIELDS
)


@st.composite
def nested(draw: st.DrawFn, text: str) -> Any:
    """``text`` as a field value: a string, in a list, or in a nested dict."""
    shape = draw(st.sampled_from(["str", "list", "dict", "deep"]))
    if shape == "str":
        return text
    if shape == "list":
        return ["clean", text]
    if shape == "dict":
        return {"note": text, "n": 1}
    return {"a": [{"b": text}]}


@GATE
@given(data=st.data(), name=FIELD_NAMES)
def test_every_free_text_field_goes_through_the_gate(data: st.DataObject, name: str) -> None:
    """Whatever its name and shape, a field holding PII is dropped or redacted; structural
    fields and clean fields are left exactly as they were."""
    variant: Variant = data.draw(pii_variants())
    value = {
        "content": "User likes tea.",
        "kind": "semantic",
        "valid_from": "2026-01-01T00:00:00+00:00",
        "derived_from": ["k1"],
        name: data.draw(nested(variant.text)),
    }
    assert PIIFilter().screen(value).dropped
    screening = PIIFilter(mode="redact").screen(value)
    assert screening.redacted and screening.value is not None
    assert screening.categories == (variant.category,)
    text = json.dumps(screening.value, ensure_ascii=False)
    assert not stored(text, variant.value, variant.core)
    assert {k: v for k, v in screening.value.items() if k != name} == {
        k: v for k, v in value.items() if k != name
    }
    rewrite = PIIFilter().screen(value, rewrite=True)  # closing an old memory: redact
    assert rewrite.value == screening.value


@GATE
@given(data=st.data(), field=st.sampled_from(["content", "subject", "slot"]))
def test_every_candidate_field_goes_through_the_gate(data: st.DataObject, field: str) -> None:
    variant: Variant = data.draw(pii_variants())
    fields: dict[str, Any] = {"content": "User likes tea.", "slot": "preference:tea"}
    fields[field] = variant.text
    candidate = MemoryCandidate(**fields)
    kept, screening = PIIFilter().screen_candidate(candidate)
    assert kept is None and screening.fields == (field,)
    redacted, _ = PIIFilter(mode="redact").screen_candidate(candidate)
    assert redacted is not None
    assert not stored(str(getattr(redacted, field)), variant.value, variant.core)
    assert redacted.content == (candidate.content if field != "content" else redacted.content)


# -- every writer against a real store -----------------------------------------------------
def _json_model(memories: list[dict[str, Any]], insights: list[dict[str, Any]]) -> Any:
    """A text-only model answering extraction, consolidation and reflection in JSON."""

    def reply(messages: list[BaseMessage]) -> str:
        prompt = "\n".join(str(m.content) for m in messages)  # JSON mode: schema titles
        if '"title":"ConsolidationOutput"' in prompt:
            return '{"decisions": []}'
        if '"title":"ReflectionOutput"' in prompt:
            return json.dumps({"insights": insights}, ensure_ascii=False)
        return "Here you go:\n```json\n" + json.dumps({"memories": memories}) + "\n```"

    return TextOnlyChatModel(reply=reply)


def _write_everywhere(
    store: PostgresMemoryStore, user: str, variant: Variant, mode: str, field: str, turns: str
) -> dict[str, Any]:
    """Send the variant through every writer; return what each reported."""
    pii = PIIFilter(mode=mode, turns=turns)  # type: ignore[arg-type]
    config = {"configurable": {"user_id": user, "thread_id": f"thread-{user}"}}
    said = HumanMessage(f"Remember that {variant.text}")
    rules = ExtractNode(store=store, pii=pii).invoke({"messages": [said]}, config)
    episodes = ExtractNode(store=store, pii=pii, episodes=EpisodeConfig(context_before=2))
    turn = episodes.invoke({"messages": [said, AIMessage("Noted.")]}, config)["memory_report"]
    history = [("user", "I like green tea."), ("user", variant.text), ("assistant", "Noted.")]
    ingested = ingest_history(store, history, user_id=user, pii=pii)

    leaky: dict[str, Any] = {"content": "User has a contact detail.", "importance": 6}
    leaky[field] = variant.text if field == "content" else variant.bare
    clean = {"content": "User likes green tea.", "slot": "preference:green tea"}
    model = _json_model([clean, leaky], [])
    llm = ExtractNode(extractor=LLMExtractor(model), store=store, pii=pii).invoke(
        {"messages": [HumanMessage("I like green tea. " + variant.text)]}, config
    )

    tools_model = ScriptedChatModel(
        responses=[
            tool_call_message("remember", {"content": variant.text, "slot": "contact"}),
            "Noted.",
            tool_call_message("remember", {"content": "User drinks tea.", "slot": variant.bare}),
            "Noted.",
        ]
    )
    tools = build_tools_graph(tools_model, store=store, pii=pii)
    tool_replies = [
        tools.invoke({"messages": [("user", "remember this")]}, config)["messages"][-2].content
        for _ in range(2)
    ]

    insights = [
        {"content": variant.text, "sources": [0]},
        {"content": "User likes tea.", "sources": [0]},
    ]
    reflect = ReflectNode(model=_json_model([], insights), store=store, threshold=1, pii=pii)
    reflection = reflect.invoke({"messages": []}, config)["reflection_report"]

    summarize = SummarizeNode(max_tokens=120, keep_turns=1, extract=ExtractNode(pii=pii))
    builder = StateGraph(MemoryState)
    builder.add_node(summarize)
    builder.add_edge(START, summarize.label)
    history: list[BaseMessage] = [HumanMessage(said.content, id="h1"), AIMessage("Noted.", id="a1")]
    history += [HumanMessage("tell me more " * 30, id="h2"), AIMessage("ok " * 30, id="a2")]
    history += [HumanMessage("thanks", id="h3")]
    builder.compile(store=store).invoke({"messages": history}, config)
    overflow = summarize.extract.last_report if summarize.extract is not None else None
    return {
        "rules": rules["memory_report"],
        "turn": turn,
        "ingested": ingested,
        "llm": llm["memory_report"],
        "tools": tool_replies,
        "reflection": reflection,
        "overflow": overflow,
    }


@pytest.mark.slow
@STORE
@given(
    variant=pii_variants(),
    mode=st.sampled_from(["drop", "redact"]),
    field=st.sampled_from(["content", "subject", "slot"]),
    turns=st.sampled_from(["drop", "redact"]),
)
def test_no_writer_stores_pii_in_any_row(
    store: PostgresMemoryStore,
    postgres_dsn: str,
    variant: Variant,
    mode: str,
    field: str,
    turns: str,
    figures: Figures,
) -> None:
    user = f"u{next(_users)}"
    figures.add("pii_store_variants_tried")
    outcome = _write_everywhere(store, user, variant, mode, field, turns)

    rows = dump(postgres_dsn)
    leaked = stored(rows, variant.value, variant.core)
    figures.add("pii_store_rows_with_pii", int(leaked))
    assert not leaked, (variant, mode, field)

    # the PII did reach the filter on every path (the test is not vacuous)
    contents = [str(i.value.get("content")) for i in store.search(user_namespace(user), limit=50)]
    assert "User likes green tea." in contents
    overflow = outcome["overflow"]
    assert overflow is not None and overflow.candidates >= 1  # the folded turn was read
    # turns kept as episodes: the variant's turn is dropped, or kept with the PII replaced
    ingested = outcome["ingested"]
    if turns == "drop":
        assert ingested.pii_dropped >= 1 and outcome["turn"]["pii_dropped"] >= 1
    else:
        assert ingested.pii_redacted >= 1 and outcome["turn"]["pii_redacted"] >= 1
        assert f"[{variant.category.upper()}]" in rows
    if mode == "drop":
        assert outcome["rules"]["pii_dropped"] >= 1
        assert outcome["llm"]["pii_dropped"] == 1
        assert overflow.pii_dropped >= 1
        assert all("personal data" in str(reply) for reply in outcome["tools"])
        assert outcome["reflection"]["written"] == 1
    else:
        placeholder = f"[{variant.category.upper()}]"
        assert outcome["rules"]["pii_redacted"] >= 1
        assert outcome["llm"]["pii_redacted"] == 1
        assert placeholder in rows
        assert all(str(reply).startswith("Remembered") for reply in outcome["tools"])
        assert outcome["reflection"]["written"] == 2
