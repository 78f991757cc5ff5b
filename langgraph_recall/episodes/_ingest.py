"""Bulk ingestion of an existing conversation history as episodic memories (I/O shell).

:func:`ingest_history` plans the episodes (:func:`~langgraph_recall.episodes.plan_episodes`)
and writes them with the store's batch ``put`` in batches of ``batch_size``: the store
embeds each batch's texts in one embedder call, one embedding per memory indexed on
:data:`~langgraph_recall.episodes.EPISODE_INDEX_FIELDS`. Before writing a batch it reads
the batch's keys: an episode already stored with the same value is not written (nor
embedded) again, so re-ingesting a history costs reads only. With ``user_id`` and
``thread_id`` the thread is recorded for :func:`langgraph_recall.forget_user`, and the
episodes live in the user's namespace, so erasing the user erases them.

Example:
    ```python
    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.episodes import ingest_history

    store = InMemoryStore()
    history = [{"role": "user", "text": "I started learning the cello in May."},
               {"role": "assistant", "text": "How is it going?"}]
    report = ingest_history(store, history, user_id="u1", thread_id="t1")
    assert report.written == 2
    assert store.search(("memories", "user_id:u1"))[0].value["kind"] == "episodic"
    assert ingest_history(store, history, user_id="u1").unchanged == 2  # nothing re-embedded
    ```
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypedDict

from langchain_core.messages import BaseMessage
from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp
from typing_extensions import Unpack

from langgraph_recall._internal.identity import format_namespace
from langgraph_recall._memory.context import store_default_ttl
from langgraph_recall._memory.registry import ThreadLink, split_link, with_link
from langgraph_recall.episodes._plan import (
    EpisodeConfig,
    EpisodeTurn,
    episode_ops,
    plan_episodes,
    to_turns,
)
from langgraph_recall.errors import ConfigurationError
from langgraph_recall.extraction.pii import PIIFilter

__all__ = ["IngestReport", "aingest_history", "ingest_history"]

Progress = Callable[[int, int], None]
History = Iterable[EpisodeTurn | BaseMessage | Mapping[str, Any] | tuple[str, str]]
_DEFAULT_PII = PIIFilter()
DEFAULT_NAMESPACE: tuple[str, ...] = ("memories", "{user_id}")
"""The nodes' default namespace (``langgraph_recall.nodes.DEFAULT_NAMESPACE``): episodes
live beside the user's facts."""


@dataclass
class IngestReport:
    """What one :func:`ingest_history` call did.

    Attributes:
        turns: Turns read. written: Episodes written. unchanged: Episodes already stored
        with the same value (not written, not embedded). skipped: Turns not kept (role,
        too short). duplicates: Turns that repeated an earlier one (one memory).
        pii_dropped / pii_redacted: Turns or values the PII filter dropped / redacted.
        batches: Store batches written. seconds: Wall time.
    """

    namespace: tuple[str, ...]
    turns: int = 0
    written: int = 0
    unchanged: int = 0
    skipped: int = 0
    duplicates: int = 0
    pii_dropped: int = 0
    pii_redacted: int = 0
    batches: int = 0
    seconds: float = 0.0

    @property
    def turns_per_second(self) -> float:
        """Turns ingested per second of wall time."""
        return self.turns / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        data = asdict(self)
        data["namespace"] = list(self.namespace)
        data["turns_per_second"] = self.turns_per_second
        return data


def _progress_bar(stream: Any = None) -> Progress:
    """A one-line text progress bar on stderr."""
    out = stream or sys.stderr

    def show(done: int, total: int) -> None:
        width = 30
        filled = width * done // total if total else width
        out.write(f"\ringesting [{'#' * filled}{'.' * (width - filled)}] {done}/{total} turns")
        if done >= total:
            out.write("\n")
        out.flush()

    return show


class IngestOptions(TypedDict, total=False):
    """The keyword options of :func:`ingest_history` / :func:`aingest_history` (one typed
    list, checked by type checkers; an unknown key is a ``ConfigurationError``)."""

    namespace: tuple[str, ...]
    thread_id: str | None
    identity: Mapping[str, Any] | None
    config: EpisodeConfig | None
    pii: PIIFilter | None
    batch_size: int
    progress: bool | Progress


_OPTIONS = frozenset(IngestOptions.__annotations__)


