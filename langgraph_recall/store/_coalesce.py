"""Concurrent ``abatch`` calls of the async store, merged into few transactions.

Each call to ``AsyncPostgresMemoryStore.abatch`` (every ``aget``/``aput``/``asearch``/...
is one) becomes a *unit* in one of two FIFO queues: units that write, and units that only
read (reads have no order among concurrent calls: no read waits behind a write it does not
need). Up to ``max_running`` drains run at once, each taking units from the heads of the
queues — its fair share of what waits (``ceil(waiting / ways)`` operations, at most
``max_ops``, where ``ways`` is how many drains the queue can keep busy: one per waiting read
and per namespace waiting writes go to that no drain writes in, at most ``max_running``),
leaving for a later drain any unit that writes a key already written in this
one, or writes in a namespace a drain still running writes in (one key's writes stay in
order, and no drain waits on the namespace lock another holds) — and running them as ONE
batch
(one connection, one transaction, one embedding call). The fair share keeps every
connection busy: a batch runs its searches one after another, so 1,000 waiting searches
go to 10 connections as 10 batches of 100, not to 2 as batches of 500. 5,000 concurrent
``aput`` calls on a pool of 10 thus become a few dozen transactions instead of 5,000 calls
fighting for 10 connections. Writes waiting for a namespace a drain writes in cannot run
beside it, so they are not split: they go together into the next batch there (ten threads
each blocked on one ``put`` leave ten units waiting at a time, which then run as one
transaction instead of ten), and no drain is started for them meanwhile.

One timeout bounds a call against a server that stops answering: a call fails with the
error ``on_stall`` builds once ``stall_timeout`` seconds pass in which it waited (in the
queue or in flight) and the server answered nothing — no statement or embedding of any
drain completed. Progress of others keeps queued calls waiting (a long queue behind a
working server is not an outage); a frozen or unreachable server fails every waiting call
within ``stall_timeout`` + ε, and queued calls that fail so are never run.

Every caller gets exactly its own outcome: the merged results are split per unit, and when
a merged batch fails (one caller's bad input, or a database error) each unit is run again
alone, so only the unit at fault fails and the others are written. Units of one drain see
the state before the drain's writes, as concurrent calls may; identical reads in one drain
(the same ``aget``/``asearch``/``alist_namespaces`` from many callers at once) run once.

Example:
    ```python
    import asyncio

    from langgraph.store.base import GetOp

    from langgraph_recall.store._coalesce import Coalescer

    batches: list[int] = []

    async def run(ops):
        batches.append(len(ops))
        return [None] * len(ops)

    async def main() -> None:
        coalescer = Coalescer(run, max_running=1)
        await asyncio.gather(*(coalescer.submit([GetOp(("a",), str(i))]) for i in range(50)))

    asyncio.run(main())
    assert sum(batches) == 50 and len(batches) < 50
    ```
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import Awaitable, Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field

from langgraph.store.base import Op, PutOp, Result

__all__ = ["Coalescer", "Stall", "Unit", "dedupe_reads", "take_units"]

DEFAULT_MAX_OPS = 500
"""Operations per merged batch: large enough to amortise a transaction, small enough that
one batch's statement parameters and embedding call stay modest."""


@dataclass(eq=False)  # identity: a stalled call finds itself in the queue without comparing ops
class Unit:
    """One caller's operations and the future its results go to."""

    ops: list[Op]
    future: asyncio.Future[list[Result]]
    writes: frozenset[tuple[tuple[str, ...], str]] = field(default_factory=frozenset)
    queued_at: float = 0.0
    taken: bool = False  # a drain took it (it is running or ran)


