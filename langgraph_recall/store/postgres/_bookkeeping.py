"""Bookkeeping programs: TTL refreshes and access counts, each in a transaction of its own (pure).

Their statements are ``isolated`` (see :class:`~langgraph_recall._pg.program.Stmt`): they
never share a transaction with a user's writes, and what gave way to a lock is retried with
the next operation. On a read-only server (a hot standby) they are refused: the reads they
follow still answer, the counts are dropped, a warning says so once per store, and
bookkeeping pauses for :data:`READ_ONLY_PAUSE` seconds before it tries again (the server may
have been promoted).
"""

from __future__ import annotations

import logging
import time

from langgraph_recall._pg.program import Stmt
from langgraph_recall.store.postgres import _sql
from langgraph_recall.store.postgres._state import StoreState
from langgraph_recall.store.postgres._types import Program

__all__ = ["READ_ONLY_PAUSE", "BookkeepingPrograms"]

logger = logging.getLogger("langgraph_recall.store")

READ_ONLY_PAUSE = 30.0
"""Seconds bookkeeping is skipped after a read-only server refused it."""


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
        if not pending or self._read_only_pause():
            return
        outcome = yield Stmt(
            _sql.REFRESH_TTL, {"ids": pending}, isolated=True, locks=_sql.LOCK_NAMESPACES_OF_IDS
        )
        if self._refused(outcome):
            return
        if isinstance(outcome, Exception):
            with self._refresh_lock:
                self._refresh_retry.update(pending)

    def _write_access(self, *, force: bool) -> Program[None]:
        """Write the searches' pending access counts if due (or ``force``), in their own
        transaction; counts that gave way to a lock go back to the log for the next try."""
        if not (force or self._access.due()):
            return
        batch = self._access.drain()
        if batch is None or self._read_only_pause():
            return
        outcome = yield Stmt(
            _sql.RECORD_ACCESS, batch.params(), isolated=True, locks=_sql.LOCK_NAMESPACES_OF_IDS
        )
        if self._refused(outcome):
            return
        if isinstance(outcome, Exception):
            self._access.restore(batch)

    def _read_only_pause(self) -> bool:
        """Whether a read-only server refused bookkeeping less than READ_ONLY_PAUSE s ago."""
        return time.monotonic() < self._read_only_until

    def _refused(self, outcome: object) -> bool:
        """Note a refusal by a read-only server (warned once per store)."""
        if not isinstance(outcome, _sql.BOOKKEEPING_REFUSED):
            return False
        self._read_only_until = time.monotonic() + READ_ONLY_PAUSE
        if not self._read_only_warned:
            self._read_only_warned = True
            logger.warning(
                "the store's server is read-only (a hot standby, or "
                "default_transaction_read_only): searches answer, but their access counts "
                "and TTL refreshes are not recorded there; they are on the primary"
            )
        return True

    def _flush_access_program(self) -> Program[None]:
        yield from self._write_access(force=True)