class _Run:
    """The shared steps of the sync and async ingestion (everything but the awaits)."""

    def __init__(
        self, store: BaseStore, history: History, user_id: str | int, options: IngestOptions
    ) -> None:
        unknown = sorted(set(options) - _OPTIONS)
        if unknown:
            raise ConfigurationError(
                f"ingest_history: unknown option(s) {unknown}; use {sorted(_OPTIONS)}"
            )
        namespace = options.get("namespace", DEFAULT_NAMESPACE)
        thread_id = options.get("thread_id")
        identity = options.get("identity")
        config = options.get("config")
        pii = options.get("pii", _DEFAULT_PII)
        batch_size = options.get("batch_size", 64)
        progress = options.get("progress", False)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigurationError("ingest_history: batch_size must be a positive int")
        if isinstance(user_id, bool) or not isinstance(user_id, (str, int)) or user_id == "":
            raise ConfigurationError("ingest_history: pass the user_id the history belongs to")
        who: dict[str, Any] = {**(identity or {}), "user_id": user_id}
        run_config: dict[str, Any] = {"configurable": {"thread_id": thread_id}} if thread_id else {}
        filled = format_namespace(namespace, context=who, config=run_config)
        self.started = time.perf_counter()
        self.config = config or EpisodeConfig(roles=("user", "assistant"))
        turns = to_turns(history, session=thread_id)
        self.plan = plan_episodes(turns, self.config, pii=pii, source={"by": "ingest_history"})
        self.report = IngestReport(
            filled,
            turns=len(turns),
            skipped=self.plan.skipped,
            duplicates=self.plan.duplicates,
            pii_dropped=self.plan.pii_dropped,
            pii_redacted=self.plan.pii_redacted,
        )
        ttl = self.config.ttl if self.config.ttl is not None else store_default_ttl(store)
        self.ops = episode_ops(filled, self.plan.episodes, ttl)
        self.batch_size = batch_size
        self.link = ThreadLink.from_identity(
            context=who, config=run_config, templates=[namespace], by="ingest_history"
        )
        self.reading: ThreadLink | None = None
        self.written = 0
        self.show: Progress | None = _progress_bar() if progress is True else (progress or None)
        batches = max(1, -(-len(self.ops) // batch_size))
        self.turns_done = [len(turns) * (i + 1) // batches for i in range(batches)]

    def batches(self) -> list[list[PutOp]]:
        size = self.batch_size
        return [self.ops[i : i + size] for i in range(0, len(self.ops), size)] or [[]]

    def reads(self, batch: Sequence[PutOp]) -> list[Op]:
        """The batch's keys to read first (and the thread link, with the first batch)."""
        self.reading, self.link = self.link, None
        gets: list[Op] = [GetOp(op.namespace, op.key, refresh_ttl=False) for op in batch]
        return with_link(gets, self.reading)

    def writes(self, batch: Sequence[PutOp], results: Sequence[Any]) -> list[Op]:
        """The writes of ``batch`` whose value is not stored as is already (+ the link)."""
        found, link_write = split_link(list(results), self.reading)
        self.reading = None
        changed: list[Op] = []
        for op, item in zip(batch, found, strict=True):
            if isinstance(item, Item) and dict(item.value) == op.value:
                self.report.unchanged += 1
            else:
                changed.append(op)
        self.written = len(changed)
        return [*changed, *([link_write] if link_write is not None else [])]

    def done(self, number: int) -> None:
        self.report.written += self.written
        self.report.batches += self.written > 0
        if self.show is not None:
            self.show(self.turns_done[min(number, len(self.turns_done) - 1)], self.report.turns)

    def finish(self) -> IngestReport:
        self.report.seconds = time.perf_counter() - self.started
        return self.report


def ingest_history(
    store: BaseStore,
    history: History,
    *,
    user_id: str | int,
    **options: Unpack[IngestOptions],
) -> IngestReport:
    """Write a conversation history as episodic memories, in batches.

    Args:
        store: Any ``BaseStore`` (``PostgresMemoryStore`` or LangGraph's).
        history: The turns, oldest first: :class:`EpisodeTurn` s, LangChain messages,
            ``("user", "text")`` pairs or dicts (``role``, ``text``, optional ``speaker``,
            ``id``, ``session``, ``time``).
        user_id: Whose history (fills ``{user_id}`` of ``namespace``).
        namespace: Namespace template of the episodes (default ``("memories",
            "{user_id}")``, where the nodes keep the user's facts).
        thread_id: The conversation: recorded for :func:`~langgraph_recall.forget_user`
            (with the namespace), and the session of turns that name none.
        identity: Values of other template fields (e.g. ``{"org": "acme"}``).
        config: :class:`EpisodeConfig` (default: every role's turns become episodes).
        pii: The PII filter (default :class:`PIIFilter`: PII in a turn is replaced by a
            placeholder such as ``[EMAIL]`` and the turn kept; ``PIIFilter(turns="drop")``
            drops such turns; ``None`` disables it).
        batch_size: Episodes per store batch (one embedder call each).
        progress: ``True`` for a progress bar on stderr, or ``callback(done, total)``.

        The options after ``user_id`` are :class:`IngestOptions`.

    Returns:
        An :class:`IngestReport` (written, unchanged, turns per second, ...).

    Raises:
        ConfigurationError: No ``user_id``, a template field without a value, a bad
            ``batch_size`` or an unknown option (nothing written).
        InvalidValueError: A malformed history entry (nothing written).
    """
    run = _Run(store, history, user_id, options)
    for number, batch in enumerate(run.batches()):
        writes = run.writes(batch, store.batch(run.reads(batch)))
        if writes:
            store.batch(writes)
        run.done(number)
    return run.finish()


async def aingest_history(
    store: BaseStore,
    history: History,
    *,
    user_id: str | int,
    **options: Unpack[IngestOptions],
) -> IngestReport:
    """Async :func:`ingest_history`."""
    run = _Run(store, history, user_id, options)
    for number, batch in enumerate(run.batches()):
        writes = run.writes(batch, await store.abatch(run.reads(batch)))
        if writes:
            await store.abatch(writes)
        run.done(number)
    return run.finish()
