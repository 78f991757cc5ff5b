"""What the Redis saver stores: TTL on every key, keep-last retention, encryption,
atomic puts, errors for bad URLs / dead servers, and ``setup()``."""

from __future__ import annotations

import time
from typing import Any

import pytest
import redis
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from redis_saver_helpers import LocalServer, contents, free_ports, nested_graph, scan_keys

from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver
from langgraph_recall.checkpoint.redis._keys import SCHEMA_VERSION, schema_key
from langgraph_recall.errors import (
    BackendUnavailableError,
    ConfigurationError,
    InvalidConnectionStringError,
    InvalidValueError,
    MigrationError,
)
from tests.graph_helpers import chat_graph, count_seen

pytestmark = pytest.mark.redis

SECRET = "the launch code is 7-alpha-9"


def thread_keys(raw: redis.Redis, prefix: str, thread_id: str) -> list[bytes]:
    return [k for k in scan_keys(raw, prefix) if f"{{{thread_id}}}".encode() in k]


def snapshot(raw: redis.Redis, keys: list[bytes]) -> dict[bytes, Any]:
    """Contents of hash / sorted-set / string keys (encoding-independent, unlike DUMP)."""
    readers = {
        b"hash": raw.hgetall,
        b"zset": lambda k: raw.zrange(k, 0, -1, withscores=True),
        b"string": raw.get,
    }
    return {key: readers[raw.type(key)](key) for key in keys}


def test_ttl_applies_to_every_key_of_a_thread(
    redis_url: str, redis_prefix: str, raw_redis: redis.Redis
) -> None:
    ttl = {"default_ttl": 5, "refresh_on_read": True}
    with RedisSaver.from_conn_string(redis_url, prefix=redis_prefix, ttl=ttl) as saver:
        graph = chat_graph(saver, reply=count_seen)
        config = {"configurable": {"thread_id": "ttl-thread"}}
        graph.invoke({"messages": [HumanMessage(content="hi")]}, config)
        graph.update_state(config, {"messages": [HumanMessage(content="edit")]})
        lease = saver.lease_backend().try_acquire("ttl-thread", "w", ttl=30.0)
        assert lease is not None

        keys = thread_keys(raw_redis, redis_prefix, "ttl-thread")
        suffixes = {k.rsplit(b":", 1)[1] for k in keys}
        assert {b"idx", b"cp", b"refs", b"blobs", b"w", b"wk", b"fence", b"lease"} <= suffixes
        for key in keys:
            ttl_ms = raw_redis.pttl(key)
            limit = 30_000 if key.endswith(b":lease") else 5 * 60_000
            assert 0 < ttl_ms <= limit, (key, ttl_ms)

        # every key of the test prefix expires (the slot registries, the slot list and the
        # schema key are per-prefix bookkeeping, not thread data)
        for key in scan_keys(raw_redis, redis_prefix):
            if key.endswith((b":threads", b":slots", b":schema")):
                continue
            assert raw_redis.pttl(key) > 0, key

        # refresh_on_read: reading restarts the countdown of every data key
        for key in keys:
            if not key.endswith((b":lease", b":fence")):
                raw_redis.pexpire(key, 2_000)
        assert saver.get_tuple(config) is not None
        for key in keys:
            if not key.endswith((b":lease", b":fence")):
                assert raw_redis.pttl(key) > 60_000, key

        # when the keys expire the thread is gone as a whole and drops out of list(None)
        for key in keys:
            raw_redis.pexpire(key, 1)
        time.sleep(0.05)
        assert saver.get_tuple(config) is None
        assert list(saver.list(None)) == []
        assert raw_redis.zcard(saver._thread_keys("ttl-thread").registry) == 0


