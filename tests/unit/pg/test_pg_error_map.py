"""The one error map of the Postgres layer, over SQLSTATEs (hypothesis): every component gets
the same class for the same state; only the store widens it to refused input."""

from __future__ import annotations

import string

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st
from psycopg_pool import PoolClosed, PoolTimeout

from langgraph_recall._pg import errors as pg_errors
from langgraph_recall._pg.errors import SAVER, STORE, translate_error
from langgraph_recall.errors import (
    BackendUnavailableError,
    ConfigurationError,
    InvalidConnectionStringError,
    InvalidValueError,
    LangGraphRecallError,
    MigrationError,
    TransientError,
)

CLASSES = ["08", "22", "23", "25", "40", "42", "53", "54", "55", "57", "58", "XX", "P0", "0A"]


def error_with(sqlstate: str) -> psycopg.Error:
    """A psycopg error carrying ``sqlstate``: psycopg's own class when it knows the code."""
    try:
        cls = psycopg.errors.lookup(sqlstate)
    except KeyError:
        base = (
            psycopg.OperationalError
            if sqlstate[:2] in {"08", "53", "57"}
            else psycopg.DatabaseError
        )
        cls = type(f"State{sqlstate}", (base,), {"sqlstate": sqlstate})
    return cls(f"the server said no ({sqlstate})\nDETAIL: more")


sqlstates = st.one_of(
    st.sampled_from(
        [
            *pg_errors.TRANSIENT_STATES,
            "25006",
            "42501",
            "42P01",
            "42883",
            "22P02",
            "23505",
            "54000",
            "53100",
            "57P01",
            "08006",
            "42601",
            "XX000",
        ]
    ),
    st.builds(
        lambda cls, rest: cls + rest,
        st.sampled_from(CLASSES),
        st.text(string.digits + "ABCP", min_size=3, max_size=3),
    ),
)


def expected(sqlstate: str, exc: psycopg.Error, *, store: bool) -> type[BaseException] | None:
    """The class the map gives ``exc`` (``None``: raised as is)."""
    if isinstance(exc, psycopg.OperationalError) and (
        sqlstate.startswith("08") or sqlstate in {"57P01", "57P02", "57P03"}
    ):
        return BackendUnavailableError
    if sqlstate in {"42P01", "42883"}:
        return MigrationError
    if sqlstate in pg_errors.TRANSIENT_STATES:
        return TransientError
    if sqlstate == "42501":
        return ConfigurationError
    if sqlstate == "25006" or sqlstate[:2] in {"53", "57"}:
        return BackendUnavailableError
    if store and (isinstance(exc, psycopg.DataError) or sqlstate[:2] in {"22", "23", "54"}):
        return InvalidValueError
    return None


@given(sqlstates)
def test_every_sqlstate_maps_to_one_class_for_every_component(sqlstate: str) -> None:
    exc = error_with(sqlstate)
    for policy, store in ((SAVER, False), (STORE, True)):
        got = translate_error("db:5432", exc, policy)
        want = expected(sqlstate, exc, store=store)
        if want is None:
            assert got is exc
        else:
            assert type(got) is want, (sqlstate, policy, got)
            assert isinstance(got, LangGraphRecallError)
            assert "db:5432" in str(got) and "DETAIL" not in str(got)


@given(st.sampled_from(sorted(pg_errors.TRANSIENT_STATES)), st.integers(1, 5))
def test_only_deadlocks_and_serialization_failures_are_retried_and_boundedly(
    sqlstate: str, attempt: int
) -> None:
    retried = pg_errors.should_retry(error_with(sqlstate), attempt)
    assert retried == (sqlstate in {"40P01", "40001"} and attempt < pg_errors.TRANSACTION_ATTEMPTS)
    assert 0.01 * 2 ** (attempt - 1) <= pg_errors.retry_pause(attempt) <= 0.02 * 2 ** (attempt - 1)


def test_a_missing_schema_names_the_components_setup() -> None:
    missing = psycopg.errors.UndefinedTable('relation "lgm_memories" does not exist')
    assert "store.setup()" in str(translate_error("db:1", missing, STORE))
    assert "saver.setup()" in str(translate_error("db:1", missing, SAVER))


def test_pool_errors_are_matched_by_class() -> None:
    class Renamed(PoolTimeout):  # a subclass is still a pool timeout; the name does not matter
        pass

    for exc in (PoolTimeout("slow"), Renamed("slow")):
        assert isinstance(translate_error("db:1", exc, STORE), BackendUnavailableError)

    class PoolTimeoutLookalike(Exception):  # the old string match took this for one
        pass

    lookalike = PoolTimeoutLookalike("x")
    assert translate_error("db:1", lookalike, STORE) is lookalike
    closed = translate_error("db:1", PoolClosed("not open"), STORE)
    assert isinstance(closed, ConfigurationError) and "pool.open()" in str(closed)


