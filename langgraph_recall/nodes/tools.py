"""Memory tools for agents that manage memory themselves: ``remember``, ``recall``, ``forget``.

The tools read the store and ``user_id`` from LangGraph's tool runtime (the graph's store
and ``context=`` / ``configurable``), apply the same PII filter and slot-based
supersession as the ``extract`` node, and never hard-delete: ``forget`` closes the
memory's validity interval (history is kept; use the store's ``forget()`` for erasure).
Each tool has a sync and an async implementation (used by ``invoke`` / ``ainvoke``).

A bad argument is the model's to correct, so it is answered, never raised: before anything
touches the store, one check at the tools' door (sync and async alike, ``tool.invoke`` schema
failures included) replies "Not stored: …" (``remember``), "Not searched: …" (``recall``) or
"Not forgotten: …" (``forget``), naming the argument and what it must be: text that is not
empty (``content`` at most 500 characters, ``slot`` at most 64), a ``kind`` from
:data:`~langgraph_recall.extraction.types.MEMORY_KINDS`, an ``importance`` that is a whole
number from 1 to 10, a ``limit`` from 1 to 100 (refused beyond, never clamped), a
``memory_id`` that is a store key. A long ``query`` is cut, as ``RetrieveNode`` cuts its own.

Example:
    ```python
    from langgraph_recall.nodes.tools import create_memory_tools

    remember, recall, forget = create_memory_tools()
    assert [t.name for t in (remember, recall, forget)] == ["remember", "recall", "forget"]
    ```
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, Protocol, cast

from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt import ToolRuntime
from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, SearchItem, SearchOp

from langgraph_recall._internal.identity import format_namespace
from langgraph_recall._memory.context import DEFAULT_NAMESPACE, store_default_ttl, utc_now
from langgraph_recall._memory.messages import DEFAULT_MAX_QUERY_CHARS, bound_text, memory_line
from langgraph_recall._memory.registry import ThreadLink, split_link, with_link
from langgraph_recall.errors import ConfigurationError, InvalidValueError
from langgraph_recall.extraction.consolidation import plan_writes, rule_decisions
from langgraph_recall.extraction.pii import PIIFilter
from langgraph_recall.extraction.types import MEMORY_KINDS, ExistingMemory, MemoryCandidate
from langgraph_recall.nodes._base import is_current, search_ops
from langgraph_recall.prompts.encoding import encode_inline
from langgraph_recall.store._bounds import check_text, shown
from langgraph_recall.store._capabilities import store_supports
from langgraph_recall.store._values import validate_key

__all__ = ["create_memory_tools"]

_REMEMBER_DOC = """Store a fact about the user for future conversations.

Args:
    content: One third-person sentence, e.g. "User lives in Beijing." (at most 500
        characters).
    kind: semantic, episodic, procedural, preference or reflection.
    importance: A whole number, 1 (trivia) to 10 (critical).
    slot: The attribute the fact fills ("location", "employer", ...); a newer fact with
        the same slot replaces the older one.
"""
_RECALL_DOC = """Search the user's long-term memories; returns one line per memory with its id.

Args:
    query: What to look for.
    limit: Maximum number of memories, a whole number from 1 to 100.
"""
_FORGET_DOC = """Mark a memory as no longer true (by the id `recall` shows). History is kept.

Args:
    memory_id: The id before the colon in a `recall` line.
"""
_DOCS = {"remember": _REMEMBER_DOC, "recall": _RECALL_DOC, "forget": _FORGET_DOC}


# -- pure core ------------------------------------------------------------------------------
MAX_CONTENT_CHARS = 500
"""Longest memory ``remember`` stores (as ``ExtractNode(max_content_chars=500)``)."""
MAX_SLOT_CHARS = 64
MAX_RECALL_LIMIT = 100
"""Most memories one ``recall`` lists; a larger ``limit`` is refused, not clamped."""

_REFUSED = {"remember": "Not stored", "recall": "Not searched", "forget": "Not forgotten"}
"""How each tool's refusal opens."""


class _Missing:
    """A required argument the call left out (only pydantic reports one)."""

    def __repr__(self) -> str:
        return "nothing"


MISSING: Any = _Missing()


def _kind_of(value: object) -> str:
    """What a value of the wrong type is, for a refusal (never its repr: it may be huge)."""
    if value is MISSING or value is None:
        return "nothing" if value is MISSING else "None"
    return type(value).__name__


def _text_problem(value: object, name: str, most: int | None = None) -> str | None:
    """What is wrong with a text argument (``most``: its longest stripped length), or None."""
    if not isinstance(value, str):
        return f"{name} must be text, got {_kind_of(value)}"
    if not value.strip():
        return f"{name} is empty; write what you mean"
    if most is not None and len(value.strip()) > most:
        return f"{name} is {len(value.strip())} characters long; write at most {most}"
    try:
        check_text(value, name)
    except InvalidValueError as exc:
        return str(exc)
    return None


