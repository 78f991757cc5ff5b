"""Episodic memory: raw conversation turns kept with their neighbouring turns as context.

Facts extracted from a turn lose how it was said and what it answered; an *episode* keeps
the turn itself (``kind="episodic"``) with the turns around it as indexed ``context``, so a
later question about the conversation finds the turn that answers it. Three ways in:

* ``ExtractNode(episodes=EpisodeConfig())`` / ``MemoryMiddleware(episodes=...)``: every
  user turn of a live conversation, beside the extracted facts;
* :func:`ingest_history` / :func:`aingest_history`: an existing history in bulk
  (batched embedding, a progress bar, re-ingestion costs reads only);
* :func:`plan_episodes`: the pure planner both use.

:class:`TurnEmbeddings` (the store's embedder) embeds each turn once and composes an
episode's vector from its turns', so ingesting a history costs one short embedding per turn.

``RetrieveNode(episodes=EpisodeConfig())`` searches facts and episodes side by side and
blends them under its token budget (:func:`blend_within_budget`). Episodes pass the same
PII filter as facts and live in the user's namespace, so
:func:`langgraph_recall.forget_user` erases them.

Example:
    ```python
    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.episodes import EpisodeConfig, ingest_history

    store = InMemoryStore()
    report = ingest_history(store, [{"role": "user", "text": "We moved to Porto in March."}],
                            user_id="u1", config=EpisodeConfig())
    assert report.written == 1
    ```
"""

from __future__ import annotations

from langgraph_recall.episodes._embed import TurnEmbeddings
from langgraph_recall.episodes._ingest import (
    IngestOptions,
    IngestReport,
    aingest_history,
    ingest_history,
)
from langgraph_recall.episodes._plan import (
    EPISODE_INDEX_FIELDS,
    Episode,
    EpisodeConfig,
    EpisodeTurn,
    plan_episodes,
)

__all__ = [
    "EPISODE_INDEX_FIELDS",
    "Episode",
    "EpisodeConfig",
    "EpisodeTurn",
    "IngestOptions",
    "IngestReport",
    "TurnEmbeddings",
    "aingest_history",
    "ingest_history",
    "plan_episodes",
]
