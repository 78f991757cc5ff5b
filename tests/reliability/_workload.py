"""A real LangGraph chat graph, acknowledged-turn bookkeeping and the state invariant the
fault and concurrency tests check.

Each turn ``<thread>#<n>`` is one ``invoke``: the human message, then node ``a`` answers
``a:<turn>`` and node ``b`` answers ``b:<turn>``. A thread's state is *consistent* when
its messages split into whole turns ``[t, a:t, b:t]``, except that a turn whose invoke
FAILED may have left a resumable prefix (``[t]`` or ``[t, a:t]``: LangGraph checkpoints
per step). Acknowledged turns must all be there, whole, once each, in order.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage

__all__ = [
    "Ledger",
    "check_thread",
    "thread_config",
    "turn_input",
]


def turn_input(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


def thread_config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


@dataclass
class Ledger:
    """Which turns were acknowledged (invoke returned) and which failed, and how fast."""

    acked: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    failed: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    error_types: Counter[str] = field(default_factory=Counter)
    failure_seconds: list[float] = field(default_factory=list)
    success_times: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ok(self, thread_id: str, turn: str) -> None:
        with self.lock:
            self.acked[thread_id].append(turn)
            self.success_times.append(time.monotonic())

    def fail(self, thread_id: str, turn: str, error: BaseException, seconds: float) -> None:
        with self.lock:
            self.failed[thread_id].append(turn)
            self.error_types[f"{type(error).__module__}.{type(error).__qualname__}"] += 1
            self.failure_seconds.append(seconds)

    def first_success_after(self, moment: float) -> float | None:
        with self.lock:
            later = [t for t in self.success_times if t >= moment]
        return min(later) - moment if later else None


def check_thread(thread_id: str, messages: list[Any], acked: list[str], failed: list[str]) -> int:
    """Assert the consistency invariant (module docstring); return the number of turns that
    are whole in the state although their invoke failed (in doubt: committed, reply lost)."""
    contents = [str(m.content) for m in messages]
    turns: list[str] = []
    position = 0
    failed_set = set(failed)
    while position < len(contents):
        human = contents[position]
        assert not human.startswith(("a:", "b:")), (thread_id, position, contents)
        whole = contents[position + 1 : position + 3] == [f"a:{human}", f"b:{human}"]
        if whole:
            turns.append(human)
            position += 3
            continue
        # a failed run may leave [t] or [t, a:t]; nothing else is allowed
        assert human in failed_set, (thread_id, "partial acknowledged turn", human, contents)
        position += 2 if contents[position + 1 : position + 2] == [f"a:{human}"] else 1
    assert len(turns) == len(set(turns)), (thread_id, "duplicated turn", turns)
    present = set(turns)
    missing = [t for t in acked if t not in present]
    assert not missing, (thread_id, "acknowledged turns lost", missing)
    in_order = [t for t in turns if t in set(acked)]
    assert in_order == acked, (thread_id, "acknowledged turns out of order")
    extra = present - set(acked)
    assert extra <= failed_set, (thread_id, "turns nobody sent", extra - failed_set)
    return len(extra)


def run_turns(
    graph: Any, thread_ids: list[str], ledger: Ledger, stop: threading.Event, pause: float
) -> None:
    """Invoke turns round-robin over ``thread_ids`` until ``stop``; record each in ``ledger``.

    A failed turn is recorded with its latency and followed by a ``pause`` (seconds)."""
    n = 0
    while not stop.is_set():
        for tid in thread_ids:
            text = f"{tid}#{n}"
            start = time.monotonic()
            try:
                graph.invoke(turn_input(text), thread_config(tid))
            except Exception as exc:
                ledger.fail(tid, text, exc, time.monotonic() - start)
                time.sleep(pause)
            else:
                ledger.ok(tid, text)
        n += 1
