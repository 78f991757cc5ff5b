"""Ready-made memory graphs, installed with the package.

=================================  ===================================================
graph                              what it is
=================================  ===================================================
:func:`build_graph`                the memory chat agent: ``summarize → retrieve →
                                   inject → respond → extract [→ reflect]``
:func:`build_memory_tools_graph`   an agent that manages memory with ``remember`` /
                                   ``recall`` / ``forget`` tools
=================================  ===================================================

Both return a compiled graph; pass ``store=`` and ``checkpointer=`` (ours or any
LangGraph one), or ``None`` to let the LangGraph server supply them at run time
(:mod:`langgraph_recall.graphs.platform` holds the entry points ``langgraph.json`` names).

Example:
    ```python
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.graphs import build_graph

    agent = build_graph(None, store=InMemoryStore(), checkpointer=InMemorySaver())
    agent.invoke({"messages": [("user", "My name is Zhang San.")]},
                 {"configurable": {"user_id": "u1", "thread_id": "t1"}})
    reply = agent.invoke({"messages": [("user", "What's my name?")]},
                         {"configurable": {"user_id": "u1", "thread_id": "t2"}})
    assert "Zhang San" in reply["messages"][-1].content
    ```
"""

from __future__ import annotations

from langgraph_recall.graphs.memory_agent import aflush, build_graph, flush
from langgraph_recall.graphs.memory_tools_agent import TOOLS_SYSTEM_PROMPT
from langgraph_recall.graphs.memory_tools_agent import build_graph as build_memory_tools_graph

__all__ = ["TOOLS_SYSTEM_PROMPT", "aflush", "build_graph", "build_memory_tools_graph", "flush"]
