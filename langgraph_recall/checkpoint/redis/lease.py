"""Per-thread leases with fencing tokens on Redis (a lease key and a token key per thread).

The lease key holds the token, the epoch (the server's run id) and the owner, and expires
by itself (``PX``); the thread's current token lives in the same cluster slot as its
checkpoints, so the savers' write scripts can compare a writer's token with it atomically
-- and refuse a write *without* a token while the lease is live. Tokens are the sequence
(floored at the server clock) followed by six secret digits the acquiring worker draws, so
a server that restarted from an older snapshot, or a promoted replica, never hands out a
token again; a lease taken under an ended epoch leaves its thread free at once (see
:mod:`langgraph_recall.checkpoint.redis._scripts`). ``delete_thread`` removes the token and
frees the lease. With a thread TTL, acquiring and renewing the lease also extend the TTL
of the thread's keys to at least the lease's, so a thread never expires under the worker
that holds it.

Example:
    ```python
    import uuid

    import redis

    from langgraph_recall.checkpoint.redis import RedisLeaseBackend

    client = redis.Redis.from_url(REDIS_URL)
    leases = RedisLeaseBackend(client, prefix="lgm")
    lease = leases.try_acquire(f"thread-{uuid.uuid4()}", "worker-a", ttl=30.0)
    if lease is not None:
        try:
            ...  # run the graph with config["configurable"][FENCE_CONFIG_KEY] = lease.token
        finally:
            leases.release(lease)
    client.close()
    ```
"""

from __future__ import annotations

import math
from typing import Any

from redis.exceptions import NoScriptError

from langgraph_recall.checkpoint.redis import _keys
from langgraph_recall.checkpoint.redis._client import describe_client, translate_errors
from langgraph_recall.checkpoint.redis._commands import Command
from langgraph_recall.checkpoint.redis._scripts import SCRIPTS
from langgraph_recall.errors import ConfigurationError
from langgraph_recall.lease import Lease
from langgraph_recall.lease._tokens import secret_text

__all__ = ["AsyncRedisLeaseBackend", "RedisLeaseBackend"]


def _ttl_ms(ttl: float) -> int:
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl):
        raise ConfigurationError(f"lease ttl must be a positive number of seconds, got {ttl!r}")
    if ttl <= 0:
        raise ConfigurationError(f"lease ttl must be a positive number of seconds, got {ttl!r}")
    return max(1, math.ceil(ttl * 1000))


class _LeaseCore:
    def __init__(self, client: Any, *, prefix: str = "lgm", fence_ttl_ms: int = 0) -> None:
        self._client = client
        self.prefix = _keys.validate_prefix(prefix)
        self.fence_ttl_ms = int(fence_ttl_ms)

    @property
    def where(self) -> str:
        """The server this lease's client reaches, for messages (read when asked: a Sentinel
        client reaches another server after a failover)."""
        return describe_client(self._client)

    def _acquisition(self, owner: str, ttl: float) -> tuple[Any, ...]:
        """``LEASE_ACQUIRE``'s arguments: owner, lease ms, thread TTL ms, the new token's
        secret digits (drawn here, from this worker's CSPRNG)."""
        return (owner, _ttl_ms(ttl), self.fence_ttl_ms, secret_text())

    def _renewal(self, lease: Lease, ttl: float) -> tuple[Any, ...]:
        """``LEASE_RENEW``'s arguments: owner, lease ms, token, thread TTL ms (keep-alive)."""
        return (lease.owner, _ttl_ms(ttl), lease.token, self.fence_ttl_ms)

    def _command_args(self, name: str, thread_id: str, *args: Any) -> tuple[Any, ...]:
        """``execute_command``'s arguments for the lease script ``name`` on the thread."""
        keys = _keys.ThreadKeys.build(self.prefix, str(thread_id)).script
        return Command.run(name, keys, args).execute_args()


