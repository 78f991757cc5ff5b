"""Pure validation of the config and arguments every checkpointer receives (no I/O).

Both the Redis and the Postgres savers run each public method's input through these
helpers first, so bad input fails the same way on every backend — same input, same
outcome — with an error of ours (also a ``ValueError``) whose message says what to fix,
before anything is read or written.

Identifiers (thread ids, ``checkpoint_ns``, checkpoint ids, run ids; and, through
:func:`checked_key`, task ids, task paths, channel names and versions) follow one rule:

* ``str`` (``int`` and ``uuid.UUID`` are ``str()``-ed, as LangGraph does: ``thread_id=5``
  and ``"5"`` name the same thread); anything else is an error;
* valid Unicode (no unpaired surrogate such as ``"\\ud800"``) without NUL (``"\\x00"``):
  Postgres text cannot store NUL, so neither saver accepts it in an identifier;
* at most :data:`MAX_THREAD_ID_BYTES` (thread id, namespace) or :data:`MAX_KEY_BYTES`
  (the others) UTF-8 bytes: together they must fit in a Postgres btree index entry
  (2,704 bytes), so every accepted identifier can be stored and read back.

A missing (or ``None`` / empty) ``thread_id`` in a config is an error naming the key;
``limit`` is ``None`` or an ``int`` (a negative limit lists nothing, like ``0``); a
metadata filter is a JSON object (see :func:`checked_filter`).

Example:
    ```python
    from langgraph_recall.checkpoint._config import normalized_config, thread_id_of

    assert thread_id_of({"configurable": {"thread_id": 5}}) == "5"
    config = normalized_config({"configurable": {"thread_id": 7, "checkpoint_ns": ""}})
    assert config["configurable"]["thread_id"] == "7"
    ```
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    get_serializable_checkpoint_metadata,
)

from langgraph_recall.checkpoint import _values
from langgraph_recall.errors import (
    ConfigurationError,
    InvalidFilterError,
    InvalidValueError,
    LangGraphRecallError,
)
from langgraph_recall.lease import FENCE_CONFIG_KEY

__all__ = [
    "MAX_KEY_BYTES",
    "MAX_LIMIT",
    "MAX_THREAD_ID_BYTES",
    "PRUNE_STRATEGIES",
    "CheckedPut",
    "ThreadTTL",
    "ThreadTTLConfig",
    "checked_before",
    "checked_channels",
    "checked_fence_token",
    "checked_filter",
    "checked_ids",
    "checked_keep_last",
    "checked_key",
    "checked_limit",
    "checked_prune",
    "checked_put",
    "checked_text",
    "checked_thread_id",
    "checked_version",
    "checked_writes",
    "normalized_config",
    "thread_id_of",
]

MAX_THREAD_ID_BYTES = 1024
"""Longest thread id / ``checkpoint_ns`` (UTF-8 bytes) either saver accepts."""

MAX_KEY_BYTES = 256
"""Longest checkpoint id, run id, task id, task path, channel name or version (UTF-8
bytes). Two :data:`MAX_THREAD_ID_BYTES` parts and two of these fit in one Postgres index
entry (the primary keys of ``checkpoint_blobs`` / ``checkpoint_writes``)."""

MAX_LIMIT = 2**63 - 1
"""``list(limit=...)`` above this (what Postgres and Redis count with) means "no limit"."""

_MISSING_THREAD_ID = (
    "the checkpointer needs config['configurable']['thread_id'], e.g. "
    "graph.invoke(inputs, {'configurable': {'thread_id': 'chat-1'}})"
)
_WIDE_IDS = frozenset({"thread_id", "checkpoint_ns", "task_path"})


def checked_text(
    value: object,
    what: str,
    *,
    max_bytes: int | None = None,
    error: type[LangGraphRecallError] = ConfigurationError,
) -> str:
    """An identifier as ``str``: checked for type, NUL, unpaired surrogates and length.

    Args:
        value: The id; ``int`` and ``uuid.UUID`` values are ``str()``-ed.
        what: Name used in the error message (e.g. ``"thread_id"``).
        max_bytes: Longest UTF-8 encoding accepted (default: :data:`MAX_THREAD_ID_BYTES`
            for ``thread_id`` / ``checkpoint_ns``, else :data:`MAX_KEY_BYTES`).
        error: The error class raised (``ConfigurationError`` for config ids,
            ``InvalidValueError`` for keys of stored values).

    Raises:
        ConfigurationError: (or ``error``) the id cannot be stored; the message says what
            to fix.

    Example:
        ```python
        from langgraph_recall.checkpoint._config import checked_text

        assert checked_text(42, "thread_id") == "42"
        ```
    """
    if type(value) is str:
        text = value
    elif (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, uuid.UUID):
        text = str(value)
    elif isinstance(value, str):
        text = str.__str__(value)
    else:
        raise error(f"{what} must be a str (or an int), got {type(value).__name__} {_short(value)}")
    limit = max_bytes if max_bytes is not None else _limit_for(what)
    if text.isascii() and len(text) <= limit and "\x00" not in text:
        return text  # the common case: nothing to encode or measure
    if "\x00" in text:
        raise error(
            f"{what} {_short(text)} contains a NUL character ('\\x00'), which no saver stores "
            f"in an identifier (Postgres text cannot hold it); remove it or encode the {what} "
            "(e.g. hex or base64)"
        )
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        raise error(
            f"{what} {_short(text)} is not valid UTF-8 text: it contains an unpaired surrogate "
            f"(U+{ord(bad):04X}); decode the {what} properly (e.g. raw.decode('utf-8')) "
            "before passing it"
        ) from None
    if size > limit:
        raise error(
            f"{what} is {size} bytes long (UTF-8); the savers accept at most {limit} bytes "
            f"(it must fit in a database index entry): use a shorter {what}, e.g. a hash of it"
        )
    return text


def checked_key(value: object, what: str) -> str:
    """A key of a stored value (task id, task path, channel name, checkpoint id): a ``str``
    (LangGraph always makes them text; nothing is ``str()``-ed, so the value checked is the
    value stored) by the identifier rule, else an
    :class:`~langgraph_recall.errors.InvalidValueError`.

    Example:
        ```python
        from langgraph_recall.checkpoint._config import checked_key

        assert checked_key("messages", "channel") == "messages"
        ```
    """
    if not isinstance(value, str):
        raise InvalidValueError(f"{what} must be a str, got {type(value).__name__} {_short(value)}")
    return checked_text(value, what, error=InvalidValueError)


def checked_thread_id(thread_id: object) -> str:
    """A thread id passed directly (``delete_thread``, ``copy_thread``, ``prune``...).

    Raises:
        ConfigurationError: ``None`` / empty, or text that cannot be stored.

    Example:
        ```python
        from langgraph_recall.checkpoint._config import checked_thread_id

        assert checked_thread_id(5) == "5"
        ```
    """
    if thread_id is None or thread_id == "":
        raise ConfigurationError(
            f"thread_id must be a non-empty str (or an int), got {thread_id!r}"
        )
    return checked_text(thread_id, "thread_id")


def checked_ids(values: object, what: str = "thread_ids") -> list[str]:
    """A list of thread ids (``prune``) or run ids (``delete_for_runs``), each checked.

    Raises:
        TypeError: ``values`` is a single ``str`` or not iterable (documented builtin:
            a wrong argument type, as Python raises for a non-sequence).
        ConfigurationError: An id cannot be stored.

    Example:
        ```python
        from langgraph_recall.checkpoint._config import checked_ids

        assert checked_ids([1, "b"]) == ["1", "b"]
        ```
    """
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(
            f"{what} must be a list of ids (e.g. ['t1']), got {type(values).__name__} "
            f"{_short(values)}"
        )
    if what == "thread_ids":
        return [checked_thread_id(item) for item in values]
    return [checked_text(item, what[:-1]) for item in values]


class ThreadTTLConfig(TypedDict, total=False):
    """The ``ttl=`` option of every saver: a thread's lifetime in minutes (the shape of
    LangGraph's ``TTLConfig`` and of ``langgraph-checkpoint-redis``).

    Attributes:
        default_ttl: Minutes a thread lives after its last write (every key of the thread).
        refresh_on_read: Also restart the countdown when the thread is read.
    """

    default_ttl: float
    refresh_on_read: bool


@dataclass(frozen=True)
class ThreadTTL:
    """A saver's normalised ``ttl=``: milliseconds (0 = never expire), whether reads refresh it."""

    ttl_ms: int = 0
    refresh_on_read: bool = False

    @classmethod
    def from_option(cls, option: ThreadTTLConfig | Mapping[str, Any] | None) -> ThreadTTL:
        """Validate the user's ``ttl=`` option."""
        if option is None:
            return cls()
        if not isinstance(option, Mapping):
            raise ConfigurationError(
                "ttl must be a dict like {'default_ttl': 60, 'refresh_on_read': True} "
                f"(minutes), got {option!r}"
            )
        unknown = set(option) - {"default_ttl", "refresh_on_read"}
        if unknown:
            raise ConfigurationError(
                f"unknown ttl option(s) {sorted(unknown)}; use 'default_ttl' (minutes) and "
                "'refresh_on_read' (bool)"
            )
        minutes = option.get("default_ttl")
        if minutes is None:
            return cls(refresh_on_read=bool(option.get("refresh_on_read", False)))
        if (
            isinstance(minutes, bool)
            or not isinstance(minutes, (int, float))
            or not math.isfinite(minutes)
            or minutes <= 0
        ):
            raise ConfigurationError(
                f"ttl['default_ttl'] must be a positive number of minutes, got {minutes!r}"
            )
        return cls(
            ttl_ms=max(1, round(minutes * 60_000)),
            refresh_on_read=bool(option.get("refresh_on_read", False)),
        )

    @property
    def arg(self) -> str:
        """The TTL as a script argument ('0' = none)."""
        return str(self.ttl_ms)

    @property
    def read_arg(self) -> str:
        """The TTL a read applies ('0' unless ``refresh_on_read``)."""
        return str(self.ttl_ms) if self.refresh_on_read else "0"


