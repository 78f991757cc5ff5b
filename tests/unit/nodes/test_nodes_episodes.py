"""Episodic memory: planning (windows, budgets, dedup, PII), the extract node's episodes,
retrieval that blends facts and episodes, bulk ingestion, turn-composed embeddings, and the
node defects found on the way (which store a node writes to, the store's default TTL, bad
``remember`` importances).

Hypothesis drives random conversations and budgets through the planner and the blend."""

from __future__ import annotations

import importlib
import math
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.base import Op, PutOp, Result
from langgraph.store.memory import InMemoryStore

from langgraph_recall import episodes as episodes_pkg
from langgraph_recall import forget_user
from langgraph_recall._memory.blend import blend_within_budget
from langgraph_recall._memory.messages import count_tokens, memory_line
from langgraph_recall.episodes import (
    EpisodeConfig,
    EpisodeTurn,
    TurnEmbeddings,
    ingest_history,
    plan_episodes,
)
from langgraph_recall.episodes._plan import episode_key, to_turns, word_count
from langgraph_recall.errors import ConfigurationError, InvalidValueError
from langgraph_recall.extraction import RuleBasedExtractor
from langgraph_recall.extraction.pii import PIIFilter
from langgraph_recall.middleware import MemoryMiddleware
from langgraph_recall.nodes import (
    DEFAULT_NAMESPACE,
    SUMMARY_BLOCK_ID,
    ExtractNode,
    MemoryState,
    ReflectNode,
    RetrieveNode,
    SummarizeNode,
    create_memory_tools,
)
from langgraph_recall.nodes.tools import _refusal
from langgraph_recall.offline import tool_call_message
from tests._hypothesis import thorough
from tests.docexamples import examples, package_modules

CONFIG: Any = {"configurable": {"user_id": "u1", "thread_id": "t1"}}
NS = ("memories", "user_id:u1")


