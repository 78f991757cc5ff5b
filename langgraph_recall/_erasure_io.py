"""The erasure's I/O: the steps its programs yield, and the shells that run them on a store,
a checkpointer and a LangGraph server (:mod:`langgraph_recall.erasure` is the core).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast, runtime_checkable

from langgraph.store.base import BaseStore, PutOp

from langgraph_recall._langgraph_server import AsyncServerThreads, ServerThreads, run_by_server

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

PAGE = 500


# -- pure core: the steps, as a generator of I/O requests ------------------------------
@dataclass(frozen=True)
class ListThreads:
    """``checkpointer.list(None, filter=...)`` → ``[(thread_id, metadata user_id)]``."""

    filter: dict[str, Any]


@dataclass(frozen=True)
class CountCheckpoints:
    """How many checkpoints ``thread_id`` has (all checkpoint namespaces)."""

    thread_id: str


@dataclass(frozen=True)
class SearchPage:
    """One page of ``store.search(namespace, limit, offset)`` (invalidated items too)."""

    namespace: tuple[str, ...]
    offset: int
    limit: int = PAGE


@dataclass(frozen=True)
class DeleteThreads:
    """Erase whole threads (``forget_threads`` where the saver has it, else
    ``delete_thread`` each)."""

    thread_ids: tuple[str, ...]


@dataclass(frozen=True)
class Forget:
    """Our store's ``forget(namespace, exact=..., analyze=...)`` → items erased."""

    namespace: tuple[str, ...]
    exact: bool = False
    analyze: bool = True


@dataclass(frozen=True)
class Write:
    """``store.batch(ops)``: deletes on stores without ``forget``, links to keep."""

    ops: tuple[PutOp, ...]


@dataclass(frozen=True)
class ServerRun:
    """Whether a LangGraph server wrote a checkpoint of ``thread_id`` (its metadata)."""

    thread_id: str


@dataclass(frozen=True)
class ServerSearch:
    """The LangGraph server's threads whose metadata names the user."""

    values: tuple[Any, ...]


@dataclass(frozen=True)
class ServerDelete:
    """Delete threads through the LangGraph server's API → those it had."""

    thread_ids: tuple[str, ...]


@dataclass(frozen=True)
class ServerPresent:
    """Which of the threads the LangGraph server still has."""

    thread_ids: tuple[str, ...]


ServerStep = ServerSearch | ServerDelete | ServerPresent
Step = (
    ListThreads
    | CountCheckpoints
    | SearchPage
    | DeleteThreads
    | Forget
    | Write
    | ServerRun
    | ServerStep
)
T = TypeVar("T")
StepProgram = Generator[Step, Any, T]


class ForgetsNamespaces(Protocol):
    """A store declaring ``supports_forget`` (ours)."""

    def forget(self, namespace: tuple[str, ...], *, exact: bool, analyze: bool) -> Any: ...

    async def aforget(self, namespace: tuple[str, ...], *, exact: bool, analyze: bool) -> Any: ...


# -- shells: run the steps on a store and a checkpointer -------------------------------
@runtime_checkable
class ForgetsThreads(Protocol):
    """A checkpointer that erases threads completely, beyond ``delete_thread`` (ours:
    on Postgres the planner statistics are resampled too, so ``pg_stats`` quotes nothing
    of them). :func:`forget_user` uses it when the checkpointer has it."""

    def forget_threads(self, thread_ids: Sequence[str]) -> None:
        """Delete the threads and every trace of them."""


@runtime_checkable
class AsyncForgetsThreads(Protocol):
    """Async :class:`ForgetsThreads` (what :func:`aforget_user` uses)."""

    async def aforget_threads(self, thread_ids: Sequence[str]) -> None:
        """Delete the threads and every trace of them."""


def _search_kwargs(step: SearchPage, include_invalid: bool) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"limit": step.limit, "offset": step.offset}
    if include_invalid:
        kwargs["include_invalid"] = True
    return kwargs


def _owners(tuples: Iterator[Any]) -> list[tuple[str, Any]]:
    seen: dict[str, Any] = {}
    for item in tuples:
        thread_id = str(item.config["configurable"]["thread_id"])
        seen.setdefault(thread_id, (item.metadata or {}).get("user_id"))
    return list(seen.items())


