"""The public API of the checkpointers: sync/async parity and curated exports.

* Every I/O method ``x`` of a saver has an async twin ``ax`` (on the same class and on
  its async sibling) whose parameters (names, kinds, defaults) match apart from ``self``;
  the async twins really are coroutine / async-generator functions.
* ``setup()`` is awaitable on both async savers (``await saver.setup()``), and
  ``AsyncRedisSaver.asetup()`` stays as an alias.
* ``from_conn_string`` exists on all four savers; every ``__all__`` name resolves.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from typing import Any

import pytest

from langgraph_recall.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from langgraph_recall.checkpoint.redis import AsyncRedisSaver, RedisSaver

PAIRS = [(RedisSaver, AsyncRedisSaver), (PostgresSaver, AsyncPostgresSaver)]
SAVERS = [cls for pair in PAIRS for cls in pair]

NOT_IO = {
    "from_conn_string",  # a context manager factory, sync and async flavours
    "get_next_version",  # pure
    "with_allowlist",  # pure (returns a configured copy)
    "lease_backend",  # builds an object, no I/O
    "setup",  # checked separately: async on the async classes, no "asetup" on Postgres
    "start_sweeper",  # starts a thread / task
    "stop_sweeper",  # sync join on the sync class, awaitable on the async one
}


def public_methods(cls: type) -> dict[str, Callable[..., Any]]:
    return {
        name: member
        for name, member in inspect.getmembers(cls, callable)
        if not name.startswith("_") and not inspect.isclass(member)
    }


def is_async(function: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function)


def parameters(function: Callable[..., Any]) -> list[tuple[str, Any, Any]]:
    params = list(inspect.signature(function).parameters.values())
    if params and params[0].name in ("self", "cls"):
        params = params[1:]
    return [(p.name, p.kind, p.default) for p in params]


def twin_pairs() -> list[tuple[type, type, str]]:
    """``(sync class, class to check, sync method name)`` for every I/O method."""
    cases = []
    for sync_cls, async_cls in PAIRS:
        methods = public_methods(sync_cls)
        names = [
            name
            for name in sorted(methods)
            if name not in NOT_IO and not (name.startswith("a") and name[1:] in methods)
        ]
        cases += [(sync_cls, cls, name) for cls in (sync_cls, async_cls) for name in names]
    return cases


@pytest.mark.parametrize(
    ("sync_cls", "cls", "name"),
    twin_pairs(),
    ids=lambda value: value.__name__ if isinstance(value, type) else str(value),
)
def test_every_sync_method_has_an_async_twin_with_the_same_parameters(
    sync_cls: type, cls: type, name: str
) -> None:
    methods = public_methods(cls)
    sync_method = public_methods(sync_cls)[name]
    assert not is_async(sync_method), f"{sync_cls.__name__}.{name} should be sync"
    twin = methods.get(f"a{name}")
    assert twin is not None, f"{cls.__name__} has {name} but no a{name}"
    assert is_async(twin), f"{cls.__name__}.a{name} must be async"
    assert parameters(twin) == parameters(sync_method), f"{cls.__name__}.a{name} vs {name}"
    if name in methods:  # the class's own sync bridge matches too
        assert parameters(methods[name]) == parameters(sync_method)


def test_the_io_surface_is_the_same_for_sync_and_async_classes() -> None:
    for sync_cls, async_cls in PAIRS:
        assert set(public_methods(sync_cls)) - {"asetup"} <= set(public_methods(async_cls))
        io = {name for _, cls, name in twin_pairs() if cls is sync_cls}
        assert {
            "get",
            "get_tuple",
            "list",
            "put",
            "put_writes",
            "delete_thread",
            "copy_thread",
            "delete_for_runs",
            "prune",
            "get_delta_channel_history",
        } <= io


@pytest.mark.parametrize("cls", [AsyncRedisSaver, AsyncPostgresSaver], ids=lambda c: c.__name__)
def test_setup_is_awaitable_on_async_savers(cls: type) -> None:
    assert inspect.iscoroutinefunction(cls.setup)  # type: ignore[attr-defined]
    assert parameters(cls.setup) == []  # type: ignore[attr-defined]


def test_async_redis_asetup_is_an_alias() -> None:
    assert inspect.iscoroutinefunction(AsyncRedisSaver.asetup)
    assert parameters(AsyncRedisSaver.asetup) == parameters(AsyncRedisSaver.setup)


@pytest.mark.parametrize("cls", [RedisSaver, PostgresSaver], ids=lambda c: c.__name__)
def test_setup_is_sync_on_sync_savers(cls: type) -> None:
    assert not is_async(cls.setup)  # type: ignore[attr-defined]


@pytest.mark.parametrize("cls", SAVERS, ids=lambda c: c.__name__)
def test_from_conn_string_exists(cls: type) -> None:
    factory = inspect.getattr_static(cls, "from_conn_string")
    assert isinstance(factory, classmethod)
    assert next(iter(inspect.signature(cls.from_conn_string).parameters)) in (  # type: ignore[attr-defined]
        "conn_string",
        "url",
    )


def test_sync_and_async_from_conn_string_take_the_same_options() -> None:
    for sync_cls, async_cls in PAIRS:
        sync_params = {p[0]: p[2] for p in parameters(sync_cls.from_conn_string)}  # type: ignore[attr-defined]
        async_params = {p[0]: p[2] for p in parameters(async_cls.from_conn_string)}  # type: ignore[attr-defined]
        assert sync_params == async_params, sync_cls.__name__


def checkpoint_modules() -> list[str]:
    names = ["langgraph_recall.checkpoint._config"]
    for package in ("langgraph_recall.checkpoint.redis", "langgraph_recall.checkpoint.postgres"):
        path = importlib.import_module(package).__path__
        names += [package, *(f"{package}.{m.name}" for m in pkgutil.iter_modules(path))]
    return names


@pytest.mark.parametrize("module_name", checkpoint_modules())
def test_all_names_resolve(module_name: str) -> None:
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    assert names is not None, f"{module_name} has no __all__"
    assert len(set(names)) == len(names)
    for name in names:
        assert hasattr(module, name), f"{module_name}.__all__ lists missing {name!r}"


def test_package_exports_the_four_savers() -> None:
    redis_pkg = importlib.import_module("langgraph_recall.checkpoint.redis")
    postgres_pkg = importlib.import_module("langgraph_recall.checkpoint.postgres")
    assert {"RedisSaver", "AsyncRedisSaver"} <= set(redis_pkg.__all__)
    assert {"PostgresSaver", "AsyncPostgresSaver"} <= set(postgres_pkg.__all__)
