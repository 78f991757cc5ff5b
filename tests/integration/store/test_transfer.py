"""Export and import on the real Postgres store: round trip, idempotence, atomic batches,
line-numbered errors, and migration from LangGraph's own stores."""

from __future__ import annotations

import io
import json
import re
import uuid
import warnings
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.memory import InMemoryStore

from langgraph_recall.cli import main
from langgraph_recall.errors import BulkLoadWarning, InvalidImportError, InvalidValueError
from langgraph_recall.nodes import user_namespace
from langgraph_recall.store.postgres import PostgresMemoryStore
from langgraph_recall.transfer import (
    FORMAT_VERSION,
    copy_memories,
    export_memories,
    header_line,
    import_memories,
)
from tests._databases import create_database
from tests._hypothesis import thorough
from tests.conftest import POSTGRES_URI, _dsn_with_db
from tests.integration.store.conftest import index_config

pytestmark = pytest.mark.postgres


@pytest.fixture
def second_dsn() -> Iterator[str]:
    """A second fresh database: the store an export is imported into."""
    name = f"lgm_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_URI, autocommit=True) as admin:
        create_database(admin, name)
    try:
        yield _dsn_with_db(POSTGRES_URI, name)
    finally:
        with psycopg.connect(POSTGRES_URI, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def source(postgres_dsn: str) -> Iterator[PostgresMemoryStore]:
    with PostgresMemoryStore.from_conn_string(postgres_dsn, index=index_config()) as store:
        store.setup()
        yield store


@pytest.fixture
def target(second_dsn: str) -> Iterator[PostgresMemoryStore]:
    with PostgresMemoryStore.from_conn_string(second_dsn, index=index_config()) as store:
        store.setup()
        yield store


def _export(store: Any, user: str, history: bool = False) -> list[dict[str, Any]]:
    buffer = io.StringIO()
    export_memories(store, buffer, user_id=user, history=history)
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


def _items(store: Any, user: str) -> dict[tuple[tuple[str, ...], str], dict[str, Any]]:
    """What a reader sees of the user: every item, invalidated ones too, by place."""
    return {
        (tuple(item.namespace), item.key): item.value
        for item in store.search(user_namespace(user), limit=1000, include_invalid=True)
    }


START = datetime(2020, 1, 1, tzinfo=timezone.utc)
moments = st.integers(min_value=0, max_value=3650).map(lambda d: START + timedelta(days=d))
texts = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40).filter(
    str.strip
)


@st.composite
def memories(draw: st.DrawFn) -> dict[str, Any]:
    value: dict[str, Any] = {"content": draw(texts)}
    if draw(st.booleans()):
        value["kind"] = draw(
            st.sampled_from(["semantic", "episodic", "procedural", "preference", "reflection"])
        )
    if draw(st.booleans()):
        value["importance"] = draw(st.integers(min_value=1, max_value=10))
    if draw(st.booleans()):
        start = draw(moments)
        value["valid_from"] = start.isoformat()
        if draw(st.booleans()):
            value["invalid_at"] = (start + timedelta(days=draw(st.integers(1, 400)))).isoformat()
    if draw(st.booleans()):
        value["tags"] = draw(st.lists(texts, max_size=3))
    return value


