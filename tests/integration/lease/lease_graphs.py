"""Small real graphs for the lease tests: a node that records start/end markers."""

from __future__ import annotations

import asyncio
import operator
import threading
import time
from collections.abc import Callable
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict


class LogState(TypedDict):
    log: Annotated[list[str], operator.add]


class Recorder:
    """Thread-safe list of ``start X`` / ``end X`` markers, in the order they happened."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self._lock = threading.Lock()

    def mark(self, event: str) -> None:
        with self._lock:
            self.events.append(event)

    def assert_not_interleaved(self) -> None:
        for start, end in zip(self.events[::2], self.events[1::2], strict=True):
            assert start.startswith("start "), self.events
            assert end == "end " + start.removeprefix("start "), self.events


def run_name(config: RunnableConfig) -> str:
    return str(config["configurable"].get("run_name", "run"))


def build_log_graph(checkpointer: Any, node: Callable[..., Any]) -> Any:
    """``START -> work -> done``; ``done`` appends ``"done"`` (a second step to drain before)."""
    builder = StateGraph(LogState)
    builder.add_node("work", node)
    builder.add_node("done", lambda state: {"log": ["done"]})
    builder.add_edge(START, "work")
    builder.add_edge("work", "done")
    return builder.compile(checkpointer=checkpointer)


def sleeping_node(
    recorder: Recorder, pause: float, gate: threading.Event | None = None
) -> Callable[[LogState, RunnableConfig], dict[str, list[str]]]:
    def work(state: LogState, config: RunnableConfig) -> dict[str, list[str]]:
        name = run_name(config)
        recorder.mark(f"start {name}")
        if gate is not None:
            assert gate.wait(30)
        time.sleep(pause)
        recorder.mark(f"end {name}")
        return {"log": [name]}

    return work


def async_sleeping_node(
    recorder: Recorder, pause: float
) -> Callable[[LogState, RunnableConfig], Any]:
    async def work(state: LogState, config: RunnableConfig) -> dict[str, list[str]]:
        name = run_name(config)
        recorder.mark(f"start {name}")
        await asyncio.sleep(pause)
        recorder.mark(f"end {name}")
        return {"log": [name]}

    return work


def cfg(thread_id: str, name: str = "run") -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id, "run_name": name}}
