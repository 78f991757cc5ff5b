"""Empty test databases made ahead of the tests that need them and recycled behind them.

A ``CREATE DATABASE`` and a ``DROP DATABASE`` cost a test 0.1-0.3 s each, mostly waiting for
the server to write and sync the copy of ``template1``. :class:`ScratchDatabases` keeps a few
empty databases ready on one server and, from a background thread, empties the databases
finished tests give back so that later tests of the same process reuse them: every other
session on it is ended, every schema is dropped (with what is in it, extensions included),
its large objects are unlinked, ``public`` is made again as a new database has it (owned by
``pg_database_owner``, usable by everyone) and the database's own settings are reset. That
takes ~40 ms against ~300 ms for a drop and a create. The emptied database is checked
against what a new one holds (:func:`leftovers`); one that still holds anything is dropped
instead, so no test sees anything of an earlier one. Each test gets a database named
``lgm_test_<hex>``, empty as ``CREATE DATABASE`` makes it, that no running test uses.

Cloning a database on which ``setup()`` already ran (``CREATE DATABASE ... TEMPLATE``) was
measured slower than ``CREATE DATABASE`` + ``setup()`` here (0.13 s against 0.07 + 0.03 s on
PG 15, 0.3 s against 0.16 + 0.07 s on the embedded PG 18), so the tests keep running
``setup()`` themselves, which also keeps the migrations under test on every run.

Each database commits without waiting for its WAL to reach the disk
(``ALTER DATABASE ... SET synchronous_commit = off``): a commit costs 0.3 ms instead of 2 ms on
the shared PG 15 here, and no test crashes the shared server, the one event that setting
gives up data on. Durability is tested on the clusters the reliability tests build for it.
"""

from __future__ import annotations

import threading
import uuid
from collections import deque
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

__all__ = ["ScratchDatabases", "create_database", "empty_database", "leftovers"]

AHEAD = 2
"""Empty databases kept ready per server and test process."""


_SETTINGS = ("synchronous_commit=off",)
"""The database-level settings every test database has (:func:`create_database`)."""


def create_database(
    admin: psycopg.Connection[Any], name: str, *, template: str | None = None
) -> None:
    """``CREATE DATABASE name`` (a copy of ``template``, if given) on ``admin``'s server, set
    to commit without waiting for the disk (see the module's docstring); every test
    database is made by it."""
    copy = f' TEMPLATE "{template}"' if template else ""
    admin.execute(f'CREATE DATABASE "{name}"{copy}')
    for setting in _SETTINGS:
        admin.execute(f'ALTER DATABASE "{name}" SET {setting.replace("=", " = ")}')


_LEFTOVERS = """
SELECT 'schema ' || n.nspname || ' owner ' || pg_get_userbyid(n.nspowner)
       || ' acl ' || coalesce(n.nspacl::text, '-')
FROM pg_namespace n
WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
  AND NOT (n.nspname = 'public' AND pg_get_userbyid(n.nspowner) = 'pg_database_owner'
           AND n.nspacl::text = '{pg_database_owner=UC/pg_database_owner,=U/pg_database_owner}')
UNION ALL
SELECT 'object ' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
UNION ALL
SELECT 'function ' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
UNION ALL
SELECT 'type ' || t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
UNION ALL
SELECT 'extension ' || e.extname FROM pg_extension e WHERE e.extname <> 'plpgsql'
UNION ALL
SELECT 'large object ' || l.oid FROM pg_largeobject_metadata l
UNION ALL
SELECT 'event trigger ' || t.evtname FROM pg_event_trigger t
UNION ALL
SELECT 'publication ' || p.pubname FROM pg_publication p
UNION ALL
SELECT 'default privileges' FROM pg_default_acl
UNION ALL
SELECT 'setting ' || array_to_string(s.setconfig, ',') FROM pg_db_role_setting s
WHERE s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND (s.setrole <> 0 OR s.setconfig <> %(settings)s::text[])
UNION ALL
SELECT 'prepared transaction ' || x.gid FROM pg_prepared_xacts x
WHERE x.database = current_database()"""


def leftovers(conn: psycopg.Connection[Any]) -> list[str]:
    """What the database of ``conn`` holds that a new test database does not (empty: nothing)."""
    rows = conn.execute(_LEFTOVERS, {"settings": list(_SETTINGS)}).fetchall()
    return [str(row[0]) for row in rows]


