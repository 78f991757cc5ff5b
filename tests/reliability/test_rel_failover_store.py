"""The memory store across a failover, on a primary + streaming standby the test builds.

Principle: **what a client derived from the server's state is valid only within one server
history.** The exact-path vector cache keeps a watermark -- a transaction id -- and re-reads
only rows written at or after it; a promoted asynchronous standby lost the old primary's
latest transactions and its ids restart lower, so a watermark from before the promotion
would hide every memory written after it from vector search through the same store object
(silently: a fresh object finds them). The cache compares the server's epoch on each
refresh and reads again from the start when it changed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import pytest

from langgraph_recall.errors import BackendUnavailableError
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests.reliability._clusters import PostgresPair
from tests.reliability._figures import Figures
from tests.reliability.conftest import index_config

pytestmark = [pytest.mark.serial, pytest.mark.slow, pytest.mark.failover, pytest.mark.postgres]

NS = ("memories", "user_id:u")
UNRELATED = "qqqq zzzz"  # shares no word with any memory: only vector search finds them
T = TypeVar("T")


def vector_found(store: PostgresMemoryStore, keys: set[str]) -> set[str]:
    """Which of ``keys`` a search whose text matches nothing lexically returns."""
    return {item.key for item in store.search(NS, query=UNRELATED, limit=100)} & keys


def once_reachable(call: Callable[[], T], timeout: float = 30.0) -> T:
    """``call()`` as soon as the promoted server answers (connecting is not what this tests)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except BackendUnavailableError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_memories_written_after_an_async_promotion_are_found_by_the_same_store_object(
    figures: Figures,
) -> None:
    with (
        PostgresPair.running(synchronous=False) as pair,
        PostgresMemoryStore.from_conn_string(
            pair.dsn, index=index_config(), pool_config={"max_size": 2}
        ) as store,
    ):
        store.setup()
        before = {f"before-{i}" for i in range(10)}
        for key in sorted(before):
            store.put(NS, key, {"content": f"note {key} on the garden"})
        assert vector_found(store, before) == before
        pair.lag()
        # transactions the standby never receives: the primary's ids run ahead of it, and
        # the cache's watermark follows them
        for i in range(40):
            store.put(("memories", "user_id:other"), f"lost-{i}", {"content": "lost"})
        assert vector_found(store, before) == before
        pair.fail_over()
        after = {f"after-{i}" for i in range(10)}
        for key in sorted(after):
            once_reachable(lambda key=key: store.put(NS, key, {"content": f"note {key} later"}))
        found = once_reachable(lambda: vector_found(store, before | after))
        figures.put("failover_store_memories_found_after_promotion", len(found & after))
        assert found == before | after
        with PostgresMemoryStore.from_conn_string(pair.dsn, index=index_config()) as fresh:
            assert vector_found(fresh, before | after) == before | after
