"""Every Python block of README.md runs, as written, from the installed wheel.

The wheel is installed into a fresh virtualenv with the README's own install line; each
script runs there with ``python -c`` from an empty temporary directory (so nothing of the
repository can be imported), offline (no API key), against a fresh database of the real
Postgres (``LANGGRAPH_RECALL_POSTGRES_URI``) and the real Redis
(``LANGGRAPH_RECALL_REDIS_URL``). What a block says it prints (``print(...)  # TEXT``) must
be printed. The server block runs against ``langgraph dev`` serving the README's own
``langgraph.json``. Conventions: ``tests/integration/packaging/_readme.py``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import psycopg
import pytest

from tests.integration.packaging._readme import Script, parse_readme
from tests.integration.packaging._venv import ROOT, InstalledVenv, langgraph_dev, server_env

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]


def run_script(venv: InstalledVenv, script: Script, cwd: Path, env: dict[str, str]) -> str:
    result = subprocess.run(
        [str(venv.python), "-c", script.code],
        cwd=cwd,
        env=server_env(env),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, (
        f"README block at line {script.line} failed:\n{result.stdout[-2000:]}\n"
        f"{result.stderr[-4000:]}"
    )
    printed = result.stdout
    position = 0
    for text in script.expected:
        found = printed.find(text, position)
        assert found >= 0, f"README block at line {script.line}: {text!r} not in\n{printed}"
        position = found + len(text)
    return printed


def test_readme_python_blocks_run_from_the_installed_wheel(
    installed_venv: InstalledVenv, postgres_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    readme = parse_readme((ROOT / "README.md").read_text())
    workdir = tmp_path / "user-project"
    workdir.mkdir()
    for name, content in readme.files.items():
        (workdir / name).write_text(content)
    env = {
        "LANGGRAPH_RECALL_POSTGRES_URI": postgres_dsn,
        "LANGGRAPH_RECALL_REDIS_URL": redis_url,
        "LANGGRAPH_RECALL_HOME": str(tmp_path / "home"),
    }
    where = run_script(
        installed_venv,
        Script("import langgraph_recall; print(langgraph_recall.__file__)", 0),
        workdir,
        env,
    )
    assert where.startswith(str(installed_venv.root)), where  # the wheel, not the checkout

    for script in (s for s in readme.scripts if not s.needs_server):
        run_script(installed_venv, script, workdir, env)
    served = [s for s in readme.scripts if s.needs_server]
    assert served, "the README shows no LangGraph server call"
    with langgraph_dev(installed_venv, workdir, env, tmp_path) as url:
        for script in served:
            code = script.code.replace("http://127.0.0.1:2024", url)
            run_script(
                installed_venv, Script(code, script.line, expected=script.expected), workdir, env
            )

    with psycopg.connect(postgres_dsn) as conn:  # the server kept its data in our tables
        threads = conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()
        users = conn.execute("SELECT DISTINCT ns FROM lgm_memory_items ORDER BY ns").fetchall()
    assert threads is not None and threads[0] >= 6  # 2 create_agent + 2 build_graph + 2 server
    assert len(users) >= 3, users
