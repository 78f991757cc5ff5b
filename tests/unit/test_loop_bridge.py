"""One timeout bounds a sync call waiting on an event loop -- on the loop's liveness, so a
slow call on a live loop is never cut short, and a stalled loop fails the call after one
window with the call cancelled (it never runs later)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from langgraph_recall._internal.loop_bridge import run_on_loop
from langgraph_recall.errors import EventLoopStalledError


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    running = asyncio.new_event_loop()
    thread = threading.Thread(target=running.run_forever, daemon=True)
    thread.start()
    yield running
    running.call_soon_threadsafe(running.stop)
    thread.join(10)
    running.close()


def test_a_slow_call_on_a_live_loop_is_not_cut_short(loop: asyncio.AbstractEventLoop) -> None:
    async def slow() -> str:
        for _ in range(5):  # longer than two 1 s windows, the loop running all along
            await asyncio.sleep(0.5)
        return "done"

    assert run_on_loop(slow(), loop, 1.0, "the test") == "done"


def test_the_calls_own_errors_come_through(loop: asyncio.AbstractEventLoop) -> None:
    async def fails() -> None:
        raise TimeoutError("the call's own timeout")

    with pytest.raises(TimeoutError, match="the call's own timeout") as caught:
        run_on_loop(fails(), loop, 5.0, "the test")
    assert not isinstance(caught.value, EventLoopStalledError)


def test_a_stalled_loop_fails_the_call_which_then_never_runs(
    loop: asyncio.AbstractEventLoop,
) -> None:
    ran: list[str] = []
    release = threading.Event()

    async def record() -> None:
        ran.append("ran")

    loop.call_soon_threadsafe(release.wait)  # the loop waits for this thread: a deadlock
    with pytest.raises(EventLoopStalledError, match="had not started: nothing was applied"):
        run_on_loop(record(), loop, 0.1, "the test")
    release.set()
    assert run_on_loop(asyncio.sleep(0, "after"), loop, 5.0, "the test") == "after"
    assert ran == []  # the abandoned call was cancelled, not run late