PRUNE_STRATEGIES = ("keep_latest", "keep_last", "delete")
"""What ``prune(strategy=...)`` accepts on every saver."""


def checked_keep_last(keep_last: object) -> int:
    """``keep_last``: an ``int`` >= 1 (checkpoints kept per thread and namespace).

    Raises:
        ConfigurationError: Anything else.

    Example:
        ```python
        from langgraph_recall.checkpoint._config import checked_keep_last

        assert checked_keep_last(3) == 3
        ```
    """
    if isinstance(keep_last, bool) or not isinstance(keep_last, int) or keep_last < 1:
        raise ConfigurationError(f"keep_last must be an int >= 1, got {_short(keep_last)}")
    return int(keep_last)


def checked_prune(thread_ids: object, strategy: object, keep_last: object) -> tuple[list[str], int]:
    """``prune`` arguments, the same on every saver (and the official Redis saver's
    meaning): the thread ids (checked) and how many checkpoints each namespace keeps
    (``0``: the threads are deleted).

    ``keep_last``, when given, is what is kept, whatever the strategy -- a caller who
    names a number of checkpoints to keep never gets fewer -- and ``keep_last=0``
    deletes the threads. Without it, ``"keep_latest"`` (and ``"keep_last"``) keep one,
    ``"delete"`` keeps none.

    Raises:
        TypeError: ``thread_ids`` is a ``str`` or not iterable.
        ConfigurationError: An unknown strategy, a ``keep_last`` that is not an ``int``
            >= 0, or a bad thread id.

    Example:
        ```python
        from langgraph_recall.checkpoint._config import checked_prune

        assert checked_prune([1], "keep_latest", 5) == (["1"], 5)
        assert checked_prune(["t"], "keep_latest", None) == (["t"], 1)
        assert checked_prune(["t"], "delete", None) == (["t"], 0)
        assert checked_prune(["t"], "delete", 3) == (["t"], 3)
        ```
    """
    if strategy not in PRUNE_STRATEGIES:
        raise ConfigurationError(
            f"unknown prune strategy {_short(strategy)}; use 'keep_latest', 'keep_last' "
            "(with keep_last=N) or 'delete'"
        )
    if keep_last is None:
        keep = 0 if strategy == "delete" else 1
    elif isinstance(keep_last, bool) or not isinstance(keep_last, int) or keep_last < 0:
        raise ConfigurationError(
            f"prune's keep_last must be an int >= 0 (0 deletes the threads), got "
            f"{_short(keep_last)}"
        )
    else:
        keep = int(keep_last)
    return checked_ids(thread_ids), keep


