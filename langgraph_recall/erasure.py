"""Erase everything of one user: memories, history, bookkeeping and conversation threads.

:func:`forget_user` (and :func:`aforget_user`) is what ``langgraph-recall forget --user``
runs. It finds the user's data in two independent ways and erases the union:

* **The thread registry** the memory nodes keep in the store
  (:mod:`langgraph_recall.nodes._registry`): every thread any of our nodes ran for the
  user, whether ``user_id`` came from ``configurable`` or from ``context=``, plus the
  user's namespaces the nodes used (custom templates such as
  ``("memories", "{org}", "{user_id}")`` included).
* **Checkpoint metadata**: LangGraph copies ``configurable["user_id"]`` into each
  checkpoint's metadata, as a string or as a number (``user_id=123``); threads are
  listed with ``checkpointer.list(None, filter={"user_id": v})`` for every value ``v``
  whose text is the user id, and kept only when ``str(metadata["user_id"])`` is exactly
  the id — the same identity rule the nodes use for namespaces.

Then it deletes those threads (``forget_threads`` on our savers: rows, lease and, on
Postgres, the planner statistics; ``delete_thread`` on any other checkpointer), erases
the user's namespaces (on our ``PostgresMemoryStore``: ``forget()``, which also removes
history rows and derived memories; on any other ``BaseStore``: every item, deleted) and
last the user's
``("memory_meta", <user>)`` namespace (reflection cursor and thread registry), so an
interrupted erasure can simply be run again. Finally it looks again, by both routes and
thread by thread, and reports whatever is still there (:attr:`ErasureReport.residue`).

What cannot be found: a thread run by a graph in which none of our store-using nodes
ran (retrieve, extract, reflect, summarize with ``extract=``, the memory tools) **and** whose
``user_id`` was passed only in ``context=`` — nothing links it to the user. Threads that
several users share are deleted whole.

Example:
    ```python
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    from langgraph_recall import forget_user
    from langgraph_recall.nodes import user_namespace

    store, checkpointer = InMemoryStore(), InMemorySaver()
    store.put(user_namespace("alice@example.com"), "k1", {"content": "Alice likes tea."})
    report = forget_user(store, checkpointer, "alice@example.com")
    assert report.complete, report.residue
    assert report.items_erased == 1
    ```
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast, runtime_checkable

from langgraph.store.base import BaseStore, Item, PutOp

from langgraph_recall._internal.identity import (
    MARKER,
    format_namespace,
    legacy_namespace,
    template_fields,
)
from langgraph_recall.errors import ConfigurationError, InvalidValueError
from langgraph_recall.nodes._base import DEFAULT_NAMESPACE
from langgraph_recall.nodes._registry import (
    USER_META_TEMPLATE,
    ThreadLink,
    legacy_registry_namespace,
    read_record,
    registry_namespace,
)
from langgraph_recall.store._capabilities import store_supports

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

__all__ = [
    "AsyncForgetsThreads",
    "ErasureReport",
    "ForgetsThreads",
    "UserData",
    "afind_user_data",
    "aforget_user",
    "find_user_data",
    "forget_user",
    "metadata_values",
]

PAGE = 500


# -- pure core: the steps, as a generator of I/O requests ------------------------------
@dataclass(frozen=True)
class _ListThreads:
    """``checkpointer.list(None, filter=...)`` → ``[(thread_id, metadata user_id)]``."""

    filter: dict[str, Any]


@dataclass(frozen=True)
class _CountCheckpoints:
    """How many checkpoints ``thread_id`` has (all checkpoint namespaces)."""

    thread_id: str


@dataclass(frozen=True)
class _SearchPage:
    """One page of ``store.search(namespace, limit, offset)`` (invalidated items too)."""

    namespace: tuple[str, ...]
    offset: int
    limit: int = PAGE


@dataclass(frozen=True)
class _DeleteThreads:
    """Erase whole threads (``forget_threads`` where the saver has it, else
    ``delete_thread`` each)."""

    thread_ids: tuple[str, ...]


@dataclass(frozen=True)
class _Forget:
    """Our store's ``forget(namespace, exact=..., analyze=...)`` → items erased."""

    namespace: tuple[str, ...]
    exact: bool = False
    analyze: bool = True


@dataclass(frozen=True)
class _Write:
    """``store.batch(ops)``: deletes on stores without ``forget``, links to keep."""

    ops: tuple[PutOp, ...]


