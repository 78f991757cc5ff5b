"""Erase everything of one user: memories, history, bookkeeping and conversation threads.

:func:`forget_user` (and :func:`aforget_user`) is what ``langgraph-recall forget --user``
runs. It finds the user's data in two independent ways and erases the union:

* **The thread registry** the memory nodes keep in the store
  (:mod:`langgraph_recall._memory.registry`): every thread any of our nodes ran for the
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
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langgraph.store.base import BaseStore, Item, PutOp

from langgraph_recall._erasure_io import (
    PAGE,
    AsyncForgetsThreads,
    CountCheckpoints,
    DeleteThreads,
    Forget,
    ForgetsThreads,
    ListThreads,
    SearchPage,
    ServerDelete,
    ServerPresent,
    ServerRun,
    ServerSearch,
    Step,
    StepProgram,
    Write,
    arun_steps,
    run_steps,
)
from langgraph_recall._internal.identity import (
    MARKER,
    format_namespace,
    legacy_namespace,
    template_fields,
)
from langgraph_recall._langgraph_server import AsyncServerThreads, ServerThreads
from langgraph_recall._memory.context import DEFAULT_NAMESPACE
from langgraph_recall._memory.registry import (
    USER_META_TEMPLATE,
    ThreadLink,
    legacy_registry_namespace,
    read_record,
    registry_namespace,
)
from langgraph_recall.errors import ConfigurationError, InvalidValueError
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
        served: Threads a LangGraph server ran (their checkpoints carry its metadata): the
            server keeps its own copy of their conversation (thread values, run inputs),
            reached only through its API (``langgraph_url=``).
    """

    user_id: str
    namespaces: tuple[tuple[str, ...], ...]
    items: Mapping[tuple[str, ...], int]
    threads: Mapping[str, int]
    found_by: Mapping[str, tuple[str, ...]]
    legacy: tuple[tuple[str, ...], ...] = ()
    served: tuple[str, ...] = ()

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


def _pages(namespace: tuple[str, ...]) -> Generator[Step, Any, list[Item]]:
    found: list[Item] = []
    while True:
        page = yield SearchPage(namespace, len(found))
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
    server: bool = False,
) -> Generator[Step, Any, UserData]:
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
            for thread_id, owner in (yield ListThreads({"user_id": value})):
                if str(owner) == user_id and "metadata" not in found_by.get(thread_id, []):
                    found_by.setdefault(thread_id, []).append("metadata")
    if server:
        for thread_id in (yield ServerSearch(tuple(metadata_values(user_id)))):
            found_by.setdefault(thread_id, []).append("server")
    namespaces = _outermost([*_user_namespaces(user_id, templates, identity), *recorded])
    namespaces = [ns for ns in namespaces if ns[: len(meta)] != meta] + [meta]
    items: dict[tuple[str, ...], int] = {}
    for namespace in namespaces:
        items[namespace] = len((yield from _pages(namespace)))
    old_namespaces = [ns for ns in dict.fromkeys(legacy) if ns not in items]
    for namespace in old_namespaces:
        items[namespace] = len(_exact((yield from _pages(namespace)), namespace))
    threads: dict[str, int] = {}
    served: list[str] = []
    if with_threads:
        for thread_id in sorted(found_by):
            threads[thread_id] = yield CountCheckpoints(thread_id)
            if threads[thread_id] and (yield ServerRun(thread_id)):
                served.append(thread_id)
    return UserData(
        user_id=user_id,
        namespaces=tuple(namespaces),
        items=items,
        threads=threads,
        found_by={thread: tuple(how) for thread, how in found_by.items()},
        legacy=tuple(old_namespaces),
        served=tuple(served),
    )


