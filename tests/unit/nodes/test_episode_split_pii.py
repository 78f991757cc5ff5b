"""PII split across turns is never whole in one episode record: an e-mail address, a card
number or a phone number said in two messages (cut anywhere) is dropped or redacted in
every record that joins both halves — planned directly, through ``ExtractNode`` with
episodes, and through ``ingest_history``."""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.memory import InMemoryStore

from langgraph_recall.episodes import EpisodeConfig, EpisodeTurn, ingest_history, plan_episodes
from langgraph_recall.extraction.pii import PIIFilter, find_pii
from langgraph_recall.nodes import ExtractNode
from tests._hypothesis import thorough

words = st.lists(
    st.sampled_from(["tea", "ok", "sure", "later", "thanks", "so", "write"]), min_size=1, max_size=4
).map(" ".join)


def _luhn(digits: list[int]) -> str:
    total = 0
    for i, d in enumerate(reversed(digits)):
        total += d if i % 2 else (d * 2 - 9 if d * 2 > 9 else d * 2)
    check = (10 - total % 10) % 10
    number = "".join(map(str, [*digits, check]))
    return " ".join(number[i : i + 4] for i in range(0, 16, 4))


emails = st.builds(
    lambda user, dot, host: f"{user}{dot}@{host}.com",
    st.text("abcdefghijklmnop", min_size=3, max_size=8),
    st.sampled_from(["", ".lee", ".x"]),
    st.text("abcdefghij", min_size=3, max_size=8),
)
cards = st.lists(st.integers(0, 9), min_size=15, max_size=15).map(lambda d: _luhn([4, *d[1:]]))
phones = st.sampled_from(["+1 415 555 0100", "+44 20 7946 0958", "(415) 555-0100"])
secrets = st.one_of(emails, cards, phones)


def _split(secret: str, cut: int) -> tuple[str, str]:
    point = 1 + cut % (len(secret) - 1)
    return secret[:point].strip(), secret[point:].strip()


def _records_clean(values: list[dict[str, Any]], order: dict[str, int], user: set[str]) -> None:
    """No record's texts hold PII, read in conversation order or as the user's turns."""
    for value in values:
        pieces = [value["content"], *(value.get("context") or "").split("\n")]
        pieces = [p for p in pieces if p]
        pieces.sort(key=lambda p: order[p.split(": ", 1)[0]])
        bodies = [p.split(": ", 1)[1] if ": " in p else "" for p in pieces]
        assert find_pii(" ".join(bodies)) == [], value
        said = [b for p, b in zip(pieces, bodies, strict=True) if p.split(": ", 1)[0] in user]
        assert find_pii(" ".join(said)) == [], value


@settings(max_examples=thorough(300), deadline=None)
@given(
    secrets,
    st.integers(0, 100),
    words,
    words,
    words,
    st.sampled_from(["drop", "redact"]),
    st.booleans(),
)
def test_pii_split_across_two_turns_is_never_whole_in_one_record(
    secret: str, cut: int, before: str, after: str, filler: str, mode: str, reply: bool
) -> None:
    assume(find_pii(f"{before} {secret} {after}"))
    head, tail = _split(secret, cut)
    middle = [EpisodeTurn("Noted, go on.", role="assistant", speaker="Bot")] if reply else []
    turns = [
        EpisodeTurn(f"{filler} my details", speaker="S0"),
        EpisodeTurn(f"{before} {head}", speaker="S1"),
        *middle,
        EpisodeTurn(f"{tail} {after}", speaker="S2"),
        EpisodeTurn(f"{filler} that is all", speaker="S3"),
    ]
    order = {t.label: i for i, t in enumerate(turns)}
    config = EpisodeConfig(context_before=2, context_after=1)
    plan = plan_episodes(turns, config, pii=PIIFilter(turns=mode))  # type: ignore[arg-type]
    _records_clean([e.value for e in plan.episodes], order, {"S0", "S1", "S2", "S3"})
    # a window without the halves together is left as it was
    alone = plan_episodes(turns[:1] + turns[-1:], config, pii=PIIFilter(turns=mode))  # type: ignore[arg-type]
    assert [e.value["content"] for e in alone.episodes] == [
        "S0: " + turns[0].text,
        "S3: " + turns[-1].text,
    ]


def test_the_extract_node_and_ingestion_never_join_split_pii() -> None:
    halves = ["My email is ann.lee", "@example.com if you need it"]
    store = InMemoryStore()
    node = ExtractNode(store=store, episodes=EpisodeConfig(context_before=2))
    config: Any = {"configurable": {"user_id": "u1", "thread_id": "t1"}}
    messages = [
        HumanMessage(halves[0], id="h1"),
        AIMessage("Noted, go on.", id="a1"),
        HumanMessage(halves[1], id="h2"),
    ]
    node.invoke({"messages": messages[:2]}, config)
    node.invoke({"messages": messages}, config)
    ingest_history(store, [("user", halves[0]), ("user", halves[1])], user_id="u2")
    for user in ("u1", "u2"):
        for item in store.search(("memories", f"user_id:{user}"), limit=100):
            text = " ".join(str(v) for v in item.value.values() if isinstance(v, str))
            assert "ann.lee" not in text or "example.com" not in text, item.value
