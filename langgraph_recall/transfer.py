"""Export and import long-term memories as versioned JSON Lines.

:func:`export_memories` writes one user's memories (or everything under a namespace
prefix) — what ``langgraph-recall export`` runs; :func:`import_memories` reads such a file
into any ``BaseStore`` — ``langgraph-recall import``; :func:`copy_memories` copies the
items of any ``BaseStore`` (LangGraph's ``PostgresStore`` or ``InMemoryStore``) into ours,
the migration path for existing LangGraph applications.

The format (``docs/export-import.md``): a header line
``{"format": "langgraph-recall-memories", "version": 1, "package_version": ..., ...}``,
then one line per memory ``{"namespace": [...], "key": ..., "value": {...}, "created_at":
..., "updated_at": ..., "history": [...]}``. The memory fields — ``content``, ``kind``,
``importance``, ``valid_from`` / ``invalid_at``, ``expires_at``, ``derived_from`` links —
are the value's own keys, exactly as ``put`` took them. Embeddings are not exported: the
importing store embeds the text again, one batch at a time.

Import validates every line as ``put`` does before writing its batch; each batch is one
transaction (our store's ``bulk_load``, resumable; one ``batch`` call on any other store), so
a bad line raises
:class:`~langgraph_recall.errors.InvalidImportError` naming it, with nothing of its batch
written and every earlier batch whole. Importing the same file again gives the same items.

Example:
    ```python
    import io

    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.nodes import user_namespace
    from langgraph_recall.transfer import export_memories, import_memories

    source = InMemoryStore()
    source.put(user_namespace("ann"), "k1", {"content": "Ann likes tea.", "kind": "preference"})
    buffer = io.StringIO()
    assert export_memories(source, buffer, user_id="ann").items == 1
    target = InMemoryStore()
    assert import_memories(target, io.StringIO(buffer.getvalue())).items == 1
    assert target.get(user_namespace("ann"), "k1").value["content"] == "Ann likes tea."
    ```
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, TextIO

from langgraph.store.base import BaseStore, Item, PutOp

from langgraph_recall.errors import InvalidImportError, InvalidValueError, LangGraphRecallError
from langgraph_recall.store._capabilities import keeps_history, store_supports
from langgraph_recall.store._namespace import validate_namespace, validate_prefix
from langgraph_recall.store._values import DEFAULT_MAX_VALUE_BYTES, prepare_value

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ExportReport",
    "ImportReport",
    "MemoryRecord",
    "copy_memories",
    "export_memories",
    "header_line",
    "import_memories",
    "parse_header",
    "parse_record",
    "record_line",
]

FORMAT = "langgraph-recall-memories"
FORMAT_VERSION = 1
PAGE = 500
DEFAULT_BATCH_SIZE = 100

Progress = Callable[[int], None]
"""Called after each committed batch with the number of memories imported so far."""


# -- pure core: lines <-> records ------------------------------------------------------
@dataclass(frozen=True)
class MemoryRecord:
    """One memory of an export: where it lives, its value, its times and audit history."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime | None = None
    updated_at: datetime | None = None
    history: tuple[dict[str, Any], ...] = field(default_factory=tuple)


def header_line(scope: Mapping[str, Any], *, exported_at: datetime | None = None) -> str:
    """The first line of an export: format, its version, the package version, the scope.

    Example:
        ```python
        import json

        from langgraph_recall.transfer import FORMAT, header_line

        header = json.loads(header_line({"user_id": "ann"}))
        assert header["format"] == FORMAT and header["version"] == 1
        ```
    """
    from langgraph_recall._version import __version__

    moment = exported_at or datetime.now(timezone.utc)
    header = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "package_version": __version__,
        "exported_at": moment.isoformat(),
        "scope": dict(scope),
    }
    return json.dumps(header, ensure_ascii=False)


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def record_line(record: MemoryRecord) -> str:
    """One memory as a line of JSON (no newline).

    Example:
        ```python
        from langgraph_recall.transfer import MemoryRecord, parse_record, record_line

        record = MemoryRecord(("memories", "user_id:ann"), "k1", {"content": "tea"})
        assert parse_record(record_line(record), 2) == record
        ```
    """
    line: dict[str, Any] = {
        "namespace": list(record.namespace),
        "key": record.key,
        "value": record.value,
        "created_at": _time(record.created_at),
        "updated_at": _time(record.updated_at),
    }
    if record.history:
        line["history"] = list(record.history)
    return json.dumps(line, ensure_ascii=False, allow_nan=False, default=_json_default)


