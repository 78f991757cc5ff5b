"""Benchmarks (``langgraph-recall bench``, ``python -m langgraph_recall.bench.<name>``):
side-by-side comparisons in one process."""
