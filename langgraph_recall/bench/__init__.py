"""Benchmarks (``python -m bench.<name>``): side-by-side comparisons in one process."""
