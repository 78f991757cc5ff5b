"""Unit tests (no Redis) of the Redis checkpointer's pure modules: keys, codec, options."""

from __future__ import annotations

import ormsgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph.checkpoint.base import WRITES_IDX_MAP, empty_checkpoint
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import ERROR, INTERRUPT
from redis import exceptions as redis_errors
from redis.crc import key_slot

from langgraph_recall.checkpoint._config import ThreadTTL
from langgraph_recall.checkpoint.redis import _codec, _keys
from langgraph_recall.checkpoint.redis._base import (
    Command,
    WriteContext,
    check_server_version,
    client_url_options,
    keep_latest_drops,
    translate_errors,
)
from langgraph_recall.checkpoint.redis._scripts import SCRIPT_SHAS, SCRIPTS
from langgraph_recall.errors import (
    BackendUnavailableError,
    CheckpointIntegrityError,
    ConfigurationError,
    InvalidConnectionStringError,
    LangGraphRecallError,
    StaleWriteError,
    ThreadBusyError,
)

SERDE = JsonPlusSerializer()
text = st.text(alphabet=st.characters(codec="utf-8"), max_size=30)


@given(text)
def test_quote_roundtrips_and_removes_separators(part: str) -> None:
    quoted = _keys.quote(part)
    assert _keys.unquote(quoted) == part
    assert not any(ch in quoted for ch in "{}\x00")


@given(text)
def test_all_keys_of_a_thread_share_one_cluster_slot(thread_id: str) -> None:
    keys = _keys.ThreadKeys.build("lgm", thread_id)
    everything = [*keys.data, keys.lease]
    assert len(set(everything)) == 9
    assert len({key_slot(k.encode()) for k in everything}) == 1
    tag = everything[0].split("{", 1)[1].split("}", 1)[0]
    assert tag == _keys.thread_tag(thread_id) != ""
    assert _keys.unquote(tag) == (thread_id or "%")


def test_distinct_threads_get_distinct_keys() -> None:
    assert _keys.ThreadKeys.build("p", "a}b").idx != _keys.ThreadKeys.build("p", "a%7Db").idx
    assert _keys.ThreadKeys.build("p", "x").idx == "p:{x}:idx"


@given(text, text, text)
def test_namespace_range_contains_exactly_its_members(ns: str, other: str, cid: str) -> None:
    low, high = _keys.namespace_range(ns)
    member = _keys.checkpoint_member(ns, cid)
    assert low[1:] <= member < high[1:]
    foreign = _keys.checkpoint_member(other, cid)
    if other != ns:
        assert not (low[1:] <= foreign < high[1:])
    assert _keys.split_member(member) == (ns, cid)


@given(text, text, st.one_of(text, st.integers()))
def test_blob_fields_name_their_channel(ns: str, channel: str, version: str | int) -> None:
    field = _keys.blob_field(ns, channel, version)
    assert _keys.blob_channel(field) == channel
    assert field.count(_keys.SEP) == 2


def test_write_fields_fall_in_their_checkpoint_range() -> None:
    member = _keys.checkpoint_member("", "abc")
    longer = _keys.checkpoint_member("", "abcd")
    field = _keys.write_field(member, "task", -1)
    assert member + _keys.SEP <= field < member + "\x01"
    assert not (member + _keys.SEP <= _keys.write_field(longer, "task", 0) < member + "\x01")


def test_prefix_validation() -> None:
    assert _keys.validate_prefix("app:lgm") == "app:lgm"
    for bad in ("", "a{b", "x}", "a\x00"):
        with pytest.raises(ConfigurationError):
            _keys.validate_prefix(bad)


