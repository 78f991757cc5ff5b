"""Source of notebooks/06_benchmarks.ipynb (generate it: python notebooks/build.py)."""

# %% [markdown]
# # 06 · Benchmarks with plots (small sizes)
#
# The package's benchmarks (`langgraph_recall.bench`) compare our savers and store side by
# side in one process (ratios, not absolute times) and measure LoCoMo retrieval quality.
# This notebook runs small versions through the same runner as `langgraph-recall bench
# --quick` and plots them. A benchmark whose service is missing is reported as skipped, not hidden.
# `langgraph-recall bench` (or `python -m langgraph_recall.bench.<name>`) runs the full sizes.
#
# Benchmark services: `LANGGRAPH_RECALL_BENCH_REDIS_URL` (default `redis://127.0.0.1:6379/0`),
# `LANGGRAPH_RECALL_BENCH_POSTGRES_URI` (default `postgresql://postgres@127.0.0.1:5432/postgres`,
# temporary databases are created and dropped); LoCoMo data (not shipped: see
# `docs/benchmarks.md` for the download): the folder named by `LANGGRAPH_RECALL_LOCOMO_DIR`.
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
import tempfile
from pathlib import Path

from IPython.display import Image, display

from langgraph_recall.cli.bench import render, run_benchmarks
from langgraph_recall.cli.plots import plot_results, plottable

# %% [markdown]
# Checkpointers: a 2-node graph on every saver, interleaved, ratios to `InMemorySaver`.
# LoCoMo: one conversation, 30 questions. The BM25 baselines run in seconds; add
# `"ours-pgvector"` to `retrievers` to score our store's hybrid search (it embeds every
# turn with the offline e5 model: a few minutes on 2 cores).

# %%
locomo_retrievers = ["bm25-plain", "bm25-stemmed"]
results = run_benchmarks(
    ["checkpointers", "locomo"],
    quick=True,
    options={"locomo": {"retrievers": locomo_retrievers}},
)
print(render(results))

# %%
data = [r.as_dict() for r in results]
if plottable(data):
    path = plot_results(data, Path(tempfile.mkdtemp()) / "bench.png")
    display(Image(filename=str(path)))
else:
    print("nothing to plot:", [r.error for r in results])
