"""``langgraph dev`` from the repository root runs our graphs on our Postgres saver and store.

The dev server (``langgraph-cli[inmem]``, in the wheel's virtualenv) is started on a free
loopback port from the repository root with the repository's ``langgraph.json``
(``checkpointer.path`` / ``store.path`` → ``langgraph_recall.graphs.platform``), and driven
through ``langgraph_sdk``: a fact told on one thread is recalled on another, the checkpoints
are rows of our saver's tables (``checkpoints``, keyed by the server's thread ids), the
memory is a row of ``lgm_memory_items``, and deleting a thread through the API deletes its
checkpoints from our tables.
"""

from __future__ import annotations

import json
import random
import string
import uuid
from pathlib import Path

import psycopg
import pytest
from langgraph_sdk import get_client

from langgraph_recall.cli import main
from tests.integration.packaging._venv import ROOT, InstalledVenv, langgraph_dev

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def test_repository_langgraph_json_names_our_saver_and_store() -> None:
    for path in (ROOT / "langgraph.json", ROOT / "graphs" / "langgraph.json"):
        spec = json.loads(path.read_text())
        assert spec["checkpointer"]["path"] == "langgraph_recall.graphs.platform.checkpointer"
        assert spec["store"]["path"] == "langgraph_recall.graphs.platform.store"
        assert set(spec["graphs"]) == {"memory_agent", "memory_tools_agent"}


def checkpoint_rows(dsn: str, thread_id: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread_id,)
        ).fetchone()
    return int(row[0]) if row else 0


async def test_langgraph_dev_from_the_repository_root_uses_our_tables(
    installed_venv: InstalledVenv, postgres_dsn: str, tmp_path: Path
) -> None:
    env = {"LANGGRAPH_RECALL_POSTGRES_URI": postgres_dsn, "LANGGRAPH_RECALL_HOME": str(tmp_path)}
    with langgraph_dev(installed_venv, ROOT, env, tmp_path) as url:
        client = get_client(url=url)
        first = await client.threads.create()
        second = await client.threads.create()
        told = await client.runs.wait(
            first["thread_id"],
            "memory_agent",
            input={"messages": [{"role": "user", "content": "Hi, my name is Zhang San."}]},
            config={"configurable": {"user_id": "zhang"}},
        )
        asked = await client.runs.wait(
            second["thread_id"],
            "memory_agent",
            input={"messages": [{"role": "user", "content": "What's my name?"}]},
            context={"user_id": "zhang"},
        )
        assert isinstance(told, dict) and isinstance(asked, dict)
        assert asked["messages"][-1]["content"] == "Your name is Zhang San (from memory)."
        state = await client.threads.get_state(second["thread_id"])
        assert [m["type"] for m in state["values"]["messages"]][-1] == "ai"

        assert checkpoint_rows(postgres_dsn, first["thread_id"]) > 0
        assert checkpoint_rows(postgres_dsn, second["thread_id"]) > 0
        with psycopg.connect(postgres_dsn) as conn:
            memories = conn.execute(
                "SELECT value->>'content' FROM lgm_memory_items WHERE ns = %s",
                ("memories.user_id:zhang.",),
            ).fetchall()
        assert [r[0] for r in memories] == ["User's name is Zhang San."]
        with psycopg.connect(postgres_dsn) as conn:
            registry = conn.execute(
                "SELECT key FROM lgm_memory_items WHERE ns = %s",
                ("memory_meta.user_id:zhang.threads.",),
            ).fetchall()
        # the per-user thread registry (what `forget` erases) lists both threads
        assert {r[0] for r in registry} >= {first["thread_id"], second["thread_id"]}

        await client.threads.delete(first["thread_id"])
        assert checkpoint_rows(postgres_dsn, first["thread_id"]) == 0