def _load_reply(
    args: _codec.PutArgs, writes: list[bytes], earlier: dict[str, bytes] | None = None
) -> list[object]:
    """What the LOAD script returns for a put (built by hand: blobs found in refs order;
    ``earlier``: blobs an earlier put stored)."""
    fields = _codec.decode_refs(args.refs)[2]
    stored = {**(earlier or {}), **dict(zip(args.blobs[::2], args.blobs[1::2], strict=True))}
    pairs: list[object] = []
    for field in fields:
        if field in stored:
            pairs += [field.encode(), stored[field]]
    return [args.member.encode(), args.record, args.refs, pairs, writes]


def test_put_encoding_roundtrips_through_decode_row() -> None:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"messages": ["hi", {"n": 1}], "count": 3}
    checkpoint["channel_versions"] = {"messages": "2", "count": "1", "gone": "5"}
    metadata = {"source": "loop", "step": 4, "run_id": "r-1", "custom": [1, 2]}
    args = _codec.encode_put(SERDE, checkpoint, "sub:1", "parent-id", metadata, {"messages": "2"})
    # only the new version's blob is written, but refs name every channel version
    assert args.blobs[0] == _keys.blob_field("sub:1", "messages", "2")
    assert len(args.blobs) == 2
    assert _codec.decode_refs(args.refs) == (
        "parent-id",
        "r-1",
        [_keys.blob_field("sub:1", c, v) for c, v in checkpoint["channel_versions"].items()],
    )
    assert args.run_member == _keys.run_member("r-1", args.member)
    writes = _codec.encode_writes(SERDE, "sub:1", checkpoint["id"], "t1", "p", [("x", 1)])
    # "count" is reused from an earlier put: without its blob the row is not whole
    with pytest.raises(CheckpointIntegrityError, match=r"'count'.*delete_thread"):
        _codec.decode_row(SERDE, "thread", _load_reply(args, [writes[1]]))
    earlier = {_keys.blob_field("sub:1", "count", "1"): _codec.encode_blob(SERDE, 3)}
    decoded = _codec.decode_row(SERDE, "thread", _load_reply(args, [writes[1]], earlier))
    assert decoded.config == {
        "configurable": {
            "thread_id": "thread",
            "checkpoint_ns": "sub:1",
            "checkpoint_id": checkpoint["id"],
        }
    }
    assert decoded.parent_config["configurable"]["checkpoint_id"] == "parent-id"  # type: ignore[index]
    assert decoded.checkpoint["channel_values"] == {"messages": ["hi", {"n": 1}], "count": 3}
    assert decoded.checkpoint["channel_versions"] == checkpoint["channel_versions"]
    assert decoded.metadata == metadata
    assert decoded.pending_writes == [("t1", "x", 1)]


def test_writes_use_special_indexes_and_sort_like_langgraph() -> None:
    triples = _codec.encode_writes(
        SERDE, "", "cid", "task", "~a", [("a", 1), (ERROR, "boom"), (INTERRUPT, {"q": 1})]
    )
    fields, payloads, upserts = triples[0::3], triples[1::3], triples[2::3]
    assert [f.rsplit(_keys.SEP, 1)[1] for f in fields] == [  # type: ignore[union-attr]
        "0",
        str(WRITES_IDX_MAP[ERROR]),
        str(WRITES_IDX_MAP[INTERRUPT]),
    ]
    assert upserts == ["0", "1", "1"]
    keys = [_codec.decode_write(SERDE, p)[0] for p in payloads]  # type: ignore[arg-type]
    assert sorted(keys) == [("~a", "task", -3), ("~a", "task", -1), ("~a", "task", 0)]


def test_metadata_filter_is_containment() -> None:
    metadata = {"source": "loop", "step": 2, "user": {"id": 7, "tier": "pro"}, "tags": ["a"]}
    assert _codec.matches_filter(metadata, None)
    assert _codec.matches_filter(metadata, {"source": "loop", "step": 2})
    assert _codec.matches_filter(metadata, {"user": {"tier": "pro"}})
    assert not _codec.matches_filter(metadata, {"step": 3})
    assert not _codec.matches_filter(metadata, {"missing": None})
    assert not _codec.matches_filter(metadata, {"user": {"tier": "free"}})
    record = ormsgpack.packb(["x", b"", *SERDE.dumps_typed(metadata)])
    assert _codec.decode_metadata(SERDE, record) == metadata