def _whole_number_problem(value: object, name: str, low: int, high: int) -> str | None:
    """A refusal unless ``value`` is a whole number from ``low`` to ``high`` (pure).

    Models send NaN, infinities, ``1e300``, ``10**5000``, booleans and strings; none of
    them may reach ``int()`` (which raises on NaN / infinity) or be clamped silently.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        got = _kind_of(value)
    elif isinstance(value, float) and not math.isfinite(value):
        got = repr(value)
    elif low <= value <= high and float(value).is_integer():
        return None
    elif isinstance(value, int) and not -(10**9) < value < 10**9:
        got = f"a number far outside {low}..{high}"  # no repr: 10**5000 cannot be printed
    else:
        got = repr(value)
    return f"{name} must be a whole number from {low} to {high}, got {got}"


def _kind_problem(value: object) -> str | None:
    if isinstance(value, str) and value in MEMORY_KINDS:
        return None
    got = shown(value) if isinstance(value, str) else _kind_of(value)
    return f"kind must be one of {', '.join(MEMORY_KINDS)}; got {got}"


def _slot_problem(value: object) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None  # no slot
    return _text_problem(value, "slot", MAX_SLOT_CHARS)


def _memory_id_problem(value: object) -> str | None:
    if not isinstance(value, str):
        return f"memory_id must be the id a `recall` line shows, got {_kind_of(value)}"
    try:
        validate_key(value)
    except InvalidValueError as exc:
        return f"memory_id: {exc}"
    return None


_CHECKS: dict[str, Callable[[object], str | None]] = {
    "content": lambda value: _text_problem(value, "content", MAX_CONTENT_CHARS),
    "kind": _kind_problem,
    "importance": lambda value: _whole_number_problem(value, "importance", 1, 10),
    "slot": _slot_problem,
    "query": lambda value: _text_problem(value, "query"),  # a long query is cut, not refused
    "limit": lambda value: _whole_number_problem(value, "limit", 1, MAX_RECALL_LIMIT),
    "memory_id": _memory_id_problem,
}
"""One check per argument name, shared by the three tools."""


def _refusal(tool: str, arguments: Mapping[str, object]) -> str | None:
    """The tools' door: a reply the model can act on for the first bad argument, else None.

    Every tool call passes here before anything touches the store, on the sync and the
    async path alike, however it was called (a graph's ``ToolNode``, ``tool.invoke`` — whose
    schema failures come here too — or ``tool.func`` directly). Never raises (pure).

    Example:
        ```python
        from langgraph_recall.nodes.tools import _refusal

        assert _refusal("recall", {"query": "tea", "limit": 5}) is None
        assert _refusal("recall", {"query": None, "limit": 5}).startswith("Not searched:")
        assert _refusal("remember", {"content": "x", "kind": "../x"}).startswith("Not stored:")
        ```
    """
    for name, value in arguments.items():
        check = _CHECKS.get(name)
        if check is not None and (problem := check(value)) is not None:
            return f"{_REFUSED[tool]}: {problem}."
    return None


def _schema_refusal(tool: str, error: Any) -> str:
    """The door's reply for what the tool's schema rejected (``tool.invoke`` with a wrong
    type, a missing argument): the same check, on the values the schema refused."""
    rejected: dict[str, object] = {}
    for problem in error.errors():
        name = str(problem["loc"][0]) if problem.get("loc") else "arguments"
        rejected[name] = MISSING if problem.get("type") == "missing" else problem.get("input")
    if found := _refusal(tool, rejected):
        return found
    expected = "; ".join(f"{name}: {_plain(problem)}" for name, problem in _problems(error))
    return f"{_REFUSED[tool]}: {expected}."


def _problems(error: Any) -> list[tuple[str, str]]:
    return [
        (str(p["loc"][0]) if p.get("loc") else "arguments", str(p.get("msg", "not valid")))
        for p in error.errors()
    ]


def _plain(message: str) -> str:
    """pydantic's wording of what a value must be, without its trailing detail."""
    return message.split(" [", 1)[0].lower()


def _candidate(content: str, kind: str, importance: int, slot: str | None) -> MemoryCandidate:
    """The memory ``remember`` makes of arguments the door let in."""
    return MemoryCandidate(
        content=content.strip(),
        kind=kind,
        importance=int(importance),
        slot=(slot or "").strip().lower() or None,
    )


