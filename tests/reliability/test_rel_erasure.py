"""Erasure is complete: after ``forget_user`` / ``langgraph-recall forget --user X`` nothing
of X is left — no memory, history row, derived memory, reflection cursor, thread link, and
no checkpoint of any thread run for X however ``user_id`` was passed (``configurable`` as
text or int, runtime ``context=`` as dict or dataclass, a graph without memory nodes) —
on the Postgres and the Redis checkpointer, sync and async. Checked by scanning every
table of the database (text and binary columns) and every Redis key under the prefix for
X's text; look-alike users keep all of theirs. The CLI never prints OK with data left.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langgraph_recall import aforget_user, forget_user
from langgraph_recall._memory.registry import user_meta_namespace
from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph_recall.cli import main
from langgraph_recall.errors import ConfigurationError
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore
from tests._hypothesis import thorough
from tests.reliability._erasure import (
    WAYS,
    arun_user,
    cli_store,
    marker,
    memory_graph,
    pg_rows_with,
    plain_graph,
    redis_keys_with,
    run_user,
)
from tests.reliability._figures import Figures
from tests.reliability._servers import stats_containing
from tests.reliability.conftest import index_config

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

VICTIM = "123"
BYSTANDERS = [("1234", "configurable"), ("123 ", "context-dict"), ("12", "configurable-int")]


@contextlib.contextmanager
def open_saver(kind: str, dsn: str, redis_url: str, prefix: str) -> Iterator[Any]:
    if kind == "postgres":
        with PostgresSaver.from_conn_string(dsn) as pg:
            pg.setup()
            yield pg
    else:
        with RedisSaver.from_conn_string(redis_url, prefix=prefix) as rs:
            rs.setup()
            yield rs


@contextlib.asynccontextmanager
async def aopen_saver(kind: str, dsn: str, redis_url: str, prefix: str) -> AsyncIterator[Any]:
    if kind == "postgres":
        async with AsyncPostgresSaver.from_conn_string(dsn) as pg:
            await pg.setup()
            yield pg
    else:
        async with AsyncRedisSaver.from_conn_string(redis_url, prefix=prefix) as rs:
            await rs.setup()
            yield rs


def residue(dsn: str, redis_url: str, prefix: str, text: str) -> dict[str, int]:
    """Where ``text`` still is: Postgres tables, and Redis keys under ``prefix``."""
    found = pg_rows_with(dsn, text)
    found.update({f"redis:{key}": 1 for key in redis_keys_with(redis_url, prefix, text)})
    return found


def meta_rows(dsn: str, user_label: str) -> int:
    """Rows (items and history) of ``("memory_meta", user)``: cursor, links, their history."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM lgm_memory_items WHERE ns LIKE %(p)s)"
            " + (SELECT count(*) FROM lgm_memory_history WHERE ns LIKE %(p)s)",
            {"p": f"memory\\_meta.user\\_id:{user_label}.%"},
        ).fetchone()
    return int(row[0]) if row else 0


CASES = [("postgres", "exact"), ("postgres", "pgvector"), ("redis", "exact")]


@pytest.mark.parametrize(("kind", "vectors"), CASES, ids=["pg-exact", "pg-pgvector", "redis"])
def test_erasure_is_complete_however_user_id_was_passed(
    kind: str,
    vectors: str,
    request: pytest.FixtureRequest,
    redis_url: str,
    redis_prefix: str,
    figures: Figures,
) -> None:
    dsn = str(request.getfixturevalue("postgres_dsn" if vectors == "exact" else "embedded_dsn"))
    victim = {way: marker() for way in WAYS}
    others = {user: marker() for user, _ in BYSTANDERS}
    with (
        PostgresMemoryStore.from_conn_string(dsn, index=index_config()) as store,
        open_saver(kind, dsn, redis_url, redis_prefix) as saver,
    ):
        store.setup()
        graphs = (memory_graph(store, saver), plain_graph(saver))
        for way, mark in victim.items():
            run_user(graphs, VICTIM, way, f"victim-{way}", mark)
        for user, way in BYSTANDERS:
            run_user(graphs, user, way, f"bystander-{uuid.uuid4().hex[:6]}", others[user])
        assert store.get(user_meta_namespace(VICTIM), "reflection-cursor") is not None
        assert meta_rows(dsn, VICTIM) > 0
        for mark in victim.values():
            assert residue(dsn, redis_url, redis_prefix, mark), "stored before the erasure"
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("ANALYZE")  # what autovacuum does: pg_stats now quotes rows
        quoted = [*victim.values(), *(f"victim-{way}" for way in WAYS)]
        assert any(stats_containing(dsn, text) for text in quoted), "the check can fail"

        report = forget_user(store, saver, VICTIM)
        assert {text: stats_containing(dsn, text) for text in quoted} == {t: {} for t in quoted}

        assert report.complete, report.residue
        assert sorted(report.threads) == sorted(f"victim-{way}" for way in WAYS)
        left = {way: residue(dsn, redis_url, redis_prefix, mark) for way, mark in victim.items()}
        assert left == {way: {} for way in WAYS}
        assert meta_rows(dsn, VICTIM) == 0  # reflection cursor, links and their history
        for user, mark in others.items():
            kept = residue(dsn, redis_url, redis_prefix, mark)
            assert "public.lgm_memory_items" in kept, user
            assert any("checkpoint" in table or "redis:" in table for table in kept), user
    figures.add("erasure_ways_tried", len(WAYS))
    figures.add("erasure_residue_rows", sum(len(found) for found in left.values()))


