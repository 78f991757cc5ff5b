"""What a Postgres commit waits for before it is acknowledged (pure; the statement is run by the
components' ``setup()``).

Postgres replicates synchronously only when the server says so: ``synchronous_standby_names``
names the standbys a commit waits for (``FIRST n (...)``, ``ANY n (...)``, ``n (...)`` or a
plain list, of which the first connected one counts) and ``synchronous_commit`` must be ``on``,
``remote_write`` or ``remote_apply`` (``local`` / ``off`` acknowledge without them). A component
built with ``replicas=N`` checks at ``setup()`` that commits wait for at least N standbys, so a
turn it acknowledges survives the promotion of one of them.
"""

from __future__ import annotations

import re

from langgraph_recall.errors import ConfigurationError

__all__ = ["SYNC_SETTINGS", "check_replicas", "checked_replicas_option", "sync_standbys"]

SYNC_SETTINGS = (
    "SELECT current_setting('synchronous_commit') AS commit_mode, "
    "current_setting('synchronous_standby_names') AS standby_names"
)
"""The two settings :func:`check_replicas` reads (named columns, dict rows)."""

_WAITING_MODES = frozenset({"on", "remote_write", "remote_apply"})
_COUNTED = re.compile(r"^\s*(?:(?:FIRST|ANY)\s+)?(\d+)\s*\(", re.IGNORECASE)


def sync_standbys(standby_names: str) -> int:
    """How many standbys a commit waits for under ``synchronous_standby_names``.

    Example:
        ```python
        from langgraph_recall._pg.durability import sync_standbys

        assert sync_standbys("") == 0
        assert sync_standbys("standby") == 1 and sync_standbys("a, b") == 1
        assert sync_standbys("FIRST 2 (a, b, c)") == 2 and sync_standbys("ANY 1 (a, b)") == 1
        ```
    """
    if not standby_names.strip():
        return 0
    counted = _COUNTED.match(standby_names)
    return int(counted.group(1)) if counted else 1


def checked_replicas_option(replicas: int) -> int:
    """The ``replicas=`` option, checked (an integer >= 0)."""
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
        raise ConfigurationError(f"replicas must be an integer >= 0, got {replicas!r}")
    return replicas


def check_replicas(target: str, replicas: int, commit_mode: str, standby_names: str) -> None:
    """Raise :class:`ConfigurationError` unless commits on ``target`` wait for ``replicas``
    synchronous standbys.

    Example:
        ```python
        from langgraph_recall._pg.durability import check_replicas

        check_replicas("db:5432", 1, "on", "standby")  # fine
        try:
            check_replicas("db:5432", 1, "local", "standby")
        except ValueError as exc:
            assert "synchronous_commit" in str(exc)
        ```
    """
    if replicas == 0:
        return
    waited = sync_standbys(standby_names)
    if waited < replicas:
        raise ConfigurationError(
            f"replicas={replicas}, but commits on Postgres at {target} wait for {waited} "
            f"standby(s) (synchronous_standby_names = {standby_names!r}): set "
            f"synchronous_standby_names = 'FIRST {replicas} (<standby names>)' on the primary "
            "(and reload), or lower replicas="
        )
    if commit_mode not in _WAITING_MODES:
        raise ConfigurationError(
            f"replicas={replicas}, but synchronous_commit = {commit_mode!r} on Postgres at "
            f"{target}: commits are acknowledged without the standbys; set it to 'on' (or "
            "'remote_apply' to read your writes on them) for this role or database"
        )
