"""The statement vocabulary of every Postgres component: programs that yield statements.

Database work is written once, as a *program*: a generator that yields :class:`Stmt` objects and
receives each statement's rows back, and returns its result. A runner executes it on a cursor
(``run_program`` in :mod:`~langgraph_recall._pg.run_sync`, ``arun_program`` in
:mod:`~langgraph_recall._pg.run_async`), so sync and async code differ only in the runner.
Programs do no I/O and are unit-tested by sending them rows.

Example:
    ```python
    from langgraph_recall._pg.program import Program, Stmt

    def one() -> Program[int]:
        rows = yield Stmt("SELECT 1 AS x", fetch=True)
        return int(rows[0]["x"])

    program = one()
    assert next(program).sql == "SELECT 1 AS x"
    try:
        program.send([{"x": 1}])
    except StopIteration as stop:
        assert stop.value == 1
    ```
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from psycopg import sql
from psycopg.rows import DictRow

__all__ = ["Finished", "Program", "Rows", "Stmt", "T", "finish_alone", "start"]

T = TypeVar("T")
"""The result type of a program."""


@dataclass(frozen=True)
class Stmt:
    """One statement of a program.

    Attributes:
        sql: The SQL: text (``%s`` or ``%(name)s`` placeholders) or composed with
            ``psycopg.sql``.
        params: Parameters, positional or by name; for ``many=True`` a sequence of
            parameter rows.
        fetch: Send the result rows back into the program.
        many: Run with ``executemany``.
        prepare: Passed to ``cursor.execute`` (``None``: the runner's default).
        alone: The statement is the program's only one and atomic by itself: if it comes
            first, the connector runs it in autocommit (its own implicit transaction, one
            round trip, no ``BEGIN``/``COMMIT``); the program must then end.
        tolerate_error: Run the statement in a savepoint; a database error is sent back
            into the program (instead of rows) rather than raised.
        isolated: Bookkeeping that must never share a transaction with the program's
            other statements: the runner commits the program's transaction so far, runs
            this statement alone in a short transaction of its own and sends back a lock
            timeout or deadlock error instead of raising it; later statements start a new
            transaction (the memory store's access counts and TTL refreshes).
        locks: With ``isolated``: a statement (same ``params``) run first in the isolated
            transaction, taking its locks in the caller's one lock order.
    """

    sql: str | sql.SQL | sql.Composed
    params: Sequence[Any] | Mapping[str, Any] = ()
    fetch: bool = False
    many: bool = False
    prepare: bool | None = None
    alone: bool = False
    tolerate_error: bool = False
    isolated: bool = False
    locks: str | None = None


Rows = list[DictRow]
Program = Generator[Stmt, Rows, T]


@dataclass(frozen=True, slots=True)
class Finished(Generic[T]):
    """The result of a program that ended before yielding any statement."""

    value: T


def start(program: Program[T]) -> Stmt | Finished[T]:
    """A program's first statement, or its result if it yields none.

    Example:
        ```python
        from langgraph_recall._pg.program import Finished, Program, Stmt, start

        def nothing() -> Program[int]:
            return 7
            yield Stmt("SELECT 1")

        assert start(nothing()) == Finished(7)
        ```
    """
    try:
        return next(program)
    except StopIteration as stop:
        return Finished(stop.value)


def finish_alone(program: Program[T], rows: Rows) -> T:
    """Send the rows of a program's ``alone`` statement back and return its result.

    Raises:
        RuntimeError: The program yielded another statement after an ``alone`` one.

    Example:
        ```python
        from langgraph_recall._pg.program import Program, Stmt, finish_alone

        def one() -> Program[int]:
            rows = yield Stmt("SELECT 1 AS x", fetch=True, alone=True)
            return int(rows[0]["x"])

        program = one()
        next(program)
        assert finish_alone(program, [{"x": 1}]) == 1
        ```
    """
    try:
        stmt = program.send(rows)
    except StopIteration as stop:
        result: T = stop.value
        return result
    program.close()
    raise RuntimeError(f"a program yielded {str(stmt.sql)[:40]!r} after an 'alone' statement")
