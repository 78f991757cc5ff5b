"""A small scope's one-statement search ranks exactly as the candidate path does."""

from __future__ import annotations

import pytest

from langgraph_recall.store._namespace import encode_namespace
from langgraph_recall.store.postgres import _sql
from tests.integration.store.conftest import Driver, open_store
from tests.integration.store.test_parity import QUERIES, corpus

pytestmark = [pytest.mark.postgres, pytest.mark.embedded]

SCOPE = ("memories", "u1")


async def test_scope_scan_agrees_with_candidate_path(
    embedded_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_store(embedded_dsn, "sync") as raw:
        store = Driver(raw, "sync", "pgvector", embedded_dsn)
        for key, value in corpus().items():
            await store("put", SCOPE, key, value)
        await store("put", ("memories", "u2"), "other", {"content": "jazz in Lyon"})
        await store("invalidate", SCOPE, "k03")
        scans = []
        for query, filter_ in QUERIES:
            scans.append(await store("search", SCOPE, query=query, filter=filter_, limit=5))
        everything = await store("search", SCOPE, query="jazz", include_invalid=True, limit=64)
        assert not raw._large_scopes.contains(encode_namespace(SCOPE))  # type: ignore[attr-defined]
        # a scope above the threshold: the scan sees it and the candidate path answers
        monkeypatch.setattr(_sql, "SCOPE_SCAN_ROWS", 10)
        candidates = []
        for query, filter_ in QUERIES:
            candidates.append(await store("search", SCOPE, query=query, filter=filter_, limit=5))
        assert raw._large_scopes.contains(encode_namespace(SCOPE))  # type: ignore[attr-defined]
        again = await store("search", SCOPE, query="jazz", include_invalid=True, limit=64)
    for scan, candidate in zip(scans, candidates, strict=True):
        assert [hit.key for hit in scan] == [hit.key for hit in candidate]
        assert [hit.score for hit in scan] == pytest.approx(
            [hit.score for hit in candidate], abs=1e-6
        )
        assert len(scan) == 5 and "other" not in [hit.key for hit in scan]
    assert [hit.key for hit in everything] == [hit.key for hit in again]
    assert "k03" in [hit.key for hit in everything]


async def test_empty_scope_answers_nothing(embedded_dsn: str) -> None:
    async with open_store(embedded_dsn, "async") as raw:
        store = Driver(raw, "async", "pgvector", embedded_dsn)
        await store("put", ("memories", "u1"), "k", {"content": "hello"})
        assert await store("search", ("memories", "nobody"), query="hello") == []
        hits = await store("search", ("memories", "u1"), query="hello")
        assert [hit.key for hit in hits] == ["k"]
