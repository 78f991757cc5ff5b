"""The one map from Postgres and pool failures to our errors (pure, no I/O).

Every Postgres component -- the savers, the leases, the store -- raises what
:func:`translate_error` returns for a database error, and what :func:`connect_error` returns
when a first connection fails. The map is by class and SQLSTATE:

* a closed pool (never opened) → :class:`ConfigurationError`;
* no pooled connection in time → :class:`BackendUnavailableError` (saying so when the pool
  was saturated by its own users rather than the server unreachable);
* a lost or refused connection → :class:`BackendUnavailableError`, unless the server refused
  the DSN itself (missing database or role, bad credentials, ``pg_hba.conf``, SSL): then a
  :class:`ConfigurationError` naming the fix;
* a missing table or function (``42P01``, ``42883``) → :class:`MigrationError` (run
  ``setup()``);
* a refusal for the server's state (deadlock, serialization failure, lock or statement
  timeout → :class:`TransientError`; read-only standby, out of resources, shutting down →
  :class:`BackendUnavailableError`; missing privilege → :class:`ConfigurationError`);
* with :attr:`ErrorPolicy.refused_input` (the store): a value the database refused (data
  exceptions, constraint violations, size limits) → :class:`InvalidValueError`.

Anything else is returned as is: a bug to fix, not a condition to handle.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg_pool import PoolClosed, PoolTimeout

from langgraph_recall.errors import (
    BackendUnavailableError,
    ConfigurationError,
    InvalidConnectionStringError,
    InvalidValueError,
    LangGraphRecallError,
    MigrationError,
    TransientError,
)

__all__ = [
    "SAVER",
    "STORE",
    "TRANSACTION_ATTEMPTS",
    "TRANSIENT_STATES",
    "UNAVAILABLE_STATES",
    "ErrorPolicy",
    "QueueTimeout",
    "connect_error",
    "is_connection_failure",
    "retry_pause",
    "server_state_error",
    "should_retry",
    "translate_error",
    "unavailable_message",
]


class QueueTimeout(PoolTimeout):
    """A call waited ``waited`` seconds in a component's own queue for one of its pool's
    ``capacity`` connections (all in use by the component's other calls) and gave up —
    measured in this process, it says nothing about the network."""

    def __init__(self, waited: float, capacity: int) -> None:
        super().__init__(f"waited {waited:.2f} s for one of {capacity} connections")
        self.waited = waited
        self.capacity = capacity


TRANSIENT_STATES: dict[str, str] = {
    "40P01": "a deadlock with another transaction",
    "40001": "a serialization failure",
    "40003": "an unknown transaction outcome",
    "55P03": "a lock wait beyond lock_timeout",
    "57014": "a cancelled statement (statement_timeout or a cancel request)",
}
"""Passing failures: the transaction was rolled back and calling again is safe."""

UNAVAILABLE_STATES: dict[str, str] = {
    "25006": "is read-only (a standby, or default_transaction_read_only): point the DSN at "
    "the primary",
    "53": "is out of resources (disk, memory or connections): free them or raise its limits",
    "57": "is shutting down or restarting (an administrator or a crash); the next call tries again",
}
"""A server that cannot do the work now (SQLSTATE, or its two-character class)."""

_LOST_STATES = frozenset({"57P01", "57P02", "57P03"})  # admin/crash shutdown, cannot connect now
_MISSING_SCHEMA = frozenset({"42P01", "42883"})  # undefined_table, undefined_function
_REFUSED_INPUT = frozenset({"22", "23", "54"})  # SQLSTATE classes: data, integrity, limits
_RETRYABLE = frozenset({"40P01", "40001"})  # deadlock_detected, serialization_failure

TRANSACTION_ATTEMPTS = 3
"""Runs of a transaction the server broke as a deadlock victim or a serialization failure
(the store's own transactions take their locks in one order and cannot deadlock each
other; a user's transaction on the same tables can still make the server pick ours)."""


@dataclass(frozen=True)
class ErrorPolicy:
    """How one component words and widens the map.

    Attributes:
        setup_hint: What to do about a missing table or function (the component's
            ``setup()``).
        refused_input: Map a value the database refused (SQLSTATE classes 22, 23, 54) to
            :class:`InvalidValueError`. The store checks values at the door, so there the
            refusal is a safety net; for the savers it is a bug of ours, raised as is.
    """

    setup_hint: str
    refused_input: bool = False


SAVER = ErrorPolicy(
    "run saver.setup() once (also after upgrading from the official PostgresSaver)."
)
"""The savers' and leases' policy."""

STORE = ErrorPolicy("call store.setup() first", refused_input=True)
"""The memory store's policy."""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _sqlstate(exc: BaseException) -> str:
    sqlstate = getattr(exc, "sqlstate", None)
    return sqlstate if isinstance(sqlstate, str) else ""


def server_state_error(target: str, exc: BaseException) -> LangGraphRecallError | None:
    """Our error for a statement ``exc`` the server at ``target`` refused because of its
    state, or ``None``.

    Example:
        ```python
        from langgraph_recall._pg.errors import server_state_error
        from langgraph_recall.errors import BackendUnavailableError

        class ReadOnly(Exception):
            sqlstate = "25006"

        err = server_state_error("db:5432", ReadOnly("cannot execute INSERT"))
        assert isinstance(err, BackendUnavailableError) and "primary" in str(err)
        assert server_state_error("db:5432", ValueError("no sqlstate")) is None
        ```
    """
    sqlstate = _sqlstate(exc)
    if not sqlstate:
        return None
    line = _first_line(exc)
    if sqlstate in TRANSIENT_STATES:
        return TransientError(
            f"Postgres at {target} gave up on the call: {TRANSIENT_STATES[sqlstate]} "
            f"({sqlstate}: {line}); it was rolled back, nothing was written, and calling "
            "again is safe"
        )
    if sqlstate == "42501":
        return ConfigurationError(
            f"Postgres at {target}: the DSN's role lacks a privilege ({line}); GRANT it, or "
            "connect as the role that ran setup()"
        )
    state = UNAVAILABLE_STATES.get(sqlstate) or UNAVAILABLE_STATES.get(sqlstate[:2])
    if state is None:
        return None
    return BackendUnavailableError(f"Postgres at {target} {state} ({sqlstate}: {line})")


def is_connection_failure(exc: BaseException) -> bool:
    """Whether a psycopg error means the server/connection is gone (not a query error).

    Example:
        ```python
        import psycopg

        from langgraph_recall._pg.errors import is_connection_failure

        assert is_connection_failure(psycopg.OperationalError("the connection is closed"))
        assert not is_connection_failure(psycopg.errors.SerializationFailure("retry"))
        ```
    """
    if not isinstance(exc, psycopg.OperationalError):
        return False
    sqlstate = _sqlstate(exc)
    return not sqlstate or sqlstate.startswith("08") or sqlstate in _LOST_STATES


def unavailable_message(target: str, exc: BaseException) -> str:
    """Message of the ``BackendUnavailableError`` raised for a dropped/refused connection."""
    return (
        f"Postgres at {target} is unavailable ({_first_line(exc)}). Check that the server is "
        "running and reachable; pooled connections reconnect automatically on the next call."
    )


# What the server (or libpq) says when the connection string itself is wrong: retrying
# cannot help, so these are configuration errors, not "unavailable". Connection errors carry
# no SQLSTATE in psycopg, hence the server's (English) messages.
_CONFIG_FAILURES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), fix)
    for pattern, fix in (
        (r'database "[^"]*" does not exist', "create it (CREATE DATABASE) or fix the dbname"),
        (r'role "[^"]*" does not exist', "create it (CREATE ROLE ... LOGIN) or fix the DSN's user"),
        (r"password authentication failed", "check the user and password in the DSN"),
        (r"authentication failed", "check the user and credentials in the DSN"),
        (r"no password supplied", "add the password to the DSN (or a ~/.pgpass entry)"),
        (r"no pg_hba\.conf entry", "allow this client in the server's pg_hba.conf, or fix user/db"),
        (r"permission denied for database", "GRANT CONNECT on the database to this user"),
        (r"not permitted to log in", "ALTER ROLE ... LOGIN, or use another user"),
        (r"ssl was required|does not support ssl", "drop sslmode=require, or enable server SSL"),
    )
)


