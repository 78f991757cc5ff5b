"""Programs of the one Postgres layer on a scripted cursor: the sync and async runners send
each statement's rows back and return the program's result."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from langgraph_recall._pg.program import Finished, Program, Rows, Stmt, finish_alone, start
from langgraph_recall._pg.run_async import arun_program
from langgraph_recall._pg.run_sync import run_program


class ScriptedCursor:
    """Records what runs and answers each fetching statement with the next scripted rows."""

    def __init__(self, answers: Sequence[Rows]) -> None:
        self.answers = list(answers)
        self.log: list[tuple[str, str, Any, Any]] = []
        self._pending: Rows = []

    def execute(self, sql: str, params: Any = (), *, prepare: bool | None = None) -> None:
        self.log.append(("execute", sql, params, prepare))
        self._pending = self.answers.pop(0) if self.answers else []

    def executemany(self, sql: str, params: Any) -> None:
        self.log.append(("executemany", sql, params, None))

    def fetchall(self) -> Rows:
        return self._pending


class AsyncScriptedCursor(ScriptedCursor):
    async def execute(self, sql: str, params: Any = (), *, prepare: bool | None = None) -> None:  # type: ignore[override]
        ScriptedCursor.execute(self, sql, params, prepare=prepare)

    async def executemany(self, sql: str, params: Any) -> None:  # type: ignore[override]
        ScriptedCursor.executemany(self, sql, params)

    async def fetchall(self) -> Rows:  # type: ignore[override]
        return ScriptedCursor.fetchall(self)


def counting() -> Program[int]:
    yield Stmt("CREATE TABLE t (x int)")
    yield Stmt("INSERT INTO t VALUES (%s)", [(1,), (2,)], many=True)
    rows = yield Stmt("SELECT count(*) AS n FROM t", fetch=True, prepare=False)
    more = yield Stmt("SELECT 1", fetch=False)
    assert more == []  # a statement that does not fetch gets no rows back
    return int(rows[0]["n"])


EXPECTED_LOG = [
    ("execute", "CREATE TABLE t (x int)", (), None),
    ("executemany", "INSERT INTO t VALUES (%s)", [(1,), (2,)], None),
    ("execute", "SELECT count(*) AS n FROM t", (), False),
    ("execute", "SELECT 1", (), None),
]


def test_the_sync_runner_sends_rows_back_and_returns_the_result() -> None:
    cur = ScriptedCursor([[], [{"n": 2}], [{"ignored": 1}]])
    assert run_program(cur, counting()) == 2  # type: ignore[arg-type]
    assert cur.log == EXPECTED_LOG


def test_the_async_runner_runs_the_same_program_the_same_way() -> None:
    cur = AsyncScriptedCursor([[], [{"n": 2}], [{"ignored": 1}]])
    assert asyncio.run(arun_program(cur, counting())) == 2  # type: ignore[arg-type]
    assert cur.log == EXPECTED_LOG


def test_a_runner_continues_from_a_first_statement_already_taken() -> None:
    program = counting()
    first = start(program)
    assert isinstance(first, Stmt) and first.sql.startswith("CREATE")
    cur = ScriptedCursor([[], [{"n": 5}]])
    assert run_program(cur, program, first) == 5  # type: ignore[arg-type]
    assert [entry[1] for entry in cur.log] == [entry[1] for entry in EXPECTED_LOG]


def test_a_program_without_statements_is_finished_at_start() -> None:
    def nothing() -> Program[str]:
        return "done"
        yield Stmt("SELECT 1")

    assert start(nothing()) == Finished("done")
    assert run_program(ScriptedCursor([]), nothing()) == "done"  # type: ignore[arg-type]


def test_an_alone_statement_must_be_the_last_one() -> None:
    def alone() -> Program[int]:
        rows = yield Stmt("UPDATE t SET x = 1 RETURNING x", fetch=True, alone=True)
        return len(rows)

    program = alone()
    assert next(program).alone
    assert finish_alone(program, [{"x": 1}, {"x": 1}]) == 2

    def greedy() -> Program[None]:
        yield Stmt("UPDATE t SET x = 1", alone=True)
        yield Stmt("UPDATE t SET x = 2")

    program2 = greedy()
    next(program2)
    with pytest.raises(RuntimeError, match="after an 'alone' statement"):
        finish_alone(program2, [])