class RecordingStore(InMemoryStore):
    """An InMemoryStore that records every op it is given (and may carry a TTL config)."""

    def __init__(self, ttl: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.ttl_config = ttl  # type: ignore[assignment]
        self.ops: list[Op] = []

    def batch(self, ops: Any) -> list[Result]:
        ops = list(ops)
        self.ops.extend(ops)
        return super().batch(ops)

    async def abatch(self, ops: Any) -> list[Result]:
        ops = list(ops)
        self.ops.extend(ops)
        return await super().abatch(ops)

    def puts(self, kind: str | None = None) -> list[PutOp]:
        """The memory writes (the thread registry's link left out)."""
        return [
            op
            for op in self.ops
            if isinstance(op, PutOp)
            and op.namespace == NS
            and op.value is not None
            and (kind is None or op.value.get("kind") == kind)
        ]


def _episodes(store: InMemoryStore, namespace: tuple[str, ...] = NS) -> list[Any]:
    return store.search(namespace, filter={"kind": "episodic"}, limit=1000)


# -- 0. node defects ---------------------------------------------------------------------------
def test_extract_from_summarize_writes_to_the_extract_nodes_own_store() -> None:
    own, graph_store = InMemoryStore(), InMemoryStore()
    extract = ExtractNode(store=own)
    builder = StateGraph(MemoryState)
    builder.add_node(SummarizeNode(max_tokens=60, keep_turns=1, extract=extract))
    builder.add_edge(START, "summarize_conversation")
    graph = builder.compile(store=graph_store)
    long = " ".join(["I live in Oslo and I work at Acme as a baker."] * 4)
    messages = [
        HumanMessage(long, id="h1"),
        AIMessage("ok " * 40, id="a1"),
        HumanMessage("thanks", id="h2"),
    ]
    graph.invoke({"messages": messages}, CONFIG)
    assert own.search(NS), "the overflow's facts go to the extract node's store="
    assert not graph_store.search(NS)


def test_a_summarys_overflow_makes_facts_but_no_new_episodes() -> None:
    store = InMemoryStore()
    extract = ExtractNode(store=store, episodes=EpisodeConfig())
    long = " ".join(["I live in Oslo and I work at Acme as a baker."] * 4)
    state = {"messages": [HumanMessage(long, id="h1"), AIMessage("ok " * 40, id="a1")]}
    extract.invoke(state, CONFIG)
    (episode,) = _episodes(store)
    builder = StateGraph(MemoryState)
    builder.add_node(SummarizeNode(max_tokens=60, keep_turns=1, extract=extract))
    builder.add_edge(START, "summarize_conversation")
    messages = [*state["messages"], HumanMessage("thanks", id="h2")]
    out = builder.compile(store=store).invoke({"messages": messages}, CONFIG)
    assert any(m.id == SUMMARY_BLOCK_ID for m in out["messages"])  # the first turn was folded
    folded = extract.last_report
    assert folded is not None and folded.status == "written" and folded.episodes == 0
    assert [e.value for e in _episodes(store)] == [episode.value]  # not rewritten


def test_extract_without_a_store_uses_the_graphs() -> None:
    graph_store = InMemoryStore()
    builder = StateGraph(MemoryState)
    builder.add_node(ExtractNode())
    builder.add_edge(START, "extract_memories")
    builder.compile(store=graph_store).invoke(
        {"messages": [("user", "My name is Zhang San.")]}, CONFIG
    )
    assert graph_store.search(NS)


@pytest.mark.parametrize("ttl", [None, 90.0])
def test_node_writes_get_the_stores_default_ttl(ttl: float | None) -> None:
    store = RecordingStore({"default_ttl": ttl} if ttl is not None else None)
    ExtractNode(store=store, episodes=EpisodeConfig()).invoke(
        {"messages": [("user", "My name is Zhang San and I live in Oslo.")]}, CONFIG
    )
    written = store.puts()
    assert {op.value["kind"] for op in written} >= {"episodic"}
    assert len(written) >= 2
    assert all(op.ttl == ttl for op in written)
    store.ops.clear()
    ReflectNode(store=store, threshold=1).invoke({"messages": []}, CONFIG)
    reflections = store.puts("reflection")
    assert reflections and all(op.ttl == ttl for op in reflections)


def test_an_episode_ttl_wins_over_the_stores_default() -> None:
    store = RecordingStore({"default_ttl": 90.0})
    ExtractNode(store=store, episodes=EpisodeConfig(ttl=15.0)).invoke(
        {"messages": [("user", "My name is Zhang San and I live in Oslo.")]}, CONFIG
    )
    assert [op.ttl for op in store.puts("episodic")] == [15.0]
    assert all(op.ttl == 90.0 for op in store.puts() if op.value["kind"] != "episodic")


def test_remember_with_the_default_ttl() -> None:
    store = RecordingStore({"default_ttl": 30.0})
    out = _tool_graph(store).invoke(
        {"messages": [tool_call_message("remember", {"content": "User likes tea."})]}, CONFIG
    )
    assert str(out["messages"][-1].content).startswith("Remembered")
    assert [op.ttl for op in store.puts()] == [30.0]


def _tool_graph(store: InMemoryStore) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(create_memory_tools()))
    builder.add_edge(START, "tools")
    return builder.compile(store=store)


@pytest.mark.parametrize(
    "importance", [float("nan"), float("inf"), -float("inf"), 1e300, 10**400, 0, 11, -5, 2.5]
)
def test_remember_refuses_bad_importance_and_writes_nothing(importance: Any) -> None:
    store = InMemoryStore()
    call = tool_call_message("remember", {"content": "User likes tea.", "importance": importance})
    reply = str(_tool_graph(store).invoke({"messages": [call]}, CONFIG)["messages"][-1].content)
    assert reply.startswith("Not stored: importance must be a whole number from 1 to 10")
    assert store.search(NS) == []


@given(
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(min_value=-(10**500), max_value=10**500),
        st.booleans(),
        st.text(max_size=5),
        st.none(),
    )
)
def test_bad_importance_never_raises_and_accepts_exactly_1_to_10(value: Any) -> None:
    refusal = _refusal("remember", {"importance": value})
    whole = (
        not isinstance(value, bool)
        and isinstance(value, (int, float))
        and (not isinstance(value, float) or (math.isfinite(value) and value.is_integer()))
        and 1 <= value <= 10
    )
    assert (refusal is None) == whole
    if refusal is not None:
        assert refusal.startswith("Not stored:") and len(refusal) < 200


# -- 1. planning -------------------------------------------------------------------------------
TEXTS = st.text(alphabet="abc xyz.", min_size=0, max_size=120)


