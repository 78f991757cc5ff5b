"""Pure helpers of the Postgres saver: prune planning, migrations, fencing, programs (DSNs,
pools and the error map: tests/unit/pg)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.postgres.base import MIGRATIONS as OFFICIAL_MIGRATIONS
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import INTERRUPT

from langgraph_recall.checkpoint.postgres import _common, _read, _retention, _sql
from langgraph_recall.checkpoint.postgres._common import Stmt
from langgraph_recall.checkpoint.postgres._retention import CheckpointShape, plan_keep_last
from langgraph_recall.errors import (
    CheckpointIntegrityError,
    ConfigurationError,
    StaleWriteError,
    ThreadBusyError,
)
from langgraph_recall.lease._protocol import FENCE_CONFIG_KEY

# ----------------------------------------------------------------------------- prune plans


def chain(n: int, ns: str = "", **channels: list[str]) -> list[CheckpointShape]:
    """n linear checkpoints ``ns/1 .. ns/n``; ``channels[ch][i]`` is ch's version at i."""
    return [
        CheckpointShape(
            ns=ns,
            id=f"{i:02d}",
            parent=f"{i - 1:02d}" if i > 1 else None,
            v=4,
            versions={ch: vs[i - 1] for ch, vs in channels.items() if vs[i - 1]},
        )
        for i in range(1, n + 1)
    ]


def test_keep_latest_on_a_plain_chain_deletes_older_checkpoints_and_blobs() -> None:
    shapes = chain(3, messages=["v1", "v2", "v3"], static=["s1", "s1", "s1"])
    blobs = [("", "messages", v) for v in ("v1", "v2", "v3")] + [("", "static", "s1")]
    plan = plan_keep_last(shapes, blobs, [], keep=1)
    assert plan.delete == {"": ["01", "02"]}
    assert plan.garbage_blobs == {("", "messages"): ["v1", "v2"]}  # s1 still referenced
    assert plan.deleted_count == 2


def test_keep_last_n_per_namespace() -> None:
    shapes = chain(4, x=["1", "2", "3", "4"]) + chain(2, ns="sub:1", x=["1", "2"])
    blobs = [("", "x", v) for v in "1234"] + [("sub:1", "x", v) for v in "12"]
    plan = plan_keep_last(shapes, blobs, [], keep=2)
    assert plan.delete == {"": ["01", "02"]}
    assert plan.garbage_blobs == {("", "x"): ["1", "2"]}


def test_consumed_channels_do_not_keep_ancestors() -> None:
    # "branch:to:b" has a version but no stored value (consumed trigger): not a delta channel
    shapes = chain(3, **{"branch:to:b": ["1", "2", "3"]})
    plan = plan_keep_last(shapes, [], [], keep=1)
    assert plan.delete == {"": ["01", "02"]}


ITEMS = frozenset({"items"})


def snapshot(cid: str, parent: str | None, version: str) -> CheckpointShape:
    """A checkpoint holding a ``_DeltaSnapshot`` of "items" (inline ``true`` + blob)."""
    return CheckpointShape("", cid, parent, 4, {"items": version}, ITEMS, ITEMS)


def delta(cid: str, parent: str, version: str) -> CheckpointShape:
    """A checkpoint whose "items" DeltaChannel has unsnapshotted updates."""
    return CheckpointShape("", cid, parent, 4, {"items": version}, delta_counters=ITEMS)


def test_delta_channel_keeps_ancestors_back_to_the_snapshot() -> None:
    shapes = [
        CheckpointShape("", "00", None, 4, {}),
        snapshot("01", "00", "i1"),
        delta("02", "01", "i2"),
        delta("03", "02", "i3"),
        delta("04", "03", "i4"),
    ]
    plan = plan_keep_last(shapes, [("", "items", "i1")], [], keep=1)
    assert plan.delete == {"": ["00"]}  # 01 (the snapshot) .. 04 survive with their writes
    assert plan.garbage_blobs == {}


