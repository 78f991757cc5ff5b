"""The LoCoMo harness runs end to end through our store on a slice of one conversation."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from langgraph_recall.bench import locomo
from langgraph_recall.bench.progress import Progress
from tests.conftest import locomo_dir
from tests.fakes import HashingEmbeddings

pytestmark = [pytest.mark.embedded, pytest.mark.slow]


def _data_dir() -> Path:
    data_dir = locomo_dir()
    return data_dir


def test_loader_reads_turns_sessions_and_questions() -> None:
    conversation = locomo.load_conversations(_data_dir())[0]
    assert conversation.turns and conversation.questions
    first = conversation.turns[0]
    assert first.previous is None and first.when is not None and first.when.tzinfo is not None
    assert conversation.turns[1].previous == first.content
    assert first.content.startswith(f"{first.speaker}: ")
    turn_ids = {t.dia_id for t in conversation.turns}
    assert all(q.category in locomo.CATEGORIES for q in conversation.questions)
    found = sum(e in turn_ids for q in conversation.questions for e in q.evidence)
    assert found >= 0.95 * sum(len(q.evidence) for q in conversation.questions)


def test_question_scores() -> None:
    ranked = ["D1:1", "D1:2", "D1:3", "D1:4", "D1:5", "D1:6", "D1:7"]
    assert locomo.question_scores(ranked, ["D1:2", "D1:7"]) == (0.5, 1.0, 0.5)
    assert locomo.question_scores(ranked, ["D9:9"]) == (0.0, 0.0, 0.0)


def _slice(conversation: locomo.Conversation, sessions: int) -> locomo.Conversation:
    """The first ``sessions`` sessions and the questions whose evidence lies in them."""
    turns = tuple(t for t in conversation.turns if t.session <= sessions)
    ids = {t.dia_id for t in turns}
    questions = tuple(q for q in conversation.questions if set(q.evidence) <= ids)
    return locomo.Conversation(conversation.sample_id, turns, questions)


def test_benchmark_slice_through_our_store_beats_plain_bm25(
    embedded_dsn: str, tmp_path: Path
) -> None:
    conversation = _slice(locomo.load_conversations(_data_dir())[0], sessions=6)
    assert len(conversation.questions) >= 20
    events: list[Progress] = []
    report = locomo.run(
        retrievers=("ours-pgvector", "bm25-plain"),
        conversations=[conversation],
        pgvector_database=lambda: contextlib.nullcontext(embedded_dsn),
        ingest_turns=0,  # the cost comparison has its own test below
        progress=events.append,
    )
    n = len(conversation.questions)
    ours, bm25 = report.results
    assert ours.error is None, ours.error
    assert bm25.error is None, bm25.error
    assert report.questions == n and ours.overall.n == n and bm25.overall.n == n
    for result in (ours, bm25):
        scores = result.overall
        assert 0.0 <= scores.recall_at_5 <= scores.recall_at_10 <= 100.0
        assert 0.0 <= scores.mrr <= 100.0
        assert sum(s.n for s in result.by_category.values()) == n
    assert ours.overall.recall_at_10 > 0.0
    assert ours.overall.recall_at_10 >= bm25.overall.recall_at_10
    assert ours.overall.recall_at_5 >= bm25.overall.recall_at_5
    assert any("ours-pgvector" in event.stage for event in events)
    table = locomo.format_report(report)
    assert "ours-pgvector" in table and "bm25-plain" in table
    out = tmp_path / "locomo.json"
    out.write_text(json.dumps(report.to_json()))
    assert json.loads(out.read_text())["results"][0]["name"] == "ours-pgvector"


def test_the_store_without_entity_links_runs_beside_the_store_with_them(
    embedded_dsn: str,
) -> None:
    """``ours-exact-unlinked`` (no links written, weight 0) answers the same questions as
    ``ours-exact`` in the same run: the before/after rows of the entity links."""
    conversation = _slice(locomo.load_conversations(_data_dir())[0], sessions=6)
    report = locomo.run(
        retrievers=("ours-exact", "ours-exact-unlinked"),
        conversations=[conversation],
        embeddings=HashingEmbeddings(384),
        dims=384,
        exact_dsn=embedded_dsn,
        ingest_turns=0,
        progress=lambda _: None,
    )
    plain, linked = report.results
    assert plain.error is None and linked.error is None, (plain.error, linked.error)
    assert plain.overall.n == linked.overall.n == len(conversation.questions)
    assert 0.0 < linked.overall.recall_at_10 <= 100.0
    assert "ours-exact-unlinked" in locomo.format_report(report)


def test_episodic_path_ingests_faster_than_the_loader_with_one_short_text_per_memory(
    embedded_dsn: str,
) -> None:
    """The bench's ingest comparison on a few turns: both paths write every turn; the
    episodic path embeds one text per memory (each turn once), the loader two."""
    conversation = locomo.load_conversations(_data_dir())[0]
    speeds = {
        s.path: s
        for s in locomo.measure_ingest(
            conversation,
            HashingEmbeddings(384),
            384,
            lambda: contextlib.nullcontext(embedded_dsn),
            turns=24,
            episodes=locomo.episode_config(2, 2),
            rounds=2,
        )
    }
    loader, episodic = speeds["loader"], speeds["episodic"]
    assert loader.memories == episodic.memories == 48
    assert loader.texts_per_memory >= 1.9  # whole text and content, each memory
    assert episodic.texts_per_memory <= 1.0  # each turn once
    assert episodic.chars_embedded * 2 < loader.chars_embedded
    assert episodic.embed_calls <= loader.embed_calls
    # entity links cost no embedding: the same texts as the episodic path without them
    unlinked = speeds["episodic-unlinked"]
    assert unlinked.memories == 48
    assert (unlinked.texts_embedded, unlinked.chars_embedded) == (
        episodic.texts_embedded,
        episodic.chars_embedded,
    )


def test_the_bench_writes_through_ingest_history(embedded_dsn: str) -> None:
    """The store retrievers get their memories from the package's episodic path: values
    carry the episode fields (``turn_id``, ``source``) and the turns around as context."""
    conversation = _slice(locomo.load_conversations(_data_dir())[0], sessions=1)
    with contextlib.ExitStack() as stack:
        retriever = locomo._make_retriever(
            "ours-pgvector",
            stack,
            HashingEmbeddings(384),
            384,
            "",
            lambda: contextlib.nullcontext(embedded_dsn),
        )
        assert isinstance(retriever, locomo.EpisodicRetriever)
        retriever.index(conversation)
        items = retriever.store.search(retriever._namespace, limit=1000)
    assert len(items) == len(conversation.turns)
    by_turn = {item.value["turn_id"]: item.value for item in items}
    second = conversation.turns[1]
    value = by_turn[second.dia_id]
    assert value["source"] == {"by": "ingest_history"} and value["kind"] == "episodic"
    assert value["context"].split("\n") == [
        conversation.turns[0].content,
        conversation.turns[2].content,
        conversation.turns[3].content,
    ]
