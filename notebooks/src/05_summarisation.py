"""Source of notebooks/05_summarisation.ipynb (generate it: python notebooks/build.py)."""

# ruff: noqa: E402  (a notebook imports where it first needs a name)

# %% [markdown]
# # 05 · Summarisation: keeping long threads small
#
# `SummarizeNode` keeps the last turns verbatim and folds everything older into a running
# summary once the conversation passes a fraction of a token budget. Folded messages are
# removed from state, so checkpoints stop growing. An `AIMessage` with tool calls and its
# `ToolMessage`s are never split. Offline the summary is extractive; with a model it is
# written by the model.
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

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig

from langgraph_recall.nodes import SummarizeNode, group_units, user_namespace
from langgraph_recall.offline import default_chat_model

model = default_chat_model()

# %% [markdown]
# A conversation with a tool call in the middle:

# %%
messages: list[BaseMessage] = []
for i in range(6):
    messages += [
        HumanMessage(f"Question {i}: tell me about city number {i} " * 3, id=f"h{i}"),
        AIMessage(f"Answer {i}: city number {i} is lovely in spring. " * 3, id=f"a{i}"),
    ]
messages[7:7] = [
    AIMessage(
        "",
        id="call",
        tool_calls=[
            {"name": "weather", "args": {"city": "Kyoto"}, "id": "t1", "type": "tool_call"}
        ],
    ),
    ToolMessage("Sunny, 21°C", tool_call_id="t1", id="tool"),
]
print(len(messages), "messages in", len(group_units(messages)), "units")

# %%
node = SummarizeNode(model=model, max_tokens=300, keep_turns=2)
update = node.invoke({"messages": messages})
removed = {m.id for m in update["messages"] if m.type == "remove"}
print(f"folded {len(removed)} of {len(messages)} messages")
print("summary:", update["summary"][:300])
assert ("call" in removed) == ("tool" in removed)  # the tool-call unit stays together

# %% [markdown]
# In a graph: the agent's checkpoint stays bounded however long the thread gets.

# %%
from langgraph_recall.checkpoint.postgres import PostgresSaver
from langgraph_recall.embedded import default_dsn
from langgraph_recall.graphs import build_graph
from langgraph_recall.store.postgres import PostgresMemoryStore

resources = contextlib.ExitStack()
store = resources.enter_context(PostgresMemoryStore.from_conn_string(default_dsn()))
store.setup()
saver = resources.enter_context(PostgresSaver.from_conn_string(default_dsn()))
saver.setup()
agent = build_graph(model, store=store, checkpointer=saver, max_tokens=300, keep_turns=2)
user_id = f"summary-{uuid.uuid4().hex[:6]}"
config: RunnableConfig = {"configurable": {"user_id": user_id, "thread_id": user_id}}
sizes = []
for i in range(8):
    text = f"Turn {i}: I'm planning day {i} of my trip and want to see temples and gardens."
    state = agent.invoke({"messages": [("user", text)]}, config)
    sizes.append(len(state["messages"]))
print("messages in the checkpoint after each turn:", sizes)
print("summary:", state.get("summary", "")[:300])
assert max(sizes) < 2 * 8  # without the summariser it would be 16
store.forget(user_namespace(user_id))
saver.delete_thread(user_id)
resources.close()
