"""The store's I/O-free programs, driven by a scripted database: which statements a batch
sends, in which order, and what it leaves for later."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import GetOp, PutOp

from langgraph_recall._pg.program import Stmt
from langgraph_recall.store._embedding import EmbedDocuments, EmbedQueries
from langgraph_recall.store._namespace import encode_namespace
from langgraph_recall.store.postgres import DecayConfig, _sql
from langgraph_recall.store.postgres._programs import MemoryPrograms
from langgraph_recall.store.postgres._types import Program
from tests.fakes import HashingEmbeddings

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
ROW = {
    "id": 7,
    "ns": encode_namespace(("a",)),
    "key": "k",
    "value": {"content": "x"},
    "created_at": NOW,
    "updated_at": NOW,
    "ttl_minutes": 5.0,
}


def drive(program: Program[Any], *, give_way: bool = False) -> list[str]:
    """Run ``program`` against a scripted database; return the statements it sent.

    Isolated (bookkeeping) statements are recorded as ``"isolated:" + query``; with
    ``give_way`` they answer with a lock timeout, as a busy row makes them do.
    """
    import psycopg

    sent: list[str] = []
    reply: Any = None
    try:
        while True:
            request = program.send(reply)
            if isinstance(request, (EmbedDocuments, EmbedQueries)):
                reply = HashingEmbeddings(8).embed_documents(list(request.texts))
                continue
            assert isinstance(request, Stmt)
            query = request.sql if isinstance(request.sql, str) else request.sql.as_string()
            sent.append(("isolated:" if request.isolated else "") + query)
            if request.isolated and give_way:
                reply = psycopg.errors.LockNotAvailable("canceling statement: lock timeout")
            elif query == _sql.READ_META:
                reply = [
                    {"name": "vector_mode", "value": "pgvector"},
                    {"name": "dims", "value": "8"},
                ]
            elif query == _sql.GET_ITEMS.as_string():
                reply = [ROW]
            else:
                reply = []
    except StopIteration:
        return sent


def programs(**options: Any) -> MemoryPrograms:
    return MemoryPrograms(index={"dims": 8, "embed": HashingEmbeddings(8)}, **options)


ISOLATED_REFRESH = "isolated:" + _sql.REFRESH_TTL
ISOLATED_ACCESS = "isolated:" + _sql.RECORD_ACCESS


def test_bookkeeping_never_shares_a_transaction_with_the_batch() -> None:
    """The lock-order principle: TTL refreshes and access counts run isolated, after every
    statement of the batch (so no transaction holds item locks and bookkeeping rows)."""
    store = programs(access_flush_interval=0)
    store._access.record([7], NOW)
    sent = drive(store._batch_program([GetOp(("a",), "k"), PutOp(("a",), "n", {"content": "y"})]))
    assert sent[-2:] == [ISOLATED_REFRESH, ISOLATED_ACCESS]
    assert _sql.REFRESH_TTL not in sent and _sql.RECORD_ACCESS not in sent


def test_writes_take_their_namespace_locks_first_deletes_included() -> None:
    sent = drive(
        programs()._batch_program([PutOp(("a",), "x", None), PutOp(("a",), "n", {"content": "y"})])
    )
    lock = sent.index(_sql.LOCK_NAMESPACES)
    assert lock < min(i for i, q in enumerate(sent) if "DELETE FROM lgm_memory_items" in q)
    assert lock < min(i for i, q in enumerate(sent) if "INSERT INTO lgm_memory_items" in q)


def test_bookkeeping_that_gives_way_is_retried_with_the_next_operation() -> None:
    store = programs(access_flush_interval=0)
    store._access.record([7], NOW)
    first = drive(store._batch_program([GetOp(("a",), "k")]), give_way=True)
    assert first[-2:] == [ISOLATED_REFRESH, ISOLATED_ACCESS]
    assert store._refresh_retry == {7} and len(store._access) == 1  # kept, not lost
    again = drive(store._batch_program([GetOp(("b",), "other", refresh_ttl=False)]))
    assert again[-2:] == [ISOLATED_REFRESH, ISOLATED_ACCESS]
    assert not store._refresh_retry and len(store._access) == 0


def test_access_counts_wait_until_due_and_decay_writes_them_first() -> None:
    store = programs(access_flush_interval=3600)
    store._access.record([7], NOW)
    sent = drive(store._batch_program([GetOp(("a",), "k", refresh_ttl=False)]))
    assert ISOLATED_ACCESS not in sent
    decay = drive(store._decay_plan_program((), DecayConfig()))
    assert ISOLATED_ACCESS in decay
    assert decay.index(ISOLATED_ACCESS) < len(decay) - 1  # before decay reads anything
    assert drive(store._flush_access_program()) == []  # nothing left to write