def test_delta_channel_unchanged_since_snapshot_needs_no_ancestors() -> None:
    shapes = [snapshot("01", None, "i1"), delta("02", "01", "i1")]
    plan = plan_keep_last(shapes, [("", "items", "i1")], [], keep=1)
    assert plan.delete == {"": ["01"]}
    assert plan.garbage_blobs == {}  # blob i1 is still read by 02


def test_pre_v4_checkpoint_keeps_its_sends_parent() -> None:
    shapes = [
        CheckpointShape("", "01", None, 1, {}),
        CheckpointShape("", "02", "01", 1, {}),
        CheckpointShape("", "03", "02", 1, {}),
    ]
    assert plan_keep_last(shapes, [], [("", "02")], keep=1).delete == {"": ["01"]}
    assert plan_keep_last(shapes, [], [], keep=1).delete == {"": ["01", "02"]}


def test_orphan_namespace_blobs_are_garbage() -> None:
    plan = plan_keep_last(chain(1, x=["1"]), [("", "x", "1"), ("gone:1", "y", "7")], [], keep=1)
    assert plan.delete == {}
    assert plan.garbage_blobs == {("gone:1", "y"): ["7"]}


# ----------------------------------------------------------------------------- migrations


def test_pending_migrations_rewrite_concurrent_indexes_inside_transactions() -> None:
    outside = _common.pending_migrations(OFFICIAL_MIGRATIONS, 5, in_transaction=False)
    inside = _common.pending_migrations(OFFICIAL_MIGRATIONS, 5, in_transaction=True)
    assert [v for v, _ in outside] == [6, 7, 8, 9]
    assert all("CONCURRENTLY" in sql for _, sql in outside[:3])
    assert not any("CONCURRENTLY" in sql for _, sql in inside)
    assert "CREATE INDEX IF NOT EXISTS checkpoints_thread_id_idx" in inside[0][1]
    assert _common.pending_migrations(OFFICIAL_MIGRATIONS, 9, in_transaction=True) == []


def drive(program: Any, replies: dict[str, list[dict[str, Any]]]) -> tuple[list[Stmt], Any]:
    """Run a program against canned rows (keyed by an SQL fragment)."""
    seen: list[Stmt] = []
    try:
        stmt = next(program)
        while True:
            seen.append(stmt)
            rows = next((r for k, r in replies.items() if k in stmt.sql), []) if stmt.fetch else []
            stmt = program.send(rows)
    except StopIteration as stop:
        return seen, stop.value


def test_setup_program_applies_official_then_our_migrations() -> None:
    seen, _ = drive(
        _common.setup_program(in_transaction=False),
        {"FROM checkpoint_migrations": [{"v": 9}], "FROM lgm_checkpoint_migrations": []},
    )
    inserted = [s.params for s in seen if s.sql == _sql.LGM_INSERT_VERSION]
    assert inserted == [(v,) for v in range(len(_sql.LGM_MIGRATIONS))]
    assert not any(s.sql == _sql.OFFICIAL_INSERT_VERSION for s in seen)


# ----------------------------------------------------------------------------- puts and fences


def test_fenced_put_is_one_guarded_statement() -> None:
    serde = JsonPlusSerializer()
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"messages": ["hi"], "count": 3}
    checkpoint["channel_versions"] = {"messages": "1", "count": "1"}
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", FENCE_CONFIG_KEY: 5}}
    program, next_config = _common.put_program(
        serde, config, checkpoint, {"source": "input", "step": -1}, {"messages": "1", "count": "1"}
    )
    assert next_config["configurable"]["checkpoint_id"] == checkpoint["id"]
    seen, _ = drive(program, {"_guard(": [{"refusal": None}]})
    assert [s.sql for s in seen] == [_sql.put_checkpoint(1)]
    assert seen[0].alone and seen[0].fetch  # fenced or not: one round trip, autocommit
    params = seen[0].params
    assert params[:4] == ("t", "", 5, None)  # guard: thread, ns, token, parent (none reused)
    assert params[4:9] == ("t", "t", "", "messages", "1")  # touch, then the blob; int inline
    assert params[-6:-2] == ("t", "", checkpoint["id"], None)
    assert params[-2].obj["channel_values"] == {"count": 3}


