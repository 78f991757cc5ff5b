"""A capability is never disclosed or predictable.

A fencing token is a key to a thread: whoever carries the current one writes through the
lease. So no error (message, ``repr``, ``args``, attributes, its whole cause chain), no log
record and no return value that another writer can reach may carry a token other than the
caller's own; and a token cannot be guessed (random digits: the guards compare tokens for
equality; a fresh database does not take ``1``).

The property drives every refusal path of both savers, sync and async -- a write with a
stale, guessed, old or no token (``put``, ``put_writes``, a graph run), ``copy_thread`` into
and ``prune`` of a leased thread, the lease wrapper refused (``reject``) or fenced out mid-run
(the thread deleted and re-leased by someone else), a refused renewal -- in every lease state
(held by another worker, released, deleted) and searches everything it produced for every
token issued on the thread.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import uuid
from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import END, START, MessagesState, StateGraph

from langgraph_recall.errors import LangGraphRecallError
from langgraph_recall.lease import FENCE_CONFIG_KEY, Lease, with_thread_lease
from langgraph_recall.lease._tokens import sequence_of
from tests._hypothesis import thorough
from tests.graph_helpers import chat_graph
from tests.reliability._figures import Figures
from tests.reliability._savers import BACKENDS, FLAVORS, async_saver, sync_saver, target
from tests.reliability._workload import thread_config, turn_input

OPS = ["put", "put_writes", "invoke", "copy_thread", "prune", "wrapper", "renew", "fenced_out"]
STATES = ["held", "released", "deleted"]
TOKENS = ["none", "own_old", "guess_near", "random"]


class Captured(logging.Handler):
    """Every log record of every logger, formatted and with its raw arguments."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.texts: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.texts.append(record.getMessage())
        self.texts.append(repr(record.args))
        if record.exc_info and record.exc_info[1] is not None:
            self.texts.extend(_exception_texts(record.exc_info[1]))


@contextmanager
def captured_logs() -> Iterator[Captured]:
    handler = Captured()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


def _exception_texts(exc: BaseException | None) -> list[str]:
    texts: list[str] = []
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        texts += [str(exc), repr(exc), repr(exc.args), repr(vars(exc))]
        texts += [repr(note) for note in getattr(exc, "__notes__", [])]
        exc = exc.__cause__ or exc.__context__
    return texts


def disclosed(texts: list[str], secrets: set[int]) -> list[int]:
    """The secret tokens that appear in ``texts`` (decimal or hex)."""
    blob = "\n".join(texts)
    return [t for t in secrets if str(t) in blob or format(t, "x") in blob]


def fenced(thread_id: str, token: int | None) -> dict[str, Any]:
    configurable: dict[str, Any] = {"thread_id": thread_id}
    if token is not None:
        configurable[FENCE_CONFIG_KEY] = token
    return {"configurable": configurable}


scenarios = st.fixed_dictionaries(
    {
        "op": st.sampled_from(OPS),
        "state": st.sampled_from(STATES),
        "token": st.sampled_from(TOKENS),
        "delta": st.integers(-3, 3).filter(bool),
        "random": st.integers(0, 2**63 - 1),
    }
)


