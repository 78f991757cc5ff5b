"""The ```python examples of docstrings, collected once for every test that runs them."""

from __future__ import annotations

import importlib
import pkgutil
import re
import textwrap
from types import ModuleType
from typing import Any

__all__ = ["examples", "package_modules"]

_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def examples(module: ModuleType) -> list[tuple[str, str]]:
    """``(name, code)`` of every ```python example in the module and its own objects
    (classes, functions, and the methods and properties of its classes), dedented."""
    found: list[tuple[str, str]] = []
    owners: list[Any] = [module]
    for value in vars(module).values():
        if getattr(value, "__module__", None) == module.__name__:
            owners.append(value)
            if isinstance(value, type):
                owners.extend(
                    v for v in vars(value).values() if callable(v) or isinstance(v, property)
                )
    for owner in owners:
        doc = getattr(owner, "__doc__", None) or ""
        for code in _BLOCK.findall(doc):
            found.append((getattr(owner, "__qualname__", module.__name__), textwrap.dedent(code)))
    return found


def package_modules(package: ModuleType) -> list[ModuleType]:
    """The package and every module directly in it, imported."""
    names = [f"{package.__name__}.{info.name}" for info in pkgutil.iter_modules(package.__path__)]
    return [package, *(importlib.import_module(name) for name in names)]