@st.composite
def conversations(draw: st.DrawFn) -> list[EpisodeTurn]:
    turns = []
    for number in range(draw(st.integers(0, 25))):
        turns.append(
            EpisodeTurn(
                draw(TEXTS),
                draw(st.sampled_from(["user", "assistant"])),
                draw(st.sampled_from([None, "Ann", "Bob"])),
                draw(st.sampled_from([None, f"d{number}", "dup"])),
                draw(st.sampled_from(["s1", "s2"])),
            )
        )
    return turns


@settings(max_examples=thorough(200), deadline=None)
@given(
    conversations(),
    st.integers(0, 4),
    st.integers(0, 3),
    st.integers(0, 400),
    st.integers(20, 200),
)
def test_plan_keeps_budgets_sessions_and_one_memory_per_turn(
    turns: list[EpisodeTurn], before: int, after: int, budget: int, turn_chars: int
) -> None:
    config = EpisodeConfig(
        roles=("user", "assistant"),
        context_before=before,
        context_after=after,
        max_context_chars=budget,
        max_turn_chars=turn_chars,
        min_words=1,
    )
    plan = plan_episodes(turns, config)
    keys = [e.key for e in plan.episodes]
    kept = {episode_key(t) for t in turns if word_count(t.text) >= 1}  # punctuation is no word
    assert len(keys) == len(set(keys)) == len(kept)
    assert len(plan.episodes) + plan.duplicates + plan.skipped <= len(turns)
    contents = {}
    for turn in turns:
        contents.setdefault(turn.session, set()).add(
            f"{turn.label}: {' '.join(turn.text.split())[:turn_chars]}".rstrip()
        )
    for episode in plan.episodes:
        value = episode.value
        assert value["kind"] == "episodic"
        context = value.get("context", "")
        assert len(context) <= budget
        lines = context.split("\n") if context else []
        assert len(lines) <= before + after
        assert len(value["content"]) <= turn_chars + len(value["speaker"]) + 2


def test_plan_windows_stay_in_their_session_and_follow_the_budget() -> None:
    turns = [
        EpisodeTurn("first session ends here", speaker="Ann", session="1"),
        EpisodeTurn("I adopted a puppy named Luna", speaker="Ann", session="2"),
        EpisodeTurn("That is wonderful news", speaker="Bob", session="2"),
        EpisodeTurn("She loves the beach", speaker="Ann", session="2"),
    ]
    config = EpisodeConfig(roles=("user",), context_before=2, context_after=1)
    plan = plan_episodes(turns, config)
    by_content = {e.value["content"]: e.value for e in plan.episodes}
    assert "context" not in by_content["Ann: first session ends here"]
    assert by_content["Ann: I adopted a puppy named Luna"]["context"] == (
        "Bob: That is wonderful news"
    )
    assert by_content["Bob: That is wonderful news"]["context"] == (
        "Ann: I adopted a puppy named Luna\nAnn: She loves the beach"
    )
    tight = plan_episodes(turns, EpisodeConfig(context_before=2, max_context_chars=30))
    assert all(len(e.value.get("context", "")) <= 30 for e in tight.episodes)


def test_same_turn_twice_is_one_memory_and_short_turns_are_skipped() -> None:
    turn = EpisodeTurn("I moved to Lisbon in May", time=datetime(2024, 5, 1, tzinfo=timezone.utc))
    plan = plan_episodes([turn, EpisodeTurn("ok"), turn])
    assert len(plan.episodes) == 1 and plan.duplicates == 1 and plan.skipped == 1
    assert plan.episodes[0].value["valid_from"] == "2024-05-01T00:00:00+00:00"


def test_chinese_turns_are_episodes_and_short_replies_are_not() -> None:
    """Chinese is written without spaces: a sentence is many words, not one."""
    turns = [
        EpisodeTurn("我在用Django写后端"),
        EpisodeTurn("好的", role="assistant"),
        EpisodeTurn("我住在杭州西湖区，在阿里巴巴工作。"),
        EpisodeTurn("谢谢！"),
        EpisodeTurn("東京に住んでいます"),
    ]
    plan = plan_episodes(turns, EpisodeConfig(roles=("user", "assistant")))
    assert [e.value["content"] for e in plan.episodes] == [
        "User: 我在用Django写后端",
        "User: 我住在杭州西湖区，在阿里巴巴工作。",
        "User: 東京に住んでいます",
    ]
    assert plan.skipped == 2


