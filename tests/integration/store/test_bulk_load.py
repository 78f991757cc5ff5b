"""``bulk_load``: large batches of puts, two in flight, resumable, the HNSW index built once.

Checked on both paths (exact on PG 15, pgvector on embedded PG 18) and both APIs: a bulk
load stores exactly what ``batch`` puts store (values, history, ranking); an interrupted load
run again with its ``resume_key`` writes each batch once (no ``update`` in the history) and
ends with every memory; a finished load writes nothing again; ``rebuild_index`` leaves the
index setup made; bad input is refused naming its batch, with the batches before it whole.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import uuid
import warnings
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp

from langgraph_recall.errors import BulkLoadWarning, InvalidValueError
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests._hypothesis import thorough
from tests.fakes import HashingEmbeddings
from tests.integration.store.conftest import DIMS, Driver, open_store

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
WORDS += ["golf", "hotel", "india", "juliet", "kilo", "lima"]


def _text(i: int) -> str:
    return f"memory {i}: {WORDS[i % 12]} {WORDS[(i * 7) % 12]} {WORDS[(i * 5) % 12]} n{i}"


def _puts(count: int, users: int = 5, label: str = "bulk") -> Iterator[PutOp]:
    for i in range(count):
        yield PutOp((label, f"u{i % users}"), f"k{i}", {"content": _text(i), "importance": 5})


def _history_actions(dsn: str, label: str) -> dict[str, int]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT action, count(*) FROM lgm_memory_history WHERE ns LIKE %s GROUP BY action",
            (f"{label}%",),
        ).fetchall()
    return {str(action): int(n) for action, n in rows}


def _index_definition(dsn: str) -> str | None:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'lgm_memory_items_hnsw_ip'"
        ).fetchone()
    return None if row is None else str(row[0])


async def test_a_bulk_load_stores_what_batch_puts_store(ours: Driver) -> None:
    count = 2_450  # three batches of 1,000 (the last short), two in flight
    report = await ours("bulk_load", _puts(count, label="bulk"))
    assert (report.items, report.batches, report.skipped) == (count, 3, 0)
    await ours("batch", list(_puts(count, label="puts")))
    for user in ("u0", "u3"):
        for query in ("bravo hotel", "n1203", "memory kilo"):
            loaded = await ours("search", ("bulk", user), query=query, limit=10)
            put = await ours("search", ("puts", user), query=query, limit=10)
            assert loaded, query
            # the same memories with the same scores, above the ties at the cut
            bulk = {i.key: (round(i.score or 0, 5), str(i.value)) for i in loaded}
            puts = {i.key: (round(i.score or 0, 5), str(i.value)) for i in put}
            cut = max(min(v[0] for v in bulk.values()), min(v[0] for v in puts.values()))
            assert {k: v for k, v in bulk.items() if v[0] > cut} == {
                k: v for k, v in puts.items() if v[0] > cut
            }
            assert loaded[0].score == pytest.approx(put[0].score)
    item = await ours("get", ("bulk", "u2"), "k7")
    assert item is not None and item.value == {"content": _text(7), "importance": 5}
    assert _history_actions(ours.dsn, "bulk") == {"add": count}


class FailingEmbeddings(HashingEmbeddings):
    """Fails the ``fail_at``-th embedding call (1-based), once; or, with ``fail_on``, the
    first call embedding a text that contains it (a given batch, whichever of the batches in
    flight calls first)."""

    def __init__(self, fail_at: int, fail_on: str | None = None) -> None:
        super().__init__(DIMS)
        self.fail_at = fail_at
        self.fail_on = fail_on
        self.count = 0
        self._lock = threading.Lock()

    def _next(self, texts: list[str]) -> None:
        with self._lock:
            self.count += 1
            chosen = self.fail_on is not None and any(self.fail_on in t for t in texts)
            if self.count == self.fail_at or chosen:
                self.fail_on = None
                raise ConnectionError("the embedding service went away")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self._next(texts)
        return super().embed_documents(texts)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        self._next(texts)
        return await super().aembed_documents(texts)


async def test_an_interrupted_load_resumes_where_it_stopped(
    dsn: str, flavour: str, backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    count, size = 1_000, 100
    index = {"dims": DIMS, "embed": FailingEmbeddings(fail_at=6)}
    async with open_store(dsn, flavour, index=index) as store:
        driver = Driver(store, flavour, backend, dsn)
        with pytest.raises(Exception, match="went away") as stopped:
            await driver(
                "bulk_load", _puts(count), batch_size=size, resume_key="load-1", rebuild_index=True
            )
        notes = " ".join(getattr(stopped.value, "__notes__", []))
        assert "nothing of its batch was written" in notes and "run again" in notes
        written = len(await driver("search", ("bulk",), limit=2_000))
        assert 0 < written < count and written % size == 0  # whole batches only
        if backend == "pgvector":
            assert _index_definition(dsn) is None
        with pytest.raises(InvalidValueError, match="started in batches of 100, not 50"):
            await driver("bulk_load", _puts(count), batch_size=50, resume_key="load-1")
    if backend == "pgvector":  # a store opened meanwhile says what is missing and the fix
        with caplog.at_level(logging.WARNING, "langgraph_recall.store"):
            async with open_store(dsn, flavour):
                pass
        assert "HNSW index is missing" in caplog.text and "resume_key" in caplog.text
    async with open_store(dsn, flavour) as store:
        driver = Driver(store, flavour, backend, dsn)
        # no batch size given: the resumed load takes the one it was started with
        report = await driver("bulk_load", _puts(count), resume_key="load-1", rebuild_index=True)
        assert (report.skipped, report.items) == (written, count - written)
        assert report.index_rebuilt is (backend == "pgvector")
        assert len(await driver("search", ("bulk",), limit=2_000)) == count
        assert _history_actions(dsn, "bulk") == {"add": count}  # no batch written twice
        if backend == "pgvector":
            assert _index_definition(dsn) is not None
        again = await driver("bulk_load", _puts(count), batch_size=size, resume_key="load-1")
        assert (again.items, again.skipped, again.batches) == (0, count, 0)


def test_rebuild_index_leaves_the_index_setup_made(embedded_dsn: str) -> None:
    with PostgresMemoryStore.from_conn_string(embedded_dsn, index=_index()) as store:
        store.setup()
        made = _index_definition(embedded_dsn)
        report = store.bulk_load(_puts(300), batch_size=64, rebuild_index=True)
        assert report.index_rebuilt and report.items == 300
        assert _index_definition(embedded_dsn) == made is not None
        with psycopg.connect(embedded_dsn) as conn:
            meta = conn.execute("SELECT name FROM lgm_store_meta").fetchall()
        assert ("vector_index",) not in meta
        found = store.search(("bulk", "u1"), query=_text(11), limit=1)
        assert [item.key for item in found] == ["k11"]


def _index() -> dict[str, Any]:
    return {"dims": DIMS, "embed": HashingEmbeddings(DIMS)}


def test_bad_input_is_refused_naming_its_batch(postgres_dsn: str) -> None:
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=_index()) as store:
        store.setup()
        for bad in (0, -1, True, "10"):
            with pytest.raises(InvalidValueError, match="batch_size"):
                store.bulk_load(_puts(3), batch_size=bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidValueError, match="resume_key"):
            store.bulk_load(_puts(3), resume_key=" ")
        ops = list(_puts(350))
        ops[250] = PutOp(("bulk", "u0"), "gone", None)  # a delete
        with pytest.raises(InvalidValueError, match="item 250 is a delete") as refused:
            store.bulk_load(ops, batch_size=100)
        # batches 0 and 1 were in flight together and committed; batch 2 holds the delete
        assert "200 memories before it were" in str(refused.value)
        assert len(store.search(("bulk",), limit=1_000)) == 200
        ops = list(_puts(250, label="nan"))
        ops[120] = PutOp(("nan", "u0"), "bad", {"content": "x", "importance": float("nan")})
        with pytest.raises(InvalidValueError, match="batch 1, puts 100-199") as refused:
            store.bulk_load(ops, batch_size=100)
        assert "nothing of its batch was written" in str(refused.value)
        keys = {item.key for item in store.search(("nan",), limit=1_000)}
        assert "bad" not in keys and {"k0", "k99"} <= keys and "k150" not in keys
        with pytest.raises(InvalidValueError, match="progress must be a function"):
            store.bulk_load(_puts(3), progress=42)  # type: ignore[arg-type]

        def broken_reader() -> Iterator[PutOp]:  # the caller's own parser fails midway
            yield from _puts(130, label="reader")
            raise ValueError("row 131 of the caller's file is malformed")

        with pytest.raises(ValueError, match="row 131") as failed:
            store.bulk_load(broken_reader(), batch_size=100, resume_key="reader")
        notes = " ".join(getattr(failed.value, "__notes__", []))
        assert "100 memories before it were" in notes and "goes on from there" in notes
        assert len(store.search(("reader",), limit=1_000)) == 100


@settings(
    max_examples=thorough(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    count=st.integers(1, 60),
    size=st.integers(1, 17),
    fail_at=st.integers(1, 8),
    data=st.data(),
)
def test_resume_writes_every_put_once_whatever_the_cut(
    postgres_dsn: str, count: int, size: int, fail_at: int, data: st.DataObject
) -> None:
    """However a load is cut (any batch size, any failing batch), running it again leaves
    exactly the puts of the load, each written once, and the last value of a key wins."""
    label = f"p{uuid.uuid4().hex[:12]}"  # each example its own load and namespaces
    keys = data.draw(st.lists(st.integers(0, 20), min_size=count, max_size=count))
    ops = [
        PutOp((label, f"u{k % 3}"), f"k{k}", {"content": f"{label} value {n} of {k}"})
        for n, k in enumerate(keys)
    ]
    flaky = FailingEmbeddings(fail_at)
    with PostgresMemoryStore.from_conn_string(
        postgres_dsn, index={"dims": DIMS, "embed": flaky}
    ) as store:
        store.setup()
        with contextlib.suppress(ConnectionError):
            store.bulk_load(iter(ops), batch_size=size, resume_key=label)
        report = store.bulk_load(iter(ops), batch_size=size, resume_key=label)
        assert report.items + report.skipped == count
        final = {(op.namespace, op.key): op.value for op in ops}
        # within a batch the last put of a key wins; across batches, the later batch
        found = store.search((label,), limit=100)
        stored = {(item.namespace, item.key): item.value for item in found}
        assert stored == final


def test_cli_import_rebuilds_the_index_and_says_so(
    embedded_dsn: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from langgraph_recall.cli import main
    from langgraph_recall.transfer import header_line

    records = [
        json.dumps({"namespace": ["memories", "user_id:cli"], "key": f"k{n}", "value": value})
        for n, value in enumerate({"content": _text(n)} for n in range(40))
    ]
    path = tmp_path / "cli.jsonl"
    path.write_text("\n".join([header_line({"user_id": "cli"}), *records]) + "\n")
    assert main(["import", str(path), "--rebuild-index", "--postgres", embedded_dsn]) == 0
    err = capsys.readouterr().err
    assert "imported 40 memories" in err and "building the HNSW index" in err
    assert _index_definition(embedded_dsn) is not None


def test_a_resume_key_given_other_puts_is_refused_and_writes_nothing(postgres_dsn: str) -> None:
    """A load resumed (or run again after it finished) with other puts under the same name
    would skip batches it never wrote: refused, naming the batch, before anything is written."""
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=_index()) as store:
        store.setup()
        flaky = list(_puts(500, label="same"))
        store.bulk_load(flaky, batch_size=100, resume_key="same")  # finished
        other = list(_puts(500, label="other"))
        with pytest.raises(InvalidValueError, match="batch 0 of the bulk load 'same' holds other"):
            store.bulk_load(other, batch_size=100, resume_key="same")
        longer = list(_puts(900, label="same"))
        with pytest.raises(InvalidValueError, match=r"batch 5 .* was never part of it"):
            store.bulk_load(longer, batch_size=100, resume_key="same")
        assert store.search(("other",), limit=10) == []
        assert len(store.search(("same",), limit=1_000)) == 500
        again = store.bulk_load(flaky, batch_size=100, resume_key="same")
        assert (again.items, again.skipped) == (0, 500)
        edited = [PutOp(op.namespace, op.key, {**(op.value or {}), "v": 2}) for op in flaky]
        with pytest.raises(InvalidValueError, match=r"batch 0 .* holds other puts"):
            store.bulk_load(edited, batch_size=100, resume_key="same")  # same keys, new values
        shorter = list(_puts(450, label="same"))  # its last batch is not the one written
        with pytest.raises(InvalidValueError, match=r"batch 4 .* holds other puts"):
            store.bulk_load(shorter, batch_size=100, resume_key="same")


def test_a_finished_load_builds_an_index_an_earlier_run_left_missing(embedded_dsn: str) -> None:
    flaky = FailingEmbeddings(fail_at=2)
    with PostgresMemoryStore.from_conn_string(
        embedded_dsn, index={"dims": DIMS, "embed": flaky}
    ) as store:
        store.setup()
        with pytest.raises(ConnectionError):
            store.bulk_load(_puts(300), batch_size=100, resume_key="idx", rebuild_index=True)
        finished = store.bulk_load(_puts(300), batch_size=100, resume_key="idx")
        assert finished.index_rebuilt is False and _index_definition(embedded_dsn) is None
        built = store.bulk_load(_puts(300), batch_size=100, resume_key="idx", rebuild_index=True)
        assert (built.items, built.skipped, built.index_rebuilt) == (0, 300, True)
        assert _index_definition(embedded_dsn) is not None


@settings(
    max_examples=thorough(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    first=st.lists(st.integers(0, 30), min_size=1, max_size=40),
    second=st.lists(st.integers(0, 30), min_size=1, max_size=40),
    size=st.integers(1, 9),
    cut=st.booleans(),
)
def test_a_name_never_skips_puts_it_did_not_write(
    postgres_dsn: str, first: list[int], second: list[int], size: int, cut: bool
) -> None:
    """Property: whatever a name recorded (a finished load, or one cut after its first
    batch), a load of other puts under that name either writes every one of them or is
    refused with nothing written -- a put is never counted as skipped unless it was written."""
    label = f"n{uuid.uuid4().hex[:12]}"

    def ops(keys: list[int], tag: str) -> list[PutOp]:
        return [PutOp((label, "u"), f"k{k}", {"content": f"{tag} {k}"}) for k in keys]

    index = {"dims": DIMS, "embed": FailingEmbeddings(fail_at=2 if cut else 0)}
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=index) as store:
        store.setup()
        with contextlib.suppress(ConnectionError):
            store.bulk_load(ops(first, "a"), batch_size=size, resume_key=label)
        before = {item.key: item.value for item in store.search((label,), limit=100)}
        try:
            report = store.bulk_load(ops(second, "b"), batch_size=size, resume_key=label)
        except InvalidValueError as refused:
            assert "not the load that name recorded" in str(refused)
            assert {item.key: item.value for item in store.search((label,), limit=100)} == before
            return
        after = {item.key: item.value for item in store.search((label,), limit=100)}
        assert report.items + report.skipped == len(second)
        # every put of the second load is stored: written now, or written before as the same
        # put (the same key in the same batch place -- the digests matched)
        assert {f"k{k}" for k in second} <= set(after)


def _recorded_batches(dsn: str, name: str) -> set[int]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT batch FROM lgm_memory_loads WHERE name = %s AND batch >= 0", (name,)
        ).fetchall()
    return {int(row[0]) for row in rows}


def _finished(dsn: str, name: str) -> bool:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT 1 FROM lgm_memory_loads WHERE name = %s AND batch = -2", (name,)
        ).fetchone()
    return row is not None


async def test_a_short_input_says_it_held_fewer_puts_than_the_load_recorded(
    postgres_dsn: str, flavour: str
) -> None:
    """A finished load given only its first batches again (a truncated file run again) says
    so, naming both counts; the whole input says nothing. An interrupted load resumed with a
    short input says so too and stays unfinished, so the whole input finishes it."""
    async with open_store(postgres_dsn, flavour, index=_index()) as store:
        driver = Driver(store, flavour, "exact", postgres_dsn)
        await driver("bulk_load", _puts(500, label="short"), batch_size=100, resume_key="short")
        with pytest.warns(BulkLoadWarning) as said:
            report = await driver("bulk_load", _puts(300, label="short"), resume_key="short")
        assert (report.items, report.skipped, report.recorded) == (0, 300, 500)
        assert [str(w.message) for w in said] == [report.warning]
        assert report.warning is not None
        assert "'short' finished with 500 puts, but this input held only 300" in report.warning
        assert "batches 3-4 were not in it (200 puts" in report.warning
        with warnings.catch_warnings():
            warnings.simplefilter("error", BulkLoadWarning)
            whole = await driver("bulk_load", _puts(500, label="short"), resume_key="short")
        assert (whole.skipped, whole.recorded, whole.warning) == (500, None, None)

    index = {"dims": DIMS, "embed": FailingEmbeddings(fail_at=5)}
    async with open_store(postgres_dsn, flavour, index=index) as store:
        driver = Driver(store, flavour, "exact", postgres_dsn)
        with pytest.raises(ConnectionError):
            await driver("bulk_load", _puts(1_000, label="cut"), batch_size=100, resume_key="cut")
        recorded = _recorded_batches(postgres_dsn, "cut")
        assert max(recorded) >= 2
        with pytest.warns(BulkLoadWarning, match=r"recorded at least \d+ puts \(through batch"):
            short = await driver("bulk_load", _puts(200, label="cut"), resume_key="cut")
        assert short.items + short.skipped == 200 and short.recorded == 100 * max(recorded) + 100
        assert not _finished(postgres_dsn, "cut")  # the whole input still finishes it
        with warnings.catch_warnings():
            warnings.simplefilter("error", BulkLoadWarning)
            done = await driver("bulk_load", _puts(1_000, label="cut"), resume_key="cut")
        assert done.items + done.skipped == 1_000 and done.warning is None
        assert _finished(postgres_dsn, "cut")
        assert len(await driver("search", ("cut",), limit=2_000)) == 1_000


def test_an_input_that_ends_inside_a_recorded_load_is_refused(postgres_dsn: str) -> None:
    """A resumed load whose input ends inside a batch, before batches the load recorded (a
    file cut mid-line-run), writes nothing of that batch: written and recorded, the cut batch
    would stand for the whole one, and the whole input could never finish the load."""
    # batch 2 fails (not "the third call": batches 2 and 3 embed at once, in either order)
    index = {"dims": DIMS, "embed": FailingEmbeddings(fail_at=0, fail_on="memory 200:")}
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=index) as store:
        store.setup()
        with pytest.raises(ConnectionError):
            store.bulk_load(_puts(600, label="mid"), batch_size=100, resume_key="mid")
        recorded = _recorded_batches(postgres_dsn, "mid")
        first_gap = min(set(range(6)) - recorded)
        assert first_gap == 2 and 3 in recorded  # two in flight: the one after committed
        before = len(store.search(("mid",), limit=1_000))
        cut = list(_puts(600, label="mid"))[: first_gap * 100 + 40]
        with pytest.raises(InvalidValueError, match=f"batch {first_gap} .* holds 40 puts, not 100"):
            store.bulk_load(cut, resume_key="mid")
        assert len(store.search(("mid",), limit=1_000)) == before
        assert first_gap not in _recorded_batches(postgres_dsn, "mid")
        report = store.bulk_load(_puts(600, label="mid"), resume_key="mid")
        assert report.items + report.skipped == 600 and report.warning is None
        assert len(store.search(("mid",), limit=1_000)) == 600


@settings(
    max_examples=thorough(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    count=st.integers(1, 50),
    size=st.integers(1, 9),
    fail_at=st.integers(0, 6),
    keep=st.integers(0, 50),
)
def test_a_load_given_a_prefix_of_its_input_says_what_it_lacks(
    postgres_dsn: str, count: int, size: int, fail_at: int, keep: int
) -> None:
    """Property: whatever a name recorded (a finished load, or one cut anywhere), the same
    load given only a prefix of its puts either refuses it, writing nothing of the batch the
    prefix cuts, or reads every put of it and warns, naming both counts, exactly when the
    name recorded a batch the prefix does not reach. Refused or warned, the load is left as
    it was, so its whole input afterwards finishes it."""
    label = f"s{uuid.uuid4().hex[:12]}"
    ops = [PutOp((label, f"u{n % 3}"), f"k{n}", {"content": f"{label} {n}"}) for n in range(count)]
    prefix = ops[: min(keep, count)]
    index = {"dims": DIMS, "embed": FailingEmbeddings(fail_at)}
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=index) as store:
        store.setup()
        with contextlib.suppress(ConnectionError):
            store.bulk_load(ops, batch_size=size, resume_key=label)
        recorded = _recorded_batches(postgres_dsn, label)
        finished = _finished(postgres_dsn, label)
        reached = -(-len(prefix) // size)  # batches the prefix holds
        short = any(number >= reached for number in recorded)
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", BulkLoadWarning)
            try:
                report = store.bulk_load(prefix, batch_size=size, resume_key=label)
            except InvalidValueError as refused:
                assert "not the load that name recorded" in str(refused)
                # only a prefix cut inside a batch: one the name recorded whole, or one
                # before batches the name recorded
                assert len(prefix) % size and (reached - 1 in recorded or short)
                stored = {item.key for item in store.search((label,), limit=100)}
                cut = range((reached - 1) * size, len(prefix))
                assert (reached - 1 in recorded) or not stored & {f"k{n}" for n in cut}
                assert _recorded_batches(postgres_dsn, label) == recorded
                report = None
        if report is not None:
            assert report.items + report.skipped == len(prefix)
            assert (report.recorded is not None) is short is bool(said)
            if short:
                assert report.recorded is not None and report.recorded > len(prefix)
                assert [str(w.message) for w in said] == [report.warning]
                assert f"{report.recorded} puts" in str(report.warning)
                assert f"this input held only {len(prefix)}" in str(report.warning)
                assert _finished(postgres_dsn, label) is finished
        if report is None or short or finished or len(prefix) == count:
            whole = store.bulk_load(ops, batch_size=size, resume_key=label)
            assert whole.items + whole.skipped == count and whole.warning is None
            assert _finished(postgres_dsn, label)
            assert len(store.search((label,), limit=100)) == count
