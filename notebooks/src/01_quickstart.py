"""Source of notebooks/01_quickstart.ipynb (generate it: python notebooks/build.py)."""


# %% [markdown]
# # 01 · Quickstart: an agent that remembers
#
# A LangGraph chat agent with **long-term memory across threads** in a few lines: the
# memory store and the checkpointer both live in Postgres (an embedded Postgres 18 +
# pgvector when no server is configured), and the prebuilt graph
# `langgraph_recall.graphs.build_graph` runs `summarize → retrieve → inject → respond → extract`.
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
import uuid

from langchain_core.runnables import RunnableConfig

from langgraph_recall.checkpoint.postgres import PostgresSaver
from langgraph_recall.embedded import default_dsn
from langgraph_recall.graphs import build_graph
from langgraph_recall.nodes import user_namespace
from langgraph_recall.offline import default_chat_model
from langgraph_recall.store.postgres import PostgresMemoryStore

dsn = default_dsn()  # $LANGGRAPH_RECALL_POSTGRES_URI, else the embedded Postgres
model = default_chat_model()  # ChatOpenAI when OPENAI_API_KEY is set, else None
print(
    "model:",
    model
    if model is not None
    else "offline mode: rule-based extractor and templated responder, not an LLM",
)

# %% [markdown]
# Open the store and the checkpointer (both idempotent `setup()`), then build the agent.

# %%
resources = contextlib.ExitStack()
store = resources.enter_context(PostgresMemoryStore.from_conn_string(dsn))
print(store.setup())
checkpointer = resources.enter_context(PostgresSaver.from_conn_string(dsn))
checkpointer.setup()

agent = build_graph(model, store=store, checkpointer=checkpointer)
user_id = f"quickstart-{uuid.uuid4().hex[:6]}"  # a fresh user per run

# %% [markdown]
# **Thread 1**: the user introduces themselves. The `extract` node stores memories.

# %%
first: RunnableConfig = {"configurable": {"user_id": user_id, "thread_id": f"{user_id}-1"}}
for text in ["Hi, my name is Zhang San.", "I live in Berlin.", "I work at Acme Robotics."]:
    state = agent.invoke({"messages": [("user", text)]}, first)
    print(f"user:      {text}\nassistant: {state['messages'][-1].content}")
    print("           memory report:", state["memory_report"]["counts"], "\n")

# %% [markdown]
# **Thread 2** is a brand-new conversation: the answer comes from long-term memory.

# %%
second: RunnableConfig = {"configurable": {"user_id": user_id, "thread_id": f"{user_id}-2"}}
state = agent.invoke({"messages": [("user", "What's my name?")]}, second)
answer = state["messages"][-1].content
print(answer)
if model is None:  # the offline responder is deterministic
    assert "Zhang San" in answer

# %% [markdown]
# What the store holds for this user, and what the checkpointer holds per thread:

# %%
for item in store.search(user_namespace(user_id)):
    value = item.value
    print(f"[{value['kind']:>10}] importance {value['importance']}: {value['content']}")

for config in (first, second):
    messages = agent.get_state(config).values["messages"]
    print(config["configurable"]["thread_id"], "->", len(messages), "messages in the checkpoint")

# %% [markdown]
# Clean up: erase the user (memories, embeddings, history) and close the connections.

# %%
print("erased", store.forget(user_namespace(user_id)), "memories")
resources.close()
