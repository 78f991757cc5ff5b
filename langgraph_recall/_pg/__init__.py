"""One Postgres layer for the checkpointer, the store and the leases.

* :mod:`~langgraph_recall._pg.program` -- the statement vocabulary: a program yields
  :class:`~langgraph_recall._pg.program.Stmt` objects and gets their rows back (no I/O);
* :mod:`~langgraph_recall._pg.run_async` -- connectors, the runner, the probe and the pool
  factory, written once; :mod:`~langgraph_recall._pg.run_sync` is generated from it by
  ``scripts/unasync.py``;
* :mod:`~langgraph_recall._pg.pool` -- the one ``PoolConfig``, the pool health policy and
  the connection settings;
* :mod:`~langgraph_recall._pg.errors` -- the one map from database failures to our errors;
* :mod:`~langgraph_recall._pg.dsn` -- the one DSN resolution (and ``ENV_DSN``).
"""

__all__: list[str] = []
