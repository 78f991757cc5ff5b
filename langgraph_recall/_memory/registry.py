"""The thread registry: which conversation threads the memory nodes ran for each user.

A checkpoint holds the user's words, but a checkpointer can find a user's threads only by
checkpoint metadata, which LangGraph fills from ``config["configurable"]`` — a thread run
with ``context={"user_id": ...}`` carries no ``user_id`` there at all. So every node that
touches the store records the link ``(user, thread)`` in the store itself, in the same
round trip as its own reads (one extra ``GetOp``; a write only the first time, or when
the node uses a namespace the link does not list yet):

``("memory_meta", <user label>, "threads")`` / key ``<thread label>`` →
``{"user": <user label>, "thread": <thread label>, "namespaces": [{"template": [...],
"namespace": [...]}], "first_seen": <iso time>, "by": <node>}``

(labels are :func:`~langgraph_recall._internal.identity.encode_label` encodings). The
erasure (:func:`langgraph_recall.erasure.forget_user`) reads these links to delete the
threads and the user's namespaces, and erases the registry last. Links have no TTL: a
link must outlive the thread it points at.

Example:
    ```python
    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.nodes import ThreadLink, register_thread

    store = InMemoryStore()
    link = ThreadLink.from_identity(context={"user_id": "ann@example.com"},
                                    config={"configurable": {"thread_id": "t1"}})
    assert register_thread(store, link) is True      # written once
    assert register_thread(store, link) is False     # already recorded
    ```
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, Result

from langgraph_recall._internal.identity import (
    decode_label,
    encode_label,
    format_namespace,
    legacy_namespace,
    lookup_identity,
    parse_legacy_namespace,
    parse_namespace,
    template_fields,
)
from langgraph_recall._memory.context import NodeContext, utc_now

__all__ = [
    "META_ROOT",
    "THREADS_LABEL",
    "USER_META_TEMPLATE",
    "ThreadLink",
    "ThreadRecord",
    "abatch_with_link",
    "aregister_thread",
    "batch_with_link",
    "legacy_registry_namespace",
    "node_thread_link",
    "read_record",
    "register_thread",
    "registry_namespace",
    "split_link",
    "thread_key",
    "user_meta_namespace",
    "with_link",
]

META_ROOT = "memory_meta"
"""Root label of per-user bookkeeping (reflection cursor, thread registry)."""
USER_META_TEMPLATE: tuple[str, ...] = (META_ROOT, "{user_id}")
"""Template of a user's bookkeeping namespace (``ReflectNode``'s default cursor namespace)."""
THREADS_LABEL = "threads"
MAX_KEY_LABEL_BYTES = 256

Namespaces = tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]
"""``(template, namespace)`` pairs of a user's namespaces."""


def user_meta_namespace(user_id: str) -> tuple[str, ...]:
    """``("memory_meta", "user_id:<label>")``: everything the nodes keep about ``user_id``.

    Example:
        ```python
        from langgraph_recall._memory.registry import user_meta_namespace

        assert user_meta_namespace("a.b") == ("memory_meta", "user_id:a%2Eb")
        ```
    """
    return format_namespace(USER_META_TEMPLATE, context={"user_id": user_id}, config=None)


def registry_namespace(user_id: str) -> tuple[str, ...]:
    """Namespace of ``user_id``'s thread links.

    Example:
        ```python
        from langgraph_recall._memory.registry import registry_namespace

        assert registry_namespace("u1") == ("memory_meta", "user_id:u1", "threads")
        ```
    """
    return (*user_meta_namespace(user_id), THREADS_LABEL)


def legacy_registry_namespace(user_id: str) -> tuple[str, ...]:
    """Where langgraph-recall 0.1 kept ``user_id``'s thread links (``("memory_meta",
    <label>, "threads")``, no field marker): read by the erasure, never written.

    Example:
        ```python
        from langgraph_recall._memory.registry import legacy_registry_namespace

        assert legacy_registry_namespace("u1") == ("memory_meta", "u1", "threads")
        ```
    """
    return (*legacy_namespace(USER_META_TEMPLATE, {"user_id": user_id}), THREADS_LABEL)


DIGEST_KEY_PREFIX = "%sha256-"
"""How the key of a thread id too long for a label starts: ``%`` followed by a non-hex
character, which no :func:`encode_label` output holds (it writes ``%`` only as ``%XX``)."""


def thread_key(thread_id: str) -> str:
    """Store key of a thread's link: its label, or ``%sha256-<digest>`` for ids whose label
    is longer than 256 bytes.

    The two kinds can never meet: a label holds ``%`` only as the start of a ``%XX``
    escape (two hex digits), so no thread id's label starts like a digest key — not even
    the label of the id ``"%sha256-..."`` itself (``%25sha256-...``). Distinct ids have
    distinct labels (the encoding is collision-free) and distinct digests unless SHA-256
    collides.

    Example:
        ```python
        from langgraph_recall._memory.registry import thread_key

        assert thread_key("t.1") == "t%2E1"
        assert thread_key("x" * 1000).startswith("%sha256-")
        assert thread_key(thread_key("x" * 1000)).startswith("%25sha256-")
        ```
    """
    label = encode_label(thread_id)
    if len(label.encode("utf-8", "surrogatepass")) <= MAX_KEY_LABEL_BYTES:
        return label
    digest = hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{DIGEST_KEY_PREFIX}{digest}"