def connect_error(target: str, exc: BaseException) -> Exception:
    """The error to raise when connecting to ``target`` failed with ``exc``.

    A missing database or role, bad credentials, a refused ``pg_hba.conf`` entry or an SSL
    mismatch is a :class:`ConfigurationError` naming the cause and the fix (the server is
    up; retrying changes nothing); a refused/timed-out connection is a
    :class:`BackendUnavailableError`; a malformed option an
    :class:`InvalidConnectionStringError`.

    Example:
        ```python
        import psycopg

        from langgraph_recall._pg.errors import connect_error
        from langgraph_recall.errors import ConfigurationError

        err = connect_error("db:5432", psycopg.OperationalError(
            'connection failed: FATAL:  database "app" does not exist'))
        assert isinstance(err, ConfigurationError) and "CREATE DATABASE" in str(err)
        ```
    """
    detail = str(exc).strip()
    reason = next((line for line in detail.splitlines() if "FATAL" in line), "")
    if not reason:
        reason = detail.splitlines()[0] if detail else type(exc).__name__
    reason = reason.split("FATAL:", 1)[-1].strip()
    if isinstance(exc, psycopg.ProgrammingError):
        return InvalidConnectionStringError(
            f"invalid Postgres connection string for {target}: {reason}"
        )
    lowered = detail.lower()
    for pattern, fix in _CONFIG_FAILURES:
        if pattern.search(lowered):
            return ConfigurationError(
                f"Postgres at {target} refused the connection: {reason}. This is a "
                f"configuration problem, not an outage: {fix}."
            )
    return BackendUnavailableError(unavailable_message(target, exc))


