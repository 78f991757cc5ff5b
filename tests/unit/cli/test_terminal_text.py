"""Untrusted text is neutralised before a terminal: :func:`printable` over arbitrary text,
and every way the CLI's ``Console`` prints (lines, tables, headings, chat lines, notes).
Messages (errors, warnings) are read, not shown verbatim: :func:`one_line` folds their line
breaks, so a driver's error text never prints a ``\\n``."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_recall._internal.terminal import fold_lines, is_dangerous, one_line, printable
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
    console.error(text)
    console.table(["key", "content"], [[text, other], [shorten(other, 20), 1.5]])
    written = OUR_STYLES.sub("", out.getvalue())
    lines = written.split("\n")
    assert lines[-1] == ""  # every line ended by the console itself
    assert not any(is_dangerous(ch) for line in lines for ch in line)
    # one output line per call (the heading adds a blank one, the table has 4)
    assert len(lines) - 1 == 1 + 2 + 1 + 1 + 1 + 1 + 1 + 1 + 4


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


LINE_BREAKS = st.sampled_from(["\n", "\r\n", "\r", "\v", "\f", "\x1c", "\x85", "\u2028", "\u2029"])
message_words = st.lists(
    st.one_of(st.text('abc xyz()"%:;.-', max_size=8), LINE_BREAKS, CONTROLS), max_size=12
).map("".join)


@settings(max_examples=thorough(300), deadline=None)
@given(message_words)
def test_a_message_prints_as_one_line_of_its_words(text: str) -> None:
    """Whatever line breaks a message holds (a driver's error ends with one), it prints as
    one line: every break folded into a space, never the two characters ``\\n``; its words
    stay, in order; other controls are still shown as escapes."""
    shown = one_line(text)
    assert not any(is_dangerous(ch) for ch in shown)
    assert "\\n" not in shown and "\\r" not in shown and "\\u2028" not in shown
    assert shown == shown.strip()
    kept = "".join(ch for ch in text if not is_dangerous(ch))
    assert "".join(ESCAPE.sub("", shown).split()) == "".join(fold_lines(kept).split())
    out = io.StringIO()
    Console(out).error(text)
    assert out.getvalue() == f"error: {shown}\n"


def test_a_folded_break_leaves_no_space_before_closing_punctuation() -> None:
    assert fold_lines('(invalid URI query parameter: "bogus"\n); use x') == (
        '(invalid URI query parameter: "bogus"); use x'
    )
    assert fold_lines("ERROR:  x\n  DETAIL: y\n\n") == "ERROR:  x DETAIL: y"
    assert one_line("tea\nOK erased everything\x1b[2J") == "tea OK erased everything\\x1b[2J"


MALFORMED_DSNS = [  # libpq's message about each ends with a line break
    ("postgresql://h/db?bogus=1", 'invalid URI query parameter: "bogus"'),
    ("postgresql://%zz@h/db", 'invalid percent-encoded token: "%zz"'),
    ("host='a", "unterminated quoted string in connection info string"),
    ("postgresql://[::1", 'matching "]" in IPv6 host address'),
]


@pytest.mark.parametrize(("dsn", "words"), MALFORMED_DSNS)
def test_a_malformed_dsn_is_one_line_of_words_in_the_cli(
    dsn: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from langgraph_recall.cli import main

    for command in (["inspect", "--user", "u"], ["forget", "--user", "u", "--yes"]):
        assert main([*command, "--postgres", dsn]) == 2
        captured = capsys.readouterr()
        assert captured.err.count("\n") == 1 and "\\n" not in captured.err, captured.err
        assert captured.err.startswith("error: malformed Postgres connection string (")
        assert words in captured.err and "); use 'postgresql://" in captured.err


def test_usage_errors_fold_and_escape_what_they_quote(capsys: pytest.CaptureFixture[str]) -> None:
    from langgraph_recall.cli import main

    assert main(["inspect", "--user", "u", "stray\n\x1b[2Jword"]) == 2  # quoted as given
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == "langgraph-recall: error: unrecognized arguments: stray \\x1b[2Jword"
