"""Worker-process entry points for the concurrency tests (importable by spawned processes).

Each function opens its OWN saver/store (as a separate worker process of a deployment
would), runs several threads, and returns plain picklable records.
"""

from __future__ import annotations

import threading
import time
from typing import Any

__all__ = ["leased_chat_worker", "store_worker"]


def leased_chat_worker(
    backend: str,
    target: str,
    prefix: str,
    thread_ids: list[str],
    process_index: int,
    threads: int,
    turns: int,
) -> list[tuple[str, str, str | None]]:
    """``threads`` threads × ``turns`` turns through ``with_thread_lease`` (strategy wait) on
    shared ``thread_ids``. Returns ``(thread_id, turn_text, error_type_or_None)``."""
    from contextlib import ExitStack

    from langgraph_recall.lease import with_thread_lease
    from tests.graph_helpers import chat_graph
    from tests.reliability._workload import thread_config, turn_input

    records: list[tuple[str, str, str | None]] = []
    lock = threading.Lock()
    with ExitStack() as stack:
        saver: Any
        if backend == "postgres":
            from langgraph_recall.checkpoint.postgres import PostgresSaver

            saver = stack.enter_context(
                PostgresSaver.from_conn_string(target, pool_config={"max_size": threads})
            )
        else:
            from langgraph_recall.checkpoint.redis import RedisSaver

            saver = stack.enter_context(RedisSaver.from_conn_string(target, prefix=prefix))
        graph = with_thread_lease(chat_graph(saver), strategy="wait", wait_timeout=60.0, ttl=10.0)

        def run(thread_index: int) -> None:
            for n in range(turns):
                tid = thread_ids[(process_index * threads + thread_index + n) % len(thread_ids)]
                text = f"p{process_index}t{thread_index}n{n}"
                try:
                    graph.invoke(turn_input(text), thread_config(tid))
                    outcome: str | None = None
                except Exception as exc:
                    outcome = f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"
                with lock:
                    records.append((tid, text, outcome))

        workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    return records


def store_worker(
    dsn: str, process_index: int, threads: int, puts: int, hot_key: str
) -> dict[str, Any]:
    """Threads doing own-key puts, searches, and upserts of ONE shared ``hot_key``.

    Returns acknowledged own keys, acknowledged hot-key values and errors."""
    from langgraph_recall.store.postgres import PostgresMemoryStore
    from tests.fakes import HashingEmbeddings

    acked_own: list[str] = []
    acked_hot: list[dict[str, Any]] = []
    errors: list[str] = []
    leaks: list[str] = []
    lock = threading.Lock()
    index = {"dims": 32, "embed": HashingEmbeddings(32)}
    with PostgresMemoryStore.from_conn_string(
        dsn,
        index=index,
        pool_config={"max_size": threads},  # type: ignore[arg-type]
    ) as store:

        def run(thread_index: int) -> None:
            user = f"u{process_index}"
            for n in range(puts):
                key = f"t{thread_index}n{n}"
                hot = {
                    "content": f"shared fact from process {process_index} thread {thread_index}",
                    "writer": [process_index, thread_index, n],
                }
                try:
                    store.put(("conc", user), key, {"content": f"{user} fact {key}", "n": n})
                    with lock:
                        acked_own.append(key)
                    store.put(("conc", "shared"), hot_key, hot)
                    with lock:
                        acked_hot.append(hot)
                    hits = store.search(("conc", user), query=f"{user} fact", limit=5)
                    bad = [h.namespace for h in hits if h.namespace != ("conc", user)]
                    if bad:
                        with lock:
                            leaks.append(repr(bad))
                except Exception as exc:
                    with lock:
                        errors.append(f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}")
                time.sleep(0)

        workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    return {"own": acked_own, "hot": acked_hot, "errors": errors, "leaks": leaks}
