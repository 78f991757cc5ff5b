"""Every Redis key and hash field the Redis checkpointer uses (the only key builder).

Layout (``P`` = prefix, ``T`` = the quoted thread id; ``{T}`` is a cluster hash tag,
so all keys of one thread live in one slot and a Lua script may touch them together):

==================  ======  ==========================================================
key                 type    content
==================  ======  ==========================================================
``P:{T}:idx``       zset    ``ns\\0cid`` members, score 0 (lexicographic = time order)
``P:{T}:cp``        hash    ``ns\\0cid`` -> serialized checkpoint + metadata
``P:{T}:refs``      hash    ``ns\\0cid`` -> msgpack ``[parent, run, blob fields...]``;
                            ``pruned`` -> newest checkpoint id retention deleted
``P:{T}:blobs``     hash    ``ns\\0channel\\0version`` -> serialized channel value
``P:{T}:w``         hash    ``ns\\0cid\\0task\\0idx`` -> serialized pending write
``P:{T}:wk``        zset    the ``w`` fields, for range lookups per checkpoint
``P:{T}:runs``      zset    ``run\\0ns\\0cid`` (``delete_for_runs``)
``P:{T}:fence``     string  the thread's current fencing token (see ``lease._tokens``)
``P:{T}:lease``     string  ``@<token>|<epoch>|<owner>`` of the lease holder (``PX``)
``P:{S}:threads``   zset    ids of the threads whose keys hash to slot ``S`` (registry)
``P:slots``         set     the slot tags ``S`` whose registry holds threads
``P:threads``       zset    registry of layout v1 (read until ``setup()`` migrates it)
``P:schema``        string  layout version written by ``setup()``
==================  ======  ==========================================================

The registry is kept **per cluster hash slot**: ``S`` is a short tag that hashes to the
same slot as ``T`` (see :func:`slot_tag`), so the ``PUT`` script registers the thread
atomically with its first checkpoint, even on a cluster. ``P:slots`` is written *before*
a saver's first write into a slot (idempotent), so a failure between the two round trips
can leave a listed slot without threads, never a thread that ``list(None)`` misses.

Every variable part is *quoted*: ``%``, NUL and braces are percent-escaped, so a quoted
part never contains the ``\\0`` field separator or a brace that would break the hash tag.

Example:
    ```python
    from langgraph_recall.checkpoint.redis._keys import ThreadKeys, quote

    keys = ThreadKeys.build("lgm", "user{1}")
    assert keys.idx == "lgm:{user%7B1%7D}:idx"
    assert quote("a\\0b") == "a%00b"
    ```
"""

from __future__ import annotations

import binascii
import functools
import itertools
import string
from dataclasses import dataclass

from langgraph_recall.errors import ConfigurationError

__all__ = [
    "PRUNED_FIELD",
    "SCHEMA_VERSION",
    "SEP",
    "SLOTS",
    "ThreadKeys",
    "blob_channel",
    "blob_field",
    "checkpoint_member",
    "legacy_registry_key",
    "namespace_range",
    "quote",
    "run_member",
    "schema_key",
    "slot_registry_key",
    "slot_tag",
    "slots_key",
    "split_member",
    "thread_tag",
    "unquote",
    "validate_prefix",
    "write_field",
]

SCHEMA_VERSION = 2
"""Version of the key layout above; ``setup()`` refuses a newer one (v1 had one global
registry, ``P:threads``; ``setup()`` moves it into the per-slot registries)."""

PRUNED_FIELD = "pruned"
"""The ``refs`` field holding the newest (quoted) checkpoint id retention deleted from the
thread: a later ``put`` onto a parent at or below it is refused. No checkpoint member is
named like it (every member holds :data:`SEP`)."""

SLOTS = 16384
"""Hash slots of a Redis Cluster."""

SEP = "\x00"
"""Separator of the parts of a hash field / zset member."""

_ESCAPES = {"%": "%25", "\x00": "%00", "{": "%7B", "}": "%7D"}
_UNESCAPES = {value: key for key, value in _ESCAPES.items()}


def quote(part: str) -> str:
    """Escape ``%``, NUL, ``{`` and ``}`` so ``part`` is safe in a key, tag or field."""
    if "%" not in part and "\x00" not in part and "{" not in part and "}" not in part:
        return part
    return "".join(_ESCAPES.get(ch, ch) for ch in part)


def unquote(part: str) -> str:
    """Invert :func:`quote`."""
    if "%" not in part:
        return part
    out: list[str] = []
    i = 0
    while i < len(part):
        chunk = part[i : i + 3]
        if chunk in _UNESCAPES:
            out.append(_UNESCAPES[chunk])
            i += 3
        else:
            out.append(part[i])
            i += 1
    return "".join(out)


def validate_prefix(prefix: str) -> str:
    """Return ``prefix`` if usable as a key prefix, else raise :class:`ConfigurationError`."""
    if not isinstance(prefix, str) or not prefix:
        raise ConfigurationError("prefix must be a non-empty string, e.g. prefix='lgm'")
    if any(ch in prefix for ch in "{}\x00"):
        raise ConfigurationError(
            f"prefix {prefix!r} must not contain braces or NUL (they would break the "
            "cluster hash tag); use letters, digits, ':' or '_'"
        )
    return prefix


def thread_tag(thread_id: str) -> str:
    """The cluster hash tag of a thread: its quoted id, or ``%`` for the empty id (an
    empty ``{}`` tag would make Redis hash the whole key; quoting never yields a lone ``%``)."""
    return quote(str(thread_id)) or "%"