def test_platform_factories_and_their_examples_on_real_services(
    postgres_dsn: str, redis_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The docstring examples of ``langgraph_recall.graphs.platform``, on the database and
    Redis the environment names (the factories read nothing else)."""
    from langgraph_recall.graphs import platform
    from tests.docexamples import examples

    monkeypatch.setenv("LANGGRAPH_RECALL_POSTGRES_URI", postgres_dsn)
    monkeypatch.setenv("LANGGRAPH_RECALL_REDIS_URL", redis_url)
    monkeypatch.setenv("LANGGRAPH_RECALL_REDIS_PREFIX", redis_prefix)
    found = examples(platform)
    assert {name for name, _ in found} >= {"checkpointer", "redis_checkpointer", "store"}
    for name, code in found:
        given = {"__name__": "__docexample__", "DB_URI": postgres_dsn, "REDIS_URL": redis_url}
        exec(compile(code, f"platform:{name}", "exec"), given)
    with psycopg.connect(postgres_dsn) as conn:
        row = conn.execute("SELECT value->>'content' FROM lgm_memory_items").fetchone()
    assert row is not None and row[0] == "User likes tea."


def server_copies(root: Path, text: str) -> list[str]:
    """Files of the dev server's own persistence (``.langgraph_api/``) holding ``text``."""
    folder = root / ".langgraph_api"
    needle = text.encode()
    return [str(p) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


async def test_erasure_covers_or_refuses_to_claim_the_langgraph_servers_copy(
    installed_venv: InstalledVenv,
    postgres_dsn: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Under ``langgraph dev`` the server keeps its own copy of each conversation (thread
    values, run inputs in ``.langgraph_api/``). Before, ``forget --user`` printed "nothing of
    this user is left" while ``client.threads.search()`` still returned the user's whole
    conversation. Now, without the server's URL, the erasure erases our tables and says
    the server's copy is left (exit 2, never "nothing left"); with ``--langgraph-url`` it
    deletes the threads through the server's API, and nothing of the user remains there."""
    user = f"erin-{uuid.uuid4().hex[:8]}"
    name = "Q" + "".join(random.choices(string.ascii_lowercase, k=9))
    env = {"LANGGRAPH_RECALL_POSTGRES_URI": postgres_dsn, "LANGGRAPH_RECALL_HOME": str(tmp_path)}
    with langgraph_dev(installed_venv, ROOT, env, tmp_path) as url:
        client = get_client(url=url)
        threads = []
        for how in ("configurable", "context"):
            thread = await client.threads.create()
            who = {"user_id": user}
            extra = {"config": {"configurable": who}} if how == "configurable" else {"context": who}
            await client.runs.wait(
                thread["thread_id"],
                "memory_agent",
                input={"messages": [{"role": "user", "content": f"Hi, my name is {name}."}]},
                **extra,  # type: ignore[arg-type]
            )
            threads.append(thread["thread_id"])

    # the server keeps its own copy: its files hold the user's words (written at shutdown)
    assert server_copies(ROOT, name)
    with langgraph_dev(installed_venv, ROOT, env, tmp_path) as url:
        client = get_client(url=url)

        async def on_server() -> list[str]:
            found = await client.threads.search(limit=100)
            return [t["thread_id"] for t in found if name in json.dumps(t.get("values"))]

        assert sorted(await on_server()) == sorted(threads)  # served again after a restart

        assert main(["forget", "--user", user, "--yes", "--postgres", postgres_dsn]) == 2
        out = capsys.readouterr()
        assert "nothing of this user is left" not in out.out + out.err
        assert "run by a LangGraph server" in out.err and "--langgraph-url" in out.err
        assert checkpoint_rows(postgres_dsn, threads[0]) == 0  # ours are erased
        assert sorted(await on_server()) == sorted(threads)  # the server's copy is not

        flags = ["--yes", "--postgres", postgres_dsn, "--langgraph-url", url]
        assert main(["forget", "--user", user, *flags]) == 0
        out = capsys.readouterr()
        places = f"the store, the checkpointer and the LangGraph server at {url}"
        assert f"nothing of this user is left in {places}" in out.out
        assert await on_server() == []
        for thread in threads:
            with pytest.raises(Exception, match=r"not found|404"):
                await client.threads.get(thread)
        assert main(["inspect", "--user", user, "--postgres", postgres_dsn]) == 0
        assert "no memories" in capsys.readouterr().out
    assert server_copies(ROOT, name) == []  # after the server wrote its files at shutdown