class Harness:
    """One saver (sync or async, driven from sync code) and the scenario steps on it."""

    def __init__(self, saver: Any, flavor: str, loop: asyncio.AbstractEventLoop | None) -> None:
        self.saver = saver
        self.flavor = flavor
        self.loop = loop
        self.leases = saver.lease_backend()

    def run(self, value: Any) -> Any:
        return self.loop.run_until_complete(value) if self.loop is not None else value

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.flavor == "async":
            return self.run(getattr(self.saver, "a" + name)(*args, **kwargs))
        return getattr(self.saver, name)(*args, **kwargs)

    def acquire(self, thread_id: str, owner: str) -> Lease:
        if self.flavor == "async":
            lease = self.run(self.leases.atry_acquire(thread_id, owner, 30.0))
        else:
            lease = self.leases.try_acquire(thread_id, owner, 30.0)
        assert lease is not None
        return lease

    def release(self, lease: Lease) -> None:
        if self.flavor == "async":
            self.run(self.leases.arelease(lease))
        else:
            self.leases.release(lease)

    def renew(self, lease: Lease) -> bool:
        if self.flavor == "async":
            return bool(self.run(self.leases.arenew(lease, 30.0)))
        return bool(self.leases.renew(lease, 30.0))

    def invoke(self, graph: Any, value: Any, config: dict[str, Any]) -> Any:
        if self.flavor == "async":
            return self.run(graph.ainvoke(value, config))
        return graph.invoke(value, config)

    def fenced_out_graph(self, thread_id: str, issued: set[int]) -> Any:
        """A graph whose first node has another worker delete the thread and lease it again,
        so the run's next write is fenced out (``LeaseLostError``)."""
        harness = self

        def intruder(state: MessagesState) -> dict[str, Any]:
            harness.saver_delete_and_take(thread_id, issued)
            return {"messages": [AIMessage(content="a")]}

        async def aintruder(state: MessagesState) -> dict[str, Any]:
            await harness.asaver_delete_and_take(thread_id, issued)
            return {"messages": [AIMessage(content="a")]}

        builder = StateGraph(MessagesState)
        builder.add_node("a", aintruder if self.flavor == "async" else intruder)
        builder.add_node("b", lambda state: {"messages": [AIMessage(content="b")]})
        builder.add_edge(START, "a")
        builder.add_edge("a", "b")
        builder.add_edge("b", END)
        return builder.compile(checkpointer=self.saver)

    def saver_delete_and_take(self, thread_id: str, issued: set[int]) -> None:
        self.saver.delete_thread(thread_id)
        lease = self.leases.try_acquire(thread_id, "intruder", 30.0)
        assert lease is not None
        issued.add(lease.token)

    async def asaver_delete_and_take(self, thread_id: str, issued: set[int]) -> None:
        await self.saver.adelete_thread(thread_id)
        lease = await self.leases.atry_acquire(thread_id, "intruder", 30.0)
        assert lease is not None
        issued.add(lease.token)

    def scenario(self, case: dict[str, Any]) -> tuple[list[str], set[int], bool]:
        """Run one case; returns (what it produced, the tokens it must not show, refused?)."""
        thread_id = f"cap-{uuid.uuid4().hex[:12]}"
        graph = chat_graph(self.saver)
        mine = self.acquire(thread_id, "caller")
        self.invoke(graph, turn_input("first"), fenced(thread_id, mine.token))
        self.release(mine)
        other = self.acquire(thread_id, "other")
        issued = {mine.token, other.token}
        if case["state"] == "released":
            self.release(other)
        elif case["state"] == "deleted":
            self.call("delete_thread", thread_id)
        token = {
            "none": None,
            "own_old": mine.token,
            "guess_near": max(0, other.token + case["delta"]),
            "random": case["random"],
        }[case["token"]]
        produced: list[str] = []
        refused = False
        head = self.call("get_tuple", thread_config(thread_id))
        base = dict(head.config["configurable"]) if head is not None else {"thread_id": thread_id}
        base.setdefault("checkpoint_ns", "")
        config = {"configurable": {**base, **fenced(thread_id, token)["configurable"]}}
        op = case["op"]
        try:
            if op == "put":
                result = self.call("put", config, empty_checkpoint(), {"step": 9}, {})
            elif op == "put_writes":
                result = self.call("put_writes", config, [("x", 1)], "task-1")
            elif op == "invoke":
                result = self.invoke(graph, turn_input("b"), fenced(thread_id, token))
            elif op == "copy_thread":
                source = f"{thread_id}-src"
                self.invoke(graph, turn_input("src"), thread_config(source))
                result = self.call("copy_thread", source, thread_id)
            elif op == "prune":
                result = self.call("prune", [thread_id])
            elif op == "wrapper":
                leased = with_thread_lease(graph, strategy="reject")
                result = self.invoke(leased, turn_input("w"), thread_config(thread_id))
            elif op == "renew":
                result = self.renew(mine)
            else:  # fenced_out: the caller's own run loses its lease to an intruder
                if case["state"] == "held":
                    self.release(other)
                leased = with_thread_lease(self.fenced_out_graph(thread_id, issued))
                result = self.invoke(leased, turn_input("f"), thread_config(thread_id))
            produced.append(repr(result))
        except LangGraphRecallError as exc:
            refused = True
            produced += _exception_texts(exc)
        secrets = issued - ({token} if token is not None else set())
        return produced, secrets, refused


