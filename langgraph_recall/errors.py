"""The exceptions ``langgraph_recall`` raises.

Every exception derives from :class:`LangGraphRecallError`; where a builtin fits, the
exception also derives from it (``ValueError`` for bad input, ``ConnectionError`` for
an unreachable backend), so existing ``except ValueError`` code keeps working.
What a caller may simply call again derives from :class:`RetryableError` (the database gave
up for a passing reason, the server is unreachable, another worker holds the thread); the
groups are drawn in docs/errors.md. Messages say what happened and how to fix it.

Example:
    ```python
    from langgraph_recall.errors import InvalidNamespaceError, LangGraphRecallError

    try:
        raise InvalidNamespaceError("namespace label 0 is empty; use a non-empty string")
    except ValueError as exc:  # also a LangGraphRecallError
        assert isinstance(exc, LangGraphRecallError)
    ```
"""

from __future__ import annotations

import asyncio

from langgraph.store.base import InvalidNamespaceError as _LangGraphInvalidNamespaceError

__all__ = [
    "BackendUnavailableError",
    "BenchmarkDataError",
    "BulkLoadWarning",
    "CheckpointIntegrityError",
    "ConfigurationError",
    "EmbeddingError",
    "EventLoopStalledError",
    "InvalidConnectionStringError",
    "InvalidFilterError",
    "InvalidImportError",
    "InvalidNamespaceError",
    "InvalidValueError",
    "LangGraphRecallError",
    "LangGraphRecallWarning",
    "LeaseLostError",
    "MigrationError",
    "NotReplicatedError",
    "RetryableError",
    "StaleWriteError",
    "SyncCallOnEventLoopError",
    "ThreadBusyError",
    "TransientError",
]


class LangGraphRecallError(Exception):
    """Base class of every error raised by ``langgraph_recall``."""


class LangGraphRecallWarning(UserWarning):
    """Base class of every warning issued by ``langgraph_recall`` (``warnings.warn``):
    something worked, but not as the caller may think; the message says what and why."""


class BulkLoadWarning(LangGraphRecallWarning):
    """A bulk load read fewer puts than its ``resume_key`` had recorded (a truncated file
    run again): the message names both counts. Nothing is missing from the store (what the
    earlier run wrote stays), but the input is not the whole load."""


class RetryableError(LangGraphRecallError):
    """The call failed for a reason that passes: calling it again later may succeed
    (:class:`TransientError`, :class:`BackendUnavailableError`, :class:`ThreadBusyError`).
    Each subclass says what the failed call left behind.

    Example:
        ```python
        from langgraph_recall.errors import RetryableError, ThreadBusyError

        assert issubclass(ThreadBusyError, RetryableError)
        ```
    """


class ConfigurationError(LangGraphRecallError, ValueError):
    """A component was configured wrongly (missing ``user_id``, bad option, ...)."""


class BenchmarkDataError(LangGraphRecallError, FileNotFoundError):
    """A benchmark's data set is not where it was looked for (the message says where to
    download it and how to point the benchmark at it)."""


class InvalidConnectionStringError(ConfigurationError):
    """A DSN or Redis URL could not be parsed or uses an unsupported scheme."""


class BackendUnavailableError(RetryableError, ConnectionError):
    """Postgres or Redis could not be reached; the message names host and port. A call
    whose connection died while it ran may have been applied (a write retried then finds
    its own result: puts are idempotent by key, checkpoints by id)."""


class NotReplicatedError(BackendUnavailableError):
    """A write reached the primary but not the number of replicas the component was asked to
    wait for (``replicas=``) within its timeout: it is not acknowledged, because a failover now
    could lose it. The message names the server, how many replicas confirmed it and the
    timeout. The write may still be on the primary (and reach the replicas later)."""


class InvalidNamespaceError(LangGraphRecallError, _LangGraphInvalidNamespaceError):
    """A store namespace or namespace prefix is malformed.

    Also LangGraph's own ``langgraph.store.base.InvalidNamespaceError`` (a ``ValueError``),
    so code written against LangGraph's stores catches it unchanged.
    """


class SyncCallOnEventLoopError(ConfigurationError, asyncio.InvalidStateError):
    """A synchronous method of an async saver or store was called on its own event loop
    (it would block the loop it needs); use the ``a*`` method there, or call the sync one
    from another thread. Also an ``asyncio.InvalidStateError``, as LangGraph's async
    classes raise, so code written against them catches it unchanged."""


class EventLoopStalledError(LangGraphRecallError, TimeoutError):
    """A synchronous method of an async saver or store waited longer than its
    ``loop_timeout`` while the event loop it runs on ran nothing: the loop is blocked (a
    blocking call on the loop thread, or a deadlock: the loop waits for the very thread
    that waits for it). The call was cancelled; the message says whether it had started."""


class TransientError(RetryableError, RuntimeError):
    """The database gave up on a call for a passing reason: a deadlock or serialization
    failure (still there after the bounded retries of a transaction that is safe to
    retry), a ``lock_timeout`` or ``statement_timeout``, a cancelled query. The call's
    transaction was rolled back, nothing was written; calling again is safe."""


class InvalidValueError(LangGraphRecallError, ValueError):
    """A stored value or key is malformed (not a dict, NaN, too large, ...)."""


class InvalidImportError(InvalidValueError):
    """A line of a memory export cannot be imported (malformed JSON, unknown format
    version, a value ``put`` would refuse); the message names the line."""


class InvalidFilterError(LangGraphRecallError, ValueError):
    """A search filter uses an unknown operator or a value of the wrong type."""


class EmbeddingError(LangGraphRecallError, ValueError):
    """An embedding has the wrong dimension or contains NaN/inf."""


class MigrationError(LangGraphRecallError, RuntimeError):
    """A schema migration failed or the schema is newer than this package."""


class ThreadBusyError(RetryableError, RuntimeError):
    """Another worker holds the lease on this ``thread_id`` (strategy ``reject``,
    or strategy ``wait`` after its timeout); nothing of this run was written."""


class LeaseLostError(LangGraphRecallError, RuntimeError):
    """This worker's lease on a thread expired or was taken over mid-run."""


class StaleWriteError(LangGraphRecallError, RuntimeError):
    """A write carried a fencing token older than the thread's current one (the
    writer lost its lease, or the thread was deleted); nothing was written."""


class CheckpointIntegrityError(LangGraphRecallError, RuntimeError):
    """A checkpoint could not be written or read whole: its parent or a channel blob it
    references is gone (expired by TTL, swept, pruned). Nothing was written; the message
    names the thread and what is missing."""