SHAPES = [("sub", "1", None), ("sub", "2", "1"), ("", "1", None), ("", "2", "1")]


def test_keep_last_put_locks_writes_then_trims_its_namespace_in_one_program() -> None:
    serde = JsonPlusSerializer()
    checkpoint = empty_checkpoint()
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": "sub"}}
    put, _ = _common.put_program(serde, config, checkpoint, {}, {})
    program = _retention.put_keeping_last(put, "t", "sub", 1)
    rows = [
        {"checkpoint_ns": ns, "checkpoint_id": cid, "parent_checkpoint_id": parent, "v": 4}
        | {"versions": {}, "inline_channels": [], "true_channels": [], "delta_counters": []}
        | {"root": None}
        for ns, cid, parent in SHAPES
    ]
    replies = {
        "_guard(": [{"refusal": None}],
        "count(*)": [{"n": 2}],
        "COALESCE((checkpoint": rows,
    }
    seen, _ = drive(program, replies)
    assert seen[0].sql == _sql.LOCK_THREADS and seen[0].params == (["t"],)
    assert seen[1].sql == _sql.put_checkpoint(0)  # the put, now inside the transaction
    deleted = [s.params for s in seen if s.sql == _sql.DELETE_CHECKPOINTS_BY_IDS]
    assert deleted == [("t", "sub", ["1"])]  # only the namespace written is trimmed

    put, _ = _common.put_program(serde, config, checkpoint, {}, {})
    seen, _ = drive(_retention.put_keeping_last(put, "t", "sub", 2), replies)
    assert seen[-1].sql == _sql.COUNT_CHECKPOINTS  # at most N: nothing more to read


def test_put_statement_guards_before_it_touches_and_writes() -> None:
    serde = JsonPlusSerializer()
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"a": ["x"], "b": {"k": 1}, "n": None, "kept": [1], "i": 2}
    checkpoint["channel_versions"] = {"a": "2", "b": "3", "kept": "1", "i": "1"}
    config = {"configurable": {"thread_id": 9, "checkpoint_ns": "", "checkpoint_id": "p"}}
    program, _ = _common.put_program(serde, config, checkpoint, {}, {"a": "2", "b": "3"})
    seen, _ = drive(program, {"_guard(": [{"refusal": None}]})
    assert len(seen) == 1 and seen[0].alone
    sql = seen[0].sql
    assert sql == _sql.put_checkpoint(2, reused=1)
    # each step waits for the previous one: guard -> touch -> blobs -> checkpoint row
    order = ["guard AS", "touched AS", "blobs AS", "INSERT INTO checkpoints"]
    assert [sql.index(part) for part in order] == sorted(sql.index(part) for part in order)
    assert sql.count("(SELECT verdict[1] FROM guard) = 'ok'") == 3
    assert "FROM touched) >= 0" in sql and "FROM blobs) >= 0" in sql
    params = seen[0].params
    # the parent and the reused blob-backed channel ("kept"; the int "i" is inline) are checked
    assert params[:6] == ("9", "", None, "p", "kept", "1")
    assert sql.count("%s") == len(params)
    assert [params[9], params[13]] == ["a", "b"]
    assert params[-3] == "p"