def _saturated(pool: Any) -> bool:
    """Whether every connection ``pool`` may open exists and is checked out (it is busy),
    and the pool never failed to connect (a server that refuses connections leaves the
    pool's slots to reconnection attempts: it does not "answer")."""
    try:
        stats = pool.get_stats()
    except Exception:  # not a psycopg_pool pool
        return False
    return bool(
        stats.get("pool_size", 0) >= pool.max_size
        and stats.get("pool_available", 0) == 0
        and not stats.get("connections_errors", 0)
    )


def _pool_timeout(target: str, exc: PoolTimeout, pool: Any) -> BackendUnavailableError:
    if isinstance(exc, QueueTimeout):
        return BackendUnavailableError(
            f"this call waited {exc.waited:.2f} s in this component's queue for a free "
            f"connection to Postgres at {target} and was never sent: all {exc.capacity} "
            "connections of its pool stayed in use by its other calls (slow or blocked "
            "statements — e.g. waiting for a lock another session holds — or a loaded "
            "server or client machine). Raise pool_config['max_size'] or ['timeout']."
        )
    if pool is not None and _saturated(pool):
        return BackendUnavailableError(
            f"Postgres at {target} answers, but no pooled connection became available in "
            f"time: all {pool.max_size} connections of the pool stayed busy ({exc}), "
            "checked out by calls still running — this component's own or other users' of "
            "the same pool (slow or blocked statements, e.g. waiting for a lock another "
            "session holds). "
            "Give this component its own pool or raise pool_config['max_size'] / ['timeout']."
        )
    return BackendUnavailableError(
        f"Postgres at {target}: no pooled connection became available in time ({exc}). "
        "The server may be unreachable, or the pool's max_size is too small for the load "
        "(raise pool_config['max_size'] or pool_config['timeout'])."
    )


