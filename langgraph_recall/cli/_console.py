"""Terminal output of the CLI: headings, chat lines, notes and plain-text tables.

Colour is used only on a terminal (and never when ``NO_COLOR`` is set), so captured
output — tests, pipes, notebooks — is plain text. Every line goes through
:func:`~langgraph_recall._internal.terminal.printable`: stored text (memories, thread ids,
history, model answers) reaches the terminal with its control characters shown as
escapes (``\\x1b``), never obeyed, and cannot start a line of its own. Messages — errors,
warnings, progress and notes — go through
:func:`~langgraph_recall._internal.terminal.one_line` instead: a line break in them (a
driver's error text ends with one) is folded into a space, never shown as ``\\n``.

Example:
    ```python
    import io

    from langgraph_recall.cli._console import Console, format_table

    out = io.StringIO()
    Console(out).heading("Session 1")
    assert "Session 1" in out.getvalue()
    assert format_table(["a", "b"], [["1", "2"]]).splitlines()[-1] == "1  2"
    ```
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from langgraph_recall._internal.terminal import one_line, printable

__all__ = ["CliError", "Console", "format_table", "shorten"]


class CliError(Exception):
    """A problem the user can fix; the message says how. Printed without a traceback."""


_STYLES = {
    "bold": "1",
    "dim": "2",
    "green": "32",
    "yellow": "33",
    "cyan": "36",
    "magenta": "35",
    "red": "31",
}


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis.

    Example:
        ```python
        from langgraph_recall.cli._console import shorten

        assert shorten("a  b\\nc", 10) == "a b c"
        assert shorten("abcdef", 4) == "abc…"
        ```
    """
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


def format_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table with padded columns (numbers right-aligned).

    Example:
        ```python
        from langgraph_recall.cli._console import format_table

        table = format_table(["saver", "ms"], [["memory", 1.5]])
        assert table.splitlines() == ["saver      ms", "------  -----", "memory  1.500"]
        ```
    """

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.1f}"
        return "" if value is None else printable(value)

    cells = [[cell(v) for v in row] for row in rows]
    widths = [len(h) for h in header]
    for row in cells:
        for i, value in enumerate(row[: len(widths)]):
            widths[i] = max(widths[i], len(value))
    numeric = [
        all(isinstance(row[i], int | float) for row in rows if i < len(row) and row[i] is not None)
        and any(i < len(row) and row[i] is not None for row in rows)
        for i in range(len(header))
    ]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(widths[i]) if numeric[i] else v.ljust(widths[i])
            for i, v in enumerate(values[: len(widths)])
        ]
        return "  ".join(parts).rstrip()

    out = [line(list(header)), "  ".join("-" * w for w in widths)]
    out += [line(row) for row in cells]
    return "\n".join(out)


class Console:
    """Writes the CLI's output to a stream (stdout by default).

    Args:
        stream: Where to write.
        color: Force colour on/off; default: on for a terminal unless ``NO_COLOR`` is set.

    Example:
        ```python
        import io

        from langgraph_recall.cli._console import Console

        out = io.StringIO()
        Console(out, color=False).say("user", "hello")
        assert out.getvalue().split() == ["user:", "hello"]
        ```
    """

    def __init__(self, stream: TextIO | None = None, *, color: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        if color is None:
            color = bool(getattr(self.stream, "isatty", lambda: False)()) and not os.environ.get(
                "NO_COLOR"
            )
        self.color = color

    def style(self, text: str, *names: str) -> str:
        """``text`` (made :func:`printable`) wrapped in ANSI styles when colour is on."""
        text = printable(text)
        if not self.color or not names:
            return text
        codes = ";".join(_STYLES[name] for name in names)
        return f"\033[{codes}m{text}\033[0m"

    def line(self, text: str = "") -> None:
        """Print one line of :func:`printable` text: a control character in it (a line
        break included) is shown as its escape."""
        self._write(printable(text))

    def lines(self, text: str) -> None:
        """Print the lines of a multi-line text of the CLI's own (each :meth:`line`)."""
        for row in text.split("\n"):
            self.line(row)

    def _write(self, text: str) -> None:
        """Write one finished line (characters the stream cannot encode are replaced)."""
        try:
            print(text, file=self.stream, flush=True)
        except UnicodeEncodeError:
            encoding = getattr(self.stream, "encoding", None) or "ascii"
            safe = text.encode(encoding, errors="replace").decode(encoding)
            print(safe, file=self.stream, flush=True)

    def heading(self, text: str) -> None:
        """A section heading with a blank line before it."""
        self.line()
        self._write(self.style(f"== {text} ", "bold", "cyan"))

    def message(self, mark: str, text: str, *styles: str) -> None:
        """One line: ``mark`` (the CLI's own words) and the message ``text`` (:func:`one_line`:
        line breaks folded, controls escaped)."""
        self._write(self.style(mark + one_line(text), *styles))

    def step(self, text: str) -> None:
        """A progress line."""
        self.message("-> ", text, "dim")

    def say(self, role: str, text: str) -> None:
        """One chat line (``user`` / ``assistant``)."""
        label = f"{role:>9}: "
        colour = "green" if role == "user" else "magenta"
        self._write(self.style(label, "bold", colour) + printable(text))

    def note(self, text: str) -> None:
        """An indented remark about what just happened."""
        self.message("           ", text, "yellow")

    def ok(self, text: str) -> None:
        """A success line."""
        self.message("OK ", text, "green")

    def warn(self, text: str) -> None:
        """A warning line."""
        self.message("!! ", text, "yellow", "bold")

    def error(self, text: str) -> None:
        """An error line (``error: ...``), for the message of an exception."""
        self.message("error: ", text)

    def table(self, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """Print a :func:`format_table`."""
        for row in format_table(header, rows).splitlines():
            self.line("  " + row)