def _erase_namespace(
    namespace: tuple[str, ...], native: bool, *, exact: bool = False, analyze: bool = True
) -> Generator[Step, Any, int]:
    """Erase ``namespace`` and everything under it, or (``exact``) only the items whose
    namespace is exactly ``namespace``."""
    if native:
        return int((yield Forget(namespace, exact=exact, analyze=analyze)))
    if exact:
        found = _exact((yield from _pages(namespace)), namespace)
        for start in range(0, len(found), PAGE):
            page = found[start : start + PAGE]
            yield Write(tuple(PutOp(namespace, item.key, None) for item in page))
        return len(found)
    deleted: set[tuple[tuple[str, ...], str]] = set()
    while True:
        page = yield SearchPage(namespace, 0)
        batch = {(tuple(item.namespace), item.key) for item in page} - deleted
        if not batch:  # empty, or a store that keeps what it was told to delete
            return len(deleted)
        yield Write(tuple(PutOp(namespace, key, None) for namespace, key in sorted(batch)))
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
    before: UserData,
    after: UserData,
    threads_left: Sequence[str],
    unheld: Sequence[str],
    served: Sequence[str] = (),
    on_server: Sequence[str] = (),
) -> list[str]:
    meta = after.namespaces[-1]
    lines = [
        f"{count} items {'in' if namespace in after.legacy else 'under'} {namespace!r}"
        for namespace, count in after.items.items()
        if count and namespace != meta
    ]
    kept_links = after.items.get(meta, 0) - len(set(threads_left) | set(unheld) | set(served))
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
        f"thread {thread!r} was run by a LangGraph server (langgraph dev, LangGraph "
        "Platform), which keeps its own copy of the conversation (the thread's values, its "
        "runs' inputs) that this erasure cannot reach: run it again with the server's URL "
        "(langgraph_url=..., CLI: --langgraph-url URL). Its link is kept"
        for thread in served
    ]
    lines += [
        f"the LangGraph server still has thread {thread!r} (written during the erasure?)"
        for thread in on_server
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
    server: bool = False,
) -> StepProgram[ErasureReport]:
    before = yield from _find(user_id, templates, identity, with_threads, server)
    had: list[str] = []
    if server and before.found_by:  # the server's copy first: its delete reaches our saver
        had = list((yield ServerDelete(tuple(sorted(before.found_by)))))
    unheld = [] if drop_unheld else [t for t in _unheld(before) if t not in had]
    served = [] if server else list(before.served)
    if before.threads:
        yield DeleteThreads(tuple(before.threads))
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
            if (yield CountCheckpoints(thread_id)):
                left.append(thread_id)
    keep = [
        ThreadLink(user_id, thread_id, by="forget_user").put_op(None)
        for thread_id in dict.fromkeys([*left, *unheld, *served])
    ]
    if keep:
        yield Write(tuple(op for op in keep if op is not None))
    on_server: list[str] = []
    if server and before.found_by:
        on_server = list((yield ServerPresent(tuple(sorted(before.found_by)))))
    after = yield from _find(user_id, templates, identity, with_threads, server)
    return ErasureReport(
        user_id=user_id,
        items_erased=erased,
        namespaces=before.namespaces,
        threads=tuple(dict.fromkeys([*before.threads, *had])),
        checkpoints=before.checkpoints,
        residue=tuple(_residue(before, after, left, unheld, served, on_server)),
    )


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


def _server_url(url: object) -> str | None:
    if url is None:
        return None
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ConfigurationError(
            f"langgraph_url must be the LangGraph server's http(s) URL (the one `langgraph "
            f"dev` prints, e.g. 'http://127.0.0.1:2024'), got {url!r}"
        )
    return url


def _find_program(
    store: BaseStore,
    checkpointer: BaseCheckpointSaver[Any] | None,
    user_id: object,
    namespaces: Sequence[tuple[str, ...]],
    identity: Mapping[str, Any] | None,
    server: bool = False,
) -> tuple[StepProgram[UserData], bool]:
    user, values, invalid = _checked(store, user_id, namespaces, identity)
    return _find(user, namespaces, values, checkpointer is not None, server), invalid


