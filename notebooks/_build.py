"""Generate the walkthrough notebooks (``python notebooks/_build.py``).

The notebooks are committed without outputs; this script is their source of truth.
Every notebook runs offline on the embedded Postgres (no server, no API key) and switches
to real services and models through the environment variables in its first cell. The
notebooks only import and call the package (and ``bench/``); no logic lives in them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

ENV_TABLE = """
| variable | default | effect |
|---|---|---|
| `LANGGRAPH_MEMORY_HOME` | per-user data dir | where the embedded Postgres keeps its data |
| `LANGGRAPH_MEMORY_POSTGRES_URI` | *(unset: embedded Postgres)* | use this Postgres instead |
| `LANGGRAPH_MEMORY_REDIS_URL` | `redis://127.0.0.1:6379/0` | Redis for the Redis checkpointer |
| `OPENAI_API_KEY` | *(unset: offline)* | `ChatOpenAI` (`pip install langchain-openai`) |
| `OPENAI_BASE_URL` | OpenAI | any OpenAI-compatible server (vLLM, Ollama, …) |
| `LANGGRAPH_MEMORY_MODEL` | `gpt-4o-mini` | model name when `OPENAI_API_KEY` is set |

Without `OPENAI_API_KEY` the notebook runs in **offline mode**: a deterministic rule-based
extractor and a templated responder answer — they are clearly labelled and are *not* an LLM.
"""

SETUP = """\
import contextlib
import os
import sys
import uuid
from pathlib import Path

# The benchmarks notebook imports the repository's `bench/` package (a source checkout).
repo = Path.cwd() if (Path.cwd() / "bench").is_dir() else Path.cwd().parent
sys.path.append(str(repo))  # after site-packages: the installed langgraph_memory wins
"""

Cell = tuple[str, str]


def md(text: str) -> Cell:
    return ("md", text.strip("\n"))


def code(text: str) -> Cell:
    return ("code", text.strip("\n"))


def intro(title: str, summary: str) -> Cell:
    return md(f"# {title}\n\n{summary.strip()}\n\n### Configuration\n{ENV_TABLE}")


QUICKSTART: list[Cell] = [
    intro(
        "01 · Quickstart: an agent that remembers",
        """
A LangGraph chat agent with **long-term memory across threads** in a few lines: the
memory store and the checkpointer both live in Postgres (an embedded Postgres 18 +
pgvector when no server is configured), and the prebuilt graph
`langgraph_memory.graphs.build_graph` runs `summarize → retrieve → inject → respond → extract`.
""",
    ),
    code(
        SETUP
        + """
from langgraph_memory.graphs import build_graph
from langgraph_memory.checkpoint.postgres import PostgresSaver
from langgraph_memory.embedded import default_dsn
from langgraph_memory.offline import default_chat_model
from langgraph_memory.store.postgres import PostgresMemoryStore

dsn = default_dsn()  # $LANGGRAPH_MEMORY_POSTGRES_URI, else the embedded Postgres
model = default_chat_model()  # ChatOpenAI when OPENAI_API_KEY is set, else None
print("model:", model if model is not None else
      "offline mode: rule-based extractor and templated responder, not an LLM")
"""
    ),
    md("Open the store and the checkpointer (both idempotent `setup()`), then build the agent."),
    code(
        """
resources = contextlib.ExitStack()
store = resources.enter_context(PostgresMemoryStore.from_conn_string(dsn))
print(store.setup())
checkpointer = resources.enter_context(PostgresSaver.from_conn_string(dsn))
checkpointer.setup()

agent = build_graph(model, store=store, checkpointer=checkpointer)
user_id = f"quickstart-{uuid.uuid4().hex[:6]}"  # a fresh user per run
"""
    ),
    md("**Thread 1**: the user introduces themselves. The `extract` node stores memories."),
    code(
        """
first = {"configurable": {"user_id": user_id, "thread_id": f"{user_id}-1"}}
for text in ["Hi, my name is Zhang San.", "I live in Berlin.", "I work at Acme Robotics."]:
    state = agent.invoke({"messages": [("user", text)]}, first)
    print(f"user:      {text}\\nassistant: {state['messages'][-1].content}")
    print("           memory report:", state["memory_report"]["counts"], "\\n")
