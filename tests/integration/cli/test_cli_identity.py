"""``inspect`` / ``forget`` / ``demo`` with user ids as apps have them (``alice@example.com``,
``org.team/user``, unicode) and look-alikes (``u1``, ``u1.``, ``u1%2E``): each command sees
exactly the user it is given, encoded as the nodes encode it (in-process ``main``, real
Postgres store and checkpointer)."""

from __future__ import annotations

import re

import pytest

from langgraph_recall.checkpoint.postgres import PostgresSaver
from langgraph_recall.cli import main
from langgraph_recall.cli._backends import choose_model
from langgraph_recall.cli._console import Console
from langgraph_recall.cli.demo import run_demo
from tests.reliability._erasure import (
    cli_store,
    marker,
    memory_graph,
    pg_rows_with,
    plain_graph,
    run_user,
)

pytestmark = [pytest.mark.postgres]

USERS = ["alice@example.com", "org.team/user", "u1", "u1.", "u1%2E", "张三"]


def test_inspect_and_forget_see_exactly_the_user_they_are_given(
    postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    marks = {user: marker() for user in USERS}
    with cli_store(postgres_dsn) as store, PostgresSaver.from_conn_string(postgres_dsn) as saver:
        saver.setup()
        graphs = (memory_graph(store, saver), plain_graph(saver))
        for index, user in enumerate(USERS):
            way = "context-dict" if index % 2 else "configurable"
            run_user(graphs, user, way, f"thread-{index}", marks[user])
    for index, user in enumerate(USERS):
        assert main(["inspect", "--user", user, "--postgres", postgres_dsn]) == 0
        shown = capsys.readouterr().out
        assert f"thread-{index} (" in shown
        assert re.findall(r"thread-\d+ \(", shown) == [f"thread-{index} ("]
        assert marks[user] in shown
        assert not any(marks[other] in shown for other in USERS if other != user), user

    assert main(["forget", "--user", "u1%2E", "--yes", "--postgres", postgres_dsn]) == 0
    assert "deleted 1 conversation threads" in capsys.readouterr().out
    assert pg_rows_with(postgres_dsn, marks["u1%2E"]) == {}
    for user in USERS:
        if user != "u1%2E":
            assert "public.lgm_memory_items" in pg_rows_with(postgres_dsn, marks[user]), user


def test_demo_runs_for_a_user_id_with_dots(
    postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with cli_store(postgres_dsn) as store, PostgresSaver.from_conn_string(postgres_dsn) as saver:
        saver.setup()
        report = run_demo(
            Console(),
            store=store,
            checkpointer=saver,
            choice=choose_model(model=None, offline=True),
            user_id="ann.lee@example.com",
        )
    assert "Zhang San" in report.name_answer
    args = ["--postgres", postgres_dsn]
    assert main(["forget", "--user", "ann.lee@example.com", "--yes", *args]) == 0
    out = capsys.readouterr().out
    assert "deleted 4 conversation threads" in out and "nothing of this user is left" in out
