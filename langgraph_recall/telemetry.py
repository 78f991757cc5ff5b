"""OpenTelemetry spans for the store, the checkpointers and the memory nodes.

Installed with the ``otel`` extra (``opentelemetry-api``); without it, or while no tracer
provider is set (``opentelemetry.trace.set_tracer_provider``), every hook here is a no-op
that creates nothing. With a provider, these spans are emitted under the instrumentation
scope ``langgraph_recall``:

=========================  ==========================================================
span                       attributes
=========================  ==========================================================
``search_memory``,         ``gen_ai.operation.name`` (the span name; ``get_memory``,
``update_memory``,         ``list_memory_namespaces`` and ``batch_memory`` for the
``delete_memory``, ...     other store calls), ``gen_ai.memory.records`` (items
                           returned or written), ``db.system.name``,
                           ``langgraph_recall.store.ops``,
                           ``langgraph_recall.namespace.depth``,
                           ``langgraph_recall.store.vector_mode``,
                           ``langgraph_recall.search.has_query``
``checkpoint get_tuple``,  ``db.system.name`` (``postgresql``, ``redis``),
``checkpoint put``,        ``langgraph_recall.checkpoint.found`` (``get_tuple``),
``checkpoint put_writes``  ``langgraph_recall.checkpoint.writes`` (``put_writes``)
``memory_node <name>``     ``langgraph_recall.node`` (the node's name)
=========================  ==========================================================

Attributes never hold user data: no memory text, query, namespace label, key, thread or
user id — only counts, depths, modes and names from the code. A failed call's span has
status ERROR and ``error.type`` (the exception's class name, not its message).

Example:
    ```python
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from langgraph_recall.telemetry import span

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with span("memory_node retrieve", {"langgraph_recall.node": "retrieve"}, provider=provider):
        pass
    assert [s.name for s in exporter.get_finished_spans()] == ["memory_node retrieve"]
    ```
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence, Sized
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer, TracerProvider

__all__ = [
    "SCOPE",
    "end_span",
    "length",
    "records",
    "span",
    "start_span",
    "start_store_span",
    "store_operation",
]

SCOPE = "langgraph_recall"
AttributeValue = str | bool | int | float

try:  # the optional dependency, looked up once
    from opentelemetry import trace as _trace
except ImportError:  # pragma: no cover - exercised where the extra is absent
    # None marks the extra as absent; mypy sees only the module type (every use checks).
    _trace = None  # type: ignore[assignment]
    _UNSET: tuple[type, ...] = ()
else:
    _UNSET = (_trace.ProxyTracerProvider, _trace.NoOpTracerProvider)


def _tracer(provider: TracerProvider | None = None) -> Tracer | None:
    """The package's tracer, or ``None`` when spans would go nowhere (no API, no provider)."""
    if _trace is None:
        return None
    chosen = provider or _trace.get_tracer_provider()
    if isinstance(chosen, _UNSET):  # nowhere to send spans
        return None
    cached = _TRACERS.get(id(chosen))
    if cached is not None and cached[0] is chosen:
        return cached[1]
    from langgraph_recall._version import __version__

    tracer = chosen.get_tracer(SCOPE, __version__)
    _TRACERS.clear()  # one provider at a time in practice; never grows
    _TRACERS[id(chosen)] = (chosen, tracer)
    return tracer


_TRACERS: dict[int, tuple[TracerProvider, Tracer]] = {}


def start_store_span(ops: Sequence[Any]) -> Span | None:
    """The span of one store batch (not made current), or ``None`` — without looking at
    ``ops`` — when there is nowhere to send it."""
    tracer = _tracer()
    if tracer is None:
        return None
    try:
        name, attributes = store_operation(ops)
    except (TypeError, AttributeError):  # malformed ops: the batch itself says what is wrong
        name, attributes = "batch_memory", {"gen_ai.operation.name": "batch_memory"}
    return tracer.start_span(name, attributes=attributes)


