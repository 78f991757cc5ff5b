"""Every ```python example of every docstring in ``langgraph_recall`` runs, as written.

Each block runs in a fresh namespace (``module:qualname#n`` ids). The only names a block may
use without defining them:

* ``DB_URI``: a fresh, empty Postgres database, one for this whole module (blocks use their
  own thread ids / namespaces, so they never see each other's data); dropped at the end;
* ``REDIS_URL``: the suite's Redis server, on a logical database of its own whose keys are
  deleted at the end;
* ``PGVECTOR_URI``: a fresh database on the session's embedded Postgres (pgvector), one for
  the module, started only when a block names it.

A block may ``await`` at top level; it then runs in its own event loop. Every block runs in
an empty temporary working directory with ``LANGGRAPH_RECALL_HOME`` there too (an example
never touches the user's embedded server), and the environment variables it sets are
restored afterwards.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import langgraph_recall
from tests._databases import create_database
from tests.conftest import POSTGRES_URI, _dsn_with_db, service_missing
from tests.docexamples import Example, all_examples

EXAMPLES = all_examples(langgraph_recall)
GIVEN = ("DB_URI", "REDIS_URL", "PGVECTOR_URI")
REDIS_DOC_DB = 15  # the logical Redis database the examples write to


class _Databases:
    """The module's databases and Redis URL, made the first time a block needs them."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self._request = request
        self._made: dict[str, str] = {}
        self._drops: list[tuple[str, str]] = []  # (admin DSN, database name)

    def _fresh_db(self, admin_dsn: str) -> str:
        import psycopg

        name = f"lgm_doc_{uuid.uuid4().hex[:12]}"
        try:
            with psycopg.connect(admin_dsn, autocommit=True, connect_timeout=5) as admin:
                create_database(admin, name)
        except psycopg.OperationalError as exc:
            service_missing(f"Postgres at {admin_dsn}", exc)
        self._drops.append((admin_dsn, name))
        return _dsn_with_db(admin_dsn, name)

    def _make(self, given: str, test: pytest.FixtureRequest) -> str:
        if given == "DB_URI":
            return self._fresh_db(POSTGRES_URI)
        if given == "PGVECTOR_URI":
            server = self._request.getfixturevalue("embedded_server")
            return self._fresh_db(server.dsn())
        base = test.getfixturevalue("redis_url").rsplit("/", 1)[0]  # checked to answer PING
        return f"{base}/{REDIS_DOC_DB}"

    def get(self, given: str, test: pytest.FixtureRequest) -> str:
        """The value of ``given``; ``test`` is the request of the test that needs it."""
        if given not in self._made:
            self._made[given] = self._make(given, test)
        return self._made[given]

    def close(self) -> None:
        import psycopg

        for admin_dsn, name in self._drops:
            with psycopg.connect(admin_dsn, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if "REDIS_URL" in self._made:
            import redis

            client = redis.Redis.from_url(self._made["REDIS_URL"])
            try:
                batch = list(client.scan_iter(count=1000))
                if batch:
                    client.delete(*batch)
            finally:
                client.close()


@pytest.fixture(scope="module")
def databases(request: pytest.FixtureRequest) -> Iterator[_Databases]:
    made = _Databases(request)
    try:
        yield made
    finally:
        made.close()


def _run(example: Example, namespace: dict[str, Any]) -> None:
    code = compile(example.code, f"<{example.id}>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    if code.co_flags & inspect.CO_COROUTINE:
        asyncio.run(eval(code, namespace))
    else:
        exec(code, namespace)


@pytest.mark.parametrize("example", EXAMPLES, ids=[example.id for example in EXAMPLES])
def test_docstring_example_runs(
    example: Example,
    databases: _Databases,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    namespace: dict[str, Any] = {"__name__": "__docexample__"}
    namespace.update(
        {given: databases.get(given, request) for given in GIVEN if given in example.code}
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LANGGRAPH_RECALL_HOME", str(tmp_path / "home"))  # never the user's
    environ = dict(os.environ)
    try:
        _run(example, namespace)
    finally:
        os.environ.clear()
        os.environ.update(environ)


def test_the_collector_sees_modules_classes_methods_and_subpackages() -> None:
    ids = {example.id for example in EXAMPLES}
    assert len(ids) == len(EXAMPLES) >= 200  # unique ids
    assert {
        "langgraph_recall:<module>#0",  # the package's own docstring
        "langgraph_recall.lease.memory:InMemoryLeaseBackend#0",  # a class
        "langgraph_recall.extraction.pii:PIIFilter.redact#0",  # a method
        "langgraph_recall.cli._backends:open_store#0",  # a module of a subpackage
    } <= ids