"""
    ),
    md("**Thread 2** is a brand-new conversation: the answer comes from long-term memory."),
    code(
        """
second = {"configurable": {"user_id": user_id, "thread_id": f"{user_id}-2"}}
state = agent.invoke({"messages": [("user", "What's my name?")]}, second)
answer = state["messages"][-1].content
print(answer)
if model is None:  # the offline responder is deterministic
    assert "Zhang San" in answer
"""
    ),
    md("What the store holds for this user, and what the checkpointer holds per thread:"),
    code(
        """
for item in store.search(("memories", user_id)):
    value = item.value
    print(f"[{value['kind']:>10}] importance {value['importance']}: {value['content']}")

for config in (first, second):
    messages = agent.get_state(config).values["messages"]
    print(config["configurable"]["thread_id"], "->", len(messages), "messages in the checkpoint")
"""
    ),
    md("Clean up: erase the user (memories, embeddings, history) and close the connections."),
    code(
        """
print("erased", store.forget(("memories", user_id)), "memories")
resources.close()
"""
    ),
]

NODES: list[Cell] = [
    intro(
        "02 · Adding memory nodes to an existing graph",
        """
You already have a LangGraph app. Adding memory means adding nodes from
`langgraph_memory.nodes` around your model node and passing `store=` (and a
`checkpointer=`) to `compile()`. Your node does not change. Identity (`user_id`,
`thread_id`) comes from the config (or the runtime context).
""",
    ),
    code(
        SETUP
        + """
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph_memory.embedded import default_dsn
from langgraph_memory.offline import TemplatedResponder, default_chat_model
from langgraph_memory.store.postgres import PostgresMemoryStore

llm = default_chat_model()
model = llm or TemplatedResponder()  # offline: templated responder, not an LLM
print("model:", type(model).__name__)
"""
    ),
    md("### Your existing graph\nOne node that calls the model on the conversation."),
    code(
        """
def chatbot(state):
    return {"messages": [model.invoke(state["messages"])]}

builder = StateGraph(MessagesState)
builder.add_node("chatbot", chatbot)
builder.add_edge(START, "chatbot")
builder.add_edge("chatbot", END)
plain = builder.compile()
print(plain.invoke({"messages": [("user", "What's my name?")]})["messages"][-1].content)
"""
    ),
    md(
        """
### The same graph with memory
`retrieve → inject → chatbot → extract`. `MemoryState` is `MessagesState` plus the keys the
memory nodes use. `inject` puts one `<memory>…</memory>` system message in front of the
conversation (replaced each turn, never piled up).
"""
    ),
    code(
        """
from langgraph_memory.nodes import ExtractNode, InjectNode, MemoryState, RetrieveNode

builder = StateGraph(MemoryState)
builder.add_node("retrieve", RetrieveNode(token_budget=300))
builder.add_node("inject", InjectNode())
builder.add_node("chatbot", chatbot)  # unchanged
builder.add_node("extract", ExtractNode(model=llm))  # llm=None: rule-based extractor
builder.add_edge(START, "retrieve")
builder.add_edge("retrieve", "inject")
builder.add_edge("inject", "chatbot")
builder.add_edge("chatbot", "extract")
builder.add_edge("extract", END)

resources = contextlib.ExitStack()
store = resources.enter_context(PostgresMemoryStore.from_conn_string(default_dsn()))
store.setup()
graph = builder.compile(store=store)
user_id = f"nodes-{uuid.uuid4().hex[:6]}"
"""
    ),
    code(
        """
config = {"configurable": {"user_id": user_id, "thread_id": "a"}}
state = graph.invoke({"messages": [("user", "My name is Zhang San and I love green tea.")]}, config)
print(state["memory_report"]["counts"])

config = {"configurable": {"user_id": user_id, "thread_id": "b"}}
state = graph.invoke({"messages": [("user", "What's my name?")]}, config)
block = next(m for m in state["messages"] if m.type == "system")
print(block.content)
print("->", state["messages"][-1].content)
if llm is None:
    assert "Zhang San" in state["messages"][-1].content
"""
    ),
    md(
        """
Memories are per user: another `user_id` sees none of them.
"""
    ),
    code(
        """
