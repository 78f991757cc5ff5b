"""Compile store search filters into parameterised SQL (pure; no I/O).

Operators: ``$eq $ne $gt $gte $lt $lte $in $nin $exists`` on a field, ``$and``/``$or``
over sub-filters, plain values for equality and nested dicts for nested fields.
Filters are checked like values (:mod:`langgraph_recall.store._bounds`): nesting at most
100 levels, dates within the store's time range, JSON operands only. Ordering operators
compare by the operand's type:

* numbers numerically (only stored JSON numbers can match),
* ``datetime`` operands and ISO-8601 date strings as timestamps (naive = UTC),
* other strings as text (byte order),

so ``{"n": {"$gte": 10}}`` never matches ``9`` (unlike text comparison). A field that
is missing or of another type never satisfies an ordering operator. ``$ne`` and
``$nin`` match missing fields. Unknown operators raise :class:`InvalidFilterError`.

Example:
    ```python
    from psycopg import sql
    from langgraph_recall.store._filters import compile_filter

    clause, params = compile_filter({"importance": {"$gte": 5}}, sql.SQL("value"))
    assert list(params.values())[-1] == 5
    ```
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from psycopg import sql

from langgraph_recall.errors import InvalidFilterError
from langgraph_recall.store._bounds import check_depth, check_json, check_text, check_time, shown

__all__ = ["FIELD_OPERATORS", "LOGICAL_OPERATORS", "compile_filter", "is_iso_datetime"]

FIELD_OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists"})
LOGICAL_OPERATORS = frozenset({"$and", "$or"})
_ORDERING_SQL = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
_ISO_DATE = re.compile(
    r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|z|[+-]\d{2}(:?\d{2})?)?)?$"
)


def is_iso_datetime(text: str) -> bool:
    """Whether ``text`` is an ISO-8601 date or date-time (what filters compare as time).

    Example:
        ```python
        from langgraph_recall.store._filters import is_iso_datetime

        assert is_iso_datetime("2024-05-01T10:00:00Z") and not is_iso_datetime("May")
        ```
    """
    if not _ISO_DATE.match(text):
        return False
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


class _Compiler:
    def __init__(self, column: sql.Composable, prefix: str) -> None:
        self.column = column
        self.prefix = prefix
        self.params: dict[str, Any] = {}

    def param(self, value: Any, cast: str = "") -> sql.Composable:
        name = f"{self.prefix}{len(self.params)}"
        self.params[name] = value
        placeholder = sql.Placeholder(name)
        return sql.SQL("{}::{}").format(placeholder, sql.SQL(cast)) if cast else placeholder

    def compile(self, filter_: Any, path: tuple[str, ...], depth: int = 1) -> sql.Composable:
        check_depth(depth, "filter", error=InvalidFilterError)
        if not isinstance(filter_, Mapping):
            raise InvalidFilterError(
                f"filter must be a dict like {{'kind': 'semantic'}}, got {type(filter_).__name__}"
            )
        clauses: list[sql.Composable] = []
        for name, condition in filter_.items():
            if not isinstance(name, str) or not name:
                raise InvalidFilterError(
                    f"filter field names must be non-empty strings: {shown(name)}"
                )
            check_text(name, "a filter field name", error=InvalidFilterError)
            if name in LOGICAL_OPERATORS:
                clauses.append(self.logical(name, condition, path, depth))
            elif name.startswith("$"):
                raise InvalidFilterError(
                    f"unknown filter operator {shown(name)} at field level; "
                    f"use $and/$or or a field name (field operators: {sorted(FIELD_OPERATORS)})"
                )
            else:
                clauses.append(self.field((*path, name), condition, depth))
        return _join(clauses, "AND")

    def logical(
        self, operator: str, parts: Any, path: tuple[str, ...], depth: int
    ) -> sql.Composable:
        if not isinstance(parts, (list, tuple)) or not parts:
            raise InvalidFilterError(f"{operator} needs a non-empty list of filters")
        compiled = [self.compile(part, path, depth + 1) for part in parts]
        return _join(compiled, "AND" if operator == "$and" else "OR")

    def field(self, path: tuple[str, ...], condition: Any, depth: int) -> sql.Composable:
        if isinstance(condition, Mapping) and condition:
            operators = [key for key in condition if isinstance(key, str) and key.startswith("$")]
            if operators and len(operators) != len(condition):
                raise InvalidFilterError(
                    f"field {'.'.join(path)!r} mixes operators and nested fields; split them"
                )
            if operators:
                return _join([self.operator(path, op, arg) for op, arg in condition.items()], "AND")
            return self.compile(condition, path, depth + 1)
        return self.operator(path, "$eq", condition)

    def json_at(self, path: tuple[str, ...]) -> sql.Composable:
        return sql.SQL("({} #> {})").format(self.column, self.param(list(path), "text[]"))

    def text_at(self, path: tuple[str, ...]) -> sql.Composable:
        return sql.SQL("({} #>> {})").format(self.column, self.param(list(path), "text[]"))

    def operator(self, path: tuple[str, ...], op: str, arg: Any) -> sql.Composable:
        if op not in FIELD_OPERATORS:
            raise InvalidFilterError(
                f"unknown filter operator {shown(op)} on {'.'.join(path)!r}; "
                f"supported: {sorted(FIELD_OPERATORS | LOGICAL_OPERATORS)}"
            )
        if op == "$exists":
            if not isinstance(arg, bool):
                raise InvalidFilterError("$exists takes true or false")
            test = "IS NOT NULL" if arg else "IS NULL"
            return sql.SQL("({} {})").format(self.json_at(path), sql.SQL(test))
        if op in ("$in", "$nin"):
            if not isinstance(arg, (list, tuple)):
                raise InvalidFilterError(f"{op} takes a list of values")
            values = [_json_literal(item, op) for item in arg]
            member = sql.SQL("({} = ANY({}))").format(
                self.json_at(path), self.param(values, "text[]::jsonb[]")
            )
            if op == "$in":
                return sql.SQL("coalesce({}, false)").format(member)
            return sql.SQL("(NOT coalesce({}, false))").format(member)
        if op in ("$eq", "$ne"):
            if isinstance(arg, datetime):
                same = sql.SQL("(lgm_try_timestamptz({}) = {})").format(
                    self.text_at(path), self.param(_moment(arg, op), "timestamptz")
                )
            elif arg is None:
                same = sql.SQL("({0} IS NULL OR {0} = 'null'::jsonb)").format(self.json_at(path))
            else:
                same = sql.SQL("({} = {})").format(
                    self.json_at(path), self.param(_json_literal(arg, op), "jsonb")
                )
            if op == "$eq":
                return sql.SQL("coalesce({}, false)").format(same)
            return sql.SQL("(NOT coalesce({}, false))").format(same)
        return self.ordering(path, op, arg)

    def ordering(self, path: tuple[str, ...], op: str, arg: Any) -> sql.Composable:
        comparison = sql.SQL(_ORDERING_SQL[op])
        if isinstance(arg, bool) or arg is None:
            raise InvalidFilterError(f"{op} needs a number, date or string, got {arg!r}")
        if isinstance(arg, (int, float)):
            check_json(arg, f"the {op} operand", error=InvalidFilterError)
            json_value = self.json_at(path)
            return sql.SQL(
                "coalesce(CASE WHEN jsonb_typeof({0}) = 'number' THEN ({0})::numeric {1} {2} END,"
                " false)"
            ).format(json_value, comparison, self.param(arg, "numeric"))
        if isinstance(arg, datetime) or (isinstance(arg, str) and is_iso_datetime(arg)):
            moment = _moment(arg, op)
            return sql.SQL("coalesce(lgm_try_timestamptz({}) {} {}, false)").format(
                self.text_at(path), comparison, self.param(moment, "timestamptz")
            )
        if isinstance(arg, str):
            check_text(arg, f"the {op} operand", error=InvalidFilterError)
            json_value = self.json_at(path)
            return sql.SQL(
                "coalesce(CASE WHEN jsonb_typeof({0}) = 'string' "
                "THEN ({0} #>> '{{}}') COLLATE \"C\" {1} {2} END, false)"
            ).format(json_value, comparison, self.param(arg, "text"))
        raise InvalidFilterError(f"{op} needs a number, date or string, got {type(arg).__name__}")


def _moment(arg: datetime | str, op: str) -> datetime:
    return check_time(arg, f"the {op} operand", error=InvalidFilterError)


def _json_literal(value: Any, op: str) -> str:
    if isinstance(value, datetime):
        value = _moment(value, op).isoformat()
    check_json(value, f"the {op} operand", error=InvalidFilterError)
    try:
        return json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InvalidFilterError(f"{op} operand {value!r} is not JSON: {exc}") from None


def _join(clauses: list[sql.Composable], word: str) -> sql.Composable:
    if not clauses:
        return sql.SQL("true")
    if len(clauses) == 1:
        return clauses[0]
    return sql.SQL("(") + sql.SQL(f" {word} ").join(clauses) + sql.SQL(")")


def compile_filter(
    filter_: Mapping[str, Any] | None, column: sql.Composable, *, prefix: str = "f"
) -> tuple[sql.Composable, dict[str, Any]]:
    """Compile ``filter_`` against the JSONB ``column`` into ``(clause, params)``.

    Parameters are named ``{prefix}0``, ``{prefix}1``, ...; the clause is ``true`` for
    an empty filter.

    Raises:
        InvalidFilterError: unknown operator, malformed operand or filter shape.

    Example:
        ```python
        from langgraph_recall.store._filters import compile_filter

        from psycopg import sql

        clause, params = compile_filter({"$or": [{"a": 1}, {"b": {"$in": [2, 3]}}]}, sql.SQL("v"))
        assert len(params) == 4
        ```
    """
    if filter_ is None:
        return sql.SQL("true"), {}
    compiler = _Compiler(column, prefix)
    return compiler.compile(filter_, ()), compiler.params
