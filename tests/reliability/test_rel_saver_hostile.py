"""No raw driver error escapes a public saver call, and a failed call changes nothing.

Property (hypothesis): every public method of every saver — ``RedisSaver``,
``AsyncRedisSaver``, ``PostgresSaver``, ``AsyncPostgresSaver``: ``get_tuple``, ``list``,
``put``, ``put_writes``, ``delete_thread``, ``delete_for_runs``, ``copy_thread``, ``prune``,
``get_delta_channel_history``, ``sweep``, ``setup`` — driven with hostile arguments
(``tests/reliability/_hostile.py``: NUL, unpaired surrogates, huge ids, non-int numbers,
NaN, 300-deep nesting, odd types and shapes) either works or raises an error of ours (or
the documented ``TypeError`` for a non-list of ids); when it raises, the stored state (every
key under the prefix / every row of every table) is exactly what it was, and the next turn
of a real graph on the same saver works. Figures: ``saver_hostile_inputs`` tried and
``saver_raw_errors`` (must stay 0).

Regression tests (named after their principles) use real graphs.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Annotated, Any

import pytest
import redis
from hypothesis import HealthCheck, example, given, settings
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from langgraph_recall.checkpoint._values import MAX_VALUE_BYTES
from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph_recall.errors import InvalidValueError
from tests._hypothesis import thorough
from tests.graph_helpers import chat_graph
from tests.reliability._figures import Figures
from tests.reliability._hostile import Call, is_ours, redis_snapshot, saver_calls
from tests.reliability._servers import table_snapshot
from tests.reliability._workload import thread_config, turn_input

HOSTILE = settings(
    max_examples=thorough(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)

Snapshot = Callable[[], Any]

_CHECKPOINT = {
    "v": 4,
    "ts": "2026-12-01T00:00:00+00:00",
    "id": "1f0ce000-0000-6000-8000-000000000000",
    "channel_values": {"messages": ""},
    "channel_versions": {"messages": "1"},
    "versions_seen": {},
    "updated_channels": None,
}
SEEN_BEFORE: list[Call] = [  # found by this property once: always tried first
    ("put", ({"configurable": {"thread_id": "good"}, "metadata": {0: 0}}, _CHECKPOINT, {},
             {"messages": "1"}), {}),
    ("put_writes", ({"configurable": {"thread_id": "good", "checkpoint_id": "1"}},
                    [("a\x00b", 1)], None, ""), {}),
    ("put", ({"configurable": {"thread_id": "good"}}, {**_CHECKPOINT, "id": 0}, {}, {}), {}),
    ("put", ({"configurable": {"thread_id": "good"}},
             {**_CHECKPOINT, "channel_values": {5: "x"}}, {}, {5: "1"}), {}),
    ("list", (None,), {"filter": None, "before": {"configurable": None}, "limit": None}),
]  # fmt: skip


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def redis_target(redis_url: str, redis_prefix: str) -> Iterator[tuple[RedisSaver, Snapshot]]:
    client = redis.Redis.from_url(redis_url)
    with RedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as saver:
        saver.setup()
        chat_graph(saver).invoke(turn_input("kept"), thread_config("good"))
        yield saver, lambda: redis_snapshot(client, redis_prefix)
    client.close()


@pytest.fixture
async def async_redis_target(
    redis_url: str, redis_prefix: str
) -> AsyncIterator[tuple[AsyncRedisSaver, Snapshot]]:
    client = redis.Redis.from_url(redis_url)
    async with AsyncRedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as saver:
        await saver.setup()
        await chat_graph(saver).ainvoke(turn_input("kept"), thread_config("good"))
        yield saver, lambda: redis_snapshot(client, redis_prefix)
    client.close()


@pytest.fixture
def postgres_target(postgres_dsn: str) -> Iterator[tuple[PostgresSaver, Snapshot]]:
    with PostgresSaver.from_conn_string(
        postgres_dsn, ttl={"default_ttl": 60}, keep_last=5
    ) as saver:
        saver.setup()
        chat_graph(saver).invoke(turn_input("kept"), thread_config("good"))
        yield saver, lambda: table_snapshot(postgres_dsn)


@pytest.fixture
async def async_postgres_target(
    postgres_dsn: str,
) -> AsyncIterator[tuple[AsyncPostgresSaver, Snapshot]]:
    async with AsyncPostgresSaver.from_conn_string(
        postgres_dsn, ttl={"default_ttl": 60}, keep_last=5
    ) as saver:
        await saver.setup()
        await chat_graph(saver).ainvoke(turn_input("kept"), thread_config("good"))
        yield saver, lambda: table_snapshot(postgres_dsn)


# --------------------------------------------------------------------------- the property


def _judge(
    name: str, error: BaseException | None, before: Any, after: Any, figures: Figures
) -> None:
    figures.add("saver_hostile_inputs")
    figures.add("saver_raw_errors", 0)
    if error is None:
        return
    if not is_ours(error):
        figures.add("saver_raw_errors")
        raise AssertionError(
            f"{name} raised a raw {type(error).__module__}.{type(error).__name__}"
        ) from error
    assert str(error).strip(), f"{name} raised {type(error).__name__} without a message"
    assert after == before, f"{name} raised {type(error).__name__} but changed the stored state"


def _drive_sync(saver: Any, snapshot: Snapshot, call: Call, figures: Figures) -> None:
    name, args, kwargs = call
    before = snapshot()
    error: BaseException | None = None
    try:
        result = getattr(saver, name)(*args, **kwargs)
        if name == "list":
            list(result)
    except Exception as exc:
        error = exc
    _judge(name, error, before, snapshot() if error else before, figures)
    probe = chat_graph(saver)  # the saver (and any other thread) keeps working
    text = f"probe {uuid.uuid4().hex[:6]}"
    probe.invoke(turn_input(text), thread_config("probe"))
    assert probe.get_state(thread_config("probe")).values["messages"][-1].content == f"b:{text}"


async def _drive_async(saver: Any, snapshot: Snapshot, call: Call, figures: Figures) -> None:
    name, args, kwargs = call
    before = snapshot()
    error: BaseException | None = None
    try:
        if name == "list":
            [item async for item in saver.alist(*args, **kwargs)]
        else:
            method = getattr(saver, name if name == "setup" else f"a{name}")
            result = method(*args, **kwargs)
            if inspect.isawaitable(result):
                await result
    except Exception as exc:
        error = exc
    _judge(name, error, before, snapshot() if error else before, figures)
    probe = chat_graph(saver)
    text = f"probe {uuid.uuid4().hex[:6]}"
    await probe.ainvoke(turn_input(text), thread_config("probe"))
    state = await probe.aget_state(thread_config("probe"))
    assert state.values["messages"][-1].content == f"b:{text}"


def hostile_property(*, sweep: bool) -> Callable[[Callable[..., Any]], Any]:
    """``@given`` hostile calls (``sweep``: the saver has one), the cases found before first."""

    def wrap(test: Callable[..., Any]) -> Any:
        for call in SEEN_BEFORE:
            test = example(call=call)(test)
        return HOSTILE(given(call=saver_calls(sweep=sweep))(test))

    return wrap


@pytest.mark.redis
@hostile_property(sweep=False)
def test_redis_saver_hostile_inputs_raise_only_our_errors_and_change_nothing(
    redis_target: tuple[RedisSaver, Snapshot], call: Call, figures: Figures
) -> None:
    _drive_sync(*redis_target, call, figures)


@pytest.mark.redis
@hostile_property(sweep=False)
async def test_async_redis_saver_hostile_inputs_raise_only_our_errors_and_change_nothing(
    async_redis_target: tuple[AsyncRedisSaver, Snapshot], call: Call, figures: Figures
) -> None:
    await _drive_async(*async_redis_target, call, figures)


@pytest.mark.postgres
@hostile_property(sweep=True)
def test_postgres_saver_hostile_inputs_raise_only_our_errors_and_change_nothing(
    postgres_target: tuple[PostgresSaver, Snapshot], call: Call, figures: Figures
) -> None:
    _drive_sync(*postgres_target, call, figures)


@pytest.mark.postgres
@hostile_property(sweep=True)
async def test_async_postgres_saver_hostile_inputs_raise_only_our_errors_and_change_nothing(
    async_postgres_target: tuple[AsyncPostgresSaver, Snapshot], call: Call, figures: Figures
) -> None:
    await _drive_async(*async_postgres_target, call, figures)


# --------------------------------------------------------------------------- regressions


class SummaryState(TypedDict):
    messages: Annotated[list[Any], add_messages]
    summary: str


def summary_graph(checkpointer: Any) -> Any:
    """A node that keeps a running ``summary`` text channel of every message (finding 7:
    a NUL in a user message reached such a channel, stored inline as JSONB)."""

    def summarize(state: SummaryState) -> dict[str, Any]:
        text = " | ".join(str(m.content) for m in state["messages"])
        return {"messages": [AIMessage(content="noted")], "summary": f"so far: {text}"}

    builder = StateGraph(SummaryState)
    builder.add_node("summarize", summarize)
    builder.add_edge(START, "summarize")
    builder.add_edge("summarize", END)
    return builder.compile(checkpointer=checkpointer)


def _user_text_turns(graph: Any, snapshot: Snapshot) -> list[str]:
    """The finding-7 sequence; returns the error messages of the refused turn."""
    config = thread_config("user-text")
    graph.invoke({"messages": [HumanMessage(content="hello")]}, config)
    graph.invoke({"messages": [HumanMessage(content="a\x00b \x00")]}, config)
    state = graph.get_state(config).values
    assert state["summary"] == "so far: hello | noted | a\x00b \x00"  # exactly, NUL kept
    assert state["messages"][2].content == "a\x00b \x00"
    before = snapshot()
    with pytest.raises(InvalidValueError, match=r"unpaired surrogate \(U\+D800\)") as info:
        graph.invoke({"messages": [HumanMessage(content="a\ud800b")]}, config)
    assert isinstance(info.value, ValueError)
    assert snapshot() == before  # nothing written
    graph.invoke({"messages": [HumanMessage(content="after")]}, config)  # the thread works
    state = graph.get_state(config).values
    assert state["summary"] == "so far: hello | noted | a\x00b \x00 | noted | after"
    assert [m.content for m in state["messages"]][-2:] == ["after", "noted"]
    return [str(info.value)]


@pytest.mark.redis
@pytest.mark.postgres
def test_user_text_never_makes_a_thread_unusable(
    redis_target: tuple[RedisSaver, Snapshot], postgres_target: tuple[PostgresSaver, Snapshot]
) -> None:
    """Finding 7: NUL round-trips exactly on both savers (Postgres stores text JSONB cannot
    hold as a blob); a lone surrogate is refused by both with the same error, nothing is
    written, and the thread's next turn works. (Before: Postgres failed this turn and every
    later one with ``UntranslatableCharacter``; Redis stored ``'a?b'``.)"""
    messages = [
        _user_text_turns(summary_graph(saver), snapshot)
        for saver, snapshot in (redis_target, postgres_target)
    ]
    assert messages[0] == messages[1]  # same input, same outcome, same words


@pytest.mark.redis
@pytest.mark.postgres
def test_no_raw_driver_error_escapes_put_writes(
    redis_target: tuple[RedisSaver, Snapshot], postgres_target: tuple[PostgresSaver, Snapshot]
) -> None:
    """Finding 9 (saver part): a NUL in a write's channel raised ``psycopg.DataError``,
    ``task_id=None`` ``NotNullViolation``; both savers now refuse them the same way."""
    outcomes = []
    for saver, snapshot in (redis_target, postgres_target):
        head = saver.get_tuple(thread_config("good"))
        assert head is not None
        before = snapshot()
        errors = []
        for writes, task_id, task_path in (
            ([("a\x00b", 1)], "task", ""),
            ([("messages", 1)], None, ""),
            ([("messages", 1)], "task", "p\x00"),
            ([("messages", "x\udfff")], "task", ""),
            ([("messages", 2**70)], "task", ""),
        ):
            with pytest.raises(InvalidValueError) as info:
                saver.put_writes(head.config, writes, task_id, task_path)  # type: ignore[arg-type]
            errors.append(str(info.value))
        assert snapshot() == before
        outcomes.append(errors)
    assert outcomes[0] == outcomes[1]


@pytest.mark.redis
@pytest.mark.postgres
def test_every_value_in_range_reads_back_and_an_oversize_one_changes_nothing(
    redis_target: tuple[RedisSaver, Snapshot], postgres_target: tuple[PostgresSaver, Snapshot]
) -> None:
    """A large value (8 MiB of text with NUL) is stored and read back exactly by both
    savers; one over ``MAX_VALUE_BYTES`` is refused by both before any I/O."""
    large = ("a\x00é " * (2 * 1024 * 1024))[: 8 * 1024 * 1024]
    oversize = b"x" * (MAX_VALUE_BYTES + 1)
    for saver, snapshot in (redis_target, postgres_target):
        head = saver.get_tuple(thread_config("good"))
        assert head is not None
        checkpoint = {**head.checkpoint, "id": "1f0ce000-0000-6fff-8000-000000000001"}
        checkpoint["channel_values"] = {"big": large}
        checkpoint["channel_versions"] = {**checkpoint["channel_versions"], "big": "9"}
        stored = saver.put(head.config, checkpoint, {"source": "update", "step": 9}, {"big": "9"})
        loaded = saver.get_tuple(stored)
        assert loaded is not None and loaded.checkpoint["channel_values"]["big"] == large
        before = snapshot()
        checkpoint["channel_values"] = {"big": oversize}
        with pytest.raises(InvalidValueError, match="at most 134,217,728 bytes per value"):
            saver.put(stored, checkpoint, {"source": "update", "step": 10}, {"big": "10"})
        with pytest.raises(InvalidValueError, match="at most 134,217,728 bytes per value"):
            saver.put_writes(stored, [("big", oversize)], "task")
        assert snapshot() == before