other = {"configurable": {"user_id": user_id + "-other", "thread_id": "c"}}
state = graph.invoke({"messages": [("user", "What's my name?")]}, other)
print(state["messages"][-1].content)
assert state["memories"] == []
store.forget(("memories", user_id))
resources.close()
"""
    ),
]

CHECKPOINTERS: list[Cell] = [
    intro(
        "03 · Checkpointers for multi-worker deployments",
        """
With several workers (uvicorn/gunicorn workers, Celery, k8s replicas) a user's next turn
can land on any of them. `InMemorySaver` loses the thread there; the Redis and Postgres
savers keep it, and the **per-thread lease** (`with_thread_lease`) makes sure two workers
never run the same `thread_id` at once, with fencing tokens that reject late writes.

This notebook needs a Redis server (`LANGGRAPH_MEMORY_REDIS_URL`, default
`redis://127.0.0.1:6379/0`; plain Redis ≥ 6.2 or Valkey, no modules). Postgres is
`LANGGRAPH_MEMORY_POSTGRES_URI`, else the embedded one.
""",
    ),
    code(
        SETUP
        + """
from langgraph_memory.graphs import build_graph
from langgraph.store.memory import InMemoryStore
from langgraph_memory.checkpoint.postgres import PostgresSaver
from langgraph_memory.checkpoint.redis import RedisSaver
from langgraph_memory.embedded import default_dsn
from langgraph_memory.errors import StaleWriteError, ThreadBusyError
from langgraph_memory.lease import FENCE_CONFIG_KEY, with_thread_lease
from langgraph_memory.offline import default_chat_model

REDIS_URL = os.environ.get("LANGGRAPH_MEMORY_REDIS_URL", "redis://127.0.0.1:6379/0")
POSTGRES_URI = default_dsn()  # $LANGGRAPH_MEMORY_POSTGRES_URI, else embedded
model = default_chat_model()
prefix = f"nb03-{uuid.uuid4().hex[:6]}"  # a private key prefix for this run
thread = {"configurable": {"thread_id": "support-42", "user_id": "u42"}}
"""
    ),
    md(
        """
### Two workers, one Redis
Each "worker" has its own connection and its own compiled graph, as separate processes
would. Worker A serves turn 1, worker B serves turn 2 of the same thread and sees turn 1.
"""
    ),
    code(
        """
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
"""
    ),
    md(
        """
### Leases: one run per thread at a time
`with_thread_lease(graph, strategy="reject")` raises `ThreadBusyError` when another worker
holds the thread (`strategy="wait"` waits, bounded). Here worker B holds the lease by hand.
"""
    ),
    code(
        """
leased_a = with_thread_lease(worker_a, strategy="reject", ttl=10)
leases_b = saver_b.lease_backend()
held = leases_b.try_acquire("support-42", "worker-b", 10.0)
try:
    leased_a.invoke({"messages": [("user", "Any news?")]}, thread)
except ThreadBusyError as exc:
    print("worker A was refused:", exc)
leases_b.release(held)
state = leased_a.invoke({"messages": [("user", "Any news?")]}, thread)
print("after release, worker A ran the turn:", len(state["messages"]), "messages")
"""
    ),
    md(
        """
### Fencing: a late write from a worker that lost its lease is rejected
Every acquisition increments the thread's fencing token; a write carrying an older token
raises `StaleWriteError` and writes nothing.
"""
    ),
    code(
        """
old = leases_b.try_acquire("support-42", "worker-b", 10.0)
leases_b.release(old)
newer = leases_b.try_acquire("support-42", "worker-c", 10.0)  # someone else took over
stale = {"configurable": {**thread["configurable"], FENCE_CONFIG_KEY: old.token}}
try:
    worker_b.invoke({"messages": [("user", "late write")]}, stale)
except StaleWriteError as exc:
    print("rejected:", exc)
leases_b.release(newer)
saver_a.delete_thread("support-42")
"""
    ),
    md(
        """
### Postgres: the same, plus `copy_thread` and `prune`
Our `PostgresSaver` uses the official schema, a correctly configured pool
(`autocommit`, `dict_row`, `prepare_threshold` for PgBouncer) and no instance lock.
"""
    ),
    code(
        """