@dataclass(frozen=True)
class Stall:
    """What was measured when a call gave up waiting (the argument of ``on_stall``).

    Attributes:
        queued: The call was still in the queue (never run, nothing of it applied);
            ``False``: it was running (sent to the server).
        waited: Seconds since the call was submitted.
        silent: Seconds since any drain last heard from the server.
        running: Drains running (each on one connection) when it gave up.
        capacity: Drains that may run at once (the pool's ``max_size``).
        queue: Calls still waiting in the queue, this one included when ``queued``.
        late: Seconds the waiting call itself woke up after its deadline: a large value
            means this process was starved (CPU load, a blocked event loop), not only
            the server.

    Example:
        ```python
        from langgraph_recall.store._coalesce import Stall

        stall = Stall(queued=True, waited=5.2, silent=5.0, running=10, capacity=10, queue=31)
        assert stall.queued and stall.late == 0.0
        ```
    """

    queued: bool
    waited: float
    silent: float
    running: int
    capacity: int
    queue: int
    late: float = 0.0


def _written_keys(ops: Sequence[Op]) -> frozenset[tuple[tuple[str, ...], str]]:
    keys: set[tuple[tuple[str, ...], str]] = set()
    for op in ops:
        if isinstance(op, PutOp):
            try:
                keys.add((tuple(op.namespace), op.key))
            except TypeError:  # unhashable garbage: validation rejects it in the unit's run
                keys.add(((repr(op.namespace),), repr(op.key)))
    return frozenset(keys)


def take_units(
    writes: collections.deque[Unit],
    reads: collections.deque[Unit],
    max_ops: int,
    busy: Collection[tuple[str, ...]] = frozenset(),
) -> list[Unit]:
    """Pop the units one drain runs together (pure; see the module docstring).

    ``writes`` holds the waiting units that write, ``reads`` those that only read, each in
    the order they were submitted. Reads never wait for one another or for a write
    (concurrent calls have no order among them), so the batch takes half its share of
    reads first, then writes, then fills up with reads. A write unit is taken in order
    unless it writes a key a taken unit writes, or writes in a namespace of ``busy`` (one
    a drain still running writes in): then it is left for a later drain, and so is every
    later unit writing one of its keys: writes of one key keep their order and never share
    a batch (so each is recorded in the history), two drains never write one namespace at
    once (writers of a namespace serialise on its lock in the database: a drain would only
    wait there). At most ``4 * max_ops`` write units are looked at; a unit larger than
    ``max_ops`` runs alone (no read goes before a write that would not fit after it). A
    unit whose caller is gone (cancelled, or failed by the stall bound) is dropped unrun.

    Example:
        ```python
        from langgraph_recall.store._coalesce import Unit, take_units

        import asyncio, collections

        from langgraph.store.base import GetOp, PutOp

        loop = asyncio.new_event_loop()
        put = lambda key: Unit([PutOp(("a",), key, {})], loop.create_future(),
                               frozenset({(("a",), key)}))
        writes = collections.deque([put("x"), put("x"), put("y"), put("x")])
        reads = collections.deque([Unit([GetOp(("a",), "x")], loop.create_future())])
        taken = take_units(writes, reads, 100)
        assert [type(u.ops[0]).__name__ for u in taken] == ["GetOp", "PutOp", "PutOp"]
        assert [u.ops[0].key for u in taken[1:]] == ["x", "y"] and len(writes) == 2
        assert take_units(writes, reads, 100, busy={("a",)}) == []  # a drain writes in ("a",)
        loop.close()
        ```
    """
    taken: list[Unit] = []
    first = max_ops // 2  # reads first, leaving room for the next write
    if not writes:
        first = max_ops
    elif len(writes[0].ops) > max_ops - first:  # a large write goes first, alone if need be
        first = 0
    size = _take_reads(reads, taken, 0, first)
    size = _take_writes(writes, taken, size, max_ops, busy)
    _take_reads(reads, taken, size, max_ops)
    return taken


def _take_reads(reads: collections.deque[Unit], taken: list[Unit], size: int, limit: int) -> int:
    while reads:
        if reads[0].future.done():  # its caller is gone (cancelled, stalled): never run
            reads.popleft()
            continue
        if taken and size + len(reads[0].ops) > limit:
            break
        unit = reads.popleft()
        taken.append(unit)
        size += len(unit.ops)
    return size