async def _aowners(tuples: AsyncIterator[Any]) -> list[tuple[str, Any]]:
    seen: dict[str, Any] = {}
    async for item in tuples:
        thread_id = str(item.config["configurable"]["thread_id"])
        seen.setdefault(thread_id, (item.metadata or {}).get("user_id"))
    return list(seen.items())


def _thread_config(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id}}


def run_steps(
    program: StepProgram[T],
    store: BaseStore,
    saver: BaseCheckpointSaver[Any] | None,
    invalid: bool,
    server: ServerThreads | None = None,
) -> T:
    reply: Any = None
    while True:
        try:
            step = program.send(reply)
        except StopIteration as stop:
            result: T = stop.value
            return result
        if isinstance(step, SearchPage):
            reply = store.search(step.namespace, **_search_kwargs(step, invalid))
        elif isinstance(step, Forget):
            reply = cast(ForgetsNamespaces, store).forget(
                step.namespace, exact=step.exact, analyze=step.analyze
            )
        elif isinstance(step, Write):
            reply = store.batch(step.ops)
        elif isinstance(step, ServerStep):
            assert server is not None, f"{step!r} needs a LangGraph server"
            if isinstance(step, ServerSearch):
                reply = server.with_metadata(step.values)
            elif isinstance(step, ServerDelete):
                reply = server.delete(step.thread_ids)
            else:
                reply = server.present(step.thread_ids)
        elif saver is None:
            raise AssertionError(f"{step!r} needs a checkpointer")  # pragma: no cover
        elif isinstance(step, ServerRun):
            reply = any(
                run_by_server(t.metadata) for t in saver.list(_thread_config(step.thread_id))
            )
        elif isinstance(step, ListThreads):
            reply = _owners(saver.list(None, filter=step.filter))
        elif isinstance(step, CountCheckpoints):
            reply = sum(1 for _ in saver.list(_thread_config(step.thread_id)))
        elif isinstance(saver, ForgetsThreads):
            saver.forget_threads(step.thread_ids)
            reply = None
        else:
            for thread_id in step.thread_ids:
                saver.delete_thread(thread_id)
            reply = None


async def arun_steps(
    program: StepProgram[T],
    store: BaseStore,
    saver: BaseCheckpointSaver[Any] | None,
    invalid: bool,
    server: AsyncServerThreads | None = None,
) -> T:
    reply: Any = None
    while True:
        try:
            step = program.send(reply)
        except StopIteration as stop:
            result: T = stop.value
            return result
        if isinstance(step, SearchPage):
            reply = await store.asearch(step.namespace, **_search_kwargs(step, invalid))
        elif isinstance(step, Forget):
            reply = await cast(ForgetsNamespaces, store).aforget(
                step.namespace, exact=step.exact, analyze=step.analyze
            )
        elif isinstance(step, Write):
            reply = await store.abatch(step.ops)
        elif isinstance(step, ServerStep):
            assert server is not None, f"{step!r} needs a LangGraph server"
            if isinstance(step, ServerSearch):
                reply = await server.with_metadata(step.values)
            elif isinstance(step, ServerDelete):
                reply = await server.delete(step.thread_ids)
            else:
                reply = await server.present(step.thread_ids)
        elif saver is None:
            raise AssertionError(f"{step!r} needs a checkpointer")  # pragma: no cover
        elif isinstance(step, ServerRun):
            reply = any(
                [
                    run_by_server(t.metadata)
                    async for t in saver.alist(_thread_config(step.thread_id))
                ]
            )
        elif isinstance(step, ListThreads):
            reply = await _aowners(saver.alist(None, filter=step.filter))
        elif isinstance(step, CountCheckpoints):
            reply = sum([1 async for _ in saver.alist(_thread_config(step.thread_id))])
        elif isinstance(saver, AsyncForgetsThreads):
            await saver.aforget_threads(step.thread_ids)
            reply = None
        else:
            for thread_id in step.thread_ids:
                await saver.adelete_thread(thread_id)
            reply = None
