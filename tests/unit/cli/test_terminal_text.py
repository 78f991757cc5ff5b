"""Untrusted text is neutralised before a terminal: :func:`printable` over arbitrary text,
and every way the CLI's ``Console`` prints (lines, tables, headings, chat lines, notes)."""

from __future__ import annotations

import io
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_recall._internal.terminal import is_dangerous, printable
from langgraph_recall.cli._console import Console, format_table, shorten
from tests._hypothesis import thorough

CONTROLS = st.sampled_from(
    [chr(c) for c in range(0x20)]
    + ["\x7f"]
    + [chr(c) for c in range(0x80, 0xA0)]
    + ["\u061c", "\u200b", "\u200e", "\u200f", "\u2028", "\u2029", "\ufeff"]
    + [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
    + ["\U000e0041", "\ud800"]
)
hostile = st.lists(st.one_of(st.text(max_size=10), CONTROLS), max_size=12).map("".join)
ESCAPE = re.compile(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|[tnr])")
OUR_STYLES = re.compile(r"\x1b\[[0-9;]*m")


def _unescape_count(text: str) -> int:
    return len(ESCAPE.findall(text))


@settings(max_examples=thorough(500), deadline=None)
@given(hostile)
def test_printable_shows_every_dangerous_code_point_and_keeps_the_rest(text: str) -> None:
    shown = printable(text)
    assert not any(is_dangerous(ch) for ch in shown)
    dangerous = [ch for ch in text if is_dangerous(ch)]
    assert _unescape_count(shown) >= len(dangerous)
    if not dangerous:
        assert shown == text
    # what is left once the escapes are removed is the text without its controls (a
    # literal backslash could read as the start of an escape: only texts without one)
    if "\\" not in text:
        assert ESCAPE.sub("", shown) == "".join(ch for ch in text if not is_dangerous(ch))
    assert printable(shown) == shown  # idempotent: printing twice changes nothing


@settings(max_examples=thorough(300), deadline=None)
@given(hostile, hostile, st.booleans())
def test_console_never_writes_a_control_it_did_not_make(text: str, other: str, color: bool) -> None:
    out = io.StringIO()
    console = Console(out, color=color)
    console.line(text)
    console.heading(text)
    console.step(text)
    console.say("user", text)
    console.note(text)
    console.ok(text)
    console.warn(text)
    console.table(["key", "content"], [[text, other], [shorten(other, 20), 1.5]])
    written = OUR_STYLES.sub("", out.getvalue())
    lines = written.split("\n")
    assert lines[-1] == ""  # every line ended by the console itself
    assert not any(is_dangerous(ch) for line in lines for ch in line)
    # one output line per call (the heading adds a blank one, the table has 4)
    assert len(lines) - 1 == 1 + 2 + 1 + 1 + 1 + 1 + 1 + 4


def test_a_forged_line_stays_in_its_cell() -> None:
    table = format_table(["key", "content"], [["k1", "tea\nOK erased everything\x1b[2J"]])
    assert table.splitlines()[-1] == "k1   tea\\nOK erased everything\\x1b[2J"


@settings(max_examples=thorough(100), deadline=None)
@given(hostile)
def test_log_lines_about_failures_show_controls_as_escapes(text: str) -> None:
    from langgraph_recall.errors import BackendUnavailableError
    from langgraph_recall.lease._recovery import describe_failure

    line = describe_failure(BackendUnavailableError(f"Redis at h:1 refused thread {text}"))
    assert not any(is_dangerous(ch) for ch in line)
    assert line.startswith("BackendUnavailableError: Redis at h:1 refused thread ")
