"""The ``extract`` node: turn → candidate memories → PII filter → consolidation → store.

Per turn: a cheap pre-filter (no model call for greetings and questions), one extraction
call, dropping of unworthy candidates, the PII filter (nothing with PII is written or
sent to consolidation), one store round trip for the candidates' nearest neighbours
(same-slot memories and text matches), **one** batched consolidation call (skipped when
no neighbours exist), and one batched write. Every model call is counted per turn
(:class:`ExtractionReport`) and in the shared :class:`~langgraph_recall.nodes.MemoryStats`.

With ``background=True`` the work runs off the response path (a worker thread for
``invoke``, an asyncio task for ``ainvoke``, in turn order); call :meth:`ExtractNode.flush`
/ :meth:`ExtractNode.aflush` to wait for pending work. Memory stays bounded in long runs:
a finished job is dropped at once (its report kept among the last ``keep_reports``, its
failure until the next flush re-raises it), and at most ``max_pending`` jobs wait — a turn
that would exceed that waits for the oldest job first (back-pressure).

Example:
    ```python
    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.extraction import RuleBasedExtractor
    from langgraph_recall.nodes import ExtractNode

    store = InMemoryStore()
    node = ExtractNode(store=store, extractor=RuleBasedExtractor())  # offline, English rules
    out = node.invoke({"messages": [("user", "My name is Zhang San.")]},
                      config={"configurable": {"user_id": "u1", "thread_id": "t1"}})
    assert out["memory_report"]["counts"]["added"] == 1
    ```
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.store.base import BaseStore, PutOp, SearchItem

from langgraph_recall._memory.context import (
    DEFAULT_NAMESPACE,
    NodeContext,
    messages_of,
    store_default_ttl,
    utc_now,
)
from langgraph_recall._memory.messages import (
    DEFAULT_MAX_MESSAGE_CHARS,
    bound_message,
    conversation_messages,
    turn_messages,
)
from langgraph_recall._memory.registry import (
    ThreadLink,
    abatch_with_link,
    batch_with_link,
    node_thread_link,
)
from langgraph_recall.episodes._plan import (
    EpisodeConfig,
    EpisodePlan,
    episode_ops,
    plan_episodes,
    to_turns,
)
from langgraph_recall.errors import ConfigurationError
from langgraph_recall.extraction.choice import extractor_for
from langgraph_recall.extraction.consolidation import WritePlan, plan_writes
from langgraph_recall.extraction.dates import parse_iso_datetime
from langgraph_recall.extraction.pii import PIIFilter
from langgraph_recall.extraction.prefilter import looks_memorable, states_something
from langgraph_recall.extraction.rules import message_text
from langgraph_recall.extraction.types import (
    MEMORY_KINDS,
    ConsolidationDecision,
    ExistingMemory,
    MemoryCandidate,
    MemoryExtractor,
)
from langgraph_recall.nodes._base import Clock, MemoryNode, MemoryStats, is_current, search_ops

__all__ = ["ExtractNode", "ExtractionJob", "ExtractionReport"]

logger = logging.getLogger(__name__)
_DEFAULT_PII = PIIFilter()


@dataclass
class ExtractionReport:
    """What one turn's extraction did, including its model calls.

    Example:
        ```python
        from langgraph_recall.nodes.extract import ExtractionReport

        report = ExtractionReport(status="skipped:prefilter")
        assert report.total_llm_calls == 0
        ```
    """

    status: str
    thread_id: str | None = None
    namespace: tuple[str, ...] = ()
    llm_calls: dict[str, int] = field(default_factory=lambda: {"extract": 0, "consolidate": 0})
    candidates: int = 0
    unworthy: int = 0
    pii_dropped: int = 0
    pii_redacted: int = 0
    neighbours: int = 0
    episodes: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    keys: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def total_llm_calls(self) -> int:
        """Model calls this turn made for memory (extraction + consolidation)."""
        return sum(self.llm_calls.values())

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form (the ``memory_report`` state value)."""
        data = dataclasses.asdict(self)
        data["namespace"] = list(self.namespace)
        data["total_llm_calls"] = self.total_llm_calls
        return data


