"""Source of notebooks/03_checkpointers.ipynb (generate it: python notebooks/build.py)."""


# %% [markdown]
# # 03 · Checkpointers for multi-worker deployments
#
# With several workers (uvicorn/gunicorn workers, Celery, k8s replicas) a user's next turn
# can land on any of them. `InMemorySaver` loses the thread there; the Redis and Postgres
# savers keep it, and the **per-thread lease** (`with_thread_lease`) makes sure two workers
# never run the same `thread_id` at once, with fencing tokens that reject late writes.
#
# This notebook needs a Redis server (`LANGGRAPH_RECALL_REDIS_URL`, default
# `redis://127.0.0.1:6379/0`; plain Redis ≥ 6.2 or Valkey, no modules). Postgres is
# `LANGGRAPH_RECALL_POSTGRES_URI`, else the embedded one.
#
# ### Configuration
#
# | variable | default | effect |
# |---|---|---|
# | `LANGGRAPH_RECALL_HOME` | per-user data dir | where the embedded Postgres keeps its data |
# | `LANGGRAPH_RECALL_POSTGRES_URI` | *(unset: embedded Postgres)* | use this Postgres instead |
# | `LANGGRAPH_RECALL_REDIS_URL` | `redis://127.0.0.1:6379/0` | Redis for the Redis checkpointer |
# | `OPENAI_API_KEY` | *(unset: offline)* | `ChatOpenAI` (`pip install langchain-openai`) |
# | `OPENAI_BASE_URL` | OpenAI | any OpenAI-compatible server (vLLM, Ollama, …) |
# | `LANGGRAPH_RECALL_MODEL` | `gpt-4o-mini` | model name when `OPENAI_API_KEY` is set |
#
# Without `OPENAI_API_KEY` the notebook runs in **offline mode**: a deterministic rule-based
# extractor and a templated responder answer — they are clearly labelled and are *not* an LLM.

# %%
import contextlib
import os
import uuid

from langchain_core.runnables import RunnableConfig
from langgraph.store.memory import InMemoryStore

from langgraph_recall.checkpoint.postgres import PostgresSaver
from langgraph_recall.checkpoint.redis import RedisSaver
from langgraph_recall.embedded import default_dsn
from langgraph_recall.errors import StaleWriteError, ThreadBusyError
from langgraph_recall.graphs import build_graph
from langgraph_recall.lease import FENCE_CONFIG_KEY, with_thread_lease
from langgraph_recall.offline import default_chat_model

REDIS_URL = os.environ.get("LANGGRAPH_RECALL_REDIS_URL", "redis://127.0.0.1:6379/0")
POSTGRES_URI = default_dsn()  # $LANGGRAPH_RECALL_POSTGRES_URI, else embedded
model = default_chat_model()
prefix = f"nb03-{uuid.uuid4().hex[:6]}"  # a private key prefix for this run
thread: RunnableConfig = {"configurable": {"thread_id": "support-42", "user_id": "u42"}}

# %% [markdown]
# ### Two workers, one Redis
# Each "worker" has its own connection and its own compiled graph, as separate processes
# would. Worker A serves turn 1, worker B serves turn 2 of the same thread and sees turn 1.

# %%
resources = contextlib.ExitStack()
saver_a = resources.enter_context(RedisSaver.from_conn_string(REDIS_URL, prefix=prefix))
saver_b = resources.enter_context(RedisSaver.from_conn_string(REDIS_URL, prefix=prefix))
saver_a.setup()
store = InMemoryStore()  # long-term memory is not the topic here
worker_a = build_graph(model, store=store, checkpointer=saver_a)
worker_b = build_graph(model, store=store, checkpointer=saver_b)

worker_a.invoke({"messages": [("user", "Hi, my name is Zhang San.")]}, thread)
state = worker_b.invoke({"messages": [("user", "Where is my order?")]}, thread)
print([f"{m.type}: {m.content[:40]}" for m in state["messages"]])
assert sum(m.type == "human" for m in state["messages"]) == 2  # B saw A's turn

# %% [markdown]
# ### Leases: one run per thread at a time
# `with_thread_lease(graph, strategy="reject")` raises `ThreadBusyError` when another worker
# holds the thread (`strategy="wait"` waits, bounded). Here worker B holds the lease by hand.

# %%
leased_a = with_thread_lease(worker_a, strategy="reject", ttl=10)
leases_b = saver_b.lease_backend()
held = leases_b.try_acquire("support-42", "worker-b", 10.0)
assert held is not None  # the thread was free
try:
    leased_a.invoke({"messages": [("user", "Any news?")]}, thread)
except ThreadBusyError as exc:
    print("worker A was refused:", exc)
leases_b.release(held)
state = leased_a.invoke({"messages": [("user", "Any news?")]}, thread)
print("after release, worker A ran the turn:", len(state["messages"]), "messages")

# %% [markdown]
# ### Fencing: a late write from a worker that lost its lease is rejected
# Every acquisition gives the thread a new fencing token (larger than the last, with random
# digits nobody else can guess); a write carrying an older token raises `StaleWriteError`,
# writes nothing, and the error says what happened without showing any token.

# %%
old = leases_b.try_acquire("support-42", "worker-b", 10.0)
assert old is not None
leases_b.release(old)
newer = leases_b.try_acquire("support-42", "worker-c", 10.0)  # someone else took over
assert newer is not None
stale: RunnableConfig = {"configurable": {**thread["configurable"], FENCE_CONFIG_KEY: old.token}}
try:
    worker_b.invoke({"messages": [("user", "late write")]}, stale)
except StaleWriteError as exc:
    print("rejected:", exc)
leases_b.release(newer)
saver_a.delete_thread("support-42")

# %% [markdown]
# ### Postgres: the same, plus `copy_thread` and `prune`
# Our `PostgresSaver` uses the official schema, a correctly configured pool
# (`autocommit`, `dict_row`, `prepare_threshold` for PgBouncer) and no instance lock.

# %%
pg = resources.enter_context(PostgresSaver.from_conn_string(POSTGRES_URI))
pg.setup()
agent = build_graph(model, store=store, checkpointer=pg)
pg_thread: RunnableConfig = {"configurable": {"thread_id": f"{prefix}-pg", "user_id": "u42"}}
for text in ["Hi!", "I live in Berlin.", "Thanks."]:
    agent.invoke({"messages": [("user", text)]}, pg_thread)


def count(thread_id: str) -> int:
    return len(list(pg.list({"configurable": {"thread_id": thread_id}})))


pg.copy_thread(f"{prefix}-pg", f"{prefix}-fork")
print("checkpoints: original", count(f"{prefix}-pg"), "fork", count(f"{prefix}-fork"))
pg.prune([f"{prefix}-pg"], strategy="keep_latest")
print("after prune(keep_latest):", count(f"{prefix}-pg"))
latest = agent.get_state(pg_thread).values["messages"]
print("the latest state is intact:", len(latest), "messages")
assert count(f"{prefix}-pg") == 1 and len(latest) >= 6
for thread_id in (f"{prefix}-pg", f"{prefix}-fork"):
    pg.delete_thread(thread_id)
resources.close()
