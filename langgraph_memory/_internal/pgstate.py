"""What a Postgres server's refusal means for the caller, shared by the savers and the store.

A statement can fail because of the server's state rather than the call: a transaction it
rolled back to break a deadlock, a lock or statement timeout, a read-only standby, a full
disk, a role without a privilege. :func:`server_state_error` maps the SQLSTATE of such a
failure to one of our errors, worded with what it means and what to do; anything else is
``None`` (the caller decides).
"""

from __future__ import annotations

from langgraph_memory.errors import (
    BackendUnavailableError,
    ConfigurationError,
    LangGraphMemoryError,
    TransientError,
)

__all__ = ["TRANSIENT_STATES", "UNAVAILABLE_STATES", "server_state_error"]

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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def server_state_error(target: str, exc: BaseException) -> LangGraphMemoryError | None:
    """Our error for a statement ``exc`` the server at ``target`` refused because of its
    state, or ``None`` (pure).

    Example:
        ```python
        class ReadOnly(Exception):
            sqlstate = "25006"

        err = server_state_error("db:5432", ReadOnly("cannot execute INSERT"))
        assert isinstance(err, BackendUnavailableError) and "primary" in str(err)
        assert server_state_error("db:5432", ValueError("no sqlstate")) is None
        ```
    """
    sqlstate = getattr(exc, "sqlstate", None)
    if not isinstance(sqlstate, str) or not sqlstate:
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