_Step = _ListThreads | _CountCheckpoints | _SearchPage | _DeleteThreads | _Forget | _Write
T = TypeVar("T")
_Program = Generator[_Step, Any, T]


@dataclass(frozen=True)
class UserData:
    """What exists of one user (what ``inspect`` shows and ``forget`` erases).

    Attributes:
        user_id: The user.
        namespaces: The user's namespaces: the given templates filled for the user, the
            ones the nodes recorded, and ``("memory_meta", <user>)`` last.
        items: Items per namespace (``include_invalid`` on our store).
        threads: ``thread_id -> number of checkpoints`` of the user's threads.
        found_by: ``thread_id -> ("registry", "metadata")``: how each thread was found.
        legacy: Namespaces langgraph-recall 0.1 wrote for the user (labels without field
            marker, ``("memories", "42")``); each counts (and is erased) exactly, never
            what lies under it, since 0.1 layouts could overlap. Their counts are in
            ``items`` too.
    """

    user_id: str
    namespaces: tuple[tuple[str, ...], ...]
    items: Mapping[tuple[str, ...], int]
    threads: Mapping[str, int]
    found_by: Mapping[str, tuple[str, ...]]
    legacy: tuple[tuple[str, ...], ...] = ()

    @property
    def memories(self) -> int:
        """Items outside the bookkeeping namespaces (the user's memories)."""
        meta = {self.namespaces[-1], *self.legacy_meta}
        return sum(count for ns, count in self.items.items() if ns not in meta)

    @property
    def legacy_meta(self) -> tuple[tuple[str, ...], ...]:
        """The 0.1 bookkeeping namespaces among :attr:`legacy` (cursor, thread links)."""
        return tuple(ns for ns in self.legacy if ns and ns[0] == USER_META_TEMPLATE[0])

    @property
    def checkpoints(self) -> int:
        """Checkpoints of all the user's threads."""
        return sum(self.threads.values())


@dataclass(frozen=True)
class ErasureReport:
    """What :func:`forget_user` erased, and what it still found afterwards.

    Attributes:
        user_id: The user.
        items_erased: Items erased from the store (memories, derived memories,
            reflection cursor and thread links; history rows go with them).
        namespaces: The namespaces erased.
        threads: The conversation threads deleted.
        checkpoints: Their checkpoints.
        residue: One line per thing still present after erasure (empty: complete).
    """

    user_id: str
    items_erased: int
    namespaces: tuple[tuple[str, ...], ...]
    threads: tuple[str, ...]
    checkpoints: int
    residue: tuple[str, ...] = field(default_factory=tuple)

    @property
    def complete(self) -> bool:
        """True when the re-scan after erasure found nothing of the user."""
        return not self.residue


def metadata_values(user_id: str) -> list[Any]:
    """The checkpoint-metadata values whose text is ``user_id``: the string, and the int,
    float or bool LangGraph would have stored for ``configurable["user_id"]=<number>``.

    Example:
        ```python
        from langgraph_recall.erasure import metadata_values

        assert metadata_values("123") == ["123", 123]
        assert metadata_values("alice") == ["alice"]
        ```
    """
    values: list[Any] = [user_id]
    try:
        number = int(user_id)
    except ValueError:
        pass
    else:
        if str(number) == user_id:
            values.append(number)
    try:
        real = float(user_id)
    except ValueError:
        pass
    else:
        if math.isfinite(real) and repr(real) == user_id:
            values.append(real)
    if user_id in ("True", "False"):
        values.append(user_id == "True")
    return values


def _user_text(user_id: object) -> str:
    if isinstance(user_id, bool) or not isinstance(user_id, (str, int)):
        raise InvalidValueError(f"user_id must be a string or an int, got {type(user_id).__name__}")
    text = str(user_id)
    if not text:
        raise InvalidValueError("user_id is empty; pass the id the app runs the user with")
    return text


def _user_namespaces(
    user_id: str, templates: Sequence[tuple[str, ...]], identity: Mapping[str, Any]
) -> list[tuple[str, ...]]:
    values = {**identity, "user_id": user_id}
    filled = []
    for template in templates:
        if "user_id" not in template_fields(template):
            raise ConfigurationError(
                f"namespace template {tuple(template)!r} has no '{{user_id}}': it is not one "
                "user's data, so forget_user will not erase it"
            )
        filled.append(format_namespace(template, context=values, config=None))
    return filled


