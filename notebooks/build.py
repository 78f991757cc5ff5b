"""Generate the walkthrough notebooks from their sources (``python notebooks/build.py``).

Each notebook is authored as a percent-format Python file, ``notebooks/src/<name>.py``
(the jupytext ``py:percent`` convention, read by a converter of our own over
``nbformat``, so no extra dependency): ``# %%`` starts a code cell, ``# %% [markdown]`` a
markdown cell whose lines are comments (``# text``); what comes before the first cell
(the module docstring) is not part of the notebook. The sources are linted by ruff and
type-checked by ``mypy --strict``; the committed ``.ipynb`` files, without outputs, are
what this script writes from them, and ``--check`` (run by the test suite) fails when one
is stale.

Every notebook runs offline on the embedded Postgres (no server, no API key) and switches
to real services and models through the environment variables in its first cell. The
notebooks only import and call the package (and ``bench/``); no logic lives in them.

Usage::

    python notebooks/build.py            # write every notebook
    python notebooks/build.py --check    # exit 1 (naming them) if a notebook is stale
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

__all__ = ["HERE", "SOURCES", "Cell", "build", "main", "parse", "render", "stale"]

HERE = Path(__file__).resolve().parent
"""Where the ``.ipynb`` files are written."""
SOURCES = HERE / "src"
"""The notebooks' percent-format sources, one ``<name>.py`` per notebook."""

CODE_MARK = "# %%"
MARKDOWN_MARK = "# %% [markdown]"

Cell = tuple[Literal["code", "markdown"], str]
"""One cell: its kind and its text (no leading or trailing blank lines)."""


def parse(text: str) -> list[Cell]:
    """The cells of a percent-format source.

    Raises:
        ValueError: A markdown cell holds a line that is not a comment.

    Example:
        ```python
        assert parse("'''doc'''\\n# %% [markdown]\\n# # Title\\n#\\n# text\\n# %%\\nx = 1\\n") == [
            ("markdown", "# Title\\n\\ntext"),
            ("code", "x = 1"),
        ]
        ```
    """
    cells: list[Cell] = []
    kind: Literal["code", "markdown"] | None = None
    lines: list[str] = []

    def close() -> None:
        if kind is not None:
            cells.append((kind, "\n".join(lines).strip("\n")))

    for number, line in enumerate(text.splitlines(), start=1):
        if line.rstrip() in (CODE_MARK, MARKDOWN_MARK):
            close()
            kind = "markdown" if line.rstrip() == MARKDOWN_MARK else "code"
            lines = []
        elif kind == "markdown":
            if line and not line.startswith("#"):
                raise ValueError(f"line {number}: a markdown cell holds only # comments")
            lines.append(line[2:] if line.startswith("# ") else line[1:])
        elif kind == "code":
            lines.append(line)
    close()
    return cells


def build(source: Path) -> nbformat.NotebookNode:
    """The notebook of one source file (no outputs; cell ids ``<nn>-<index>``)."""
    notebook: nbformat.NotebookNode = new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.metadata["language_info"] = {"name": "python"}
    notebook.cells = [
        new_code_cell(text) if kind == "code" else new_markdown_cell(text)
        for kind, text in parse(source.read_text(encoding="utf-8"))
    ]
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"{source.stem[:2]}-{index:02d}"
    nbformat.validate(notebook)
    return notebook


def render(source: Path) -> str:
    """The ``.ipynb`` text of one source, as :func:`nbformat.writes` writes it."""
    text: str = nbformat.writes(build(source))
    return text + "\n"


def _target(source: Path) -> Path:
    return HERE / f"{source.stem}.ipynb"


def _sources(names: Sequence[str] = ()) -> list[Path]:
    return [SOURCES / f"{n}.py" for n in names] if names else sorted(SOURCES.glob("*.py"))


def stale(names: Sequence[str] = ()) -> list[Path]:
    """The ``.ipynb`` files that differ from what their sources generate (or are missing)."""
    return [
        _target(source)
        for source in _sources(names)
        if not _target(source).is_file()
        or _target(source).read_text(encoding="utf-8") != render(source)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Write every notebook (or the named ones); ``--check``: exit 1 if one is stale."""
    parser = argparse.ArgumentParser(prog="python notebooks/build.py", description=__doc__)
    parser.add_argument("names", nargs="*", help="notebooks to build (default: all)")
    parser.add_argument("--check", action="store_true", help="write nothing; fail if stale")
    args = parser.parse_args(argv)
    if args.check:
        outdated = stale(args.names)
        for path in outdated:
            print(f"stale: {path.relative_to(HERE.parent)}", file=sys.stderr)
        return 1 if outdated else 0
    for source in _sources(args.names):
        _target(source).write_text(render(source), encoding="utf-8")
        print(f"wrote {_target(source).relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