def _forget_program(
    store: BaseStore,
    checkpointer: BaseCheckpointSaver[Any] | None,
    user_id: object,
    namespaces: Sequence[tuple[str, ...]],
    identity: Mapping[str, Any] | None,
    unheld_threads: str,
    server: bool = False,
) -> tuple[StepProgram[ErasureReport], bool]:
    user, values, invalid = _checked(store, user_id, namespaces, identity, unheld_threads)
    native = store_supports(store, "forget")
    drop = unheld_threads == "drop"
    program = _forget(user, namespaces, values, checkpointer is not None, native, drop, server)
    return program, invalid


# -- public API ------------------------------------------------------------------------
def find_user_data(
    store: BaseStore,
    checkpointer: BaseCheckpointSaver[Any] | None,
    user_id: str | int,
    *,
    namespaces: Sequence[tuple[str, ...]] = (DEFAULT_NAMESPACE,),
    identity: Mapping[str, Any] | None = None,
    langgraph_url: str | None = None,
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
        langgraph_url: The LangGraph server the graphs run on (``langgraph dev``, LangGraph
            Platform): its threads whose metadata names the user are listed too.

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
    url = _server_url(langgraph_url)
    program, invalid = _find_program(
        store, checkpointer, user_id, namespaces, identity, url is not None
    )
    return run_steps(program, store, checkpointer, invalid, ServerThreads(url) if url else None)


async def afind_user_data(
    store: BaseStore,
    checkpointer: BaseCheckpointSaver[Any] | None,
    user_id: str | int,
    *,
    namespaces: Sequence[tuple[str, ...]] = (DEFAULT_NAMESPACE,),
    identity: Mapping[str, Any] | None = None,
    langgraph_url: str | None = None,
) -> UserData:
    """Async :func:`find_user_data` (``asearch``, ``alist``)."""
    url = _server_url(langgraph_url)
    program, invalid = _find_program(
        store, checkpointer, user_id, namespaces, identity, url is not None
    )
    server = AsyncServerThreads(url) if url else None
    return await arun_steps(program, store, checkpointer, invalid, server)


def forget_user(
    store: BaseStore,
    checkpointer: BaseCheckpointSaver[Any] | None,
    user_id: str | int,
    *,
    namespaces: Sequence[tuple[str, ...]] = (DEFAULT_NAMESPACE,),
    identity: Mapping[str, Any] | None = None,
    unheld_threads: str = "keep",
    langgraph_url: str | None = None,
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
        langgraph_url: The LangGraph server the graphs run on (``langgraph dev``,
            LangGraph Platform), which keeps its own copy of each conversation (thread
            values, run inputs): the user's threads are deleted through its API too
            (``DELETE /threads/{id}``), with its threads whose metadata names the user.
            Without it, a thread whose checkpoints show a server ran it is residue
            (``complete`` is False) and keeps its link, so a run with the URL finds it.

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
    url = _server_url(langgraph_url)
    program, invalid = _forget_program(
        store, checkpointer, user_id, namespaces, identity, unheld_threads, url is not None
    )
    return run_steps(program, store, checkpointer, invalid, ServerThreads(url) if url else None)


async def aforget_user(
    store: BaseStore,
    checkpointer: BaseCheckpointSaver[Any] | None,
    user_id: str | int,
    *,
    namespaces: Sequence[tuple[str, ...]] = (DEFAULT_NAMESPACE,),
    identity: Mapping[str, Any] | None = None,
    unheld_threads: str = "keep",
    langgraph_url: str | None = None,
) -> ErasureReport:
    """Async :func:`forget_user` (``aforget``/``abatch``, ``alist``, ``adelete_thread``)."""
    url = _server_url(langgraph_url)
    program, invalid = _forget_program(
        store, checkpointer, user_id, namespaces, identity, unheld_threads, url is not None
    )
    server = AsyncServerThreads(url) if url else None
    return await arun_steps(program, store, checkpointer, invalid, server)
