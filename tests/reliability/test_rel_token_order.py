"""Tokens strictly increase across server state loss (a property over operation sequences).

Random sequences of lease operations on one thread -- acquire, renew, release, expire,
``delete_thread``, ``delete_for_runs``, writes carrying any token seen so far -- interleaved
with **state loss**: the server's lease state for the thread is put back to an earlier
snapshot (what Redis restarted from an older RDB, or a promoted asynchronous replica, holds;
the leases and tokens issued since are gone). The server comes back, as any real one does,
after the lost tokens were issued (its clock has moved past them). Invariants, on both savers:

* every token issued is larger than every token issued before on the thread -- including
  the lost ones: **no token is ever handed out twice**;
* a write is accepted exactly when it carries the token the server holds as current; every
  other token (older, lost, or a holder's from before the loss) is refused and writes
  nothing.
"""

from __future__ import annotations

import random
import time
import uuid
from typing import Any

import psycopg
import pytest
import redis
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from langgraph_recall.errors import StaleWriteError, ThreadBusyError
from langgraph_recall.lease import FENCE_CONFIG_KEY, Lease
from langgraph_recall.lease._tokens import CLOCK_BASE_MS, sequence_of
from tests._hypothesis import thorough
from tests.graph_helpers import chat_graph
from tests.reliability._figures import Figures
from tests.reliability._savers import BACKENDS, Target, sync_saver, target
from tests.reliability._workload import turn_input

OPS = [
    "acquire",
    "acquire",
    "renew",
    "release",
    "expire",
    "delete",
    "delete_runs",
    "write",
    "write",
    "write_current",
    "snapshot",
    "lose",
]


class ServerState:
    """Read and put back one thread's lease state, as a restore would."""

    def __init__(self, where: Target, saver: Any) -> None:
        self.where = where
        self.saver = saver

    def take(self, thread_id: str) -> Any:
        if self.where.backend == "postgres":
            with psycopg.connect(self.where.dsn, autocommit=True) as conn:
                return conn.execute(
                    "SELECT thread_id, owner, token, expires_at::text, epoch "
                    "FROM lgm_thread_leases WHERE thread_id = %s",
                    (thread_id,),
                ).fetchone()
        keys = self.saver._thread_keys(thread_id)
        client = redis.Redis.from_url(self.where.url)
        try:
            return {k: (client.get(k), client.pttl(k)) for k in (keys.fence, keys.lease)}
        finally:
            client.close()

    def put_back(self, thread_id: str, state: Any) -> None:
        if self.where.backend == "postgres":
            with psycopg.connect(self.where.dsn, autocommit=True) as conn:
                conn.execute("DELETE FROM lgm_thread_leases WHERE thread_id = %s", (thread_id,))
                if state is not None:
                    conn.execute(
                        "INSERT INTO lgm_thread_leases (thread_id, owner, token, expires_at, epoch)"
                        " VALUES (%s, %s, %s, %s::timestamptz, %s)",
                        state,
                    )
            return
        client = redis.Redis.from_url(self.where.url)
        try:
            for key, (value, ttl) in state.items():
                client.delete(key)
                if value is not None:
                    client.set(key, value, px=ttl if ttl > 0 else None)
        finally:
            client.close()

    def expire(self, thread_id: str) -> None:
        """The lease's TTL runs out (the row / key stays as expired, or goes)."""
        if self.where.backend == "postgres":
            with psycopg.connect(self.where.dsn, autocommit=True) as conn:
                conn.execute(
                    "UPDATE lgm_thread_leases SET expires_at = clock_timestamp() - interval '1s'"
                    " WHERE thread_id = %s",
                    (thread_id,),
                )
            return
        client = redis.Redis.from_url(self.where.url)
        try:
            client.delete(self.saver._thread_keys(thread_id).lease)
        finally:
            client.close()


