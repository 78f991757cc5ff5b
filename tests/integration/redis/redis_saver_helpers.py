"""Helpers shared by the Redis checkpointer tests (graphs, key scans, private servers)."""

from __future__ import annotations

import operator
import random
import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import redis
from langgraph.channels import DeltaChannel
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from tests.reliability._servers import redis_server_binary


def contents(state: dict[str, Any]) -> list[str]:
    """The message texts of a ``MessagesState`` value."""
    return [m.content for m in state["messages"]]


def scan_keys(client: redis.Redis, prefix: str) -> list[bytes]:
    """Every key under ``prefix`` (SCAN, as the tests never use KEYS either)."""
    return sorted(client.scan_iter(match=f"{prefix}*", count=1000))


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports(count: int, *, with_bus: bool = False) -> list[int]:
    """``count`` free loopback ports (and free ``port + 10000`` cluster-bus ports)."""
    ports: list[int] = []
    while len(ports) < count:
        port = random.randint(20000, 29999)
        if port in ports or not _port_free(port):
            continue
        if with_bus and not _port_free(port + 10000):
            continue
        ports.append(port)
    return ports


def start_server(port: int, workdir: str, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            shutil.which(redis_server_binary()) or redis_server_binary(),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            workdir,
            *extra,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_ping(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            redis.Redis(port=port, socket_connect_timeout=0.5).ping()
            return
        except redis.RedisError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@dataclass
class LocalServer:
    """A redis-server process this test suite owns."""

    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _append(state: list[str], writes: Sequence[list[str]]) -> list[str]:
    return [*state, *(item for batch in writes for item in batch)]


class DeltaState(TypedDict):
    items: Annotated[list[str], DeltaChannel(_append, snapshot_frequency=3)]


def delta_graph(checkpointer: Any) -> Any:
    """START -> add -> END on a ``DeltaChannel`` list (snapshot every 3 updates)."""

    def add(state: DeltaState) -> dict[str, Any]:
        return {"items": [f"n{len(state['items'])}"]}

    builder = StateGraph(DeltaState)
    builder.add_node("add", add)
    builder.add_edge(START, "add")
    builder.add_edge("add", END)
    return builder.compile(checkpointer=checkpointer)


class Items(TypedDict):
    items: Annotated[list[str], operator.add]


def nested_graph(checkpointer: Any) -> Any:
    """START -> sub (a compiled subgraph appending "leaf") -> after -> END."""
    inner = StateGraph(Items)
    inner.add_node("leaf", lambda state: {"items": ["leaf"]})
    inner.add_edge(START, "leaf")
    inner.add_edge("leaf", END)
    outer = StateGraph(Items)
    outer.add_node("sub", inner.compile())
    outer.add_node("after", lambda state: {"items": ["after"]})
    outer.add_edge(START, "sub")
    outer.add_edge("sub", "after")
    outer.add_edge("after", END)
    return outer.compile(checkpointer=checkpointer)