def test_versions_increase_and_are_fork_safe() -> None:
    first = _codec.next_version(None)
    second = _codec.next_version(first)
    assert first < second and second.startswith("0" * 31 + "2.")
    assert _codec.next_version(7).startswith("0" * 31 + "8.")
    assert _codec.next_version(first) != _codec.next_version(first)  # random suffix


def test_delta_depth_and_keep_latest_drops_keep_delta_chains() -> None:
    assert _codec.delta_depth({}) == 0
    assert _codec.delta_depth({"counters_since_delta_snapshot": {"m": (2, 3)}}) == 5

    def record(counters: dict[str, tuple[int, int]] | None) -> bytes:
        md = {"counters_since_delta_snapshot": counters} if counters else {}
        return ormsgpack.packb(["x", b"", *SERDE.dumps_typed(md)])

    def member(cid: str, ns: str = "") -> str:
        return _keys.checkpoint_member(ns, cid)

    # root: c1 (snapshot) <- c2 <- c3 <- c4 (head, 2 steps since snapshot); c0 older
    records = {
        member("c0"): record(None),
        member("c1"): record(None),
        member("c2"): record({"m": (1, 1)}),
        member("c3"): record({"m": (2, 2)}),
        member("c4"): record({"m": (3, 3)}),
        member("s1", "sub:x"): record(None),
        member("s2", "sub:x"): record(None),
    }
    parents = {
        member("c1"): "c0",
        member("c2"): "c1",
        member("c3"): "c2",
        member("c4"): "c3",
        member("s2", "sub:x"): "s1",
    }
    drops = keep_latest_drops(parents, records, SERDE)
    assert drops == sorted([member("c0"), member("s1", "sub:x")])
    # without delta counters only the heads survive
    plain = {m: record(None) for m in records}
    assert set(keep_latest_drops(parents, plain, SERDE)) == set(records) - {
        member("c4"),
        member("s2", "sub:x"),
    }


def test_options_validation() -> None:
    assert ThreadTTL.from_option(None).ttl_ms == 0
    ttl = ThreadTTL.from_option({"default_ttl": 0.5, "refresh_on_read": True})
    assert (ttl.ttl_ms, ttl.arg, ttl.read_arg) == (30_000, "30000", "30000")
    assert ThreadTTL.from_option({"default_ttl": 1}).read_arg == "0"
    for bad in ({"default_ttl": 0}, {"default_ttl": "1"}, {"ttl": 1}, 5, {"default_ttl": True}):
        with pytest.raises(ConfigurationError):
            ThreadTTL.from_option(bad)  # type: ignore[arg-type]

    assert client_url_options("redis://h:1234/0") == "h:1234"
    assert client_url_options("rediss://user:pw@h/0") == "h:6379"
    assert client_url_options("unix:///tmp/r.sock") == "unix:/tmp/r.sock"
    for bad_url in ("", "http://h", "redis://h:port", "redis:///0"):
        with pytest.raises(InvalidConnectionStringError):
            client_url_options(bad_url)

    assert check_server_version({"redis_version": "7.0.15"}) == "7.0.15"
    with pytest.raises(ConfigurationError, match=r"6\.2"):
        check_server_version({"redis_version": "6.0.9"})