def _json_default(value: object) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise InvalidValueError(f"cannot export a value of type {type(value).__name__}")


def _at(where: int | str) -> str:
    """What an error names: ``line 7`` of a file, or an item being copied."""
    return f"line {where}" if isinstance(where, int) else where


def _loads(line: str, number: int | str) -> Any:
    try:
        return json.loads(line, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:  # its own "line 1 column 5" is not the file's line
        why = f"{exc.msg} at column {exc.colno}"
        raise InvalidImportError(f"{_at(number)}: not valid JSON ({why})") from None
    except (ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise InvalidImportError(f"{_at(number)}: not valid JSON ({why})") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_header(line: str, number: int = 1) -> dict[str, Any]:
    """Read and check an export's header line (format name and a version we can read).

    Raises:
        InvalidImportError: not a header of this format, or a newer format version.

    Example:
        ```python
        from langgraph_recall.transfer import header_line, parse_header

        assert parse_header(header_line({"user_id": "ann"}))["scope"] == {"user_id": "ann"}
        ```
    """
    header = _loads(line, number)
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise InvalidImportError(
            f"line {number}: not a langgraph-recall memory export (the first line must be "
            f'the header {{"format": "{FORMAT}", "version": {FORMAT_VERSION}, ...}})'
        )
    version = header.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise InvalidImportError(f"line {number}: the header's version must be a positive int")
    if version > FORMAT_VERSION:
        raise InvalidImportError(
            f"line {number}: format version {version} is newer than this package reads "
            f"({FORMAT_VERSION}); upgrade langgraph-recall "
            f"(exported by {header.get('package_version')!r})"
        )
    return header


def _parse_time(raw: object, name: str, number: int | str) -> datetime | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise InvalidImportError(f"{_at(number)}: {name} must be an ISO-8601 string or null")
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise InvalidImportError(f"{_at(number)}: {name} is not an ISO-8601 time") from None
    if moment.tzinfo is None:
        raise InvalidImportError(f"{_at(number)}: {name} has no time zone offset")
    return moment


def parse_record(
    line: str, number: int | str, *, max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES
) -> MemoryRecord:
    """Read one memory line and validate it as ``put`` would (namespace, key, value).

    Raises:
        InvalidImportError: naming ``number`` (a line number, or a label such as the item
            being copied) and what is wrong.

    Example:
        ```python
        import pytest

        from langgraph_recall.errors import InvalidImportError
        from langgraph_recall.transfer import parse_record

        line = '{"namespace": ["memories", "u"], "key": "k", "value": {"importance": 11}}'
        with pytest.raises(InvalidImportError, match="line 7"):
            parse_record(line, 7)
        ```
    """
    raw = _loads(line, number)
    if not isinstance(raw, dict):
        raise InvalidImportError(f"{_at(number)}: a memory line must be a JSON object")
    missing = [name for name in ("namespace", "key", "value") if name not in raw]
    if missing:
        raise InvalidImportError(f"{_at(number)}: missing {', '.join(missing)}")
    labels = raw["namespace"]
    if not isinstance(labels, list):
        raise InvalidImportError(f"{_at(number)}: namespace must be a list of labels")
    history = raw.get("history", [])
    if not isinstance(history, list) or not all(isinstance(h, dict) for h in history):
        raise InvalidImportError(f"{_at(number)}: history must be a list of objects")
    try:
        namespace = validate_namespace(tuple(labels))
        prepared = prepare_value(
            namespace, raw["key"], raw["value"], max_value_bytes=max_value_bytes
        )
    except LangGraphRecallError as exc:
        raise InvalidImportError(f"{_at(number)}: {exc}") from exc
    return MemoryRecord(
        namespace=namespace,
        key=prepared.key,
        value=dict(raw["value"]),
        created_at=_parse_time(raw.get("created_at"), "created_at", number),
        updated_at=_parse_time(raw.get("updated_at"), "updated_at", number),
        history=tuple(history),
    )


# -- shells: reading a store, writing a store -------------------------------------------
def _search_kwargs(store: BaseStore) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"refresh_ttl": False}
    if store_supports(store, "include_invalid"):
        kwargs["include_invalid"] = True
    return kwargs


def _items(store: BaseStore, prefix: tuple[str, ...], exact: bool) -> Iterator[Item]:
    """Every item under ``prefix`` (``exact``: in it), invalidated ones too where the store
    keeps them, paged oldest-page-first as the store orders them."""
    kwargs = _search_kwargs(store)
    offset = 0
    while True:
        page = store.search(prefix, limit=PAGE, offset=offset, **kwargs)
        for item in page:
            if not exact or tuple(item.namespace) == prefix:
                yield item
        if len(page) < PAGE:
            return
        offset += len(page)


def _history(store: BaseStore, item: Item) -> tuple[dict[str, Any], ...]:
    if not keeps_history(store):
        return ()
    entries = store.history(tuple(item.namespace), item.key)
    return tuple(
        {
            "action": entry.action,
            "at": entry.at.isoformat(),
            "actor": entry.actor,
            "old_value": entry.old_value,
            "new_value": entry.new_value,
        }
        for entry in entries
    )


def _record(store: BaseStore, item: Item, history: bool) -> MemoryRecord:
    return MemoryRecord(
        namespace=tuple(item.namespace),
        key=item.key,
        value=dict(item.value),
        created_at=item.created_at,
        updated_at=item.updated_at,
        history=_history(store, item) if history else (),
    )


def _user_scopes(store: BaseStore, user_id: str | int) -> list[tuple[tuple[str, ...], bool]]:
    from langgraph_recall.erasure import find_user_data

    data = find_user_data(store, None, user_id)
    scopes = [(namespace, False) for namespace in data.namespaces[:-1]]  # not bookkeeping
    scopes += [(namespace, True) for namespace in data.legacy if namespace not in data.legacy_meta]
    return scopes


@dataclass(frozen=True)
class ExportReport:
    """What :func:`export_memories` wrote."""

    items: int
    namespaces: tuple[tuple[str, ...], ...]


def export_memories(
    store: BaseStore,
    out: TextIO,
    *,
    user_id: str | int | None = None,
    namespace_prefix: Sequence[str] | None = None,
    history: bool = True,
) -> ExportReport:
    """Write one user's memories, or everything under ``namespace_prefix``, to ``out``.

    Args:
        store: Any ``BaseStore``; on ours invalidated memories and their audit history
            are exported too.
        out: A text stream; one header line, then one line per memory.
        user_id: The user, resolved to namespaces as ``inspect`` and ``forget_user`` do
            (the nodes' ``("memories", "user_id:<id>")`` and every namespace they recorded
            for the user; bookkeeping entries are not memories and are left out).
        namespace_prefix: Instead of a user: every item under this prefix.
        history: Include each memory's audit history (stores that keep one).

    Raises:
        InvalidValueError: neither or both of ``user_id`` and ``namespace_prefix``.
    """
    if (user_id is None) == (namespace_prefix is None):
        raise InvalidValueError("export_memories needs exactly one of user_id= and prefix=")
    if user_id is not None:
        scopes = _user_scopes(store, user_id)
        scope: dict[str, Any] = {"user_id": str(user_id)}
    else:
        prefix = validate_prefix(tuple(namespace_prefix or ()))
        scopes = [(prefix, False)]
        scope = {"namespace_prefix": list(prefix)}
    out.write(header_line(scope) + "\n")
    count = 0
    seen: set[tuple[tuple[str, ...], str]] = set()
    for namespace, exact in scopes:
        for item in _items(store, namespace, exact):
            where = (tuple(item.namespace), item.key)
            if where in seen:
                continue
            seen.add(where)
            out.write(record_line(_record(store, item, history)) + "\n")
            count += 1
    return ExportReport(items=count, namespaces=tuple(ns for ns, _ in scopes))


@dataclass(frozen=True)
class ImportReport:
    """What an import wrote: memories and batches (each one transaction), and the memories
    a resumed import skipped because an earlier run had written them. ``recorded``: the
    memories a resumed import had recorded when this input held fewer (a truncated file;
    ``bulk_load`` warns), else ``None``."""

    items: int
    batches: int
    skipped: int = 0
    recorded: int | None = None


def _write(
    store: BaseStore, batch: list[tuple[int, MemoryRecord]], done: int, progress: Progress | None
) -> int:
    ttl = (store.ttl_config or {}).get("default_ttl")  # what put() without ttl= gives
    ops = [PutOp(record.namespace, record.key, record.value, ttl=ttl) for _, record in batch]
    try:
        store.batch(ops)
    except InvalidValueError as exc:
        first, last = batch[0][0], batch[-1][0]
        raise InvalidImportError(
            f"lines {first}-{last}: {exc} (nothing of these lines was written; "
            f"{done} memories before them were)"
        ) from exc
    done += len(batch)
    if progress is not None:
        progress(done)
    return done


def _max_value_bytes(store: BaseStore) -> int:
    limit = getattr(store, "max_value_bytes", None)
    return (
        limit if isinstance(limit, int) and not isinstance(limit, bool) else DEFAULT_MAX_VALUE_BYTES
    )


def _check_batch_size(batch_size: object) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InvalidValueError(f"batch_size must be a positive int, got {batch_size!r}")


def _write_all(
    store: BaseStore,
    records: Iterable[tuple[int, MemoryRecord]],
    batch_size: int | None,
    progress: Progress | None,
    *,
    resume_key: str | None = None,
    rebuild_index: bool = False,
) -> ImportReport:
    """Write ``records``: through ``bulk_load`` on a store that has it (ours), else with one
    ``batch`` call per batch."""
    if store_supports(store, "bulk_load"):
        return _bulk_write(store, records, batch_size, progress, resume_key, rebuild_index)
    if resume_key is not None or rebuild_index:
        raise InvalidValueError(
            f"resume and rebuild_index need a store with bulk_load (langgraph-recall's "
            f"Postgres memory store); {type(store).__name__} has none"
        )
    batch_size = DEFAULT_BATCH_SIZE if batch_size is None else batch_size
    _check_batch_size(batch_size)
    done = batches = 0
    batch: list[tuple[int, MemoryRecord]] = []
    lines = iter(records)
    while True:
        try:
            numbered = next(lines, None)
        except InvalidImportError as exc:
            raise InvalidImportError(
                f"{exc} (nothing of its batch was written; {done} memories before it were)"
            ) from exc
        if numbered is None:
            break
        batch.append(numbered)
        if len(batch) == batch_size:
            done, batches, batch = _write(store, batch, done, progress), batches + 1, []
    if batch:
        done, batches = _write(store, batch, done, progress), batches + 1
    return ImportReport(items=done, batches=batches)


def _bulk_write(
    store: Any,
    records: Iterable[tuple[int, MemoryRecord]],
    batch_size: int | None,
    progress: Progress | None,
    resume_key: str | None,
    rebuild_index: bool,
) -> ImportReport:
    ttl = (store.ttl_config or {}).get("default_ttl")  # what put() without ttl= gives

    def puts() -> Iterator[PutOp]:
        for _, record in records:  # a bad line raises here, named; bulk_load says the rest
            yield PutOp(record.namespace, record.key, record.value, ttl=ttl)

    report = store.bulk_load(
        puts(),
        batch_size=batch_size,
        resume_key=resume_key,
        rebuild_index=rebuild_index,
        progress=progress,
    )
    return ImportReport(report.items, report.batches, report.skipped, report.recorded)


def _numbered_records(
    lines: Iterable[str], max_value_bytes: int, *, first: int = 1
) -> Iterator[tuple[int, MemoryRecord]]:
    header_seen = False
    for number, line in enumerate(lines, start=first):
        if not line.strip():
            continue
        if not header_seen:
            parse_header(line, number)
            header_seen = True
            continue
        yield number, parse_record(line, number, max_value_bytes=max_value_bytes)
    if not header_seen:
        raise InvalidImportError("line 1: the export is empty (no header line)")


def import_memories(
    store: BaseStore,
    source: Iterable[str],
    *,
    batch_size: int | None = None,
    progress: Progress | None = None,
    resume: bool = False,
    rebuild_index: bool = False,
) -> ImportReport:
    """Put every memory of an export (a text stream, or any iterable of lines) into ``store``.

    Each batch of ``batch_size`` lines is validated whole, then written in one transaction.
    On our Postgres store the import is its ``bulk_load`` (batches of 1,000 by default, two
    in flight); on any other ``BaseStore`` one ``store.batch`` per batch (100 by default).
    Items with the same namespace and key are replaced, so importing twice gives the same
    items. Times and history in the file are kept there: the store stamps its own
    ``created_at``/``updated_at`` and records the import as each memory's ``add``.

    Args:
        resume: Our store: the import is named after the file's header (each export has its
            own ``exported_at``); run again after an interruption, it skips the batches that
            committed. Same ``batch_size`` as the first run.
        rebuild_index: Our store, pgvector path: build the HNSW index once after the load
            (see ``bulk_load``); for a first import of many memories.

    Raises:
        InvalidImportError: a line that is not valid JSON, not a memory, or a value ``put``
            refuses — named by its line number; nothing of its batch is written.
    """
    lines = iter(source)
    blank = 0
    for header in lines:
        if header.strip():
            break
        blank += 1
    else:
        raise InvalidImportError("line 1: the export is empty (no header line)")
    parse_header(header, blank + 1)
    resume_key = f"import:{hashlib.sha256(header.strip().encode()).hexdigest()[:32]}"
    records = _numbered_records(
        itertools.chain([header], lines), _max_value_bytes(store), first=blank + 1
    )
    return _write_all(
        store,
        records,
        batch_size,
        progress,
        resume_key=resume_key if resume else None,
        rebuild_index=rebuild_index,
    )


def copy_memories(
    source: BaseStore,
    target: BaseStore,
    *,
    namespace_prefix: Sequence[str] = (),
    batch_size: int | None = None,
    progress: Progress | None = None,
    rebuild_index: bool = False,
) -> ImportReport:
    """Copy every item under ``namespace_prefix`` of any ``BaseStore`` into ``target``.

    The migration path from LangGraph's ``PostgresStore`` or ``InMemoryStore``: items are
    read with ``list_namespaces`` and ``search`` (values as stored, without their
    embeddings), validated like ``put`` and written batch by batch as
    :func:`import_memories` does. Copying again gives the same items.

    Example:
        ```python
        from langgraph.store.memory import InMemoryStore

        from langgraph_recall.transfer import copy_memories

        old, new = InMemoryStore(), InMemoryStore()
        old.put(("memories", "user_id:ann"), "k1", {"content": "Ann likes tea."})
        assert copy_memories(old, new).items == 1
        ```
    """
    prefix = tuple(namespace_prefix)
    if prefix:
        validate_prefix(prefix)
    limit = _max_value_bytes(target)

    def numbered() -> Iterator[tuple[int, MemoryRecord]]:
        for number, (label, line) in enumerate(_source_lines(source, prefix), start=1):
            yield number, parse_record(line, label, max_value_bytes=limit)

    return _write_all(target, numbered(), batch_size, progress, rebuild_index=rebuild_index)


def _namespaces(store: BaseStore, prefix: tuple[str, ...]) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    while True:
        page = store.list_namespaces(prefix=prefix or None, limit=PAGE, offset=len(found))
        found.extend(tuple(ns) for ns in page)
        if len(page) < PAGE:
            return found


def _source_lines(store: BaseStore, prefix: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """The items of ``store`` as export lines, each with what an error about it names (the
    item), so a copied item is checked exactly as an imported one."""
    for namespace in _namespaces(store, prefix):
        seen: set[str] = set()  # a page boundary between equal update times can repeat one
        for item in _items(store, namespace, exact=True):
            if item.key not in seen:
                seen.add(item.key)
                label = f"item {item.key!r} of namespace {list(namespace)}"
                yield label, record_line(_record(store, item, history=False))
