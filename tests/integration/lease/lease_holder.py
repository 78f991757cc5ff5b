"""A worker that takes a thread's lease, starts a long run, and waits to be SIGKILLed.

Usage: ``python -m tests.integration.lease.lease_holder KIND URL PREFIX THREAD_ID TTL``. Prints
``RUNNING <token>`` once the graph is inside its node (the lease is held).
"""

from __future__ import annotations

import sys
import time
from typing import Any

from langchain_core.runnables import RunnableConfig

from langgraph_recall.lease import FENCE_CONFIG_KEY, with_thread_lease
from tests.integration.lease.conftest import SaverFactory
from tests.integration.lease.lease_graphs import LogState, build_log_graph


def main(kind: str, url: str, prefix: str, thread_id: str, ttl: float) -> None:
    def hang(state: LogState, config: RunnableConfig) -> dict[str, Any]:
        print("RUNNING", config["configurable"][FENCE_CONFIG_KEY], flush=True)
        time.sleep(600)
        return {"log": ["never"]}

    with SaverFactory(kind, url, prefix).sync() as saver:
        graph = with_thread_lease(build_log_graph(saver, hang), ttl=ttl)
        graph.invoke({"log": []}, {"configurable": {"thread_id": thread_id}})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))
