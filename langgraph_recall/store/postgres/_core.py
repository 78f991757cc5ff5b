"""The store class both Postgres memory stores share: BaseStore API on top of the programs.

:class:`MemoryStoreCore` defines every public method once (sync and ``a*`` twins) in
terms of two runners, ``_run`` and ``_arun``, which the sync and async stores implement.
"""

from __future__ import annotations

import asyncio
import functools
import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any, Literal, TypeVar, cast

from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    NamespacePath,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from typing_extensions import Unpack

from langgraph_recall.errors import BulkLoadWarning, ConfigurationError, InvalidValueError
from langgraph_recall.retrieval import RetrievalConfig
from langgraph_recall.retrieval._profile import profile_items
from langgraph_recall.store._namespace import (
    validate_namespace,
    validate_prefix,
)
from langgraph_recall.store._plan import search_op
from langgraph_recall.store._types import DecayConfig, HistoryEntry, MemorySearchOp
from langgraph_recall.store.postgres._bulk import (
    BULK_IN_FLIGHT,
    BulkLoadReport,
    Group,
    bulk_driver,
    run_groups,
)
from langgraph_recall.store.postgres._erasure import MoreLocks
from langgraph_recall.store.postgres._programs import MemoryPrograms
from langgraph_recall.store.postgres._state import StoreOptions
from langgraph_recall.store.postgres._types import Program, SetupReport

__all__ = ["MemoryStoreCore", "op_list", "reads_only"]

T = TypeVar("T")

FORGET_ATTEMPTS = 4
"""Attempts of ``forget`` that lock only what it erases; the last one runs alone (the
store-wide lock, exclusive): reached only when other writers keep adding memories derived
from the erased ones in namespaces it has not locked yet."""


_PROFILE_POOL = 500
"""How many slotted memories ``user_profile`` reads (the newest first) to pick from."""