pg = resources.enter_context(PostgresSaver.from_conn_string(POSTGRES_URI))
pg.setup()
agent = build_graph(model, store=store, checkpointer=pg)
pg_thread = {"configurable": {"thread_id": f"{prefix}-pg", "user_id": "u42"}}
for text in ["Hi!", "I live in Berlin.", "Thanks."]:
    agent.invoke({"messages": [("user", text)]}, pg_thread)

def count(thread_id):
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
"""
    ),
]

LONG_TERM: list[Cell] = [
    intro(
        "04 · Long-term memory: hybrid search, validity, forgetting, erasure",
        """
`PostgresMemoryStore` is a LangGraph `BaseStore` built for memory: hybrid lexical +
vector search with recency/importance scoring, validity intervals with `as_of` queries,
audit history, decay-based forgetting and complete per-user erasure. Without pgvector it
switches to exact vector search automatically (`setup()` reports which).
""",
    ),
    code(
        SETUP
        + """
from datetime import datetime, timedelta, timezone

from langgraph_memory.store.postgres import DecayConfig, PostgresMemoryStore, acting_as

resources = contextlib.ExitStack()
store = resources.enter_context(PostgresMemoryStore.from_conn_string(None))  # env or embedded
print(store.setup())
user = ("memories", f"ltm-{uuid.uuid4().hex[:6]}")
"""
    ),
    md("Memories are JSON values with `content`, `kind` and `importance` (plus any fields)."),
    code(
        """
with acting_as("notebook"):  # the actor recorded in the audit history
    store.put(user, "name", {"content": "User's name is Zhang San.", "kind": "semantic",
                             "importance": 8})
    store.put(user, "project", {"content": "Works on project NIGHTJAR-7, the billing migration.",
                                "kind": "episodic", "importance": 6})
    store.put(user, "drink", {"content": "Prefers green tea over coffee.", "kind": "preference",
                              "importance": 4})
    store.put(user, "city", {"content": "Lives in Berlin.", "kind": "semantic", "importance": 7,
                             "valid_from": "2024-05-01T00:00:00+00:00"})
"""
    ),
    md(
        """
### Hybrid search
Lexical search finds exact tokens (code words, numbers) that embeddings miss; vector
search finds paraphrases. Both are fused, then recency and importance are added. A query
that names a date, month or year ("what did I cook on 3 May 2025?", "... in July 2025?")
also prefers memories whose `valid_from` falls in that period (`RetrievalConfig`
`time_match_weight`).
"""
    ),
    code(
        """
for query in ["NIGHTJAR-7", "which hot drink should I offer?", "where is home?"]:
    top = store.search(user, query=query, limit=1)[0]
    print(f"{query!r:35} -> {top.value['content']}  (score {top.score:.3f})")
assert store.search(user, query="NIGHTJAR-7", limit=1)[0].key == "project"  # exact token
assert store.search(user, query="which hot drink should I offer?", limit=1)[0].key == "drink"
"""
    ),
    md(
        """
### Explaining a recall
`search(..., explain=True)` returns each result's score broken into its terms — lexical,
vector, recency, importance, access and time match (each its factor times its
`RetrievalConfig` weight) — which add up to the score. `RetrieveNode(explain=True)` (or a
`logging.Logger`) logs them for the memories it injects, and
`langgraph-memory inspect --user ID --query "..."` prints them as a table.
"""
    ),
    code(
        """
import logging

for hit in store.search(user, query="where is home?", limit=3, explain=True):
    terms = hit.explanation.contributions()
    print(f"{hit.key:8}", "  ".join(f"{k} {v:.3f}" for k, v in terms.items()),
          f"= {hit.score:.3f}")
    assert abs(sum(terms.values()) - hit.score) < 1e-9

from langgraph_memory.nodes import RetrieveNode

recall_log = logging.getLogger("notebook.recall")
recall_log.setLevel(logging.INFO)
recall_log.addHandler(logging.StreamHandler(sys.stdout))
recall_log.propagate = False
retrieve = RetrieveNode(store=store, explain=recall_log, token_budget=60)
picked = retrieve.invoke({"messages": [("user", "where is home?")]},
                         config={"configurable": {"user_id": user[1]}})
assert picked["memories"], "nothing recalled"
"""
    ),
    md("Filters: `$eq $ne $gt $gte $lt $lte $in $nin $exists $and $or`, typed comparisons."),
    code(
        """
