"""Memory extraction: candidates from a turn, PII filtering, consolidation.

* :class:`LLMExtractor` — any LangChain chat model, structured output, one extraction call
  and one batched consolidation call per turn (the default when a model is given).
* :class:`RuleBasedExtractor` — deterministic offline rules for first-person facts, with a
  deterministic consolidator (not an LLM; for tests, demos and air-gapped use).
* :class:`PIIFilter`, :func:`looks_memorable`, :func:`resolve_date_phrase`,
  :func:`plan_writes`, :func:`states_something` — the pure pieces the ``extract`` node is
  built from; :func:`extractor_for` — which extractor a model (or nothing) gets.

Example:
    ```python
    from datetime import datetime, timezone

    from langchain_core.messages import HumanMessage

    from langgraph_recall.extraction import RuleBasedExtractor

    facts = RuleBasedExtractor().extract([HumanMessage("I live in Paris.")],
                                         now=datetime.now(timezone.utc))
    assert facts[0].slot == "location"
    ```
"""

from __future__ import annotations

from langgraph_recall.extraction.choice import extractor_for
from langgraph_recall.extraction.dates import resolve_date_phrase
from langgraph_recall.extraction.llm import LLMExtractor
from langgraph_recall.extraction.pii import PIIFilter, PIIMatch, find_pii
from langgraph_recall.extraction.prefilter import looks_memorable, states_something
from langgraph_recall.extraction.rules import RuleBasedExtractor
from langgraph_recall.extraction.types import (
    MEMORY_KINDS,
    Action,
    ConsolidationDecision,
    ExistingMemory,
    MemoryCandidate,
    MemoryExtractor,
)

__all__ = [
    "MEMORY_KINDS",
    "Action",
    "ConsolidationDecision",
    "ExistingMemory",
    "LLMExtractor",
    "MemoryCandidate",
    "MemoryExtractor",
    "PIIFilter",
    "PIIMatch",
    "RuleBasedExtractor",
    "extractor_for",
    "find_pii",
    "looks_memorable",
    "resolve_date_phrase",
    "states_something",
]
