"""Bulk loading: many puts in large batches, two in flight, the HNSW index built once (pure).

``bulk_load`` is for a first load, a migration or an import of millions of memories. Each
batch is validated, embedded in one call and written in one transaction exactly as
``batch`` writes puts (same SQL, history and statistics); two batches are in
flight at once (2 cores: ~1.4x one at a time). With ``rebuild_index`` the pgvector path's
HNSW index is dropped first and built once at the end — inserting into a maintained HNSW
graph costs ~4-5 ms of CPU per row here, building it ~0.25 ms. With a ``resume_key`` each
batch records, in its own transaction, that it committed (``lgm_memory_loads``); the same
load started again skips those batches and goes on.

:func:`bulk_driver` is the whole procedure as a generator of *groups* of programs: the
stores run each group (concurrently) and send back each program's result or exception,
so the sync and async stores share every decision and differ only in how they run a group.

Example:
    ```python
    from langgraph.store.base import PutOp

    from langgraph_recall.store.postgres._bulk import batches_of

    ops = [PutOp(("users", "u1"), f"k{i}", {"content": "x"}) for i in range(5)]
    assert [len(b) for b in batches_of(ops, 2)] == [2, 2, 1]
    ```
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import PutOp

from langgraph_recall._pg.program import Stmt
from langgraph_recall.errors import InvalidValueError
from langgraph_recall.store._namespace import encode_namespace
from langgraph_recall.store.postgres import _sql
from langgraph_recall.store.postgres._batch import BatchPrograms
from langgraph_recall.store.postgres._migrations import (
    IP_INDEX,
    MigrationContext,
    vector_index_sql,
)
from langgraph_recall.store.postgres._types import Program

__all__ = [
    "BULK_BATCH_SIZE",
    "BULK_IN_FLIGHT",
    "BulkLoadReport",
    "BulkPrograms",
    "Group",
    "batch_digest",
    "batches_of",
    "bulk_driver",
    "run_groups",
]

BULK_BATCH_SIZE = 1000
"""Puts per batch (one embedding call, one transaction)."""
BULK_IN_FLIGHT = 2
"""Batches written at once: 30,000 puts without the HNSW index, exact rows: 4,491/s one at a
time, 6,135/s two at a time on this 2-core machine (the server and the client alternate)."""
INDEX_BYTES_PER_ROW = 768
"""HNSW build memory per row beyond its vector (neighbour lists, element headers)."""
MAX_INDEX_MEMORY_KB = 2 * 1024 * 1024
"""The most ``maintenance_work_mem`` an index build asks for (2 GB): a graph that does not fit
is still built, more slowly (pgvector says so in a notice)."""
DEFERRED = "deferred"
"""``lgm_store_meta.vector_index`` while a bulk load has the HNSW index dropped."""

Group = list[Callable[[], Program[Any]]]
"""Programs a store runs concurrently; it sends back a list of results or exceptions."""


@dataclass(frozen=True)
class BulkLoadReport:
    """What a bulk load did.

    Attributes:
        items: Puts this call wrote.
        batches: Batches this call committed.
        skipped: Puts skipped because their batch committed in an earlier run of the same
            ``resume_key`` (all of them, for a load that had finished).
        index_rebuilt: The HNSW index was dropped and built again after the load.
        recorded: The puts ``resume_key`` had recorded when the input held fewer (its last
            batches missing: a truncated file run again), else ``None``.
        warning: What ``bulk_load`` warned then (a
            :class:`~langgraph_recall.errors.BulkLoadWarning`), naming both counts.
    """

    items: int
    batches: int
    skipped: int
    index_rebuilt: bool
    recorded: int | None = None
    warning: str | None = None


@dataclass(frozen=True)
class _LoadState:
    done: dict[int, str | None]  # committed batches and their digests
    finished: bool
    index_missing: bool
    batch_size: int  # the load's: given, else the one it was started with, else the default
    sizes: dict[int, int]  # puts of each committed batch
    total: int  # puts of the whole load, as it recorded them (a finished load: its count)


def _short_input(
    name: str | None, held: int, state: _LoadState, read: int
) -> tuple[int | None, str | None]:
    """The puts a load's name recorded and what the load says, when its input (``held``
    puts in ``read`` batches) ended before batches the name recorded; else ``None``s."""
    beyond = sorted(number for number in state.done if number >= read)
    if not beyond:
        return None, None
    last, missing = beyond[-1], sum(state.sizes[number] for number in beyond)
    where = f"batch {beyond[0]} was" if len(beyond) == 1 else f"batches {beyond[0]}-{last} were"
    if state.finished:
        recorded = state.total
        said = f"finished with {recorded} puts"
        then = "Nothing was written again"
    else:  # every batch before the last recorded one is whole
        recorded = last * state.batch_size + state.sizes[last]
        said = f"recorded at least {recorded} puts (through batch {last})"
        then = "The load stays unfinished: run it again with its whole input to finish it"
    return recorded, (
        f"the bulk load {name!r} {said}, but this input held only {held}: its {where} not "
        f"in it ({missing} puts an earlier run wrote and that stay stored; a truncated "
        f"file?). {then}"
    )


def batch_digest(ops: list[PutOp]) -> str:
    """What identifies a batch of a load: a hash of its puts (namespace, key, value, index
    and TTL), in order — a resumed load whose batch now holds other values is not the same
    load, and its recorded batches must not be skipped as written."""
    listed = json.dumps(
        [[list(op.namespace), op.key, op.value, op.index, op.ttl] for op in ops],
        ensure_ascii=False,
        sort_keys=True,
        default=repr,
    )
    return hashlib.sha256(listed.encode()).hexdigest()[:32]


def _not_the_same_load(name: str | None, number: int, what: str) -> InvalidValueError:
    return InvalidValueError(
        f"batch {number} of the bulk load {name!r} {what}: this is not the load that "
        "name recorded (resume it with the same puts in the same order and the same "
        "batch_size, or give this load a new resume_key)"
    )


def _check_not_cut(name: str | None, number: int, ops: list[PutOp], state: _LoadState) -> None:
    """Refuse a batch not written yet that is cut short (the input's last) while the load
    recorded batches after it: the input ends inside the load (a truncated file), and that
    batch, written and recorded, would stand for a batch it is only the start of."""
    after = [n for n in state.done if n > number]
    if number not in state.done and len(ops) < state.batch_size and after:
        raise InvalidValueError(
            f"batch {number} of the bulk load {name!r} holds {len(ops)} puts, not "
            f"{state.batch_size}, and the load recorded batch {max(after)} after it: this input "
            "ends early, so this is not the load that name recorded (a truncated file? run "
            "the load again with its whole input)"
        )


def batches_of(puts: Iterable[PutOp], size: int) -> Iterator[list[PutOp]]:
    """``puts`` in lists of ``size`` (the last may be shorter), read lazily."""
    batch: list[PutOp] = []
    for op in puts:
        batch.append(op)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _check_options(batch_size: object, resume_key: object, progress: object) -> None:
    if progress is not None and not callable(progress):
        raise InvalidValueError(
            f"progress must be a function called with the puts done so far, got {progress!r}"
        )
    positive = isinstance(batch_size, int) and not isinstance(batch_size, bool) and batch_size > 0
    if batch_size is not None and not positive:
        raise InvalidValueError(f"batch_size must be a positive int, got {batch_size!r}")
    if resume_key is not None and (not isinstance(resume_key, str) or not resume_key.strip()):
        raise InvalidValueError(f"resume_key must be a non-empty string, got {resume_key!r}")


def _check_puts(ops: list[PutOp], first: int) -> None:
    for offset, op in enumerate(ops):
        if not isinstance(op, PutOp) or op.value is None:
            what = "a delete (value None)" if isinstance(op, PutOp) else type(op).__name__
            raise InvalidValueError(f"bulk_load takes puts only; item {first + offset} is {what}")


class BulkPrograms(BatchPrograms):
    """The programs of a bulk load: begin, one batch, finish."""

    def _bulk_begin(
        self, name: str | None, batch_size: int | None, rebuild_index: bool
    ) -> Program[_LoadState]:
        yield from self._ensure_mode()
        rows: list[dict[str, Any]] = []
        started: int | None = None
        if name is not None:
            rows = yield Stmt(_sql.LOAD_STATE, {"name": name}, fetch=True)
            started = next((int(row["items"]) for row in rows if row["batch"] == -1), None)
            if started is not None and batch_size is not None and batch_size != started:
                raise InvalidValueError(
                    f"the load {name!r} was started in batches of {started}, not "
                    f"{batch_size}: resume it with batches of {started} (or give no batch "
                    "size: a resumed load takes the one it was started with)"
                )
        size = batch_size or started or BULK_BATCH_SIZE
        found = yield Stmt(_sql.INDEX_STATE, fetch=True)
        index_missing = bool(found) and found[0]["value"] == DEFERRED
        done = {r["batch"]: r["digest"] for r in rows if r["batch"] >= 0}
        sizes = {r["batch"]: int(r["items"]) for r in rows if r["batch"] >= 0}
        finished = next((int(row["items"]) for row in rows if row["batch"] == -2), None)
        total = sum(sizes.values()) if finished is None else finished
        state = _LoadState(done, finished is not None, index_missing, size, sizes, total)
        if state.finished:
            return state
        if name is not None:
            yield Stmt(_sql.START_LOAD, {"name": name, "items": size})
        if rebuild_index and self.vector_mode == "pgvector":
            yield Stmt(_sql.SET_META, {"name": "vector_index", "value": DEFERRED})
            yield Stmt(f"DROP INDEX IF EXISTS {IP_INDEX}")
        return state

    def _bulk_batch(self, ops: list[PutOp], name: str | None, number: int) -> Program[int]:
        plan, vectors = yield from self._planned(ops)
        yield from self._ensure_mode()
        written = sorted({encode_namespace(p.namespace) for p, _ in plan.upserts})
        yield Stmt(_sql.LOCK_NAMESPACES, {"ns": written})
        yield from self._upsert(plan.upserts, vectors)  # ANALYZE: once, after the load
        if name is not None:
            yield Stmt(
                _sql.RECORD_LOAD_BATCH,
                {"name": name, "batch": number, "items": len(ops), "digest": batch_digest(ops)},
            )
        return len(ops)

    def _bulk_finish(self, name: str | None, total: int, rebuild_index: bool) -> Program[bool]:
        built = False
        if rebuild_index and self.vector_mode == "pgvector":
            rows = (yield Stmt(_sql.VECTOR_ROWS, fetch=True))[0]["n"]
            per_row = self.dims * (2 if self.vector_type == "halfvec" else 4) + INDEX_BYTES_PER_ROW
            kb = min(MAX_INDEX_MEMORY_KB, max(65536, rows * per_row // 1024))
            yield Stmt(_sql.INDEX_MEMORY, {"kb": str(kb)})
            ctx = MigrationContext(
                vector_mode="pgvector",
                dims=self.dims,
                hnsw_m=self.hnsw_m,
                hnsw_ef_construction=self.hnsw_ef_construction,
                vector_type=self.vector_type,
            )
            yield Stmt(vector_index_sql(ctx))
            yield Stmt(_sql.DELETE_META, {"name": "vector_index"})
            built = True
        if name is not None:
            yield Stmt(_sql.FINISH_LOAD, {"name": name, "items": total})
        return built

    def _bulk_analyze(self) -> Program[None]:
        yield Stmt(_sql.ANALYZE_ITEMS, isolated=True)


def bulk_driver(
    programs: BulkPrograms,
    puts: Iterable[PutOp],
    batch_size: int | None,
    resume_key: str | None,
    rebuild_index: bool,
    progress: Callable[[int], None] | None,
) -> Generator[Group, list[Any], BulkLoadReport]:
    """The whole bulk load, as groups of programs to run (see the module docstring)."""
    _check_options(batch_size, resume_key, progress)
    (state,) = yield from _run_one(
        lambda: programs._bulk_begin(resume_key, batch_size, rebuild_index)
    )
    if state.finished:  # nothing to write: the puts are checked against the load and counted
        counted = read = 0
        for number, ops in enumerate(batches_of(puts, state.batch_size)):
            if number not in state.done:
                raise _not_the_same_load(resume_key, number, "was never part of it (it finished)")
            if state.done[number] != batch_digest(ops):
                raise _not_the_same_load(resume_key, number, "holds other puts than it did")
            counted, read = counted + len(ops), number + 1
        recorded, short = _short_input(resume_key, counted, state, read)
        built = False
        if rebuild_index and state.index_missing:  # an earlier run left the index unbuilt
            (built,) = yield from _run_one(lambda: programs._bulk_finish(None, 0, True))
        return BulkLoadReport(0, 0, counted, built, recorded, short)
    items = batches = skipped = read = 0
    numbered = enumerate(batches_of(puts, state.batch_size))
    exhausted = False
    # a bad put, or an error of the caller's own iterator: what came before it is written
    refused: Exception | None = None
    carried: tuple[int, list[PutOp]] | None = None  # waits for the group before it
    while not exhausted or carried is not None:
        group: list[tuple[int, list[PutOp]]] = []
        keys: set[tuple[tuple[str, ...], str]] = set()
        while len(group) < BULK_IN_FLIGHT:
            if carried is not None:
                (number, ops), carried = carried, None
            elif exhausted:
                break
            else:
                try:
                    number, ops = next(numbered)
                    read = number + 1
                    _check_not_cut(resume_key, number, ops, state)
                    if number not in state.done:
                        _check_puts(ops, number * state.batch_size)
                except StopIteration:
                    exhausted = True
                    break
                except Exception as exc:
                    refused, exhausted = exc, True
                    break
            if number in state.done:
                if state.done[number] != batch_digest(ops):
                    raise _not_the_same_load(resume_key, number, "holds other puts than it did")
                skipped += len(ops)
                continue
            mine = {(op.namespace, op.key) for op in ops}
            if group and not keys.isdisjoint(mine):
                # batches in flight commit in any order: one that puts a key again waits,
                # so the later put of a key always wins
                carried = (number, ops)
                break
            keys |= mine
            group.append((number, ops))
        if group:
            results = yield [_batch_factory(programs, ops, resume_key, n) for n, ops in group]
            failed: list[tuple[int, BaseException]] = []
            for (number, ops), result in zip(group, results, strict=True):
                if isinstance(result, BaseException):
                    failed.append((number, result))
                else:
                    items, batches = items + len(ops), batches + 1
            if failed:
                number, error = failed[0]
                if not isinstance(error, Exception):
                    raise error
                first = number * state.batch_size
                wrapped = _stopped(
                    error,
                    f"batch {number}, puts {first}-{first + state.batch_size - 1}",
                    items + skipped,
                    resume_key,
                    others=True,
                )
                if wrapped is error:
                    raise error
                raise wrapped from error
            if progress is not None:
                progress(items + skipped)
        if refused is not None:
            stopped = _stopped(refused, None, items + skipped, resume_key)
            if stopped is refused:
                raise refused
            raise stopped from refused
    # batches an earlier run committed beyond the end of this input: the input is short, and
    # the load is not finished by it (the whole input, run again, finishes it)
    recorded, short = _short_input(resume_key, items + skipped, state, read)
    name = None if short else resume_key
    (built,) = yield from _run_one(
        lambda: programs._bulk_finish(name, items + skipped, rebuild_index)
    )
    yield from _run_one(programs._bulk_analyze)
    return BulkLoadReport(items, batches, skipped, built, recorded, short)


def _batch_factory(
    programs: BulkPrograms, ops: list[PutOp], name: str | None, number: int
) -> Callable[[], Program[int]]:
    return lambda: programs._bulk_batch(ops, name, number)


def _run_one(factory: Callable[[], Program[Any]]) -> Generator[Group, list[Any], list[Any]]:
    results = yield [factory]
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


def _stopped(
    error: Exception,
    where: str | None,
    before: int,
    resume_key: str | None,
    *,
    others: bool = False,
) -> Exception:
    """The error that stopped a load, saying what was written and how to go on: a bad value
    becomes an ``InvalidValueError`` (of the same class) whose message says it all; any other
    error keeps its type and carries the same words as a note."""
    again = "; the same load run again goes on from there" if resume_key is not None else ""
    what = f"{where}: " if where else ""
    which = "of other batches" if others else "before it"
    words = f"{what}nothing of its batch was written; {before} memories {which} were{again}"
    if isinstance(error, InvalidValueError):
        return type(error)(f"{error} ({words})")
    error.add_note(words)
    return error


def run_groups(
    driver: Generator[Group, list[Any], BulkLoadReport],
    run: Callable[[Group], list[Any]],
) -> BulkLoadReport:
    """Drive ``driver``, running each group with ``run`` (the sync stores' shell)."""
    try:
        group = next(driver)
        while True:
            group = driver.send(run(group))
    except StopIteration as stop:
        report: BulkLoadReport = stop.value
        return report
