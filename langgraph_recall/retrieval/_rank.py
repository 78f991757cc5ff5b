"""Hybrid fusion plus Generative-Agents scoring of memory candidates (pure, no I/O).

Example:
    >>> from datetime import datetime, timezone
    >>> from langgraph_recall.retrieval import Candidate, RetrievalConfig, rank
    >>> now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> ranked = rank(
    ...     [Candidate("a", lexical_score=3.0, lexical_rank=1, vector_similarity=0.2),
    ...      Candidate("b", lexical_score=0.0, vector_similarity=0.9, vector_rank=1)],
    ...     config=RetrievalConfig(), now=now)
    >>> [candidate.id for candidate, _ in ranked]
    ['b', 'a']
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from langgraph_recall.errors import ConfigurationError
from langgraph_recall.retrieval._config import RetrievalConfig
from langgraph_recall.retrieval._time import TimeWindow, time_match_score

__all__ = [
    "Candidate",
    "ScoreBreakdown",
    "access_score",
    "fuse_relevance",
    "importance_score",
    "rank",
    "rank_explained",
    "recency_score",
    "relevance_parts",
]

_NEUTRAL_IMPORTANCE = 5.0


@dataclass(frozen=True, slots=True)
class Candidate:
    """One memory the store's candidate queries found, with the signals ranking needs.

    Attributes:
        id: Opaque identity chosen by the store (row id, ``(namespace, key)``, ...).
        lexical_score: Lexical relevance (BM25), higher is better; ``None`` or ``0`` when
            the memory does not match the query's terms.
        lexical_rank: 1-based position in the lexical candidate list, ``None`` if absent.
        vector_similarity: Cosine similarity to the query embedding (the mean over its two
            embeddings for a memory indexed with context).
        vector_rank: 1-based position in the vector candidate list, ``None`` if absent.
        importance: Importance on the 1–10 scale; ``None`` counts as 5.
        event_time: When the memory became true (``valid_from``, else last update);
            recency decays from here. Must be timezone-aware.
        last_accessed: When search last returned it (for access reinforcement).
        access_count: How often search returned it.
        states_change: Whether its text states a change ("now averages 250 ms"; see
            :func:`~langgraph_recall.retrieval.states_change`): such a memory can rank
            above an older one it updates (the *update* term). Or a function that says
            it, called only for a candidate that has an older one within reach (reading
            every candidate's text cost ~0.7 ms of a ~3 ms search).
        entity_link: How strongly it is linked to the entities the query names, in
            [0, 1] (0: not linked); the *entity* term is this times ``entity_weight``.
        entities: The entities that link it (for ``explain``).

    Example:
        >>> Candidate(("memories", "k1"), vector_similarity=0.8, vector_rank=1).vector_rank
        1
    """

    id: Hashable
    lexical_score: float | None = None
    lexical_rank: int | None = None
    vector_similarity: float | None = None
    vector_rank: int | None = None
    importance: float | None = None
    event_time: datetime | None = None
    last_accessed: datetime | None = None
    access_count: int = 0
    states_change: bool | Callable[[], bool] = False
    entity_link: float = 0.0
    entities: tuple[str, ...] = ()


def _says_change(candidate: Candidate) -> bool:
    flag = candidate.states_change
    return flag() if callable(flag) else flag


def _merge(first: Candidate, second: Candidate) -> Candidate:
    """Combine two rows for the same id, keeping every signal either of them knows."""

    def pick_rank(a: int | None, b: int | None) -> int | None:
        known = [r for r in (a, b) if r is not None]
        return min(known) if known else None

    def pick_max(a: float | None, b: float | None) -> float | None:
        known = [v for v in (a, b) if v is not None]
        return max(known) if known else None

    return replace(
        first,
        lexical_score=pick_max(first.lexical_score, second.lexical_score),
        lexical_rank=pick_rank(first.lexical_rank, second.lexical_rank),
        vector_similarity=pick_max(first.vector_similarity, second.vector_similarity),
        vector_rank=pick_rank(first.vector_rank, second.vector_rank),
        importance=first.importance if first.importance is not None else second.importance,
        event_time=first.event_time or second.event_time,
        last_accessed=first.last_accessed or second.last_accessed,
        access_count=max(first.access_count, second.access_count),
        states_change=_either_change(first, second),
        entity_link=max(first.entity_link, second.entity_link),
        entities=first.entities or second.entities,
    )


def _either_change(first: Candidate, second: Candidate) -> bool | Callable[[], bool]:
    if first.states_change is True or second.states_change is True:
        return True
    if not first.states_change or not second.states_change:  # one is False: the other
        return first.states_change or second.states_change
    return lambda: _says_change(first) or _says_change(second)


def _min_max(
    values: Sequence[float | None],
    *,
    missing: float | None,
    among: Sequence[bool] | None = None,
) -> list[float]:
    """Scale known values onto [0, 1]; unknown ones get ``missing`` (default: the minimum).

    ``among`` (one flag per value) limits the values that set the range; the others are
    scaled by it and clamped into [0, 1]."""
    if among is None:
        known = [v for v in values if v is not None and math.isfinite(v)]
    else:
        known = [
            v
            for v, counted in zip(values, among, strict=True)
            if counted and v is not None and math.isfinite(v)
        ]
    if not known:
        if among is not None:
            return _min_max(values, missing=missing)
        return [0.0] * len(values)
    low, high = min(known), max(known)
    span = high - low
    scaled: list[float] = []
    for value in values:
        if value is None or not math.isfinite(value):
            scaled.append(0.0 if missing is None else missing)
        elif span > 0:
            scaled.append(min(max((value - low) / span, 0.0), 1.0))
        else:
            scaled.append(1.0 if high > 0 and value >= high else 0.0)
    return scaled


def _found_by_search(candidates: Sequence[Candidate]) -> list[bool] | None:
    """Which candidates a list found (lexical or vector rank): the range of the min-max
    fusion. ``None`` (every candidate) unless some were found only through entity links,
    which are scaled by the searched candidates' range instead of stretching it."""
    flags = [c.lexical_rank is not None or c.vector_rank is not None for c in candidates]
    linked_only = any(
        not flag and c.entity_link > 0 for flag, c in zip(flags, candidates, strict=True)
    )
    return flags if linked_only else None


def relevance_parts(
    candidates: Sequence[Candidate], config: RetrievalConfig
) -> list[tuple[float, float]]:
    """The lexical and vector shares of each candidate's fused relevance (they sum to it).

    Example:
        >>> relevance_parts([Candidate("a", lexical_score=2.0, vector_similarity=0.5),
        ...                  Candidate("b", lexical_score=0.0, vector_similarity=0.1)],
        ...                 RetrievalConfig())
        [(0.4, 0.6), (0.0, 0.0)]
    """
    total_weight = config.lexical_weight + config.vector_weight
    if config.fusion == "rrf":
        best = total_weight / (config.rrf_k + 1)
        parts: list[tuple[float, float]] = []
        for c in candidates:
            lex = (
                0.0
                if c.lexical_rank is None
                else config.lexical_weight / (config.rrf_k + c.lexical_rank)
            )
            vec = (
                0.0
                if c.vector_rank is None
                else config.vector_weight / (config.rrf_k + c.vector_rank)
            )
            parts.append((lex / best, vec / best))
        return parts
    among = _found_by_search(candidates) if config.entity_weight else None
    lexical = _min_max(
        [c.lexical_score if c.lexical_score is not None else 0.0 for c in candidates],
        missing=0.0,
        among=among,
    )
    vector = _min_max([c.vector_similarity for c in candidates], missing=0.0, among=among)
    return [
        (config.lexical_weight * lex / total_weight, config.vector_weight * vec / total_weight)
        for lex, vec in zip(lexical, vector, strict=True)
    ]


def fuse_relevance(candidates: Sequence[Candidate], config: RetrievalConfig) -> list[float]:
    """Fuse lexical and vector signals into one relevance in [0, 1] per candidate.

    ``"weighted"`` min-max normalises BM25 scores (no match = 0) and cosine similarities
    over the candidate set and takes the weighted mean. ``"rrf"`` sums
    ``weight / (rrf_k + rank)`` over the lists a candidate appears in, divided by its
    best possible value so that it is also in [0, 1].

    Args:
        candidates: The candidate set (ids already unique).
        config: Fusion method and weights.

    Returns:
        One relevance per candidate, in input order.

    Example:
        >>> fuse_relevance([Candidate("a", lexical_score=2.0, vector_similarity=0.5),
        ...                 Candidate("b", lexical_score=0.0, vector_similarity=0.1)],
        ...                RetrievalConfig())
        [1.0, 0.0]
    """
    return [lex + vec for lex, vec in relevance_parts(candidates, config)]


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """Why a memory scored what it did: each term of the ranking formula, and the signals.

    The eight contributions add up to ``score`` (the ``SearchItem.score`` the store
    returns): ``lexical + vector + recency + importance + access + time_match + entity +
    update``.
    Each is its factor times its weight (``lexical``/``vector`` are the relevance weight
    times their share of the fused relevance; ``update`` lifts a newer memory that states
    a change just above an older candidate it updates, by at most ``update_weight``), so
    they compare within one search only.

    Attributes:
        lexical: Contribution of lexical (BM25) relevance.
        vector: Contribution of vector relevance.
        recency: Contribution of recency.
        importance: Contribution of importance.
        access: Contribution of access reinforcement.
        time_match: Contribution of the match with a date the query names.
        score: The final score (their sum).
        bm25: Raw BM25 score (``None``: not a lexical match).
        similarity: Raw cosine similarity to the query (``None``: not computed).
        lexical_rank: Position in the lexical candidate list.
        vector_rank: Position in the vector candidate list.
        update: Contribution of the update term (0 unless this memory states a change and
            was lifted above an older one about the same question).
        entity: Contribution of the entity link (``entity_weight`` times the link
            strength to the entities the query names; 0 when not linked).
        entities: The entities that link it to the query (empty: none).

    Example:
        >>> parts = ScoreBreakdown(0.2, 0.5, 0.05, 0.025, 0.0, 0.0, 0.775)
        >>> round(parts.lexical + parts.vector + parts.recency + parts.importance, 3)
        0.775
    """

    lexical: float
    vector: float
    recency: float
    importance: float
    access: float
    time_match: float
    score: float
    bm25: float | None = None
    similarity: float | None = None
    lexical_rank: int | None = None
    vector_rank: int | None = None
    update: float = 0.0
    entity: float = 0.0
    entities: tuple[str, ...] = ()

    def contributions(self) -> dict[str, float]:
        """The eight terms by name (they sum to :attr:`score`)."""
        return {
            "lexical": self.lexical,
            "vector": self.vector,
            "recency": self.recency,
            "importance": self.importance,
            "access": self.access,
            "time_match": self.time_match,
            "entity": self.entity,
            "update": self.update,
        }


def recency_score(event_time: datetime | None, *, now: datetime, config: RetrievalConfig) -> float:
    """Exponential decay ``0.5 ** (age / half_life)``; 0 when the time is unknown.

    Example:
        >>> from datetime import datetime, timedelta, timezone
        >>> now = datetime(2026, 1, 31, tzinfo=timezone.utc)
        >>> recency_score(now - timedelta(days=30), now=now, config=RetrievalConfig())
        0.5
    """
    if event_time is None:
        return 0.0
    age = max((now - event_time).total_seconds(), 0.0)
    return float(0.5 ** (age / config.recency_half_life.total_seconds()))


def importance_score(importance: float | None) -> float:
    """Map importance 1–10 onto 0–1 (clamped); unknown counts as 5.

    Example:
        >>> importance_score(10), importance_score(1)
        (1.0, 0.0)
    """
    value = _NEUTRAL_IMPORTANCE if importance is None else float(importance)
    if not math.isfinite(value):
        value = _NEUTRAL_IMPORTANCE
    return (min(max(value, 1.0), 10.0) - 1.0) / 9.0


def access_score(
    candidate: Candidate, *, max_count: int, now: datetime, config: RetrievalConfig
) -> float:
    """Access reinforcement: ``log1p(count) / log1p(max_count)`` decayed since last access.

    Example:
        >>> from datetime import datetime, timezone
        >>> now = datetime(2026, 1, 1, tzinfo=timezone.utc)
        >>> access_score(Candidate("a", access_count=3, last_accessed=now), max_count=3,
        ...              now=now, config=RetrievalConfig())
        1.0
    """
    if max_count <= 0 or candidate.access_count <= 0:
        return 0.0
    strength = math.log1p(candidate.access_count) / math.log1p(max_count)
    if candidate.last_accessed is None:
        return strength
    return strength * recency_score(candidate.last_accessed, now=now, config=config)


def rank(
    candidates: Iterable[Candidate],
    *,
    config: RetrievalConfig,
    now: datetime,
    time_window: TimeWindow | None = None,
    updates: bool = True,
) -> list[tuple[Candidate, float]]:
    """Order candidates by hybrid relevance plus recency, importance, access and time match.

    ``score = relevance_weight * fused_relevance + recency_weight * recency
    + importance_weight * importance + access_weight * access
    + time_match_weight * time_match + update + entity_weight * entity_link`` where every
    factor is in [0, 1]; the time
    match (:func:`~langgraph_recall.retrieval.time_match_score` of the event time) counts
    only when ``time_window`` is given. The update term lifts a candidate that states a
    change (``Candidate.states_change``) just above an older candidate about the same
    question: one whose fused relevance is within a factor ``update_similarity`` of its own
    and whose score is above its own by less than ``update_weight`` (see
    :mod:`langgraph_recall.retrieval._updates`); ``updates=False`` (a query about the past)
    leaves it out. Rows with the same ``id`` are merged first. Ties keep
    the better list position, then input order. Candidates below
    ``config.min_relevance`` are dropped. :func:`rank_explained` gives each term.

    Args:
        candidates: Rows from the store's lexical and vector candidate queries.
        config: Weights and fusion method.
        now: The reference time for recency (timezone-aware).
        time_window: The period the query names
            (:func:`~langgraph_recall.retrieval.query_time_window`), or ``None``.
        updates: Whether the update term applies (``False`` for a query that asks about
            an earlier state, :func:`~langgraph_recall.retrieval.asks_about_the_past`).

    Returns:
        ``(candidate, score)`` pairs, best first. Scores compare within one call only.

    Raises:
        ConfigurationError: If ``now`` is naive.

    Example:
        >>> from datetime import datetime, timedelta, timezone
        >>> now = datetime(2026, 1, 1, tzinfo=timezone.utc)
        >>> old = Candidate("old", vector_similarity=0.8, vector_rank=1,
        ...                 event_time=now - timedelta(days=365))
        >>> new = Candidate("new", vector_similarity=0.8, vector_rank=2, event_time=now)
        >>> [c.id for c, _ in rank([old, new], config=RetrievalConfig(), now=now)]
        ['new', 'old']
    """
    ranked = rank_explained(
        candidates, config=config, now=now, time_window=time_window, updates=updates
    )
    return [(candidate, parts.score) for candidate, parts in ranked]


def rank_explained(
    candidates: Iterable[Candidate],
    *,
    config: RetrievalConfig,
    now: datetime,
    time_window: TimeWindow | None = None,
    updates: bool = True,
    limit: int | None = None,
) -> list[tuple[Candidate, ScoreBreakdown]]:
    """:func:`rank` with each candidate's :class:`ScoreBreakdown` instead of its score.

    ``limit`` keeps only the best ``limit`` candidates (the same ones, in the same order,
    as the first ``limit`` of the whole ranking): a caller that shows a page need not pay
    for the breakdowns of the candidates below it.

    Example:
        >>> from datetime import datetime, timezone
        >>> now = datetime(2026, 1, 1, tzinfo=timezone.utc)
        >>> [(c, parts)] = rank_explained([Candidate("a", lexical_score=1.0, lexical_rank=1)],
        ...                               config=RetrievalConfig(), now=now)
        >>> round(sum(parts.contributions().values()), 9) == round(parts.score, 9)
        True
    """
    if now.tzinfo is None:
        raise ConfigurationError("rank(now=...) must be timezone-aware, e.g. datetime.now(UTC)")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
        raise ConfigurationError(f"rank_explained(limit=...) must be an int or None, got {limit!r}")
    merged: dict[Hashable, Candidate] = {}
    for candidate in candidates:
        previous = merged.get(candidate.id)
        merged[candidate.id] = candidate if previous is None else _merge(previous, candidate)
    unique = list(merged.values())
    if not unique:
        return []
    parts = relevance_parts(unique, config)
    scored = _scored(unique, parts, config=config, now=now, time_window=time_window)
    if updates and config.update_weight:
        scored = _lift_updates(scored, parts, config)
    scored.sort(key=lambda row: (-row[0], row[1], row[2]))
    if limit is not None:
        scored = scored[: max(limit, 0)]
    return [(row[3], _breakdown(row[0], row[3], row[4])) for row in scored]


# (score, best list position, input position, candidate, terms): the terms are lexical,
# vector, recency, importance, access, time match, entity and update
_Terms = tuple[float, float, float, float, float, float, float, float]
_Scored = tuple[float, int, int, Candidate, _Terms]
_NO_RANK = 1 << 30


def _scored(
    unique: Sequence[Candidate],
    parts: Sequence[tuple[float, float]],
    *,
    config: RetrievalConfig,
    now: datetime,
    time_window: TimeWindow | None,
) -> list[_Scored]:
    """Every candidate's terms and score (before the update term), in input order; those
    under ``min_relevance`` left out. Plain tuples: a search ranks ~40-80 candidates and
    shows ten, so breakdowns are built for the shown ones only (:func:`_breakdown`)."""
    max_count = max(c.access_count for c in unique)
    min_relevance = config.min_relevance
    weight = config.relevance_weight
    recency_weight, importance_weight = config.recency_weight, config.importance_weight
    access_weight, entity_weight = config.access_weight, config.entity_weight
    time_weight = config.time_match_weight if time_window is not None else 0.0
    scored: list[_Scored] = []
    for position, (candidate, (lex, vec)) in enumerate(zip(unique, parts, strict=True)):
        if min_relevance is not None and lex + vec < min_relevance:
            continue
        recency = importance = access = time_match = 0.0
        if recency_weight:
            recency = recency_weight * recency_score(candidate.event_time, now=now, config=config)
        if importance_weight:
            importance = importance_weight * importance_score(candidate.importance)
        if access_weight:
            access = access_weight * access_score(
                candidate, max_count=max_count, now=now, config=config
            )
        if time_weight and time_window is not None:
            time_match = time_weight * time_match_score(
                candidate.event_time, time_window, half_life=config.time_match_half_life
            )
        entity = 0.0
        if entity_weight and candidate.entity_link > 0:
            entity = entity_weight * min(candidate.entity_link, 1.0)
        lexical, vector = weight * lex, weight * vec
        score = lexical + vector + recency + importance + access + time_match + entity
        lexical_rank, vector_rank = candidate.lexical_rank, candidate.vector_rank
        if lexical_rank is None:
            best_rank = _NO_RANK if vector_rank is None else vector_rank
        else:
            best_rank = lexical_rank if vector_rank is None else min(lexical_rank, vector_rank)
        terms = (lexical, vector, recency, importance, access, time_match, entity, 0.0)
        scored.append((score, best_rank, position, candidate, terms))
    return scored


def _breakdown(score: float, candidate: Candidate, terms: _Terms) -> ScoreBreakdown:
    lexical, vector, recency, importance, access, time_match, entity, update = terms
    return ScoreBreakdown(
        lexical=lexical,
        vector=vector,
        recency=recency,
        importance=importance,
        access=access,
        time_match=time_match,
        score=score,
        bm25=candidate.lexical_score,
        similarity=candidate.vector_similarity,
        lexical_rank=candidate.lexical_rank,
        vector_rank=candidate.vector_rank,
        update=update,
        entity=entity,
        entities=candidate.entities if entity else (),
    )


_LIFT_MARGIN = 1e-6


def _lift_updates(
    scored: list[_Scored], parts: Sequence[tuple[float, float]], config: RetrievalConfig
) -> list[_Scored]:
    """Give each candidate that states a change its update term: just enough to rank above
    the best older candidate about the same question that it can reach within
    ``update_weight`` (oldest first, so that a chain of updates keeps its order)."""
    relevance = {row[2]: sum(parts[row[2]]) for row in scored}
    reach, similar = config.update_weight, config.update_similarity
    rows = sorted(scored, key=lambda row: (row[3].event_time is None, row[3].event_time or 0))
    final: dict[int, _Scored] = {}
    for row in rows:
        score, _, position, candidate, terms = row
        moment = candidate.event_time
        if candidate.states_change is not False and moment is not None:
            own = relevance[position]
            widest = 0.0  # the largest gap to an older candidate within reach
            for older in final.values():
                gap = older[0] - score
                if (
                    widest < gap < reach
                    and older[3].event_time is not None
                    and older[3].event_time < moment
                    and relevance[older[2]] * similar <= own
                    and relevance[older[2]] >= similar * own
                ):
                    widest = gap
            if widest > 0 and _says_change(candidate):
                lift = widest + _LIFT_MARGIN
                lexical, vector, recency, importance, access, time_match, entity, _ = terms
                lifted = (lexical, vector, recency, importance, access, time_match, entity, lift)
                row = (score + lift, row[1], position, candidate, lifted)
        final[position] = row
    return list(final.values())