def wait_clock_past(tokens: list[int]) -> None:
    """A restarted / promoted server answers only after the tokens it lost were issued."""
    if tokens:
        target_ms = sequence_of(max(tokens)) + CLOCK_BASE_MS + 2
        while time.time() * 1000 < target_ms:
            time.sleep(0.001)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tokens_strictly_increase_across_state_loss(
    backend: str, request: pytest.FixtureRequest, figures: Figures
) -> None:
    where = target(backend, request)
    with sync_saver(where) as saver:
        leases = saver.lease_backend()
        graph = chat_graph(saver)
        state = ServerState(where, saver)
        counts = {"issued": 0, "writes": 0, "lost": 0, "revoked": 0}

        @settings(
            max_examples=thorough(40),
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )
        @given(ops=st.lists(st.sampled_from(OPS), min_size=4, max_size=14), pick=st.randoms())
        @example(  # a revocation by delete_for_runs, then writes with every token
            ops=["acquire", "write_current", "delete_runs", "write", "acquire", "write"],
            pick=random.Random(1),
        )
        @example(  # state loss: the tokens issued after the snapshot are lost
            ops=["acquire", "snapshot", "acquire", "write_current", "lose", "acquire", "write"],
            pick=random.Random(2),
        )
        def run(ops: list[str], pick: Any) -> None:
            thread_id = f"order-{uuid.uuid4().hex[:10]}"
            issued: list[int] = []  # every token handed out for the thread, in order
            held: Lease | None = None
            current: int | None = None  # the token the server holds as current (model)
            snapshot: tuple[Any, int | None] | None = None
            runs = False  # the thread holds checkpoints of its runs (delete_for_runs fences)
            run_ids: list[str] = []
            for n, op in enumerate(ops):
                if op == "acquire":  # the previous holder died: its lease ran out
                    state.expire(thread_id)
                    lease = leases.try_acquire(thread_id, f"w{n}", 30.0)
                    assert lease is not None
                    assert lease.token not in issued, "a token was handed out twice"
                    assert all(lease.token > t for t in issued)
                    issued.append(lease.token)
                    counts["issued"] += 1
                    held, current = lease, lease.token
                elif op == "renew" and held is not None:
                    leases.renew(held, 30.0)
                elif op == "release" and held is not None:
                    leases.release(held)
                    held = None
                elif op == "expire":
                    state.expire(thread_id)
                elif op == "delete":
                    saver.delete_thread(thread_id)
                    held, current, runs = None, None, False
                elif op == "delete_runs":
                    saver.delete_for_runs(run_ids)
                    if runs:  # it deleted checkpoints: the lease is revoked, a new token set
                        held, current, runs = None, -1, False
                        counts["revoked"] += 1
                elif op in ("write", "write_current") and issued:
                    token = pick.choice(issued)
                    if op == "write_current" and current in issued:
                        token = current
                    counts["writes"] += 1
                    # a fresh run id per write: LangGraph does not run a run id it has finished
                    run_id = f"run-{thread_id}-{n}"
                    run_ids.append(run_id)
                    configurable = {"thread_id": thread_id, "run_id": run_id}
                    config = {"configurable": {**configurable, FENCE_CONFIG_KEY: token}}
                    try:
                        graph.invoke(turn_input(f"w{n}"), config)
                        accepted = True
                    except (StaleWriteError, ThreadBusyError):
                        accepted = False
                    assert accepted == (token == current), (op, token == current)
                    runs = runs or accepted
                elif op == "snapshot":
                    snapshot = (state.take(thread_id), current)
                elif op == "lose" and snapshot is not None:
                    wait_clock_past(issued)
                    state.put_back(thread_id, snapshot[0])
                    current = snapshot[1]
                    held = None
                    counts["lost"] += 1

        run()
    assert counts["revoked"] > 0 and counts["lost"] > 0  # the cases reach both
    figures.add("state_loss_tokens_issued", counts["issued"])
    figures.add("state_loss_writes_checked", counts["writes"])
    figures.add("state_losses_simulated", counts["lost"])