@pytest.mark.parametrize("kind", ["postgres", "redis"])
async def test_async_erasure_is_complete_however_user_id_was_passed(
    kind: str, postgres_dsn: str, redis_url: str, redis_prefix: str
) -> None:
    victim = {way: marker() for way in WAYS if way != "configurable-int"}
    bystander = marker()
    async with (
        AsyncPostgresMemoryStore.from_conn_string(postgres_dsn, index=index_config()) as store,
        aopen_saver(kind, postgres_dsn, redis_url, redis_prefix) as saver,
    ):
        await store.asetup()
        graphs = (memory_graph(store, saver), plain_graph(saver))
        for way, mark in victim.items():
            await arun_user(graphs, "ann@example.com", way, f"t-{way}", mark)
        await arun_user(graphs, "ann@example", "context-dict", "t-lookalike", bystander)

        report = await aforget_user(store, saver, "ann@example.com")

        assert report.complete, report.residue
        assert len(report.threads) == len(victim)
        for mark in victim.values():
            assert residue(postgres_dsn, redis_url, redis_prefix, mark) == {}
        assert residue(postgres_dsn, redis_url, redis_prefix, bystander)


def test_cli_forget_erases_context_and_int_threads_and_says_what_it_found(
    postgres_dsn: str, redis_url: str, redis_prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    marks = {way: marker() for way in WAYS}
    redis_args = ["--redis", redis_url, "--redis-prefix", redis_prefix]
    with (
        cli_store(postgres_dsn) as store,
        open_saver("redis", postgres_dsn, redis_url, redis_prefix) as saver,
    ):
        graphs = (memory_graph(store, saver), plain_graph(saver))
        for way, mark in marks.items():
            run_user(graphs, VICTIM, way, f"cli-{way}", mark)
    assert main(["inspect", "--user", VICTIM, "--postgres", postgres_dsn, *redis_args]) == 0
    shown = capsys.readouterr().out
    assert "cli-context-dict (" in shown and "registry)" in shown
    assert "cli-plain-graph (" in shown and "metadata)" in shown
    assert "cli-configurable-int (" in shown and "registry+metadata)" in shown

    assert main(["forget", "--user", VICTIM, "--yes", "--postgres", postgres_dsn, *redis_args]) == 0
    out = capsys.readouterr().out
    assert "deleted 5 conversation threads" in out and "nothing of this user is left" in out
    for mark in marks.values():
        assert residue(postgres_dsn, redis_url, redis_prefix, mark) == {}


def test_erasure_pointed_at_the_wrong_checkpointer_never_reads_as_success(
    postgres_dsn: str, redis_url: str, redis_prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Threads run on Redis, ``forget`` run without ``--redis`` (the Postgres saver holds
    none of them): the user's memories go, but the thread links stay and the CLI exits 2
    naming the fix; the second run, with the right checkpointer, erases the conversations.
    (Before: "OK ... nothing of this user is left", exit 0, links erased, the Redis threads
    unfindable for ever.)"""
    mark = marker()
    with (
        cli_store(postgres_dsn) as store,
        open_saver("redis", postgres_dsn, redis_url, redis_prefix) as saver,
    ):
        run_user(
            (memory_graph(store, saver), plain_graph(saver)),
            "henry",
            "context-dict",
            "henry-thread",
            mark,
        )
    assert redis_keys_with(redis_url, redis_prefix, mark)

    wrong = ["forget", "--user", "henry", "--yes", "--postgres", postgres_dsn]
    assert main(wrong) == 2
    err = capsys.readouterr().err
    assert "'henry-thread'" in err and "another checkpointer" in err
    assert "public.lgm_memory_items" not in pg_rows_with(postgres_dsn, mark)  # memories gone
    assert redis_keys_with(redis_url, redis_prefix, mark)  # the conversation is still there
    assert main(wrong) == 2  # still findable, still not OK

    right = [*wrong, "--redis", redis_url, "--redis-prefix", redis_prefix]
    assert main(right) == 0
    assert "nothing of this user is left" in capsys.readouterr().out
    assert residue(postgres_dsn, redis_url, redis_prefix, mark) == {}


def test_links_of_threads_deleted_already_can_be_dropped(postgres_dsn: str) -> None:
    """A thread deleted through the API before the erasure: kept and reported by default,
    erased with ``unheld_threads="drop"``; anything else is a configuration error."""
    mark = marker()
    with cli_store(postgres_dsn) as store, PostgresSaver.from_conn_string(postgres_dsn) as pg:
        pg.setup()
        run_user((memory_graph(store, pg), plain_graph(pg)), "gone", "context-dict", "t-gone", mark)
        pg.delete_thread("t-gone")
        with pytest.raises(ConfigurationError, match="unheld_threads"):
            forget_user(store, pg, "gone", unheld_threads="yes")
        kept = forget_user(store, pg, "gone")
        assert not kept.complete and any("'t-gone'" in line for line in kept.residue)
        dropped = forget_user(store, pg, "gone", unheld_threads="drop")
        assert dropped.complete, dropped.residue
        assert meta_rows(postgres_dsn, "gone") == 0
        assert forget_user(store, pg, "gone").complete  # nothing left to find


class RacingSaver(PostgresSaver):
    """Our real saver, with another worker writing a turn of the user right after each
    thread is erased (as a live worker would, in the middle of an erasure)."""

    racer: Any = None

    def forget_threads(self, thread_ids: Sequence[str]) -> None:
        for thread_id in thread_ids:
            super().forget_threads([thread_id])
            if self.racer is not None:
                self.racer(thread_id)


def test_cli_never_says_ok_with_data_left(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    mark = marker()
    with (
        cli_store(postgres_dsn) as store,
        RacingSaver.from_conn_string(postgres_dsn) as saver,
    ):
        saver.setup()
        graphs = (memory_graph(store, saver), plain_graph(saver))
        run_user(graphs, "zhang", "context-dict", "race", mark)

        def race(thread_id: str) -> None:
            saver.racer = None  # one late turn
            run_user(graphs, "zhang", "context-dict", thread_id, mark)

        saver.racer = race

        @contextlib.contextmanager
        def racing(*_: Any, **__: Any) -> Iterator[Any]:
            yield saver

        monkeypatch.setattr("langgraph_recall.cli.admin.open_checkpointer", racing)
        code = main(["forget", "--user", "zhang", "--yes", "--postgres", postgres_dsn])
        captured = capsys.readouterr()
        assert code == 2
        assert "OK" not in captured.out
        assert "still present after forget" in captured.err and "'race'" in captured.err
        assert pg_rows_with(postgres_dsn, mark)  # the late turn is really there

        assert main(["forget", "--user", "zhang", "--yes", "--postgres", postgres_dsn]) == 0
        assert "nothing of this user is left" in capsys.readouterr().out
    assert pg_rows_with(postgres_dsn, mark) == {}


# -- the property: any users, any mix of ways, erase one -------------------------------
USER_IDS = st.one_of(
    st.sampled_from(
        [
            "u1",
            "u1.",
            "u1%2E",
            "U1",
            "u1 ",
            "*",
            "%",
            "alice@example.com",
            "org.team/user",
            "张三",
            "12",
            "123",
            "0123",
            "1.5",
            "True",
        ]
    ),
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=8),
)


def _ways_for(user: str) -> st.SearchStrategy[str]:
    numeric = user.isascii() and user.isdigit() and str(int(user)) == user
    return st.sampled_from([w for w in WAYS if numeric or w != "configurable-int"])


@st.composite
def populations(draw: st.DrawFn) -> list[tuple[str, str]]:
    users = draw(st.lists(USER_IDS, min_size=2, max_size=4, unique=True))
    return [(user, draw(_ways_for(user))) for user in users]


@pytest.mark.parametrize("kind", ["postgres", "redis"])
@settings(
    max_examples=thorough(8),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(population=populations(), pick=st.integers(0, 3))
def test_property_erasing_one_user_leaves_nothing_of_them_and_everything_of_others(
    kind: str,
    population: list[tuple[str, str]],
    pick: int,
    store: PostgresMemoryStore,
    postgres_dsn: str,
    redis_url: str,
    redis_prefix: str,
    figures: Figures,
) -> None:
    marks = {user: marker() for user, _ in population}
    with open_saver(kind, postgres_dsn, redis_url, redis_prefix) as saver:
        graphs = (memory_graph(store, saver), plain_graph(saver))
        for user, way in population:
            run_user(graphs, user, way, f"p-{uuid.uuid4().hex[:10]}", marks[user])
        victim = population[pick % len(population)][0]
        report = forget_user(store, saver, victim)
    assert report.complete, report.residue
    assert residue(postgres_dsn, redis_url, redis_prefix, marks.pop(victim)) == {}
    for user, mark in marks.items():
        assert residue(postgres_dsn, redis_url, redis_prefix, mark), user
    figures.add("erasure_property_users", len(population))
