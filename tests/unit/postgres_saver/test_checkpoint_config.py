"""Pure input validation shared by both checkpointers (``checkpoint/_config.py``) and the
Postgres list/pool defaults built on it (H8-11, H8-13, H8-14)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from langgraph_recall._pg import pool
from langgraph_recall.checkpoint import _config
from langgraph_recall.checkpoint.postgres import _common
from langgraph_recall.errors import ConfigurationError, InvalidFilterError, InvalidValueError


def test_ids_are_str_ed_like_langgraph() -> None:
    config = _config.normalized_config(
        {"configurable": {"thread_id": 5, "checkpoint_ns": "", "checkpoint_id": 7, "x": 1},
         "metadata": {"m": 1}}
    )  # fmt: skip
    assert config == {
        "configurable": {"thread_id": "5", "checkpoint_ns": "", "checkpoint_id": "7", "x": 1},
        "metadata": {"m": 1},
    }
    assert _config.thread_id_of({"configurable": {"thread_id": 12}}) == "12"
    assert _config.checked_thread_id(3) == "3"


def test_input_config_is_not_modified() -> None:
    original: Any = {"configurable": {"thread_id": 5}}
    _config.normalized_config(original)
    assert original == {"configurable": {"thread_id": 5}}


@pytest.mark.parametrize(
    "config",
    [{}, {"configurable": {}}, {"configurable": {"thread_id": None}}, {"configurable": None},
     {"configurable": {"thread_id": ""}}],
)  # fmt: skip
def test_missing_thread_id_names_the_key(config: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"config\['configurable'\]\['thread_id'\]"):
        _config.thread_id_of(config)


def test_unpaired_surrogates_are_rejected_everywhere() -> None:
    with pytest.raises(ConfigurationError, match=r"unpaired surrogate \(U\+D800\)") as info:
        _config.thread_id_of({"configurable": {"thread_id": "a\ud800"}})
    assert isinstance(info.value, ValueError)
    assert "thread_id" in str(info.value)
    with pytest.raises(ConfigurationError, match="checkpoint_ns"):
        _config.normalized_config({"configurable": {"thread_id": "t", "checkpoint_ns": "\udfff"}})
    with pytest.raises(InvalidFilterError, match="filter key"):
        _config.checked_filter({"k\ud800": 1})


def test_nul_is_rejected_in_every_identifier_on_every_backend() -> None:
    with pytest.raises(ConfigurationError, match=r"NUL character.*hex or base64"):
        _config.checked_thread_id("a\x00b")
    with pytest.raises(ConfigurationError, match="checkpoint_id"):
        _config.normalized_config({"configurable": {"thread_id": "t", "checkpoint_id": "\x00"}})
    with pytest.raises(InvalidValueError, match="task_id"):
        _config.checked_writes([("c", 1)], "t\x00", "")
    with pytest.raises(InvalidValueError, match="channel"):
        _config.checked_writes([("c\x00", 1)], "t", "")


def test_identifiers_are_bounded_so_they_fit_an_index_entry() -> None:
    assert _config.checked_thread_id("t" * _config.MAX_THREAD_ID_BYTES)
    with pytest.raises(ConfigurationError, match="at most 1024 bytes"):
        _config.checked_thread_id("t" * (_config.MAX_THREAD_ID_BYTES + 1))
    with pytest.raises(ConfigurationError, match="at most 1024 bytes"):  # bytes, not chars
        _config.checked_thread_id("é" * 513)
    with pytest.raises(InvalidValueError, match=r"task_id.*at most 256 bytes"):
        _config.checked_writes([], "t" * 257, "")
    for bad in (None, "", b"raw", 1.5, ["t"], object()):
        with pytest.raises(ConfigurationError):
            _config.checked_thread_id(bad)


def test_filter_text_is_checked_recursively() -> None:
    assert _config.checked_filter(None) is None
    assert _config.checked_filter({"a": [1, "b"], "c": {"d": None}}) == {
        "a": [1, "b"],
        "c": {"d": None},
    }
    for bad in ({"a\x00": 1}, {"a": "b\x00"}, {"a": ["x", "\x00"]}, {"a": {"b\x00": 1}}):
        with pytest.raises(InvalidFilterError, match="filter"):
            _config.checked_filter(bad)
    for bad in ({"a": float("nan")}, {"a": 2**64}, {1: "a"}, {"a": object()}):
        with pytest.raises(InvalidFilterError, match="JSON"):
            _config.checked_filter(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidFilterError, match="filter must be a dict"):
        _config.checked_filter(["a"])  # type: ignore[arg-type]


def test_limit_negative_lists_nothing_and_must_be_int() -> None:
    assert _config.checked_limit(None) is None
    assert _config.checked_limit(3) == 3
    assert _config.checked_limit(0) == 0
    assert _config.checked_limit(-1) == 0
    assert _config.checked_limit(10**30) == _config.MAX_LIMIT  # both backends count in 64 bits
    for bad in ("3", 2.5, True):
        with pytest.raises(ConfigurationError, match="limit must be an int"):
            _config.checked_limit(bad)


def test_postgres_list_args() -> None:
    before: Any = {"configurable": {"checkpoint_id": 4}}
    args = _common.list_args({"configurable": {"thread_id": 9}}, {"source": "loop"}, before, -5)
    assert args.config == {"configurable": {"thread_id": "9"}}
    assert args.filter == {"source": "loop"}
    assert args.before == {"configurable": {"checkpoint_id": "4"}}
    assert args.limit == 0
    assert _common.list_args(None, None, None, None) == _common.ListArgs(None, None, None, None)
    with pytest.raises(InvalidFilterError, match="filter key"):
        _common.list_args(None, {"a\x00": 1}, None, None)
    with pytest.raises(ConfigurationError, match="checkpoint_id"):
        _common.list_args(None, None, {"configurable": {"checkpoint_id": "\ud800"}}, None)


def test_postgres_thread_id_arguments_are_checked_before_any_io() -> None:
    with pytest.raises(ConfigurationError, match="NUL"):
        next(_common.delete_threads_program(["ok", "bad\x00"]))
    with pytest.raises(ConfigurationError, match="surrogate"):
        next(_common.copy_thread_program("a", "b\ud800"))
    with pytest.raises(ConfigurationError, match="run_id"):
        next(_common.delete_for_runs_program(["r\x00"]))
    with pytest.raises(ConfigurationError, match="NUL"):
        _common.check_lease_args("t\x00", "owner", 1.0)
    first = next(_common.delete_threads_program([5]))  # type: ignore[list-item]
    assert first.params == (["5"],)


def test_pool_defaults_fail_fast_and_recover_quickly() -> None:
    # H8-11: a call waits at most the pool timeout during an outage (the store uses 5 s too)
    assert pool.DEFAULT_POOL_TIMEOUT == 5.0
    # H8-12: bounded reconnect backoff, so recovery does not wait for a 16-64 s retry
    assert pool.DEFAULT_RECONNECT_TIMEOUT == 5.0
    assert {"timeout", "reconnect_timeout"} <= set(pool.PoolConfig.__annotations__)


# ----------------------------------------------------------------------------- ttl option


@pytest.mark.parametrize("old", [3600, 60.0, timedelta(hours=1)])
def test_postgres_ttl_in_seconds_or_timedelta_says_to_pass_minutes(old: object) -> None:
    with pytest.raises(ConfigurationError, match=r"\{'default_ttl': minutes\}"):
        _common.thread_ttl_seconds(old)  # type: ignore[arg-type]


def test_postgres_ttl_is_thread_ttl_config_minutes() -> None:
    assert _common.thread_ttl_seconds({"default_ttl": 60}) == 3600.0
    assert _common.thread_ttl_seconds({"default_ttl": 0.5}) == 30.0
    assert _common.thread_ttl_seconds(None) is None
    assert _common.thread_ttl_seconds({}) is None
    with pytest.raises(ConfigurationError, match="positive number of minutes"):
        _common.thread_ttl_seconds({"default_ttl": -1})


def test_postgres_ttl_refuses_refresh_on_read() -> None:
    with pytest.raises(ConfigurationError, match="refresh_on_read"):
        _common.thread_ttl_seconds({"default_ttl": 60, "refresh_on_read": True})
    assert _common.thread_ttl_seconds({"default_ttl": 1, "refresh_on_read": False}) == 60.0
