"""The newest statement of a value ranks first through a real Postgres search: a turn whose
clause says the asked value changed passes the older, closer turn stating it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from langgraph_recall.retrieval import RetrievalConfig
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests.integration.nodes.conftest import index_config

pytestmark = pytest.mark.postgres

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
NS = ("memories", "user_id:cov")
TURNS = [
    (
        "old",
        40,
        "User: I'm aiming for full test coverage on my API integration module and the test "
        "coverage of the API integration module is 65% after the first run.",
    ),
    ("lunch", 30, "User: Lunch was nice, then I fixed 3 typos in the README."),
    (
        "new",
        10,
        "User: Can you help me mock axios in Jest? My API integration coverage has recently "
        "improved to 78%, so I'm adding edge cases for timeouts.",
    ),
    ("other", 5, "User: The auth module's coverage has recently improved to 91%."),
]


def _put_all(store: PostgresMemoryStore) -> None:
    for key, days, text in TURNS:
        moment = (NOW - timedelta(days=days)).isoformat()
        store.put(NS, key, {"content": text, "kind": "episodic", "valid_from": moment})


def _keys(store: PostgresMemoryStore, query: str) -> list[str]:
    return [item.key for item in store.search(NS, query=query, limit=4)]


def test_the_changed_value_ranks_above_the_older_statement(
    memory_store: PostgresMemoryStore, postgres_dsn: str
) -> None:
    _put_all(memory_store)
    query = "What is the test coverage of my API integration module?"
    plain = RetrievalConfig(update_weight=0)  # no update term: the older turn is closer
    with PostgresMemoryStore.from_conn_string(
        postgres_dsn, index=index_config(), retrieval=plain
    ) as unlifted:
        before = _keys(unlifted, query)
    assert before.index("old") < before.index("new")
    found = memory_store.search(NS, query=query, limit=4, explain=True)
    keys = [item.key for item in found]
    assert keys.index("new") < keys.index("old")
    lifted = next(item for item in found if item.key == "new")
    assert lifted.explanation.update > 0  # type: ignore[attr-defined]
    assert set(keys) == {key for key, _, _ in TURNS}  # reordered, nothing added or dropped


def test_a_question_about_the_past_keeps_the_older_statement_first(
    memory_store: PostgresMemoryStore,
) -> None:
    _put_all(memory_store)
    past = _keys(memory_store, "What was the test coverage of my API integration module before?")
    plain = _keys(memory_store, "What is the test coverage of my API integration module?")
    assert past.index("old") < past.index("new")
    assert plain.index("new") < plain.index("old")
