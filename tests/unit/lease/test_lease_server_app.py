"""graphs/server.py without services: settings parsing, the responder, and the app in-process."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from langchain_core.messages import AIMessage, HumanMessage

from graphs.server import ServerSettings, app, reply_to
from langgraph_recall.errors import ConfigurationError


def test_settings_from_env() -> None:
    settings = ServerSettings.from_env(
        {
            "LANGGRAPH_RECALL_CHECKPOINTER": " Redis ",
            "LANGGRAPH_RECALL_REDIS_PREFIX": "svc",
            "LANGGRAPH_RECALL_LEASE": "wait",
            "LANGGRAPH_RECALL_LEASE_TTL": "5",
            "LANGGRAPH_RECALL_SKIP_SETUP": "1",
        }
    )
    assert settings == ServerSettings(
        checkpointer="redis", redis_prefix="svc", lease="wait", lease_ttl=5.0, run_setup=False
    )
    assert ServerSettings.from_env({}) == ServerSettings()


@pytest.mark.parametrize(
    ("environ", "fragment"),
    [
        ({"LANGGRAPH_RECALL_CHECKPOINTER": "sqlite"}, "use one of ('memory', 'postgres', 'redis')"),
        ({"LANGGRAPH_RECALL_LEASE": "queue"}, "use one of ('reject', 'wait', 'off')"),
        ({"LANGGRAPH_RECALL_LEASE_TTL": "soon"}, "LEASE_TTL='soon' is not a number"),
        (
            {"LANGGRAPH_RECALL_POSTGRES_DSN": "postgresql://h/app"},
            "set LANGGRAPH_RECALL_POSTGRES_URI",
        ),
    ],
)
def test_bad_settings_name_the_variable(environ: dict[str, str], fragment: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        ServerSettings.from_env(environ)
    assert fragment in str(caught.value)


def test_server_reads_the_readme_postgres_variable_and_never_a_default_database() -> None:
    """The service reads LANGGRAPH_RECALL_POSTGRES_URI, like the library and the README; unset
    it means the embedded Postgres (default_dsn), never a hard-coded server database."""
    dsn = "postgresql://app@db.internal:5432/app"
    settings = ServerSettings.from_env(
        {"LANGGRAPH_RECALL_CHECKPOINTER": "postgres", "LANGGRAPH_RECALL_POSTGRES_URI": dsn}
    )
    assert settings.postgres_dsn == dsn
    assert (
        ServerSettings.from_env({"LANGGRAPH_RECALL_CHECKPOINTER": "postgres"}).postgres_dsn is None
    )
    assert ServerSettings().postgres_dsn is None


def test_reply_numbers_the_turn() -> None:
    assert reply_to([HumanMessage("hi")]).content == "[turn 1] you said: hi"
    history = [HumanMessage("a"), AIMessage("[turn 1] you said: a"), HumanMessage("b")]
    assert reply_to(history).content == "[turn 2] you said: b"


def test_memory_mode_app_serves_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGGRAPH_RECALL_CHECKPOINTER", "memory")
    with TestClient(app) as client:
        assert client.get("/healthz").json()["checkpointer"] == "memory"
        assert client.get("/threads/x").status_code == 404
        for turn in (1, 2):
            body = client.post("/threads/x/turns", json={"message": f"m{turn}"}).json()
            assert body["reply"] == f"[turn {turn}] you said: m{turn}"
        stored = client.get("/threads/x").json()["messages"]
        assert [m["content"] for m in stored] == [
            "m1",
            "[turn 1] you said: m1",
            "m2",
            "[turn 2] you said: m2",
        ]
        assert client.delete("/threads/x").status_code == 204
        assert client.get("/threads/x").status_code == 404
        assert client.post("/threads/x/turns", json={}).status_code == 422
