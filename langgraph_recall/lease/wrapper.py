"""``with_thread_lease``: one line that makes a compiled graph safe under several workers.

The wrapper is a convenience, not the guard: our checkpointers refuse any write to a
leased thread that lacks the holder's fencing token, whichever object issues it (see
:mod:`langgraph_recall.checkpoint._guard`). The wrapper takes the lease and passes the
token. It is itself a LangChain ``Runnable``: every way of running it -- ``invoke``,
``stream``, ``batch`` and their async twins, ``astream_events``, and everything LangChain
derives from those (``with_retry``, ``with_fallbacks``, ``map``, ``pipe``, ``|``,
``with_listeners``, ``bind``, ``assign``, ``pick``, ``as_tool``, ``astream_log``,
``transform``, ``batch_as_completed``...) -- runs under the lease; so do ``update_state``
and ``bulk_update_state`` (and their async twins). ``stream_events`` (sync, and version
``v3``) raises :class:`~langgraph_recall.errors.ConfigurationError`. Reads and
descriptions (``get_state``, ``get_state_history``, ``get_graph``, schemas...) are the
wrapped graph's own.

Example:
    ```python
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, MessagesState, StateGraph

    from langgraph_recall.lease import InMemoryLeaseBackend, with_thread_lease


    def reply(state: MessagesState) -> dict[str, list[tuple[str, str]]]:
        return {"messages": [("ai", "hello")]}


    builder = StateGraph(MessagesState)
    builder.add_node(reply)
    builder.add_edge(START, "reply")
    graph = with_thread_lease(  # with our savers the backend defaults to the saver's
        builder.compile(checkpointer=InMemorySaver()), InMemoryLeaseBackend()
    )
    out = graph.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "chat-1"}})
    assert out["messages"][-1].content == "hello"
    ```
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import merge_configs

from langgraph_recall.errors import ConfigurationError
from langgraph_recall.lease._policy import LeaseOptions, Strategy, fenced_config, thread_id_of
from langgraph_recall.lease._protocol import AsyncLeaseBackend, LeaseBackend
from langgraph_recall.lease._session import ThreadedAsyncLeaseBackend, aheld_lease, held_lease

__all__ = ["ThreadLeasedGraph", "with_thread_lease"]

_STREAM_EVENTS_UNSUPPORTED = (
    "{name} would run the graph outside the thread lease (LangGraph drives it after the "
    "call returns); use astream_events(version='v2'), or stream/astream with "
    "stream_mode=[...], on the leased graph"
)


def _lease_backend_of(graph: Any) -> object:
    checkpointer = getattr(graph, "checkpointer", None)
    if checkpointer is None or isinstance(checkpointer, bool):
        raise ConfigurationError(
            "with_thread_lease needs a graph compiled with a checkpointer, e.g. "
            "builder.compile(checkpointer=RedisSaver(...)) or PostgresSaver(...) from "
            "langgraph_recall.checkpoint; or pass backend=... explicitly"
        )
    factory = getattr(checkpointer, "lease_backend", None)
    if not callable(factory):
        raise ConfigurationError(
            f"{type(checkpointer).__name__} has no lease backend (no .lease_backend() method); "
            "use a langgraph_recall checkpointer (langgraph_recall.checkpoint.redis.RedisSaver or "
            "langgraph_recall.checkpoint.postgres.PostgresSaver, or their Async twins), or pass "
            "backend=... (InMemoryLeaseBackend() only coordinates one process)"
        )
    return factory()


def _described(name: str, doc: str, *, call: bool = True) -> Any:
    """A property (``call=False``) or method of the wrapper that is the wrapped graph's own."""
    if not call:
        return property(lambda self: getattr(self.graph, name, None), doc=doc)

    def method(self: ThreadLeasedGraph, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.graph, name)(*args, **kwargs)

    method.__name__ = name
    method.__doc__ = doc
    return method


