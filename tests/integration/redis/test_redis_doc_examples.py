"""Every ```python example in the docstrings of the Redis savers and of the checkpoint
helpers they share runs as written, against the real Redis (``REDIS_URL`` is given). Every
docstring of the modules counts (read from their syntax tree: private and nested functions
too). An example of an async class may ``await`` at top level, as in ``python -m asyncio``
or a notebook: it runs in a fresh event loop."""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import langgraph_memory.checkpoint.redis as redis_package
from langgraph_memory.checkpoint import _bridge, _config, _guard, _threaded, _values
from tests.docexamples import package_modules

pytestmark = pytest.mark.redis

MODULES: list[ModuleType] = [
    *package_modules(redis_package),
    _bridge,
    _config,
    _guard,
    _threaded,
    _values,
]
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def source_examples(module: ModuleType) -> list[tuple[str, str]]:
    """``(owner, code)`` of every ```python block in any docstring of ``module``'s file."""
    assert module.__file__ is not None
    tree = ast.parse(Path(module.__file__).read_text())
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False) or ""
            owner = getattr(node, "name", module.__name__)
            found.extend((owner, textwrap.dedent(code)) for code in _BLOCK.findall(doc))
    return found


EXAMPLES = [
    pytest.param(code, id=f"{module.__name__}:{owner}:{index}")
    for module in MODULES
    for index, (owner, code) in enumerate(source_examples(module))
]


def run_example(code: str, names: dict[str, Any]) -> None:
    """Run ``code`` with ``names`` as its globals (top-level ``await`` allowed)."""
    compiled = compile(code, "<example>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(compiled, names)
    if inspect.iscoroutine(result):
        asyncio.run(result)


def test_the_savers_have_examples() -> None:
    owners = {param.id for param in EXAMPLES}
    assert any(":AsyncRedisSaver" in name for name in owners)
    assert any(":RedisSaver" in name for name in owners)


@pytest.mark.parametrize("code", EXAMPLES)
def test_example_runs_as_written(code: str, redis_url: str) -> None:
    run_example(code, {"__name__": "__example__", "REDIS_URL": redis_url})
