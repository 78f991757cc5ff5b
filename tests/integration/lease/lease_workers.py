"""Helpers for the multi-worker lease tests: real uvicorn worker processes and a client.

``start_workers`` launches N separate ``uvicorn graphs.server:app`` processes on free
loopback ports (one process each, so the test controls routing: every request goes
to a randomly chosen worker, like a load balancer without sticky sessions).
``run_conversations`` drives many threads concurrently, the turns of one thread
strictly one after another.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Workers:
    """Running worker processes: their base URLs and log files."""

    urls: list[str]
    processes: list[subprocess.Popen[bytes]]
    logs: list[Path]

    def log_tail(self) -> str:
        return "\n".join(f"--- {p}\n{p.read_text()[-2000:]}" for p in self.logs)


@contextmanager
def start_workers(
    count: int,
    env: Mapping[str, str],
    log_dir: Path,
    *,
    uvicorn_workers: int = 1,
    startup_timeout: float = 60.0,
) -> Iterator[Workers]:
    """Start ``count`` uvicorn processes serving ``graphs.server:app`` with ``env``."""
    log_dir.mkdir(parents=True, exist_ok=True)
    full_env = {**os.environ, **env, "PYTHONPATH": str(REPO_ROOT)}
    processes: list[subprocess.Popen[bytes]] = []
    urls: list[str] = []
    logs: list[Path] = []
    try:
        for index in range(count):
            port = free_port()
            log = log_dir / f"worker-{index}-{port}.log"
            handle = log.open("wb")
            command = [sys.executable, "-m", "uvicorn", "graphs.server:app"]
            command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
            # the clients' pooled connections expire after httpx's 5 s; uvicorn's default
            # keep-alive is 5 s too, so on a loaded machine a client could send on a
            # connection the server was closing (httpx.ReadError): the server keeps it longer
            command += ["--timeout-keep-alive", "30"]
            if uvicorn_workers > 1:
                command += ["--workers", str(uvicorn_workers)]
            processes.append(
                subprocess.Popen(
                    command,
                    cwd=REPO_ROOT,
                    env=full_env,
                    stdout=handle,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
            urls.append(f"http://127.0.0.1:{port}")
            logs.append(log)
        workers = Workers(urls=urls, processes=processes, logs=logs)
        deadline = time.monotonic() + startup_timeout
        pending = set(urls)
        while pending:
            for url in list(pending):
                try:
                    if httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200:
                        pending.discard(url)
                except httpx.HTTPError:
                    pass
            if any(p.poll() is not None for p in processes):
                raise RuntimeError("a worker exited during startup:\n" + workers.log_tail())
            if time.monotonic() > deadline:
                raise RuntimeError("workers did not start in time:\n" + workers.log_tail())
            if pending:
                time.sleep(0.2)
        yield workers
    finally:
        for process in processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def expected_conversation(thread_id: str, turns: int) -> list[dict[str, Any]]:
    """The conversation a thread must end with when no turn was lost."""
    messages: list[dict[str, Any]] = []
    for turn in range(1, turns + 1):
        text = f"{thread_id} message {turn}"
        messages.append({"role": "human", "content": text})
        messages.append({"role": "ai", "content": f"[turn {turn}] you said: {text}"})
    return messages


@dataclass
class ConversationRun:
    """What the client saw: each thread's final-turn reply and the workers it hit."""

    last_reply: dict[str, dict[str, Any]] = field(default_factory=dict)
    workers_per_thread: dict[str, set[int]] = field(default_factory=dict)
    statuses: list[int] = field(default_factory=list)

    def lost_turns(self, thread_id: str, turns: int) -> int:
        """Turns missing from the conversation the last turn's worker answered with."""
        messages = self.last_reply[thread_id]["messages"]
        return turns - sum(1 for m in messages if m["role"] == "human")


def run_conversations(
    urls: list[str], *, threads: int, turns: int, seed: int, prefix: str = "chat"
) -> ConversationRun:
    """Drive ``threads`` conversations of ``turns`` turns, each turn to a random worker."""
    rng = random.Random(seed)
    routes = {f"{prefix}-{t}": [rng.choice(urls) for _ in range(turns)] for t in range(threads)}
    run = ConversationRun()

    async def converse(client: httpx.AsyncClient, thread_id: str) -> None:
        for turn, url in enumerate(routes[thread_id], start=1):
            response = await client.post(
                f"{url}/threads/{thread_id}/turns",
                json={"message": f"{thread_id} message {turn}"},
            )
            run.statuses.append(response.status_code)
            response.raise_for_status()
            body = response.json()
            run.workers_per_thread.setdefault(thread_id, set()).add(body["worker"])
            run.last_reply[thread_id] = body

    async def main() -> None:
        limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
        async with httpx.AsyncClient(timeout=60.0, limits=limits) as client:
            await asyncio.gather(*(converse(client, thread_id) for thread_id in routes))

    asyncio.run(main())
    return run