@contextmanager
def harness(backend: str, flavor: str, request: pytest.FixtureRequest) -> Iterator[Harness]:
    where = target(backend, request)
    if flavor == "sync":
        with sync_saver(where) as saver:
            yield Harness(saver, flavor, None)
        return
    loop = asyncio.new_event_loop()
    stack = AsyncExitStack()
    try:
        saver = loop.run_until_complete(stack.enter_async_context(async_saver(where)))
        yield Harness(saver, flavor, loop)
    finally:
        loop.run_until_complete(stack.aclose())
        loop.close()


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_no_refusal_discloses_a_token(
    backend: str, flavor: str, request: pytest.FixtureRequest, figures: Figures
) -> None:
    tried: list[int] = []
    refusals: list[int] = []
    with harness(backend, flavor, request) as h:

        @settings(
            max_examples=thorough(40),
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )
        @given(case=scenarios)
        def check(case: dict[str, Any]) -> None:
            with captured_logs() as logs:
                produced, secrets, refused = h.scenario(case)
            leaked = disclosed(produced + logs.texts, secrets)
            figures.add("capability_tokens_disclosed", len(leaked))
            assert not leaked, (case, produced, logs.texts)
            tried.append(1)
            refusals.append(int(refused))

        check()
    figures.add("capability_cases_tried", len(tried))
    figures.add("capability_refusals_checked", sum(refusals))
    assert sum(refusals) > len(tried) // 3  # the cases do reach the refusal paths


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fresh_database_takes_no_guessable_token(
    backend: str, request: pytest.FixtureRequest, figures: Figures
) -> None:
    """Tokens carry random digits: on a fresh database the first lease's token is not 1 (nor
    any small number), consecutive tokens of a thread are not consecutive numbers, and a
    write with the previous token + 1 is refused."""
    with sync_saver(target(backend, request)) as saver:
        leases = saver.lease_backend()
        graph = chat_graph(saver)
        for guess in (0, 1, 2, 3):
            with pytest.raises(LangGraphRecallError):
                graph.invoke(turn_input("guess"), fenced("fresh", guess))
        tokens = []
        for n in range(30):
            lease = leases.try_acquire("fresh", f"w{n}", 30.0)
            assert lease is not None
            tokens.append(lease.token)
            leases.release(lease)
        assert all(b > a for a, b in itertools.pairwise(tokens))  # strictly increasing
        assert tokens[0] > 10**15  # sequence (server clock) then six secret digits
        low = [t % 1_000_000 for t in tokens]
        assert len(set(low)) > 25  # the secret digits vary (30 draws of 10^6)
        assert sum(1 for a, b in itertools.pairwise(tokens) if b == a + 1) == 0
        held = leases.try_acquire("fresh", "holder", 30.0)
        assert held is not None
        assert sequence_of(held.token) > sequence_of(tokens[-1])
        refused = 0
        for delta in (-2, -1, 1, 2):
            try:
                graph.invoke(turn_input("near"), fenced("fresh", held.token + delta))
            except LangGraphRecallError:
                refused += 1
        assert refused == 4
        figures.add("capability_guesses_refused", 8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_token_is_stored_nowhere_but_in_the_lease(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """A leased run's checkpoints, metadata, writes and blobs do not carry its token (the
    ``__`` config key stays out of metadata and traces), so reading a thread never teaches
    a reader the key to it."""
    where = target(backend, request)
    with sync_saver(where) as saver:
        recorded: list[int] = []
        inner = saver.lease_backend()

        class Recording:
            def try_acquire(self, thread_id: str, owner: str, ttl: float) -> Lease | None:
                lease = inner.try_acquire(thread_id, owner, ttl)
                if lease is not None:
                    recorded.append(lease.token)
                return lease

            def renew(self, lease: Lease, ttl: float) -> bool:
                return bool(inner.renew(lease, ttl))

            def release(self, lease: Lease) -> None:
                inner.release(lease)

        graph = with_thread_lease(chat_graph(saver), Recording())
        for n in range(3):
            graph.invoke(turn_input(f"turn {n}"), thread_config("stored"))
        graph.update_state(thread_config("stored"), {"messages": []}, as_node="b")
        assert len(recorded) == 4
        stored = repr(where.dump("stored"))
        history = repr(list(saver.list(thread_config("stored"))))
        for token in recorded:
            for text in (stored, history):
                assert str(token) not in text and repr(token.to_bytes(8, "big")) not in text