def checked_channels(channels: object) -> list[str]:
    """The channel names of ``get_delta_channel_history`` (identifier rule).

    Raises:
        TypeError: ``channels`` is a ``str`` or not iterable.
        InvalidValueError: A channel name cannot be stored.

    Example:
        ```python
        from langgraph_recall.checkpoint._config import checked_channels

        assert checked_channels(["messages"]) == ["messages"]
        ```
    """
    if isinstance(channels, (str, bytes)) or not isinstance(channels, Iterable):
        raise TypeError(f"channels must be a list of channel names, got {_short(channels)}")
    return [checked_key(channel, "channel") for channel in channels]


def thread_id_of(config: RunnableConfig) -> str:
    """The ``str`` thread id of a config (``config["configurable"]["thread_id"]``).

    Raises:
        ConfigurationError: The key is missing/empty, or the id cannot be stored.

    Example:
        ```python
        from langgraph_recall.checkpoint._config import thread_id_of

        assert thread_id_of({"configurable": {"thread_id": "t1"}}) == "t1"
        ```
    """
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    if not isinstance(configurable, Mapping):
        raise ConfigurationError(_MISSING_THREAD_ID)
    thread_id = configurable.get("thread_id")
    if thread_id is None or thread_id == "":
        raise ConfigurationError(_MISSING_THREAD_ID)
    return checked_text(thread_id, "thread_id")