def test_pii_in_a_turn_is_redacted_by_default_and_the_turn_kept() -> None:
    turns = [
        EpisodeTurn("write to me at ann.lee@example.com please"),
        EpisodeTurn("I booked the flight to Rome", role="user"),
    ]
    plan = plan_episodes(turns, EpisodeConfig(context_before=2), pii=PIIFilter())
    assert [e.value["content"] for e in plan.episodes] == [
        "User: write to me at [EMAIL] please",
        "User: I booked the flight to Rome",
    ]
    assert plan.episodes[1].value["context"] == "User: write to me at [EMAIL] please"
    assert all("example.com" not in str(e.value) for e in plan.episodes)
    assert (plan.pii_dropped, plan.pii_redacted) == (0, 1)
    # the memory filter's own mode does not decide for turns
    assert (
        plan_episodes(turns, pii=PIIFilter(mode="redact")).episodes
        == plan_episodes(turns, pii=PIIFilter()).episodes
    )


def test_pii_turns_are_neither_episodes_nor_context_with_turns_drop() -> None:
    turns = [
        EpisodeTurn("write to me at ann.lee@example.com please"),
        EpisodeTurn("I booked the flight to Rome", role="user"),
    ]
    plan = plan_episodes(turns, EpisodeConfig(context_before=2), pii=PIIFilter(turns="drop"))
    assert [e.value["content"] for e in plan.episodes] == ["User: I booked the flight to Rome"]
    assert "context" not in plan.episodes[0].value
    assert plan.pii_dropped == 1


def test_a_pii_filter_refuses_an_unknown_turns_policy() -> None:
    with pytest.raises(ConfigurationError, match="turns='mask'"):
        PIIFilter(turns="mask")  # type: ignore[arg-type]


def test_bad_configs_and_history_entries_are_refused() -> None:
    for bad in (
        {"roles": ("robot",)},
        {"context_before": -1},
        {"max_context_chars": True},
        {"importance": 11},
        {"ttl": float("nan")},
        {"token_share": 1.5},
    ):
        with pytest.raises(ConfigurationError):
            EpisodeConfig(**bad)
    with pytest.raises(InvalidValueError):
        to_turns([{"role": "user"}])
    with pytest.raises(InvalidValueError):
        to_turns([{"role": "narrator", "text": "x"}])
    with pytest.raises(InvalidValueError):
        to_turns([42])  # type: ignore[list-item]
    with pytest.raises(ConfigurationError):
        ExtractNode(episodes={"context_before": 2})  # type: ignore[arg-type]


def test_ingest_refuses_an_unknown_option_and_writes_nothing() -> None:
    store = InMemoryStore()
    history = [{"role": "user", "text": "We moved to Porto."}]
    with pytest.raises(ConfigurationError, match="batchsize"):
        ingest_history(store, history, user_id="u1", batchsize=8)  # type: ignore[call-arg]
    assert store.search(("memories", "user_id:u1")) == []
    assert ingest_history(store, history, user_id="u1", batch_size=8).written == 1


def test_an_extracted_fact_names_the_messages_it_was_read_from() -> None:
    store = InMemoryStore()
    node = ExtractNode(store=store, extractor=RuleBasedExtractor())
    turn = [HumanMessage("I live in Porto.", id="m-7"), AIMessage("Nice!", id="a-7")]
    node.invoke({"messages": turn}, CONFIG)
    (fact,) = [i for i in store.search(NS, limit=10) if i.value.get("kind") != "episodic"]
    assert fact.value["source"] == {
        "by": "extract_memories",
        "thread_id": "t1",
        "message_ids": ["m-7"],
    }


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        (
            "I'm using Jenkins for the CI of my project",
            "I switched from Jenkins to GitHub Actions.",
        ),
        ("I live in Berlin these days", "I moved to Paris."),
        ("Always answer in English please", "From now on, always answer in German."),
        ("我在用Django写后端", "我从Django换成了FastAPI。"),
    ],
)
def test_a_later_fact_never_closes_or_rewrites_an_episode(earlier: str, later: str) -> None:
    """Episodes record what was said: an update, a switch or a newer instruction closes the
    facts it replaces, never the turn that said the old thing (it stays findable as what was
    said then)."""
    store = InMemoryStore(index={"dims": 64, "embed": DeterministicFakeEmbedding(size=64)})
    ingest_history(store, [("user", earlier)], user_id="u1")
    (episode,) = _episodes(store)
    node = ExtractNode(store=store, extractor=RuleBasedExtractor(), neighbours=10)
    node.invoke({"messages": [HumanMessage(later)]}, CONFIG)
    (again,) = _episodes(store)
    assert again.value == episode.value  # neither closed (invalid_at) nor merged into
    facts = [i for i in store.search(NS, limit=50) if i.value.get("kind") != "episodic"]
    assert facts  # the later statement was read as a fact