class MemoryStoreCore(MemoryPrograms, BaseStore):
    """Public API of both Postgres memory stores, written once over ``_run``/``_arun``."""

    supports_ttl = True
    # our extras, read by store_supports() (langgraph_recall/store/_capabilities.py)
    supports_as_of = True
    supports_explain = True
    supports_include_invalid = True
    supports_forget = True
    supports_history = True
    supports_bulk_load = True
    supports_invalidate = True

    def __init__(
        self,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        retrieval: RetrievalConfig | None = None,
        **options: Unpack[StoreOptions],
    ) -> None:
        super().__init__(index=index, ttl=ttl, retrieval=retrieval, **options)
        if self.ttl_config and self.ttl_config.get("sweep_interval_minutes") is not None:
            self._sweep_interval_seconds(None)  # a bad interval fails here, not in the sweeper

    def _sweep_interval_seconds(self, minutes: float | None) -> float:
        """Seconds between TTL sweeps: ``minutes``, else the TTL config's, else 5 minutes."""
        value = (
            minutes
            if minutes is not None
            else (self.ttl_config or {}).get("sweep_interval_minutes")
        )
        if value is None:
            value = 5
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigurationError(f"sweep interval must be a number of minutes, got {value!r}")
        if not (math.isfinite(value) and value > 0):
            raise ConfigurationError(f"sweep interval must be positive minutes, got {value!r}")
        return float(value) * 60

    # ------------------------------------------------------------------ runners
    # A program given as a factory (every public method) may run again when the server
    # breaks its transaction as a deadlock victim or serialization failure.
    # ``read``: the program is a batch that only reads; it may run on the store's standby.
    def _run(
        self, program: Program[T] | Callable[[], Program[T]], *, read: bool = False
    ) -> T:  # pragma: no cover
        raise NotImplementedError

    async def _arun(
        self, program: Program[T] | Callable[[], Program[T]], *, read: bool = False
    ) -> T:  # pragma: no cover
        raise NotImplementedError

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run several operations in one transaction (reads see the state before writes)."""
        listed = op_list(ops)
        return self._run(functools.partial(self._batch_program, listed), read=reads_only(listed))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async :meth:`batch`."""
        listed = op_list(ops)
        program = functools.partial(self._batch_program, listed)
        return await self._arun(program, read=reads_only(listed))

    # ------------------------------------------------------------------ public API
    def setup(self) -> SetupReport:
        """Create or migrate the schema (idempotent); choose pgvector or exact search."""
        return self._run(self._setup_program)

    async def asetup(self) -> SetupReport:
        """Async :meth:`setup`."""
        return await self._arun(self._setup_program)

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """Fetch one memory (invalidated ones too; expired ones never)."""
        validate_prefix(namespace)
        return super().get(namespace, key, refresh_ttl=refresh_ttl)

    async def aget(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """Async :meth:`get`."""
        validate_prefix(namespace)
        return await super().aget(namespace, key, refresh_ttl=refresh_ttl)

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        """Add or replace a memory (see the module docs for the value fields)."""
        validate_namespace(namespace)
        super().put(namespace, key, value, index, ttl=ttl)

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        """Async :meth:`put`."""
        validate_namespace(namespace)
        await super().aput(namespace, key, value, index, ttl=ttl)

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """Delete a memory (recorded in history); deleting a missing key is a no-op."""
        validate_prefix(namespace)
        super().delete(namespace, key)

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        """Async :meth:`delete`."""
        validate_prefix(namespace)
        await super().adelete(namespace, key)

    def list_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """Namespaces holding unexpired memories (``*`` matches one label)."""
        validate_prefix(prefix or ())
        validate_prefix(suffix or ())
        return super().list_namespaces(
            prefix=prefix, suffix=suffix, max_depth=max_depth, limit=limit, offset=offset
        )

    async def alist_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """Async :meth:`list_namespaces`."""
        validate_prefix(prefix or ())
        validate_prefix(suffix or ())
        return await super().alist_namespaces(
            prefix=prefix, suffix=suffix, max_depth=max_depth, limit=limit, offset=offset
        )

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
        as_of: datetime | None = None,
        include_invalid: bool = False,
        explain: bool = False,
    ) -> list[SearchItem]:
        """Search memories under ``namespace_prefix``.

        Returns memories valid at ``as_of`` (default: now) — ``valid_from <= t <
        invalid_at`` — unless ``include_invalid``; expired memories never. With a
        ``query``: hybrid lexical + vector retrieval ranked by ``RetrievalConfig``;
        without: filter matches, most recently updated first (``score=None``).

        ``score`` is the fused ranking score, **not** a similarity: with
        ``explain=True`` the items are :class:`ExplainedSearchItem` whose
        ``explanation`` gives each term of it (lexical, vector, recency, importance,
        access, time match; they add up to ``score``) and the raw cosine similarity.
        """
        op = search_op(
            namespace_prefix,
            query,
            filter,
            limit,
            offset,
            refresh_ttl,
            as_of,
            include_invalid,
            explain,
            refresh_on_read=self.refresh_on_read,
        )
        ops: list[Any] = [op]  # a MemorySearchOp: the store's own op
        return _search_results(self.batch(ops)[0])

    async def asearch(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
        as_of: datetime | None = None,
        include_invalid: bool = False,
        explain: bool = False,
    ) -> list[SearchItem]:
        """Async :meth:`search`."""
        op = search_op(
            namespace_prefix,
            query,
            filter,
            limit,
            offset,
            refresh_ttl,
            as_of,
            include_invalid,
            explain,
            refresh_on_read=self.refresh_on_read,
        )
        ops: list[Any] = [op]  # a MemorySearchOp: the store's own op
        return _search_results((await self.abatch(ops))[0])

    def invalidate(
        self, namespace: tuple[str, ...], key: str, *, at: datetime | None = None
    ) -> bool:
        """Mark a memory as no longer valid from ``at`` (default now); ``False`` if absent."""
        return self._run(functools.partial(self._invalidate_program, namespace, key, at))

    async def ainvalidate(
        self, namespace: tuple[str, ...], key: str, *, at: datetime | None = None
    ) -> bool:
        """Async :meth:`invalidate`."""
        return await self._arun(functools.partial(self._invalidate_program, namespace, key, at))

    def user_profile(self, namespace: tuple[str, ...], *, limit: int = 8) -> list[SearchItem]:
        """The user's profile: current memories of the profile slots (name, home, work,
        diet, tools, preferences: ``langgraph_recall.retrieval._profile.PROFILE_SLOTS``), one
        per slot, identity first, at most ``limit``."""
        found = self.search(namespace, filter={"slot": {"$exists": True}}, limit=_PROFILE_POOL)
        return profile_items(found, limit=limit)

    async def auser_profile(
        self, namespace: tuple[str, ...], *, limit: int = 8
    ) -> list[SearchItem]:
        """Async :meth:`user_profile`."""
        found = await self.asearch(
            namespace, filter={"slot": {"$exists": True}}, limit=_PROFILE_POOL
        )
        return profile_items(found, limit=limit)

    def history(self, namespace: tuple[str, ...], key: str) -> list[HistoryEntry]:
        """Audit history of one memory, oldest first."""
        return self._run(functools.partial(self._history_program, namespace, key))

    async def ahistory(self, namespace: tuple[str, ...], key: str) -> list[HistoryEntry]:
        """Async :meth:`history`."""
        return await self._arun(functools.partial(self._history_program, namespace, key))

    def forget(
        self, namespace_prefix: tuple[str, ...], *, exact: bool = False, analyze: bool = True
    ) -> int:
        """Erase everything under ``namespace_prefix`` in one transaction.

        Deletes the items (with their embeddings and full-text data), their history,
        every memory ``derived_from`` them (transitively) and the history of every memory
        that was derived from them, then refreshes the planner statistics that quoted
        them (``ANALYZE``, ~0.5 s at 10k memories, after the erasure committed). It locks
        only the namespaces it erases: other tenants keep writing meanwhile. Returns the
        number of items erased.

        Args:
            namespace_prefix: What to erase, e.g. ``user_namespace(user_id)``.
            exact: Erase only the items whose namespace is exactly ``namespace_prefix``
                (and what derives from them), nothing under it.
            analyze: ``False`` leaves the statistics to the next ``ANALYZE``: erasing many
                users in a row, pass it for all but the last.
        """
        hint: tuple[str, ...] = ()
        for attempt in range(FORGET_ATTEMPTS):
            program = functools.partial(
                self._forget_program,
                namespace_prefix,
                hint,
                exclusive=attempt == FORGET_ATTEMPTS - 1,
                exact=exact,
            )
            outcome = self._run(program)
            if not isinstance(outcome, MoreLocks):
                break
            hint = outcome.namespaces
        assert not isinstance(outcome, MoreLocks)  # the last attempt runs alone
        if analyze:
            self._run(self._statistics_program)
        return outcome

    async def aforget(
        self, namespace_prefix: tuple[str, ...], *, exact: bool = False, analyze: bool = True
    ) -> int:
        """Async :meth:`forget`."""
        hint: tuple[str, ...] = ()
        for attempt in range(FORGET_ATTEMPTS):
            program = functools.partial(
                self._forget_program,
                namespace_prefix,
                hint,
                exclusive=attempt == FORGET_ATTEMPTS - 1,
                exact=exact,
            )
            outcome = await self._arun(program)
            if not isinstance(outcome, MoreLocks):
                break
            hint = outcome.namespaces
        assert not isinstance(outcome, MoreLocks)  # the last attempt runs alone
        if analyze:
            await self._arun(self._statistics_program)
        return outcome

    def sweep(self) -> int:
        """Delete expired memories now (recorded as ``expire`` in history); returns the count.

        Sweeps a few namespace lock buckets per transaction, so other tenants' writes wait
        at most for the part that holds their bucket."""
        chunks = self._run(self._expired_program)
        return sum(self._run(functools.partial(self._sweep_program, chunk)) for chunk in chunks)

    async def asweep(self) -> int:
        """Async :meth:`sweep`."""
        swept = 0
        for chunk in await self._arun(self._expired_program):
            swept += await self._arun(functools.partial(self._sweep_program, chunk))
        return swept

    sweep_ttl = sweep
    asweep_ttl = asweep

    def flush_access(self) -> None:
        """Write the access counts searches recorded but have not written yet.

        Searches buffer their access counts and the store writes them with its next
        operation once the oldest is ``access_flush_interval`` seconds old; closing a
        store opened with ``from_conn_string`` flushes too. Call this before handing the
        counts to another process, e.g. at shutdown of a store built on your own pool.
        """
        self._run(self._flush_access_program)

    async def aflush_access(self) -> None:
        """Async :meth:`flush_access`."""
        await self._arun(self._flush_access_program)

    def forget_decayed(
        self, namespace_prefix: tuple[str, ...] = (), *, config: DecayConfig | None = None
    ) -> int:
        """Retire low-value memories (see :class:`DecayConfig`); returns how many (a few
        namespace lock buckets per transaction, like :meth:`sweep`)."""
        chosen = config or DecayConfig()
        chunks = self._run(functools.partial(self._decay_plan_program, namespace_prefix, chosen))
        return sum(
            self._run(functools.partial(self._decay_program, namespace_prefix, chosen, chunk))
            for chunk in chunks
        )

    async def aforget_decayed(
        self, namespace_prefix: tuple[str, ...] = (), *, config: DecayConfig | None = None
    ) -> int:
        """Async :meth:`forget_decayed`."""
        chosen = config or DecayConfig()
        plan = functools.partial(self._decay_plan_program, namespace_prefix, chosen)
        retired = 0
        for chunk in await self._arun(plan):
            decay = functools.partial(self._decay_program, namespace_prefix, chosen, chunk)
            retired += await self._arun(decay)
        return retired

    def bulk_load(
        self,
        puts: Iterable[PutOp],
        *,
        batch_size: int | None = None,
        resume_key: str | None = None,
        rebuild_index: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> BulkLoadReport:
        """Write many puts fast: batches of ``batch_size`` (one embedding call and one
        transaction each, validated and stored exactly as :meth:`batch` stores puts), two in
        flight at once.

        Args:
            puts: ``PutOp``s (no deletes), read lazily: a generator over a file is fine.
            batch_size: Puts per batch (default 1,000; a resumed load: the size it was
                started with, and another size is refused).
            resume_key: A name for this load. Each batch records in its own transaction that
                it committed; the same load started again (same puts in the same order,
                same batch size) skips those batches. A finished load skips everything.
            rebuild_index: pgvector path: drop the HNSW index, load, build it once at the
                end (far faster for a large load; searches meanwhile scan exactly, and other
                writers wait while the index builds). The exact path has no index to build.
            progress: Called after each group of batches with the puts done so far
                (skipped ones included).

        Raises:
            InvalidValueError: a put ``put`` would refuse, or a delete; the message names its
                batch and says what was written before it.

        Warns:
            BulkLoadWarning: the input held fewer puts than ``resume_key`` had recorded (a
                truncated file run again; also in the report's ``warning``).
        """
        driver = bulk_driver(self, puts, batch_size, resume_key, rebuild_index, progress)
        with ThreadPoolExecutor(BULK_IN_FLIGHT, thread_name_prefix="lgm-bulk") as pool:

            def run(group: Group) -> list[Any]:
                futures = [pool.submit(self._run, program) for program in group]
                return [future.exception() or future.result() for future in futures]

            report = run_groups(driver, run)
        if report.warning is not None:
            warnings.warn(report.warning, BulkLoadWarning, stacklevel=2)
        return report

    async def abulk_load(
        self,
        puts: Iterable[PutOp],
        *,
        batch_size: int | None = None,
        resume_key: str | None = None,
        rebuild_index: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> BulkLoadReport:
        """Async :meth:`bulk_load`."""
        driver = bulk_driver(self, puts, batch_size, resume_key, rebuild_index, progress)
        try:
            group = next(driver)
            while True:
                results = await asyncio.gather(
                    *(self._arun(program) for program in group), return_exceptions=True
                )
                group = driver.send(list(results))
        except StopIteration as stop:
            report: BulkLoadReport = stop.value
        if report.warning is not None:
            warnings.warn(report.warning, BulkLoadWarning, stacklevel=2)
        return report


def reads_only(ops: Sequence[Op]) -> bool:
    """Whether a batch writes nothing (gets, searches and listings only)."""
    return all(isinstance(op, (GetOp, SearchOp, MemorySearchOp, ListNamespacesOp)) for op in ops)


def op_list(ops: Iterable[Op]) -> list[Op]:
    """``ops`` as a list, or :class:`InvalidValueError` when it is not an iterable of ops."""
    if isinstance(ops, (str, bytes, Mapping)) or not isinstance(ops, Iterable):
        raise InvalidValueError(
            f"batch() takes an iterable of store operations, got {type(ops).__name__}"
        )
    return list(ops)


def _search_results(result: Result) -> list[SearchItem]:
    """The result of a search op (a batch's results are typed as any op's)."""
    assert isinstance(result, list)
    return cast("list[SearchItem]", result)