@pytest.mark.parametrize(
    ("verdict", "error", "match"),
    [
        (["busy"], ThreadBusyError, r"'t' is leased by another worker.*with_thread_lease"),
        (["stale", "held"], StaleWriteError, r"^(?!.*\d{4}).*another worker holds.*Nothing"),
        (["parent"], CheckpointIntegrityError, r"parent checkpoint 'p' was deleted"),
    ],
)
def test_a_refused_put_raises_the_guards_error(
    verdict: list[str], error: type[Exception], match: str
) -> None:
    serde = JsonPlusSerializer()
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"kept": [1]}
    checkpoint["channel_versions"] = {"kept": "1"}
    config = {
        "configurable": {"thread_id": "t", "checkpoint_id": "p", FENCE_CONFIG_KEY: 4},
    }
    program, _ = _common.put_program(serde, config, checkpoint, {}, {})
    with pytest.raises(error, match=match):
        drive(program, {"_guard(": [{"refusal": verdict}]})


def test_a_checkpoint_is_stored_whole_when_a_reused_value_has_no_blob() -> None:
    """Official semantics: a put naming a value it does not rewrite (not in new_versions)
    whose blob was never written is stored, not refused: the program reports the missing
    channel (nothing written), and the put widened to it writes the value too."""
    serde = JsonPlusSerializer()
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"kept": b"raw", "new": b"\x00"}  # bytes: blobs
    checkpoint["channel_versions"] = {"kept": "1", "new": "2"}
    config = {"configurable": {"thread_id": "t", "checkpoint_id": "never-written"}}
    program, _ = _common.put_program(serde, config, checkpoint, {}, {"new": "2"})
    seen, missing = drive(program, {"_guard(": [{"refusal": ["blobs", "kept"]}]})
    assert [s.sql for s in seen] == [_sql.put_checkpoint(1, reused=1)] and missing == ["kept"]
    widened = _common.widened_versions(checkpoint, {"new": "2"}, missing)
    assert widened == {"new": "2", "kept": "1"}
    program, _ = _common.put_program(serde, config, checkpoint, {}, widened)
    seen, missing = drive(program, {"_guard(": [{"refusal": None}]})
    assert [s.sql for s in seen] == [_sql.put_checkpoint(2, reused=0)] and missing == []
    assert "kept" in seen[0].params and "never-written" in seen[0].params


def test_put_with_more_blobs_than_one_statement_takes_chunks_in_a_transaction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_sql, "MAX_ROWS_PER_STATEMENT", 2)
    serde = JsonPlusSerializer()
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {f"c{i}": [i] for i in range(5)}
    versions = {f"c{i}": "1" for i in range(5)}
    program, _ = _common.put_program(
        serde, {"configurable": {"thread_id": "t"}}, checkpoint, {}, versions
    )
    seen, _ = drive(program, {"_guard(": [{"refusal": None}]})
    assert [s.sql for s in seen] == [
        _sql.write_guard(0),
        _sql.put_blobs(2),
        _sql.put_blobs(2),
        _sql.put_blobs(1),
        _sql.put_checkpoint(0, guarded=False),
    ]
    assert not any(s.alone for s in seen)
    assert [s.params[2] for s in seen[1:4]] == ["c0", "c2", "c4"]
    with pytest.raises(ThreadBusyError):  # refused before the first chunk
        program, _ = _common.put_program(
            serde, {"configurable": {"thread_id": "t"}}, checkpoint, {}, versions
        )
        drive(program, {"_guard(": [{"refusal": ["busy"]}]})


def test_put_writes_is_one_guarded_statement_and_upserts_keep_the_last_special_write() -> None:
    serde = JsonPlusSerializer()
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c"}}
    ok = {"_guard(": [{"refusal": None}]}
    seen, _ = drive(
        _common.put_writes_program(serde, config, [("x", 1), ("y", 2)], "task", "p"), ok
    )
    assert [s.sql for s in seen] == [_sql.put_writes(2, upsert=False)]
    assert seen[0].alone and seen[0].params[:3] == ["t", "", None]  # the guard: no parent
    assert seen[0].params[3:10] == ["t", "", "c", "task", "p", 0, "x"]
    seen, _ = drive(
        _common.put_writes_program(
            serde, config, [(INTERRUPT, "first"), (INTERRUPT, "second")], "task", ""
        ),
        ok,
    )
    assert [s.sql for s in seen] == [_sql.put_writes(1, upsert=True)]
    assert serde.loads_typed((seen[0].params[10], seen[0].params[11])) == "second"
    seen, _ = drive(_common.put_writes_program(serde, config, [], "task", ""), {})
    assert seen == []


