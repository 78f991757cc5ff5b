"""Memory-node overhead per turn, model time excluded (the offline graph).

Runs the same scripted conversation (memorable facts, questions, small talk; a new
thread every 8 turns, one user) through:

* a plain one-node graph on ``InMemorySaver`` (the floor),
* ``langgraph_recall.graphs.build_graph`` (summarize → retrieve → inject → respond → extract) on
  ``InMemoryStore`` + ``InMemorySaver``,
* the same agent on our ``PostgresMemoryStore`` (PG, exact vector search, a hashing
  embedder) + our ``PostgresSaver`` in a fresh temporary database,

interleaving the configurations round by round so load hits all alike, and prints the
median / p95 per turn and the ratio to the floor. To compare two checkouts in the same
time window, run this file from each (``PYTHONPATH=<checkout> python bench/nodes.py``).

Run::

    python -m langgraph_recall.bench.nodes                 # 5 rounds of 40 turns
    python -m langgraph_recall.bench.nodes --rounds 3 --turns 20 --json out.json
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import time
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.memory import InMemoryStore

from langgraph_recall.bench._common import format_table, median, percentile, temp_database
from langgraph_recall.bench.progress import OnProgress, Progress, print_progress

__all__ = ["HashEmbeddings", "main", "run"]

TEXTS = [
    "My name is Zhang San.",
    "I live in Berlin.",
    "What's my name?",
    "ok thanks",
    "I work at Acme as a data engineer.",
    "Which city am I in?",
    "I moved to Lisbon.",
    "I like green tea.",
]


class HashEmbeddings(Embeddings):
    """Deterministic bag-of-words hashing vectors (no model time in the figures)."""

    def __init__(self, dims: int = 64) -> None:
        self.dims = dims

    def _one(self, text: str) -> list[float]:
        vector = [0.0] * self.dims
        for word in text.lower().split():
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            vector[int.from_bytes(digest, "little") % self.dims] += 1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def _plain() -> Any:
    def reply(state: MessagesState) -> dict[str, Any]:
        return {"messages": [("assistant", "ok")]}

    builder = StateGraph(MessagesState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    return builder.compile(checkpointer=InMemorySaver())


@contextlib.contextmanager
def _agents() -> Iterator[dict[str, Any]]:
    from langgraph_recall.checkpoint.postgres import PostgresSaver
    from langgraph_recall.graphs import build_graph
    from langgraph_recall.store.postgres import PostgresMemoryStore

    with (
        temp_database() as dsn,
        PostgresMemoryStore.from_conn_string(
            dsn, index={"dims": 64, "embed": HashEmbeddings(64)}
        ) as store,
        PostgresSaver.from_conn_string(dsn) as saver,
    ):
        store.setup()
        saver.setup()
        yield {
            "plain graph (floor)": _plain(),
            "memory_agent, InMemoryStore": build_graph(
                None, store=InMemoryStore(), checkpointer=InMemorySaver()
            ),
            "memory_agent, PostgresMemoryStore": build_graph(None, store=store, checkpointer=saver),
        }


def _turns(graph: Any, round_no: int, turns: int) -> list[float]:
    samples = []
    for turn in range(turns):
        config = {
            "configurable": {"user_id": "bench-user", "thread_id": f"r{round_no}-t{turn // 8}"}
        }
        started = time.perf_counter()
        graph.invoke({"messages": [("user", TEXTS[turn % len(TEXTS)])]}, config)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def run(rounds: int = 5, turns: int = 40, progress: OnProgress = print_progress) -> dict[str, Any]:
    """Per-turn samples (ms) per configuration; the first round is a warm-up."""
    samples: dict[str, list[float]] = {}
    with _agents() as graphs:
        names = list(graphs)
        for round_no in range(rounds + 1):
            order = names[round_no % len(names) :] + names[: round_no % len(names)]
            for name in order:
                taken = _turns(graphs[name], round_no, turns)
                if round_no:
                    samples.setdefault(name, []).extend(taken)
            progress(Progress("rounds", round_no, rounds))
    floor = median(samples[names[0]])
    return {
        name: {
            "median_ms": median(values),
            "p95_ms": percentile(values, 0.95),
            "x_floor": median(values) / floor,
            "turns": len(values),
        }
        for name, values in samples.items()
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--json", default=None, help="write the results as JSON")
    args = parser.parse_args(argv)
    results = run(args.rounds, args.turns)
    rows = [
        [name, f"{r['median_ms']:.2f}", f"{r['p95_ms']:.2f}", f"{r['x_floor']:.1f}x"]
        for name, r in results.items()
    ]
    print(format_table(["configuration", "median ms/turn", "p95 ms/turn", "x floor"], rows))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
