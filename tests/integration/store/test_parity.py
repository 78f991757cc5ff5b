"""The exact path (PG 15, no pgvector) returns the same results as the pgvector path."""

from __future__ import annotations

import pytest

from tests.integration.store.conftest import Driver, open_store

pytestmark = [pytest.mark.postgres, pytest.mark.embedded]

TOPICS = ["hiking", "cooking", "chess", "jazz", "rust", "gardening", "tennis", "poetry"]
PLACES = ["Lyon", "Oslo", "Kyoto", "Lima", "Perth", "Quebec", "Accra", "Riga"]


def corpus() -> dict[str, dict[str, object]]:
    facts: dict[str, dict[str, object]] = {}
    for index in range(64):
        topic, place = TOPICS[index % 8], PLACES[(index * 3) % 8]
        facts[f"k{index:02d}"] = {
            "content": f"Member {index} enjoys {topic} near {place} on day {index % 7}",
            "importance": 1 + index % 10,
            "kind": "semantic" if index % 2 else "episodic",
        }
    return facts


QUERIES = [
    ("who enjoys chess in Kyoto", None),
    ("jazz", None),
    ("gardening near Oslo", {"kind": "semantic"}),
    ("member enjoys rust", {"importance": {"$gte": 5}}),
    ("tennis poetry", None),
    ("Lima day 3", None),
]


async def test_exact_and_pgvector_agree(postgres_dsn: str, embedded_dsn: str) -> None:
    results = {}
    for name, dsn in (("exact", postgres_dsn), ("pgvector", embedded_dsn)):
        async with open_store(dsn, "sync") as raw:
            store = Driver(raw, "sync", name, dsn)
            assert raw.vector_mode == name  # type: ignore[attr-defined]
            for key, value in corpus().items():
                await store("put", ("memories", "u1"), key, value)
            results[name] = [
                await store("search", ("memories", "u1"), query=query, filter=filter_, limit=5)
                for query, filter_ in QUERIES
            ]
    for exact_hits, vector_hits in zip(results["exact"], results["pgvector"], strict=True):
        assert [hit.key for hit in exact_hits] == [hit.key for hit in vector_hits]
        assert [hit.score for hit in exact_hits] == pytest.approx(
            [hit.score for hit in vector_hits], abs=1e-4
        )
        assert len(exact_hits) == 5