class RedisLeaseBackend(_LeaseCore):
    """Synchronous :class:`~langgraph_recall.lease._protocol.LeaseBackend` on Redis.

    Args:
        client: ``redis.Redis`` or ``redis.cluster.RedisCluster``.
        prefix: Key prefix; must equal the checkpointer's so fencing tokens match.
        fence_ttl_ms: The thread TTL (the saver passes its own; 0 = none): the fencing
            counter's, and the least TTL a held lease keeps the thread's keys at.

    Example:
        ```python
        import uuid

        import redis

        from langgraph_recall.checkpoint.redis.lease import RedisLeaseBackend

        client = redis.Redis.from_url(REDIS_URL)
        leases = RedisLeaseBackend(client)
        lease = leases.try_acquire(f"t-{uuid.uuid4()}", "worker-a", 10.0)
        assert lease is not None and leases.renew(lease, 10.0)
        leases.release(lease)
        client.close()
        ```
    """

    def _call(self, name: str, thread_id: str, *args: Any) -> Any:
        command_args = self._command_args(name, thread_id, *args)
        with translate_errors(self.where):
            try:
                return self._client.execute_command(*command_args)
            except NoScriptError:
                self._client.script_load(SCRIPTS[name])
                return self._client.execute_command(*command_args)

    def try_acquire(self, thread_id: str, owner: str, ttl: float) -> Lease | None:
        """Take the lease if free or expired; ``None`` if another owner holds it."""
        token = self._call("LEASE_ACQUIRE", thread_id, *self._acquisition(owner, ttl))
        return None if token is None else Lease(str(thread_id), owner, int(token))

    def renew(self, lease: Lease, ttl: float) -> bool:
        """Extend the lease; ``False`` if it was taken by another owner or the thread deleted."""
        return bool(self._call("LEASE_RENEW", lease.thread_id, *self._renewal(lease, ttl)))

    def release(self, lease: Lease) -> None:
        """Give the lease up if this lease (owner and token) still holds it (no-op otherwise)."""
        self._call("LEASE_RELEASE", lease.thread_id, lease.owner, lease.token)


class AsyncRedisLeaseBackend(_LeaseCore):
    """Asynchronous :class:`~langgraph_recall.lease._protocol.AsyncLeaseBackend` on Redis.

    Args:
        client: ``redis.asyncio.Redis`` or ``redis.asyncio.cluster.RedisCluster``.
        prefix: Key prefix; must equal the checkpointer's so fencing tokens match.
        fence_ttl_ms: The thread TTL (0 = none), as for :class:`RedisLeaseBackend`.

    Example:
        ```python
        import uuid

        import redis.asyncio

        from langgraph_recall.checkpoint.redis.lease import AsyncRedisLeaseBackend

        client = redis.asyncio.Redis.from_url(REDIS_URL)
        leases = AsyncRedisLeaseBackend(client)
        lease = await leases.atry_acquire(f"t-{uuid.uuid4()}", "worker-a", 10.0)
        assert lease is not None
        await leases.arelease(lease)
        await client.aclose()
        ```
    """

    async def _call(self, name: str, thread_id: str, *args: Any) -> Any:
        command_args = self._command_args(name, thread_id, *args)
        with translate_errors(self.where):
            try:
                return await self._client.execute_command(*command_args)
            except NoScriptError:
                await self._client.script_load(SCRIPTS[name])
                return await self._client.execute_command(*command_args)

    async def atry_acquire(self, thread_id: str, owner: str, ttl: float) -> Lease | None:
        """Async :meth:`RedisLeaseBackend.try_acquire`."""
        token = await self._call("LEASE_ACQUIRE", thread_id, *self._acquisition(owner, ttl))
        return None if token is None else Lease(str(thread_id), owner, int(token))

    async def arenew(self, lease: Lease, ttl: float) -> bool:
        """Async :meth:`RedisLeaseBackend.renew`."""
        return bool(await self._call("LEASE_RENEW", lease.thread_id, *self._renewal(lease, ttl)))

    async def arelease(self, lease: Lease) -> None:
        """Async :meth:`RedisLeaseBackend.release`."""
        await self._call("LEASE_RELEASE", lease.thread_id, lease.owner, lease.token)
