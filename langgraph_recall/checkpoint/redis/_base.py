"""The I/O-free core shared by :class:`RedisSaver` and :class:`AsyncRedisSaver`.

Every operation is expressed as a *plan*: a generator that yields batches of
:class:`Command` (sent in one round trip — a pipeline on a single Redis, one by one on a
cluster) and receives their replies, or yields :class:`Emit` with results for the caller.
The sync and async savers only drive plans (``saver.py`` / ``aio.py``), so both share
all of the logic here and differ by ``await``.

Example:
    ```python
    from langgraph_recall.checkpoint._config import ThreadTTL

    ttl = ThreadTTL.from_option({"default_ttl": 60, "refresh_on_read": True})
    assert ttl.ttl_ms == 3_600_000 and ttl.refresh_on_read
    ```
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar
from urllib.parse import urlsplit

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from redis import exceptions as redis_errors
from redis.client import NEVER_DECODE
from redis.cluster import RedisCluster

from langgraph_recall.checkpoint import _config, _guard
from langgraph_recall.checkpoint._config import ThreadTTL, ThreadTTLConfig
from langgraph_recall.checkpoint.redis import _codec, _keys
from langgraph_recall.checkpoint.redis._retention import keep_latest_drops
from langgraph_recall.checkpoint.redis._scripts import (
    BUSY_ERROR_MARK,
    INTEGRITY_ERROR_MARK,
    PRUNE_BUSY,
    SCRIPT_SHAS,
    STALE_ERROR_MARK,
)
from langgraph_recall.checkpoint.redis._server_errors import (
    pool_exhausted,
    pool_exhausted_error,
    server_refusal,
)
from langgraph_recall.errors import (
    BackendUnavailableError,
    ConfigurationError,
    InvalidConnectionStringError,
    LangGraphRecallError,
    MigrationError,
    NotReplicatedError,
)
from langgraph_recall.lease._tokens import secret_text

__all__ = [
    "CLUSTER_RETRIED_ERRORS",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_SOCKET_TIMEOUT",
    "MIN_SERVER_VERSION",
    "BaseRedisSaver",
    "Command",
    "Emit",
    "Plan",
    "WriteContext",
    "check_server_version",
    "checked_replicas",
    "client_defaults",
    "client_url_options",
    "describe_client",
    "keep_latest_drops",
    "translate_errors",
]

MIN_SERVER_VERSION = (6, 2)
_PAGE = 64
_THREAD_BATCH = 100
_KEYS_CACHE_SIZE = 1024
T = TypeVar("T")


@dataclass(frozen=True)
class WriteContext:
    """What a guarded script call writes, to word the error if the guard refuses it.

    Attributes:
        thread_id: The thread written.
        operation: The public method (``"put"``, ``"put_writes"``, ``"copy_thread"``...).
        checkpoint_ns: The namespace of the checkpoint a ``put`` writes.
        checkpoint_id: The checkpoint a ``put`` writes.
        parent_id: Its parent, if any.
        reused: The channels whose stored values it reuses, in script-argument order.
    """

    thread_id: str
    operation: str
    checkpoint_ns: str = ""
    checkpoint_id: str = ""
    parent_id: str = ""
    reused: tuple[str, ...] = ()

    def refusal(self, reply: str) -> LangGraphRecallError | None:
        """The error for a guard's error reply (``LGM_BUSY`` / ``LGM_STALE``), if it is one.

        Example:
            ```python
            from langgraph_recall.checkpoint.redis._base import WriteContext

            context = WriteContext("t", "put")
            assert "with_thread_lease" in str(context.refusal("LGM_BUSY"))
            assert context.refusal("OOM command not allowed") is None
            ```
        """
        for mark in (STALE_ERROR_MARK, BUSY_ERROR_MARK):
            if mark in reply:
                words = reply.split(mark, 1)[1].split(" script:")[0].split()
                break
        else:
            return None
        if mark == BUSY_ERROR_MARK:
            return _guard.busy_error(self.thread_id, self.operation)
        return _guard.stale_error(self.thread_id, words[0] if words else "")

    def missing_blobs(self, reply: Any) -> list[str]:
        """The reused channels ``PUT``'s status reply says have no stored blob (``[]``
        when the put was stored); raises the parent refusal.

        The status is a reply (a list), never error text, so redis-py's wording of
        pipeline errors (which differs between versions) plays no part.

        Raises:
            CheckpointIntegrityError: The put continues a history retention deleted.

        Example:
            ```python
            from langgraph_recall.checkpoint.redis._base import WriteContext

            context = WriteContext("t", "put", checkpoint_id="c2", reused=("a", "b"))
            assert context.missing_blobs(1) == []
            assert context.missing_blobs([b"LGM_INTEGRITY", b"blobs", 2]) == ["b"]
            ```
        """
        if not isinstance(reply, list) or not reply or _text(reply[0]) != INTEGRITY_ERROR_MARK:
            return []
        if _text(reply[1]) == "parent":
            raise _guard.missing_parent_error(
                self.thread_id,
                self.checkpoint_ns,
                self.checkpoint_id,
                self.parent_id,
                _guard.RETENTION_HINT,
            )
        return [self.reused[int(i) - 1] for i in reply[2:]]


@dataclass(frozen=True)
class Command:
    """One Redis command of a plan: a plain command or a script call (``EVALSHA``)."""

    name: str
    args: tuple[Any, ...] = ()
    script: str | None = None
    keys: tuple[str, ...] = ()
    context: WriteContext | None = None

    @classmethod
    def call(cls, name: str, *args: Any) -> Command:
        """A plain command, e.g. ``Command.call("ZRANGE", key, 0, -1)``."""
        return cls(name=name, args=args)

    @classmethod
    def run(
        cls,
        script: str,
        keys: Sequence[str],
        args: Sequence[Any] = (),
        context: WriteContext | None = None,
    ) -> Command:
        """A call of one of :data:`SCRIPTS` by name (``context``: a guarded write)."""
        return cls(
            name="EVALSHA", args=tuple(args), script=script, keys=tuple(keys), context=context
        )

    def execute_args(self) -> tuple[Any, ...]:
        """The arguments of ``execute_command``."""
        if self.script is None:
            return (self.name, *self.args)
        return ("EVALSHA", SCRIPT_SHAS[self.script], len(self.keys), *self.keys, *self.args)


@dataclass
class Emit:
    """A plan step handing finished results to the caller."""

    items: list[CheckpointTuple] = field(default_factory=list)


Step: TypeAlias = "list[Command] | Emit"
Plan = Generator[Step, Any, T]


DEFAULT_CONNECT_TIMEOUT = 5.0
"""Seconds ``from_conn_string`` waits for a TCP connection before reporting the server
unreachable."""

DEFAULT_SOCKET_TIMEOUT = 5.0
"""Seconds ``from_conn_string`` lets a command wait for its reply: the bound of a call
against a hung server (redis-py < 8 has no default, so a frozen server would block a call
forever; 8 uses 5 s)."""


def client_defaults(options: Mapping[str, Any]) -> dict[str, Any]:
    """``from_url`` options with our timeouts unless given (a URL's own query wins too).

    Example:
        ```python
        from langgraph_recall.checkpoint.redis._base import DEFAULT_CONNECT_TIMEOUT, client_defaults

        assert client_defaults({"socket_timeout": 1})["socket_timeout"] == 1
        assert client_defaults({})["socket_connect_timeout"] == DEFAULT_CONNECT_TIMEOUT
        ```
    """
    return {
        "socket_connect_timeout": DEFAULT_CONNECT_TIMEOUT,
        "socket_timeout": DEFAULT_SOCKET_TIMEOUT,
        **options,
    }


CLUSTER_RETRIED_ERRORS: tuple[type[Exception], ...] = tuple(
    error for error in RedisCluster.ERRORS_ALLOW_RETRY if error is not redis_errors.TimeoutError
)
"""What the cluster clients ``from_conn_string`` builds retry after refreshing the slot
map: redis-py's list without ``TimeoutError`` (a hung node would otherwise cost up to
eleven timeouts, 55 s, in one call); connection errors and moved slots still are."""


def check_server_version(info: Mapping[str, Any]) -> str:
    """The server version from ``INFO server``; raises if it is older than 6.2."""
    raw = str(info.get("redis_version", "0"))
    parts = tuple(int(p) if p.isdigit() else 0 for p in raw.split(".")[:2])
    if parts < MIN_SERVER_VERSION:
        raise ConfigurationError(
            f"Redis {raw} is too old: the Redis checkpointer needs Redis >= 6.2 or Valkey "
            "(older servers are end-of-life and untested); upgrade the server"
        )
    return raw


def describe_client(client: Any) -> str:
    """``host:port`` (or socket path / node list) of a redis-py client, for error messages."""
    nodes = getattr(client, "startup_nodes", None)
    if nodes:
        items = nodes.values() if isinstance(nodes, Mapping) else nodes
        names = [getattr(n, "name", None) or f"{n.host}:{n.port}" for n in items]
        return "cluster " + ",".join(sorted(names))
    pool = getattr(client, "connection_pool", None)
    kwargs = getattr(pool, "connection_kwargs", {}) or {}
    if kwargs.get("path"):
        return f"unix:{kwargs['path']}"
    return f"{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}"


def client_url_options(url: str) -> str:
    """Validate a Redis URL and return ``host:port`` for messages; raise on malformed URLs."""
    if not isinstance(url, str) or not url:
        raise InvalidConnectionStringError("Redis URL must be a non-empty string")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidConnectionStringError(
            f"malformed Redis URL ({exc}); expected redis://[user:password@]host[:port][/db]"
        ) from exc
    if parts.scheme not in {"redis", "rediss", "unix"}:
        raise InvalidConnectionStringError(
            f"unsupported Redis URL scheme {parts.scheme!r}; use redis://, rediss:// or unix://"
        )
    if parts.scheme == "unix":
        return f"unix:{parts.path}"
    if not parts.hostname:
        raise InvalidConnectionStringError("Redis URL has no host; use redis://host:port/db")
    return f"{parts.hostname}:{port or 6379}"


def write_context(commands: Sequence[Command]) -> WriteContext | None:
    """The context of the guarded write among ``commands`` (a batch holds at most one)."""
    for command in commands:
        if command.context is not None:
            return command.context
    return None


@contextmanager
def translate_errors(where: str, context: WriteContext | None = None) -> Iterator[None]:
    """Turn unreachable-server errors into :class:`BackendUnavailableError` (naming
    ``where``) and the write guard's refusals into ``ThreadBusyError`` /
    ``StaleWriteError`` / ``CheckpointIntegrityError`` (worded with ``context``); re-raise
    the rest."""
    try:
        yield
    except (redis_errors.ClusterError, redis_errors.RedisClusterException) as exc:
        # before ResponseError: ClusterDownError / TryAgainError are both
        raise BackendUnavailableError(
            f"Redis at {where} is unavailable: {exc}. Check that every cluster node is "
            "running and reachable; the next call retries."
        ) from exc
    except redis_errors.ResponseError as exc:
        refusal = (context or WriteContext("?", "write")).refusal(str(exc))
        if refusal is not None:
            raise refusal from exc
        raise server_refusal(where, exc) from exc
    except redis_errors.TimeoutError as exc:
        raise BackendUnavailableError(
            f"Redis at {where} did not answer in time ({exc}): the server is hung, "
            "overloaded or cut off. The call was not retried (one timeout bounds a call: "
            "the client's socket_timeout, 5 s by default); the next call tries again."
        ) from exc
    except redis_errors.ConnectionError as exc:
        if pool_exhausted(exc):  # redis-py's own pool, not the server
            raise pool_exhausted_error(where) from exc
        raise BackendUnavailableError(
            f"Redis at {where} is unreachable: {exc}. Check that the server is running and "
            "that the URL's host and port are right."
        ) from exc


def checked_replicas(replicas: int, timeout: float, cluster: bool) -> tuple[int, int]:
    """``(replicas, timeout in ms)`` of the durability option, checked.

    Example:
        ```python
        from langgraph_recall.checkpoint.redis._base import checked_replicas

        assert checked_replicas(1, 0.5, False) == (1, 500)
        ```
    """
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
        raise ConfigurationError(f"replicas must be an integer >= 0, got {replicas!r}")
    if not (isinstance(timeout, (int, float)) and 0 < timeout <= 3600):
        raise ConfigurationError(
            f"replica_timeout must be a number of seconds in (0, 3600], got {timeout!r}"
        )
    if replicas and cluster:
        raise ConfigurationError(
            "replicas= is not supported on Redis Cluster (WAIT counts the replicas of the node "
            "a connection writes to; each slot's master has its own); use the cluster's own "
            "replication settings, or replicas=0"
        )
    return replicas, max(1, round(timeout * 1000))


def _decodes_responses(client: Any) -> bool:
    getter = getattr(client, "get_encoder", None)
    encoder = getter() if callable(getter) else getattr(client, "encoder", None)
    return bool(getattr(encoder, "decode_responses", False))


def _is_cluster(client: Any) -> bool:
    return hasattr(client, "get_nodes") and hasattr(client, "keyslot")


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class BaseRedisSaver(BaseCheckpointSaver[str]):
    """Options, validation and the plans of every operation (no I/O).

    Args:
        client: A redis-py client (``redis.Redis``, ``redis.cluster.RedisCluster`` or their
            ``redis.asyncio`` twins), with ``decode_responses`` either way.
        prefix: Prefix of every key (default ``"lgm"``); one prefix = one independent store.
        ttl: ``{"default_ttl": minutes, "refresh_on_read": bool}``; applies to every key of
            a thread, restarted by each write (and read, if ``refresh_on_read``).
        keep_last: Keep only the newest N checkpoints per thread and namespace (applied
            atomically by each ``put``; ``DeltaChannel`` chains are kept long enough).
        serde: Serializer, e.g. ``EncryptedSerializer.from_pycryptodome_aes()``.
        replicas: Acknowledge a checkpoint or pending write only once this many replicas
            hold it (Redis ``WAIT``, sent after the write on the same connection); ``0``
            (default) acknowledges what the primary holds. A write the replicas do not
            confirm within ``replica_timeout`` seconds raises
            :class:`~langgraph_recall.errors.NotReplicatedError` (the turn fails instead of
            being lost by a failover). Not on Redis Cluster.
        replica_timeout: Seconds a write waits for its replicas (default 1).
    """

    def __init__(
        self,
        client: Any,
        *,
        prefix: str = "lgm",
        ttl: ThreadTTLConfig | Mapping[str, Any] | None = None,
        keep_last: int | None = None,
        serde: SerializerProtocol | None = None,
        replicas: int = 0,
        replica_timeout: float = 1.0,
    ) -> None:
        super().__init__(serde=serde)
        # Checkpoints are binary: with a client that decodes replies (decode_responses=True,
        # as the official saver allows), every command of ours asks redis-py to leave its
        # reply undecoded (the option redis-py's own DUMP uses), so both kinds of client
        # read and write the same keys.
        self.command_options: dict[str, Any] = (
            {NEVER_DECODE: True} if _decodes_responses(client) else {}
        )
        if keep_last is not None:
            _config.checked_keep_last(keep_last)
        self._client = client
        self.prefix = _keys.validate_prefix(prefix)
        self.ttl = ThreadTTL.from_option(ttl)
        self.keep_last = keep_last
        self.is_cluster = _is_cluster(client)
        self.where = describe_client(client)
        self.replicas, self._wait_ms = checked_replicas(replicas, replica_timeout, self.is_cluster)
        self._slots = _keys.slots_key(self.prefix)
        self._legacy_registry = _keys.legacy_registry_key(self.prefix)
        # slot tags this saver has seen listed in P:slots (entries are never removed)
        self._listed_slots: set[str] = set()
        # thread id -> its keys (dict get/set are atomic: safe across threads)
        self._keys_cache: dict[str, _keys.ThreadKeys] = {}

    @property
    def client(self) -> Any:
        """The redis-py client this saver uses."""
        return self._client

    def get_next_version(self, current: str | None, channel: None) -> str:
        """Next channel version (``f"{n:032}.{random:016}"``, like the Postgres saver)."""
        return _codec.next_version(current)

    # ----- small helpers -------------------------------------------------------------

    def _thread_keys(self, thread_id: Any) -> _keys.ThreadKeys:
        # the identifier rule of checkpoint._config (as on Postgres) -> ConfigurationError
        if type(thread_id) is str:  # the hot path: a checked id seen recently
            cached = self._keys_cache.get(thread_id)
            if cached is not None:
                return cached
        checked = _config.checked_thread_id(thread_id)
        keys = _keys.ThreadKeys.build(self.prefix, checked)
        if len(self._keys_cache) >= _KEYS_CACHE_SIZE:
            self._keys_cache.clear()  # a plain bound; rebuilding keys is cheap
        self._keys_cache[checked] = keys
        return keys

    def _list_slot(self, keys: _keys.ThreadKeys) -> list[Command]:
        """List the thread's slot in ``P:slots`` before its first write (idempotent; sent
        in the same round trip as the write on a single Redis). The write's script then
        registers the thread in that slot's registry atomically with its data."""
        return (
            []
            if keys.slot in self._listed_slots
            else [Command.call("SADD", self._slots, keys.slot)]
        )

    def _slot_listed(self, keys: _keys.ThreadKeys) -> None:
        """Remember that ``keys.slot`` is in ``P:slots`` (after a successful write)."""
        self._listed_slots.add(keys.slot)

    @staticmethod
    def _thread_id(config: RunnableConfig) -> str:
        return _config.thread_id_of(config)

    @staticmethod
    def _normalized(config: RunnableConfig) -> RunnableConfig:
        """``config`` with ids ``str()``-ed and checked (see ``checkpoint._config``)."""
        return _config.normalized_config(config)

    @staticmethod
    def _fence(config: RunnableConfig) -> str:
        token = _config.checked_fence_token(config)
        return "" if token is None else str(token)

    def _decode(self, thread_id: str, row: Any) -> CheckpointTuple:
        return _codec.decode_row(self.serde, thread_id, row)

    # ----- durability ------------------------------------------------------------------

    def _durable(self, commands: Sequence[Command]) -> list[Command]:
        """``commands``, followed by ``WAIT`` when they hold a checkpoint or pending write
        and this saver acknowledges only what ``replicas`` replicas hold."""
        if not self.replicas or not any(command.context for command in commands):
            return list(commands)
        return [*commands, Command.call("WAIT", self.replicas, self._wait_ms)]

    def _acknowledged(self, commands: Sequence[Command], replies: list[Any]) -> list[Any]:
        """The replies of ``commands`` (sent as :meth:`_durable` made them); raises
        :class:`NotReplicatedError` when ``WAIT`` counted fewer replicas than asked."""
        if len(replies) == len(commands):
            return replies
        confirmed = int(replies[-1])
        if confirmed < self.replicas:
            raise NotReplicatedError(
                f"Redis at {self.where} holds the write, but {confirmed} of the "
                f"{self.replicas} replica(s) this saver waits for confirmed it within "
                f"{self._wait_ms / 1000:g} s (replicas=, replica_timeout=): it is not "
                "acknowledged, since a failover now could lose it. Check the replicas' "
                "link (INFO replication) or lower replicas="
            )
        return replies[:-1]

    # ----- single-step operations ----------------------------------------------------

    def _put_commands(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> tuple[list[Command], RunnableConfig]:
        config = self._normalized(config)
        conf = config["configurable"]
        thread_id = conf["thread_id"]
        checkpoint_ns = conf.get("checkpoint_ns", "") or ""
        fence = self._fence(config)
        checked = _config.checked_put(config, checkpoint, metadata, new_versions)
        new_versions = _guard.written_versions(checkpoint, new_versions)
        parent_id = conf.get("checkpoint_id") or ""
        args = _codec.encode_put(
            self.serde,
            checkpoint,
            checkpoint_ns,
            parent_id or None,
            checked.metadata,
            new_versions,
            checked.header_bytes,
        )
        keep = max(self.keep_last, args.depth) if self.keep_last else 0
        reused = _guard.reused_channels(checkpoint, new_versions)
        versions = checkpoint["channel_versions"]
        script_args = [
            fence,
            self.ttl.arg,
            keep,
            args.member,
            args.record,
            args.refs,
            args.run_member,
            _keys.checkpoint_member(checkpoint_ns, parent_id) if parent_id else "",
            thread_id,
            len(reused),
            *(_keys.blob_field(checkpoint_ns, ch, versions[ch]) for ch in reused),
            *args.blobs,
        ]
        context = WriteContext(
            thread_id, "put", checkpoint_ns, checkpoint["id"], parent_id, tuple(reused)
        )
        keys = self._thread_keys(thread_id)
        commands = [*self._list_slot(keys), Command.run("PUT", keys.script, script_args, context)]
        next_config: RunnableConfig = {
            "configurable": {
                "thread_id": conf["thread_id"],
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }
        return commands, next_config

    def _put_plan(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Plan[RunnableConfig]:
        """``put`` as a plan: one script call; if a value it reuses has no stored blob
        (never written, or expired meanwhile) nothing was written, and it is stored again
        with those values written from the checkpoint: a checkpoint is stored whole."""
        commands, next_config = self._put_commands(config, checkpoint, metadata, new_versions)
        missing = _put_status(commands, (yield commands))
        if missing:
            versions = checkpoint["channel_versions"]
            widened = {**new_versions, **{channel: versions[channel] for channel in missing}}
            commands, _ = self._put_commands(config, checkpoint, metadata, widened)
            if _put_status(commands, (yield commands)):  # it reuses nothing now
                raise AssertionError("a put that reuses nothing reported a missing blob")
        self._after_put(config)
        return next_config

    def _after_put(self, config: RunnableConfig) -> None:
        """Record that the thread's slot is listed (the put's commands succeeded)."""
        self._slot_listed(self._thread_keys(self._thread_id(config)))

    def _put_writes_commands(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> list[Command]:
        config = self._normalized(config)
        conf = config["configurable"]
        thread_id = conf["thread_id"]
        if not conf.get("checkpoint_id"):
            raise ConfigurationError(
                "put_writes needs config['configurable']['checkpoint_id'] (the checkpoint "
                "the writes belong to, as returned by put)"
            )
        checkpoint_ns = conf.get("checkpoint_ns", "") or ""
        fence = self._fence(config)
        pairs, task_id, task_path = _config.checked_writes(writes, task_id, task_path)
        triples = _codec.encode_writes(
            self.serde,
            checkpoint_ns,
            conf["checkpoint_id"],
            task_id,
            task_path,
            pairs,
        )
        guard = ""
        if self.keep_last:  # late writes of a retired checkpoint are dropped by the script
            guard = _keys.checkpoint_member(checkpoint_ns, conf["checkpoint_id"])
        script_args = [fence, self.ttl.arg, guard, *triples]
        context = WriteContext(thread_id, "put_writes")
        keys = self._thread_keys(thread_id).script
        return [Command.run("PUT_WRITES", keys, script_args, context)]

    def _get_commands(self, config: RunnableConfig) -> tuple[str, list[Command]]:
        config = self._normalized(config)
        conf = config["configurable"]
        thread_id = conf["thread_id"]
        checkpoint_ns = conf.get("checkpoint_ns", "") or ""
        checkpoint_id = get_checkpoint_id(config)
        if checkpoint_id:
            args = [
                self.ttl.read_arg,
                "exact",
                _keys.checkpoint_member(checkpoint_ns, checkpoint_id),
            ]
        else:
            args = [self.ttl.read_arg, "latest", _keys.quote(checkpoint_ns)]
        return thread_id, [Command.run("LOAD", self._thread_keys(thread_id).script, args)]

    def _get_result(self, thread_id: str, replies: list[Any]) -> CheckpointTuple | None:
        rows = replies[0]
        if not rows or not rows[0]:
            return None
        return self._decode(thread_id, rows[0])

    def _delta_commands(self, config: RunnableConfig, channels: Sequence[str]) -> list[Command]:
        config = self._normalized(config)
        conf = config["configurable"]
        args = [
            self.ttl.read_arg,
            _keys.quote(conf.get("checkpoint_ns", "") or ""),
            _keys.quote(get_checkpoint_id(config) or ""),
            *(_keys.quote(ch) for ch in _config.checked_channels(channels)),
        ]
        keys = self._thread_keys(self._thread_id(config))
        return [Command.run("DELTA_HISTORY", keys.script, args)]

    def _delete_thread_commands(self, thread_id: str) -> list[Command]:
        # One script: data, slot-registry entry, fence and lease together (erasure is
        # never refused); the layout-v1 registry entry, if any, goes too.
        thread_id = _config.checked_thread_id(thread_id)
        keys = self._thread_keys(thread_id)
        return [
            Command.run("DELETE_THREAD", keys.script, [self.ttl.arg, thread_id]),
            Command.call("ZREM", self._legacy_registry, thread_id),
        ]

    # ----- multi-step plans ----------------------------------------------------------

    def _threads_plan(self) -> Plan[list[tuple[str, str]]]:
        """Every registered ``(thread id, slot tag)``; the tag is ``""`` for a thread only
        the layout-v1 registry lists (``setup()`` migrates those)."""
        slots_reply, legacy = yield [
            Command.call("SMEMBERS", self._slots),
            Command.call("ZRANGE", self._legacy_registry, 0, -1),
        ]
        slots = sorted(_text(tag) for tag in slots_reply)
        found: dict[str, str] = {}
        for start in range(0, len(slots), _THREAD_BATCH):
            batch = slots[start : start + _THREAD_BATCH]
            replies = yield [
                Command.call("ZRANGE", _keys.slot_registry_key(self.prefix, tag), 0, -1)
                for tag in batch
            ]
            for tag, members in zip(batch, replies, strict=True):
                for member in members:
                    found[_text(member)] = tag
        for member in legacy:
            found.setdefault(_text(member), "")
        return sorted(found.items())

    def _candidates_plan(
        self, config: RunnableConfig | None, before_id: str | None, limit: int | None
    ) -> Plan[list[tuple[str, str]]]:
        """``(thread_id, member)`` pairs to list, newest first."""
        if config is not None:
            conf = config["configurable"]
            thread_id = self._thread_id(config)
            keys = self._thread_keys(thread_id)
            checkpoint_ns = conf.get("checkpoint_ns")
            checkpoint_id = get_checkpoint_id(config)
            if checkpoint_ns is not None and not checkpoint_id:
                low, high = _keys.namespace_range(checkpoint_ns)
                if before_id:
                    high = "(" + _keys.checkpoint_member(checkpoint_ns, before_id)
                extra: tuple[Any, ...] = ("LIMIT", 0, limit) if limit else ()
                replies = yield [Command.call("ZREVRANGEBYLEX", keys.idx, high, low, *extra)]
                return [(thread_id, _text(m)) for m in replies[0]]
            registered = [(thread_id, "")]
        else:
            registered = yield from self._threads_plan()
        pairs: list[tuple[str, str, str]] = []
        for start in range(0, len(registered), _THREAD_BATCH):
            batch = registered[start : start + _THREAD_BATCH]
            replies = yield [
                Command.call("ZRANGE", self._thread_keys(t).idx, 0, -1) for t, _ in batch
            ]
            # Threads emptied by delete_for_runs or expired by TTL leave their slot
            # registry here (the script re-checks each one atomically).
            gone: dict[str, list[str]] = {}
            for (thread, tag), members in zip(batch, replies, strict=True):
                if tag and not members:
                    gone.setdefault(tag, []).append(thread)
            if gone:
                yield [self._forget_command(tag, threads) for tag, threads in gone.items()]
            for (thread, _), members in zip(batch, replies, strict=True):
                for raw in members:
                    member = _text(raw)
                    cid = _keys.split_member(member)[1]
                    pairs.append((cid, thread, member))
        if config is not None:
            conf = config["configurable"]
            wanted_ns = conf.get("checkpoint_ns")
            wanted_id = get_checkpoint_id(config)
            pairs = [
                p
                for p in pairs
                if (wanted_ns is None or _keys.split_member(p[2])[0] == wanted_ns)
                and (not wanted_id or p[0] == wanted_id)
            ]
        if before_id:
            pairs = [p for p in pairs if p[0] < before_id]
        pairs.sort(key=lambda p: p[0], reverse=True)
        return [(thread, member) for _, thread, member in pairs]

    def _list_plan(
        self,
        config: RunnableConfig | None,
        filter: Mapping[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> Plan[None]:
        if config is not None:
            config = self._normalized(config)
        filter = _config.checked_filter(filter)
        limit = _config.checked_limit(limit)
        before = _config.checked_before(before)
        if limit == 0:  # also negative limits: nothing to list
            return
        before_id = get_checkpoint_id(before) if before else None
        candidates = yield from self._candidates_plan(config, before_id, None if filter else limit)
        remaining = limit if limit is not None else len(candidates)
        for start in range(0, len(candidates), _PAGE):
            if remaining <= 0:
                return
            page = candidates[start : start + _PAGE]
            if filter:
                page = yield from self._filter_plan(page, filter)
            page = page[:remaining]
            if not page:
                continue
            groups = _group(page)
            replies = yield [
                Command.run("LOAD", self._thread_keys(t).script, [self.ttl.read_arg, "exact", *ms])
                for t, ms in groups.items()
            ]
            loaded: dict[tuple[str, str], Any] = {}
            for (thread, members), rows in zip(groups.items(), replies, strict=True):
                for member, row in zip(members, rows, strict=True):
                    loaded[(thread, member)] = row
            items = [self._decode(t, loaded[(t, m)]) for t, m in page if loaded.get((t, m))]
            remaining -= len(items)
            yield Emit(items)

    def _filter_plan(
        self, page: list[tuple[str, str]], wanted: Mapping[str, Any]
    ) -> Plan[list[tuple[str, str]]]:
        groups = _group(page)
        replies = yield [
            Command.call("HMGET", self._thread_keys(t).cp, *ms) for t, ms in groups.items()
        ]
        records: dict[tuple[str, str], bytes] = {}
        for (thread, members), values in zip(groups.items(), replies, strict=True):
            for member, record in zip(members, values, strict=True):
                if record is not None:
                    records[(thread, member)] = record
        return [
            pair
            for pair in page
            if pair in records
            and _codec.matches_filter(_codec.decode_metadata(self.serde, records[pair]), wanted)
        ]

    def _prune_plan(
        self, thread_ids: Sequence[str], strategy: str, keep_last: int | None = None
    ) -> Plan[None]:
        ids, keep = _config.checked_prune(thread_ids, strategy, keep_last)
        busy: list[str] = []
        for thread_id in ids:
            if keep == 0:
                yield self._delete_thread_commands(thread_id)
                continue
            keys = self._thread_keys(thread_id)
            leased, refs, records = yield [
                Command.call("EXISTS", keys.lease),
                Command.call("HGETALL", keys.refs),
                Command.call("HGETALL", keys.cp),
            ]
            if leased:  # refused even with nothing to prune (as on Postgres)
                busy.append(str(thread_id))
                continue
            drops = keep_latest_drops(
                {
                    _text(k): _codec.decode_refs(v)[0]
                    for k, v in _field_pairs(refs)
                    if _text(k) != _keys.PRUNED_FIELD
                },
                {_text(k): v for k, v in _field_pairs(records)},
                self.serde,
                keep,
            )
            if drops:
                (pruned,) = yield [Command.run("PRUNE", keys.script, drops)]
                if pruned == PRUNE_BUSY:
                    busy.append(str(thread_id))
        if busy:  # the others are pruned; a leased thread is only changed by its holder
            raise _guard.busy_error(busy[0] if len(busy) == 1 else busy, "prune")

    def _delete_for_runs_plan(self, run_ids: Sequence[str]) -> Plan[None]:
        quoted = [_keys.quote(r) for r in _config.checked_ids(run_ids, "run_ids")]
        if not quoted:
            return
        registered = yield from self._threads_plan()
        for start in range(0, len(registered), _THREAD_BATCH):
            batch = registered[start : start + _THREAD_BATCH]
            yield [
                Command.run(
                    "DELETE_RUNS",
                    self._thread_keys(t).script,
                    [self.ttl.arg, t, secret_text(), *quoted],
                )
                for t, _ in batch
            ]

    def _copy_thread_plan(self, source_thread_id: str, target_thread_id: str) -> Plan[None]:
        source = self._thread_keys(source_thread_id)
        target = _config.checked_thread_id(target_thread_id)
        keys = self._thread_keys(target)
        dump, leased = yield [
            Command.run("DUMP", source.script),
            Command.call("EXISTS", keys.lease),
        ]
        if not dump[0]:  # nothing to copy; a leased target is refused all the same
            if leased:
                raise _guard.busy_error(target, "copy_thread")
            return
        lengths = [len(part) for part in dump]
        items = [item for part in dump for item in part]
        args = [self.ttl.arg, *lengths, target, *items]
        context = WriteContext(target, "copy_thread")
        yield [*self._list_slot(keys), Command.run("RESTORE", keys.script, args, context)]
        self._slot_listed(keys)

    def _forget_command(self, tag: str, threads: Sequence[str]) -> Command:
        """Drop threads without checkpoints from slot ``tag``'s registry (atomic check)."""
        registry = _keys.slot_registry_key(self.prefix, tag)
        indexes = [self._thread_keys(t).idx for t in threads]
        return Command.run("REGISTRY_FORGET", [registry, *indexes], threads)

    def _migrate_registry_plan(self) -> Plan[None]:
        """Move the layout-v1 registry (``P:threads``) into the per-slot registries."""
        (legacy,) = yield [Command.call("ZRANGE", self._legacy_registry, 0, -1)]
        threads = [_text(member) for member in legacy]
        for start in range(0, len(threads), _THREAD_BATCH):
            batch = threads[start : start + _THREAD_BATCH]
            keys = [self._thread_keys(t) for t in batch]
            # slots first, then the registries, then the v1 entries: a failure at any
            # point leaves every thread listed by one registry or the other
            yield [Command.call("SADD", self._slots, *sorted({k.slot for k in keys}))]
            yield [
                Command.run("REGISTER", k.script, [thread])
                for k, thread in zip(keys, batch, strict=True)
            ]
            yield [Command.call("ZREM", self._legacy_registry, *batch)]

    def _setup_result(self, info: Mapping[str, Any], schema: Any) -> list[Command]:
        """Check the server and the stored layout version; commands that finish setup."""
        if info and all(isinstance(v, Mapping) for v in info.values()):
            for node_info in info.values():
                check_server_version(node_info)
        else:
            check_server_version(info)
        if schema is not None and int(schema) > _keys.SCHEMA_VERSION:
            raise MigrationError(
                f"the keys under prefix {self.prefix!r} use layout v{int(schema)}, newer than "
                f"this langgraph-recall (v{_keys.SCHEMA_VERSION}); upgrade the package"
            )
        return [Command.call("SET", _keys.schema_key(self.prefix), _keys.SCHEMA_VERSION)]


def _put_status(commands: Sequence[Command], replies: Sequence[Any]) -> list[str]:
    """The reused channels a ``put``'s script reply says are missing (its last command)."""
    context = commands[-1].context
    assert context is not None, "the PUT command carries its write context"
    return context.missing_blobs(replies[-1])


def _field_pairs(reply: Any) -> list[tuple[Any, Any]]:
    """``(field, value)`` pairs of an ``HGETALL`` reply: a dict (redis-py's response
    callback on the generic path; redis-py 8's parser even on the fast lane) or the flat
    RESP2 list redis-py 5.2 - 7 return on the fast lane (``prune`` failed there before)."""
    if isinstance(reply, Mapping):
        return list(reply.items())
    return [(reply[i], reply[i + 1]) for i in range(0, len(reply), 2)]


def _group(pairs: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for thread, member in pairs:
        groups.setdefault(thread, []).append(member)
    return groups
