"""The feedback prototype's pure parts: expansion terms, clauses, score fusion, disk cache."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from langchain_core.embeddings import DeterministicFakeEmbedding

from langgraph_recall.bench.locomo_feedback import (
    DiskCachedEmbeddings,
    clauses,
    expansion_terms,
    fuse,
)


def _item(turn_id: str, content: str, score: float, context: str = "") -> Any:
    return SimpleNamespace(
        key=turn_id, score=score, value={"turn_id": turn_id, "content": content, "context": context}
    )


def test_expansion_terms_prefer_the_top_results_and_skip_the_query() -> None:
    items = [
        _item("a", "Ana: my pottery class uses a kiln", 1.0),
        _item("b", "Ana: the pottery kiln was hot", 0.9),
        _item("c", "Ben: football tonight", 0.1),
    ]
    terms = expansion_terms("what pottery does Ana do", items, k=2, n_terms=4)
    assert "pottery" not in terms and "football" not in terms
    assert "kiln" in terms and len(terms) == 4  # only the top k=2 results give terms
    assert expansion_terms("q", [], k=2, n_terms=3) == []


def test_clauses_keep_parts_with_content_words() -> None:
    assert clauses("What did Ana paint and where did she travel in summer?") == [
        "did Ana paint",
        "did she travel in summer",
    ]
    assert clauses("why?") == []


def test_fuse_weights_scores_and_fills_missing_with_the_lowest() -> None:
    first = [_item("a", "", 1.0), _item("b", "", 0.5)]
    second = [_item("c", "", 2.0), _item("a", "", 1.0)]
    assert fuse([first, second], [0.5, 0.5]) == ["c", "a", "b"]
    assert fuse([first, second], [1.0, 0.0]) == ["a", "b", "c"]


def test_disk_cache_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "cache.pkl"
    cached = DiskCachedEmbeddings(DeterministicFakeEmbedding(size=4), path)
    vectors = cached.embed_documents(["x", "y"])
    query = cached.embed_query("q")
    cached.save()
    again = DiskCachedEmbeddings(DeterministicFakeEmbedding(size=3), path)  # never called
    assert again.embed_documents(["x", "y"]) == vectors
    assert again.embed_query("q") == query
