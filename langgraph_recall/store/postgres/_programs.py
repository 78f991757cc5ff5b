"""The I/O-free programs of the Postgres memory store, assembled (one class per concern).

Every operation is a generator that yields :class:`~langgraph_recall._pg.program.Stmt` /
:class:`~langgraph_recall.store._embedding.EmbedDocuments` /
:class:`~langgraph_recall.store._embedding.EmbedQueries` requests and receives their
results; the sync and async stores only run them. All input is validated before the first
request, and all SQL of one program runs in one transaction, so a failing operation writes
nothing.

* ``_state``: configuration and the state the programs share;
* ``_setup``: schema creation and migration;
* ``_batch``: the batch (gets, searches, listings, puts, deletes);
* ``_bulk``: bulk loads (large batches of puts, the HNSW index built once);
* ``_bookkeeping``: TTL refreshes and access counts;
* ``_maintenance``: invalidate, history, forget, sweep, decay.
"""

from __future__ import annotations

from langgraph_recall.store.postgres._bulk import BulkPrograms
from langgraph_recall.store.postgres._maintenance import MaintenancePrograms
from langgraph_recall.store.postgres._setup import SetupPrograms

__all__ = ["MemoryPrograms"]


class MemoryPrograms(BulkPrograms, MaintenancePrograms, SetupPrograms):
    """Configuration, validation and every I/O-free program behind both stores."""
