"""Access reinforcement recorded by searches and written in batches (write-behind).

A search used to upsert one access row per returned memory inside its own transaction:
a write per search, WAL for every read, and two concurrent searches returning the same
memory serialised on its row lock. Searches now only :meth:`AccessLog.record` what they
returned; the counts are written together (:data:`_sql.RECORD_ACCESS`) by the store's
next operation once the oldest is ``interval`` seconds old or ``max_pending`` memories
wait, by ``forget_decayed`` (which reads them) and by ``flush_access()`` / closing a
store opened with ``from_conn_string``. A crashed process loses at most those counts;
TTL refreshes are not deferred.

Example:
    ```python
    from datetime import datetime, timezone

    from langgraph_recall.store._access import AccessLog

    log = AccessLog(interval=1.0)
    log.record([7, 9, 7], datetime.now(timezone.utc))
    batch = log.drain()
    assert batch is not None and dict(zip(batch.ids, batch.counts)) == {7: 2, 9: 1}
    ```
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = ["AccessBatch", "AccessLog"]


@dataclass(frozen=True)
class AccessBatch:
    """Pending access counts, as the parallel arrays :data:`_sql.RECORD_ACCESS` takes."""

    ids: list[int]
    counts: list[int]
    last: list[datetime]

    def params(self) -> dict[str, Any]:
        """Statement parameters (``ids``, ``counts``, ``last``)."""
        return {"ids": self.ids, "counts": self.counts, "last": self.last}


class AccessLog:
    """Thread-safe buffer of access counts per memory id, drained in batches.

    Args:
        interval: Seconds the oldest pending access may wait; 0 writes on every operation.
        max_pending: Distinct memories that make a write due regardless of age.
        clock: Monotonic clock (injectable for tests).
    """

    def __init__(
        self,
        interval: float = 1.0,
        max_pending: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if interval < 0 or max_pending <= 0:
            raise ValueError("interval must be >= 0 and max_pending > 0")
        self.interval = interval
        self.max_pending = max_pending
        self._clock = clock
        self._lock = threading.Lock()
        self._counts: dict[int, int] = {}
        self._last: dict[int, datetime] = {}
        self._oldest: float | None = None

    def __len__(self) -> int:
        with self._lock:
            return len(self._counts)

    def record(self, ids: Iterable[int], at: datetime) -> None:
        """Count one access of each id (repeats count again) at ``at``."""
        with self._lock:
            for memory_id in ids:
                self._counts[memory_id] = self._counts.get(memory_id, 0) + 1
                previous = self._last.get(memory_id)
                self._last[memory_id] = at if previous is None else max(previous, at)
            if self._counts and self._oldest is None:
                self._oldest = self._clock()

    def due(self) -> bool:
        """Whether pending counts should be written now."""
        with self._lock:
            if self._oldest is None:
                return False
            return (
                len(self._counts) >= self.max_pending
                or self._clock() - self._oldest >= self.interval
            )

    def restore(self, batch: AccessBatch) -> None:
        """Put a drained batch back (its write gave way to a lock); counts add up."""
        with self._lock:
            for memory_id, count, last in zip(batch.ids, batch.counts, batch.last, strict=True):
                self._counts[memory_id] = self._counts.get(memory_id, 0) + count
                previous = self._last.get(memory_id)
                self._last[memory_id] = last if previous is None else max(previous, last)
            if self._counts and self._oldest is None:
                self._oldest = self._clock()

    def drain(self) -> AccessBatch | None:
        """Take every pending count (ids ascending: upserts lock rows in one order)."""
        with self._lock:
            if not self._counts:
                return None
            ids = sorted(self._counts)
            batch = AccessBatch(ids, [self._counts[i] for i in ids], [self._last[i] for i in ids])
            self._counts.clear()
            self._last.clear()
            self._oldest = None
            return batch