def _user_namespaces(
    templates: Sequence[tuple[str, ...]], context: Any, config: Mapping[str, Any] | None
) -> Namespaces:
    """The filled templates that hold ``{user_id}`` (a shared namespace is not the user's)."""
    pairs = []
    for template in templates:
        if "user_id" in template_fields(template):
            namespace = format_namespace(template, context=context, config=config)
            pairs.append((tuple(template), namespace))
    return tuple(pairs)


@dataclass(frozen=True)
class ThreadRecord:
    """A link read back from the registry (decoded).

    Attributes:
        user_id: The user the thread was run for.
        thread_id: The checkpointer's thread id.
        namespaces: ``(template, namespace)`` pairs of the user's namespaces that nodes used
            on that thread (each one checked to belong to ``user_id``).
    """

    user_id: str
    thread_id: str
    namespaces: Namespaces


@dataclass(frozen=True)
class ThreadLink:
    """The ``(user, thread)`` link a node records, with the user's namespaces it uses.

    Example:
        ```python
        from langgraph_recall.nodes import ThreadLink

        link = ThreadLink("u1", "t1", by="retrieve_memories")
        assert link.get_op().namespace == ("memory_meta", "user_id:u1", "threads")
        ```
    """

    user_id: str
    thread_id: str
    namespaces: Namespaces = ()
    by: str = "memory_node"

    @classmethod
    def from_identity(
        cls,
        *,
        context: Any,
        config: Mapping[str, Any] | None,
        templates: Sequence[tuple[str, ...]] = (),
        by: str = "memory_node",
    ) -> ThreadLink | None:
        """The link for a run: ``user_id`` from the context (else ``configurable``),
        ``thread_id`` as the checkpointer sees it (``configurable``, else the context);
        ``None`` when either is missing. ``templates`` name the namespaces the caller uses.

        Example:
            ```python
            from langgraph_recall.nodes import ThreadLink

            link = ThreadLink.from_identity(context={"user_id": 7},
                                            config={"configurable": {"thread_id": "t"}})
            assert link is not None and link.user_id == "7"
            ```
        """
        user_id = lookup_identity("user_id", context=context, config=config)
        thread_id = lookup_identity("thread_id", context=None, config=config)
        if thread_id is None:
            thread_id = lookup_identity("thread_id", context=context, config=None)
        if user_id is None or thread_id is None:
            return None
        namespaces = _user_namespaces(templates, context, config)
        return cls(user_id, thread_id, namespaces, by)

    @property
    def namespace(self) -> tuple[str, ...]:
        """Where the link is stored."""
        return registry_namespace(self.user_id)

    @property
    def key(self) -> str:
        """The link's key in :attr:`namespace`."""
        return thread_key(self.thread_id)

    def get_op(self) -> GetOp:
        """The read that tells whether the link is already recorded."""
        return GetOp(self.namespace, self.key, refresh_ttl=False)

    def put_op(self, found: Item | None) -> PutOp | None:
        """The write that records the link, or ``None`` when ``found`` already holds it
        (with every namespace of this link). Never expires (``ttl=None``)."""
        previous: dict[str, Any] = dict(found.value) if found is not None else {}
        recorded = [entry for entry in previous.get("namespaces") or [] if _is_entry(entry)]
        known = {(tuple(e["template"]), tuple(e["namespace"])) for e in recorded}
        missing = [pair for pair in self.namespaces if pair not in known]
        if found is not None and not missing:
            return None
        entries = recorded + [
            {"template": list(template), "namespace": list(namespace)}
            for template, namespace in missing
        ]
        value = {
            "user": encode_label(self.user_id),
            "thread": encode_label(self.thread_id),
            "namespaces": entries,
            "first_seen": previous.get("first_seen") or utc_now().isoformat(),
            "by": self.by,
        }
        return PutOp(self.namespace, self.key, value, index=False, ttl=None)


def _is_entry(entry: Any) -> bool:
    return (
        isinstance(entry, Mapping)
        and isinstance(entry.get("template"), list)
        and isinstance(entry.get("namespace"), list)
        and all(isinstance(label, str) for label in entry["template"] + entry["namespace"])
    )