def normalized_config(config: RunnableConfig) -> RunnableConfig:
    """A copy of ``config`` with ``thread_id``, ``checkpoint_ns`` and ``checkpoint_id``
    validated and ``str()``-ed (the input is not modified).

    Raises:
        ConfigurationError: See :func:`thread_id_of` and :func:`checked_text`.

    Example:
        ```python
        from langgraph_recall.checkpoint._config import normalized_config

        config = normalized_config({"configurable": {"thread_id": 1, "checkpoint_id": 2}})
        assert config["configurable"] == {"thread_id": "1", "checkpoint_id": "2"}
        ```
    """
    thread_id = thread_id_of(config)
    configurable: dict[str, Any] = dict(config["configurable"])
    configurable["thread_id"] = thread_id
    for key in ("checkpoint_ns", "checkpoint_id"):
        value = configurable.get(key)
        if value is not None:
            configurable[key] = checked_text(value, key)
    normalized: RunnableConfig = {**config, "configurable": configurable}
    return normalized


def checked_before(before: RunnableConfig | None) -> RunnableConfig | None:
    """``list(before=...)``: ``None`` or a config whose ``checkpoint_id`` is checked and
    ``str()``-ed (the input is not modified); a config without one bounds nothing (``None``:
    the Postgres query would otherwise compare with NULL and list nothing).

    Raises:
        ConfigurationError: ``before`` is not a config, or its checkpoint id cannot be stored.

    Example:
        ```python
        from langgraph_recall.checkpoint._config import checked_before

        assert checked_before({"configurable": {"checkpoint_id": 4}}) == {
            "configurable": {"checkpoint_id": "4"}
        }
        ```
    """
    if before is None:
        return None
    configurable = before.get("configurable") if isinstance(before, Mapping) else None
    if not isinstance(before, Mapping) or not isinstance(configurable, (Mapping, type(None))):
        raise ConfigurationError(
            "before must be a config like {'configurable': {'checkpoint_id': ...}}, got "
            f"{_short(before)}"
        )
    before_id = (configurable or {}).get("checkpoint_id")
    if before_id is None or before_id == "":
        return None  # no checkpoint to list before: no bound (as InMemorySaver does)
    checked: RunnableConfig = {
        **before,
        "configurable": {
            **(configurable or {}),
            "checkpoint_id": checked_text(before_id, "checkpoint_id"),
        },
    }
    return checked


