"""Maintenance programs: invalidate, history, forget, TTL sweep and decay (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from langgraph_recall._pg.program import Stmt
from langgraph_recall.errors import ConfigurationError, InvalidNamespaceError
from langgraph_recall.store._bounds import check_time
from langgraph_recall.store._namespace import (
    decode_namespace,
    encode_namespace,
    validate_namespace,
    validate_prefix,
)
from langgraph_recall.store._types import DecayConfig, HistoryEntry, current_actor
from langgraph_recall.store._values import check_interval, validate_key
from langgraph_recall.store.postgres import _sql
from langgraph_recall.store.postgres._bookkeeping import BookkeepingPrograms
from langgraph_recall.store.postgres._erasure import MoreLocks, erase_scope, refresh_statistics
from langgraph_recall.store.postgres._types import Program

__all__ = ["MaintenancePrograms"]


class MaintenancePrograms(BookkeepingPrograms):
    """Maintenance programs of the Postgres memory store."""

    def _invalidate_program(
        self, namespace: tuple[str, ...], key: str, at: datetime | None
    ) -> Program[bool]:
        namespace = validate_namespace(namespace)
        validate_key(key)
        moment = check_time(at, "at") if at is not None else None  # None: the server's now
        yield from self._ensure_mode()
        yield Stmt(_sql.LOCK_NAMESPACES, {"ns": [encode_namespace(namespace)]})
        rows = yield Stmt(
            _sql.INVALIDATE_ITEM,
            {
                "ns": encode_namespace(namespace),
                "key": key,
                "at": moment,
                "at_text": None if moment is None else moment.isoformat(),
                "actor": current_actor(),
            },
            fetch=True,
        )
        if not rows:
            return False
        if not rows[0]["changed"]:
            check_interval(rows[0]["valid_from"], rows[0]["at"], "at")
        return True

    def _history_program(self, namespace: tuple[str, ...], key: str) -> Program[list[HistoryEntry]]:
        namespace = validate_namespace(namespace)
        validate_key(key)
        yield from self._ensure_mode()
        rows = yield Stmt(
            _sql.HISTORY_OF, {"ns": encode_namespace(namespace), "key": key}, fetch=True
        )
        return [
            HistoryEntry(
                namespace=decode_namespace(row["ns"]),
                key=row["key"],
                action=row["action"],
                old_text=row["old_text"],
                new_text=row["new_text"],
                old_value=row["old_value"],
                new_value=row["new_value"],
                actor=row["actor"],
                at=row["at"],
            )
            for row in rows
        ]

    def _forget_program(
        self,
        namespace_prefix: tuple[str, ...],
        hint: tuple[str, ...],
        *,
        exclusive: bool,
        exact: bool = False,
    ) -> Program[int | MoreLocks]:
        """One attempt of ``forget`` (see :mod:`._erasure`): the number of items erased,
        or :class:`MoreLocks` when it stopped before deleting anything."""
        prefix = validate_prefix(namespace_prefix)
        if not prefix:
            raise InvalidNamespaceError(
                "forget() needs a non-empty namespace prefix such as user_namespace(user_id)"
            )
        yield from self._ensure_mode()
        scope = self._scope_params(prefix)
        if exact:  # only this namespace: no label lies between "a.b." and "a.b.\x01"
            scope = {"ns_lo": encode_namespace(prefix), "ns_hi": encode_namespace(prefix) + "\x01"}
        total = yield from erase_scope(scope, hint=hint, exclusive=exclusive)
        if not isinstance(total, MoreLocks):
            with self._cache_lock:
                self._caches.drop(encode_namespace(prefix))
        return total

    def _statistics_program(self) -> Program[None]:
        yield from self._ensure_mode()
        yield from refresh_statistics()

    def _expired_program(self) -> Program[list[list[str]]]:
        """The namespaces holding expired memories, in chunks of a few lock buckets."""
        yield from self._ensure_mode()
        return bucket_chunks((yield Stmt(_sql.EXPIRED_NAMESPACES, fetch=True)))

    def _sweep_program(self, namespaces: list[str]) -> Program[int]:
        """Sweep one chunk of namespaces (their locks, then the sweep: one transaction)."""
        if not namespaces:
            return 0
        yield Stmt(_sql.LOCK_NAMESPACES, {"ns": namespaces})
        rows = yield Stmt(_sql.SWEEP_EXPIRED, {"ns": namespaces}, fetch=True)
        return int(rows[0]["n"]) if rows else 0

    def _decay_plan_program(
        self, namespace_prefix: tuple[str, ...], config: DecayConfig
    ) -> Program[list[list[str]]]:
        """Write the access counts decay reads, then find the namespaces it may change (in
        chunks of a few lock buckets)."""
        prefix = validate_prefix(namespace_prefix)
        if not isinstance(config, DecayConfig):
            raise ConfigurationError(f"config must be a DecayConfig, got {type(config).__name__}")
        yield from self._ensure_mode()
        yield from self._write_access(force=True)  # decay reads the access counts
        scope = self._scope_params(prefix)
        rows = yield Stmt(_sql.decay_namespaces_sql(bool(prefix)), scope, fetch=True)
        return bucket_chunks(rows)

    def _decay_program(
        self, namespace_prefix: tuple[str, ...], config: DecayConfig, namespaces: list[str]
    ) -> Program[int]:
        """Retire the low-value memories of one chunk of namespaces (one transaction)."""
        prefix = validate_prefix(namespace_prefix)
        if not namespaces:
            return 0
        params = {  # "now" is the server's: one clock for valid_from and invalid_at
            **self._scope_params(prefix),
            "half_life": config.half_life.total_seconds(),
            "min_age": config.min_age,
            "threshold": config.threshold,
            "kinds": list(config.kinds) if config.kinds else None,
            "ns": namespaces,
        }
        yield Stmt(_sql.LOCK_NAMESPACES, {"ns": namespaces})
        rows = yield Stmt(_sql.decay_sql(config.mode == "delete", bool(prefix)), params, fetch=True)
        return int(rows[0]["n"]) if rows else 0


MAINTENANCE_BUCKETS = 4
"""Lock buckets one sweep or decay transaction holds at most (of 128): other tenants' writes
wait at most for the chunk that holds their bucket, never for the whole run."""


def bucket_chunks(rows: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """Namespaces (rows of ``ns`` and ``bucket``) grouped so that each chunk holds at most
    :data:`MAINTENANCE_BUCKETS` lock buckets; a namespace never spans two chunks.

    Example:
        ```python
        from langgraph_recall.store.postgres._maintenance import bucket_chunks

        rows = [{"ns": f"n{i}.", "bucket": i % 6} for i in range(12)]
        chunks = bucket_chunks(rows)
        assert [len(c) for c in chunks] == [8, 4] and sorted(sum(chunks, [])) == sorted(
            r["ns"] for r in rows)
        ```
    """
    by_bucket: dict[int, list[str]] = {}
    for row in rows:
        by_bucket.setdefault(int(row["bucket"]), []).append(str(row["ns"]))
    buckets = sorted(by_bucket)
    return [
        [ns for bucket in buckets[at : at + MAINTENANCE_BUCKETS] for ns in by_bucket[bucket]]
        for at in range(0, len(buckets), MAINTENANCE_BUCKETS)
    ]
