"""Bar charts of benchmark results (pure: results dicts in, a PNG out).

Each result is the JSON form of :class:`langgraph_recall.cli.bench.BenchResult`; its
``plot`` entry holds ``labels`` (one bar group each), ``series`` (name → one value per
label), ``ylabel`` and an optional short ``title``. One subplot per result (two per row), grouped
bars, values printed on the bars.

Example:
    ```python
    from langgraph_recall.cli.plots import plot_results

    result = {"title": "checkpointers", "plot": {"labels": ["InMemory", "Redis"],
              "series": {"x InMemory": [1.0, 1.3]}, "ylabel": "ratio (lower is better)"}}
    plot_results([result], "bench.png")  # a bar chart, one group per label
    ```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langgraph_recall.cli._console import CliError

__all__ = ["plot_results", "plottable"]


def plottable(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The results that have something to draw (non-empty ``plot.labels`` and series).

    Example:
        ```python
        from langgraph_recall.cli.plots import plottable

        assert plottable([{"title": "x", "plot": {"labels": [], "series": {}}}]) == []
        ```
    """
    keep = []
    for result in results:
        plot = result.get("plot") or {}
        if plot.get("labels") and any(plot.get("series", {}).values()):
            keep.append(result)
    return keep


def plot_results(results: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Draw ``results`` side by side and save a PNG at ``path``; returns the path.

    Raises:
        CliError: matplotlib is missing, or nothing is plottable.

    Example:
        ```python
        from pathlib import Path

        from langgraph_recall.cli.plots import plot_results

        result = {"title": "store", "plot": {"labels": ["put", "search"],
                  "series": {"ms": [1.5, 4.0]}, "ylabel": "milliseconds"}}
        plot_results([result], "store.png")
        assert Path("store.png").stat().st_size > 0
        ```
    """
    drawable = plottable(results)
    if not drawable:
        raise CliError("no benchmark results to plot (every benchmark was skipped or failed)")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise CliError('plotting needs matplotlib: pip install matplotlib (or ".[dev]")') from exc

    columns = min(2, len(drawable))
    rows = (len(drawable) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(6.0 * columns, 4.4 * rows), squeeze=False)
    flat = [axis for row in axes for axis in row]
    for axis in flat[len(drawable) :]:
        axis.set_visible(False)
    for axis, result in zip(flat, drawable, strict=False):
        plot = result["plot"]
        labels = [str(label) for label in plot["labels"]]
        series = {name: values for name, values in plot["series"].items() if values}
        width = 0.8 / max(1, len(series))
        for index, (name, values) in enumerate(series.items()):
            positions = [i + (index - (len(series) - 1) / 2) * width for i in range(len(labels))]
            numbers = [float(v) if v is not None else 0.0 for v in values]
            bars = axis.bar(positions, numbers, width=width, label=name)
            axis.bar_label(
                bars, labels=[f"{v:.2f}" if v < 10 else f"{v:.0f}" for v in numbers], fontsize=7
            )
        axis.set_xticks(range(len(labels)))
        axis.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
        axis.set_ylabel(str(plot.get("ylabel", "")))
        axis.set_title(str(plot.get("title") or result.get("name", "")), fontsize=10)
        if len(series) > 1:
            axis.legend(fontsize=7)
    figure.tight_layout()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target, dpi=110)
    plt.close(figure)
    return target
