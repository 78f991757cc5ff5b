"""Integration fixtures: the packaged wheel in a fresh virtualenv (``installed_venv``).

The embedded Postgres fixtures (``embedded_server``, ``embedded_dsn``) live in
``tests/conftest.py``, shared by every test directory (one server per test process).
"""

from __future__ import annotations

from tests.integration.packaging._venv import installed_venv  # noqa: F401 (a fixture)
