"""The I/O-free core shared by :class:`RedisSaver` and :class:`AsyncRedisSaver`.

Every operation is a *plan* (:mod:`~langgraph_recall.checkpoint.redis._commands`): a
generator that yields batches of :class:`Command` and receives their replies, or yields
:class:`Emit` with results for the caller. The sync and async savers only drive plans
(``saver.py`` / ``aio.py``), so both share all of the logic here and differ by ``await``;
what they give their clients and how errors are worded is
:mod:`~langgraph_recall.checkpoint.redis._client`.

Example:
    ```python
    from langgraph_recall.checkpoint._config import ThreadTTL

    ttl = ThreadTTL.from_option({"default_ttl": 60, "refresh_on_read": True})
    assert ttl.ttl_ms == 3_600_000 and ttl.refresh_on_read
    ```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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
from redis.client import NEVER_DECODE

from langgraph_recall.checkpoint import _config, _guard
from langgraph_recall.checkpoint._config import ThreadTTL, ThreadTTLConfig
from langgraph_recall.checkpoint.redis import _codec, _keys
from langgraph_recall.checkpoint.redis._client import (
    CLUSTER_RETRIED_ERRORS,
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_SOCKET_TIMEOUT,
    MIN_SERVER_VERSION,
    check_server_version,
    checked_replicas,
    client_defaults,
    client_url_options,
    decodes_responses,
    describe_client,
    is_cluster,
    translate_errors,
)
from langgraph_recall.checkpoint.redis._commands import (
    Command,
    Emit,
    Plan,
    WriteContext,
    as_text,
)
from langgraph_recall.checkpoint.redis._retention import keep_latest_drops
from langgraph_recall.checkpoint.redis._scripts import PRUNE_BUSY
from langgraph_recall.errors import ConfigurationError, MigrationError, NotReplicatedError
from langgraph_recall.lease._tokens import secret_text

# the names re-exported here lived in this module before it was split
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

_PAGE = 64
_THREAD_BATCH = 100
_KEYS_CACHE_SIZE = 1024


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
            {NEVER_DECODE: True} if decodes_responses(client) else {}
        )
        if keep_last is not None:
            _config.checked_keep_last(keep_last)
        self._client = client
        self.prefix = _keys.validate_prefix(prefix)
        self.ttl = ThreadTTL.from_option(ttl)
        self.keep_last = keep_last
        self.is_cluster = is_cluster(client)
        self.replicas, self._wait_ms = checked_replicas(replicas, replica_timeout, self.is_cluster)
        self._slots = _keys.slots_key(self.prefix)
        self._legacy_registry = _keys.legacy_registry_key(self.prefix)
        # slot tags this saver has seen listed in P:slots (entries are never removed)
        self._listed_slots: set[str] = set()
        # thread id -> its keys (dict get/set are atomic: safe across threads)
        self._keys_cache: dict[str, _keys.ThreadKeys] = {}

    @property
    def where(self) -> str:
        """The server this saver's client reaches, for messages (read when asked: a Sentinel
        client reaches another server after a failover)."""
        return describe_client(self._client)

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
        slots = sorted(as_text(tag) for tag in slots_reply)
        found: dict[str, str] = {}
        for start in range(0, len(slots), _THREAD_BATCH):
            batch = slots[start : start + _THREAD_BATCH]
            replies = yield [
                Command.call("ZRANGE", _keys.slot_registry_key(self.prefix, tag), 0, -1)
                for tag in batch
            ]
            for tag, members in zip(batch, replies, strict=True):
                for member in members:
                    found[as_text(member)] = tag
        for member in legacy:
            found.setdefault(as_text(member), "")
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
                return [(thread_id, as_text(m)) for m in replies[0]]
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
                    member = as_text(raw)
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
                    as_text(k): _codec.decode_refs(v)[0]
                    for k, v in _field_pairs(refs)
                    if as_text(k) != _keys.PRUNED_FIELD
                },
                {as_text(k): v for k, v in _field_pairs(records)},
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
        threads = [as_text(member) for member in legacy]
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