def test_keep_last_retention_and_blob_garbage_collection(
    redis_url: str, redis_prefix: str, raw_redis: redis.Redis
) -> None:
    with RedisSaver.from_conn_string(redis_url, prefix=redis_prefix, keep_last=3) as saver:
        graph = chat_graph(saver, reply=count_seen)
        config = {"configurable": {"thread_id": "short"}}
        for turn in range(4):
            state = graph.invoke({"messages": [HumanMessage(content=f"turn {turn}")]}, config)
        assert len(contents(state)) == 12
        kept = list(saver.list(config))
        assert len(kept) == 3
        assert [t.metadata["step"] for t in kept] == [14, 13, 12]
        assert kept[-1].parent_config is None  # its parent was removed with the old ones
        # only blobs the kept checkpoints reference remain
        referenced = {
            (channel, str(version))
            for t in kept
            for channel, version in t.checkpoint["channel_versions"].items()
        }
        fields = raw_redis.hkeys(saver._thread_keys("short").blobs)
        stored = {tuple(f.decode().split("\x00")[1:]) for f in fields}
        assert stored <= referenced
        assert len(stored) <= 3 * 2
        # writes of removed checkpoints are gone too
        members = {m.decode() for m in raw_redis.zrange(saver._thread_keys("short").idx, 0, -1)}
        for field in raw_redis.zrange(saver._thread_keys("short").write_index, 0, -1):
            assert "\x00".join(field.decode().split("\x00")[:2]) in members
        assert contents(graph.get_state(config).values)[-1] == "b saw 11"


def test_keep_last_applies_per_namespace(redis_url: str, redis_prefix: str) -> None:
    with RedisSaver.from_conn_string(redis_url, prefix=redis_prefix, keep_last=2) as saver:
        graph = nested_graph(saver)
        config = {"configurable": {"thread_id": "nested"}}
        reference = nested_graph(InMemorySaver())
        for _ in range(3):
            state = graph.invoke({"items": []}, config)
            expected = reference.invoke({"items": []}, config)
        assert state == expected  # retention never changes what the graph computes
        by_ns: dict[str, int] = {}
        for tup in saver.list(config):
            ns = tup.config["configurable"]["checkpoint_ns"]
            by_ns[ns] = by_ns.get(ns, 0) + 1
        assert by_ns[""] == 2
        assert len(by_ns) == 4  # root + one namespace per subgraph call
        assert all(count <= 2 for count in by_ns.values())
        # every kept checkpoint still loads all of its values
        for tup in saver.list(config):
            assert set(tup.checkpoint["channel_values"]) <= set(tup.checkpoint["channel_versions"])
            if tup.config["configurable"]["checkpoint_ns"] == "":
                assert "items" in tup.checkpoint["channel_values"]


def test_large_fan_out_of_pending_writes(saver: RedisSaver) -> None:
    checkpoint = empty_checkpoint()
    config = {"configurable": {"thread_id": "fan-out", "checkpoint_ns": ""}}
    stored = saver.put(config, checkpoint, {"source": "loop", "step": 0}, {})
    writes = [(f"ch{i % 7}", i) for i in range(12_000)]
    saver.put_writes(stored, writes, "task-1", task_path="~a")
    saver.put_writes(stored, writes[:5], "task-1", task_path="~a")  # replay: no duplicates
    loaded = saver.get_tuple(stored)
    assert loaded is not None and loaded.pending_writes is not None
    assert [w[2] for w in loaded.pending_writes] == list(range(12_000))
    saver.delete_thread("fan-out")
    assert saver.get_tuple(stored) is None


def test_encrypted_serde_keeps_plaintext_out_of_redis(
    redis_url: str, redis_prefix: str, raw_redis: redis.Redis
) -> None:
    serde = EncryptedSerializer.from_pycryptodome_aes(key=b"0123456789abcdef0123456789abcdef")
    config = {"configurable": {"thread_id": "secret"}, "metadata": {"note": SECRET}}
    with RedisSaver.from_conn_string(redis_url, prefix=redis_prefix, serde=serde) as saver:
        graph = chat_graph(saver, reply=count_seen)
        state = graph.invoke({"messages": [HumanMessage(content=SECRET)]}, config)
        assert contents(state)[0] == SECRET
        assert graph.get_state(config).metadata["note"] == SECRET
        assert list(saver.list(config, filter={"note": SECRET}))

    stored = b""
    for key in scan_keys(raw_redis, redis_prefix):
        kind = raw_redis.type(key)
        if kind == b"hash":
            stored += b"".join(raw_redis.hvals(key))
    assert b"+aes" in stored  # type tags say the values are encrypted
    assert SECRET.encode() not in stored
    assert b"launch" not in stored

    # without the key the data cannot be read
    with (
        RedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as plain,
        pytest.raises(Exception, match=r"aes|cipher|Unknown"),
    ):
        plain.get_tuple(config)


