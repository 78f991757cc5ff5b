"""``langgraph-recall bench locomo-qa``: the QA benchmark through the CLI, on scripted models
(the only stand-in: the OpenAI-compatible model factory) and the real Postgres store."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from langgraph_recall.bench import locomo_qa
from langgraph_recall.cli import build_parser, main
from langgraph_recall.cli._console import Console
from langgraph_recall.cli.bench import cmd_bench
from langgraph_recall.offline import ScriptedChatModel
from tests.integration.bench.qa_scripts import MINI, Judge, Script, mini_conversation

pytestmark = [pytest.mark.postgres]


def test_bench_locomo_qa_without_a_model_says_what_to_set(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["bench", "locomo-qa", "--data", str(MINI)]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err
    assert main(["bench", "locomo-qa", "store"]) == 2  # it runs alone
    assert "on its own" in capsys.readouterr().err


def test_bench_locomo_qa_prints_scores_and_costs(
    postgres_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script, judge = Script(mini_conversation()), Judge()
    models = {
        "answerer": ScriptedChatModel(default=script),
        "grader": ScriptedChatModel(default=judge),
    }
    asked: list[Any] = []

    def scripted_model(name: str | None, *, env: Any = None) -> tuple[Any, str]:
        asked.append(name)
        chosen = name or "answerer"
        return models[chosen], chosen

    monkeypatch.setattr(locomo_qa, "openai_model", scripted_model)
    out_json = tmp_path / "qa.json"
    args = build_parser().parse_args(
        [
            "bench",
            "locomo-qa",
            "--data",
            str(MINI),
            "--judge-model",
            "grader",
            "--postgres",
            postgres_dsn,
            "--cache",
            str(tmp_path / "cache.jsonl"),
            "--token-budget",
            "40",
            "--json",
            str(out_json),
        ]
    )
    out = io.StringIO()
    assert cmd_bench(args, Console(out, color=False)) == 0
    text = out.getvalue()
    assert asked == [None, "grader"]
    assert "LoCoMo QA: 1 conversation(s), 9 questions, model answerer, judge grader" in text
    assert "scores" in text and "costs" in text and "nothing is measured without one" in text
    for column in ("J", "F1", "BLEU-1", "c2 temporal J (n)", "tokens injected / answer"):
        assert column in text
    [bench] = json.loads(out_json.read_text())["benches"]
    methods = {m["name"]: m for m in bench["raw"]["methods"]}
    assert set(methods) == {"memory", "full-context"}
    assert methods["full-context"]["overall"]["j"] == pytest.approx(100 * 5 / 9)
    assert methods["memory"]["ingest_turns"] == 13 and judge.calls > 0
    assert script.calls["extract"] == len(locomo_qa.turn_groups(mini_conversation()))
