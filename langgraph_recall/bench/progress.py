"""How a benchmark reports progress: typed events to a callback, and the one bar that shows them.

Every benchmark's ``run(..., progress=...)`` calls ``progress(Progress(...))``: a stage
and, when it counts something, ``done`` of ``total``. :func:`print_progress` (the
default) writes each event as a line on stderr; :class:`ProgressBar` (used by the
``python -m langgraph_recall.bench.<name>`` entry points and by ``langgraph-recall bench``)
draws a tqdm bar on a terminal and prints only finished stages elsewhere.

Example:
    ```python
    from langgraph_recall.bench.progress import Progress, ProgressBar

    with ProgressBar("demo") as bar:
        for i in range(3):
            bar(Progress("steps", i + 1, 3))
    ```
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TextIO

__all__ = ["OnProgress", "Progress", "ProgressBar", "print_progress"]


@dataclass(frozen=True)
class Progress:
    """One progress event: ``done`` of ``total`` steps of ``stage`` (both ``None``: a note)."""

    stage: str
    done: int | None = None
    total: int | None = None

    @property
    def finished(self) -> bool:
        """The last step of a counted stage."""
        return self.total is not None and self.done == self.total

    def __str__(self) -> str:
        if self.done is None or self.total is None:
            return self.stage
        return f"{self.stage} {self.done}/{self.total}"


OnProgress = Callable[[Progress], None]
"""What a benchmark's ``run`` calls with each :class:`Progress` event."""


def print_progress(event: Progress) -> None:
    """One line on stderr per event (the results table goes to stdout)."""
    print(event, file=sys.stderr, flush=True)


class ProgressBar:
    """An :data:`OnProgress` that draws a tqdm bar on a terminal; elsewhere it prints
    ``label: running…`` once, then only finished stages (every event when ``verbose``)."""

    def __init__(self, label: str, *, verbose: bool = False, stream: TextIO | None = None) -> None:
        self.label = label
        self.verbose = verbose
        self.stream: TextIO = stream if stream is not None else sys.stderr
        self.events: list[Progress] = []
        self._bar: Any = None
        if self.stream.isatty():
            from tqdm import tqdm

            self._bar = tqdm(
                total=None,
                desc=label,
                file=self.stream,
                leave=True,
                dynamic_ncols=True,
                bar_format="{desc}: {n_fmt}/{total_fmt} |{bar}| {elapsed} {postfix}",
            )
        else:
            self._print("running…")

    def _print(self, text: str) -> None:
        print(f"{self.label}: {text}", file=self.stream, flush=True)

    def __call__(self, event: Progress) -> None:
        self.events.append(event)
        if self._bar is None:
            if self.verbose or event.finished:
                self._print(str(event).strip())
            return
        if self.verbose:
            self._bar.write(str(event), file=self.stream)
        if event.total:
            if self._bar.total != event.total:
                self._bar.reset(total=event.total)
            self._bar.n = min(event.done or 0, event.total)
        self._bar.set_postfix_str(event.stage.strip()[:50], refresh=True)

    def close(self) -> None:
        """Close the bar (idempotent)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