print([i.key for i in store.search(user, filter={"importance": {"$gte": 7}})])
print([i.key for i in store.search(user, filter={"kind": {"$in": ["preference", "episodic"]}})])
"""
    ),
    md(
        """
### Validity: facts change, history stays
The user moved. The old fact is **invalidated** (not deleted); search returns what is
valid now, and `as_of=` answers what was true then.
"""
    ),
    code(
        """
moved = datetime(2025, 9, 1, tzinfo=timezone.utc)
with acting_as("notebook"):
    store.invalidate(user, "city", at=moved)
    store.put(user, "city-2", {"content": "Lives in Lisbon.", "kind": "semantic", "importance": 7,
                               "valid_from": moved.isoformat()})
now = store.search(user, query="where does the user live", limit=1)[0]
then = store.search(user, query="where does the user live", limit=1,
                    as_of=datetime(2025, 1, 1, tzinfo=timezone.utc))[0]
print("now:        ", now.value["content"])
print("on 2025-01-01:", then.value["content"])
assert (now.key, then.key) == ("city-2", "city")
for entry in store.history(user, "city"):
    print(entry.at.isoformat(timespec="seconds"), entry.action, entry.actor, entry.new_text)
"""
    ),
    md(
        """
### Forgetting
`forget_decayed` retires memories whose value (importance × recency decay × access) fell
below a threshold — here with a tiny half-life so the demo does not have to wait weeks.
"""
    ),
    code(
        """
import time

decay = DecayConfig(threshold=0.5, half_life=timedelta(seconds=1), min_age=timedelta(0),
                    mode="invalidate", kinds=("preference",))
time.sleep(3)  # three half-lives without access
retired = store.forget_decayed(user, config=decay)
print("retired:", retired, "->", [i.key for i in store.search(user)])
assert "drink" not in [i.key for i in store.search(user)]
"""
    ),
    md(
        """
### Erasure ("forget me")
`forget(prefix)` removes the user's items, embeddings, history and anything derived from
them, in one transaction.
"""
    ),
    code(
        """
print("erased:", store.forget(user))
assert store.search(user, include_invalid=True) == []
assert store.history(user, "city") == []
resources.close()
"""
    ),
]

SUMMARY: list[Cell] = [
    intro(
        "05 · Summarisation: keeping long threads small",
        """
`SummarizeNode` keeps the last turns verbatim and folds everything older into a running
summary once the conversation passes a fraction of a token budget. Folded messages are
removed from state, so checkpoints stop growing. An `AIMessage` with tool calls and its
`ToolMessage`s are never split. Offline the summary is extractive; with a model it is
written by the model.
""",
    ),
    code(
        SETUP
        + """
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph_memory.nodes import SummarizeNode, group_units
from langgraph_memory.offline import default_chat_model

model = default_chat_model()
"""
    ),
    md("A conversation with a tool call in the middle:"),
    code(
        """
messages = []
for i in range(6):
    messages += [HumanMessage(f"Question {i}: tell me about city number {i} " * 3, id=f"h{i}"),
                 AIMessage(f"Answer {i}: city number {i} is lovely in spring. " * 3, id=f"a{i}")]
messages[7:7] = [
    AIMessage("", id="call", tool_calls=[{"name": "weather", "args": {"city": "Kyoto"},
                                           "id": "t1", "type": "tool_call"}]),
    ToolMessage("Sunny, 21°C", tool_call_id="t1", id="tool"),
]
print(len(messages), "messages in", len(group_units(messages)), "units")
"""
    ),
    code(
        """
node = SummarizeNode(model=model, max_tokens=300, keep_turns=2)
update = node.invoke({"messages": messages})
removed = {m.id for m in update["messages"] if m.type == "remove"}
print(f"folded {len(removed)} of {len(messages)} messages")
print("summary:", update["summary"][:300])
assert ("call" in removed) == ("tool" in removed)  # the tool-call unit stays together
"""
    ),
    md("In a graph: the agent's checkpoint stays bounded however long the thread gets."),
    code(
        """
from langgraph_memory.graphs import build_graph
from langgraph_memory.checkpoint.postgres import PostgresSaver
from langgraph_memory.embedded import default_dsn
from langgraph_memory.store.postgres import PostgresMemoryStore

