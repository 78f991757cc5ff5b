"""The ``langgraph-recall`` console script end to end, as a user runs it (subprocesses).

One offline demo run on the embedded Postgres in a temporary ``LANGGRAPH_RECALL_HOME``
feeds the other tests: ``inspect`` shows that user's memories and history, ``forget``
erases them and the user's conversation threads (``inspect`` then shows nothing), and
``bench --quick`` prints a table.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.embedded, pytest.mark.slow]

USER = "cli-test-user"


def _command() -> list[str]:
    script = Path(sys.executable).parent / "langgraph-recall"
    if script.exists():
        return [str(script)]
    found = shutil.which("langgraph-recall")
    return [found] if found else [sys.executable, "-m", "langgraph_recall.cli"]


@dataclass
class Cli:
    home: Path

    def run(self, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("OPENAI_API_KEY", "LANGGRAPH_RECALL_POSTGRES_URI", "NO_COLOR")
        }
        env["LANGGRAPH_RECALL_HOME"] = str(self.home)
        return subprocess.run(
            [*_command(), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


@pytest.fixture(scope="module")
def cli(embedded_server: Any) -> Iterator[Cli]:
    """The CLI on the test session's embedded Postgres (the subprocesses attach to it)."""
    yield Cli(Path(embedded_server.home))


@pytest.fixture(scope="module")
def demo_output(cli: Cli) -> str:
    done = cli.run("demo", "--user", USER)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_demo_says_it_is_offline(demo_output: str) -> None:
    assert "offline mode: rule-based extractor and templated responder, not an LLM" in demo_output
    assert "embedded Postgres in" in demo_output


def test_demo_recalls_across_threads(demo_output: str) -> None:
    recall = demo_output.split("cross-thread recall", 1)[1]
    assert "NEW thread" in demo_output.split("cross-thread recall", 1)[0].splitlines()[-1]
    assert re.search(r"user: What's my name\?\nassistant: Your name is Zhang San", recall)
    assert "assistant: You live in Berlin (from memory)." in recall.split("Session 3")[0]


def test_demo_supersedes_the_old_fact(demo_output: str) -> None:
    move = demo_output.split("an update supersedes a fact", 1)[1].split("Temporal query")[0]
    assert "user: I moved to Lisbon." in move
    assert "memory: 1 added, 1 superseded" in move
    assert "assistant: You live in Lisbon (from memory)." in move
    assert "superseded, not deleted: 'User lives in Berlin.'" in move


def test_demo_answers_as_of_before_the_move(demo_output: str) -> None:
    temporal = demo_output.split("store.search(as_of=...)", 1)[1]
    assert re.search(r"as_of \d\d:\d\d:\d\d \(before the move\): User lives in Berlin\.", temporal)
    assert re.search(r"now:\s+User lives in Lisbon\.", temporal)


def test_demo_summariser_folds_the_long_thread(demo_output: str) -> None:
    folds = re.findall(r"summariser folded old turns: (\d+) -> (\d+) messages", demo_output)
    assert folds, demo_output
    assert all(int(after) < int(before) for before, after in folds)
    assert "running summary: " in demo_output
    assert re.search(r"demo finished in \d+\.\ds", demo_output)


def test_inspect_then_forget_erases_the_user(cli: Cli, demo_output: str) -> None:
    shown = cli.run("inspect", "--user", USER)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert re.search(r"(\d+) memories: (\d+) valid, 1 superseded", out)
    berlin = next(line for line in out.splitlines() if "User lives in Berlin." in line)
    assert "semantic" in berlin and "(valid)" not in berlin  # has an invalid_at
    lisbon = next(line for line in out.splitlines() if "User lives in Lisbon." in line)
    assert "(valid)" in lisbon
    assert "History (oldest first)" in out
    threads = re.search(r"conversation threads: (.+)", out).group(1)  # type: ignore[union-attr]
    for name in ("intro", "recall", "move", "trip"):
        assert f"{USER}:{name} (" in threads
    assert re.search(r"invalidate\s+by extract_memories\s+User lives in Berlin\.", out)

    refused = cli.run("forget", "--user", USER)  # no --yes and no terminal
    assert refused.returncode == 1 and "--yes" in refused.stdout + refused.stderr
    count = int(re.search(r"(\d+) memories:", out).group(1))  # type: ignore[union-attr]
    erased = cli.run("forget", "--user", USER, "--yes")
    assert erased.returncode == 0, erased.stderr
    assert f"erased {count} memories" in erased.stdout
    assert re.search(r"deleted 4 conversation threads \(\d+ checkpoints\)", erased.stdout)

    after = cli.run("inspect", "--user", USER)
    assert after.returncode == 0
    assert f"no memories for user '{USER}'" in after.stdout
    assert "conversation threads: none" in after.stdout


@pytest.mark.redis
@pytest.mark.postgres
def test_bench_quick_prints_a_table(cli: Cli, tmp_path: Path, redis_url: str) -> None:
    results = tmp_path / "bench.json"
    done = cli.run("bench", "checkpointers", "--quick", "--json", str(results))
    assert done.returncode == 0, done.stdout + done.stderr
    table = done.stdout.split("== Results", 1)[1]
    assert "saver" in table and "x memory" in table
    memory_row = next(line for line in table.splitlines() if line.split()[:1] == ["InMemorySaver"])
    assert "1.000" in memory_row  # the floor is 1.0x itself
    assert "RedisSaver (ours)" in table
    assert results.is_file() and '"checkpointers"' in results.read_text()