@settings(
    max_examples=thorough(15),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(values=st.lists(memories(), min_size=1, max_size=8), batch_size=st.integers(1, 5))
def test_round_trip_gives_the_same_items(
    source: PostgresMemoryStore,
    target: PostgresMemoryStore,
    values: list[dict[str, Any]],
    batch_size: int,
) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    namespace = user_namespace(user)
    for position, value in enumerate(values):
        source.put(namespace, f"k{position}", value)
    if len(values) > 1:  # a derived memory: its link survives the trip
        source.put(namespace, "summary", {"content": "both", "derived_from": ["k0", "k1"]})
    exported = io.StringIO()
    report = export_memories(source, exported, user_id=user)
    assert report.items == len(values) + (len(values) > 1)

    imported = import_memories(target, io.StringIO(exported.getvalue()), batch_size=batch_size)
    assert imported.items == report.items
    assert imported.batches == -(-report.items // batch_size)
    assert _items(target, user) == _items(source, user)
    # idempotent: the same file again leaves the same items
    import_memories(target, io.StringIO(exported.getvalue()), batch_size=batch_size)
    assert _items(target, user) == _items(source, user)
    # and what search answers is the same: validity is in the values
    valid = {item.key for item in source.search(namespace, limit=100)}
    assert {item.key for item in target.search(namespace, limit=100)} == valid
    first = START + timedelta(days=10)
    then = {item.key for item in source.search(namespace, as_of=first, limit=100)}
    assert {item.key for item in target.search(namespace, as_of=first, limit=100)} == then


def test_export_holds_history_and_invalidated_memories(source: PostgresMemoryStore) -> None:
    namespace = user_namespace("ann")
    source.put(namespace, "home", {"content": "Ann lives in Lyon.", "kind": "semantic"})
    source.put(namespace, "home", {"content": "Ann lives in Porto.", "kind": "semantic"})
    source.put(namespace, "old", {"content": "Ann likes tea."})
    source.invalidate(namespace, "old")
    lines = _export(source, "ann", history=True)
    header, records = lines[0], {r["key"]: r for r in lines[1:]}
    assert header["format"] == "langgraph-recall-memories"
    assert header["version"] == FORMAT_VERSION and header["scope"] == {"user_id": "ann"}
    assert set(records) == {"home", "old"}
    assert [h["action"] for h in records["home"]["history"]] == ["add", "update"]
    assert records["home"]["history"][0]["new_value"]["content"] == "Ann lives in Lyon."
    assert records["old"]["value"]["invalid_at"]  # invalidated, exported all the same
    assert datetime.fromisoformat(records["home"]["created_at"]) <= datetime.fromisoformat(
        records["home"]["updated_at"]
    )


def test_export_is_one_users_data(source: PostgresMemoryStore) -> None:
    source.put(user_namespace("ann"), "k", {"content": "Ann's"})
    source.put(user_namespace("ann2"), "k", {"content": "Ann2's"})
    source.put(("memories", "user_id:ann", "deep"), "k", {"content": "Ann's, deeper"})
    records = _export(source, "ann")[1:]
    assert sorted(r["value"]["content"] for r in records) == ["Ann's", "Ann's, deeper"]


def test_bad_line_names_it_and_writes_nothing_of_its_batch(target: PostgresMemoryStore) -> None:
    namespace = ["memories", "user_id:bob"]
    good = [
        json.dumps({"namespace": namespace, "key": f"k{n}", "value": {"content": f"fact {n}"}})
        for n in range(5)
    ]
    bad = json.dumps({"namespace": namespace, "key": "x", "value": {"importance": "high"}})
    lines = [header_line({"user_id": "bob"}), *good[:3], bad, *good[3:]]
    with pytest.raises(InvalidImportError, match=r"line 5: importance") as error:
        import_memories(target, lines, batch_size=2)
    assert "2 memories before it were" in str(error.value)
    # batch 1 (lines 2-3) committed; batch 2 (line 4 and the bad line 5) not at all
    assert sorted(_items(target, "bob")) == [(tuple(namespace), "k0"), (tuple(namespace), "k1")]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 2: not valid JSON"),
        ('{"namespace": ["m"], "key": "k" "value": {}}', r"line 2: not valid JSON \(Expecting"),
        ('{"namespace": ["memories"], "key": "k"}', "line 2: missing value"),
        ('{"namespace": "memories", "key": "k", "value": {}}', "namespace must be a list"),
        ('{"namespace": ["memories", ""], "key": "k", "value": {}}', "line 2"),
        ('{"namespace": ["memories"], "key": "k", "value": {"x": NaN}}', "line 2"),
        ('{"namespace": ["m"], "key": "k", "value": {}, "created_at": "soon"}', "created_at"),
    ],
)
def test_malformed_lines_are_refused(target: PostgresMemoryStore, line: str, message: str) -> None:
    with pytest.raises(InvalidImportError, match=message) as refused:
        import_memories(target, [header_line({}), line])
    assert target.list_namespaces() == []
    assert "line 1" not in str(refused.value)  # the JSON parser's own line is not the file's