resources = contextlib.ExitStack()
store = resources.enter_context(PostgresMemoryStore.from_conn_string(default_dsn()))
store.setup()
saver = resources.enter_context(PostgresSaver.from_conn_string(default_dsn()))
saver.setup()
agent = build_graph(model, store=store, checkpointer=saver, max_tokens=300, keep_turns=2)
user_id = f"summary-{uuid.uuid4().hex[:6]}"
config = {"configurable": {"user_id": user_id, "thread_id": user_id}}
sizes = []
for i in range(8):
    text = f"Turn {i}: I'm planning day {i} of my trip and want to see temples and gardens."
    state = agent.invoke({"messages": [("user", text)]}, config)
    sizes.append(len(state["messages"]))
print("messages in the checkpoint after each turn:", sizes)
print("summary:", state.get("summary", "")[:300])
assert max(sizes) < 2 * 8  # without the summariser it would be 16
store.forget(("memories", user_id))
saver.delete_thread(user_id)
resources.close()
"""
    ),
]

BENCHMARKS: list[Cell] = [
    intro(
        "06 · Benchmarks with plots (small sizes)",
        """
The repository's `bench/` package compares our savers and store side by side in one
process (ratios, not absolute times) and measures LoCoMo retrieval quality. This notebook
runs small versions through the same runner as `langgraph-memory bench --quick` and
plots them. A benchmark whose service is missing is reported as skipped, not hidden.
`python -m bench.<name>` (or `langgraph-memory bench`) runs the full sizes.

Benchmark services: `LANGGRAPH_MEMORY_BENCH_REDIS_URL` (default `redis://127.0.0.1:6379/0`),
`LANGGRAPH_MEMORY_BENCH_POSTGRES_URI` (default `postgresql://postgres@127.0.0.1:5432/postgres`,
temporary databases are created and dropped); LoCoMo data: `LANGGRAPH_MEMORY_LOCOMO_DIR`
(default `../shared/data/locomo-dev` beside the repository).
""",
    ),
    code(
        SETUP
        + """
import tempfile

from IPython.display import Image, display
from langgraph_memory.cli.bench import render, run_benchmarks
from langgraph_memory.cli.plots import plot_results, plottable
"""
    ),
    md(
        """
Checkpointers: a 2-node graph on every saver, interleaved, ratios to `InMemorySaver`.
LoCoMo: one conversation, 30 questions. The BM25 baselines run in seconds; add
`"ours-pgvector"` to `retrievers` to score our store's hybrid search (it embeds every
turn with the offline e5 model: a few minutes on 2 cores).
"""
    ),
    code(
        """
locomo_retrievers = ["bm25-plain", "bm25-stemmed"]
results = run_benchmarks(
    ["checkpointers", "locomo"],
    quick=True,
    options={"locomo": {"retrievers": locomo_retrievers}},
)
print(render(results))
"""
    ),
    code(
        """
data = [r.as_dict() for r in results]
if plottable(data):
    path = plot_results(data, Path(tempfile.mkdtemp()) / "bench.png")
    display(Image(filename=str(path)))
else:
    print("nothing to plot:", [r.error for r in results])
"""
    ),
]

NOTEBOOKS: dict[str, list[Cell]] = {
    "01_quickstart": QUICKSTART,
    "02_memory_nodes": NODES,
    "03_checkpointers": CHECKPOINTERS,
    "04_long_term_memory": LONG_TERM,
    "05_summarisation": SUMMARY,
    "06_benchmarks": BENCHMARKS,
}


def build(name: str, cells: list[Cell]) -> nbformat.NotebookNode:
    """One notebook from its cells (no outputs)."""
    notebook = new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.metadata["language_info"] = {"name": "python"}
    notebook.cells = [
        new_markdown_cell(text) if kind == "md" else new_code_cell(text) for kind, text in cells
    ]
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"{name[:2]}-{index:02d}"
    return notebook


def main(argv: list[str] | None = None) -> int:
    """Write every notebook next to this script."""
    names = argv if argv else list(NOTEBOOKS)
    for name in names:
        notebook = build(name, NOTEBOOKS[name])
        nbformat.validate(notebook)
        path = HERE / f"{name}.ipynb"
        nbformat.write(notebook, path)
        print(f"wrote {path.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
