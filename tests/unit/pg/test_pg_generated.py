"""The sync half of the Postgres layer is generated from the async one (scripts/unasync.py),
including its imports, which a renamed module may sort elsewhere."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("unasync_pg", ROOT / "scripts" / "unasync.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["unasync_pg"] = module
    spec.loader.exec_module(module)
    return module


unasync = _tool()


def test_the_layer_is_a_registered_pair() -> None:
    pairs = {(p.source, p.target) for p in unasync.PAIRS}
    assert ("langgraph_memory/_pg/run_async.py", "langgraph_memory/_pg/run_sync.py") in pairs


def test_renamed_imports_are_sorted_again() -> None:
    source = "import asyncio\nimport contextlib\n\nx = asyncio.Lock(), contextlib\n"
    text = unasync.transform(source, {"asyncio": "threading"})
    assert text.startswith("import threading\nimport contextlib")  # the raw transform
    formatted = unasync._format(text, ROOT / "langgraph_memory" / "_pg" / "generated.py")
    assert formatted == "import contextlib\nimport threading\n\nx = threading.Lock(), contextlib\n"


def test_the_sync_connector_has_no_async_left() -> None:
    text = (ROOT / "langgraph_memory" / "_pg" / "run_sync.py").read_text()
    for word in ("async ", "await ", "asyncio", "Async", "_gate", "unasync:"):
        assert word not in text.split("\n", 2)[2], word  # past the "generated" header
