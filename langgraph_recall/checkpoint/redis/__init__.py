"""Redis checkpointers for LangGraph on plain Redis >= 6.2 / Valkey (no modules needed).

* :class:`RedisSaver` / :class:`AsyncRedisSaver`: the full ``BaseCheckpointSaver`` surface
  (plus ``prune``, ``copy_thread``, ``delete_for_runs``), TTL on every key of a thread,
  keep-last-N retention, any ``serde`` (e.g. encrypted), standalone or cluster clients.
* :class:`RedisLeaseBackend` / :class:`AsyncRedisLeaseBackend`: per-thread leases with
  fencing tokens that the savers check atomically with each write.

Example:
    ```python
    from langgraph.graph import START, MessagesState, StateGraph

    from langgraph_recall.checkpoint.redis import RedisSaver, ThreadTTLConfig

    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda state: {"messages": [("ai", "hello")]})
    builder.add_edge(START, "echo")
    ttl: ThreadTTLConfig = {"default_ttl": 1440}  # minutes after the thread's last write
    with RedisSaver.from_conn_string(REDIS_URL, ttl=ttl) as saver:
        saver.setup()
        graph = builder.compile(checkpointer=saver)
    ```
"""

from __future__ import annotations

from langgraph_recall.checkpoint._config import ThreadTTLConfig
from langgraph_recall.checkpoint.redis.aio import AsyncRedisSaver
from langgraph_recall.checkpoint.redis.lease import AsyncRedisLeaseBackend, RedisLeaseBackend
from langgraph_recall.checkpoint.redis.saver import RedisSaver

__all__ = [
    "AsyncRedisLeaseBackend",
    "AsyncRedisSaver",
    "RedisLeaseBackend",
    "RedisSaver",
    "ThreadTTLConfig",
]