def test_header_is_checked(target: PostgresMemoryStore) -> None:
    with pytest.raises(InvalidImportError, match="line 1: not a langgraph-recall memory export"):
        import_memories(target, ['{"namespace": ["m"], "key": "k", "value": {}}'])
    newer = json.dumps({"format": "langgraph-recall-memories", "version": FORMAT_VERSION + 1})
    with pytest.raises(InvalidImportError, match="newer than this package reads"):
        import_memories(target, [newer])
    with pytest.raises(InvalidImportError, match="empty"):
        import_memories(target, [])


def test_copy_from_langgraph_stores(postgres_dsn: str, target: PostgresMemoryStore) -> None:
    from langgraph.store.postgres import PostgresStore

    memory = InMemoryStore()
    memory.put(("memories", "user_id:cy"), "k1", {"content": "Cy plays chess.", "kind": "semantic"})
    memory.put(("notes", "team"), "k2", {"text": "no content key"})
    assert copy_memories(memory, target).items == 2
    assert target.get(("notes", "team"), "k2").value == {"text": "no content key"}
    hits = target.search(("memories", "user_id:cy"), query="chess")
    assert [hit.key for hit in hits] == ["k1"]  # embedded again on the way in

    with PostgresStore.from_conn_string(postgres_dsn) as official:
        official.setup()
        for n in range(7):
            official.put(("memories", "user_id:dee"), f"k{n}", {"content": f"fact {n}"})
        official.put(("other",), "x", {"content": "outside the prefix"})
        report = copy_memories(official, target, namespace_prefix=("memories",), batch_size=3)
    assert (report.items, report.batches) == (7, 3)
    assert len(_items(target, "dee")) == 7
    assert target.get(("other",), "x") is None


def test_a_copied_item_that_put_refuses_is_named_by_its_key(target: PostgresMemoryStore) -> None:
    memory = InMemoryStore()
    memory.put(("memories", "user_id:gil"), "ok", {"content": "Gil rows."})
    memory.put(("memories", "user_id:gil"), "bad", {"content": "Gil sails.", "importance": 60})
    with pytest.raises(InvalidImportError) as refused:
        copy_memories(memory, target)
    message = str(refused.value)
    assert "item 'bad' of namespace ['memories', 'user_id:gil']" in message
    assert "importance" in message and "line" not in message.split(":")[0]


def test_cli_export_import(postgres_dsn: str, second_dsn: str, tmp_path: Any, capsys: Any) -> None:
    with PostgresMemoryStore.from_conn_string(postgres_dsn) as store:
        store.setup()
        store.put(user_namespace("eve"), "k1", {"content": "Eve works at Acme.", "importance": 6})
    path = tmp_path / "eve.jsonl"
    assert main(["export", "--user", "eve", "--out", str(path), "--postgres", postgres_dsn]) == 0
    assert "exported 1 memory from" in capsys.readouterr().err
    assert main(["import", str(path), "--postgres", second_dsn]) == 0
    assert "imported 1 memory from" in (err := capsys.readouterr().err)
    assert "(1 transaction)" in err
    with PostgresMemoryStore.from_conn_string(second_dsn) as store:
        item = store.get(user_namespace("eve"), "k1")
        assert item is not None and item.value == {"content": "Eve works at Acme.", "importance": 6}
    path.write_text(path.read_text().replace('"importance": 6', '"importance": 60'))
    assert main(["import", str(path), "--postgres", second_dsn]) == 2
    assert "line 2: importance" in capsys.readouterr().err
    assert main(["export", "--postgres", postgres_dsn]) == 2
    # a user with no memories: said, not a silent empty file
    empty = tmp_path / "nobody.jsonl"
    args = ["export", "--user", "nobody", "--out", str(empty), "--postgres", postgres_dsn]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "exported 0 memories" in err and "holds no memory of user 'nobody'" in err
    assert "inspect --user" in err