def empty_database(admin: psycopg.Connection[Any], dsn: str, name: str) -> list[str]:
    """Empty database ``name`` (reached at ``dsn``) for its next test: end its other sessions,
    drop every schema, make ``public`` as a new database has it, reset its settings. Returns
    :func:`leftovers` (empty when the database is as new)."""
    admin.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        " WHERE datname = %s AND pid <> pg_backend_pid()",
        (name,),
    )
    admin.execute(f'ALTER DATABASE "{name}" RESET ALL')
    for setting in _SETTINGS:
        admin.execute(f'ALTER DATABASE "{name}" SET {setting.replace("=", " = ")}')
    with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
        schemas = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname !~ '^pg_'"
            " AND nspname <> 'information_schema'"
        ).fetchall()
        with conn.transaction():
            for (schema,) in schemas:
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
            conn.execute("SELECT lo_unlink(oid) FROM pg_largeobject_metadata")
            conn.execute("CREATE SCHEMA public AUTHORIZATION pg_database_owner")
            conn.execute("GRANT USAGE ON SCHEMA public TO PUBLIC")
            conn.execute("COMMENT ON SCHEMA public IS 'standard public schema'")
        return leftovers(conn)


def _new_name() -> str:
    return f"lgm_test_{uuid.uuid4().hex[:12]}"


class ScratchDatabases:
    """Empty databases on the server of ``admin_dsn``, made ahead, recycled behind.

    ``take()`` returns the name of an empty database no running test uses (made now if
    none is ready); ``give_back(name)`` empties it later for another ``take()`` (or drops
    it, if emptying leaves anything); ``close()`` waits for the background work and drops
    every database it holds. If the background thread fails, ``take()`` makes databases
    itself (its errors are the server's own), ``close()`` drops what is left and then
    raises the thread's error.
    """

    def __init__(self, admin_dsn: str, *, ahead: int = AHEAD) -> None:
        self._admin_dsn = admin_dsn
        self._ahead = ahead
        self._ready: deque[str] = deque()
        self._given_back: deque[str] = deque()
        self._changed = threading.Condition()
        self._closing = False
        self._error: BaseException | None = None
        self._busy = False  # the background thread is emptying or making one now
        self._thread = threading.Thread(target=self._run, name="scratch-databases", daemon=True)
        self._thread.start()

    def take(self) -> str:
        """An empty database no running test uses (its name): new or emptied."""
        with self._changed:
            name = self._ready.popleft() if self._ready else None
            self._changed.notify_all()
        if name is None:
            name = _new_name()
            with psycopg.connect(self._admin_dsn, autocommit=True, connect_timeout=10) as admin:
                create_database(admin, name)
        return name

    def give_back(self, name: str) -> None:
        """Empty ``name`` (closing what still uses it) in the background, for reuse."""
        with self._changed:
            self._given_back.append(name)
            self._changed.notify_all()

    def settle(self) -> None:
        """Wait until every database given back is emptied (or dropped); re-raise a
        background error."""
        with self._changed:
            while (self._given_back or self._busy) and self._error is None:
                self._changed.wait()
        self._raise_error()

    def close(self) -> None:
        """Finish the background work, drop every database held; re-raise its error."""
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        self._thread.join()
        with psycopg.connect(self._admin_dsn, autocommit=True, connect_timeout=10) as admin:
            for name in [*self._given_back, *self._ready]:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self._given_back.clear()
        self._ready.clear()
        self._raise_error()

    def _raise_error(self) -> None:
        if self._error is not None:
            raise RuntimeError("making or dropping a test database failed") from self._error

    def _next_job(self) -> tuple[str, str] | None:
        """("empty", name), ("create", name) or None (closing); waits for work."""
        with self._changed:
            while True:
                if self._closing or self._error is not None:
                    return None
                if self._given_back:
                    self._busy = True
                    return "empty", self._given_back.popleft()
                if len(self._ready) < self._ahead:
                    self._busy = True
                    return "create", _new_name()
                self._busy = False
                self._changed.notify_all()
                self._changed.wait()

    def _emptied(self, admin: psycopg.Connection[Any], name: str) -> bool:
        """``name`` emptied as new (False: it holds something still, or could not be
        emptied, e.g. its test dropped it or closed it to connections)."""
        try:
            return not empty_database(admin, make_conninfo(self._admin_dsn, dbname=name), name)
        except psycopg.Error:
            return False

    def _run(self) -> None:
        try:
            with psycopg.connect(self._admin_dsn, autocommit=True, connect_timeout=10) as admin:
                while (job := self._next_job()) is not None:
                    action, name = job
                    if action == "empty":
                        if not self._emptied(admin, name):  # not as new: never reused
                            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                            with self._changed:
                                self._changed.notify_all()
                            continue
                    else:
                        create_database(admin, name)
                    with self._changed:
                        self._ready.append(name)
                        self._changed.notify_all()
        except BaseException as exc:  # surfaced by the next take()/settle()/close()
            with self._changed:
                self._busy = False
                self._error = exc
                self._changed.notify_all()
