"""Retrieval configuration: one frozen place for every ranking knob.

Example:
    >>> from datetime import timedelta
    >>> from langgraph_recall.retrieval import RetrievalConfig
    >>> config = RetrievalConfig(recency_weight=0.3, recency_half_life=timedelta(days=7))
    >>> config.fusion
    'weighted'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Literal

from langgraph_recall.errors import ConfigurationError

__all__ = ["FusionMethod", "RetrievalConfig"]

FusionMethod = Literal["weighted", "rrf"]
_FUSION_METHODS: tuple[str, ...] = ("weighted", "rrf")


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    """How the memory store finds and orders memories for a query.

    Search is two stages. The store asks Postgres for candidates: the best
    ``lexical_candidates`` by BM25 over the full-text index and the best
    ``vector_candidates`` by (mean) cosine similarity, with both signals filled in for every
    candidate. :func:`~langgraph_recall.retrieval.rank` then fuses the two signals into
    one relevance (``fusion``) and adds the Generative-Agents factors: recency
    (exponential decay with ``recency_half_life``), importance and optional access
    reinforcement, each scaled by its weight.

    The defaults were tuned on held-out LoCoMo conversations (see the benchmark notes in
    the README): relevance dominates, and recency and importance break near-ties.

    Attributes:
        lexical_candidates: How many BM25 matches the store fetches.
        vector_candidates: How many nearest vectors the store fetches.
        fusion: ``"weighted"`` — min-max normalise each signal over the candidates and
            take the weighted sum (keeps score gaps; the better choice when both signals
            are known for every candidate) — or ``"rrf"`` (reciprocal rank fusion).
        lexical_weight: Weight of the lexical signal in the fusion.
        vector_weight: Weight of the vector signal in the fusion.
        rrf_k: The ``k`` constant of reciprocal rank fusion.
        relevance_weight: Weight of the fused relevance in the final score.
        recency_weight: Weight of recency (``0.5 ** (age / half_life)``).
        recency_half_life: Half-life of recency, measured from a memory's event time.
        importance_weight: Weight of importance (1–10 mapped onto 0–1; unknown counts as 5).
        access_weight: Weight of access reinforcement (``log1p(count)`` over the
            candidates' maximum, decayed by the time since the last access).
        time_match_weight: Weight of the time match: when the query names a date, month
            or year (``query_time_window``), memories whose event time falls in that
            period score 1, others ``0.5 ** (days outside / time_match_half_life)``.
            Queries that name no date are unaffected. 0 turns it off.
        time_match_half_life: Distance outside the named period at which the time
            match halves.
        bm25_k1: BM25 term-frequency saturation.
        bm25_b: BM25 document-length normalisation.
        text_search_config: Postgres text-search configuration (``regconfig``) used for
            both indexing and querying, e.g. ``"english"`` (stemming and stop words) or
            ``"simple"`` (any language, no stemming).
        min_relevance: Drop candidates whose fused relevance is below this (0–1 for the
            weighted fusion); ``None`` keeps all.
        update_weight: Most the update term may add: a memory that states a change
            ("now averages 250 ms", 现在改用…) is lifted just above an older candidate about
            the same question when it is less than this behind it. 0 turns it off.
        update_similarity: How close in fused relevance (as a ratio, in (0, 1]) an older
            candidate must be to count as being about the same question.
        entity_weight: Weight of the entity link: when the query names entities (people,
            places, organisations, projects: the offline entity finder), memories of the
            same scope linked to them score their link strength in [0, 1] — rare entities
            count more (inverse document frequency within the scope) — times this weight,
            and up to ``entity_candidates`` of them join the candidates even when neither
            the lexical nor the vector list found them. 0 (the default: on LoCoMo and BEAM
            no weight raised recall) turns it off exactly — no link is read, the ranking
            is the one without links; the store still writes links, so a weight can be
            set later without rewriting memories.
        entity_hops: How far links reach: 1 — memories that name an entity of the query;
            2 — also memories that name an entity those memories name (at half strength).
        entity_candidates: How many linked memories (the strongest links first) may join
            the candidates.

    Example:
        >>> RetrievalConfig(fusion="rrf", rrf_k=30).rrf_k
        30
    """

    lexical_candidates: int = 40
    vector_candidates: int = 40
    fusion: FusionMethod = "weighted"
    lexical_weight: float = 0.4
    vector_weight: float = 0.6
    rrf_k: int = 60
    relevance_weight: float = 1.0
    recency_weight: float = 0.05
    recency_half_life: timedelta = field(default=timedelta(days=30))
    importance_weight: float = 0.05
    access_weight: float = 0.0
    time_match_weight: float = 0.3
    time_match_half_life: timedelta = field(default=timedelta(days=7))
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    text_search_config: str = "english"
    min_relevance: float | None = None
    update_weight: float = 0.15
    update_similarity: float = 0.8
    entity_weight: float = 0.0
    entity_hops: int = 1
    entity_candidates: int = 20

    def __post_init__(self) -> None:
        if (
            isinstance(self.entity_hops, bool)
            or not isinstance(self.entity_hops, int)
            or self.entity_hops not in (1, 2)
        ):
            raise ConfigurationError(
                f"RetrievalConfig.entity_hops must be 1 or 2, got {self.entity_hops!r}"
            )
        for name in ("lexical_candidates", "vector_candidates", "rrf_k", "entity_candidates"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(
                    f"RetrievalConfig.{name} must be a positive integer, got {value!r}"
                )
        if self.fusion not in _FUSION_METHODS:
            raise ConfigurationError(
                f"RetrievalConfig.fusion must be one of {_FUSION_METHODS}, got {self.fusion!r}"
            )
        for name in (
            "lexical_weight",
            "vector_weight",
            "relevance_weight",
            "recency_weight",
            "importance_weight",
            "access_weight",
            "time_match_weight",
            "update_weight",
            "entity_weight",
            "bm25_k1",
        ):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value < 0
            ):
                raise ConfigurationError(
                    f"RetrievalConfig.{name} must be a finite number >= 0, got {value!r}"
                )
        if self.lexical_weight + self.vector_weight <= 0:
            raise ConfigurationError(
                "RetrievalConfig: lexical_weight + vector_weight must be > 0 "
                "(set one of them to a positive value)"
            )
        if (
            isinstance(self.update_similarity, bool)
            or not isinstance(self.update_similarity, (int, float))
            or not 0.0 < self.update_similarity <= 1.0
        ):
            raise ConfigurationError(
                "RetrievalConfig.update_similarity must be in (0, 1], "
                f"got {self.update_similarity!r}"
            )
        if not 0.0 <= self.bm25_b <= 1.0:
            raise ConfigurationError(f"RetrievalConfig.bm25_b must be in [0, 1], got {self.bm25_b}")
        if not isinstance(self.recency_half_life, timedelta) or self.recency_half_life <= timedelta(
            0
        ):
            raise ConfigurationError(
                "RetrievalConfig.recency_half_life must be a positive timedelta, "
                f"got {self.recency_half_life!r}"
            )
        if not isinstance(
            self.time_match_half_life, timedelta
        ) or self.time_match_half_life <= timedelta(0):
            raise ConfigurationError(
                "RetrievalConfig.time_match_half_life must be a positive timedelta, "
                f"got {self.time_match_half_life!r}"
            )
        if not self.text_search_config or not isinstance(self.text_search_config, str):
            raise ConfigurationError(
                "RetrievalConfig.text_search_config must name a Postgres text-search "
                "configuration such as 'english' or 'simple'"
            )
        if self.min_relevance is not None and not math.isfinite(self.min_relevance):
            raise ConfigurationError("RetrievalConfig.min_relevance must be finite or None")
