"""Bookkeeping programs: TTL refreshes and access counts, each in a transaction of its own (pure).

Their statements are ``isolated`` (see :class:`~langgraph_recall._pg.program.Stmt`): they
never share a transaction with a user's writes, and what gave way to a lock is retried with
the next operation.
"""

from __future__ import annotations

from langgraph_recall._pg.program import Stmt
from langgraph_recall.store.postgres import _sql
from langgraph_recall.store.postgres._state import StoreState
from langgraph_recall.store.postgres._types import Program

__all__ = ["BookkeepingPrograms"]


class BookkeepingPrograms(StoreState):
    """Bookkeeping programs of the Postgres memory store."""

    def _refresh_ttl(self, ids: list[int]) -> Program[None]:
        """Extend the TTL of what the batch read, in its own transaction (see ``Sql.isolated``).

        A refresh that gave way to a lock is retried with the next operation; the lock's
        holder is a put (which restarts the TTL anyway), a delete, or another bookkeeping
        statement.
        """
        with self._refresh_lock:
            pending = sorted(set(ids) | self._refresh_retry)
            self._refresh_retry.clear()
        if not pending:
            return
        outcome = yield Stmt(
            _sql.REFRESH_TTL, {"ids": pending}, isolated=True, locks=_sql.LOCK_NAMESPACES_OF_IDS
        )
        if isinstance(outcome, Exception):
            with self._refresh_lock:
                self._refresh_retry.update(pending)

    def _write_access(self, *, force: bool) -> Program[None]:
        """Write the searches' pending access counts if due (or ``force``), in their own
        transaction; counts that gave way to a lock go back to the log for the next try."""
        if not (force or self._access.due()):
            return
        batch = self._access.drain()
        if batch is None:
            return
        outcome = yield Stmt(
            _sql.RECORD_ACCESS, batch.params(), isolated=True, locks=_sql.LOCK_NAMESPACES_OF_IDS
        )
        if isinstance(outcome, Exception):
            self._access.restore(batch)

    def _flush_access_program(self) -> Program[None]:
        yield from self._write_access(force=True)
