"""The savers and the store behind PgBouncer in transaction mode, with their defaults.

Principle: **a transaction pooler is not an outage.** PgBouncer (1.18, Debian's) in
transaction mode runs each transaction on whichever server connection is free, so
server-side prepared statements (the savers' default, like the official saver's) are
missing or already taken on the next one: 0 of 200 turns went through, each failure a raw
``psycopg`` error or worded as an outage. The pools ``from_conn_string`` builds notice a
pooler on each new connection (the backend key a pooler sends is its own) and run without
prepared statements there; a connection the caller built gets a ``ConfigurationError``
naming the pooler and the fix.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.errors import ConfigurationError, LangGraphRecallError
from langgraph_recall.store.postgres import PostgresMemoryStore
from tests.reliability._clusters import OwnedPgBouncer
from tests.reliability._figures import Figures
from tests.reliability.conftest import index_config

pytestmark = [pytest.mark.serial, pytest.mark.postgres, pytest.mark.slow]

TURNS = 200
NS = ("memories", "user_id:u")


@pytest.fixture
def bounced_db() -> Iterator[str]:
    """A fresh database on the shared server, reached through a test-owned PgBouncer."""
    name = f"lgm_pgb_{uuid.uuid4().hex[:10]}"
    admin = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        with OwnedPgBouncer.running() as bouncer:
            yield bouncer.dsn(name)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def chat_graph() -> StateGraph[MessagesState]:
    graph = StateGraph(MessagesState)
    graph.add_node("respond", lambda state: {"messages": [AIMessage("ok")]})
    graph.add_edge(START, "respond")
    return graph


def test_the_saver_s_defaults_work_behind_a_transaction_pooler(
    bounced_db: str, figures: Figures
) -> None:
    raw: list[BaseException] = []
    done = 0
    with PostgresSaver.from_conn_string(bounced_db) as saver:
        saver.setup()
        app = chat_graph().compile(checkpointer=saver)
        for turn in range(TURNS):
            config = {"configurable": {"thread_id": f"t{turn % 20}"}}
            try:
                app.invoke({"messages": [("user", f"turn {turn}")]}, config)
                done += 1
            except LangGraphRecallError:
                pass
            except Exception as exc:  # a raw driver error is the defect this guards
                raw.append(exc)
        state = saver.get_tuple({"configurable": {"thread_id": "t0", "checkpoint_ns": ""}})
    # setup() ran in one transaction there: no session lock stays behind on a server connection
    dbname = bounced_db.rsplit("dbname=", 1)[1]
    direct = f"host=127.0.0.1 port=5432 user=postgres dbname={dbname}"
    with psycopg.connect(direct) as conn:
        held = conn.execute(
            "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
            "WHERE l.locktype = 'advisory' AND d.datname = %s",
            (dbname,),
        ).fetchone()
    assert held == (0,)
    figures.put("pgbouncer_turns_done", done)
    figures.put("pgbouncer_raw_errors", len(raw))
    assert raw == [] and done == TURNS
    assert state is not None and len(state.checkpoint["channel_values"]["messages"]) == 20


async def test_the_async_saver_and_the_store_work_behind_it_too(bounced_db: str) -> None:
    async with AsyncPostgresSaver.from_conn_string(bounced_db) as saver:
        await saver.setup()
        app = chat_graph().compile(checkpointer=saver)
        for turn in range(40):
            await app.ainvoke(
                {"messages": [("user", f"turn {turn}")]},
                {"configurable": {"thread_id": f"a{turn % 4}"}},
            )
    with PostgresMemoryStore.from_conn_string(bounced_db, index=index_config()) as store:
        store.setup()
        for i in range(40):
            store.put(NS, f"k{i}", {"content": f"User note number {i}"})
            assert store.search(NS, query=f"note number {i}", limit=3)
        assert store.get(NS, "k0") is not None


def test_a_connection_the_caller_built_gets_a_configuration_error_naming_the_pooler(
    bounced_db: str,
) -> None:
    with PostgresSaver.from_conn_string(bounced_db) as ours:
        ours.setup()
    conns = [
        psycopg.connect(
            bounced_db, autocommit=True, prepare_threshold=0, row_factory=psycopg.rows.dict_row
        )
        for _ in range(2)
    ]
    try:
        savers = [PostgresSaver(conn) for conn in conns]
        with pytest.raises(ConfigurationError, match=r"transaction pooler.*prepare_threshold"):
            for i in range(40):  # each prepares its statements as _pg3_0 ... on the server
                # connection PgBouncer lends it, which the other one may get next
                savers[i % 2].get_tuple(
                    {"configurable": {"thread_id": f"x{i}", "checkpoint_ns": ""}}
                )
    finally:
        for conn in conns:
            conn.close()