def test_cli_migrates_langgraph_postgres_store(
    postgres_dsn: str, second_dsn: str, capsys: Any
) -> None:
    from langgraph.store.postgres import PostgresStore

    with PostgresStore.from_conn_string(postgres_dsn) as official:
        official.setup()
        for n in range(3):
            official.put(("memories", "user_id:fay"), f"k{n}", {"content": f"Fay fact {n}"})
        official.put(("cache",), "c", {"content": "not a memory"})
    argv = ["import", "--from-langgraph-store", postgres_dsn, "--postgres", second_dsn]
    assert main([*argv, "--prefix", '["memories"]', "--batch-size", "2"]) == 0
    err = capsys.readouterr().err
    assert "imported 3 memories from LangGraph's PostgresStore" in err and "(2 transactions)" in err
    with PostgresMemoryStore.from_conn_string(second_dsn) as store:
        assert sorted(_items(store, "fay")) == [
            (("memories", "user_id:fay"), f"k{n}") for n in range(3)
        ]
        assert store.get(("cache",), "c") is None
    assert main([*argv, "--prefix", "memories"]) == 2  # not a JSON list
    assert "--prefix must be a JSON list" in capsys.readouterr().err


def test_import_applies_the_stores_default_ttl(second_dsn: str) -> None:
    lines = [
        header_line({}),
        json.dumps(
            {"namespace": ["memories", "user_id:gus"], "key": "k", "value": {"content": "x"}}
        ),
    ]
    with PostgresMemoryStore.from_conn_string(
        second_dsn, index=index_config(), ttl={"default_ttl": 60.0}
    ) as store:
        store.setup()
        import_memories(store, lines)
    with psycopg.connect(second_dsn) as conn:
        row = conn.execute("SELECT ttl_minutes, expires_at FROM lgm_memory_items WHERE key = 'k'")
        ttl_minutes, expires_at = row.fetchone() or (None, None)
    assert ttl_minutes == 60.0 and expires_at is not None


def _export_lines(count: int) -> list[str]:
    namespace = ["memories", "user_id:res"]
    return [header_line({"user_id": "res"})] + [
        json.dumps({"namespace": namespace, "key": f"k{n}", "value": {"content": f"fact {n}"}})
        for n in range(count)
    ]


def test_a_resumed_import_skips_what_an_earlier_run_wrote(target: PostgresMemoryStore) -> None:
    lines = _export_lines(250)
    bad = [*lines[:231], "not json", *lines[231:]]  # line 232 stops the first run
    with pytest.raises(InvalidImportError, match="line 232") as stopped:
        import_memories(target, bad, batch_size=50, resume=True)
    # batches of 50: lines 2-201 (four batches) committed; the fifth held the bad line
    assert "200 memories before it were" in str(stopped.value)
    assert len(_items(target, "res")) == 200
    done: list[int] = []
    report = import_memories(target, lines, batch_size=50, resume=True, progress=done.append)
    assert (report.items, report.skipped) == (50, 200) and done[-1] == 250
    assert len(_items(target, "res")) == 250
    again = import_memories(target, lines, batch_size=50, resume=True)
    assert (again.items, again.skipped) == (0, 250)
    other = [header_line({"user_id": "res"}, exported_at=datetime(2020, 1, 1, tzinfo=timezone.utc))]
    fresh = import_memories(target, other + lines[1:], batch_size=50, resume=True)
    assert fresh.items == 250  # another export (its own header) is another load


