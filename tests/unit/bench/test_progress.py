"""The benchmarks' progress events and the one bar that shows them."""

from __future__ import annotations

import io

import pytest

from langgraph_recall.bench.progress import Progress, ProgressBar, print_progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_an_event_reads_as_its_stage_and_count() -> None:
    assert str(Progress("invokes", 3, 30)) == "invokes 3/30"
    assert str(Progress("loaded 10 memories")) == "loaded 10 memories"
    assert Progress("invokes", 30, 30).finished and not Progress("invokes", 3, 30).finished
    assert not Progress("a note").finished


def test_the_bar_follows_the_counts_on_a_terminal() -> None:
    with ProgressBar("x", stream=_Terminal()) as bar:
        bar(Progress("invokes", 3, 30))
        bar(Progress("half a line"))
        assert bar.events == [Progress("invokes", 3, 30), Progress("half a line")]
        assert bar._bar.total == 30 and bar._bar.n == 3
    assert bar._bar is None  # closed


def test_the_bar_prints_finished_stages_when_piped() -> None:
    out = io.StringIO()
    with ProgressBar("ckpt", stream=out) as bar:
        for event in (Progress("invokes", 3, 30), Progress("invokes", 30, 30), Progress("note")):
            bar(event)
    assert out.getvalue() == "ckpt: running…\nckpt: invokes 30/30\n"


def test_verbose_prints_every_event_when_piped() -> None:
    out = io.StringIO()
    with ProgressBar("ckpt", verbose=True, stream=out) as bar:
        bar(Progress("invokes", 3, 30))
        bar(Progress("note"))
    assert out.getvalue() == "ckpt: running…\nckpt: invokes 3/30\nckpt: note\n"


def test_print_progress_writes_one_line_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    print_progress(Progress("stage", 1, 2))
    assert capsys.readouterr().err == "stage 1/2\n"