def test_failed_puts_write_nothing(saver: RedisSaver, raw_redis: redis.Redis) -> None:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"ok": "fine", "bad": object()}
    checkpoint["channel_versions"] = {"ok": "1", "bad": "1"}
    config = {"configurable": {"thread_id": "atomic", "checkpoint_ns": ""}}
    with pytest.raises(InvalidValueError, match="channel 'bad' cannot be serialized"):
        saver.put(config, checkpoint, {"source": "loop", "step": 0}, {"ok": "1", "bad": "1"})
    assert thread_keys(raw_redis, saver.prefix, "atomic") == []
    assert saver.get_tuple(config) is None

    # a stored thread stays exactly as it was after a failing put
    graph = chat_graph(saver, reply=count_seen)
    graph.invoke(
        {"messages": [HumanMessage(content="kept")]}, {"configurable": {"thread_id": "atomic"}}
    )
    before = snapshot(raw_redis, thread_keys(raw_redis, saver.prefix, "atomic"))
    head = saver.get_tuple({"configurable": {"thread_id": "atomic"}})
    assert head is not None
    with pytest.raises(InvalidValueError, match="channel 'bad' cannot be serialized"):
        saver.put(head.config, checkpoint, {"source": "loop", "step": 9}, {"bad": "2"})
    after = snapshot(raw_redis, thread_keys(raw_redis, saver.prefix, "atomic"))
    assert after == before


def test_bad_urls_and_dead_servers_fail_fast_with_a_clear_message(
    own_redis_server: LocalServer,
) -> None:
    for url in ("http://localhost:6379", "redis://localhost:notaport/0", "", "redis://"):
        with pytest.raises(InvalidConnectionStringError), RedisSaver.from_conn_string(url):
            pass

    (closed,) = free_ports(1)
    started = time.monotonic()
    with (
        pytest.raises(BackendUnavailableError, match=f"127.0.0.1:{closed}"),
        RedisSaver.from_conn_string(f"redis://127.0.0.1:{closed}/0"),
    ):
        pass
    assert time.monotonic() - started < 5

    # a server that dies under a running saver: the error names it, nothing is swallowed
    with RedisSaver.from_conn_string(own_redis_server.url, prefix="dies") as saver:
        graph = chat_graph(saver, reply=count_seen)
        config = {"configurable": {"thread_id": "t"}}
        graph.invoke({"messages": [HumanMessage(content="before")]}, config)
        own_redis_server.stop()
        started = time.monotonic()
        with pytest.raises(BackendUnavailableError, match=f"127.0.0.1:{own_redis_server.port}"):
            saver.get_tuple(config)
        assert time.monotonic() - started < 10


async def test_async_errors_name_the_server() -> None:
    (closed,) = free_ports(1)
    with pytest.raises(BackendUnavailableError, match=str(closed)):
        async with AsyncRedisSaver.from_conn_string(f"redis://127.0.0.1:{closed}/0"):
            pass
    with pytest.raises(InvalidConnectionStringError):
        async with AsyncRedisSaver.from_conn_string("mysql://x"):
            pass


def test_setup_and_options_are_validated(
    redis_url: str, redis_prefix: str, raw_redis: redis.Redis
) -> None:
    with RedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as saver:
        saver.setup()
        saver.setup()  # idempotent
        assert raw_redis.get(schema_key(redis_prefix)) == str(SCHEMA_VERSION).encode()
        raw_redis.script_flush()  # scripts reload by themselves
        assert saver.get_tuple({"configurable": {"thread_id": "none"}}) is None
        raw_redis.set(schema_key(redis_prefix), SCHEMA_VERSION + 1)
        with pytest.raises(MigrationError, match="newer"):
            saver.setup()

    bad: list[dict[str, Any]] = [
        {"prefix": "a{b}"},
        {"prefix": ""},
        {"ttl": {"default_ttl": -1}},
        {"ttl": {"default_tll": 5}},
        {"ttl": 60},
        {"keep_last": 0},
    ]
    for options in bad:
        with pytest.raises(ConfigurationError):
            RedisSaver(redis.Redis.from_url(redis_url), **options)
    with RedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as saver:
        with pytest.raises(ConfigurationError, match="thread_id"):
            saver.get_tuple({"configurable": {}})
        with pytest.raises(ConfigurationError, match="checkpoint_id"):
            saver.put_writes({"configurable": {"thread_id": "t"}}, [("a", 1)], "task")
        assert scan_keys(raw_redis, redis_prefix + ":{") == []
