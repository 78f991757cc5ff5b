"""Memory for LangChain v1 agents (``create_agent``) and ``create_react_agent``.

Needs the ``langchain`` extra: ``pip install "langgraph-recall[langchain]"``.

=========================  ============================================================
name                       what it does
=========================  ============================================================
:class:`MemoryMiddleware`   retrieve before each model call, put the ``<memory>`` block
                           into the model request (not the state), extract after the
                           turn (inline or background)
:class:`SummaryMiddleware`  sliding summary; tool-call groups never split
:class:`MemoryPreModelHook` ``pre_model_hook`` for ``create_react_agent`` returning
                           ``llm_input_messages``
=========================  ============================================================

They reuse the graph nodes (:class:`~langgraph_recall.nodes.RetrieveNode`,
:class:`~langgraph_recall.nodes.ExtractNode`, :class:`~langgraph_recall.nodes.SummarizeNode`),
so identity, namespaces, the PII filter and consolidation behave exactly as in a
``StateGraph``. ``MemoryMiddleware`` extracts with the model it is given, else with the
agent's own model.

Example:
    ```python
    from langchain.agents import create_agent
    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.middleware import MemoryMiddleware, SummaryMiddleware
    from langgraph_recall.offline import TemplatedResponder

    model = TemplatedResponder()  # offline stand-in for your chat model
    memory = MemoryMiddleware(model)  # extracts with your model (offline: the rules)
    agent = create_agent(model, tools=[],
                         middleware=[SummaryMiddleware(extract=memory.extract), memory],
                         store=InMemoryStore())
    agent.invoke({"messages": [("user", "I live in Lisbon.")]},
                 context={"user_id": "u1"})
    assert memory.last_report.counts["added"] == 1
    ```
"""

from __future__ import annotations

from langgraph_recall.middleware.memory import MemoryMiddleware
from langgraph_recall.middleware.react import MemoryPreModelHook
from langgraph_recall.middleware.summary import SummaryMiddleware

__all__ = ["MemoryMiddleware", "MemoryPreModelHook", "SummaryMiddleware"]