# -- 1. the extract node's episodes ------------------------------------------------------------
def test_extract_node_keeps_the_user_turn_with_its_neighbours() -> None:
    store = InMemoryStore()
    node = ExtractNode(store=store, episodes=EpisodeConfig(context_before=2, context_after=1))
    history = [
        HumanMessage("We are planning a trip", id="h1"),
        AIMessage("Where to?", id="a1"),
        HumanMessage("Probably Japan in April", id="h2"),
        AIMessage("Cherry blossom season!", id="a2"),
    ]
    report = node.invoke({"messages": history}, CONFIG)["memory_report"]
    assert report["episodes"] == 1
    (episode,) = _episodes(store)
    assert episode.value["content"] == "User: Probably Japan in April"
    assert episode.value["context"] == (
        "User: We are planning a trip\nAssistant: Where to?\nAssistant: Cherry blossom season!"
    )
    assert episode.value["source"] == {"by": "extract_memories", "thread_id": "t1"}
    node.invoke({"messages": history}, CONFIG)  # the same turn again (a retry)
    assert len(_episodes(store)) == 1
    assert node.stats.snapshot()["events"]["episodes"] == 2


def test_episodes_are_kept_when_the_prefilter_skips_fact_extraction() -> None:
    store = InMemoryStore()
    node = ExtractNode(store=store, episodes=EpisodeConfig())
    out = node.invoke({"messages": [("user", "what time does the museum open?")]}, CONFIG)
    assert out["memory_report"]["status"] == "skipped:prefilter"
    assert [e.value["content"] for e in _episodes(store)] == [
        "User: what time does the museum open?"
    ]
    assert (
        ExtractNode(store=InMemoryStore())
        .invoke({"messages": [("user", "what time does the museum open?")]}, CONFIG)[
            "memory_report"
        ]
        .get("episodes")
        == 0
    )


async def test_async_extract_writes_the_same_episodes() -> None:
    sync_store, async_store = InMemoryStore(), InMemoryStore()
    state = {"messages": [("user", "I started a pottery class"), ("ai", "Fun!")]}
    ExtractNode(store=sync_store, episodes=EpisodeConfig()).invoke(state, CONFIG)
    await ExtractNode(store=async_store, episodes=EpisodeConfig()).ainvoke(state, CONFIG)
    left = sorted(
        (e.key, e.value["content"], e.value.get("context")) for e in _episodes(sync_store)
    )
    right = sorted(
        (e.key, e.value["content"], e.value.get("context")) for e in _episodes(async_store)
    )
    assert left == right and len(left) == 1


def test_episodes_keep_no_pii_and_erasure_removes_episodes() -> None:
    store = InMemoryStore()
    strict = ExtractNode(store=store, episodes=EpisodeConfig(), pii=PIIFilter(turns="drop"))
    strict.invoke({"messages": [("user", "my email is ann.lee@example.com thanks")]}, CONFIG)
    assert _episodes(store) == []
    node = ExtractNode(store=store, episodes=EpisodeConfig())
    node.invoke({"messages": [("user", "my email is ann.lee@example.com thanks")]}, CONFIG)
    assert [e.value["content"] for e in _episodes(store)] == ["User: my email is [EMAIL] thanks"]
    node.invoke({"messages": [("user", "I go climbing every Sunday")]}, CONFIG)
    ingest_history(store, [{"text": "We adopted two cats last year"}], user_id="u1", thread_id="t9")
    assert len(_episodes(store)) == 3
    report = forget_user(store, None, "u1")
    assert report.complete, report.residue
    assert _episodes(store) == [] and store.search(NS) == []


