"""The store's I/O-free programs, driven by a scripted database: which statements a batch
sends, in which order, and what it leaves for later."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import GetOp, PutOp

from langgraph_memory.store._namespace import encode_namespace
from langgraph_memory.store.postgres import DecayConfig, _sql
from langgraph_memory.store.postgres._programs import MemoryPrograms
from langgraph_memory.store.postgres._types import EmbedDocuments, EmbedQueries, Program, Sql
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


def drive(program: Program) -> list[str]:
    """Run ``program`` against a scripted database; return the statements it sent."""
    sent: list[str] = []
    reply: Any = None
    try:
        while True:
            request = program.send(reply)
            if isinstance(request, (EmbedDocuments, EmbedQueries)):
                reply = HashingEmbeddings(8).embed_documents(list(request.texts))
                continue
            assert isinstance(request, Sql)
            query = request.query if isinstance(request.query, str) else request.query.as_string()
            sent.append(query)
            if query == _sql.READ_META:
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


def test_a_read_only_batch_relaxes_its_commit_after_the_bookkeeping() -> None:
    sent = drive(programs()._batch_program([GetOp(("a",), "k")]))
    assert sent[-2:] == [_sql.REFRESH_TTL, _sql.RELAX_COMMIT]


def test_a_batch_that_puts_commits_durably() -> None:
    store = programs()
    sent = drive(store._batch_program([GetOp(("a",), "k"), PutOp(("a",), "n", {"content": "y"})]))
    assert _sql.REFRESH_TTL in sent and _sql.RELAX_COMMIT not in sent


def test_access_counts_wait_until_due_and_decay_writes_them_first() -> None:
    store = programs(access_flush_interval=3600)
    store._access.record([7], NOW)
    sent = drive(store._batch_program([GetOp(("a",), "k", refresh_ttl=False)]))
    assert _sql.RECORD_ACCESS not in sent and _sql.RELAX_COMMIT not in sent
    decay = drive(store._decay_program((), DecayConfig()))
    assert _sql.RECORD_ACCESS in decay
    assert decay.index(_sql.RECORD_ACCESS) < len(decay) - 1  # before the decay statement
    assert drive(store._flush_access_program()) == []  # nothing left to write
