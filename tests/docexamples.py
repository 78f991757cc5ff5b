"""The ```python examples of docstrings, collected once for every test that runs them.

One collector: it reads a module's source (``ast``), so it finds the docstring of the module
and of every class, function, method and property in it, nested ones included, without
importing anything beyond the module itself. Each example is named ``module:qualname#n``
(``n`` counts from 0 within one docstring; the module's own docstring has qualname
``<module>``).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import textwrap
from dataclasses import dataclass
from types import ModuleType

__all__ = ["Example", "all_examples", "examples", "module_examples", "package_modules"]

_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
_MODULE = "<module>"


@dataclass(frozen=True)
class Example:
    """One ```python block of one docstring."""

    module: str
    qualname: str
    index: int
    code: str

    @property
    def id(self) -> str:
        """``module:qualname#n``, the readable test id."""
        return f"{self.module}:{self.qualname}#{self.index}"


def _blocks(doc: str | None) -> list[str]:
    return [textwrap.dedent(code) for code in _BLOCK.findall(inspect.cleandoc(doc or ""))]


def _walk(
    node: ast.AST, prefix: str
) -> list[tuple[str, str | None]]:  # (qualname, docstring) in source order
    found: list[tuple[str, str | None]] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            qualname = f"{prefix}{child.name}"
            found.append((qualname, ast.get_docstring(child, clean=False)))
            inner = f"{qualname}." if isinstance(child, ast.ClassDef) else f"{qualname}.<locals>."
            found.extend(_walk(child, inner))
        elif not isinstance(child, (ast.expr, ast.Lambda)):
            found.extend(_walk(child, prefix))  # if/try/with blocks at any level
    return found


def module_examples(module: ModuleType) -> list[Example]:
    """Every ```python example of ``module``'s own docstrings, in source order."""
    tree = ast.parse(inspect.getsource(module))
    docs = [(_MODULE, ast.get_docstring(tree, clean=False)), *_walk(tree, "")]
    seen: dict[str, int] = {}
    found: list[Example] = []
    for qualname, doc in docs:
        blocks = _blocks(doc)
        for code in blocks:
            index = seen.get(qualname, 0)
            seen[qualname] = index + 1  # overloads / redefinitions share one qualname
            found.append(Example(module.__name__, qualname, index, code))
    return found


def examples(module: ModuleType) -> list[tuple[str, str]]:
    """``(qualname, code)`` of every ```python example in the module (see
    :func:`module_examples`)."""
    return [(example.qualname, example.code) for example in module_examples(module)]


def package_modules(package: ModuleType, *, recursive: bool = False) -> list[ModuleType]:
    """The package and every module directly in it (every module below it when
    ``recursive``), imported; ``__main__`` modules (a program, not a library) are left out."""
    if recursive:
        infos = pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}.")
        names = [info.name for info in infos if not info.name.endswith(".__main__")]
    else:
        names = [
            f"{package.__name__}.{info.name}" for info in pkgutil.iter_modules(package.__path__)
        ]
    return [package, *(importlib.import_module(name) for name in sorted(names))]


def all_examples(package: ModuleType) -> list[Example]:
    """Every ```python example of every module below ``package``."""
    return [
        ex for module in package_modules(package, recursive=True) for ex in module_examples(module)
    ]