def read_record(item: Item, user_id: str, *, legacy: bool = False) -> ThreadRecord | None:
    """Decode a registry item of ``user_id`` (``None`` if it is not a valid link).

    A recorded namespace is kept only if its template really yields it for ``user_id``
    (:func:`~langgraph_recall._internal.identity.parse_namespace`), so a damaged link can
    never point the erasure at another user's data. ``legacy=True`` reads a link written
    by 0.1 (its namespaces have no field marker: ``parse_legacy_namespace``).

    Example:
        ```python
        from datetime import datetime, timezone

        from langgraph.store.base import Item

        from langgraph_recall._memory.registry import ThreadRecord, read_record

        now = datetime.now(timezone.utc)
        item = Item(value={"user": "u1", "thread": "t1", "namespaces": []}, key="t1",
                    namespace=("memory_meta", "user_id:u1", "threads"),
                    created_at=now, updated_at=now)
        assert read_record(item, "u1") == ThreadRecord("u1", "t1", ())
        ```
    """
    value = item.value
    try:
        if decode_label(str(value.get("user"))) != user_id:
            return None
        thread_id = decode_label(str(value.get("thread")))
    except ValueError:
        return None
    pairs: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for entry in value.get("namespaces") or []:
        if not _is_entry(entry):
            continue
        template, namespace = tuple(entry["template"]), tuple(entry["namespace"])
        parse = parse_legacy_namespace if legacy else parse_namespace
        try:
            owner = parse(template, namespace).get("user_id")
        except ValueError:
            continue
        if owner == user_id:
            pairs.append((template, namespace))
    return ThreadRecord(user_id, thread_id, tuple(pairs))


def node_thread_link(
    ctx: NodeContext, templates: Sequence[tuple[str, ...]], by: str
) -> ThreadLink | None:
    """The link of the node run described by ``ctx`` (``None`` without user or thread).

    Example:
        ```python
        from langgraph_recall.nodes import NodeContext, ThreadLink
        from langgraph_recall._memory.registry import node_thread_link

        ctx = NodeContext(store=None, context={"user_id": "u"},
                          config={"configurable": {"thread_id": "t"}})
        assert node_thread_link(ctx, [], "n") == ThreadLink("u", "t", (), "n")
        ```
    """
    return ThreadLink.from_identity(
        context=ctx.context, config=ctx.config, templates=templates, by=by
    )


def with_link(ops: Sequence[Op], link: ThreadLink | None) -> list[Op]:
    """``ops`` plus the link's read (when there is a link), for one ``store.batch``.

    Example:
        ```python
        from langgraph_recall._memory.registry import with_link

        assert with_link([], None) == []
        ```
    """
    return [*ops, link.get_op()] if link is not None else list(ops)


def split_link(
    results: Sequence[Result], link: ThreadLink | None
) -> tuple[list[Result], PutOp | None]:
    """Undo :func:`with_link` on the batch results: ``(the caller's results, the write
    that records the link or None)``.

    Example:
        ```python
        from langgraph_recall._memory.registry import split_link

        assert split_link([None], None) == ([None], None)
        ```
    """
    if link is None:
        return list(results), None
    found = results[-1]
    return list(results[:-1]), link.put_op(found if isinstance(found, Item) else None)


def batch_with_link(
    store: BaseStore, ops: Sequence[Op], link: ThreadLink | None
) -> tuple[list[Result], PutOp | None]:
    """Run ``ops`` plus the link's read in one ``store.batch``; returns the results of
    ``ops`` and the write still needed to record the link (``None``: nothing to write).

    Example:
        ```python
        from langgraph.store.memory import InMemoryStore

        from langgraph_recall.nodes import ThreadLink
        from langgraph_recall._memory.registry import batch_with_link

        results, put = batch_with_link(InMemoryStore(), [], ThreadLink("u", "t"))
        assert results == [] and put is not None
        ```
    """
    if not ops and link is None:
        return [], None
    return split_link(store.batch(with_link(ops, link)), link)


async def abatch_with_link(
    store: BaseStore, ops: Sequence[Op], link: ThreadLink | None
) -> tuple[list[Result], PutOp | None]:
    """Async :func:`batch_with_link`."""
    if not ops and link is None:
        return [], None
    return split_link(await store.abatch(with_link(ops, link)), link)


def register_thread(store: BaseStore, link: ThreadLink | None) -> bool:
    """Record ``link`` in ``store`` unless it is there already; ``True`` when written.

    For callers that have no store round trip of their own to add the read to (e.g. a
    middleware hook); nodes merge the read into their own batch (:func:`with_link`).

    Example:
        ```python
        from langgraph.store.memory import InMemoryStore

        from langgraph_recall.nodes import ThreadLink, register_thread

        assert register_thread(InMemoryStore(), ThreadLink("u", "t")) is True
        ```
    """
    _, put = batch_with_link(store, [], link)
    if put is not None:
        store.batch([put])
    return put is not None


async def aregister_thread(store: BaseStore, link: ThreadLink | None) -> bool:
    """Async :func:`register_thread`."""
    _, put = await abatch_with_link(store, [], link)
    if put is not None:
        await store.abatch([put])
    return put is not None
