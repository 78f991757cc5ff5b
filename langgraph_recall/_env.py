"""Settings named by environment variables: the Postgres one, and the rule every setting follows.

:data:`ENV_DSN` is written here only so that the embedded server (which names it in an error)
and :mod:`langgraph_recall._pg.dsn` (which reads it) both import it without importing each
other; :func:`setting` is the one rule for a value given or read from its variable
(``embedded.resolve_redis_url`` and ``_pg.dsn`` apply it). Importing this module needs
no driver.
"""

from __future__ import annotations

from langgraph_recall.errors import InvalidConnectionStringError

__all__ = ["ENV_DSN", "setting"]

ENV_DSN = "LANGGRAPH_RECALL_POSTGRES_URI"
"""The one environment variable naming the Postgres server (library, CLI, server, docs)."""


def setting(
    given: str | None,
    configured: str | None,
    *,
    variable: str,
    what: str,
    example: str,
    fallback: str,
) -> str:
    """``given``; else ``configured`` (the value of ``$variable``, ``None`` when unset); else
    ``""`` (the caller's ``fallback``). Empty or blank values are errors, never "use the
    default": that is what an unset variable interpolated into a config looks like.

    Raises:
        InvalidConnectionStringError: ``given`` or ``configured`` is empty.

    Example:
        ```python
        from langgraph_recall._env import setting

        words = {"variable": "X_URL", "what": "URL", "example": "x://h", "fallback": "none"}
        assert setting(None, "x://env", **words) == "x://env"
        assert setting("x://given", "x://env", **words) == "x://given"
        assert setting(None, None, **words) == ""
        ```
    """
    if given is not None:
        if not isinstance(given, str) or not given.strip():
            raise InvalidConnectionStringError(
                f"empty {what} ({given!r}); pass e.g. {example!r}, or None for "
                f"${variable} / {fallback}"
            )
        return given
    if configured is None:
        return ""
    if not configured.strip():
        raise InvalidConnectionStringError(
            f"${variable} is set but empty; set it to a {what} such as {example!r}, or unset "
            f"it to use {fallback}"
        )
    return configured