def _neighbour_ops(ns: tuple[str, ...], candidate: MemoryCandidate) -> list[Any]:
    queries: list[tuple[str | None, dict[str, Any] | None, int]] = [(candidate.content, None, 5)]
    if candidate.slot:
        queries.append((None, {"slot": candidate.slot}, 5))
    return search_ops(ns, queries)


def _remember_writes(
    ns: tuple[str, ...],
    candidate: MemoryCandidate,
    results: Sequence[Any],
    now: datetime,
    pii: PIIFilter,
    ttl: float | None = None,
) -> tuple[list[PutOp], str]:
    existing: dict[str, ExistingMemory] = {}
    for batch in results:
        for item in batch or []:
            if isinstance(item, SearchItem) and is_current(item.value, now):
                existing[item.key] = ExistingMemory(item.key, dict(item.value), ns, item.score)
    memories = list(existing.values())
    plan = plan_writes(
        [candidate],
        memories,
        rule_decisions([candidate], memories),
        now=now,
        source={"by": "remember-tool"},
    )
    plan = pii.screen_plan(plan).plan  # the gate every written value passes
    summary = ", ".join(f"{name} {count}" for name, count in plan.counts.items() if count)
    return [PutOp(ns, w.key, w.value, ttl=ttl) for w in plan.writes], f"Remembered ({summary})."


def _recall_text(items: Any, limit: int) -> str:
    now = utc_now()
    hits = [item for item in items or [] if isinstance(item, SearchItem)]
    current = [item for item in hits if is_current(item.value, now)][:limit]
    if not current:
        return "No memories found."
    return "\n".join(
        f"{encode_inline(item.key)}: {memory_line(item.value)[2:]}" for item in current
    )


def _closed(item: Item) -> dict[str, Any]:
    value = dict(item.value)
    value["invalid_at"] = utc_now().isoformat()
    return value


@dataclass(frozen=True)
class _Invalidate:
    """A step's request: close the validity of ``key`` in ``namespace`` (a store that declares
    the ``invalidate`` capability)."""

    namespace: tuple[str, ...]
    key: str

    @property
    def at(self) -> tuple[tuple[str, ...], str]:
        return self.namespace, self.key


class _Invalidating(Protocol):
    def invalidate(self, namespace: tuple[str, ...], key: str) -> Any: ...

    async def ainvalidate(self, namespace: tuple[str, ...], key: str) -> Any: ...


_Steps = Generator["list[Op] | _Invalidate", Any, str]
"""A tool's steps: each yield is a batch of ops (answered with its results) or an
invalidation; the return value is the tool's reply."""


def _run(target: BaseStore, steps: _Steps) -> str:
    """Drive a tool's steps on the sync API."""
    try:
        request = next(steps)
        while True:
            if isinstance(request, _Invalidate):
                answer: Any = cast(_Invalidating, target).invalidate(*request.at)
            else:
                answer = target.batch(request)
            request = steps.send(answer)
    except StopIteration as done:
        return cast(str, done.value)


async def _arun(target: BaseStore, steps: _Steps) -> str:
    """Drive a tool's steps on the async API."""
    try:
        request = next(steps)
        while True:
            answer: Any
            if isinstance(request, _Invalidate):
                answer = await cast(_Invalidating, target).ainvalidate(*request.at)
            else:
                answer = await target.abatch(request)
            request = steps.send(answer)
    except StopIteration as done:
        return cast(str, done.value)


