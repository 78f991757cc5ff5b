"""The notebooks are generated from their percent-format sources (``notebooks/build.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOKS = ROOT / "notebooks"


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_notebooks_build", NOTEBOOKS / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _builder()


def test_every_notebook_has_a_source_and_none_is_stale() -> None:
    notebooks = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    sources = sorted(p.stem for p in (NOTEBOOKS / "src").glob("*.py"))
    assert notebooks == sources and len(notebooks) >= 4
    assert build.stale() == [], "run python notebooks/build.py"
    assert build.main(["--check"]) == 0


def test_committed_notebooks_have_no_outputs() -> None:
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, path.name


def test_percent_cells_become_notebook_cells() -> None:
    text = (
        '"""The header is not a cell."""\n\n# ruff: noqa: E402\n\n'
        "# %% [markdown]\n# # Title\n#\n# Some *text*.\n\n"
        "# %%\nimport os\n\nprint(os.sep)\n\n"
        "# %%\n# a comment in code stays\nx = 1\n"
    )
    assert build.parse(text) == [
        ("markdown", "# Title\n\nSome *text*."),
        ("code", "import os\n\nprint(os.sep)"),
        ("code", "# a comment in code stays\nx = 1"),
    ]


def test_a_markdown_cell_holds_only_comments() -> None:
    with pytest.raises(ValueError, match="line 3"):
        build.parse("# %% [markdown]\n# fine\nnot a comment\n")


def test_a_changed_source_makes_its_notebook_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "src").mkdir()
    source = tmp_path / "src" / "07_demo.py"
    source.write_text("# %%\nprint(1)\n")
    monkeypatch.setattr(build, "HERE", tmp_path)
    monkeypatch.setattr(build, "SOURCES", tmp_path / "src")
    assert build.stale() == [tmp_path / "07_demo.ipynb"]  # missing
    assert build.main([]) == 0
    notebook = nbformat.read(tmp_path / "07_demo.ipynb", as_version=4)
    assert [(c.cell_type, c.source, c.id) for c in notebook.cells] == [
        ("code", "print(1)", "07-00")
    ]
    assert build.stale() == []
    source.write_text("# %%\nprint(2)\n")
    assert build.stale() == [tmp_path / "07_demo.ipynb"]
    assert build.main(["--check"]) == 1
