"""LoCoMo is read from the folder the user names (``--data DIR``, then
``$LANGGRAPH_RECALL_LOCOMO_DIR``), in the upstream release layout or one conversation per
file; without it, the error says how to download it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_recall.bench import _qa_data, locomo
from langgraph_recall.bench._data import LOCOMO_ENV, locomo_data_dir
from langgraph_recall.cli import main
from langgraph_recall.errors import BenchmarkDataError, LangGraphRecallError
from tests._hypothesis import thorough


def conversation(name: str) -> dict[str, Any]:
    """A two-session conversation in LoCoMo's own layout."""
    return {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": f"Hi Ben, I am {name}."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Hi! How was Lisbon?"},
        ],
        "session_2_date_time": "10:04 am on 20 June, 2023",
        "session_2": [{"speaker": "Ana", "dia_id": "D2:1", "text": "I adopted a dog."}],
    }


def qa() -> list[dict[str, Any]]:
    return [
        {"question": "Who is Ana?", "answer": "a painter", "category": 4, "evidence": ["D1:1"]},
        {"question": "When?", "answer": "June 2023", "category": 2, "evidence": ["D2:1"]},
        {"question": "Adversarial", "category": 5, "evidence": ["D1:2"]},
    ]


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOCOMO_ENV, raising=False)
    monkeypatch.setattr("langgraph_recall.bench._data._CHECKOUT_DATA", Path("/nonexistent"))


def test_the_upstream_release_file_is_read_as_its_conversations(tmp_path: Path) -> None:
    samples = [
        {"sample_id": f"conv-{n}", "conversation": conversation(f"n{n}"), "qa": qa()}
        for n in (26, 30)
    ]
    (tmp_path / "locomo10.json").write_text(json.dumps(samples))
    loaded = locomo.load_conversations(tmp_path)
    assert [c.sample_id for c in loaded] == ["conv-26", "conv-30"]
    assert [t.dia_id for t in loaded[0].turns] == ["D1:1", "D1:2", "D2:1"]
    assert loaded[1].turns[0].content == "Ana: Hi Ben, I am n30."
    assert [q.category for q in loaded[0].questions] == [4, 2]  # category 5 has no evidence use
    with_answers = _qa_data.load_qa_conversations(tmp_path)
    assert [q.answer for q in with_answers[0].questions] == ["a painter", "June 2023"]
    assert with_answers[0].speakers == ("Ana", "Ben")


def test_one_conversation_per_file_keeps_the_file_names(tmp_path: Path) -> None:
    (tmp_path / "26.json").write_text(json.dumps({**conversation("a"), "qa": qa()}))
    (tmp_path / "41.json").write_text(
        json.dumps({"sample_id": "conv-41", "conversation": conversation("b"), "qa": qa()})
    )
    assert [c.sample_id for c in locomo.load_conversations(tmp_path)] == ["conv-26", "conv-41"]
    assert locomo.load_conversation(tmp_path / "41.json").sample_id == "conv-41"


def test_the_given_folder_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given, env = tmp_path / "given", tmp_path / "env"
    for folder in (given, env):
        folder.mkdir()
        (folder / "c.json").write_text(json.dumps(conversation(folder.name)))
    monkeypatch.setenv(LOCOMO_ENV, str(env))
    assert locomo_data_dir() == env
    assert locomo_data_dir(given) == given
    assert locomo.load_conversations()[0].turns[0].text == "Hi Ben, I am env."


@pytest.mark.usefixtures("no_env")
@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda root: None, "no LoCoMo data given"),
        (lambda root: root / "missing", "does not exist"),
        (lambda root: root, "no LoCoMo conversations (*.json)"),
    ],
)
def test_without_data_the_error_says_how_to_download_it(
    tmp_path: Path, make: Any, says: str
) -> None:
    with pytest.raises(BenchmarkDataError) as raised:
        locomo.load_conversations(make(tmp_path))
    message = str(raised.value)
    assert says in message
    assert "snap-research/locomo" in message and "locomo10.json" in message
    assert "--data" in message and LOCOMO_ENV in message
    assert isinstance(raised.value, LangGraphRecallError)
    assert isinstance(raised.value, FileNotFoundError)


@pytest.mark.usefixtures("no_env")
def test_the_cli_passes_data_and_reports_the_download(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``bench locomo`` without data fails with the instructions (no benchmark is run)."""
    assert main(["bench", "locomo", "--quick"]) == 1
    printed = capsys.readouterr()
    assert "BenchmarkDataError" in printed.out and "locomo10.json" in printed.out
    assert main(["bench", "locomo", "--quick", "--data", str(tmp_path / "none")]) == 1
    assert f"{tmp_path / 'none'}" in capsys.readouterr().out


@given(
    names=st.lists(st.integers(0, 999), min_size=1, max_size=5, unique=True),
    upstream=st.booleans(),
)
@settings(max_examples=thorough(25), deadline=None)
def test_both_layouts_load_the_same_conversations(
    tmp_path_factory: pytest.TempPathFactory, names: list[int], upstream: bool
) -> None:
    """The same conversations, as one upstream release file or one file each, load alike."""
    folder = tmp_path_factory.mktemp("locomo")
    samples = [
        {"sample_id": f"conv-{n}", "conversation": conversation(f"n{n}"), "qa": qa()} for n in names
    ]
    if upstream:
        (folder / "locomo10.json").write_text(json.dumps(samples))
    else:
        for n, sample in zip(names, samples, strict=True):
            (folder / f"{n:04d}.json").write_text(json.dumps(sample))
    loaded = locomo.load_conversations(folder)
    expected = names if upstream else sorted(names)
    assert [c.sample_id for c in loaded] == [f"conv-{n}" for n in expected]
    assert [c.turns[0].text for c in loaded] == [f"Hi Ben, I am n{n}." for n in expected]


def test_the_vector_baseline_indexes_a_chat_that_repeats_a_message() -> None:
    """LangGraph's InMemoryStore refuses a batch whose puts share a text; a chat saying
    "Thanks!" twice is still indexed whole and searched."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from langgraph_recall.bench._locomo_data import Conversation, Turn
    from langgraph_recall.bench._locomo_retrievers import InMemoryVectorRetriever

    said = ["Thanks!", "I moved to Porto.", "Thanks!", "We adopted a cat."]
    turns = tuple(Turn(f"D1:{n}", "Ann", text, 1, None, None) for n, text in enumerate(said))
    retriever = InMemoryVectorRetriever(DeterministicFakeEmbedding(size=16), 16)
    retriever.index(Conversation("c1", turns, ()))
    assert sorted(retriever.search("Thanks!", 10)) == [t.dia_id for t in turns]