class ThreadLeasedGraph(Runnable[Any, Any]):
    """A compiled graph whose runs hold a per-``thread_id`` lease with fencing.

    Build it with :func:`with_thread_lease`. It is a ``Runnable``: ``invoke``/``ainvoke``/
    ``stream``/``astream``/``astream_events``/``batch``/``abatch`` run under the lease, and
    so does everything LangChain builds on them (``with_retry``, ``with_fallbacks``,
    ``map``, ``|``, ``astream_log``, ``transform``, ``as_tool``...); ``update_state``,
    ``bulk_update_state`` and their async twins write under it; ``with_config`` and
    ``copy`` return leased graphs. ``stream_events`` raises ``ConfigurationError``. Every
    other attribute (``get_state``, ``get_state_history``, ``get_graph``,
    ``checkpointer``, ...) is the wrapped graph's own.

    Attributes:
        graph: The wrapped compiled graph.
        options: The validated lease options.

    Example:
        ```python
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.graph import START, MessagesState, StateGraph

        from langgraph_recall.lease import InMemoryLeaseBackend
        from langgraph_recall.lease.wrapper import ThreadLeasedGraph, with_thread_lease


        def reply(state: MessagesState) -> dict[str, list[tuple[str, str]]]:
            return {"messages": [("ai", "hello")]}


        builder = StateGraph(MessagesState)
        builder.add_node(reply)
        builder.add_edge(START, "reply")
        graph = builder.compile(checkpointer=InMemorySaver())
        backend = InMemoryLeaseBackend()
        leased = with_thread_lease(graph, backend, strategy="wait", wait_timeout=10.0)
        assert isinstance(leased, ThreadLeasedGraph)
        out = leased.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "t1"}})
        assert [m.content for m in out["messages"]] == ["hi", "hello"]
        ```
    """

    def __init__(
        self,
        graph: Any,
        backend: object,
        options: LeaseOptions,
    ) -> None:
        self.graph = graph
        self.options = options
        self._backend = backend
        self._sync_backend = backend if isinstance(backend, LeaseBackend) else None
        self._async_backend: AsyncLeaseBackend
        if isinstance(backend, AsyncLeaseBackend):
            self._async_backend = backend
        elif self._sync_backend is not None:
            self._async_backend = ThreadedAsyncLeaseBackend(self._sync_backend)
        else:
            raise ConfigurationError(
                f"{type(backend).__name__} is not a lease backend: it needs try_acquire/renew/"
                "release (LeaseBackend) or atry_acquire/arenew/arelease (AsyncLeaseBackend)"
            )

    def __getattr__(self, name: str) -> Any:
        # only reached for names the Runnable API does not define: the graph's own
        # (get_state, get_state_history, checkpointer, nodes, ...)
        if name.startswith("__") or name in ("graph", "options", "_backend"):
            raise AttributeError(name)
        return getattr(self.graph, name)

    def _leased(self, graph: Any) -> ThreadLeasedGraph:
        return ThreadLeasedGraph(graph, self._backend, self.options)

    def with_config(self, config: RunnableConfig | None = None, **kwargs: Any) -> ThreadLeasedGraph:
        """The wrapped graph's ``with_config``, still under the lease."""
        return self._leased(self.graph.with_config(config, **kwargs))

    def copy(self, *args: Any, **kwargs: Any) -> ThreadLeasedGraph:
        """The wrapped graph's ``copy(...)``, still under the lease."""
        return self._leased(self.graph.copy(*args, **kwargs))

    # ----------------------------------------------------- descriptions: the graph's own
    # (the Runnable API defines these, so __getattr__ would never forward them)

    name = _described("name", "The wrapped graph's name.", call=False)
    InputType = _described("InputType", "The wrapped graph's input type.", call=False)
    OutputType = _described("OutputType", "The wrapped graph's output type.", call=False)
    input_schema = _described("input_schema", "The wrapped graph's input schema.", call=False)
    output_schema = _described("output_schema", "The wrapped graph's output schema.", call=False)
    config_specs = _described(
        "config_specs", "The wrapped graph's configurable fields.", call=False
    )
    get_name = _described("get_name", "The wrapped graph's ``get_name``.")
    get_graph = _described("get_graph", "The wrapped graph's drawable graph.")
    get_input_schema = _described("get_input_schema", "The wrapped graph's input schema.")
    get_output_schema = _described("get_output_schema", "The wrapped graph's output schema.")
    get_input_jsonschema = _described("get_input_jsonschema", "Its input JSON schema.")
    get_output_jsonschema = _described("get_output_jsonschema", "Its output JSON schema.")
    config_schema = _described("config_schema", "The wrapped graph's config schema.")
    get_config_jsonschema = _described("get_config_jsonschema", "Its config JSON schema.")
    get_prompts = _described("get_prompts", "The wrapped graph's prompts.")

    def __repr__(self) -> str:
        return f"ThreadLeasedGraph({self.graph!r}, strategy={self.options.strategy!r})"

    def _require_sync(self) -> LeaseBackend:
        if self._sync_backend is None:
            raise ConfigurationError(
                "this graph's lease backend is async-only; call ainvoke/astream, or compile "
                "the graph with the synchronous saver (RedisSaver/PostgresSaver)"
            )
        return self._sync_backend

    def _thread_id(self, config: RunnableConfig | None) -> str:
        # a thread_id bound earlier with graph.with_config(...) counts too
        return thread_id_of(merge_configs(getattr(self.graph, "config", None), config))

    # ------------------------------------------------------------------ sync runs

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run the graph once under the thread's lease (see ``Pregel.invoke``).

        Raises:
            ConfigurationError: ``config`` has no ``thread_id``.
            ThreadBusyError: Another run holds the thread (strategy/timeout exhausted).
            LeaseLostError: The lease was lost mid-run; the run stopped at the next step.
        """
        backend = self._require_sync()
        thread_id = self._thread_id(config)
        with held_lease(backend, thread_id, self.options, kwargs.get("control")) as run:
            return self.graph.invoke(
                input, fenced_config(config, run.lease.token), **_with_control(kwargs, run.control)
            )

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """Stream the graph under the thread's lease, held until the stream ends or closes."""
        backend = self._require_sync()
        thread_id = self._thread_id(config)
        with held_lease(backend, thread_id, self.options, kwargs.get("control")) as run:
            yield from self.graph.stream(
                input, fenced_config(config, run.lease.token), **_with_control(kwargs, run.control)
            )

    def update_state(
        self, config: RunnableConfig, values: Any, as_node: str | None = None, **kwargs: Any
    ) -> RunnableConfig:
        """``Pregel.update_state`` under the thread's lease (the write is fenced too)."""
        backend = self._require_sync()
        with held_lease(backend, self._thread_id(config), self.options) as run:
            return cast(
                "RunnableConfig",
                self.graph.update_state(
                    fenced_config(config, run.lease.token), values, as_node=as_node, **kwargs
                ),
            )

    def bulk_update_state(
        self, config: RunnableConfig, supersteps: Sequence[Any], **kwargs: Any
    ) -> RunnableConfig:
        """``Pregel.bulk_update_state`` under the thread's lease (every write fenced)."""
        backend = self._require_sync()
        with held_lease(backend, self._thread_id(config), self.options) as run:
            return cast(
                "RunnableConfig",
                self.graph.bulk_update_state(
                    fenced_config(config, run.lease.token), supersteps, **kwargs
                ),
            )

    def stream_events(self, *args: Any, **kwargs: Any) -> Any:
        """Not supported under the lease: raises :class:`ConfigurationError`.

        Raises:
            ConfigurationError: Always; use ``astream_events(version="v2")`` or ``stream``.
        """
        raise ConfigurationError(_STREAM_EVENTS_UNSUPPORTED.format(name="stream_events()"))

    def batch(
        self,
        inputs: Sequence[Any],
        config: RunnableConfig | Sequence[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Run several inputs concurrently, each under its own thread's lease."""
        configs = _per_input_configs(inputs, config)
        if not inputs:
            return []

        def one(pair: tuple[Any, RunnableConfig | None]) -> Any:
            try:
                return self.invoke(pair[0], pair[1], **kwargs)
            except Exception as exc:
                if return_exceptions:
                    return exc
                raise

        with ThreadPoolExecutor(max_workers=min(len(inputs), 16)) as pool:
            return list(pool.map(one, zip(inputs, configs, strict=True)))

    # ----------------------------------------------------------------- async runs

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Async :meth:`invoke`."""
        backend = self._async_backend
        thread_id = self._thread_id(config)
        async with aheld_lease(backend, thread_id, self.options, kwargs.get("control")) as run:
            return await self.graph.ainvoke(
                input, fenced_config(config, run.lease.token), **_with_control(kwargs, run.control)
            )

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """Async :meth:`stream`."""
        backend = self._async_backend
        thread_id = self._thread_id(config)
        async with aheld_lease(backend, thread_id, self.options, kwargs.get("control")) as run:
            async for chunk in self.graph.astream(
                input, fenced_config(config, run.lease.token), **_with_control(kwargs, run.control)
            ):
                yield chunk

    # Runnable types astream_events as one overload per version literal; this wrapper
    # refuses v3 at the call, so it cannot declare the same overloads.
    def astream_events(  # type: ignore[override]
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """``astream_events`` (versions ``v1``/``v2``) under the thread's lease.

        Raises:
            ConfigurationError: ``version="v3"`` (at the call, before any ``await``).
        """
        if kwargs.get("version") == "v3":
            raise ConfigurationError(
                _STREAM_EVENTS_UNSUPPORTED.format(name="astream_events(version='v3')")
            )
        return self._astream_events(input, config, **kwargs)

    async def _astream_events(
        self, input: Any, config: RunnableConfig | None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        backend = self._async_backend
        thread_id = self._thread_id(config)
        async with aheld_lease(backend, thread_id, self.options, kwargs.get("control")) as run:
            async for event in self.graph.astream_events(
                input, fenced_config(config, run.lease.token), **_with_control(kwargs, run.control)
            ):
                yield event

    async def aupdate_state(
        self, config: RunnableConfig, values: Any, as_node: str | None = None, **kwargs: Any
    ) -> RunnableConfig:
        """Async :meth:`update_state`."""
        backend = self._async_backend
        async with aheld_lease(backend, self._thread_id(config), self.options) as run:
            return cast(
                "RunnableConfig",
                await self.graph.aupdate_state(
                    fenced_config(config, run.lease.token), values, as_node=as_node, **kwargs
                ),
            )

    async def abulk_update_state(
        self, config: RunnableConfig, supersteps: Sequence[Any], **kwargs: Any
    ) -> RunnableConfig:
        """Async :meth:`bulk_update_state`."""
        backend = self._async_backend
        async with aheld_lease(backend, self._thread_id(config), self.options) as run:
            return cast(
                "RunnableConfig",
                await self.graph.abulk_update_state(
                    fenced_config(config, run.lease.token), supersteps, **kwargs
                ),
            )

    async def abatch(
        self,
        inputs: Sequence[Any],
        config: RunnableConfig | Sequence[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Async :meth:`batch`."""
        configs = _per_input_configs(inputs, config)
        pairs = zip(inputs, configs, strict=True)
        runs = [self.ainvoke(item, cfg, **kwargs) for item, cfg in pairs]
        return list(await asyncio.gather(*runs, return_exceptions=return_exceptions))


def _with_control(kwargs: dict[str, Any], control: Any) -> dict[str, Any]:
    if control is None:
        return kwargs
    return {**kwargs, "control": control}


def _per_input_configs(
    inputs: Sequence[Any], config: RunnableConfig | Sequence[RunnableConfig] | None
) -> list[RunnableConfig | None]:
    if config is None or isinstance(config, dict):
        return [config] * len(inputs)
    configs: list[RunnableConfig | None] = list(config)
    if len(configs) != len(inputs):
        raise ConfigurationError(
            f"batch got {len(inputs)} inputs but {len(configs)} configs; pass one config "
            "per input (each with its own thread_id)"
        )
    return configs


def with_thread_lease(
    graph: Any,
    backend: LeaseBackend | AsyncLeaseBackend | None = None,
    *,
    strategy: Strategy = "reject",
    wait_timeout: float = 30.0,
    ttl: float = 30.0,
    renew_every: float | None = None,
) -> ThreadLeasedGraph:
    """Wrap a compiled graph so two workers never run the same ``thread_id`` at once.

    Each run takes the thread's lease, puts its fencing token into
    ``config["configurable"]`` (our checkpointers then refuse writes carrying an old
    token with ``StaleWriteError``), renews the lease in the background while it runs,
    and releases it at the end. A worker that dies loses its lease after ``ttl``.

    Args:
        graph: A compiled graph (``builder.compile(checkpointer=...)``).
        backend: Where leases live. Default: ``graph.checkpointer.lease_backend()``.
        strategy: ``"reject"`` raises ``ThreadBusyError`` at once when the thread is busy;
            ``"wait"`` polls with bounded backoff for up to ``wait_timeout`` seconds.
        wait_timeout: Longest wait of the ``wait`` strategy, in seconds.
        ttl: Lease lifetime in seconds; how long a crashed worker blocks its thread.
        renew_every: Renewal period in seconds (default ``ttl / 3``); must be below ``ttl``.

    Returns:
        A :class:`ThreadLeasedGraph` with the graph's API.

    Raises:
        ConfigurationError: Bad options, or no backend given and the checkpointer has none.

    Example:
        ```python
        import uuid

        from langgraph.graph import START, MessagesState, StateGraph

        from langgraph_recall.checkpoint.redis import RedisSaver
        from langgraph_recall.lease import with_thread_lease


        def reply(state: MessagesState) -> dict[str, list[tuple[str, str]]]:
            return {"messages": [("ai", "hello")]}


        builder = StateGraph(MessagesState)
        builder.add_node(reply)
        builder.add_edge(START, "reply")
        with RedisSaver.from_conn_string(REDIS_URL) as saver:
            saver.setup()
            graph = with_thread_lease(builder.compile(checkpointer=saver), strategy="wait")
            config = {"configurable": {"thread_id": f"doc-{uuid.uuid4().hex}"}}
            out = graph.invoke({"messages": [("user", "hi")]}, config)
        assert out["messages"][-1].content == "hello"
        ```
    """
    options = LeaseOptions.create(
        strategy=strategy, wait_timeout=wait_timeout, ttl=ttl, renew_every=renew_every
    )
    resolved: object = backend if backend is not None else _lease_backend_of(graph)
    return ThreadLeasedGraph(graph, resolved, options)
