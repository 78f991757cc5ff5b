"""Facts and episodes under one token budget (pure).

Example:
    ```python
    from langgraph_recall._memory.blend import blend_within_budget

    found = [{"content": "Ann: I adopted a puppy.", "kind": "episodic", "score": 0.9},
             {"content": "User has a dog.", "kind": "semantic", "score": 0.8}]
    kept = blend_within_budget(found, token_budget=200, episode_share=0.5)
    assert [m["kind"] for m in kept] == ["episodic", "semantic"]
    ```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import SystemMessage

from langgraph_recall._memory.messages import TokenCounter, count_tokens, memory_line

__all__ = ["blend_within_budget", "merge_ranked"]


def merge_ranked(*ranked: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Several best-first result lists as one, by score (first list first on ties and for
    results without a score); a key found twice is kept once.

    Example:
        ```python
        from langgraph_recall._memory.blend import merge_ranked

        facts = [{"key": "f", "score": 0.5}]
        episodes = [{"key": "e", "score": 0.7}, {"key": "f", "score": 0.5}]
        assert [m["key"] for m in merge_ranked(facts, episodes)] == ["e", "f"]
        ```
    """
    seen: set[tuple[tuple[str, ...], str]] = set()
    rows: list[tuple[float, int, int, dict[str, Any]]] = []
    for group, results in enumerate(ranked):
        for rank, memory in enumerate(results):
            ident = (tuple(memory.get("namespace") or ()), str(memory.get("key")))
            if memory.get("key") is not None and ident in seen:
                continue
            seen.add(ident)
            score = memory.get("score")
            rows.append(
                (-(score if isinstance(score, (int, float)) else 0.0), group, rank, dict(memory))
            )
    rows.sort(key=lambda row: row[:3])
    return [row[3] for row in rows]


def blend_within_budget(
    memories: Sequence[Mapping[str, Any]],
    *,
    token_budget: int,
    episode_share: float,
    token_counter: TokenCounter = count_tokens,
) -> list[dict[str, Any]]:
    """Keep memories in their (best-first) order while their lines fit ``token_budget``;
    ``episodic`` ones together take at most ``episode_share`` of it (facts may take all).

    A memory that does not fit is skipped and smaller later ones may still fit.
    """
    episode_budget = token_budget * episode_share
    kept: list[dict[str, Any]] = []
    used = episodes = 0
    for memory in memories:
        cost = token_counter([SystemMessage(memory_line(memory))])
        is_episode = memory.get("kind") == "episodic"
        if used + cost > token_budget or (is_episode and episodes + cost > episode_budget):
            continue
        kept.append(dict(memory))
        used += cost
        episodes += cost if is_episode else 0
    return kept