def translate_error(
    target: str, exc: BaseException, policy: ErrorPolicy, pool: Any = None
) -> BaseException:
    """The exception to raise for a database error: one of ours, or ``exc`` itself.

    Args:
        target: ``host:port`` of the server, for the message.
        exc: The psycopg or psycopg_pool error.
        policy: The calling component's :class:`ErrorPolicy`.
        pool: The pool the call used, if any (tells a saturated pool from an outage).

    Example:
        ```python
        import psycopg

        from langgraph_recall._pg.errors import SAVER, STORE, translate_error
        from langgraph_recall.errors import BackendUnavailableError, InvalidValueError

        err = translate_error("db:5432", psycopg.OperationalError("server closed"), SAVER)
        assert isinstance(err, BackendUnavailableError) and "db:5432" in str(err)
        bad = psycopg.errors.InvalidTextRepresentation("bad input")
        assert translate_error("db:5432", bad, SAVER) is bad
        assert isinstance(translate_error("db:5432", bad, STORE), InvalidValueError)
        ```
    """
    if isinstance(exc, PoolClosed):
        return ConfigurationError(
            f"the connection pool for Postgres at {target} is not open ({exc}); open it "
            "(pool.open() / `with pool:`) before using it, or use from_conn_string()"
        )
    if isinstance(exc, PoolTimeout):
        return _pool_timeout(target, exc, pool)
    if is_connection_failure(exc):
        return connect_error(target, exc)
    sqlstate = _sqlstate(exc)
    if sqlstate in _MISSING_SCHEMA:
        return MigrationError(
            f"{_first_line(exc)} ({sqlstate}) in the database at {target}: the schema is "
            f"missing or older than this package; {policy.setup_hint}"
        )
    if sqlstate in _POOLED_PREPARED:
        return ConfigurationError(
            f"Postgres at {target}: {_first_line(exc)} ({sqlstate}). A transaction pooler "
            "(PgBouncer in transaction mode, or the like) sits between us and the server and "
            "runs each transaction on another server connection, where the prepared statement "
            "is missing or its name taken. Pass prepare_threshold=None (savers) or "
            "pool_config={'kwargs': {'prepare_threshold': None}} to your connection; the "
            "pools from_conn_string() builds detect a pooler and do this themselves"
        )
    state = server_state_error(target, exc)
    if state is not None:
        return state
    if policy.refused_input and (
        isinstance(exc, psycopg.DataError) or sqlstate[:2] in _REFUSED_INPUT
    ):
        return InvalidValueError(
            f"Postgres at {target} refused the input ({sqlstate or type(exc).__name__}: "
            f"{_first_line(exc)}); nothing was written"
        )
    return exc


_POOLED_PREPARED = frozenset({"26000", "42P05"})
"""A prepared statement missing (``invalid_sql_statement_name``) or already there
(``duplicate_prepared_statement``): what prepared statements meet behind a transaction
pooler."""


def should_retry(exc: BaseException, attempt: int) -> bool:
    """Whether a transaction that failed with ``exc`` on run ``attempt`` (1-based) runs again:
    a deadlock or serialization failure, fewer than :data:`TRANSACTION_ATTEMPTS` runs so far.
    The caller also checks that nothing of the program was committed yet.

    Example:
        ```python
        import psycopg

        from langgraph_recall._pg.errors import should_retry

        assert should_retry(psycopg.errors.DeadlockDetected("victim"), 1)
        assert not should_retry(psycopg.errors.DeadlockDetected("victim"), 3)
        ```
    """
    return _sqlstate(exc) in _RETRYABLE and attempt < TRANSACTION_ATTEMPTS


def retry_pause(attempt: int) -> float:
    """Seconds to wait before run ``attempt + 1``: jittered, doubling from ~10 ms."""
    return float(0.01 * 2 ** (attempt - 1) * (1 + random.random()))  # jitter, not crypto