def test_stale_fence_stops_the_program_before_any_write() -> None:
    serde = JsonPlusSerializer()
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", FENCE_CONFIG_KEY: 4}}
    writes = _common.put_writes_program(
        serde,
        {**config, "configurable": {**config["configurable"], "checkpoint_id": "c"}},
        [("x", 1)],
        "task",
        "",
    )
    with pytest.raises(StaleWriteError, match="has no lease any more"):
        drive(writes, {"_guard(": [{"refusal": ["stale", "gone"]}]})


def test_fence_token_validation() -> None:
    assert _common.fence_token({"configurable": {}}) is None
    assert _common.fence_token({"configurable": {FENCE_CONFIG_KEY: 7}}) == 7
    for bad in ("7", 7.0, True):
        with pytest.raises(ConfigurationError, match="fencing token"):
            _common.fence_token({"configurable": {FENCE_CONFIG_KEY: bad}})


def test_delete_program_locks_then_drops_leases_in_the_same_transaction() -> None:
    seen, _ = drive(_common.delete_threads_program(["a", "b"]), {})
    assert [s.sql for s in seen[:3]] == [
        _sql.LOCK_THREADS,
        _sql.ACTIVITY_FORGET,
        _sql.FORGET_LEASES,
    ]
    assert all(s.params == (["a", "b"],) for s in seen)
    assert len(seen) == 6


def test_forget_program_is_the_delete_then_analyze_of_the_checkpoint_tables() -> None:
    deleted, _ = drive(_common.delete_threads_program(["a"]), {})
    seen, _ = drive(_common.forget_threads_program(["a"]), {})
    assert [s.sql for s in seen] == [*(s.sql for s in deleted), _sql.ANALYZE_CHECKPOINTS]


def test_delete_for_runs_collects_only_unreferenced_blobs() -> None:
    deleted = [
        {
            "thread_id": "t",
            "checkpoint_ns": "",
            "checkpoint_id": "2",
            "versions": {"x": "2", "y": "1"},
        }
    ]
    seen, count = drive(
        _common.delete_for_runs_program(["run"]),
        {
            "SELECT DISTINCT thread_id": [{"thread_id": "t"}],
            "RETURNING": deleted,
            "jsonb_each_text": [{"channel": "y", "version": "1"}],
        },
    )
    assert count == 1
    # erasure: lock the affected threads, delete, then fence their holders out
    assert [s.sql for s in seen[:3]] == [_sql.RUN_THREADS, _sql.LOCK_THREADS, _sql.RUN_CHECKPOINTS]
    assert seen[2].params == (["run"], ["t"])
    gc = [s for s in seen if s.sql == _sql.DELETE_BLOBS_OF_CHANNEL]
    assert [s.params for s in gc] == [("t", "", "x", ["2"])]
    assert seen[-1].sql == _sql.REVOKE_LEASES and seen[-1].params == (["t"],)
    seen, count = drive(_common.delete_for_runs_program(["run"]), {})
    assert count == 0 and [s.sql for s in seen] == [_sql.RUN_THREADS]


# ----------------------------------------------------------------------------- configuration


