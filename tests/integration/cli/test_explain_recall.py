"""Explaining a recall, on the real Postgres store: the terms of every score add up to it
(property over random stores and queries), ``RetrieveNode(explain=...)`` logs them for
what it injected, and ``langgraph-recall inspect --query`` prints them as a table."""

from __future__ import annotations

import argparse
import io
import logging
import re
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.memory import InMemoryStore

from langgraph_recall.cli import build_parser
from langgraph_recall.cli._backends import open_store
from langgraph_recall.cli._console import Console
from langgraph_recall.cli.admin import EXPLAIN_HEADER, cmd_inspect, explain_rows
from langgraph_recall.nodes import RetrieveNode, user_namespace
from langgraph_recall.retrieval import RetrievalConfig
from langgraph_recall.store.postgres import ExplainedSearchItem, PostgresMemoryStore
from tests._hypothesis import thorough
from tests.fakes import HashingEmbeddings

pytestmark = [pytest.mark.postgres]

DIMS = 32
WORDS = ["tea", "lyon", "falcon", "cat", "miso", "violin", "porto", "may", "2024", "marathon"]
START = datetime(2023, 1, 1, tzinfo=timezone.utc)
TERMS = ["lexical", "vector", "recency", "importance", "access", "time_match", "entity", "update"]


@pytest.fixture
def store(postgres_dsn: str) -> Iterator[PostgresMemoryStore]:
    config = RetrievalConfig(access_weight=0.2)  # every term of the formula in play
    index: Any = {"dims": DIMS, "embed": HashingEmbeddings(DIMS)}
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=index, retrieval=config) as s:
        s.setup()
        yield s


memories = st.lists(
    st.tuples(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
        st.integers(1, 10),
        st.integers(0, 900),
    ),
    min_size=1,
    max_size=12,
)
queries = st.lists(st.sampled_from([*WORDS, "in May 2024", "last year"]), min_size=1, max_size=4)


