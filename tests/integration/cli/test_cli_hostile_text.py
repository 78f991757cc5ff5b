"""Untrusted text is neutralised before a terminal: the real ``langgraph-recall`` console
script (a subprocess, its raw stdout) on a real Postgres store holding a memory full of
terminal controls — ESC sequences that clear the screen and move the cursor, a C1 CSI, a
bell, backspaces, a carriage return and a line break that would forge an ``OK`` line, a
bidi override. ``inspect`` (table, ``--history``, ``--query``) prints every one of them as
a visible escape and none raw."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from langgraph_recall._internal.terminal import is_dangerous, printable
from langgraph_recall.cli._backends import open_store

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

HOSTILE = "tea\x1b[2J\x1b[1;1H\x9b31m\u202egnp.exe\x07\x08\x08\r\nOK erased everything\x1b]0;x\x07"
UPDATED = "coffee\x1b[8m hidden \x1b[0m\u2066x\u2069"


def _cli(*args: str) -> str:
    script = Path(sys.executable).parent / "langgraph-recall"
    command = [str(script)] if script.exists() else [shutil.which("langgraph-recall") or ""]
    env = {k: v for k, v in os.environ.items() if k != "LANGGRAPH_RECALL_POSTGRES_URI"}
    env.pop("NO_COLOR", None)
    done = subprocess.run([*command, *args], env=env, capture_output=True, timeout=240, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout.decode("utf-8")


def test_inspect_shows_every_control_of_a_stored_memory_as_an_escape(postgres_dsn: str) -> None:
    with open_store(postgres_dsn) as store:  # the CLI's own store on this database
        store.put(("memories", "user_id:u1"), "evil", {"content": HOSTILE, "kind": "semantic"})
        store.put(("memories", "user_id:u1"), "evil", {"content": UPDATED, "kind": "semantic"})
        store.put(("memories", "user_id:u1"), "tea", {"content": "User drinks tea\x1b[2J."})
    outputs = {
        "table": _cli("inspect", "--user", "u1", "--postgres", postgres_dsn),
        "query": _cli("inspect", "--user", "u1", "--postgres", postgres_dsn, "--query", "tea"),
    }
    for name, out in outputs.items():
        assert not [ch for ch in out if is_dangerous(ch) and ch != "\n"], name
        assert "\\x1b[2J" in out, name  # shown, visibly
        assert not any(line.startswith("OK erased") for line in out.splitlines()), name
    table = outputs["table"]
    assert "\\x1b[8m hidden \\x1b[0m\\u2066x\\u2069" in table  # the current text
    assert "\\x9b31m\\u202egnp.exe\\x07\\x08\\x08" in table  # the history's old text
    assert printable("\x1b") == "\\x1b"
