"""Source of notebooks/04_long_term_memory.ipynb (generate it: python notebooks/build.py)."""

# ruff: noqa: E402  (a notebook imports where it first needs a name)

# %% [markdown]
# # 04 · Long-term memory: hybrid search, validity, forgetting, erasure
#
# `PostgresMemoryStore` is a LangGraph `BaseStore` built for memory: hybrid lexical +
# vector search with recency/importance scoring, validity intervals with `as_of` queries,
# audit history, decay-based forgetting and complete per-user erasure. Without pgvector it
# switches to exact vector search automatically (`setup()` reports which).
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
import sys
import uuid
from datetime import datetime, timedelta, timezone

from langgraph_recall.nodes import user_namespace
from langgraph_recall.store.postgres import (
    DecayConfig,
    ExplainedSearchItem,
    PostgresMemoryStore,
    acting_as,
)

resources = contextlib.ExitStack()
store = resources.enter_context(PostgresMemoryStore.from_conn_string(None))  # env or embedded
print(store.setup())
user_id = f"ltm-{uuid.uuid4().hex[:6]}"
user = user_namespace(user_id)  # ("memories", "user_id:ltm-..."): where the nodes look

# %% [markdown]
# Memories are JSON values with `content`, `kind` and `importance` (plus any fields).

# %%
with acting_as("notebook"):  # the actor recorded in the audit history
    store.put(
        user, "name", {"content": "User's name is Zhang San.", "kind": "semantic", "importance": 8}
    )
    store.put(
        user,
        "project",
        {
            "content": "Works on project NIGHTJAR-7, the billing migration.",
            "kind": "episodic",
            "importance": 6,
        },
    )
    store.put(
        user,
        "drink",
        {"content": "Prefers green tea over coffee.", "kind": "preference", "importance": 4},
    )
    store.put(
        user,
        "city",
        {
            "content": "Lives in Berlin.",
            "kind": "semantic",
            "importance": 7,
            "valid_from": "2024-05-01T00:00:00+00:00",
        },
    )

# %% [markdown]
# ### Hybrid search
# Lexical search finds exact tokens (code words, numbers) that embeddings miss; vector
# search finds paraphrases. Both are fused, then recency and importance are added. A query
# that names a date, month or year ("what did I cook on 3 May 2025?", "... in July 2025?")
# also prefers memories whose `valid_from` falls in that period (`RetrievalConfig`
# `time_match_weight`).

# %%
for query in ["NIGHTJAR-7", "which hot drink should I offer?", "where is home?"]:
    top = store.search(user, query=query, limit=1)[0]
    print(f"{query!r:35} -> {top.value['content']}  (score {top.score:.3f})")
assert store.search(user, query="NIGHTJAR-7", limit=1)[0].key == "project"  # exact token
assert store.search(user, query="which hot drink should I offer?", limit=1)[0].key == "drink"

# %% [markdown]
# ### Explaining a recall
# `search(..., explain=True)` returns each result's score broken into its terms — lexical,
# vector, recency, importance, access and time match (each its factor times its
# `RetrievalConfig` weight), and update (a newer memory that states a change, lifted above
# an older one) — which add up to the score. `RetrieveNode(explain=True)` (or a
# `logging.Logger`) logs them for the memories it injects, and
# `langgraph-recall inspect --user ID --query "..."` prints them as a table.

# %%
import logging

for hit in store.search(user, query="where is home?", limit=3, explain=True):
    assert isinstance(hit, ExplainedSearchItem)
    assert hit.explanation is not None and hit.score is not None
    terms = hit.explanation.contributions()
    print(f"{hit.key:8}", "  ".join(f"{k} {v:.3f}" for k, v in terms.items()), f"= {hit.score:.3f}")
    assert abs(sum(terms.values()) - hit.score) < 1e-9

from langgraph_recall.nodes import RetrieveNode

recall_log = logging.getLogger("notebook.recall")
recall_log.setLevel(logging.INFO)
recall_log.addHandler(logging.StreamHandler(sys.stdout))
recall_log.propagate = False
retrieve = RetrieveNode(store=store, explain=recall_log, token_budget=60)
picked = retrieve.invoke(
    {"messages": [("user", "where is home?")]}, config={"configurable": {"user_id": user_id}}
)
assert picked["memories"], "nothing recalled"

# %% [markdown]
# Filters: `$eq $ne $gt $gte $lt $lte $in $nin $exists $and $or`, typed comparisons.

# %%
print([i.key for i in store.search(user, filter={"importance": {"$gte": 7}})])
print([i.key for i in store.search(user, filter={"kind": {"$in": ["preference", "episodic"]}})])

# %% [markdown]
# ### Validity: facts change, history stays
# The user moved. The old fact is **invalidated** (not deleted); search returns what is
# valid now, and `as_of=` answers what was true then.

# %%
moved = datetime(2025, 9, 1, tzinfo=timezone.utc)
with acting_as("notebook"):
    store.invalidate(user, "city", at=moved)
    store.put(
        user,
        "city-2",
        {
            "content": "Lives in Lisbon.",
            "kind": "semantic",
            "importance": 7,
            "valid_from": moved.isoformat(),
        },
    )
now = store.search(user, query="where does the user live", limit=1)[0]
then = store.search(
    user, query="where does the user live", limit=1, as_of=datetime(2025, 1, 1, tzinfo=timezone.utc)
)[0]
print("now:        ", now.value["content"])
print("on 2025-01-01:", then.value["content"])
assert (now.key, then.key) == ("city-2", "city")
for entry in store.history(user, "city"):
    print(entry.at.isoformat(timespec="seconds"), entry.action, entry.actor, entry.new_text)

# %% [markdown]
# ### Forgetting
# `forget_decayed` retires memories whose value (importance × recency decay × access) fell
# below a threshold — here with a tiny half-life so the demo does not have to wait weeks.

# %%
import time

decay = DecayConfig(
    threshold=0.5,
    half_life=timedelta(seconds=1),
    min_age=timedelta(0),
    mode="invalidate",
    kinds=("preference",),
)
time.sleep(3)  # three half-lives without access
retired = store.forget_decayed(user, config=decay)
print("retired:", retired, "->", [i.key for i in store.search(user)])
assert "drink" not in [i.key for i in store.search(user)]

# %% [markdown]
# ### Erasure ("forget me")
# `forget(prefix)` removes the user's items, embeddings, history and anything derived from
# them, in one transaction.

# %%
print("erased:", store.forget(user))
assert store.search(user, include_invalid=True) == []
assert store.history(user, "city") == []
resources.close()