def test_error_translation() -> None:
    with pytest.raises(BackendUnavailableError, match="h:1"), translate_errors("h:1"):
        raise redis_errors.ConnectionError("refused")
    # the client's own pool ran out (not the server): said so, with the fix
    exhausted = getattr(redis_errors, "MaxConnectionsError", redis_errors.ConnectionError)
    pool_error = pytest.raises(BackendUnavailableError, match="connection pool had no free")
    with pool_error, translate_errors("h:1"):
        raise exhausted("Too many connections")
    context = WriteContext("t1", "put", "", "c2", "c1", ("a", "b"))
    with pytest.raises(StaleWriteError, match="moved on since"), translate_errors("h:1", context):
        raise redis_errors.ResponseError("LGM_STALE free")
    refusals = {
        "LGM_BUSY script: abc, on @user_script:1.": (ThreadBusyError, r"'t1'.*with_thread_lease"),
    }
    for reply, (error, pattern) in refusals.items():
        with pytest.raises(error, match=pattern), translate_errors("h:1", context):
            raise redis_errors.ResponseError(reply)
    # the integrity rules answer with a status reply, never error text (bytes or str:
    # a client made with decode_responses=True gets str)
    for mark, rule in ((b"LGM_INTEGRITY", b"parent"), ("LGM_INTEGRITY", "parent")):
        with pytest.raises(CheckpointIntegrityError, match=r"parent checkpoint 'c1' was deleted"):
            context.missing_blobs([mark, rule])
    assert context.missing_blobs([b"LGM_INTEGRITY", b"blobs", 2]) == ["b"]
    assert context.missing_blobs(1) == []
    with pytest.raises(ConfigurationError, match="prefix="), translate_errors("h:1"):
        raise redis_errors.ResponseError("WRONGTYPE Operation against a key")
    # the same replies reported from a pipeline (redis-py 8's asyncio one quotes them)
    for reply in (
        "Command # 2 (ZRANGE k 0 -1) of pipeline caused error: WRONGTYPE Operation against",
        "Command # 2 (ZRANGE k 0 -1) of pipeline caused error: ('WRONGTYPE Operation',)",
    ):
        with pytest.raises(ConfigurationError, match="prefix="), translate_errors("h:1"):
            raise redis_errors.ResponseError(reply)
    with pytest.raises(BackendUnavailableError, match="loading"), translate_errors("h:1"):
        raise redis_errors.BusyLoadingError("Redis is loading the dataset in memory")
    with pytest.raises(BackendUnavailableError, match="maxmemory"), translate_errors("h:1"):
        raise redis_errors.OutOfMemoryError("command not allowed when used memory > 'maxmemory'")


@given(st.text(max_size=80))
def test_no_error_reply_escapes_raw(reply: str) -> None:
    """Whatever the server answers with an error, the caller gets one of ours."""
    with pytest.raises(LangGraphRecallError), translate_errors("h:1"):
        raise redis_errors.ResponseError(reply)


def test_commands_and_scripts() -> None:
    command = Command.run("PUT", ["k1", "k2"], ["a"])
    assert command.execute_args() == ("EVALSHA", SCRIPT_SHAS["PUT"], 2, "k1", "k2", "a")
    assert Command.call("ZRANGE", "k", 0, -1).execute_args() == ("ZRANGE", "k", 0, -1)
    for name, source in SCRIPTS.items():
        assert "KEYS(" not in source.upper().replace("KEYS[", "")  # never the KEYS command
        assert "'KEYS'" not in source.upper(), name


def test_a_sentinel_client_is_named_by_its_service_and_sentinels_not_localhost() -> None:
    """A saver on ``Sentinel(...).master_for(...)`` whose sentinels cannot be reached says
    which service and sentinels it tried (redis-py's pool has no host of its own: the message
    said ``localhost:6379``)."""
    import socket

    from redis.sentinel import Sentinel

    from langgraph_recall.checkpoint.redis import RedisSaver

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = Sentinel([("127.0.0.1", port)], socket_timeout=1.0).master_for("orders")
    saver = RedisSaver(client, prefix="snt")
    expected = f"Sentinel master 'orders' (not reached yet; sentinels 127.0.0.1:{port})"
    assert saver.where == expected
    with pytest.raises(BackendUnavailableError) as caught:
        saver.get_tuple({"configurable": {"thread_id": "t"}})
    assert expected in str(caught.value) and "6379" not in str(caught.value)
