"""AccessLog: the write-behind buffer of searches' access counts (pure, injected clock)."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest

from langgraph_recall.store._access import AccessLog

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_counts_merge_and_keep_the_latest_access_time() -> None:
    log = AccessLog(interval=1.0, clock=Clock())
    log.record([5, 3], T0 + timedelta(seconds=2))
    log.record([3, 3], T0)  # an older timestamp never moves last access back
    batch = log.drain()
    assert batch is not None
    assert batch.ids == [3, 5]  # ascending: writers lock rows in one order
    assert batch.counts == [3, 1]
    assert batch.last == [T0 + timedelta(seconds=2)] * 2
    assert batch.params() == {"ids": [3, 5], "counts": [3, 1], "last": batch.last}
    assert log.drain() is None and len(log) == 0


def test_due_after_the_interval_since_the_oldest_pending_access() -> None:
    clock = Clock()
    log = AccessLog(interval=1.0, clock=clock)
    assert not log.due()  # nothing pending is never due
    log.record([1], T0)
    clock.now += 0.6
    log.record([2], T0)  # a later record does not restart the wait
    assert not log.due()
    clock.now += 0.5
    assert log.due()
    log.drain()
    assert not log.due()
    log.record([1], T0)
    assert not log.due()  # the wait starts again with the next record


def test_due_when_many_memories_wait_and_always_with_interval_zero() -> None:
    log = AccessLog(interval=60, max_pending=3, clock=Clock())
    log.record([1, 2], T0)
    assert not log.due()
    log.record([3], T0)
    assert log.due()
    eager = AccessLog(interval=0, clock=Clock())
    eager.record([1], T0)
    assert eager.due()


def test_bad_settings_are_rejected() -> None:
    with pytest.raises(ValueError, match="interval"):
        AccessLog(interval=-1)
    with pytest.raises(ValueError, match="max_pending"):
        AccessLog(max_pending=0)


def test_concurrent_records_lose_no_count() -> None:
    log = AccessLog(interval=60)

    def search() -> None:
        for _ in range(500):
            log.record([1, 2], T0)

    threads = [threading.Thread(target=search) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    batch = log.drain()
    assert batch is not None and batch.counts == [4000, 4000]
