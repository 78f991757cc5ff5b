"""The fencing-token layout and the release queue, as pure functions (no backend)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langgraph_recall.errors import BackendUnavailableError
from langgraph_recall.lease import InMemoryLeaseBackend, Lease, LeaseOptions, _recovery
from langgraph_recall.lease._recovery import ReleaseQueue, queue_of, release_or_queue
from langgraph_recall.lease._session import acquire, new_owner_id
from langgraph_recall.lease._tokens import (
    MAX_TOKEN,
    SECRET_SPAN,
    next_token,
    secret_part,
    sequence_of,
)

clock = st.integers(0, 10**13)
secret = st.integers(0, SECRET_SPAN - 1)


@given(previous=st.none() | st.integers(0, 10**18), now=clock, digits=secret)
def test_next_token_strictly_increases_and_is_floored_at_the_clock(
    previous: int | None, now: int, digits: int
) -> None:
    token = next_token(previous, now_ms=now, secret=digits)
    assert token % SECRET_SPAN == digits
    assert sequence_of(token) >= now
    if previous is not None:
        assert token > previous and sequence_of(token) > sequence_of(previous)
    assert token <= MAX_TOKEN or now > 9 * 10**12  # the layout lasts ~290 years from 2025


@given(lost=st.lists(st.integers(0, 10**12), min_size=1), later=st.integers(1, 10**6))
def test_a_server_that_lost_tokens_issues_none_of_them_again(lost: list[int], later: int) -> None:
    """Tokens issued at clock values ``lost`` are gone with the server's state; the restored
    server (no memory of them, its clock moved on) never issues one of them again."""
    issued = []
    previous = None
    for now in sorted(lost):
        previous = next_token(previous, now_ms=now, secret=secret_part())
        issued.append(previous)
    fresh = next_token(None, now_ms=sequence_of(max(issued)) + later, secret=secret_part())
    assert fresh > max(issued)


def test_secret_digits_are_random_and_owner_ids_unguessable() -> None:
    assert len({secret_part() for _ in range(200)}) > 190
    owners = {new_owner_id() for _ in range(100)}
    assert len(owners) == 100 and all(len(o.rsplit(":", 1)[1]) == 32 for o in owners)


def test_lease_repr_hides_its_secrets() -> None:
    lease = Lease("t", "owner-secret", 1234567890123)
    assert "1234567890123" not in repr(lease) and "owner-secret" not in str(lease)
    assert lease == Lease("t", "owner-secret", 1234567890123)


def test_release_queue_drops_what_expired_on_its_own() -> None:
    now = [0.0]
    queue = ReleaseQueue(clock=lambda: now[0])
    backend = InMemoryLeaseBackend()
    lease = backend.try_acquire("t", "a", 5.0)
    assert lease is not None
    queue.add(lease, 5.0)
    now[0] = 6.0
    assert queue.retry_sync(backend) == 0 and len(queue) == 0


class Flaky(InMemoryLeaseBackend):
    def __init__(self) -> None:
        super().__init__()
        self.down = True
        self.releases = 0

    def release(self, lease: Lease) -> None:
        if self.down:
            raise ConnectionError("the backend is failing over")
        self.releases += 1
        super().release(lease)


def test_a_worker_reclaims_its_own_lease_when_the_release_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # no background retrier: the next acquisition alone must release the worker's own lease
    monkeypatch.setattr(_recovery, "_start_thread_retrier", lambda backend, queue: None)
    backend = Flaky()
    options = LeaseOptions.create(strategy="reject", ttl=30.0)
    lease = acquire(backend, "t", options)
    release_or_queue(backend, lease, options.ttl)  # the run was cut: release failed, queued
    assert len(queue_of(backend)) == 1
    backend.down = False
    again = acquire(backend, "t", options)  # not busy: the worker releases its own lease first
    assert again.token > lease.token and backend.releases == 1


def test_a_failed_release_is_retried_in_the_background() -> None:
    import time

    backend = Flaky()
    lease = backend.try_acquire("bg", "a", 30.0)
    assert lease is not None
    release_or_queue(backend, lease, 30.0)
    time.sleep(0.2)
    assert backend.try_acquire("bg", "b", 30.0) is None  # still down: still held
    backend.down = False
    deadline = time.monotonic() + 5
    acquired: Any = None
    while acquired is None and time.monotonic() < deadline:
        time.sleep(0.05)
        acquired = backend.try_acquire("bg", "b", 30.0)
    assert acquired is not None and len(queue_of(backend)) == 0


class Unreachable(InMemoryLeaseBackend):
    """Raises ``BackendUnavailableError`` for its first ``failures`` acquisitions."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    def try_acquire(self, thread_id: str, owner: str, ttl: float) -> Lease | None:
        if self.failures:
            self.failures -= 1
            raise BackendUnavailableError("Redis at h:1 is unavailable (failing over)")
        return super().try_acquire(thread_id, owner, ttl)


def test_wait_rides_out_a_failover_and_reject_does_not() -> None:
    waiting = LeaseOptions.create(strategy="wait", wait_timeout=5.0)
    lease = acquire(Unreachable(3), "t", waiting, sleep=lambda _: None)
    assert lease.thread_id == "t"
    with pytest.raises(BackendUnavailableError):
        acquire(Unreachable(1), "t", LeaseOptions.create(strategy="reject"))
    with pytest.raises(BackendUnavailableError):  # down until the deadline: its own error
        acquire(Unreachable(10**6), "t", waiting, sleep=lambda _: None)