@settings(
    max_examples=thorough(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(memories, queries, st.integers(0, 3))
def test_components_add_up_to_the_score_for_random_stores_and_queries(
    store: PostgresMemoryStore,
    rows: list[tuple[str, int, int]],
    words: list[str],
    reads: int,
) -> None:
    namespace = ("memories", f"u{uuid.uuid4().hex[:10]}")
    for i, (content, importance, day) in enumerate(rows):
        when = (START + timedelta(days=day)).isoformat()
        store.put(
            namespace, f"m{i}", {"content": content, "importance": importance, "valid_from": when}
        )
    query = " ".join(words)
    for _ in range(reads):  # access counts differ between memories
        store.search(namespace, query=query, limit=2)
    items = store.search(namespace, query=query, limit=20, explain=True)
    scores = [item.score for item in items]
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    for item in items:
        assert isinstance(item, ExplainedSearchItem) and item.explanation is not None
        parts = item.explanation.contributions()
        assert list(parts) == TERMS
        assert sum(parts.values()) == pytest.approx(item.score, abs=1e-9)
        assert item.explanation.score == item.score
        assert all(value >= 0.0 or name == "vector" for name, value in parts.items())
    # The table inspect prints holds the same numbers.
    for row, item in zip(explain_rows(items), items, strict=True):
        assert row[3:11] == list(item.explanation.contributions().values())  # type: ignore[attr-defined]
        assert row[11] == item.score


def _fill(store: PostgresMemoryStore, user: str) -> None:
    namespace = user_namespace(user)
    store.put(
        namespace, "tea", {"content": "Zhang drinks green tea every morning", "importance": 7}
    )
    store.put(namespace, "lyon", {"content": "Zhang moved to Lyon in May 2024", "importance": 9})
    store.put(namespace, "cat", {"content": "The cat is called Miso", "importance": 3})


_LINE = re.compile(r"key=(\S+) score=(\S+) (.*) content=")


def test_retrieve_node_logs_the_terms_of_what_it_injected(
    store: PostgresMemoryStore, caplog: pytest.LogCaptureFixture
) -> None:
    _fill(store, "u1")
    node = RetrieveNode(store=store, inject=True, explain=True, limit=3, token_budget=45)
    with caplog.at_level(logging.INFO, logger="langgraph_recall.nodes.retrieve"):
        out = node.invoke(
            {"messages": [("user", "where did Zhang move? does he like tea?")]},
            config={"configurable": {"user_id": "u1"}},
        )
    injected = [m["key"] for m in out["memories"]]
    assert injected and len(injected) < 3  # the budget kept fewer than were found
    logged = [_LINE.search(r.getMessage()) for r in caplog.records]
    assert all(logged) and [m[1] for m in logged if m] == injected
    for match in logged:
        assert match is not None
        terms = dict(pair.split("=") for pair in match[3].split())
        assert list(terms) == TERMS
        assert sum(map(float, terms.values())) == pytest.approx(float(match[2]), abs=1e-3)
    assert all(r.getMessage().startswith("retrieve_memories key=") for r in caplog.records)


def test_retrieve_node_explains_on_the_async_path_too(
    store: PostgresMemoryStore, caplog: pytest.LogCaptureFixture
) -> None:
    import asyncio

    _fill(store, "u1")
    node = RetrieveNode(store=store, explain=True, limit=2)
    with caplog.at_level(logging.INFO, logger="langgraph_recall.nodes.retrieve"):
        out = asyncio.run(
            node.ainvoke(
                {"messages": [("user", "what does Zhang drink?")]},
                config={"configurable": {"user_id": "u1"}},
            )
        )
    keys = [m["key"] for m in out["memories"]]
    assert keys and [m[1] for r in caplog.records if (m := _LINE.search(r.getMessage()))] == keys
    assert all("lexical=" in r.getMessage() for r in caplog.records)


def test_retrieve_node_explain_takes_a_logger_and_works_on_any_store(
    caplog: pytest.LogCaptureFixture,
) -> None:
    plain = InMemoryStore()
    plain.put(("memories", "user_id:u1"), "k", {"content": "User likes tea."})
    mine = logging.getLogger("my-app.recall")
    with caplog.at_level(logging.INFO, logger="my-app.recall"):
        RetrieveNode(store=plain, explain=mine).invoke(
            {"messages": [("user", "what do I like?")]}, config={"configurable": {"user_id": "u1"}}
        )
    [record] = caplog.records
    assert record.name == "my-app.recall" and "key=k" in record.getMessage()
    assert "no breakdown" in record.getMessage()
    caplog.clear()
    RetrieveNode(store=plain).invoke(  # explain off: nothing logged
        {"messages": [("user", "what do I like?")]}, config={"configurable": {"user_id": "u1"}}
    )
    assert not caplog.records


def _inspect(dsn: str, *argv: str) -> str:
    args = build_parser().parse_args(["inspect", "--postgres", dsn, *argv])
    out = io.StringIO()
    assert cmd_inspect(args, Console(out, color=False)) == 0
    return out.getvalue()


def test_inspect_query_prints_each_term_and_they_add_up(postgres_dsn: str) -> None:
    with open_store(postgres_dsn) as store:  # the CLI's own store (default embedder)
        _fill(store, "u1")
        _fill(store, "u2")  # another user's memories never show
        store.put(("memories", "u2"), "secret", {"content": "Zhang secret tea recipe"})
    text = _inspect(
        postgres_dsn, "--user", "u1", "--query", "where did Zhang move?", "--limit", "3"
    )
    assert "Why these memories of u1 come back for 'where did Zhang move?'" in text
    lines = [line.strip() for line in text.splitlines()]
    header = next(i for i, line in enumerate(lines) if line.startswith("#  key"))
    assert lines[header].split() == [
        "#",
        "key",
        "kind",
        "lexical",
        "vector",
        "recency",
        "importance",
        "access",
        "time",
        "match",
        "entity",
        "update",
        "score",
        "content",
    ]
    rows = [line for line in lines[header + 2 :] if re.match(r"^\d+\s", line)]
    assert len(rows) == 3 and "secret" not in text
    assert rows[0].split()[1] == "lyon"  # the move is the best match
    for row in rows:
        numbers = [float(x) for x in row.split()[2:11] if re.fullmatch(r"-?\d+\.\d+", x)]
        assert len(numbers) == 9
        assert sum(numbers[:8]) == pytest.approx(numbers[8], abs=4e-3)  # printed to 3 places
    assert (
        "score = lexical + vector + recency + importance + access + time match + entity + update"
        in text
    )
    assert len(EXPLAIN_HEADER) == 13


def test_inspect_query_errors_and_empty_results(postgres_dsn: str) -> None:
    from langgraph_recall.cli import main

    assert main(["inspect", "--postgres", postgres_dsn, "--user", "u1", "--query", "  "]) == 2
    assert (
        main(
            ["inspect", "--postgres", postgres_dsn, "--user", "u1", "--query", "x", "--limit", "0"]
        )
        == 2
    )
    text = _inspect(postgres_dsn, "--user", "nobody", "--query", "tea")
    assert "no memories for user 'nobody' match" in text
    assert isinstance(build_parser().parse_args(["inspect", "--user", "u"]), argparse.Namespace)
