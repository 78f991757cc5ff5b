"""The erasure programs behind ``forget(prefix)`` (I/O-free: they yield SQL requests).

Erasure is complete: the scope's items and history go, then — round by round — every
memory derived from them (``derived_from``, transitively) and every history row of any
memory that was derived from them in some version (deleted or re-pointed since), all in
one transaction; the planner statistics that quoted them are refreshed right after it
commits (:func:`refresh_statistics`). A memory that was once derived from the erased ones
but now derives from others lives on (its row and the history of its other versions
stay); what was derived from it is erased, since it may quote the erased text.

**It locks only what it touches.** :func:`erase_scope` first finds, without changing a
row, every namespace its erasure reaches (:func:`reach`), locks them in the store's one
lock order (the store-wide lock shared, then the namespace buckets ascending), looks again
under those locks, and takes a namespace that appeared meanwhile only with a try-lock
(which never waits, so it cannot deadlock). If one of those is busy it gives up before
deleting anything (:class:`MoreLocks`): the caller runs it again, locking them all in
order from the start. Every delete is limited to the namespaces held, so a row another
writer adds meanwhile elsewhere is never touched unlocked; such a row was written after
the erasure read the data, exactly as if it came after the erasure. Only an erasure whose
reach keeps changing under it ``exclusive=True`` takes the store-wide lock exclusively.
Other tenants' writes never wait for the erasure unless their namespace shares a lock
bucket with the erased one (one in 128).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langgraph_recall._pg.program import Stmt
from langgraph_recall.store.postgres import _sql
from langgraph_recall.store.postgres._types import Program

__all__ = ["MoreLocks", "erase_scope", "reach", "refresh_statistics"]

Pair = tuple[str, str]


@dataclass(frozen=True)
class MoreLocks:
    """An erasure that stopped before deleting anything: a namespace it reaches was locked
    by another writer. Run it again with ``namespaces`` locked from the start."""

    namespaces: tuple[str, ...]


def _lineage(sources: set[Pair]) -> Program[set[Pair]]:
    """Everything derived from ``sources``, transitively (read-only)."""
    seen = set(sources)
    while sources:
        pairs = sorted(sources)
        rows = yield Stmt(
            _sql.REACH_LINEAGE,
            {"ns": [ns for ns, _ in pairs], "key": [key for _, key in pairs]},
            fetch=True,
        )
        sources = {(row["ns"], row["key"]) for row in rows} - seen
        seen |= sources
    return seen


def reach(scope: dict[str, Any]) -> Program[set[str]]:
    """The namespaces whose rows erasing ``scope`` deletes (reads only, locks nothing).

    Example:
        ```python
        from langgraph_recall.store.postgres._erasure import reach

        program = reach({"ns_lo": "a", "ns_hi": "b"})
        next(program)                                    # the scope's items and history
        program.send([{"ns": "a", "key": "k"}])          # one lineage round ...
        try:
            program.send([])                             # ... finds nothing derived
        except StopIteration as stop:
            assert stop.value == {"a"}
        ```
    """
    rows = yield Stmt(_sql.REACH_SCOPE, scope, fetch=True)
    pairs = yield from _lineage({(row["ns"], row["key"]) for row in rows})
    return {ns for ns, _ in pairs}


def _lock(scope: dict[str, Any], hint: tuple[str, ...]) -> Program[tuple[str, ...] | MoreLocks]:
    """Lock the namespaces the erasure reaches; the tuple held, or :class:`MoreLocks`."""
    rows = yield Stmt(_sql.SCOPE_NAMESPACES, scope, fetch=True)
    held = {row["ns"] for row in rows} | set(hint)
    if held:
        yield Stmt(_sql.LOCK_NAMESPACES, {"ns": sorted(held)})
    while True:
        new = (yield from reach(scope)) - held
        if not new:
            return tuple(sorted(held))
        rows = yield Stmt(_sql.TRY_LOCK_NAMESPACES, {"ns": sorted(new)}, fetch=True)
        held |= new
        if not rows[0]["locked"]:
            return MoreLocks(tuple(sorted(held)))


def erase_scope(
    scope: dict[str, Any], *, hint: tuple[str, ...] = (), exclusive: bool = False
) -> Program[int | MoreLocks]:
    """Erase the namespace range ``scope`` (``ns_lo``/``ns_hi``); returns the number of
    items erased (the scope's and the derived ones elsewhere), or :class:`MoreLocks` when it
    stopped before deleting anything. ``hint``: namespaces to lock from the start (a
    previous attempt's); ``exclusive``: take the store-wide lock instead and run alone."""
    if exclusive:
        yield Stmt(_sql.LOCK_STORE)
        held: tuple[str, ...] | None = None
    else:
        locked = yield from _lock(scope, hint)
        if isinstance(locked, MoreLocks):
            return locked
        held = locked
    bounds = {**scope, "held": None if held is None else list(held)}
    gone = yield Stmt(_sql.FORGET_SCOPE, bounds, fetch=True)
    total = len(gone)
    # every memory of the scope, living or deleted before (its history remembers it), is a
    # source whose derived memories — and their history — are erased with it
    history = yield Stmt(_sql.FORGET_HISTORY_SCOPE, bounds, fetch=True)
    sources = {(row["ns"], row["key"]): True for row in (*gone, *history)}
    seen = dict(sources)  # (ns, key) -> whether its whole history is gone
    while sources:
        pairs = sorted(sources)
        rows = yield Stmt(
            _sql.FORGET_LINEAGE,
            {
                "ns": [ns for ns, _ in pairs],
                "key": [key for _, key in pairs],
                "purge": [sources[pair] for pair in pairs],
                "held": bounds["held"],
            },
            fetch=True,
        )
        total += sum(1 for row in rows if row["item"])
        sources = {}
        for row in rows:
            pair, purge = (row["ns"], row["key"]), not row["live"]
            if pair not in seen or (purge and not seen[pair]):
                sources[pair] = seen[pair] = purge
    return total


def refresh_statistics() -> Program[None]:
    """Resample the store's planner statistics (run after an erasure has committed, in a
    transaction of its own that holds no namespace lock)."""
    yield Stmt(_sql.ANALYZE_STORE)
