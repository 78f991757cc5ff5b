"""Which extractor a node uses when it is given a model, or nothing.

* a chat model → :class:`~langgraph_recall.extraction.LLMExtractor` on it;
* the offline :class:`~langgraph_recall.offline.TemplatedResponder` (not an LLM: it cannot
  follow an extraction prompt) → the rule-based extractor, its offline counterpart;
* nothing → the rule-based extractor, which reads first-person statements in English and
  Chinese only ("My name is…", "I live in…", 我叫…, 我住在…): a WARNING, once per process,
  says so and how to pass a model, because an agent that runs a real LLM would otherwise
  miss every other fact without a sign.

Example:
    ```python
    from langgraph_recall.extraction import LLMExtractor, RuleBasedExtractor
    from langgraph_recall.extraction.choice import extractor_for
    from langgraph_recall.offline import ScriptedChatModel, TemplatedResponder

    assert isinstance(extractor_for(ScriptedChatModel(), who="ExtractNode"), LLMExtractor)
    assert isinstance(extractor_for(TemplatedResponder(), who="ExtractNode"), RuleBasedExtractor)
    ```
"""

from __future__ import annotations

import logging
import threading

from langchain_core.language_models import BaseChatModel

from langgraph_recall.extraction.llm import LLMExtractor
from langgraph_recall.extraction.rules import RuleBasedExtractor
from langgraph_recall.extraction.types import MemoryExtractor

__all__ = ["IMPLICIT_RULES_WARNING", "extractor_for"]

logger = logging.getLogger("langgraph_recall.extraction")

IMPLICIT_RULES_WARNING = (
    "%s: no model given, so memories are extracted by the offline rule-based extractor, "
    "which reads first-person statements in English and Chinese only ('My name is ...', "
    "'I live in ...', '我叫...', '我住在...'): other facts and other languages are not "
    "remembered. Pass your chat model "
    "(MemoryMiddleware(model), ExtractNode(model=model), build_graph(model)) to extract with "
    "it, or extractor=RuleBasedExtractor() to choose the offline extractor explicitly."
)
"""The once-per-process warning (``%s``: the component that chose)."""

_warned = threading.Event()


def _is_offline_responder(model: BaseChatModel) -> bool:
    from langgraph_recall.offline import TemplatedResponder

    return isinstance(model, TemplatedResponder)


def extractor_for(model: BaseChatModel | None, *, who: str) -> MemoryExtractor:
    """The extractor for ``model`` (see the module's rules); ``who`` names the component
    in the warning logged when nothing was given."""
    if model is None:
        if not _warned.is_set():
            _warned.set()
            logger.warning(IMPLICIT_RULES_WARNING, who)
        return RuleBasedExtractor()
    if _is_offline_responder(model):
        return RuleBasedExtractor()
    return LLMExtractor(model)
