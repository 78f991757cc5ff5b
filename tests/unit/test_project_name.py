"""The project has one name: no tracked file spells the first one, except the changelog's
paragraph that explains the rename (and what a 0.1 user has to change).

The old name is written here only as a pattern built from its parts, so this file does not
match itself."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from langgraph_recall import __version__
from tests.conftest import services_required

ROOT = Path(__file__).resolve().parents[2]
OLD_NAME = re.compile("langgraph" + r"[-_]?" + "memory", re.I)
"""Every spelling of the first name: distribution, import package, environment variables
(``LANGGRAPH_..._URI``), the error class (``LangGraph...Error``)."""


def tracked_files() -> list[Path]:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        if services_required():  # CI runs from a clone: the check must run there
            pytest.fail("not a git checkout: the old-name check needs `git ls-files`")
        pytest.skip("not a git checkout (an sdist has no history to check)")
    return [ROOT / name for name in listed.decode().split("\0") if name]


def renamed_section(changelog: str) -> tuple[int, int]:
    """Character span of the 0.2.0 release's "Renamed" paragraph (up to the next heading)."""
    start = changelog.index("### Renamed")
    end = changelog.index("\n#", start + 1)
    return start, end


def test_no_tracked_file_names_the_old_project_except_the_rename_note() -> None:
    files = tracked_files()
    assert ROOT / "CHANGELOG.md" in files and ROOT / "pyproject.toml" in files
    offending: list[str] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary files; deleted but not yet committed
        allowed = renamed_section(text) if path.name == "CHANGELOG.md" else (0, 0)
        for found in OLD_NAME.finditer(text):
            if not allowed[0] <= found.start() < allowed[1]:
                line = text.count("\n", 0, found.start()) + 1
                offending.append(f"{path.relative_to(ROOT)}:{line}: {found.group(0)}")
    assert offending == []


def test_the_rename_note_is_in_this_release_and_names_both_names() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    start, end = renamed_section(changelog)
    release = changelog.rindex("## [", 0, start)
    assert changelog.startswith(f"## [{__version__}]", release)
    note = changelog[start:end]
    assert OLD_NAME.search(note) is not None
    assert "langgraph-recall" in note and "langgraph_recall" in note


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("pip install " + "langgraph" + "-memory", True),
        ("import " + "langgraph" + "_memory", True),
        ("LANGGRAPH" + "_MEMORY_POSTGRES_URI", True),
        ("class " + "LangGraph" + "MemoryError", True),
        ("langgraph-recall gives LangGraph agents memory", False),
        ("a LangGraph memory store", False),
    ],
)
def test_the_pattern_finds_every_spelling_and_nothing_else(text: str, found: bool) -> None:
    assert (OLD_NAME.search(text) is not None) is found