def checked_fence_token(config: RunnableConfig) -> int | None:
    """The fencing token a write carries (``configurable[FENCE_CONFIG_KEY]``), if any.

    Raises:
        ConfigurationError: The token is not an ``int`` in ``0 .. 2**63 - 1``.

    Example:
        ```python
        from langgraph_recall.checkpoint._config import FENCE_CONFIG_KEY, checked_fence_token

        assert checked_fence_token({"configurable": {FENCE_CONFIG_KEY: 3}}) == 3
        assert checked_fence_token({"configurable": {}}) is None
        ```
    """
    token = (config.get("configurable") or {}).get(FENCE_CONFIG_KEY)
    if token is None:
        return None
    if isinstance(token, bool) or not isinstance(token, int) or not 0 <= token <= MAX_LIMIT:
        raise ConfigurationError(
            f"configurable[{FENCE_CONFIG_KEY!r}] must be the int fencing token of a lease, "
            f"got {_short(token)}"
        )
    return int(token)


@dataclass(frozen=True)
class CheckedPut:
    """A ``put``'s arguments after :func:`checked_put` (nothing serialized yet).

    Attributes:
        metadata: The metadata to store (LangGraph's serializable metadata, checked JSON).
        header_bytes: Approximate size of the checkpoint header and the metadata.
    """

    metadata: dict[str, Any]
    header_bytes: int


def checked_put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    new_versions: ChannelVersions,
) -> CheckedPut:
    """Check a ``put``'s checkpoint, metadata and versions before anything is serialized.

    ``config`` must already be :func:`normalized_config`. The checkpoint must be a dict
    with a storable ``id`` and dicts of ``channel_values`` / ``channel_versions``; its
    header (everything but the values) and the metadata must be JSON
    (:func:`~langgraph_recall.checkpoint._values.check_json`); channel names and versions
    follow the identifier rule.

    Raises:
        InvalidValueError: What is wrong, before any I/O.

    Example:
        ```python
        from langgraph_recall.checkpoint._config import checked_put

        from langgraph.checkpoint.base import empty_checkpoint

        checked = checked_put({"configurable": {"thread_id": "t"}}, empty_checkpoint(), {}, {})
        assert checked.metadata == {}
        ```
    """
    if not isinstance(checkpoint, Mapping):
        raise InvalidValueError(f"checkpoint must be a dict, got {type(checkpoint).__name__}")
    checked_key(checkpoint.get("id"), "checkpoint id")
    for part in ("channel_values", "channel_versions"):
        if not isinstance(checkpoint.get(part, {}), Mapping):
            raise InvalidValueError(f"checkpoint[{part!r}] must be a dict of channel -> value")
    if not isinstance(metadata, Mapping):
        raise InvalidValueError(f"metadata must be a dict, got {type(metadata).__name__}")
    if not isinstance(new_versions, Mapping):
        raise InvalidValueError(
            f"new_versions must be a dict of channel -> version, got {type(new_versions).__name__}"
        )
    for channel in checkpoint.get("channel_values", {}):
        checked_key(channel, "channel")
    for channel, version in new_versions.items():
        checked_key(channel, "channel")
        checked_version(version)
    for part in ("metadata", "configurable"):  # LangGraph copies their entries in
        entries = config.get(part)
        if entries is None:
            continue
        if not isinstance(entries, Mapping):
            raise ConfigurationError(f"config[{part!r}] must be a dict, got {_short(entries)}")
        for key in entries:
            if type(key) is not str:
                raise ConfigurationError(f"config[{part!r}] keys must be str, got {_short(key)}")
    header = {key: value for key, value in checkpoint.items() if key != "channel_values"}
    stored = dict(get_serializable_checkpoint_metadata(config, metadata))
    size = _values.check_json(header, "checkpoint") + _values.check_json(stored, "metadata")
    return CheckedPut(metadata=stored, header_bytes=size)


