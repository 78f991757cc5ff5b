"""The vocabulary of the Redis savers' plans: commands, their write context, and plans.

Every operation is expressed as a *plan*: a generator that yields batches of
:class:`Command` (sent in one round trip — a pipeline on a single Redis, one by one on a
cluster) and receives their replies, or yields :class:`Emit` with results for the caller.
The sync and async savers only drive plans (``saver.py`` / ``aio.py``); the plans
themselves are :class:`~langgraph_recall.checkpoint.redis._base.BaseRedisSaver`'s.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar

from langgraph.checkpoint.base import CheckpointTuple

from langgraph_recall.checkpoint import _guard
from langgraph_recall.checkpoint.redis._scripts import (
    BUSY_ERROR_MARK,
    INTEGRITY_ERROR_MARK,
    SCRIPT_SHAS,
    STALE_ERROR_MARK,
)
from langgraph_recall.errors import LangGraphRecallError

__all__ = ["Command", "Emit", "Plan", "Step", "WriteContext", "as_text", "write_context"]

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
            from langgraph_recall.checkpoint.redis._commands import WriteContext

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
            from langgraph_recall.checkpoint.redis._commands import WriteContext

            context = WriteContext("t", "put", checkpoint_id="c2", reused=("a", "b"))
            assert context.missing_blobs(1) == []
            assert context.missing_blobs([b"LGM_INTEGRITY", b"blobs", 2]) == ["b"]
            ```
        """
        if not isinstance(reply, list) or not reply or as_text(reply[0]) != INTEGRITY_ERROR_MARK:
            return []
        if as_text(reply[1]) == "parent":
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


def write_context(commands: Sequence[Command]) -> WriteContext | None:
    """The context of the guarded write among ``commands`` (a batch holds at most one)."""
    for command in commands:
        if command.context is not None:
            return command.context
    return None


def as_text(value: bytes | str) -> str:
    """A reply's bytes as text (a client that decodes replies gives ``str`` already)."""
    return value.decode() if isinstance(value, bytes) else value