def test_retention_and_prune_arguments() -> None:
    assert _common.retention_seconds(timedelta(minutes=2), "ttl") == 120.0
    assert _common.retention_seconds(None, "ttl") is None
    with pytest.raises(ConfigurationError):
        _common.retention_seconds(0, "ttl")
    assert _common.check_keep_last(3) == 3
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ConfigurationError):
            _common.check_keep_last(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _retention.check_prune_args("thread", "keep_latest", 1)
    with pytest.raises(ValueError, match="unknown prune strategy"):
        _retention.check_prune_args(["t"], "keep_first", 1)
    ids = [1, "b"]
    assert _retention.check_prune_args(ids, "delete", None) == (["1", "b"], 0)  # type: ignore[arg-type]
    assert _retention.check_prune_args(["t"], "delete", 2) == (["t"], 2)  # keep_last wins
    assert _retention.check_prune_args(["t"], "keep_latest", 0) == (["t"], 0)
    for bad in (-1, True, 2.5):
        with pytest.raises(ConfigurationError, match=">= 0"):
            _retention.check_prune_args(["t"], "keep_latest", bad)  # type: ignore[arg-type]


def test_subgraph_call_namespaces_go_with_their_dropped_root_checkpoint() -> None:
    roots = chain(3, x=["1", "2", "3"])
    old_call = [CheckpointShape("sub:task-a", "a1", None, 4, {"y": "1"}, root="01")]
    last_call = [CheckpointShape("sub:task-b", "b1", None, 4, {"y": "1"}, root="03")]
    unsaved_root = [CheckpointShape("sub:task-c", "c1", None, 4, {}, root="99")]
    persistent = [CheckpointShape("memory", "m1", None, 4, {}, root="01")]  # checkpointer=True
    blobs = [("", "x", v) for v in "123"] + [("sub:task-a", "y", "1"), ("sub:task-b", "y", "1")]
    plan = plan_keep_last(
        roots + old_call + last_call + unsaved_root + persistent, blobs, [], keep=1
    )
    assert plan.delete == {"": ["01", "02"], "sub:task-a": ["a1"]}
    assert plan.garbage_blobs == {("", "x"): ["1", "2"], ("sub:task-a", "y"): ["1"]}


# ----------------------------------------------------------------------------- reads


def test_get_tuple_query_reads_the_named_or_the_latest_checkpoint() -> None:
    sql, args = _read.get_tuple_query({"configurable": {"thread_id": "t", "checkpoint_ns": "n"}})
    assert sql == _sql.GET_TUPLE_LATEST and args == ("t", "n")
    sql, args = _read.get_tuple_query({"configurable": {"thread_id": "t", "checkpoint_id": "c"}})
    assert sql == _sql.GET_TUPLE_BY_ID and args == ("t", "", "c")


def test_checkpoint_tuple_decodes_blobs_writes_and_parent() -> None:
    serde = JsonPlusSerializer()
    t_blob, blob = serde.dumps_typed(["hello"])
    t_write, write = serde.dumps_typed("w")
    row = {
        "thread_id": "t",
        "checkpoint_ns": "",
        "checkpoint_id": "2",
        "parent_checkpoint_id": "1",
        "checkpoint": {"v": 4, "id": "2", "channel_values": {"n": 3}, "channel_versions": {}},
        "metadata": {"step": 1},
        "channel_values": [(b"messages", t_blob.encode(), blob)],
        "pending_writes": [(b"task", b"ch", t_write.encode(), write, b"", b"0")],
    }
    assert _read.pending_writes_size(row) == len(write)
    tup = _read.checkpoint_tuple(serde, row)
    assert tup.checkpoint["channel_values"] == {"n": 3, "messages": ["hello"]}
    assert tup.parent_config == {
        "configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "1"}
    }
    assert tup.pending_writes == [("task", "ch", "w")]
    assert tup.metadata == {"step": 1}


def test_delta_snapshots_are_recognised_without_importing_their_private_class() -> None:
    # the test may name LangGraph's private class; the package matches its documented shape
    from langgraph.checkpoint.serde.types import _DeltaSnapshot

    assert _common.is_delta_snapshot(_DeltaSnapshot(["a"]))
    assert not _common.is_delta_snapshot(("a",))
    assert not _common.is_delta_snapshot({"value": 1})
    serde = JsonPlusSerializer()
    restored = serde.loads_typed(serde.dumps_typed(_DeltaSnapshot([1])))
    assert _common.is_delta_snapshot(restored)
