"""The erasure program behind ``forget(prefix)`` (I/O-free: it yields SQL requests).

Erasure is complete: the scope's items and history go, then — round by round — every
memory derived from them (``derived_from``, transitively), every history row of any
memory that was derived from them in some version (deleted or re-pointed since), and
finally the planner statistics that quoted them (``_sql.ANALYZE_STORE``), all in the
caller's one transaction. A memory that was once derived from the erased ones but now
derives from others lives on (its row and the history of its other versions stay); what
was derived from it is erased, since it may quote the erased text.
"""

from __future__ import annotations

from typing import Any

from langgraph_recall._pg.program import Stmt
from langgraph_recall.store.postgres import _sql
from langgraph_recall.store.postgres._types import Program

__all__ = ["erase_scope"]


def erase_scope(scope: dict[str, Any], *, analyze: bool = True) -> Program[int]:
    """Erase the namespace range ``scope`` (``ns_lo``/``ns_hi``); returns the number of
    items erased (the scope's and the derived ones elsewhere). ``analyze=False`` skips the
    statistics refresh (the caller erases more and refreshes them last)."""
    gone = yield Stmt(_sql.FORGET_SCOPE, scope, fetch=True)
    total = len(gone)
    # every memory of the scope, living or deleted before (its history remembers it), is a
    # source whose derived memories — and their history — are erased with it
    history = yield Stmt(_sql.FORGET_HISTORY_SCOPE, scope, fetch=True)
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
            },
            fetch=True,
        )
        total += sum(1 for row in rows if row["item"])
        sources = {}
        for row in rows:
            pair, purge = (row["ns"], row["key"]), not row["live"]
            if pair not in seen or (purge and not seen[pair]):
                sources[pair] = seen[pair] = purge
    if analyze:
        yield Stmt(_sql.ANALYZE_STORE)
    return total