def _legacy_namespaces(
    user_id: str, templates: Sequence[tuple[str, ...]], identity: Mapping[str, Any]
) -> list[tuple[str, ...]]:
    """The user's 0.1 namespaces (filled templates, cursor, thread links: the registry
    last). An id holding ``:`` is left out: its 0.1 label (``user_id:7`` for the id
    ``"user_id:7"``) is also a 0.2 label of another user (``"7"``)."""
    values = {**identity, "user_id": user_id}
    found = [legacy_namespace(template, values) for template in templates]
    found.append(legacy_namespace(USER_META_TEMPLATE, values))
    found.append(legacy_registry_namespace(user_id))
    return [ns for ns in found if not any(MARKER in label for label in ns)]


def _outermost(namespaces: Sequence[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Drop namespaces lying under another one of the list (their prefix erases them)."""
    unique = list(dict.fromkeys(namespaces))
    return [
        ns
        for ns in unique
        if not any(other != ns and ns[: len(other)] == other for other in unique)
    ]


def _pages(namespace: tuple[str, ...]) -> Generator[_Step, Any, list[Item]]:
    found: list[Item] = []
    while True:
        page = yield _SearchPage(namespace, len(found))
        found.extend(page)
        if len(page) < PAGE:
            return found


def _exact(items: Sequence[Item], namespace: tuple[str, ...]) -> list[Item]:
    return [item for item in items if tuple(item.namespace) == namespace]


def _find(
    user_id: str,
    templates: Sequence[tuple[str, ...]],
    identity: Mapping[str, Any],
    with_threads: bool,
) -> Generator[_Step, Any, UserData]:
    meta = format_namespace(USER_META_TEMPLATE, context={"user_id": user_id}, config=None)
    found_by: dict[str, list[str]] = {}
    recorded: list[tuple[str, ...]] = []
    legacy = _legacy_namespaces(user_id, templates, identity)
    registries = [(registry_namespace(user_id), False)]
    if legacy and legacy[-1] == legacy_registry_namespace(user_id):
        registries.append((legacy[-1], True))
    for registry, old in registries:
        listed = yield from _pages(registry)
        for item in _exact(listed, registry) if old else listed:
            record = read_record(item, user_id, legacy=old)
            if record is None:
                continue
            if "registry" not in found_by.get(record.thread_id, []):
                found_by.setdefault(record.thread_id, []).append("registry")
            (legacy if old else recorded).extend(ns for _, ns in record.namespaces)
    if with_threads:
        for value in metadata_values(user_id):
            for thread_id, owner in (yield _ListThreads({"user_id": value})):
                if str(owner) == user_id and "metadata" not in found_by.get(thread_id, []):
                    found_by.setdefault(thread_id, []).append("metadata")
    namespaces = _outermost([*_user_namespaces(user_id, templates, identity), *recorded])
    namespaces = [ns for ns in namespaces if ns[: len(meta)] != meta] + [meta]
    items: dict[tuple[str, ...], int] = {}
    for namespace in namespaces:
        items[namespace] = len((yield from _pages(namespace)))
    old_namespaces = [ns for ns in dict.fromkeys(legacy) if ns not in items]
    for namespace in old_namespaces:
        items[namespace] = len(_exact((yield from _pages(namespace)), namespace))
    threads: dict[str, int] = {}
    if with_threads:
        for thread_id in sorted(found_by):
            threads[thread_id] = yield _CountCheckpoints(thread_id)
    return UserData(
        user_id=user_id,
        namespaces=tuple(namespaces),
        items=items,
        threads=threads,
        found_by={thread: tuple(how) for thread, how in found_by.items()},
        legacy=tuple(old_namespaces),
    )


def _erase_namespace(
    namespace: tuple[str, ...], native: bool, *, exact: bool = False, analyze: bool = True
) -> Generator[_Step, Any, int]:
    """Erase ``namespace`` and everything under it, or (``exact``) only the items whose
    namespace is exactly ``namespace``."""
    if native:
        return int((yield _Forget(namespace, exact=exact, analyze=analyze)))
    if exact:
        found = _exact((yield from _pages(namespace)), namespace)
        for start in range(0, len(found), PAGE):
            page = found[start : start + PAGE]
            yield _Write(tuple(PutOp(namespace, item.key, None) for item in page))
        return len(found)
    deleted: set[tuple[tuple[str, ...], str]] = set()
    while True:
        page = yield _SearchPage(namespace, 0)
        batch = {(tuple(item.namespace), item.key) for item in page} - deleted
        if not batch:  # empty, or a store that keeps what it was told to delete
            return len(deleted)
        yield _Write(tuple(PutOp(namespace, key, None) for namespace, key in sorted(batch)))
        deleted |= batch


def _unheld(data: UserData) -> list[str]:
    """Threads the registry links to the user of which the checkpointer holds nothing:
    their checkpoints may live in another checkpointer (or were deleted already)."""
    return [
        thread
        for thread, count in data.threads.items()
        if not count and "registry" in data.found_by.get(thread, ())
    ]


def _residue(
    before: UserData, after: UserData, threads_left: Sequence[str], unheld: Sequence[str]
) -> list[str]:
    meta = after.namespaces[-1]
    lines = [
        f"{count} items {'in' if namespace in after.legacy else 'under'} {namespace!r}"
        for namespace, count in after.items.items()
        if count and namespace != meta
    ]
    kept_links = after.items.get(meta, 0) - len(threads_left) - len(unheld)
    if kept_links > 0:
        lines.append(f"{kept_links} bookkeeping items under {meta!r}")
    lines += [
        f"thread {thread!r} still has checkpoints (written during the erasure; its link is "
        "kept so the next run finds it)"
        for thread in threads_left
    ]
    lines += [
        f"thread {thread!r} was run for the user but this checkpointer holds none of its "
        "checkpoints: if its conversation is in another checkpointer (another Redis prefix "
        "or database), run the erasure with that one; if the thread was deleted already, "
        "pass unheld_threads='drop' (CLI: --drop-unheld-threads). Its link is kept"
        for thread in unheld
    ]
    lines += [
        f"thread {thread!r} ({', '.join(how)}) appeared after the erasure"
        for thread, how in after.found_by.items()
        if thread not in before.threads
    ]
    return lines


def _forget(
    user_id: str,
    templates: Sequence[tuple[str, ...]],
    identity: Mapping[str, Any],
    with_threads: bool,
    native: bool,
    drop_unheld: bool,
) -> _Program[ErasureReport]:
    before = yield from _find(user_id, templates, identity, with_threads)
    unheld = [] if drop_unheld else _unheld(before)
    if before.threads:
        yield _DeleteThreads(tuple(before.threads))
    erased = 0
    # the 0.1 namespaces first (exactly: 0.1 layouts could overlap), then the user's own
    # subtrees; the statistics are refreshed once, with the last erasure
    for namespace in before.legacy:
        erased += yield from _erase_namespace(namespace, native, exact=True, analyze=False)
    for namespace in before.namespaces[:-1]:
        erased += yield from _erase_namespace(namespace, native, analyze=False)
    # the bookkeeping namespace (thread links) goes last; links a worker wrote meanwhile
    # are read first, so a thread written during the erasure stays findable
    linked = {
        record.thread_id
        for item in (yield from _pages(registry_namespace(user_id)))
        if (record := read_record(item, user_id)) is not None
    }
    erased += yield from _erase_namespace(before.namespaces[-1], native)
    left = []
    if with_threads:
        for thread_id in sorted(set(before.threads) | linked):
            if (yield _CountCheckpoints(thread_id)):
                left.append(thread_id)
    keep = [
        ThreadLink(user_id, thread_id, by="forget_user").put_op(None)
        for thread_id in [*left, *unheld]
    ]
    if keep:
        yield _Write(tuple(op for op in keep if op is not None))
    after = yield from _find(user_id, templates, identity, with_threads)
    return ErasureReport(
        user_id=user_id,
        items_erased=erased,
        namespaces=before.namespaces,
        threads=tuple(before.threads),
        checkpoints=before.checkpoints,
        residue=tuple(_residue(before, after, left, unheld)),
    )


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


def _search_kwargs(step: _SearchPage, include_invalid: bool) -> dict[str, Any]:
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


def _run(
    program: _Program[T], store: BaseStore, saver: BaseCheckpointSaver[Any] | None, invalid: bool
) -> T:
    reply: Any = None
    while True:
        try:
            step = program.send(reply)
        except StopIteration as stop:
            result: T = stop.value
            return result
        if isinstance(step, _SearchPage):
            reply = store.search(step.namespace, **_search_kwargs(step, invalid))
        elif isinstance(step, _Forget):
            reply = cast(_ForgetsNamespaces, store).forget(
                step.namespace, exact=step.exact, analyze=step.analyze
            )
        elif isinstance(step, _Write):
            reply = store.batch(step.ops)
        elif saver is None:
            raise AssertionError(f"{step!r} needs a checkpointer")  # pragma: no cover
        elif isinstance(step, _ListThreads):
            reply = _owners(saver.list(None, filter=step.filter))
        elif isinstance(step, _CountCheckpoints):
            reply = sum(1 for _ in saver.list(_thread_config(step.thread_id)))
        elif isinstance(saver, ForgetsThreads):
            saver.forget_threads(step.thread_ids)
            reply = None
        else:
            for thread_id in step.thread_ids:
                saver.delete_thread(thread_id)
            reply = None


async def _arun(
    program: _Program[T], store: BaseStore, saver: BaseCheckpointSaver[Any] | None, invalid: bool
) -> T:
    reply: Any = None
    while True:
        try:
            step = program.send(reply)
        except StopIteration as stop:
            result: T = stop.value
            return result
        if isinstance(step, _SearchPage):
            reply = await store.asearch(step.namespace, **_search_kwargs(step, invalid))
        elif isinstance(step, _Forget):
            reply = await cast(_ForgetsNamespaces, store).aforget(
                step.namespace, exact=step.exact, analyze=step.analyze
            )
        elif isinstance(step, _Write):
            reply = await store.abatch(step.ops)
        elif saver is None:
            raise AssertionError(f"{step!r} needs a checkpointer")  # pragma: no cover
        elif isinstance(step, _ListThreads):
            reply = await _aowners(saver.alist(None, filter=step.filter))
        elif isinstance(step, _CountCheckpoints):
            reply = sum([1 async for _ in saver.alist(_thread_config(step.thread_id))])
        elif isinstance(saver, AsyncForgetsThreads):
            await saver.aforget_threads(step.thread_ids)
            reply = None
        else:
            for thread_id in step.thread_ids:
                await saver.adelete_thread(thread_id)
            reply = None


def _checked(
    store: BaseStore,
    user_id: object,
    namespaces: Sequence[tuple[str, ...]],
    identity: Mapping[str, Any] | None,
    unheld_threads: str = "keep",
) -> tuple[str, Mapping[str, Any], bool]:
    """The user's id text, the template values and whether the store's search takes
    ``include_invalid``. Bad input fails here, before any I/O."""
    user = _user_text(user_id)
    values = identity or {}
    _user_namespaces(user, namespaces, values)
    if unheld_threads not in ("keep", "drop"):
        raise ConfigurationError(f"unheld_threads must be 'keep' or 'drop', got {unheld_threads!r}")
    return user, values, store_supports(store, "include_invalid")


def _find_program(
    store: BaseStore,
    checkpointer: BaseCheckpointSaver[Any] | None,
    user_id: object,
    namespaces: Sequence[tuple[str, ...]],
    identity: Mapping[str, Any] | None,
) -> tuple[_Program[UserData], bool]:
    user, values, invalid = _checked(store, user_id, namespaces, identity)
    return _find(user, namespaces, values, checkpointer is not None), invalid


def _forget_program(
    store: BaseStore,
    checkpointer: BaseCheckpointSaver[Any] | None,
    user_id: object,
    namespaces: Sequence[tuple[str, ...]],
    identity: Mapping[str, Any] | None,
    unheld_threads: str,
) -> tuple[_Program[ErasureReport], bool]:
    user, values, invalid = _checked(store, user_id, namespaces, identity, unheld_threads)
    native = store_supports(store, "forget")
    drop = unheld_threads == "drop"
    return _forget(user, namespaces, values, checkpointer is not None, native, drop), invalid


class _ForgetsNamespaces(Protocol):
    """A store declaring ``supports_forget`` (ours)."""

    def forget(self, namespace: tuple[str, ...], *, exact: bool, analyze: bool) -> Any: ...

    async def aforget(self, namespace: tuple[str, ...], *, exact: bool, analyze: bool) -> Any: ...


# -- public API ------------------------------------------------------------------------
def find_user_data(
    store: BaseStore,
    checkpointer: BaseCheckpointSaver[Any] | None,
    user_id: str | int,
    *,
    namespaces: Sequence[tuple[str, ...]] = (DEFAULT_NAMESPACE,),
    identity: Mapping[str, Any] | None = None,
) -> UserData:
    """Find everything of ``user_id`` (nothing is changed): namespaces with their item
    counts and the user's threads with their checkpoint counts.

    Args:
        store: The memory store the nodes use (any ``BaseStore``).
        checkpointer: The graph's checkpointer (``None``: look at the store only).
        user_id: The id as the app passes it (``"alice@example.com"``, ``123``).
        namespaces: Templates of the user's memory namespaces (each with ``{user_id}``);
            the ones the nodes recorded in the registry are added.
        identity: Values of other template fields (e.g. ``{"org": "acme"}``).

    Example:
        ```python
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.store.memory import InMemoryStore

        from langgraph_recall.erasure import find_user_data
        from langgraph_recall.nodes import user_namespace

        store = InMemoryStore()
        store.put(user_namespace("alice@example.com"), "k1", {"content": "Alice likes tea."})
        data = find_user_data(store, InMemorySaver(), "alice@example.com")
        assert data.memories == 1 and dict(data.threads) == {}
        ```
    """
    program, invalid = _find_program(store, checkpointer, user_id, namespaces, identity)
    return _run(program, store, checkpointer, invalid)


async def afind_user_data(
    store: BaseStore,
    checkpointer: BaseCheckpointSaver[Any] | None,
    user_id: str | int,
    *,
    namespaces: Sequence[tuple[str, ...]] = (DEFAULT_NAMESPACE,),
    identity: Mapping[str, Any] | None = None,
) -> UserData:
    """Async :func:`find_user_data` (``asearch``, ``alist``)."""
    program, invalid = _find_program(store, checkpointer, user_id, namespaces, identity)
    return await _arun(program, store, checkpointer, invalid)


def forget_user(
    store: BaseStore,
    checkpointer: BaseCheckpointSaver[Any] | None,
    user_id: str | int,
    *,
    namespaces: Sequence[tuple[str, ...]] = (DEFAULT_NAMESPACE,),
    identity: Mapping[str, Any] | None = None,
    unheld_threads: str = "keep",
) -> ErasureReport:
    """Erase every memory, history row, derived memory, bookkeeping entry and
    conversation thread of ``user_id``, then look again and report what is left.

    Args:
        store: The memory store the nodes use (any ``BaseStore``; on our
            ``PostgresMemoryStore`` history rows and derived memories go too).
        checkpointer: The graph's checkpointer (``None``: erase the store only).
        user_id: The id as the app passes it; ``"123"`` and ``123`` are one user.
        namespaces: Templates of the user's memory namespaces (each with ``{user_id}``;
            default ``("memories", "{user_id}")``); recorded ones are added.
        identity: Values of other template fields (e.g. ``{"org": "acme"}``).
        unheld_threads: What to do with a thread the registry links to the user of which
            ``checkpointer`` holds no checkpoint -- its conversation may be in another
            checkpointer (another Redis prefix, another database). ``"keep"`` (default):
            keep its link and report it as residue (``complete`` is False), so pointing the
            erasure at the wrong checkpointer never reads as success and a second run with
            the right one still finds the thread. ``"drop"``: the thread is known to be
            deleted already; erase its link.

    Returns:
        An :class:`ErasureReport`; check ``report.complete`` (``residue`` says what is
        still there, e.g. a thread a worker wrote again while erasing — run it again).

    Raises:
        InvalidValueError: ``user_id`` is empty or not a string / int (nothing erased).
        ConfigurationError: A template without ``{user_id}`` (nothing erased).

    Example:
        ```python
        from langgraph.store.memory import InMemoryStore

        from langgraph_recall.erasure import forget_user
        from langgraph_recall.nodes import user_namespace

        store = InMemoryStore()
        store.put(user_namespace(123), "k1", {"content": "User 123 likes tea."})
        report = forget_user(store, None, 123)  # no checkpointer: memories only
        assert report.complete and report.items_erased == 1
        ```
    """
    program, invalid = _forget_program(
        store, checkpointer, user_id, namespaces, identity, unheld_threads
    )
    return _run(program, store, checkpointer, invalid)


async def aforget_user(
    store: BaseStore,
    checkpointer: BaseCheckpointSaver[Any] | None,
    user_id: str | int,
    *,
    namespaces: Sequence[tuple[str, ...]] = (DEFAULT_NAMESPACE,),
    identity: Mapping[str, Any] | None = None,
    unheld_threads: str = "keep",
) -> ErasureReport:
    """Async :func:`forget_user` (``aforget``/``abatch``, ``alist``, ``adelete_thread``)."""
    program, invalid = _forget_program(
        store, checkpointer, user_id, namespaces, identity, unheld_threads
    )
    return await _arun(program, store, checkpointer, invalid)
