"""The QA harness's cache: one append-only JSON-lines file, so a run can stop and resume.

Every finished step is one line ``{"key": ..., "value": ...}``, flushed at once: an
answer (keyed by conversation, question, method, model and prompt hash), a verdict (keyed
by question, gold answer, generated answer, judge model and judge prompt hash) and the
ingest cursor of a conversation (how many turns of it are in the store). Reading the file
back, the last line of a key wins; a line cut off by an interruption is ignored.

Example:
    ```python
    import tempfile
    from pathlib import Path
    from langgraph_recall.bench._qa_cache import QACache, cache_key

    path = Path(tempfile.mkdtemp()) / "cache.jsonl"
    cache = QACache(path)
    cache.put(cache_key("answer", "conv-26", "q1"), {"answer": "Paris"})
    assert QACache(path).get(cache_key("answer", "conv-26", "q1")) == {"answer": "Paris"}
    ```
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

__all__ = ["QACache", "cache_key", "text_hash"]


def text_hash(*texts: str) -> str:
    """A short stable hash of some texts (prompts, configurations).

    Example:
        >>> text_hash("a", "b") == text_hash("a", "b") != text_hash("ab")
        True
    """
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()[:16]


def cache_key(*parts: object) -> str:
    """The key of one cached step (a hash of its parts, in order).

    Example:
        >>> cache_key("answer", 1) != cache_key("answer", "1")
        True
    """
    return hashlib.sha256(json.dumps(parts, default=repr).encode("utf-8")).hexdigest()


class QACache:
    """A dict persisted as JSON lines at ``path`` (``None``: in memory only).

    Attributes:
        hits / misses: How many ``get`` calls found / did not find their key.
    """

    def __init__(self, path: Path | str | None) -> None:
        self.path = Path(path) if path is not None else None
        self._values: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        if self.path is not None and self.path.exists():
            raw = self.path.read_bytes()
            if raw and not raw.endswith(b"\n"):  # end a line cut off by an interruption
                with self.path.open("ab") as out:
                    out.write(b"\n")
            with self.path.open(encoding="utf-8") as lines:
                for line in lines:
                    try:
                        record = json.loads(line)
                    except ValueError:  # cut off by an interruption
                        continue
                    if isinstance(record, dict) and "key" in record:
                        self._values[str(record["key"])] = record.get("value")

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: str) -> Any:
        """The value stored under ``key``, or ``None``."""
        with self._lock:
            value = self._values.get(key)
            if value is None:
                self.misses += 1
            else:
                self.hits += 1
            return value

    def put(self, key: str, value: Any) -> None:
        """Store ``value`` (JSON data) under ``key`` and append it to the file now."""
        line = json.dumps({"key": key, "value": value}, ensure_ascii=False)
        with self._lock:
            self._values[key] = value
            if self.path is None:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(line + "\n")
                out.flush()