def create_memory_tools(
    *,
    store: BaseStore | None = None,
    namespace: tuple[str, ...] = DEFAULT_NAMESPACE,
    pii: PIIFilter | None = None,
) -> list[BaseTool]:
    """Build the ``remember`` / ``recall`` / ``forget`` tools.

    Args:
        store: A ``BaseStore``; default: the graph's store.
        namespace: Namespace template, filled from the runtime context / configurable.
        pii: PII filter for every argument ``remember`` stores (content, slot, kind);
            default: refuse text with PII.

    Example:
        ```python
        from langgraph_recall.nodes.tools import create_memory_tools

        tools = create_memory_tools(namespace=("memories", "{user_id}"))
        assert tools[1].name == "recall"
        ```
    """
    pii_filter = pii or PIIFilter()

    def resolve(runtime: ToolRuntime) -> tuple[BaseStore, tuple[str, ...]]:
        chosen = store or runtime.store
        if chosen is None:
            raise ConfigurationError(
                "memory tools: no store; pass store=... or compile the graph with store=..."
            )
        return chosen, format_namespace(namespace, context=runtime.context, config=runtime.config)

    def link(runtime: ToolRuntime) -> ThreadLink | None:
        return ThreadLink.from_identity(
            context=runtime.context, config=runtime.config, templates=[namespace], by="memory-tools"
        )

    def recall_op(ns: tuple[str, ...], target: BaseStore, query: str, limit: int) -> SearchOp:
        fetch = limit if store_supports(target, "as_of") else limit * 3
        return SearchOp(ns, query=bound_text(query, DEFAULT_MAX_QUERY_CHARS), limit=fetch)

    def screened(
        content: str, kind: str, importance: int, slot: str | None
    ) -> MemoryCandidate | str:
        """The candidate every argument of ``remember`` makes, screened; or the refusal."""
        candidate, screening = pii_filter.screen_candidate(
            _candidate(content, kind, importance, slot)
        )
        if candidate is None:
            found = ", ".join(screening.categories)
            return f"Not stored: the text contains personal data ({found})."
        return candidate

    # Each tool is written once, as steps that yield what the store must do (a batch of ops, or
    # an invalidation) and get its answer back; _run / _arun drive them on either API.
    def remember_steps(
        runtime: ToolRuntime, content: str, kind: str, importance: int, slot: str | None
    ) -> _Steps:
        arguments = {"content": content, "kind": kind, "importance": importance, "slot": slot}
        if (refused := _refusal("remember", arguments)) is not None:
            return refused
        target, ns = resolve(runtime)
        candidate = screened(content, kind, importance, slot)
        if isinstance(candidate, str):
            return candidate
        now = utc_now()
        thread = link(runtime)
        found, link_write = split_link(
            (yield with_link(_neighbour_ops(ns, candidate), thread)), thread
        )
        writes, reply = _remember_writes(
            ns, candidate, found, now, pii_filter, store_default_ttl(target)
        )
        yield [*writes, *([link_write] if link_write else [])]
        return reply

    def recall_steps(runtime: ToolRuntime, query: str, limit: int) -> _Steps:
        if (refused := _refusal("recall", {"query": query, "limit": limit})) is not None:
            return refused
        target, ns = resolve(runtime)
        thread = link(runtime)
        ops = with_link([recall_op(ns, target, query, limit)], thread)
        found, link_write = split_link((yield ops), thread)
        if link_write is not None:
            yield [link_write]
        return _recall_text(found[0], limit)

    def forget_steps(runtime: ToolRuntime, memory_id: str) -> _Steps:
        if (refused := _refusal("forget", {"memory_id": memory_id})) is not None:
            return refused
        target, ns = resolve(runtime)
        thread = link(runtime)
        found, link_write = split_link((yield with_link([GetOp(ns, memory_id)], thread)), thread)
        if link_write is not None:
            yield [link_write]
        item = found[0]
        if not isinstance(item, Item) or not is_current(item.value, utc_now()):
            return f"No current memory with id {memory_id!r}."
        if store_supports(target, "invalidate"):
            yield _Invalidate(ns, memory_id)
        else:
            yield [PutOp(ns, memory_id, _closed(item))]
        return f"Forgot {memory_id}."

    def remember(
        content: str,
        runtime: ToolRuntime,
        kind: str = "semantic",
        importance: int = 5,
        slot: str | None = None,
    ) -> str:
        steps = remember_steps(runtime, content, kind, importance, slot)
        return _run(resolve(runtime)[0], steps)

    async def aremember(
        content: str,
        runtime: ToolRuntime,
        kind: str = "semantic",
        importance: int = 5,
        slot: str | None = None,
    ) -> str:
        steps = remember_steps(runtime, content, kind, importance, slot)
        return await _arun(resolve(runtime)[0], steps)

    def recall(query: str, runtime: ToolRuntime, limit: int = 5) -> str:
        return _run(resolve(runtime)[0], recall_steps(runtime, query, limit))

    async def arecall(query: str, runtime: ToolRuntime, limit: int = 5) -> str:
        return await _arun(resolve(runtime)[0], recall_steps(runtime, query, limit))

    def forget(memory_id: str, runtime: ToolRuntime) -> str:
        return _run(resolve(runtime)[0], forget_steps(runtime, memory_id))

    async def aforget(memory_id: str, runtime: ToolRuntime) -> str:
        return await _arun(resolve(runtime)[0], forget_steps(runtime, memory_id))

    def tool(name: str, function: Callable[..., str], coroutine: Callable[..., Any]) -> BaseTool:
        made = StructuredTool.from_function(
            function,
            coroutine=coroutine,
            name=name,
            description=_DOCS[name],
            handle_validation_error=partial(_schema_refusal, name),
        )
        # the schema converts nothing ("7", True, b"text" are refused, not read as 7, 1,
        # "text"): what it lets in is what the door checks
        schema = cast(Any, made.args_schema)
        schema.model_config["strict"] = True
        schema.model_rebuild(force=True)
        return made

    return [
        tool("remember", remember, aremember),
        tool("recall", recall, arecall),
        tool("forget", forget, aforget),
    ]
