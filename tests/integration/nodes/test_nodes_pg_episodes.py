"""Episodic memory on our PostgresMemoryStore (real server): the extract node and bulk
ingestion write episodes the store finds by their context, re-ingestion writes nothing,
the store's default TTL applies, async matches sync, and erasing the user erases them."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_recall import aforget_user, forget_user
from langgraph_recall.episodes import (
    EpisodeConfig,
    TurnEmbeddings,
    aingest_history,
    ingest_history,
)
from langgraph_recall.nodes import ExtractNode, RetrieveNode
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from tests.fakes import HashingEmbeddings

pytestmark = pytest.mark.postgres

CONFIG: Any = {"configurable": {"user_id": "ann", "thread_id": "trip"}}
NS = ("memories", "user_id:ann")
HISTORY = [
    {"role": "user", "text": "We finally booked the trip", "id": "d1", "session": "s1"},
    {"role": "assistant", "text": "Where are you going?", "id": "d2", "session": "s1"},
    {"role": "user", "text": "Kyoto, for the autumn leaves", "id": "d3", "session": "s1"},
    {"role": "user", "text": "My sister plays the cello", "id": "d4", "session": "s2"},
]


def _episodes(store: PostgresMemoryStore) -> list[Any]:
    return store.search(NS, filter={"kind": "episodic"}, limit=100)


def test_ingested_episodes_are_found_by_their_context_and_erased_with_the_user(
    memory_store: PostgresMemoryStore,
) -> None:
    report = ingest_history(memory_store, HISTORY, user_id="ann", thread_id="trip")
    assert (report.written, report.unchanged) == (4, 0)
    found = memory_store.search(NS, query="booked trip", limit=4)
    assert found[0].value["turn_id"] in {"d1", "d3"}
    kyoto = next(i for i in _episodes(memory_store) if i.value["turn_id"] == "d3")
    assert "We finally booked the trip" in kyoto.value["context"]
    assert "cello" not in kyoto.value["context"]  # another session is not context
    again = ingest_history(memory_store, HISTORY, user_id="ann", thread_id="trip")
    assert (again.written, again.unchanged) == (0, 4)
    erased = forget_user(memory_store, None, "ann")
    assert erased.complete, erased.residue
    assert _episodes(memory_store) == []


def test_extract_node_episodes_and_facts_blend_in_retrieval(
    memory_store: PostgresMemoryStore,
) -> None:
    config = EpisodeConfig(retrieve_limit=2)
    extract = ExtractNode(store=memory_store, episodes=config)
    state = {
        "messages": [
            HumanMessage("I moved to Lisbon last month and I love it", id="h1"),
            AIMessage("Lisbon is lovely!", id="a1"),
        ]
    }
    report = extract.invoke(state, CONFIG)["memory_report"]
    assert report["episodes"] == 1 and report["status"] == "written"
    extract.invoke(state, CONFIG)  # a retry: still one episode
    (episode,) = _episodes(memory_store)
    assert episode.value["context"] == "Assistant: Lisbon is lovely!"
    out = RetrieveNode(store=memory_store, episodes=config).invoke(
        {"messages": [("user", "where do I live?")]}, CONFIG
    )
    kinds = {m["kind"] for m in out["memories"]}
    assert "episodic" in kinds and kinds - {"episodic"}


def test_default_ttl_of_the_store_applies_to_node_writes(postgres_dsn: str) -> None:
    with PostgresMemoryStore.from_conn_string(
        postgres_dsn,
        index={"dims": 64, "embed": HashingEmbeddings(64)},
        ttl={"default_ttl": 60.0},
    ) as store:
        store.setup()
        ExtractNode(store=store, episodes=EpisodeConfig()).invoke(
            {"messages": [("user", "My name is Zhang San and I live in Oslo.")]}, CONFIG
        )
    with psycopg.connect(postgres_dsn) as conn:
        rows = conn.execute(
            "SELECT ns, count(*), count(expires_at) FROM lgm_memory_items GROUP BY ns"
        ).fetchall()
    counts = {prefix: (n, expiring) for prefix, n, expiring in rows}
    memories = [c for prefix, c in counts.items() if prefix.startswith("memories")]
    assert memories and all(n == expiring and n >= 2 for n, expiring in memories)
    assert any(expiring == 0 for prefix, (_, expiring) in counts.items() if "meta" in prefix)


async def test_async_ingest_matches_sync_and_erases(postgres_dsn: str) -> None:
    embedder = TurnEmbeddings(HashingEmbeddings(64))
    async with AsyncPostgresMemoryStore.from_conn_string(
        postgres_dsn, index={"dims": 64, "embed": embedder}
    ) as store:
        await store.asetup()
        report = await aingest_history(store, HISTORY, user_id="ann", thread_id="trip")
        assert report.written == 4
        assert embedder.embedded <= len(HISTORY)  # each turn embedded once
        items = await store.asearch(NS, filter={"kind": "episodic"}, limit=10)
        assert sorted(i.value["turn_id"] for i in items) == ["d1", "d2", "d3", "d4"]
        erased = await aforget_user(store, None, "ann")
        assert erased.complete, erased.residue
        assert await store.asearch(NS, limit=10) == []
