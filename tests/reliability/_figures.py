"""The figures the reliability suite reports (faults survived, inputs tried, leaks...).

Tests get the session's :class:`Figures` from the ``figures`` fixture; when the
environment variable ``LGM_RELIABILITY_FIGURES`` names a file the session writes them
there as JSON at the end (``bench/reliability_report.py`` reads it).
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["FIGURES_ENV", "Figures"]

FIGURES_ENV = "LGM_RELIABILITY_FIGURES"


class Figures:
    """Thread-safe counters and lists keyed by name."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.lock = threading.Lock()

    def add(self, name: str, amount: float = 1) -> None:
        with self.lock:
            self.values[name] = self.values.get(name, 0) + amount

    def extend(self, name: str, items: list[Any]) -> None:
        with self.lock:
            self.values.setdefault(name, []).extend(items)

    def put(self, name: str, value: Any) -> None:
        with self.lock:
            self.values[name] = value