def test_middleware_passes_episodes_to_its_nodes() -> None:
    config = EpisodeConfig(context_before=1)
    middleware = MemoryMiddleware(episodes=config)
    assert middleware.extract is not None and middleware.extract.episodes is config
    assert middleware.retrieve.episodes is config
    assert MemoryMiddleware().retrieve.episodes is None


# -- 1. retrieval blends facts and episodes ------------------------------------------------------
def _memory(position: int, kind: str, words: int, score: float) -> dict[str, Any]:
    return {"content": "w " * words, "kind": kind, "score": score, "key": f"m{position}"}


@settings(max_examples=thorough(200), deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["episodic", "semantic"]), st.integers(1, 60), st.floats(0, 1)),
        max_size=20,
    ),
    st.integers(10, 400),
    st.floats(0, 1),
)
def test_blend_keeps_the_budget_the_share_and_the_order(
    rows: list[tuple[str, int, float]], budget: int, share: float
) -> None:
    memories = [_memory(position, *row) for position, row in enumerate(rows)]
    kept = blend_within_budget(memories, token_budget=budget, episode_share=share)
    cost = [count_tokens([SystemMessage(memory_line(m))]) for m in kept]
    assert sum(cost) <= budget
    assert sum(c for c, m in zip(cost, kept, strict=True) if m["kind"] == "episodic") <= (
        budget * share
    )
    order = [int(m["key"][1:]) for m in kept]
    assert order == sorted(order)
    if share == 1.0:  # without a cap: exactly what the plain budget keeps
        from langgraph_recall._memory.messages import select_within_budget

        assert kept == select_within_budget(memories, token_budget=budget)


def test_retrieve_node_returns_facts_and_episodes_side_by_side() -> None:
    store = InMemoryStore()
    for number in range(12):
        store.put(NS, f"e{number}", {"content": f"Ann: episode {number}", "kind": "episodic"})
    store.put(NS, "f1", {"content": "User has a dog.", "kind": "semantic"})
    plain = RetrieveNode(store=store, limit=5).invoke({"messages": [("user", "dog?")]}, CONFIG)
    blended = RetrieveNode(store=store, limit=5, episodes=EpisodeConfig(retrieve_limit=2)).invoke(
        {"messages": [("user", "dog?")]}, CONFIG
    )
    kinds = [m["kind"] for m in blended["memories"]]
    assert "semantic" in kinds and kinds.count("episodic") <= 2
    assert len(plain["memories"]) == 5
    none = RetrieveNode(store=store, episodes=EpisodeConfig(retrieve_limit=0)).invoke(
        {"messages": [("user", "dog?")]}, CONFIG
    )
    assert [m["kind"] for m in none["memories"]] == ["semantic"]


