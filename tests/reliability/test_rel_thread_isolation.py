"""Thread isolation in the checkpointers: look-alike ``thread_id``s — LIKE and glob
metacharacters, Redis hash-tag braces, the escaped form of another id, separators,
case, whitespace, unicode confusables — never see, list or delete each other's state."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from langgraph_recall.checkpoint.postgres import PostgresSaver
from langgraph_recall.checkpoint.redis import RedisSaver
from tests.graph_helpers import chat_graph
from tests.reliability._figures import Figures
from tests.reliability._workload import thread_config, turn_input

LOOKALIKE_THREADS = [
    "t1",
    "t10",
    "t%1",
    "t_1",
    "t*",
    "t?",
    "t[1]",
    "{t1}",
    "t1}",
    "%7Bt1%7D",  # the escaped form of "{t1}"
    "t:1",
    "t1:cp",
    "t\\1",
    "T1",
    "t1 ",
    "tі",  # CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I
    "'; DROP TABLE checkpoints; --",
]


@contextmanager
def open_saver(kind: str, request: pytest.FixtureRequest) -> Iterator[Any]:
    if kind == "postgres":
        dsn = request.getfixturevalue("postgres_dsn")
        with PostgresSaver.from_conn_string(dsn) as saver:
            saver.setup()
            yield saver
    else:
        url = request.getfixturevalue("redis_url")
        prefix = request.getfixturevalue("redis_prefix")
        with RedisSaver.from_conn_string(url, prefix=prefix) as saver:
            saver.setup()
            yield saver


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("redis", marks=pytest.mark.redis),
    ],
)
def test_lookalike_thread_ids_are_isolated(
    kind: str, request: pytest.FixtureRequest, figures: Figures
) -> None:
    with open_saver(kind, request) as saver:
        graph = chat_graph(saver)
        for tid in LOOKALIKE_THREADS:
            graph.invoke(turn_input(f"turn of {tid!r}"), thread_config(tid))

        def humans(tid: str) -> list[str]:
            state = graph.get_state(thread_config(tid)).values
            return [str(m.content) for m in state.get("messages", []) if m.type == "human"]

        for tid in LOOKALIKE_THREADS:
            assert humans(tid) == [f"turn of {tid!r}"], tid
            listed = list(saver.list(thread_config(tid)))
            assert listed and {c.config["configurable"]["thread_id"] for c in listed} == {tid}
        # deleting every other thread leaves exactly the rest
        doomed = LOOKALIKE_THREADS[::2]
        for tid in doomed:
            saver.delete_thread(tid)
        for tid in LOOKALIKE_THREADS:
            expected = [] if tid in doomed else [f"turn of {tid!r}"]
            assert humans(tid) == expected, tid
        survivors = {c.config["configurable"]["thread_id"] for c in saver.list(None, limit=10_000)}
        assert survivors == set(LOOKALIKE_THREADS) - set(doomed)
    figures.add("thread_isolation_checks", len(LOOKALIKE_THREADS) * 3)
    figures.add("thread_isolation_leaks", 0)  # any leak fails an assertion above
