"""The memory layer under everything users import: the pieces the nodes, the middleware,
the episode ingestion and the erasure share. It imports none of them.

* :mod:`~langgraph_recall._memory.context` -- the namespace default, the store's default
  TTL, the state's messages and :class:`~langgraph_recall._memory.context.NodeContext`
  (the runtime view of one call);
* :mod:`~langgraph_recall._memory.registry` -- the thread registry: which threads ran for
  which user (:class:`~langgraph_recall._memory.registry.ThreadLink`), read by the erasure;
* :mod:`~langgraph_recall._memory.messages` -- message trimming and grouping, the query
  built from the last turns, token counting and the ``<memory>`` block rendering;
* :mod:`~langgraph_recall._memory.blend` -- memories and episodes merged by score and
  kept under one token budget.
"""

__all__: list[str] = []