@dataclass(frozen=True)
class ExtractionJob:
    """Everything a (possibly background) extraction needs, resolved on the graph thread."""

    store: BaseStore
    namespace: tuple[str, ...]
    messages: list[BaseMessage]
    now: datetime
    thread_id: str | None
    link: ThreadLink | None = None
    episodes: tuple[PutOp, ...] = ()
    episode_plan: EpisodePlan | None = None


def _turn_time(messages: Sequence[BaseMessage], clock: Clock) -> datetime:
    for message in messages:
        if isinstance(message, HumanMessage):
            for key in ("timestamp", "created_at", "sent_at"):
                moment = parse_iso_datetime(message.additional_kwargs.get(key))
                if moment is not None:
                    return moment if moment.tzinfo else moment.replace(tzinfo=clock().tzinfo)
    return clock()


@contextlib.contextmanager
def _actor(name: str) -> Iterator[None]:
    try:
        from langgraph_recall.store.postgres import acting_as
    except ImportError:
        yield
        return
    with acting_as(name):
        yield


class ExtractNode(MemoryNode):
    """Extract, filter and consolidate memories from the latest turn into the store.

    Args:
        model: A chat model; when given (and ``extractor`` is not), the extractor is an
            :class:`~langgraph_recall.extraction.LLMExtractor` on it (the offline
            :class:`~langgraph_recall.offline.TemplatedResponder`: the rule-based one).
        extractor: Any :class:`~langgraph_recall.extraction.MemoryExtractor`; default
            without a model: :class:`~langgraph_recall.extraction.RuleBasedExtractor`
            (first-person statements in English and Chinese only; a WARNING, once per
            process, says so when it was chosen because nothing was given).
        store: A ``BaseStore``; default: the graph's store.
        namespace: Namespace template (default ``("memories", "{user_id}")``).
        pii: A :class:`~langgraph_recall.extraction.PIIFilter` (default: drop memories
            with PII, redact it in turns kept as ``episodes``); ``None`` disables filtering.
        min_importance: Candidates less important than this are not stored.
        max_content_chars: Longer candidates are not stored.
        max_message_chars: Each message of the turn is cut to this many characters before
            extraction (the beginning is kept), so a huge paste costs a bounded amount of
            extractor time and model context.
        prefilter: ``text -> bool`` run on the user's words before any model call;
            ``None`` always extracts; ``"auto"`` (default): the filter that fits the
            extractor — :func:`~langgraph_recall.extraction.states_something` (any
            language; skips greetings and questions) for a model,
            :func:`~langgraph_recall.extraction.looks_memorable` (English and Chinese
            first-person statements) for the rule-based extractor.
        neighbours: Nearest memories fetched per candidate for consolidation.
        background: Run extraction off the response path (see :meth:`flush`).
        max_pending: Most background jobs waiting at once; a turn beyond it waits for the
            oldest job to finish (bounded memory under any load).
        on_error: ``"raise"`` (default) lets an extraction failure (model or store error)
            fail the turn; ``"report"`` logs it, counts it (``errors``) and returns a report
            with status ``"error: ..."`` so the user still gets the reply.
        index: ``index`` argument of the store writes (``None``: the store's default).
        stats: Shared :class:`MemoryStats` (LLM calls counted as ``extract`` and
            ``consolidate``).
        messages_key / report_key: State keys read / written.
        clock: Turn time when the message carries no ``timestamp``.
        keep_reports: How many recent reports :attr:`reports` (and :meth:`flush`) keep.
        episodes: An :class:`~langgraph_recall.episodes.EpisodeConfig` to also keep each
            user turn as an ``episodic`` memory with its neighbouring turns as indexed
            context (same namespace, PII filter and erasure as the facts; written even
            when the pre-filter skips fact extraction). ``None`` (default): facts only.

    Example:
        ```python
        from langgraph_recall.extraction.rules import RuleBasedExtractor
        from langgraph_recall.nodes.extract import ExtractNode

        node = ExtractNode(min_importance=6)
        assert isinstance(node.extractor, RuleBasedExtractor)
        ```
    """

    node_name = "extract_memories"

    def __init__(
        self,
        *,
        model: BaseChatModel | None = None,
        extractor: MemoryExtractor | None = None,
        store: BaseStore | None = None,
        namespace: tuple[str, ...] = DEFAULT_NAMESPACE,
        pii: PIIFilter | None = _DEFAULT_PII,
        min_importance: int = 3,
        max_content_chars: int = 500,
        max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS,
        prefilter: Callable[[str], bool] | Literal["auto"] | None = "auto",
        neighbours: int = 5,
        background: bool = False,
        max_pending: int = 1000,
        on_error: Literal["raise", "report"] = "raise",
        index: Literal[False] | list[str] | None = None,
        stats: MemoryStats | None = None,
        messages_key: str = "messages",
        report_key: str = "memory_report",
        clock: Clock = utc_now,
        keep_reports: int = 100,
        episodes: EpisodeConfig | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(store=store, name=name)
        if episodes is not None and not isinstance(episodes, EpisodeConfig):
            raise ConfigurationError("ExtractNode: episodes must be an EpisodeConfig or None")
        self.episodes = episodes
        if extractor is None:
            extractor = extractor_for(model, who=type(self).__name__)
        if not isinstance(extractor, MemoryExtractor):
            raise ConfigurationError(
                "extractor must provide uses_llm, extract/aextract and consolidate/aconsolidate"
            )
        if neighbours < 1:
            raise ConfigurationError("ExtractNode: neighbours must be >= 1")
        if max_pending < 1 or keep_reports < 1:
            raise ConfigurationError("ExtractNode: max_pending and keep_reports must be >= 1")
        if max_message_chars < 100:
            raise ConfigurationError("ExtractNode: max_message_chars must be >= 100")
        self.extractor = extractor
        self.namespace = namespace
        self.pii = pii
        self.min_importance = min_importance
        self.max_content_chars = max_content_chars
        self.max_message_chars = max_message_chars
        self.prefilter = prefilter
        self.neighbours = neighbours
        self.background = background
        if on_error not in ("raise", "report"):
            raise ConfigurationError("ExtractNode: on_error must be 'raise' or 'report'")
        self.on_error = on_error
        self.index = index
        self.stats = stats or MemoryStats()
        self.messages_key = messages_key
        self.report_key = report_key
        self.clock = clock
        self.reports: deque[ExtractionReport] = deque(maxlen=keep_reports)
        self.max_pending = max_pending
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(max_pending)
        self._futures: dict[Future[ExtractionReport], None] = {}  # unfinished only
        self._tasks: dict[asyncio.Task[ExtractionReport], None] = {}  # unfinished only
        self._last_task: asyncio.Task[ExtractionReport] | None = None
        self._finished: deque[ExtractionReport] = deque(maxlen=keep_reports)
        self._error: BaseException | None = None  # the first failure since the last flush

    # -- pure steps -------------------------------------------------------------------
    def _passes_prefilter(self, text: str) -> bool:
        """``prefilter="auto"``: the filter that fits the extractor in use (it may be set
        after construction, e.g. by ``MemoryMiddleware`` from the agent's model)."""
        if self.prefilter is None:
            return True
        if self.prefilter == "auto":
            return (states_something if self.extractor.uses_llm else looks_memorable)(text)
        return self.prefilter(text)

    def _store(self, ctx: NodeContext) -> BaseStore:
        """This node's ``store=`` if given, else the store of the running graph / caller
        (the rule of every node; ``process`` from ``summarize`` passes its own context)."""
        return self.store if self.store is not None else ctx.require_store(self.label)

    def _job(
        self,
        messages: Sequence[BaseMessage],
        ctx: NodeContext,
        earlier: Sequence[BaseMessage] | None = None,
    ) -> ExtractionJob:
        """``earlier=None``: no episodes (``process`` on a summary's overflow: those turns
        became episodes when they were said)."""
        store = self._store(ctx)
        namespace = ctx.namespace(self.namespace)
        now = _turn_time(messages, self.clock)
        thread_id = ctx.identity("thread_id")
        episodes: tuple[PutOp, ...] = ()
        plan: EpisodePlan | None = None
        if earlier is not None:
            episodes, plan = self._episodes(store, namespace, messages, earlier, now, thread_id)
        return ExtractionJob(
            store=store,
            namespace=namespace,
            messages=[bound_message(m, self.max_message_chars) for m in messages],
            now=now,
            thread_id=thread_id,
            link=node_thread_link(ctx, [self.namespace], self.label),
            episodes=episodes,
            episode_plan=plan,
        )

    def _episodes(
        self,
        store: BaseStore,
        namespace: tuple[str, ...],
        turn: Sequence[BaseMessage],
        earlier: Sequence[BaseMessage],
        now: datetime,
        thread_id: str | None,
    ) -> tuple[tuple[PutOp, ...], EpisodePlan | None]:
        """The episode writes of this turn: its user messages, the turns around as context."""
        config = self.episodes
        if config is None:
            return (), None
        window = 2 * config.context_before + 2  # messages enough for the context turns
        before = to_turns([bound_message(m, self.max_message_chars) for m in earlier[-window:]])
        current = to_turns([bound_message(m, self.max_message_chars) for m in turn])
        source: dict[str, Any] = {"by": self.label}
        if thread_id:
            source["thread_id"] = thread_id
        plan = plan_episodes(
            [*before, *current],
            config,
            pii=self.pii,
            source=source,
            only=range(len(before), len(before) + len(current)),
            now=now,
        )
        ttl = config.ttl if config.ttl is not None else store_default_ttl(store)
        return tuple(episode_ops(namespace, plan.episodes, ttl)), plan

    def _gate(self, job: ExtractionJob) -> ExtractionReport | None:
        """A finished report if the turn needs no extraction, else ``None``."""
        report = ExtractionReport("", thread_id=job.thread_id, namespace=job.namespace)
        humans = [m for m in job.messages if isinstance(m, HumanMessage)]
        if not humans:
            report.status = "skipped:no-user-message"
            return report
        text = "\n".join(message_text(m) for m in humans)
        if not self._passes_prefilter(text):
            report.status = "skipped:prefilter"
            return report
        return None

    def _filter(
        self, candidates: Sequence[MemoryCandidate], report: ExtractionReport
    ) -> list[MemoryCandidate]:
        kept: list[MemoryCandidate] = []
        report.candidates = len(candidates)
        for candidate in candidates:
            content = " ".join(candidate.content.split())
            if (
                candidate.importance < self.min_importance
                or not content
                or len(content) > self.max_content_chars
            ):
                report.unworthy += 1
                continue
            kind = candidate.kind if candidate.kind in MEMORY_KINDS else "semantic"
            importance = max(1, min(10, int(candidate.importance)))
            screened: MemoryCandidate | None = dataclasses.replace(
                candidate, content=content, kind=kind, importance=importance
            )
            if self.pii is not None:  # every text field: content, subject, slot, ...
                screened, screening = self.pii.screen_candidate(screened)
                report.pii_dropped += screening.dropped
                report.pii_redacted += screening.redacted
            if screened is not None:
                kept.append(screened)
        return kept

    def _neighbour_queries(
        self, candidates: Sequence[MemoryCandidate]
    ) -> list[tuple[str | None, dict[str, Any] | None, int]]:
        queries: list[tuple[str | None, dict[str, Any] | None, int]] = []
        for candidate in candidates:
            queries.append((candidate.content, None, self.neighbours))
            if candidate.slot:
                queries.append((None, {"slot": candidate.slot}, self.neighbours))
        return queries

    @staticmethod
    def _existing(
        results: Sequence[Any], namespace: tuple[str, ...], now: datetime
    ) -> list[ExistingMemory]:
        seen: dict[str, ExistingMemory] = {}
        for batch in results:
            for item in batch or []:
                if not isinstance(item, SearchItem) or item.namespace != namespace:
                    continue
                if item.key in seen or not is_current(item.value, now):
                    continue
                if item.value.get("kind") == "episodic":
                    continue  # a record of what was said: no fact updates, closes or merges it
                seen[item.key] = ExistingMemory(item.key, dict(item.value), namespace, item.score)
        return list(seen.values())

    def _plan(
        self,
        job: ExtractionJob,
        candidates: Sequence[MemoryCandidate],
        existing: Sequence[ExistingMemory],
        decisions: Sequence[ConsolidationDecision],
        report: ExtractionReport,
    ) -> list[PutOp]:
        if self.pii is not None:  # merged UPDATE text comes from the model: filter it too
            decisions = [self._clean_decision(d, report) for d in decisions]
        source: dict[str, Any] = {"by": self.label}
        if job.thread_id:
            source["thread_id"] = job.thread_id
        said = [m.id for m in job.messages if isinstance(m, HumanMessage) and m.id]
        if said:  # provenance: the messages the memories were read from
            source["message_ids"] = said
        plan: WritePlan = plan_writes(candidates, existing, decisions, now=job.now, source=source)
        if self.pii is not None:  # the gate every written value passes, whatever its field
            screened = self.pii.screen_plan(plan)
            plan = screened.plan
            report.pii_dropped += screened.dropped
            report.pii_redacted += screened.redacted
        report.counts = dict(plan.counts)
        report.notes = list(plan.notes)
        report.keys = [write.key for write in plan.writes]
        report.status = "written" if plan.writes else "nothing-to-write"
        ttl = store_default_ttl(job.store)  # what store.put without ttl= would apply
        return [
            PutOp(job.namespace, w.key, w.value, index=self.index, ttl=ttl) for w in plan.writes
        ]

    def _clean_decision(
        self, decision: ConsolidationDecision, report: ExtractionReport
    ) -> ConsolidationDecision:
        if self.pii is None or not decision.content:
            return decision
        cleaned = self.pii.clean(decision.content)
        if cleaned == decision.content:
            return decision
        report.pii_dropped += cleaned is None
        report.pii_redacted += cleaned is not None
        return dataclasses.replace(decision, content=cleaned)  # None → the candidate's text

    def _count_call(self, report: ExtractionReport, purpose: str) -> None:
        if self.extractor.uses_llm:
            report.llm_calls[purpose] += 1
            self.stats.record_llm_call(purpose)

    def _with_episodes(self, job: ExtractionJob, report: ExtractionReport) -> list[PutOp]:
        """The job's episode writes, counted in ``report`` (their PII counts included)."""
        plan = job.episode_plan
        if plan is not None:
            report.episodes = len(job.episodes)
            report.pii_dropped += plan.pii_dropped
            report.pii_redacted += plan.pii_redacted
        return list(job.episodes)

    def _record(self, report: ExtractionReport) -> ExtractionReport:
        self.reports.append(report)
        self.stats.add(
            turns=1,
            turns_without_extraction_call=int(report.llm_calls["extract"] == 0),
            candidates=report.candidates,
            pii_dropped=report.pii_dropped,
            pii_redacted=report.pii_redacted,
            **({"episodes": report.episodes} if report.episodes else {}),
            **{name: count for name, count in report.counts.items()},
        )
        return report

    @property
    def last_report(self) -> ExtractionReport | None:
        """The most recent turn's report (``None`` before the first turn)."""
        return self.reports[-1] if self.reports else None

    # -- I/O: sync and async differ only by await ------------------------------------
    def _failed(self, job: ExtractionJob, exc: Exception) -> ExtractionReport:
        if self.on_error == "raise":
            raise exc
        logger.warning("memory extraction failed for %s: %r", job.namespace, exc)
        self.stats.add(errors=1)
        report = ExtractionReport(f"error: {type(exc).__name__}: {exc}", job.thread_id)
        report.namespace = job.namespace
        self.reports.append(report)
        return report

    def execute(self, job: ExtractionJob) -> ExtractionReport:
        """Run the whole pipeline for one job (``on_error`` decides about failures)."""
        try:
            return self._execute(job)
        except Exception as exc:
            return self._failed(job, exc)

    async def aexecute(self, job: ExtractionJob) -> ExtractionReport:
        """Async :meth:`execute`."""
        try:
            return await self._aexecute(job)
        except Exception as exc:
            return self._failed(job, exc)

    def _early(self, job: ExtractionJob, report: ExtractionReport) -> list[PutOp]:
        """Writes of a turn that ends before consolidation: its episodes (and the link,
        which the caller adds after reading it)."""
        return self._with_episodes(job, report)

    def _execute(self, job: ExtractionJob) -> ExtractionReport:
        report = self._gate(job)
        if report is None:
            report = ExtractionReport("", thread_id=job.thread_id, namespace=job.namespace)
            raw = self.extractor.extract(job.messages, now=job.now)
            self._count_call(report, "extract")
            candidates = self._filter(raw, report)
            if candidates:
                return self._consolidate(job, candidates, report)
            report.status = "no-candidates"
        writes = self._early(job, report)
        _, link_write = batch_with_link(job.store, [], job.link)
        writes += [link_write] if link_write is not None else []
        if writes:
            with _actor(self.label):
                job.store.batch(writes)
        return self._record(report)

    def _consolidate(
        self, job: ExtractionJob, candidates: list[MemoryCandidate], report: ExtractionReport
    ) -> ExtractionReport:
        queries = search_ops(job.namespace, self._neighbour_queries(candidates))
        results, link_write = batch_with_link(job.store, queries, job.link)
        existing = self._existing(results, job.namespace, job.now)
        report.neighbours = len(existing)
        decisions: list[ConsolidationDecision] = []
        if existing:
            decisions = self.extractor.consolidate(candidates, existing)
            self._count_call(report, "consolidate")
        ops: list[PutOp] = self._plan(job, candidates, existing, decisions, report)
        ops += self._with_episodes(job, report)
        ops += [link_write] if link_write is not None else []
        if ops:
            with _actor(self.label):
                job.store.batch(ops)
        return self._record(report)

    async def _aexecute(self, job: ExtractionJob) -> ExtractionReport:
        report = self._gate(job)
        if report is None:
            report = ExtractionReport("", thread_id=job.thread_id, namespace=job.namespace)
            raw = await self.extractor.aextract(job.messages, now=job.now)
            self._count_call(report, "extract")
            candidates = self._filter(raw, report)
            if candidates:
                return await self._aconsolidate(job, candidates, report)
            report.status = "no-candidates"
        writes = self._early(job, report)
        _, link_write = await abatch_with_link(job.store, [], job.link)
        writes += [link_write] if link_write is not None else []
        if writes:
            with _actor(self.label):
                await job.store.abatch(writes)
        return self._record(report)

    async def _aconsolidate(
        self, job: ExtractionJob, candidates: list[MemoryCandidate], report: ExtractionReport
    ) -> ExtractionReport:
        queries = search_ops(job.namespace, self._neighbour_queries(candidates))
        results, link_write = await abatch_with_link(job.store, queries, job.link)
        existing = self._existing(results, job.namespace, job.now)
        report.neighbours = len(existing)
        decisions: list[ConsolidationDecision] = []
        if existing:
            decisions = await self.extractor.aconsolidate(candidates, existing)
            self._count_call(report, "consolidate")
        ops: list[PutOp] = self._plan(job, candidates, existing, decisions, report)
        ops += self._with_episodes(job, report)
        ops += [link_write] if link_write is not None else []
        if ops:
            with _actor(self.label):
                await job.store.abatch(ops)
        return self._record(report)

    def process(self, messages: Sequence[BaseMessage], ctx: NodeContext) -> ExtractionReport:
        """Extract from arbitrary messages now (used by ``summarize`` on its overflow)."""
        return self.execute(self._job(messages, ctx))

    async def aprocess(self, messages: Sequence[BaseMessage], ctx: NodeContext) -> ExtractionReport:
        """Async :meth:`process`."""
        return await self.aexecute(self._job(messages, ctx))

    def _turn_job(self, state: Any, ctx: NodeContext) -> ExtractionJob:
        messages = messages_of(state, self.messages_key)
        turn = turn_messages(messages)
        earlier: list[BaseMessage] = []
        if self.episodes is not None:
            convo = conversation_messages(messages)
            earlier = convo[: len(convo) - len(turn)] if turn else []
        return self._job(turn, ctx, earlier)

    def _run(self, state: Any, ctx: NodeContext) -> dict[str, Any]:
        job = self._turn_job(state, ctx)
        if self.background:
            self._submit(job)
            return {self.report_key: {"status": "pending", "thread_id": job.thread_id}}
        return {self.report_key: self.execute(job).as_dict()}

    async def _arun(self, state: Any, ctx: NodeContext) -> dict[str, Any]:
        job = self._turn_job(state, ctx)
        if self.background:
            await self._asubmit(job)
            return {self.report_key: {"status": "pending", "thread_id": job.thread_id}}
        return {self.report_key: (await self.aexecute(job)).as_dict()}

    # -- background work: only unfinished jobs are held ---------------------------------
    def _settle(self, outcome: Future[ExtractionReport] | asyncio.Task[ExtractionReport]) -> None:
        """Done-callback of a background job: drop it, keep its report or first failure
        (a thread's job kept them itself, before its future completed: :meth:`_recorded`)."""
        with self._lock:
            if isinstance(outcome, asyncio.Task):
                self._tasks.pop(outcome, None)
            else:
                self._futures.pop(outcome, None)
                self._slots.release()
                if not outcome.cancelled():
                    return
            if outcome.cancelled():
                error: BaseException | None = RuntimeError(
                    "a background extraction job was cancelled before it finished "
                    "(its event loop ended?); flush before the loop closes"
                )
            else:
                error = outcome.exception()
            if error is None:
                self._finished.append(outcome.result())
            elif self._error is None:
                self._error = error

    def _recorded(self, job: ExtractionJob) -> ExtractionReport:
        """Run a thread's job and keep its report or failure before its future completes:
        a done-callback runs after the future's waiters wake, so :meth:`flush` could return
        before a callback kept what the job it waited for produced."""
        try:
            report = self.execute(job)
        except BaseException as exc:
            with self._lock:
                if self._error is None:
                    self._error = exc
            raise
        with self._lock:
            self._finished.append(report)
        return report

    def _submit(self, job: ExtractionJob) -> None:
        self._slots.acquire()  # back-pressure: at most max_pending jobs wait
        try:
            with self._lock:
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(1, thread_name_prefix="memory-extract")
                future = self._executor.submit(self._recorded, job)
                self._futures[future] = None
        except BaseException:
            self._slots.release()
            raise
        future.add_done_callback(self._settle)

    async def _asubmit(self, job: ExtractionJob) -> None:
        loop = asyncio.get_running_loop()
        while True:
            waiting = [t for t in self._tasks if t.get_loop() is loop]
            if len(waiting) < self.max_pending:
                break
            await asyncio.wait(waiting[:1])  # back-pressure: the oldest job first
        previous = self._last_task
        if previous is not None and (previous.done() or previous.get_loop() is not loop):
            previous = None
        task = asyncio.create_task(self._after(previous, job))
        self._last_task = task
        with self._lock:
            self._tasks[task] = None
        task.add_done_callback(self._settle)

    async def _after(
        self, previous: asyncio.Task[ExtractionReport] | None, job: ExtractionJob
    ) -> ExtractionReport:
        if previous is not None:
            with contextlib.suppress(BaseException):
                await asyncio.shield(previous)
        return await self.aexecute(job)

    def _collect(self) -> list[ExtractionReport]:
        """Reports finished since the last flush; re-raise the first failure among them."""
        with self._lock:
            reports, error = list(self._finished), self._error
            self._finished.clear()
            self._error = None
        if error is not None:
            raise error
        return reports

    # -- background control ------------------------------------------------------------
    @property
    def pending(self) -> int:
        """Background jobs not finished yet."""
        with self._lock:
            return len(self._futures) + len(self._tasks)

    def flush(self, timeout: float | None = None) -> list[ExtractionReport]:
        """Wait for background work started by ``invoke``; re-raise the first failure.

        Returns:
            The reports of the background jobs finished since the previous flush (the
            last ``keep_reports`` of them), oldest first.

        Raises:
            TimeoutError: Jobs were still running after ``timeout`` seconds (they go on;
                flush again later).
        """
        with self._lock:
            futures = list(self._futures)
        _, running = wait(futures, timeout=timeout)
        if running:
            raise TimeoutError(
                f"{len(running)} background extraction jobs still running after {timeout}s"
            )
        return self._collect()

    async def aflush(self) -> list[ExtractionReport]:
        """Await background work started by ``ainvoke`` (and by ``invoke``)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            tasks = [t for t in self._tasks if t.get_loop() is loop]
            futures = list(self._futures)
        if tasks:
            await asyncio.wait(tasks)
        if futures:
            await asyncio.wait([asyncio.wrap_future(future) for future in futures])
        return self._collect()

    def close(self) -> None:
        """Wait for pending work and stop the worker thread."""
        self.flush()
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
