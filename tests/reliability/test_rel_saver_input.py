"""Bad input to the checkpointers: thread ids and list() arguments. Each call either
works like LangGraph expects or raises a clear error from ``langgraph_recall.errors``
(also a ``ValueError``) — never a raw driver error — and writes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langgraph_recall.checkpoint.postgres import PostgresSaver
from langgraph_recall.checkpoint.redis import RedisSaver
from langgraph_recall.errors import ConfigurationError, InvalidFilterError, LangGraphRecallError
from tests._hypothesis import thorough
from tests.graph_helpers import chat_graph
from tests.reliability._figures import Figures
from tests.reliability._workload import thread_config, turn_input

FUZZ = settings(
    max_examples=thorough(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    database=None,
)
# text that can be stored: no NUL (Postgres) — NUL and surrogates have their own tests
THREAD_IDS = st.one_of(
    st.text(min_size=1, max_size=60).filter(lambda t: "\x00" not in t),
    st.integers(min_value=0, max_value=10**12),
    st.sampled_from(["*", "?", "[a]", "{x}", "%", "_", "'", "\\", " ", "t:cp", "🙂"]),
)


@pytest.fixture
def redis_saver(redis_url: str, redis_prefix: str) -> Iterator[RedisSaver]:
    with RedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as saver:
        saver.setup()
        yield saver


@pytest.fixture
def postgres_saver(postgres_dsn: str) -> Iterator[PostgresSaver]:
    with PostgresSaver.from_conn_string(postgres_dsn) as saver:
        saver.setup()
        yield saver


def roundtrip(saver: Any, thread_id: Any) -> None:
    """One turn through a real graph; the thread holds exactly that turn; delete removes it."""
    graph = chat_graph(saver)
    text = f"hello {thread_id!r}"
    config = thread_config(thread_id)
    graph.invoke(turn_input(text), config)
    messages = [str(m.content) for m in graph.get_state(config).values["messages"]]
    assert messages[-3:] == [text, f"a:{text}", f"b:{text}"]
    assert messages.count(text) == 1
    saver.delete_thread(str(thread_id))
    assert graph.get_state(config).values == {}


@pytest.mark.redis
@FUZZ
@given(thread_id=THREAD_IDS)
def test_redis_saver_takes_any_thread_id(
    redis_saver: RedisSaver, thread_id: Any, figures: Figures
) -> None:
    figures.add("hypothesis_inputs")
    roundtrip(redis_saver, thread_id)


STRING_THREAD_IDS = st.one_of(
    st.text(min_size=1, max_size=60).filter(lambda t: "\x00" not in t),
    st.sampled_from(["*", "?", "[a]", "{x}", "%", "_", "'", "\\", " ", "t:cp", "🙂", "5"]),
    st.integers(min_value=0, max_value=10**12),  # failed in get_state before H8-13 was fixed
)


@pytest.mark.postgres
@FUZZ
@given(thread_id=STRING_THREAD_IDS)
def test_postgres_saver_takes_any_thread_id(
    postgres_saver: PostgresSaver, thread_id: Any, figures: Figures
) -> None:
    figures.add("hypothesis_inputs")
    roundtrip(postgres_saver, thread_id)


@pytest.mark.redis
def test_redis_saver_refuses_nul_ids_like_postgres_and_odd_list_arguments(
    redis_saver: RedisSaver,
) -> None:
    with pytest.raises(ConfigurationError, match="NUL"):
        roundtrip(redis_saver, "a\x00b")
    assert list(redis_saver.list(None, limit=-1)) == []
    with pytest.raises(InvalidFilterError, match="NUL"):
        list(redis_saver.list(None, filter={"a\x00": 1}))


@pytest.mark.redis
def test_redis_saver_rejects_surrogate_thread_id(redis_saver: RedisSaver) -> None:
    with pytest.raises(LangGraphRecallError) as info:
        redis_saver.get_tuple(thread_config("a\ud800"))
    assert isinstance(info.value, ValueError)


@pytest.mark.postgres
def test_postgres_saver_rejects_bad_input_cleanly(postgres_saver: PostgresSaver) -> None:
    calls = [
        lambda: chat_graph(postgres_saver).invoke(turn_input("x"), thread_config("a\x00b")),
        lambda: postgres_saver.get_tuple(thread_config("a\ud800")),
        lambda: postgres_saver.get_tuple({"configurable": {}}),
        lambda: postgres_saver.delete_thread("a\x00"),
        lambda: list(postgres_saver.list(None, filter={"a\x00": 1})),
    ]
    for call in calls:
        with pytest.raises(LangGraphRecallError) as info:
            call()
        assert isinstance(info.value, ValueError)
    assert postgres_saver.get_tuple({"configurable": {"thread_id": 5}}) is None
    roundtrip(postgres_saver, 5)  # graph.get_state with an int thread id
    assert list(postgres_saver.list(None, limit=-1)) == []
