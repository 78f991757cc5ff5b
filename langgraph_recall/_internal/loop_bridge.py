"""Run a coroutine on an event loop from another thread and wait for it, bounded.

The sync methods of the async savers and store submit their ``a*`` twin to the loop the
object runs on (``asyncio.run_coroutine_threadsafe``) and wait. An unbounded wait would
leave the calling thread stuck forever when that loop is blocked -- a blocking call on
the loop thread, or a deadlock (the loop waits for the very thread that waits for it).

:func:`run_on_loop` bounds the wait by ONE timeout on the loop's *liveness*, not on the
call's length: each ``timeout`` window it asks the loop to run a no-op callback; a
window in which the call did not finish and the loop ran nothing ends the wait with
:class:`~langgraph_recall.errors.EventLoopStalledError` (the call is cancelled). A slow
call on a live loop is never cut short (its own timeouts -- the pool's, the socket's --
bound it), and a stalled loop is reported after one window.

Example:
    ```python
    import asyncio
    import threading

    from langgraph_recall._internal.loop_bridge import run_on_loop
    from langgraph_recall.errors import EventLoopStalledError

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()

    async def answer() -> int:
        await asyncio.sleep(0.01)
        return 42

    assert run_on_loop(answer(), loop, 5.0, "the example") == 42
    release = threading.Event()
    loop.call_soon_threadsafe(release.wait)  # the loop thread blocks on this thread
    try:
        run_on_loop(answer(), loop, 0.2, "the example")
    except EventLoopStalledError as err:
        assert "nothing was applied" in str(err)
    release.set()
    loop.call_soon_threadsafe(loop.stop)
    ```
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from langgraph_recall.errors import EventLoopStalledError

__all__ = ["DEFAULT_LOOP_TIMEOUT", "run_on_loop"]

T = TypeVar("T")

DEFAULT_LOOP_TIMEOUT = 30.0
"""Seconds a sync call waits while the event loop runs nothing before it gives up."""


class _Handoff:
    """Whether the loop started the call, or the waiting thread abandoned it first."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started = False
        self.abandoned = False


async def _guarded(coro: Coroutine[Any, Any, T], handoff: _Handoff) -> T:
    with handoff.lock:
        if handoff.abandoned:  # the caller gave up before the loop got here
            coro.close()
            raise asyncio.CancelledError
        handoff.started = True
    return await coro


def run_on_loop(
    coro: Coroutine[Any, Any, T], loop: asyncio.AbstractEventLoop, timeout: float, owner: str
) -> T:
    """Run ``coro`` on ``loop`` (running in another thread) and return its result.

    Args:
        coro: The coroutine to run.
        loop: The running event loop, not the caller's.
        timeout: Seconds the loop may run nothing while the call has not finished.
        owner: Who runs on ``loop`` (named in the error).

    Raises:
        EventLoopStalledError: ``loop`` ran nothing for ``timeout`` seconds: the call is
            cancelled, and the message says whether it had started (then it may or may
            not have been applied).
    """
    handoff = _Handoff()
    future = asyncio.run_coroutine_threadsafe(_guarded(coro, handoff), loop)
    while True:
        answered = threading.Event()
        try:
            loop.call_soon_threadsafe(answered.set)
        except RuntimeError:  # closed meanwhile: the call's own outcome tells
            return future.result(timeout)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            if future.done():
                raise  # the call's own TimeoutError
            if answered.is_set():
                continue  # a slow call on a live loop: keep waiting
        with handoff.lock:
            handoff.abandoned = True
            started = handoff.started
        if not future.cancel():  # it finished meanwhile
            return future.result()
        if not started:
            coro.close()
        applied = (
            "it had started, so it may or may not have been applied"
            if started
            else "it had not started: nothing was applied"
        )
        raise EventLoopStalledError(
            f"the event loop {owner} runs on ran nothing for {timeout:g} s while this "
            "synchronous call waited for it: the loop is blocked (a blocking call on the "
            "loop's thread, or a deadlock: the loop waits for this thread). The call was "
            f"cancelled; {applied}. Call the async methods on the loop, keep blocking work "
            "off it, or raise the object's loop_timeout."
        )
