"""Source of notebooks/02_memory_nodes.ipynb (generate it: python notebooks/build.py)."""

# ruff: noqa: E402  (a notebook imports where it first needs a name)

# %% [markdown]
# # 02 · Adding memory nodes to an existing graph
#
# You already have a LangGraph app. Adding memory means adding nodes from
# `langgraph_recall.nodes` around your model node and passing `store=` (and a
# `checkpointer=`) to `compile()`. Your node does not change. Identity (`user_id`,
# `thread_id`) comes from the config (or the runtime context).
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
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph

from langgraph_recall.embedded import default_dsn
from langgraph_recall.nodes import user_namespace
from langgraph_recall.offline import TemplatedResponder, default_chat_model
from langgraph_recall.store.postgres import PostgresMemoryStore

llm = default_chat_model()
model = llm or TemplatedResponder()  # offline: templated responder, not an LLM
print("model:", type(model).__name__)

# %% [markdown]
# ### Your existing graph
# One node that calls the model on the conversation.


# %%
def chatbot(state: MessagesState) -> dict[str, Any]:
    return {"messages": [model.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("chatbot", chatbot)
builder.add_edge(START, "chatbot")
builder.add_edge("chatbot", END)
plain = builder.compile()
print(plain.invoke({"messages": [HumanMessage("What's my name?")]})["messages"][-1].content)

# %% [markdown]
# ### The same graph with memory
# `retrieve → inject → chatbot → extract`. `MemoryState` is `MessagesState` plus the keys the
# memory nodes use. `inject` puts one `<memory>…</memory>` system message in front of the
# conversation (replaced each turn, never piled up).

# %%
from langgraph_recall.extraction import RuleBasedExtractor
from langgraph_recall.nodes import ExtractNode, InjectNode, MemoryState, RetrieveNode

memory_builder = StateGraph(MemoryState)
memory_builder.add_node("retrieve", RetrieveNode(token_budget=300))
memory_builder.add_node("inject", InjectNode())
memory_builder.add_node("chatbot", chatbot)  # unchanged
# llm=None (offline): the rule-based extractor, chosen explicitly (English first-person facts)
offline_rules = None if llm else RuleBasedExtractor()
memory_builder.add_node("extract", ExtractNode(model=llm, extractor=offline_rules))
memory_builder.add_edge(START, "retrieve")
memory_builder.add_edge("retrieve", "inject")
memory_builder.add_edge("inject", "chatbot")
memory_builder.add_edge("chatbot", "extract")
memory_builder.add_edge("extract", END)

resources = contextlib.ExitStack()
store = resources.enter_context(PostgresMemoryStore.from_conn_string(default_dsn()))
store.setup()
graph = memory_builder.compile(store=store)
user_id = f"nodes-{uuid.uuid4().hex[:6]}"

# %%
config: RunnableConfig = {"configurable": {"user_id": user_id, "thread_id": "a"}}
state = graph.invoke(
    {"messages": [HumanMessage("My name is Zhang San and I love green tea.")]}, config
)
print(state["memory_report"]["counts"])

config = {"configurable": {"user_id": user_id, "thread_id": "b"}}
state = graph.invoke({"messages": [HumanMessage("What's my name?")]}, config)
block = next(m for m in state["messages"] if m.type == "system")
print(block.content)
print("->", state["messages"][-1].content)
if llm is None:
    assert "Zhang San" in state["messages"][-1].content

# %% [markdown]
# Memories are per user: another `user_id` sees none of them.

# %%
other: RunnableConfig = {"configurable": {"user_id": user_id + "-other", "thread_id": "c"}}
state = graph.invoke({"messages": [HumanMessage("What's my name?")]}, other)
print(state["messages"][-1].content)
assert state["memories"] == []
store.forget(user_namespace(user_id))
resources.close()
