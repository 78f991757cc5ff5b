"""Ranking of memory search candidates: hybrid fusion plus Generative-Agents factors.

Pure functions and records, no I/O. The Postgres store fetches candidates (BM25 over
``tsvector`` and vector similarity) and orders them with :func:`rank`.

Example:
    >>> from datetime import datetime, timezone
    >>> from langgraph_recall.retrieval import Candidate, RetrievalConfig, rank
    >>> ranked = rank([Candidate("a", lexical_score=1.0, lexical_rank=1)],
    ...               config=RetrievalConfig(), now=datetime.now(timezone.utc))
    >>> ranked[0][0].id
    'a'
"""

from __future__ import annotations

from langgraph_recall.retrieval._config import FusionMethod, RetrievalConfig
from langgraph_recall.retrieval._rank import Candidate, ScoreBreakdown, rank, rank_explained
from langgraph_recall.retrieval._time import TimeWindow, query_time_window, time_match_score
from langgraph_recall.retrieval._updates import asks_about_the_past, states_change

__all__ = [
    "Candidate",
    "FusionMethod",
    "RetrievalConfig",
    "ScoreBreakdown",
    "TimeWindow",
    "asks_about_the_past",
    "query_time_window",
    "rank",
    "rank_explained",
    "states_change",
    "time_match_score",
]
