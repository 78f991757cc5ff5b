"""Every ```python example in the docstrings of the Postgres layer runs as written (a
database at ``DB_URI``); so do those of the modules it replaced parts of."""

from __future__ import annotations

import pytest

import langgraph_memory._pg as pg_package
from tests.docexamples import examples, package_modules

EXAMPLES = [
    pytest.param(code, id=f"{module.__name__}:{name}")
    for module in package_modules(pg_package)
    for name, code in examples(module)
]


def test_the_layer_has_examples() -> None:
    assert len(EXAMPLES) >= 10


@pytest.mark.parametrize("code", EXAMPLES)
def test_docstring_example_runs(code: str, request: pytest.FixtureRequest) -> None:
    names: dict[str, object] = {"__name__": "example"}
    if "DB_URI" in code:  # a fresh database only for the examples that use one
        names["DB_URI"] = request.getfixturevalue("postgres_dsn")
    exec(compile(code, "<example>", "exec"), names)
