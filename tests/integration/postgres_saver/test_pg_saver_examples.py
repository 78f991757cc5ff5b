"""Every ```python example in the Postgres saver's docstrings runs as written.

Each runs in a fresh namespace holding only ``DB_URI`` (a Postgres DSN, here a fresh test
database), so an example that leans on an undefined name fails here.
"""

from __future__ import annotations

import importlib
import textwrap

import pytest

from tests.docexamples import examples

MODULES = [
    "langgraph_memory.checkpoint.postgres",
    *(
        f"langgraph_memory.checkpoint.postgres.{name}"
        for name in ("aio", "sync", "_common", "_read", "_retention", "_sql")
    ),
]

EXAMPLES = [
    (module, owner, code)
    for module in MODULES
    for owner, code in examples(importlib.import_module(module))
]


def test_the_examples_are_collected() -> None:
    assert len(EXAMPLES) >= 20


@pytest.mark.parametrize(
    ("module", "owner", "code"), EXAMPLES, ids=[f"{m}:{o}" for m, o, _ in EXAMPLES]
)
def test_docstring_example_runs(module: str, owner: str, code: str, postgres_dsn: str) -> None:
    namespace = {"__name__": f"example_of_{owner}", "DB_URI": postgres_dsn}
    exec(compile(textwrap.dedent(code), f"<{module}.{owner} example>", "exec"), namespace)
