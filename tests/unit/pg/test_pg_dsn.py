"""One DSN resolution and one PoolConfig for every Postgres component."""

from __future__ import annotations

import pytest

from langgraph_recall import embedded
from langgraph_recall._pg import dsn as pg_dsn
from langgraph_recall._pg import pool as pg_pool
from langgraph_recall.errors import InvalidConnectionStringError


@pytest.mark.parametrize(
    ("dsn", "target"),
    [
        ("postgresql://u@db.example:6543/app", "db.example:6543"),
        ("postgres://u@localhost/app", "localhost:5432"),
        ("host=10.0.0.5 dbname=app", "10.0.0.5:5432"),
        ("host=/var/run/postgresql dbname=app", "unix socket /var/run/postgresql port 5432"),
        ("postgresql://u@a:5432,b:5433/app", "a,b:5432,5433"),
    ],
)
def test_a_dsn_names_its_server(dsn: str, target: str) -> None:
    assert pg_dsn.describe_target(pg_dsn.validate_dsn(dsn)) == target


def test_the_environment_fills_in_host_and_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGHOST", "envhost")
    monkeypatch.setenv("PGPORT", "7777")
    assert pg_dsn.describe_target(pg_dsn.validate_dsn("dbname=app")) == "envhost:7777"
    monkeypatch.delenv("PGHOST")
    assert pg_dsn.describe_target({}) == "unix socket (default) port 7777"


@pytest.mark.parametrize(
    ("dsn", "says"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("redis://localhost:6379", "unsupported scheme 'redis'"),
        ("host=x port=abc", "invalid port"),
        ("postgresql://u@h:0/d", "invalid port"),
        ("postgresql://u@h:70000/d", "invalid port"),
        ("x y", "malformed"),
    ],
)
def test_a_malformed_dsn_says_what_is_wrong(dsn: str, says: str) -> None:
    with pytest.raises(InvalidConnectionStringError, match=says):
        pg_dsn.validate_dsn(dsn)


def test_resolution_takes_the_given_dsn_then_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(pg_dsn.ENV_DSN, "postgresql://ours@db:5433/app")
    assert pg_dsn.resolve_dsn("postgresql://given@h/x") == ("postgresql://given@h/x", "h:5432")
    assert pg_dsn.resolve_dsn(None) == ("postgresql://ours@db:5433/app", "db:5433")
    monkeypatch.setenv(pg_dsn.ENV_DSN, "")
    with pytest.raises(InvalidConnectionStringError, match=pg_dsn.ENV_DSN):
        pg_dsn.resolve_dsn(None)
    with pytest.raises(InvalidConnectionStringError, match="empty"):
        pg_dsn.resolve_dsn("  ")
    with pytest.raises(InvalidConnectionStringError, match="scheme"):
        pg_dsn.resolve_dsn("mysql://h/x")


def test_one_variable_and_one_pool_config_everywhere() -> None:
    from langgraph_recall.checkpoint.postgres import PoolConfig as SaverPoolConfig
    from langgraph_recall.store.postgres import PoolConfig as StorePoolConfig

    assert embedded.ENV_DSN is pg_dsn.ENV_DSN
    assert SaverPoolConfig is StorePoolConfig is pg_pool.PoolConfig
    assert set(pg_pool.PoolConfig.__annotations__) == {
        "min_size",
        "max_size",
        "timeout",
        "max_idle",
        "max_lifetime",
        "reconnect_timeout",
        "kwargs",
    }


def test_required_connection_settings_win_over_the_users() -> None:
    config: pg_pool.PoolConfig = {"kwargs": {"autocommit": False, "prepare_threshold": 2}}
    store = pg_pool.connection_kwargs(config)
    assert store["autocommit"] is True and store["connect_timeout"] == 5
    assert store["prepare_threshold"] == 2  # the store leaves it to the user
    saver = pg_pool.connection_kwargs(config, connect_timeout=9, prepare_threshold=None)
    assert saver["prepare_threshold"] is None and saver["connect_timeout"] == 9
    options = pg_pool.pool_options({"min_size": 12}, 0, 3)
    assert options["max_size"] == 12 and options["kwargs"]["prepare_threshold"] == 0
    assert options["reconnect_timeout"] == pg_pool.DEFAULT_RECONNECT_TIMEOUT


def test_connection_kwargs_force_required_settings() -> None:
    config: pg_pool.PoolConfig = {"kwargs": {"autocommit": False, "application_name": "x"}}
    kwargs = pg_pool.connection_kwargs(config, connect_timeout=3, prepare_threshold=None)
    assert kwargs["autocommit"] is True and kwargs["prepare_threshold"] is None
    assert kwargs["connect_timeout"] == 3 and kwargs["application_name"] == "x"