def _take_writes(
    writes: collections.deque[Unit],
    taken: list[Unit],
    size: int,
    max_ops: int,
    busy: Collection[tuple[str, ...]],
) -> int:
    written: set[tuple[tuple[str, ...], str]] = set()
    blocked: set[tuple[tuple[str, ...], str]] = set()
    deferred: list[Unit] = []
    looked = 0
    while writes and (not taken or size < max_ops) and looked < 4 * max_ops:
        unit = writes.popleft()
        if unit.future.done():  # its caller is gone (cancelled, stalled): never run
            continue
        looked += 1
        if taken and size + len(unit.ops) > max_ops:
            deferred.append(unit)
            break
        if not (written.isdisjoint(unit.writes) and blocked.isdisjoint(unit.writes)) or any(
            namespace in busy for namespace, _ in unit.writes
        ):
            deferred.append(unit)
            blocked |= unit.writes
            continue
        taken.append(unit)
        size += len(unit.ops)
        written |= unit.writes
    writes.extendleft(reversed(deferred))
    return size


class Coalescer:
    """Merges concurrent batch submissions (see the module docstring).

    Args:
        run: Runs one batch of operations (one transaction) and returns its results; it
            calls :meth:`progress` whenever the server answered a request.
        max_running: Drains running at once (the store passes its pool's ``max_size``).
        max_ops: Operations per merged batch.
        stall_timeout: Seconds a call may wait without any answer from the server
            (``None``: unbounded).
        on_stall: Builds the error of a call that waited ``stall_timeout`` seconds from
            what was measured (a :class:`Stall`: still queued or running, how long it
            waited, how long the server was silent, how busy the drains were).
    """

    def __init__(
        self,
        run: Callable[[list[Op]], Awaitable[list[Result]]],
        *,
        max_running: int = 1,
        max_ops: int = DEFAULT_MAX_OPS,
        stall_timeout: float | None = None,
        on_stall: Callable[[Stall], BaseException] | None = None,
    ) -> None:
        self._run = run
        self.max_running = max(1, max_running)
        self.max_ops = max(1, max_ops)
        self.stall_timeout = stall_timeout
        self._on_stall = on_stall or (lambda stall: TimeoutError("no answer from the server"))
        self._progress_at = 0.0
        self._local_work = 0
        self._writes: collections.deque[Unit] = collections.deque()  # units that write
        self._reads: collections.deque[Unit] = collections.deque()  # units that only read
        self._waiting_ops = 0  # operations of the units no drain took yet
        self._queued = 0  # those units
        # namespaces those units write in, each with how many of them write there
        self._queued_writes: collections.Counter[tuple[str, ...]] = collections.Counter()
        self._pending: dict[Unit, None] = {}  # every unit not settled, oldest first
        self._watchdog: asyncio.Task[None] | None = None
        self._running = 0
        self._unstarted = 0  # drains created that have not looked at the queues yet
        self._writing: collections.Counter[tuple[str, ...]] = collections.Counter()
        self._drains: set[asyncio.Task[None]] = set()

    async def submit(self, ops: list[Op]) -> list[Result]:
        """Run ``ops`` (one caller's batch), merged with whatever else is waiting."""
        if not ops:
            return []
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[Result]] = loop.create_future()
        unit = Unit(ops, future, _written_keys(ops), loop.time())
        (self._writes if unit.writes else self._reads).append(unit)
        self._waiting_ops += len(ops)
        self._queued += 1
        self._queued_writes.update(_namespaces(unit))
        self._pending[unit] = None
        future.add_done_callback(lambda _: self._forget(unit))
        self._start_drains()
        if self.stall_timeout is not None and self._watchdog is None:
            self._watchdog = loop.create_task(self._watch(self.stall_timeout))
        return await future  # a cancelled caller cancels the future: its unit is dropped

    def _forget(self, unit: Unit) -> None:
        """``unit`` is settled (answered, failed, cancelled or stalled); idempotent."""
        if self._pending.pop(unit, False) is None and not unit.taken:
            self._waiting_ops -= len(unit.ops)
            self._queued -= 1
            self._unqueue_writes(unit)

    async def _watch(self, timeout: float) -> None:
        """One watchdog for every waiting call: when the server answered nothing for
        ``timeout`` seconds, each call waiting at least that long fails (see the module
        docstring). It sleeps until the oldest call's deadline, which moves with every
        answer."""
        loop = asyncio.get_running_loop()
        try:
            while self._pending:
                oldest = next(iter(self._pending))
                deadline = max(oldest.queued_at, self._progress_at) + timeout
                now = loop.time()
                if now < deadline:
                    await asyncio.sleep(deadline - now)
                    continue
                if self._local_work:  # embedding: the clock restarts when it ends
                    self.progress()
                    continue
                for unit in list(self._pending):
                    if unit.queued_at + timeout > now:
                        break  # younger calls have time left
                    self._stall(unit, now)
        finally:
            self._watchdog = None

    def progress(self) -> None:
        """The server answered a request: calls waiting behind it get ``stall_timeout`` more."""
        self._progress_at = asyncio.get_running_loop().time()

    @contextlib.contextmanager
    def local_work(self) -> Iterator[None]:
        """Work of a drain that waits on no server (embedding a batch): while any runs, no
        stall is counted -- a slow embedder on a busy machine is not a frozen database."""
        self._local_work += 1
        try:
            yield
        finally:
            self._local_work -= 1
            self.progress()

    def _stall(self, unit: Unit, now: float) -> None:
        """Fail ``unit``'s caller with the error ``on_stall`` builds; a queued unit is
        never run, one in flight settles nothing more."""
        deadline = max(unit.queued_at, self._progress_at) + (self.stall_timeout or 0.0)
        stall = Stall(
            queued=not unit.taken,
            waited=now - unit.queued_at,
            silent=now - max(unit.queued_at, self._progress_at),
            running=self._running,
            capacity=self.max_running,
            queue=self._queued,
            late=max(0.0, now - deadline),
        )
        if not unit.future.done():
            unit.future.set_exception(self._on_stall(stall))
        self._forget(unit)

    def _start_drains(self) -> None:
        """Start drains for the work that could run beside the running ones: one per queued
        read unit and per namespace a queued unit writes in that no drain writes in, up to
        ``max_running`` (a drain started for a unit that cannot be taken -- its namespace
        is being written -- would only look at the queues and stop: on a pool of 10, ten
        such starts per call cost more than the calls themselves)."""
        while self._running < self.max_running and self._unstarted < self._parallel_work():
            self._running += 1
            self._unstarted += 1
            task = asyncio.get_running_loop().create_task(self._drain())
            self._drains.add(task)
            task.add_done_callback(self._drains.discard)

    def _parallel_work(self) -> int:
        """How many drains the queued units could keep busy at once, counted up to
        ``max_running`` (it stops there: a burst of calls to thousands of namespaces does
        not make every call count them all)."""
        ways = len(self._reads)
        if ways < self.max_running:
            for namespace in self._queued_writes:
                if namespace not in self._writing:
                    ways += 1
                    if ways >= self.max_running:
                        break
        return min(ways, self.max_running)

    async def _drain(self) -> None:
        self._unstarted -= 1
        took = False
        try:
            while self._writes or self._reads:
                # a fair share of what waits among the drains it can keep busy: writes in
                # one namespace run one drain at a time, so they are not split further
                ways = max(1, min(self.max_running, self._parallel_work()))
                share = -(-self._waiting_ops // ways)  # ceil
                # when every namespace a queued unit writes in is being written by a running
                # drain, no queued write can be taken: do not look through them all
                writable = self._writes if self._may_write() else collections.deque()
                units = take_units(
                    writable, self._reads, max(1, min(self.max_ops, share)), self._writing
                )
                if not units:  # all write where a running drain writes: it takes them next
                    break
                took = True
                for unit in units:
                    unit.taken = True
                self._waiting_ops -= sum(len(unit.ops) for unit in units)
                self._queued -= len(units)
                for unit in units:
                    self._unqueue_writes(unit)
                namespaces = {namespace for unit in units for namespace, _ in unit.writes}
                self._writing.update(namespaces)
                self._start_drains()  # what this drain left, others may take meanwhile
                try:
                    await self._run_units(units)
                finally:
                    self._writing.subtract(namespaces)
                    for namespace in namespaces:
                        if self._writing[namespace] <= 0:
                            del self._writing[namespace]
                self.progress()
        finally:
            self._running -= 1
            if took and (self._writes or self._reads):  # submitted while it was finishing
                self._start_drains()

    def _unqueue_writes(self, unit: Unit) -> None:
        for namespace in _namespaces(unit):
            left = self._queued_writes[namespace] - 1
            if left > 0:
                self._queued_writes[namespace] = left
            else:
                del self._queued_writes[namespace]

    def _may_write(self) -> bool:
        """Whether a queued write unit might be taken: one writes in a namespace no running
        drain writes in."""
        return any(namespace not in self._writing for namespace in self._queued_writes)

    async def _run_units(self, units: list[Unit]) -> None:
        if len(units) == 1:
            await self._run_alone(units[0])
            return
        merged, positions = dedupe_reads([op for unit in units for op in unit.ops])
        try:
            unique = await self._run(merged)
            results = [_copied(unique[position]) for position in positions]
        except Exception:  # someone's bad input or a database error: attribute it
            for unit in units:
                await self._run_alone(unit)
            return
        except BaseException:  # the drain itself was cancelled: so are its callers
            for unit in units:
                unit.future.cancel()
            raise
        start = 0
        for unit in units:
            _settle(unit.future, result=results[start : start + len(unit.ops)])
            start += len(unit.ops)

    async def _run_alone(self, unit: Unit) -> None:
        if unit.future.done():  # its caller stopped waiting (stalled or cancelled)
            return
        try:
            results = await self._run(unit.ops)
        except Exception as exc:
            _settle(unit.future, error=exc)
        except BaseException:
            unit.future.cancel()
            raise
        else:
            _settle(unit.future, result=results)


def _namespaces(unit: Unit) -> set[tuple[str, ...]]:
    """The namespaces a unit writes in (as :func:`take_units` compares them)."""
    return {namespace for namespace, _ in unit.writes}


def dedupe_reads(ops: Sequence[Op]) -> tuple[list[Op], list[int]]:
    """Identical reads of different callers run once (pure).

    Returns the operations to run and, for each input operation, the position of its
    result. Writes are never merged (:func:`take_units` keeps two writes of one key apart).

    Example:
        ```python
        from langgraph_recall.store._coalesce import dedupe_reads

        from langgraph.store.base import GetOp

        ops, where = dedupe_reads([GetOp(("a",), "k"), GetOp(("a",), "k"), GetOp(("a",), "j")])
        assert len(ops) == 2 and where == [0, 0, 1]
        ```
    """
    unique: list[Op] = []
    seen: dict[str, int] = {}
    positions: list[int] = []
    for op in ops:
        if isinstance(op, PutOp):
            positions.append(len(unique))
            unique.append(op)
            continue
        identity = f"{type(op).__name__}:{op!r}"
        if identity not in seen:
            seen[identity] = len(unique)
            unique.append(op)
        positions.append(seen[identity])
    return unique, positions


def _copied(result: Result) -> Result:
    """Each caller gets its own list (deduplicated reads share the items, as in LangGraph)."""
    if isinstance(result, list):
        return result.copy()
    return result


def _settle(
    future: asyncio.Future[list[Result]],
    *,
    result: list[Result] | None = None,
    error: BaseException | None = None,
) -> None:
    if future.done():  # the caller was cancelled; its operations still ran
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result if result is not None else [])
