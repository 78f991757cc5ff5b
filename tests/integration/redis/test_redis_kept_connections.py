"""The sync saver's lean request path (``_kept_connections.KeptConnections``) on a real
Redis: shared by many threads and LangGraph's background executor, failing over and
recovering when the server dies or hangs, and giving its connections back to the client's
pool."""

from __future__ import annotations

import gc
import os
import signal
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from redis.backoff import NoBackoff
from redis.retry import Retry
from redis_saver_helpers import LocalServer, contents, free_ports, start_server, wait_ping

from langgraph_recall.checkpoint.redis import RedisSaver
from langgraph_recall.checkpoint.redis._kept_connections import (
    MAX_IDLE,
    KeptConnections,
    pack_command,
)
from langgraph_recall.errors import BackendUnavailableError
from tests.graph_helpers import chat_graph, count_seen

pytestmark = pytest.mark.redis


def _in_use(client: redis.Redis) -> int:
    return len(client.connection_pool._in_use_connections)


def test_many_threads_share_one_saver_and_its_background_writes(
    redis_url: str, redis_prefix: str
) -> None:
    client = redis.Redis.from_url(redis_url)
    saver = RedisSaver(client, prefix=redis_prefix)
    assert saver._kept is not None
    graph = chat_graph(saver, reply=count_seen)
    turns, workers = 6, 8
    errors: list[BaseException] = []
    start = threading.Barrier(workers)

    def work(graph: Any, worker: int) -> None:
        try:
            start.wait()
            for turn in range(turns):
                graph.invoke(
                    {"messages": [HumanMessage(content=f"w{worker} t{turn}")]},
                    {"configurable": {"thread_id": f"lane-{worker}"}},
                )
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(graph, w)) for w in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for worker in range(workers):
        state = graph.get_state({"configurable": {"thread_id": f"lane-{worker}"}}).values
        expected = [
            text
            for turn in range(turns)
            for text in (f"w{worker} t{turn}", f"a saw {3 * turn + 1}", f"b saw {3 * turn + 2}")
        ]
        assert contents(state) == expected
        history = list(saver.list({"configurable": {"thread_id": f"lane-{worker}"}}))
        assert len(history) == 4 * turns  # input + 3 steps per turn, none lost or mixed
    # every connection the lane took is idle in it (no leak), and at most MAX_IDLE are kept
    assert _in_use(client) == saver._kept.idle <= MAX_IDLE
    del graph, saver
    gc.collect()
    assert _in_use(client) == 0  # the saver's finalizer handed them back to the pool
    assert client.ping()
    client.close()


def test_kept_connections_go_back_to_the_pool_with_their_timeout(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url, socket_timeout=2.5)
    lane = KeptConnections.for_client(client)
    assert lane is not None
    assert lane.execute(pack_command(["PING"]) * 2, 2) == [b"PONG", b"PONG"]
    assert lane.idle == 1 == _in_use(client)  # kept out of the pool between calls
    (connection,) = client.connection_pool._in_use_connections
    assert connection.socket_timeout == 2.5  # redis-py's own timeout, untouched
    lane.close()
    assert _in_use(client) == 0
    assert lane.idle == 0
    assert client.get(f"lane-missing-{uuid.uuid4().hex}") is None
    client.close()


def test_lane_replies_and_errors_stay_in_order(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    lane = KeptConnections.for_client(client)
    assert lane is not None
    key = f"lane-order-{uuid.uuid4().hex}"
    batch = pack_command(["SET", key, "v"]) + pack_command(["HGET", key, "f"])
    batch += pack_command(["GET", key])
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        lane.execute(batch, 3)
    # the connection read every reply and is still in step
    assert lane.execute(pack_command(["GET", key]) + pack_command(["DEL", key]), 2) == [b"v", 1]
    lane.close()
    client.close()


def test_lane_is_only_used_where_it_is_safe(redis_url: str) -> None:
    assert KeptConnections.for_client(redis.Redis.from_url(redis_url)) is not None
    small = redis.Redis(connection_pool=redis.BlockingConnectionPool.from_url(redis_url))
    assert KeptConnections.for_client(small) is None  # 50 connections at most: not hoarded
    single = redis.Redis.from_url(redis_url, single_connection_client=True)
    assert KeptConnections.for_client(single) is None
    latin = redis.Redis.from_url(redis_url, encoding="latin-1")
    assert KeptConnections.for_client(latin) is None
    for client in (small, single, latin):
        client.close()


def test_saver_survives_a_server_restart_and_a_hung_server(tmp_path: Path) -> None:
    (port,) = free_ports(1)
    workdir = str(tmp_path)
    server = LocalServer(port, start_server(port, workdir))
    try:
        wait_ping(port)
        client = redis.Redis(port=port, socket_timeout=0.5, retry=Retry(NoBackoff(), 1))
        saver = RedisSaver(client, prefix="lane")
        saver.setup()
        graph = chat_graph(saver, reply=count_seen)
        config: RunnableConfig = {"configurable": {"thread_id": "t"}}
        graph.invoke({"messages": [HumanMessage(content="one")]}, config)
        assert saver._kept is not None and saver._kept.idle >= 1

        # 1. restart: every kept socket is dead; the next calls reconnect transparently
        server.stop()
        server = LocalServer(port, start_server(port, workdir))
        wait_ping(port)
        assert saver.get_tuple(config) is None  # no persistence configured: data gone
        graph.invoke({"messages": [HumanMessage(content="two")]}, config)
        assert contents(graph.get_state(config).values) == ["two", "a saw 1", "b saw 2"]

        # 2. hung server: the kernel-enforced timeout fires, the error names the server
        os.kill(server.process.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            with pytest.raises(BackendUnavailableError, match=f"127.0.0.1:{port}|localhost"):
                saver.get_tuple(config)
            assert time.monotonic() - started < 5.0
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
        loaded = saver.get_tuple(config)
        assert loaded is not None
        assert contents(loaded.checkpoint["channel_values"]) == ["two", "a saw 1", "b saw 2"]
        client.close()
    finally:
        server.stop()
