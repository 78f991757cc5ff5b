"""Planning a batch: validate every op, then sort them by kind (pure, backend-neutral).

A batch's reads see the state before its writes; of several puts to one key the last wins;
writes go in a stable (namespace, key) order so concurrent batches cannot deadlock.

Example:
    ```python
    from langgraph.store.base import GetOp, PutOp

    from langgraph_recall.store._plan import plan_batch

    plan = plan_batch(
        [GetOp(("a",), "k"), PutOp(("a",), "k", {"content": "x"})],
        fields=None,
        max_value_bytes=1 << 20,
        compile_filter=lambda f: (f, {}),
    )
    assert [op.key for _, op in plan.gets] == ["k"] and len(plan.upserts) == 1
    ```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from langgraph.store.base import (
    GetOp,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchOp,
)

from langgraph_recall.errors import InvalidValueError
from langgraph_recall.store._bounds import bound_query, check_rows, check_time, check_ttl, shown
from langgraph_recall.store._namespace import validate_namespace, validate_prefix
from langgraph_recall.store._types import MemorySearchOp
from langgraph_recall.store._values import PreparedValue, prepare_value, validate_key

__all__ = ["Plan", "checked_list_op", "normalise_search", "plan_batch", "search_op"]

C = TypeVar("C")


@dataclass
class Plan(Generic[C]):
    """A validated batch, by kind; ``C`` is the backend's compiled filter clause."""

    results: list[Result]
    gets: list[tuple[int, GetOp]] = field(default_factory=list)
    searches: list[tuple[int, MemorySearchOp, C | None, dict[str, Any]]] = field(
        default_factory=list
    )
    lists: list[tuple[int, ListNamespacesOp]] = field(default_factory=list)
    upserts: list[tuple[PreparedValue, float | None]] = field(default_factory=list)
    deletes: list[tuple[tuple[str, ...], str]] = field(default_factory=list)
    refresh: list[int] = field(default_factory=list)
    """Ids whose TTL the batch's reads refresh (written once, at the end of the batch)."""
    accessed: list[int] = field(default_factory=list)
    """Ids the batch's searches returned (access counts, recorded after its last statement)."""


def plan_batch(
    ops: Sequence[Op],
    *,
    fields: list[str] | None,
    max_value_bytes: int,
    compile_filter: Callable[[dict[str, Any]], tuple[C, dict[str, Any]]],
    entities: bool = False,
) -> Plan[C]:
    """Validate ``ops`` and sort them into a :class:`Plan` (raises before any I/O).

    Args:
        ops: The batch.
        fields: The store's default index fields (``None``: the whole value).
        max_value_bytes: The largest JSON value a put may write.
        compile_filter: The backend's filter compiler (clause, parameters).
        entities: Whether puts carry the entities their memories link through.
    """
    plan: Plan[C] = Plan(results=[None] * len(ops))
    latest_put: dict[tuple[tuple[str, ...], str], PutOp] = {}
    for position, op in enumerate(ops):
        if isinstance(op, GetOp):
            validate_prefix(op.namespace)
            validate_key(op.key)
            plan.gets.append((position, op))
        elif isinstance(op, (SearchOp, MemorySearchOp)):
            search = normalise_search(op)
            # no filter → no clause, so the search SQL of that shape is built once
            clause: C | None = None
            params: dict[str, Any] = {}
            if search.filter is not None:
                clause, params = compile_filter(search.filter)
            plan.searches.append((position, search, clause, params))
        elif isinstance(op, ListNamespacesOp):
            plan.lists.append((position, checked_list_op(op)))
        elif isinstance(op, PutOp):
            namespace = validate_namespace(op.namespace, allow_reserved=True)
            latest_put[(namespace, validate_key(op.key))] = op
        else:
            raise InvalidValueError(f"unknown store operation {type(op).__name__}")
    # a stable (namespace, key) order keeps concurrent upserts from deadlocking
    for (namespace, key), put in sorted(latest_put.items(), key=lambda entry: entry[0]):
        if put.value is None:
            plan.deletes.append((namespace, key))
            continue
        if put.index not in (None, False) and not (
            isinstance(put.index, list) and all(isinstance(f, str) for f in put.index)
        ):
            raise InvalidValueError(
                "index must be False, None or a list of field paths such as "
                f"['content'], got {shown(put.index)}"
            )
        fields = put.index if isinstance(put.index, list) else fields
        prepared = prepare_value(
            namespace,
            key,
            put.value,
            fields=fields,
            index=put.index is not False,
            max_value_bytes=max_value_bytes,
            entities=entities,
        )
        plan.upserts.append((prepared, check_ttl(put.ttl)))
    return plan


def normalise_search(op: SearchOp | MemorySearchOp) -> MemorySearchOp:
    prefix = validate_prefix(op.namespace_prefix)
    limit = check_rows(op.limit, "limit")  # bool is an int, as in InMemoryStore
    offset = check_rows(op.offset, "offset")
    query = op.query
    if query is not None:
        if not isinstance(query, str):
            raise InvalidValueError(f"query must be a string, got {type(query).__name__}")
        query = bound_query(query)
    if isinstance(op, MemorySearchOp):
        as_of = check_time(op.as_of, "as_of") if op.as_of is not None else None
        return op._replace(
            namespace_prefix=prefix, limit=limit, offset=offset, query=query, as_of=as_of
        )
    return MemorySearchOp(prefix, op.filter, limit, offset, query, op.refresh_ttl)


def search_op(
    namespace_prefix: tuple[str, ...],
    query: str | None,
    filter: dict[str, Any] | None,
    limit: int,
    offset: int,
    refresh_ttl: bool | None,
    as_of: datetime | None,
    include_invalid: bool,
    explain: bool = False,
    *,
    refresh_on_read: bool = True,
) -> MemorySearchOp:
    """A search op from ``search()``'s arguments, its namespace prefix checked (a merged
    batch must not carry a bad op); ``refresh_ttl=None`` means ``refresh_on_read``."""
    # validated before the op is queued: a merged batch must not carry a bad op
    namespace_prefix = validate_prefix(namespace_prefix)
    if refresh_ttl is None:
        refresh_ttl = refresh_on_read
    return MemorySearchOp(
        namespace_prefix,  # checked (and made a tuple) by _normalise_search
        filter,
        limit,
        offset,
        query,
        refresh_ttl,
        as_of,
        include_invalid,
        bool(explain),
    )


def checked_list_op(op: ListNamespacesOp) -> ListNamespacesOp:
    """``op`` with its conditions and counts checked (negative counts slice like
    ``InMemoryStore``'s; huge ones are clamped)."""
    conditions = op.match_conditions or ()
    if not isinstance(conditions, (list, tuple)):
        raise InvalidValueError("match_conditions must be a tuple of MatchCondition")
    checked: list[MatchCondition] = []
    for condition in conditions:
        if not isinstance(condition, MatchCondition) or condition.match_type not in (
            "prefix",
            "suffix",
        ):
            raise InvalidValueError(
                f"match condition {shown(condition)} is not a prefix/suffix MatchCondition"
            )
        path: Any = condition.path
        if isinstance(path, str):  # one label (a "." in it is refused, as in any label)
            path = (path,)
        checked.append(condition._replace(path=validate_prefix(path)))
    conditions = tuple(checked)
    max_depth = op.max_depth
    if max_depth is not None:
        max_depth = check_rows(max_depth, "max_depth", allow_negative=True)
    return op._replace(
        match_conditions=tuple(conditions),
        max_depth=max_depth,
        limit=check_rows(op.limit, "limit", allow_negative=True),
        offset=check_rows(op.offset, "offset", allow_negative=True),
    )
