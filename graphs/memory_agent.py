"""``langgraph.json`` entry point of the memory chat agent (built in the package).

The graph lives in :mod:`langgraph_recall.graphs` so ``pip install`` users import it from
anywhere; this file only names it for the LangGraph server (``./graphs/memory_agent.py:graph``).
"""

from __future__ import annotations

from langgraph_recall.graphs import aflush, build_graph, flush
from langgraph_recall.graphs.platform import memory_agent as graph

__all__ = ["aflush", "build_graph", "flush", "graph"]
