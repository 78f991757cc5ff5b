"""Fault recovery: every backend of the test database is terminated repeatedly while 20
threads are being invoked. Calls fail fast with a clear error during the outage, later
calls succeed on the SAME saver, and no thread is corrupted."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from pg_saver_helpers import thread, turn
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.errors import BackendUnavailableError
from tests.graph_helpers import chat_graph

# serial: its time bounds are measured alone (scripts/test.sh)
pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.serial]

THREADS = [f"fault-{i}" for i in range(20)]
KILL_ROUNDS = 12
KILL_EVERY = 0.15
FAIL_FAST_SECONDS = 10.0


@contextmanager
def backend_killer(dsn: str) -> Iterator[list[int]]:
    """Terminate every backend of ``dsn``'s database, repeatedly, from an admin session."""
    params = conninfo_to_dict(dsn)
    dbname = params["dbname"]
    admin_dsn = make_conninfo(**{**params, "dbname": "postgres"})  # type: ignore[arg-type]
    killed: list[int] = []
    done = threading.Event()

    def run() -> None:
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            for _ in range(KILL_ROUNDS):
                time.sleep(KILL_EVERY)
                rows = admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = %s AND pid <> pg_backend_pid()",
                    (dbname,),
                ).fetchall()
                killed.append(sum(1 for r in rows if r[0]))
        done.set()

    killer = threading.Thread(target=run, daemon=True)
    killer.start()
    try:
        yield killed
    finally:
        killer.join(30)
    assert done.is_set()


class Outcomes:
    """Per-thread record of which invokes returned and which failed (and how)."""

    def __init__(self) -> None:
        self.ok: dict[str, list[int]] = defaultdict(list)
        self.failed: dict[str, list[int]] = defaultdict(list)
        self.errors: list[tuple[type[BaseException], float]] = []
        self.lock = threading.Lock()

    def record(self, tid: str, i: int, error: BaseException | None, seconds: float) -> None:
        with self.lock:
            if error is None:
                self.ok[tid].append(i)
            else:
                self.failed[tid].append(i)
                self.errors.append((type(error), seconds))


def check_outcomes(outcomes: Outcomes, killed: list[int], states: dict[str, Any]) -> None:
    assert sum(killed) > 0, "the killer never found a backend to terminate"
    assert outcomes.errors, "no invoke failed: the outage did not hit the run"
    for error_type, seconds in outcomes.errors:
        assert issubclass(error_type, BackendUnavailableError), error_type
        assert seconds < FAIL_FAST_SECONDS
    for tid in THREADS:
        contents = [str(m.content) for m in states[tid]["messages"]]
        humans = [c for c in contents if not c.startswith(("a:", "b:"))]
        indices = [int(h.rsplit("-", 1)[1]) for h in humans]
        assert indices == sorted(indices) and len(set(indices)) == len(indices), tid
        for i in outcomes.ok[tid]:
            text = f"{tid}-{i}"
            position = contents.index(text)
            assert contents[position : position + 3] == [text, f"a:{text}", f"b:{text}"], tid
        assert set(outcomes.ok[tid]) <= set(indices)
        assert outcomes.ok[tid][-1] == max(outcomes.ok[tid])  # the post-outage invoke


def test_sync_saver_survives_terminated_backends(postgres_dsn: str) -> None:
    outcomes = Outcomes()
    with PostgresSaver.from_conn_string(postgres_dsn, pool_config={"max_size": 4}) as saver:
        saver.setup()
        graph = chat_graph(saver)
        stop = threading.Event()

        def worker(tids: list[str]) -> None:
            i = 0
            while not stop.is_set():
                for tid in tids:
                    start = time.monotonic()
                    try:
                        graph.invoke(turn(f"{tid}-{i}"), thread(tid))
                        outcomes.record(tid, i, None, 0.0)
                    except Exception as exc:
                        outcomes.record(tid, i, exc, time.monotonic() - start)
                i += 1

        workers = [threading.Thread(target=worker, args=(THREADS[k::4],)) for k in range(4)]
        with backend_killer(postgres_dsn) as killed:
            for w in workers:
                w.start()
        stop.set()
        for w in workers:
            w.join(60)

        # after the outage: the same saver works again for every thread
        for tid in THREADS:
            graph.invoke(turn(f"{tid}-999999"), thread(tid))
            outcomes.record(tid, 999999, None, 0.0)
        states = {tid: graph.get_state(thread(tid)).values for tid in THREADS}
    check_outcomes(outcomes, killed, states)


async def test_async_saver_survives_terminated_backends(postgres_dsn: str) -> None:
    outcomes = Outcomes()
    async with AsyncPostgresSaver.from_conn_string(
        postgres_dsn, pool_config={"max_size": 8}
    ) as saver:
        await saver.setup()
        graph = chat_graph(saver)
        stop = asyncio.Event()

        async def client(tid: str) -> None:
            i = 0
            while not stop.is_set():
                start = time.monotonic()
                try:
                    await graph.ainvoke(turn(f"{tid}-{i}"), thread(tid))
                    outcomes.record(tid, i, None, 0.0)
                except Exception as exc:
                    outcomes.record(tid, i, exc, time.monotonic() - start)
                    await asyncio.sleep(0.01)
                i += 1

        tasks = [asyncio.create_task(client(tid)) for tid in THREADS]
        with backend_killer(postgres_dsn) as killed:
            while len(killed) < KILL_ROUNDS:
                await asyncio.sleep(0.05)
        stop.set()
        await asyncio.gather(*tasks)

        for tid in THREADS:
            await graph.ainvoke(turn(f"{tid}-999999"), thread(tid))
            outcomes.record(tid, 999999, None, 0.0)
        states = {tid: (await graph.aget_state(thread(tid))).values for tid in THREADS}
    check_outcomes(outcomes, killed, states)
