"""Data cannot produce its delimiters; untrusted text is neutralised before a terminal.

Delimiter-forging payloads (tags in any case and spacing, full-width brackets, every line
break followed by a forged numbered line, controls) are stored as memories in our
Postgres store, read back, and run through every prompt builder: the memory block as the
``retrieve`` node injects it, the consolidation prompt (``M<n>:`` neighbours, ``C<n>:``
candidates), the reflection prompt, the summary prompt and block, the extraction
transcript. Each prompt must parse back to exactly its items. The same memories are
printed by ``langgraph-recall inspect`` (table, history, ``--query``): no control
character may reach the output raw.
"""

from __future__ import annotations

import io
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import HumanMessage

from langgraph_recall._internal.terminal import is_dangerous
from langgraph_recall._memory.messages import MEMORY_BLOCK_ID, SummaryPlan
from langgraph_recall.cli import build_parser
from langgraph_recall.cli._backends import open_store
from langgraph_recall.cli._console import Console
from langgraph_recall.cli.admin import cmd_inspect
from langgraph_recall.extraction.llm import LLMExtractor
from langgraph_recall.extraction.types import ExistingMemory, MemoryCandidate
from langgraph_recall.nodes import ReflectNode, RetrieveNode, SummarizeNode
from langgraph_recall.offline import ScriptedChatModel
from langgraph_recall.prompts.encoding import encode_inline
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests._hypothesis import thorough
from tests.reliability._figures import Figures
from tests.unit.nodes.test_prompt_delimiters import (
    MEMORY_LINE,
    ROLE_LINE,
    SOURCE_LINE,
    _between,
    _conversation,
    _same_skeleton,
    _tags,
    payloads,
)

pytestmark = [pytest.mark.postgres]

EXTRACTOR = LLMExtractor(ScriptedChatModel(responses=[]))
REFLECT = ReflectNode(model=ScriptedChatModel(responses=[]), threshold=1)
SUMMARY = SummarizeNode(model=ScriptedChatModel(responses=[]), max_tokens=4000)


def _forged(store: PostgresMemoryStore, texts: list[str], items: list[Any]) -> int:
    """Structures forged when ``texts`` (stored, read back as ``items``) go through every
    builder: 0 when each prompt parses back to exactly its items."""
    stored = [str(item.value["content"]) for item in items]
    assert sorted(stored) == sorted(texts)  # the store kept the payloads as they were
    memories = [{"content": t, "kind": "semantic"} for t in stored]
    checks = 0
    # the memory block, as the retrieve node injected it
    block = RetrieveNode(inject=True, token_budget=100_000, always=0)._finish(
        {"messages": []}, store, [items]
    )["messages"][0]
    assert block.id == MEMORY_BLOCK_ID
    lines = [line for line in _between(block.content, "memory") if line.startswith("- [")]
    parsed = [MEMORY_LINE.match(line) for line in lines]
    assert sorted(m["content"] for m in parsed if m) == sorted(encode_inline(t) for t in stored)
    checks += 1
    # consolidation: stored memories as M<n>, the same texts as candidates C<n>
    existing = [ExistingMemory(item.key, item.value) for item in items]
    text = EXTRACTOR.consolidation_messages([MemoryCandidate(t) for t in stored], existing)
    benign = EXTRACTOR.consolidation_messages(
        [MemoryCandidate("x") for _ in stored],
        [ExistingMemory(f"k{i}", {"content": "x"}) for i in range(len(items))],
    )
    _same_skeleton(text[0].content, benign[0].content)
    checks += 1
    # reflection sources
    request = REFLECT._request(memories)[0].content
    sources = [m for line in request.splitlines() if (m := SOURCE_LINE.match(line))]
    assert [m[2] for m in sources] == [encode_inline(t) for t in stored]
    checks += 1
    # summary prompt (stored text as the previous summary and as folded messages)
    folded = _conversation(stored)
    prompt = SUMMARY._summary_request("\n".join(stored), SummaryPlan(fold=folded, keep=[]))
    inside = _between(prompt[0].content, "messages")
    assert len(inside) == len(folded) and all(ROLE_LINE.match(line) for line in inside)
    assert _tags(SUMMARY._block("\n".join(stored)).content) == [
        "<conversation_summary>",
        "</conversation_summary>",
    ]
    checks += 1
    # extraction transcript
    transcript = EXTRACTOR.extraction_messages([HumanMessage(t) for t in stored], _now())[1]
    assert len(transcript.content.splitlines()) == len(stored)
    checks += 1
    return 5 - checks


def _storable(text: str) -> str:
    """The payload without NUL, which Postgres text cannot hold (the store refuses it)."""
    return text.replace("\x00", "") or "x"


def _now() -> Any:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc)


@settings(
    max_examples=thorough(120),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(payloads.map(_storable), min_size=1, max_size=6))
def test_stored_payloads_never_forge_a_prompt_structure(
    store: PostgresMemoryStore, figures: Figures, texts: list[str]
) -> None:
    namespace = ("memories", f"user_id:d{uuid.uuid4().hex[:10]}")
    for i, text in enumerate(texts):
        store.put(namespace, f"p{i}", {"content": text, "kind": "semantic"})
    items = store.search(namespace, limit=len(texts))
    figures.add("delimiter_payloads_tried", len(texts))
    figures.add("delimiter_structures_forged", _forged(store, texts, items))


CONTROLS = st.lists(
    st.one_of(
        st.sampled_from(["\x1b[2J", "\x1b]0;x\x07", "\x9b31m", "\u202e", "\r", "\n", "\x08"]),
        st.text(max_size=8),
    ),
    min_size=1,
    max_size=8,
).map(lambda parts: _storable("".join(parts)))


@settings(
    max_examples=thorough(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(CONTROLS, CONTROLS)
def test_inspect_prints_no_control_character_of_a_stored_memory(
    postgres_dsn: str, figures: Figures, first: str, second: str
) -> None:
    user = f"t{uuid.uuid4().hex[:10]}"
    namespace = ("memories", f"user_id:{user}")
    with open_store(postgres_dsn) as cli_store:  # the CLI's own store on this database
        cli_store.put(namespace, "k", {"content": first, "kind": "semantic"})
        cli_store.put(namespace, "k", {"content": second, "kind": "semantic"})  # history
    out = io.StringIO()
    args = build_parser().parse_args(["inspect", "--user", user, "--postgres", postgres_dsn])
    assert cmd_inspect(args, Console(out, color=False)) == 0
    written = out.getvalue()
    raw = sum(is_dangerous(ch) and ch != "\n" for ch in written)
    figures.add("terminal_payloads_printed", 2)
    figures.add("terminal_controls_raw", raw)
    assert raw == 0