def start_span(
    name: str,
    attributes: Mapping[str, AttributeValue],
    *,
    provider: TracerProvider | None = None,
) -> Span | None:
    """Start a span that is not made current (for code that yields between its steps);
    ``None`` when there is nowhere to send it. End it with :func:`end_span`."""
    tracer = _tracer(provider)
    if tracer is None:
        return None
    return tracer.start_span(name, attributes=dict(attributes))


def end_span(
    started: Span | None,
    error: BaseException | None = None,
    attributes: Mapping[str, AttributeValue] | None = None,
) -> None:
    """Set the final attributes (and error status) of a span from :func:`start_span`, end it."""
    if started is None or _trace is None:
        return
    if attributes:
        started.set_attributes(dict(attributes))
    if error is not None:
        started.set_attribute("error.type", type(error).__qualname__)
        started.set_status(_trace.Status(_trace.StatusCode.ERROR))
    started.end()


@contextlib.contextmanager
def span(
    name: str,
    attributes: Mapping[str, AttributeValue] | None = None,
    *,
    provider: TracerProvider | None = None,
) -> Iterator[Span | None]:
    """A current span around a block (nested spans become its children); ``None`` inside
    when there is nowhere to send it. The exception's class, never its message, is recorded.
    """
    tracer = _tracer(provider)
    if tracer is None:
        yield None
        return
    with tracer.start_as_current_span(
        name,
        attributes=dict(attributes or {}),
        record_exception=False,
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except BaseException as exc:
            if isinstance(exc, Exception):
                current.set_attribute("error.type", type(exc).__qualname__)
                current.set_status(_trace.Status(_trace.StatusCode.ERROR))
            raise


def store_operation(ops: Sequence[Any]) -> tuple[str, dict[str, AttributeValue]]:
    """The span name and starting attributes of a store batch (pure: counts and depths only).

    Example:
        ```python
        from langgraph.store.base import PutOp, SearchOp

        from langgraph_recall.telemetry import store_operation

        name, attributes = store_operation([SearchOp(("memories", "user_id:ann"), query="tea")])
        assert name == "search_memory" and attributes["langgraph_recall.namespace.depth"] == 2
        assert attributes["langgraph_recall.search.has_query"] is True
        assert store_operation([PutOp(("m",), "k", None)])[0] == "delete_memory"
        ```
    """
    kinds: set[str] = set()
    depth = 0
    query = False
    for op in ops:
        kind, namespace = _describe(op)
        kinds.add(kind)
        depth = max(depth, len(namespace))
        query = query or bool(getattr(op, "query", None))
    searched = "search_memory" in kinds
    name = kinds.pop() if len(kinds) == 1 else "batch_memory"
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": name,
        "db.system.name": "postgresql",
        "langgraph_recall.store.ops": len(ops),
        "langgraph_recall.namespace.depth": depth,
    }
    if searched:
        attributes["langgraph_recall.search.has_query"] = query
    return name, attributes


def _describe(op: Any) -> tuple[str, tuple[str, ...]]:
    from langgraph.store.base import GetOp, ListNamespacesOp, PutOp

    if isinstance(op, PutOp):
        return ("update_memory" if op.value is not None else "delete_memory"), op.namespace
    if isinstance(op, GetOp):
        return "get_memory", op.namespace
    if isinstance(op, ListNamespacesOp):
        return "list_memory_namespaces", ()
    return "search_memory", tuple(getattr(op, "namespace_prefix", ()))


def records(results: Sequence[Any]) -> int:
    """``gen_ai.memory.records`` of a batch's results: items found (a search's list counts
    its items, a get its item) — writes are counted by the caller."""
    count = 0
    for result in results:
        if isinstance(result, list):
            count += sum(1 for entry in result if not isinstance(entry, tuple))
        elif result is not None:
            count += 1
    return count


def length(value: object) -> int:
    """``len(value)`` for an attribute, ``0`` for what has no length: spans start before a
    call checks its arguments, and a bad argument must get the call's own error.

    Example:
        ```python
        from langgraph_recall.telemetry import length

        assert length([1, 2]) == 2 and length(None) == 0
        ```
    """
    return len(value) if isinstance(value, Sized) else 0