# -- 1. bulk ingestion ---------------------------------------------------------------------------
def test_ingest_history_batches_dedups_and_reports() -> None:
    store = RecordingStore()
    history = [
        {"role": "user", "text": f"turn number {n} about topic {n % 3}", "id": f"d{n}"}
        for n in range(10)
    ]
    seen: list[tuple[int, int]] = []
    report = ingest_history(
        store,
        history,
        user_id="u1",
        thread_id="t1",
        batch_size=4,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert (report.turns, report.written, report.unchanged, report.batches) == (10, 10, 0, 3)
    assert seen[-1] == (10, 10) and len(seen) == 3
    batches = [
        [op for op in ops if isinstance(op, PutOp) and op.namespace == NS]
        for ops in _batches(store)
    ]
    assert [len(b) for b in batches if b] == [4, 4, 2]
    again = ingest_history(store, history, user_id="u1", batch_size=4)
    assert (again.written, again.unchanged) == (0, 10)
    assert len(_episodes(store)) == 10
    assert report.turns_per_second > 0 and report.as_dict()["namespace"] == list(NS)


def _batches(store: RecordingStore) -> list[list[Op]]:
    """The recorded ops split into the write batches (a batch of puts follows its reads)."""
    groups: list[list[Op]] = []
    current: list[Op] = []
    for op in store.ops:
        if isinstance(op, PutOp):
            current.append(op)
        elif current:
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return groups


def test_ingest_needs_a_user_and_fills_custom_namespaces() -> None:
    store = InMemoryStore()
    with pytest.raises(ConfigurationError):
        ingest_history(store, [], user_id="")
    with pytest.raises(ConfigurationError):
        ingest_history(store, [], user_id="u", batch_size=0)
    with pytest.raises(InvalidValueError):
        ingest_history(store, [{"text": 3}], user_id="u")
    assert store.search(("memories",)) == []
    report = ingest_history(
        store,
        [HumanMessage("I play the violin", id="m1"), AIMessage("Since when?", id="m2")],
        user_id="u2",
        namespace=("memories", "{org}", "{user_id}"),
        identity={"org": "acme"},
    )
    assert report.namespace == ("memories", "org:acme", "user_id:u2") and report.written == 2
    assert DEFAULT_NAMESPACE == ("memories", "{user_id}")


# -- 4. turn-composed embeddings -----------------------------------------------------------------
def test_turn_embeddings_embed_each_turn_once() -> None:
    inner = DeterministicFakeEmbedding(size=16)
    embedder = TurnEmbeddings(inner)
    lines = [f"A: line {n}" for n in range(6)]
    windows = ["\n".join(lines[max(0, n - 2) : n + 1]) for n in range(6)]
    vectors = embedder.embed_documents(windows + lines)
    assert embedder.embedded == 6 and embedder.calls == 1
    assert vectors[6:] == inner.embed_documents(lines)  # one line: the inner vector as is
    assert vectors[0] == vectors[6]
    for vector in vectors[1:6]:  # several lines: the unit-length mean
        assert math.isclose(math.fsum(x * x for x in vector), 1.0, rel_tol=1e-6)
    embedder.embed_documents(windows)
    assert embedder.embedded == 6 and embedder.calls == 1  # all cached
    assert embedder.embed_query("q") == inner.embed_query("q")
    small = TurnEmbeddings(inner, cache_size=2)
    small.embed_documents(lines)
    assert len(small._cache) == 2
    with pytest.raises(ConfigurationError):
        TurnEmbeddings(inner, cache_size=0)


# -- the episodes package documents itself with examples -----------------------------------
def _examples() -> list[tuple[str, str]]:
    blend = importlib.import_module("langgraph_recall._memory.blend")
    modules = [*package_modules(episodes_pkg), blend]
    return [(module.__name__, code) for module in modules for _, code in examples(module)]


EXAMPLES = _examples()

# (tests/integration/test_docstring_examples.py runs them)


def test_every_episodes_module_has_examples() -> None:
    assert len({module for module, _ in EXAMPLES}) >= 5 and len(EXAMPLES) >= 10


_TOOLS = ["Jenkins", "Django", "Postgres", "Vim", "Berlin", "Acme", "Python", "React"]
_EARLIER = ["I'm using {a} for work", "We rely on {a} every day", "I live in {a} now", "我在用{a}"]
_LATER = [
    "I switched from {a} to {b}.",
    "I no longer use {a}.",
    "I moved to {b}.",
    "From now on, always use {b} instead of {a}.",
    "我从{a}换成了{b}。",
    "我不用{a}了",
]


@settings(max_examples=thorough(60), deadline=None)
@given(
    st.sampled_from(_EARLIER),
    st.sampled_from(_LATER),
    st.sampled_from(_TOOLS),
    st.sampled_from(_TOOLS),
)
def test_no_later_statement_changes_a_stored_episode(
    earlier: str, later: str, a: str, b: str
) -> None:
    """Whatever the switch, move or instruction, the episodes already stored stay as written."""
    store = InMemoryStore(index={"dims": 64, "embed": DeterministicFakeEmbedding(size=64)})
    ingest_history(store, [("user", earlier.format(a=a))], user_id="u1")
    before = [e.value for e in _episodes(store)]
    node = ExtractNode(store=store, extractor=RuleBasedExtractor(), neighbours=10)
    node.invoke({"messages": [HumanMessage(later.format(a=a, b=b))]}, CONFIG)
    assert [e.value for e in _episodes(store)] == before


@settings(max_examples=thorough(300), deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_word_count_adds_up_over_words_and_counts_latin_words_by_spaces(
    left: str, right: str
) -> None:
    assert word_count(f"{left} {right}") == word_count(left) + word_count(right)
    latin = "".join(c for c in left if c.isascii())
    assert word_count(latin) == sum(1 for w in latin.split() if any(c.isalnum() for c in w))