def test_a_pool_timeout_on_a_saturated_pool_says_the_pool_is_busy() -> None:
    class Busy:
        max_size = 4

        def get_stats(self) -> dict[str, int]:
            return {"pool_size": 4, "pool_available": 0}

    class Idle(Busy):
        def get_stats(self) -> dict[str, int]:
            return {"pool_size": 1, "pool_available": 1}

    busy = translate_error("db:1", PoolTimeout("slow"), SAVER, Busy())
    assert isinstance(busy, BackendUnavailableError) and "all 4 connections" in str(busy)

    class Refused(Busy):  # its slots are reconnection attempts to a server that refuses
        def get_stats(self) -> dict[str, int]:
            return {"pool_size": 4, "pool_available": 0, "connections_errors": 3}

    idle = translate_error("db:1", PoolTimeout("slow"), SAVER, Idle())
    assert "unreachable" in str(idle) and "max_size" in str(idle)
    refused = str(translate_error("db:1", PoolTimeout("slow"), SAVER, Refused()))
    assert "unreachable" in refused and "answers" not in refused
    assert "unreachable" in str(translate_error("db:1", PoolTimeout("slow"), SAVER, object()))


@pytest.mark.parametrize(
    ("message", "error", "fix"),
    [
        ('FATAL:  database "app" does not exist', ConfigurationError, "CREATE DATABASE"),
        ('FATAL:  role "bob" does not exist', ConfigurationError, "CREATE ROLE"),
        ('FATAL:  password authentication failed for user "u"', ConfigurationError, "password"),
        ("FATAL:  no pg_hba.conf entry for host", ConfigurationError, "pg_hba.conf"),
        ("connection refused\n\tIs the server running?", BackendUnavailableError, "running"),
        ("", BackendUnavailableError, "OperationalError"),
    ],
)
def test_connect_errors_tell_configuration_from_outage(
    message: str, error: type[Exception], fix: str
) -> None:
    got = pg_errors.connect_error("db:5432", psycopg.OperationalError(message))
    assert type(got) is error and fix in str(got) and "db:5432" in str(got)
    # the same failure of a pooled connection, mid-use, is reported the same way
    assert type(translate_error("db:5432", psycopg.OperationalError(message), SAVER)) is error


def test_a_malformed_option_is_an_invalid_connection_string() -> None:
    got = pg_errors.connect_error("db:5432", psycopg.ProgrammingError("invalid sslmode value"))
    assert isinstance(got, InvalidConnectionStringError) and "sslmode" in str(got)


# The savers' mappings, as their tests pinned them before the layer existed.


def test_connection_failures_are_told_apart_from_query_errors() -> None:
    assert pg_errors.is_connection_failure(psycopg.OperationalError("server closed"))
    assert not pg_errors.is_connection_failure(psycopg.errors.SerializationFailure("retry"))
    assert not pg_errors.is_connection_failure(ValueError("x"))
    message = pg_errors.unavailable_message("db:5432", psycopg.OperationalError("refused\nmore"))
    assert "db:5432" in message and "refused" in message and "more" not in message


def test_translate_error_maps_backend_failures() -> None:
    from psycopg_pool import PoolTimeout

    from langgraph_recall.errors import BackendUnavailableError, MigrationError

    def saver(exc: BaseException) -> BaseException:
        return translate_error("db:1", exc, SAVER)

    pool = saver(PoolTimeout("couldn't get a connection"))
    assert isinstance(pool, BackendUnavailableError) and "max_size" in str(pool)
    from langgraph_recall._pg.errors import QueueTimeout

    queued = saver(QueueTimeout(1.5, 4))
    assert isinstance(queued, BackendUnavailableError)
    assert "waited 1.50 s in this component's queue" in str(queued)
    assert "all 4 connections of its pool stayed in use" in str(queued)
    assert "unreachable" not in str(queued)
    missing = saver(psycopg.errors.UndefinedTable('relation "lgm_thread_activity" does not exist'))
    assert isinstance(missing, MigrationError) and "setup()" in str(missing)
    transient = saver(psycopg.errors.SerializationFailure("could not serialize"))
    assert isinstance(transient, TransientError) and "safe" in str(transient)
    read_only = saver(psycopg.errors.ReadOnlySqlTransaction("cannot execute INSERT"))
    assert isinstance(read_only, BackendUnavailableError) and "primary" in str(read_only)
    privilege = saver(psycopg.errors.InsufficientPrivilege("permission denied for table x"))
    assert isinstance(privilege, ConfigurationError) and "GRANT" in str(privilege)
    ours_to_fix = psycopg.errors.InvalidTextRepresentation("bad input")  # a bug of ours: as is
    assert saver(ours_to_fix) is ours_to_fix


def test_translate_error_reports_a_closed_pool_as_misuse() -> None:
    from psycopg_pool import PoolClosed

    error = pg_errors.translate_error(
        "db:1", PoolClosed("the pool 'p' is not open yet"), pg_errors.SAVER
    )
    assert isinstance(error, ConfigurationError) and "from_conn_string" in str(error)
