"""The release of this package, in a module of its own so that any module may read it
without importing the package's ``__init__`` (which imports some of them lazily)."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.2.0"
"""The release (the only place it is written: the build reads it, see ``pyproject.toml``)."""
