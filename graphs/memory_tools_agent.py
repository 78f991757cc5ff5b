"""``langgraph.json`` entry point of the memory-tools agent (built in the package).

The graph lives in :mod:`langgraph_recall.graphs`; this file only names it for the
LangGraph server (``./graphs/memory_tools_agent.py:graph``).
"""

from __future__ import annotations

from langgraph_recall.graphs import TOOLS_SYSTEM_PROMPT
from langgraph_recall.graphs import build_memory_tools_graph as build_graph
from langgraph_recall.graphs.platform import memory_tools_agent as graph

__all__ = ["TOOLS_SYSTEM_PROMPT", "build_graph", "graph"]