def test_resume_needs_a_store_that_records_its_batches() -> None:
    with pytest.raises(InvalidValueError, match="resume and rebuild_index need a store"):
        import_memories(InMemoryStore(), _export_lines(3), resume=True)


def test_cli_import_resume(second_dsn: str, tmp_path: Any, capsys: Any) -> None:
    path = tmp_path / "res.jsonl"
    path.write_text("\n".join(_export_lines(30)) + "\n")
    args = ["import", str(path), "--resume", "--rebuild-index", "--postgres", second_dsn]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "imported 30 memories" in err
    assert "building the HNSW index" not in err  # the exact path has none to build
    assert main(args) == 0
    assert "imported 0 memories" in (err := capsys.readouterr().err)
    assert "30 already there from an earlier run" in err
    assert main(["import", "--from-langgraph-store", second_dsn, "--resume"]) == 2
    assert "--resume resumes a FILE import" in capsys.readouterr().err


def test_cli_import_of_a_truncated_file_says_it_held_fewer_memories(
    second_dsn: str, tmp_path: Any, capsys: Any
) -> None:
    """The same export cut short at a batch boundary and imported again with --resume: the
    CLI says the file held fewer memories than the import recorded, naming both counts, and
    no Python warning is printed beside it."""
    lines = _export_lines(30)
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines) + "\n")
    argv = ["import", str(path), "--resume", "--batch-size", "10", "--postgres", second_dsn]
    assert main(argv) == 0
    capsys.readouterr()
    path.write_text("\n".join(lines[:21]) + "\n")  # the header and 20 memories
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert f"!! {path} held 20 memories, fewer than the 30 this import recorded" in err
    assert "BulkLoadWarning" not in err and "imported 0 memories" in err
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        with PostgresMemoryStore.from_conn_string(second_dsn) as store:
            report = import_memories(store, lines[:21], batch_size=10, resume=True)
    assert (report.skipped, report.recorded) == (20, 30)
    assert [type(w.message) for w in said] == [BulkLoadWarning]
    assert "finished with 30 puts, but this input held only 20" in str(said[0].message)


def test_cli_import_stopped_by_ctrl_c_says_how_to_go_on(
    second_dsn: str, tmp_path: Any, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C in the middle of an import: the batches committed so far stay, the message
    gives the command that resumes, and that command writes the rest."""
    from langgraph_recall import transfer

    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(_export_lines(30)) + "\n")
    real = transfer.import_memories

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        done = kwargs["progress"]

        def stop_after_first(n: int) -> None:
            done(n)
            raise KeyboardInterrupt

        return real(*args, **{**kwargs, "progress": stop_after_first})

    monkeypatch.setattr(transfer, "import_memories", interrupted)
    argv = ["import", str(path), "--resume", "--batch-size", "10", "--postgres", second_dsn]
    assert main(argv) == 130
    err = capsys.readouterr().err
    stopped = re.search(r"stopped after (\d+) memories were written", err)
    assert stopped is not None and 0 < int(stopped[1]) < 30, err
    assert f"langgraph-recall import {path} --resume" in err
    monkeypatch.setattr(transfer, "import_memories", real)
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert f"imported {30 - int(stopped[1])} memories" in err
    assert f"{stopped[1]} already there from an earlier run" in err


def test_cli_import_refuses_what_it_cannot_do(second_dsn: str, tmp_path: Any, capsys: Any) -> None:
    path = tmp_path / "few.jsonl"
    path.write_text("\n".join(_export_lines(3)) + "\n")
    assert main(["import", str(path), "--prefix", '["memories"]', "--postgres", second_dsn]) == 2
    assert "--prefix selects what --from-langgraph-store copies" in capsys.readouterr().err
    # a database without LangGraph's store table: our error, naming the fix
    assert main(["import", "--from-langgraph-store", second_dsn, "--postgres", second_dsn]) == 2
    assert "holds no LangGraph PostgresStore" in capsys.readouterr().err
