"""The README conventions the wheel test relies on (tests/integration/packaging/_readme.py),
and the repository README parsed with them: every Python block is a script of its own or a
marked continuation, and each server block has its langgraph.json."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.packaging._readme import parse_readme, pip_install_line

FENCE = "```"
README = Path(__file__).resolve().parents[2] / "README.md"


def block(language: str, body: str, marker: str | None = None) -> str:
    head = f"<!-- readme-test: {marker} -->\n" if marker else ""
    return f"{head}{FENCE}{language}\n{body}{FENCE}\n\ntext\n\n"


def test_blocks_continuations_files_and_expected_output() -> None:
    text = (
        block("python", "x = 1\nprint(x)  # 1\n")
        + block("bash", "echo no\n")
        + block("python", "print(x + 1)   # 2\n", "continue")
        + block("json", '{"a": 1}\n', "file langgraph.json")
        + block("python", "print('served')  # served\n", "langgraph dev")
    )
    readme = parse_readme(text)
    assert [s.code for s in readme.scripts] == [
        "x = 1\nprint(x)  # 1\n\nprint(x + 1)   # 2\n",
        "print('served')  # served\n",
    ]
    assert [s.expected for s in readme.scripts] == [["1", "2"], ["served"]]
    assert [s.needs_server for s in readme.scripts] == [False, True]
    assert readme.files == {"langgraph.json": '{"a": 1}\n'}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (block("python", "x = 1\n", "continue"), "'continue' with no Python block"),
        (block("python", "x = 1\n", "skip"), "unknown readme-test marker 'skip'"),
    ],
)
def test_bad_markers_are_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_readme(text)


def test_pip_install_line() -> None:
    text = 'pip install "pkg[all]" "cli[x]"   # the server\n'
    assert pip_install_line(text, "cli[x]") == ["pkg[all]", "cli[x]"]
    with pytest.raises(ValueError, match="no 'pip install' line"):
        pip_install_line(text, "other")


def test_the_repository_readme_is_runnable_by_these_rules() -> None:
    text = README.read_text()
    readme = parse_readme(text)
    assert len(readme.scripts) >= 5
    assert "create_agent" in readme.scripts[0].code  # the create_agent example comes first
    assert all(script.expected for script in readme.scripts)  # each checks what it prints
    assert any(script.needs_server for script in readme.scripts)
    assert "langgraph.json" in readme.files
    assert "langgraph-cli[inmem]" in pip_install_line(text, "langgraph-cli[inmem]")