def _slot(tag: str) -> int:
    """The cluster hash slot of a key whose hash tag is ``tag`` (CRC16/XMODEM mod 16384,
    the function Redis Cluster uses)."""
    return binascii.crc_hqx(tag.encode(), 0) % SLOTS


@functools.cache
def _slot_tags() -> tuple[str, ...]:
    """For each slot, the first alphanumeric string (shortest first) that hashes to it."""
    alphabet = string.digits + string.ascii_letters
    tags: dict[int, str] = {}
    for length in itertools.count(1):
        for letters in itertools.product(alphabet, repeat=length):
            candidate = "".join(letters)
            tags.setdefault(_slot(candidate), candidate)
        if len(tags) == SLOTS:
            return tuple(tags[slot] for slot in range(SLOTS))
    raise AssertionError("unreachable")  # pragma: no cover


def slot_tag(thread_tag_: str) -> str:
    """A short tag in the same cluster slot as the hash tag of a thread's keys.

    Deterministic (every process and version computes the same tag), built once per
    process the first time a registry key is needed.

    Example:
        ```python
        from langgraph_recall.checkpoint.redis._keys import _slot, slot_tag, thread_tag

        tag = slot_tag(thread_tag("chat-1"))
        assert _slot(tag) == _slot(thread_tag("chat-1")) and tag.isalnum()
        ```
    """
    return _slot_tags()[_slot(thread_tag_)]


@dataclass(frozen=True)
class ThreadKeys:
    """The keys of one thread, all in the same cluster hash slot (its registry too)."""

    idx: str
    cp: str
    refs: str
    blobs: str
    writes: str
    write_index: str
    runs: str
    fence: str
    lease: str
    registry: str
    slot: str
    """The tag of the thread's slot registry (a member of ``P:slots``)."""

    @classmethod
    def build(cls, prefix: str, thread_id: str) -> ThreadKeys:
        """Keys of ``thread_id`` under ``prefix``."""
        tag = thread_tag(thread_id)
        slot = slot_tag(tag)
        base = f"{prefix}:{{{tag}}}:"
        return cls(
            idx=base + "idx",
            cp=base + "cp",
            refs=base + "refs",
            blobs=base + "blobs",
            writes=base + "w",
            write_index=base + "wk",
            runs=base + "runs",
            fence=base + "fence",
            lease=base + "lease",
            registry=slot_registry_key(prefix, slot),
            slot=slot,
        )

    @property
    def data(self) -> list[str]:
        """The keys a checkpoint script receives as ``KEYS[1..8]`` (fixed order)."""
        return [
            self.idx,
            self.cp,
            self.refs,
            self.blobs,
            self.writes,
            self.write_index,
            self.runs,
            self.fence,
        ]

    @property
    def script(self) -> list[str]:
        """The keys every per-thread script receives: :attr:`data`, then ``KEYS[9]`` lease
        and ``KEYS[10]`` the slot registry (all in one cluster slot)."""
        return [*self.data, self.lease, self.registry]


def slot_registry_key(prefix: str, slot: str) -> str:
    """Key of the registry of the threads in slot tag ``slot``.

    Example:
        ```python
        from langgraph_recall.checkpoint.redis._keys import slot_registry_key

        assert slot_registry_key("lgm", "a1") == "lgm:{a1}:threads"
        ```
    """
    return f"{prefix}:{{{slot}}}:threads"


def slots_key(prefix: str) -> str:
    """Key of the set of slot tags whose registry may hold threads."""
    return f"{prefix}:slots"


def legacy_registry_key(prefix: str) -> str:
    """Key of the single registry of layout v1 (``setup()`` migrates it)."""
    return f"{prefix}:threads"


def schema_key(prefix: str) -> str:
    """Key holding the layout version written by ``setup()``."""
    return f"{prefix}:schema"


def checkpoint_member(checkpoint_ns: str, checkpoint_id: str) -> str:
    """Index member / hash field of one checkpoint: ``ns\\0cid``."""
    return f"{quote(checkpoint_ns)}{SEP}{quote(checkpoint_id)}"


def split_member(member: str) -> tuple[str, str]:
    """``(checkpoint_ns, checkpoint_id)`` of a :func:`checkpoint_member`."""
    ns, _, cid = member.partition(SEP)
    return unquote(ns), unquote(cid)


def namespace_range(checkpoint_ns: str) -> tuple[str, str]:
    """``(min, max)`` lexicographic bounds (``ZRANGEBYLEX`` syntax) of a namespace's members."""
    quoted = quote(checkpoint_ns)
    return f"[{quoted}{SEP}", f"({quoted}\x01"


def blob_field(checkpoint_ns: str, channel: str, version: str | int | float) -> str:
    """Field of one channel value at one version: ``ns\\0channel\\0version``."""
    return f"{quote(checkpoint_ns)}{SEP}{quote(channel)}{SEP}{quote(str(version))}"


def blob_channel(field: str) -> str:
    """The channel name of a :func:`blob_field`."""
    return unquote(field.split(SEP)[1])


def write_field(member: str, task_id: str, idx: int) -> str:
    """Field of one pending write of the checkpoint ``member``."""
    return f"{member}{SEP}{quote(task_id)}{SEP}{idx}"


def run_member(run_id: str, member: str) -> str:
    """Member of the run index linking ``run_id`` to checkpoint ``member``."""
    return f"{quote(run_id)}{SEP}{member}"
