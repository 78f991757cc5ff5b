"""README.md as runnable scripts (pure: parsing only).

Conventions the README follows (HTML comments on the line just before a fenced block, so
GitHub shows nothing):

* every ````` ```python ````` block is a script run on its own, as written;
* ``<!-- readme-test: continue -->``: this block continues the previous Python block (both
  run in one process, in order);
* ``<!-- readme-test: file NAME -->``: the block's text is written to ``NAME`` in the
  directory the scripts run in (e.g. the ``langgraph.json`` of the server section);
* ``<!-- readme-test: langgraph dev -->``: the block runs while ``langgraph dev`` serves that
  directory; the README's default address ``127.0.0.1:2024`` is replaced by the test's port;
* ``print(...)  # TEXT``: ``TEXT`` must appear in what the script prints, in that order.

``tests/unit/test_readme_parser.py`` pins these rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Readme", "Script", "parse_readme", "pip_install_line"]

FENCE = re.compile(r"^```(\w*)\s*$")
MARKER = re.compile(r"^<!--\s*readme-test:\s*(.+?)\s*-->\s*$")
EXPECT = re.compile(r"^\s*print\(.*\)\s+#\s+(.+?)\s*$")


@dataclass
class Script:
    """One runnable script: the code of one or more README blocks and what it must print."""

    code: str
    line: int
    needs_server: bool = False
    expected: list[str] = field(default_factory=list)


@dataclass
class Readme:
    """The scripts and files a README asks for."""

    scripts: list[Script]
    files: dict[str, str]


def _blocks(text: str) -> list[tuple[str, str, int, str | None]]:
    """``(language, body, first line number, marker)`` of every fenced block."""
    lines = text.splitlines(keepends=True)
    blocks: list[tuple[str, str, int, str | None]] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index].rstrip("\n"))
        if opening is None:
            index += 1
            continue
        previous = next(
            (lines[i].strip() for i in range(index - 1, -1, -1) if lines[i].strip()), ""
        )
        found = MARKER.match(previous)
        end = index + 1
        while end < len(lines) and lines[end].rstrip("\n") != "```":
            end += 1
        body = "".join(lines[index + 1 : end])
        blocks.append((opening.group(1), body, index + 2, found.group(1) if found else None))
        index = end + 1
    return blocks


def parse_readme(text: str) -> Readme:
    """The scripts (Python blocks, continuations joined) and files of a README."""
    scripts: list[Script] = []
    files: dict[str, str] = {}
    for language, body, line, marker in _blocks(text):
        if marker and marker.startswith("file "):
            files[marker.removeprefix("file ").strip()] = body
            continue
        if language != "python":
            continue
        expected = [m.group(1) for m in map(EXPECT.match, body.splitlines()) if m]
        if marker == "continue":
            if not scripts:
                raise ValueError(f"README line {line}: 'continue' with no Python block before")
            scripts[-1].code += "\n" + body
            scripts[-1].expected += expected
            continue
        if marker not in (None, "langgraph dev"):
            raise ValueError(f"README line {line}: unknown readme-test marker {marker!r}")
        scripts.append(
            Script(body, line, needs_server=marker == "langgraph dev", expected=expected)
        )
    return Readme(scripts, files)


def pip_install_line(text: str, must_contain: str) -> list[str]:
    """The requirements of the first ``pip install ...`` line containing ``must_contain``."""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("pip install ") and must_contain in line:
            return [part.strip('"') for part in line.removeprefix("pip install ").split()]
    raise ValueError(f"the README has no 'pip install' line with {must_contain!r}")
