"""Every ```python example in the docstrings of the store's modules runs as written.

An example may use ``DB_URI`` (a fresh Postgres database) and ``REDIS_URL``; nothing else
is given to it.
"""

from __future__ import annotations

import importlib
import textwrap

import pytest

import langgraph_memory.store as store_pkg
import langgraph_memory.store.postgres as postgres_pkg
from tests.conftest import REDIS_URL
from tests.docexamples import examples, package_modules


def _examples() -> list[tuple[str, str]]:
    modules = {m.__name__: m for m in (*package_modules(store_pkg), *package_modules(postgres_pkg))}
    return [(name, code) for name, module in modules.items() for _, code in examples(module)]


EXAMPLES = _examples()


@pytest.mark.parametrize(
    ("module", "code"), EXAMPLES, ids=[f"{m}:{i}" for i, (m, _) in enumerate(EXAMPLES)]
)
def test_docstring_examples_run(module: str, code: str, postgres_dsn: str) -> None:
    namespace = dict(vars(importlib.import_module(module)))
    namespace.update(DB_URI=postgres_dsn, REDIS_URL=REDIS_URL)
    exec(compile(textwrap.dedent(code), f"<{module} example>", "exec"), namespace)


def test_the_store_modules_have_examples() -> None:
    assert len({module for module, _ in EXAMPLES}) >= 10