def checked_version(version: object) -> str:
    """A channel version as stored (``str``): text by the identifier rule, an ``int`` or a
    finite ``float`` (LangGraph's versions are increasing numbers or strings).

    Raises:
        InvalidValueError: Any other version.

    Example:
        ```python
        from langgraph_recall.checkpoint._config import checked_version

        assert checked_version(3) == "3"
        ```
    """
    if isinstance(version, float) and math.isfinite(version):
        return str(version)
    return checked_text(version, "version", error=InvalidValueError)


def checked_writes(
    writes: object, task_id: object, task_path: object
) -> tuple[list[tuple[str, Any]], str, str]:
    """``put_writes`` arguments: ``(channel, value)`` pairs with storable channel names,
    and the task id / path by the identifier rule (values are checked when serialized).

    Raises:
        InvalidValueError: What is wrong, before any I/O.

    Example:
        ```python
        from langgraph_recall.checkpoint._config import checked_writes

        assert checked_writes([("messages", 1)], "task-1", "") == ([("messages", 1)], "task-1", "")
        ```
    """
    if isinstance(writes, (str, bytes)) or not isinstance(writes, Iterable):
        raise InvalidValueError(
            f"writes must be a list of (channel, value) pairs, got {type(writes).__name__}"
        )
    pairs: list[tuple[str, Any]] = []
    for write in writes:
        if not isinstance(write, (tuple, list)) or len(write) != 2:
            raise InvalidValueError(
                f"each write must be a (channel, value) pair, got {_short(write)}"
            )
        pairs.append((checked_key(write[0], "channel"), write[1]))
    return pairs, checked_key(task_id, "task_id"), checked_key(task_path, "task_path")


def checked_limit(limit: object) -> int | None:
    """``list(limit=...)``: ``None`` or an ``int``; negative limits become ``0`` (no rows),
    limits above :data:`MAX_LIMIT` are capped (both backends count in 64 bits).

    Raises:
        ConfigurationError: ``limit`` is not an int.

    Example:
        ```python
        from langgraph_recall.checkpoint._config import checked_limit

        assert checked_limit(-1) == 0 and checked_limit(None) is None
        ```
    """
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise ConfigurationError(f"limit must be an int or None, got {_short(limit)}")
    return min(max(int(limit), 0), MAX_LIMIT)


def checked_filter(filter: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Validate a metadata filter: a JSON object, as stored metadata is (see
    :func:`~langgraph_recall.checkpoint._values.check_json`: ``str`` keys, text without NUL
    or unpaired surrogates, finite numbers, bounded depth).

    Raises:
        InvalidFilterError: Not a mapping, or a key/value no stored metadata can hold.

    Example:
        ```python
        from langgraph_recall.checkpoint._config import checked_filter

        assert checked_filter({"source": "input"}) == {"source": "input"}
        ```
    """
    if filter is None:
        return None
    if not isinstance(filter, Mapping):
        raise InvalidFilterError(
            f"filter must be a dict of metadata key -> value, got {type(filter).__name__}"
        )
    _values.check_json(filter, "filter", error=InvalidFilterError)
    return dict(filter)


def _limit_for(what: str) -> int:
    return MAX_THREAD_ID_BYTES if what in _WIDE_IDS else MAX_KEY_BYTES


def _short(value: object, width: int = 60) -> str:
    """``repr(value)``, cut to ``width`` characters (ids in messages can be huge)."""
    try:
        text = repr(value)
    except Exception:  # a hostile __repr__ must not hide the real error
        text = f"<{type(value).__name__}>"
    return text if len(text) <= width else text[: width - 3] + "..."
