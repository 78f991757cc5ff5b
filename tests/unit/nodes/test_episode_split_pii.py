"""PII split across turns is never whole in one episode record: an e-mail address, a card
number or a phone number said in two messages (cut anywhere) is dropped or redacted in
every record that joins both halves — planned directly, through ``ExtractNode`` with
episodes, and through ``ingest_history``. A record stores speakers' names too: PII cut
between what one said and the next speaker's name is screened as the record stores it.
Placeholders are labelled by the longest finding (a card cut across turns is a [CARD],
though its first groups alone read as a phone number)."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.memory import InMemoryStore

from langgraph_recall.episodes import EpisodeConfig, EpisodeTurn, ingest_history, plan_episodes
from langgraph_recall.extraction._pii_detectors import luhn_valid
from langgraph_recall.extraction.pii import PII_CATEGORIES, PIIFilter, PIIMatch, find_pii
from langgraph_recall.nodes import ExtractNode
from tests._hypothesis import thorough
from tests.reliability._pii_variants import Variant, canonical, pii_variants

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


PLACEHOLDER = re.compile(r"\[(?:EMAIL|PHONE|CARD|NATIONAL_ID|SECRET)\]")


def _wildcard(text: str) -> re.Pattern[str]:
    """``text`` as a pattern: each placeholder in it stands for whatever it replaced."""
    return re.compile(".*?".join(re.escape(part) for part in PLACEHOLDER.split(text)))


def _records_clean(values: list[dict[str, Any]], turns: list[EpisodeTurn], user: set[str]) -> None:
    """No record's texts hold PII, read in conversation order or as the user's turns. Each
    line is placed by its speaker and what was said (a name next to half an address may
    be redacted with it)."""

    def position(line: str) -> int:
        who, _, what = line.partition(": ")
        return next(
            i
            for i, turn in enumerate(turns)
            if _wildcard(who).fullmatch(turn.label)
            and _wildcard(what).fullmatch(" ".join(turn.text.split()))
        )

    for value in values:
        pieces = [value["content"], *(value.get("context") or "").split("\n")]
        lines = sorted((position(p), p.partition(": ")[2]) for p in pieces if p)
        bodies = [body for _, body in lines]
        assert find_pii(" ".join(bodies)) == [], value
        said = [body for i, body in lines if turns[i].label in user]
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
    config = EpisodeConfig(context_before=2, context_after=1)
    plan = plan_episodes(turns, config, pii=PIIFilter(turns=mode))  # type: ignore[arg-type]
    _records_clean([e.value for e in plan.episodes], turns, {"S0", "S1", "S2", "S3"})
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


# -- names are part of the record: PII split between what one said and a speaker's name ----
def _stored_texts(value: dict[str, Any]) -> list[str]:
    """What a record stores as text: each free-text field, and its indexed text (context,
    then content, as the store joins them) read with its lines glued and spaced."""
    lines = [*(value.get("context") or "").split("\n"), value["content"]]
    lines = [line for line in lines if line]
    fields = [str(v) for k, v in value.items() if isinstance(v, str) and k != "kind"]
    return [*fields, "\n".join(lines), " ".join(lines), "".join(lines)]


def _holds(value: dict[str, Any], variant: Variant) -> list[str]:
    """The stored texts of a record in which the variant is whole: found by the filter, or
    its canonical form there (for a value that is PII only with its words, those words
    with it). A piece that is no PII alone (the digits of ``+44 7700 900000`` without the
    ``+``) is not the variant whole."""
    whole = canonical(variant.text if variant.needs_context else variant.value)
    return [
        text
        for text in _stored_texts(value)
        if find_pii(text) or (len(whole) >= 6 and whole in canonical(text))
    ]


def _lines(value: dict[str, Any]) -> int:
    return 1 + len([line for line in (value.get("context") or "").split("\n") if line])


NAMES = st.sampled_from(["Ann", "Bob", "User", "Dr. Lee", "Assistant"])


@settings(max_examples=thorough(300), deadline=None, database=None)
@given(
    variant=pii_variants(),
    cuts=st.lists(st.integers(1, 200), min_size=1, max_size=4, unique=True),
    first=st.integers(0, 3),
    names=st.lists(NAMES, min_size=8, max_size=8),
    roles=st.lists(st.sampled_from(["user", "assistant"]), min_size=8, max_size=8),
    before=st.integers(0, 3),
    after=st.integers(0, 3),
    budget=st.sampled_from([60, 200, 4000]),
    mode=st.sampled_from(["drop", "redact"]),
)
def test_pii_split_across_names_and_texts_is_never_whole_in_a_stored_record(
    variant: Variant,
    cuts: list[int],
    first: int,
    names: list[str],
    roles: list[str],
    before: int,
    after: int,
    budget: int,
    mode: str,
) -> None:
    """Property: a PII variant cut anywhere into pieces laid, in order, into consecutive
    speaker names and texts of a conversation (a text, the next speaker's name, their
    text, ...) is whole in no stored episode record — no field, and not the record's text
    as stored (its context's lines, then its turn) — in either turn policy."""
    text = variant.text
    points = sorted({c % len(text) for c in cuts} - {0})
    pieces = [text[a:b] for a, b in itertools.pairwise([0, *points, len(text)])]
    slots = ["filler words here" if i % 2 else names[i // 2] for i in range(16)]
    for offset, piece in enumerate(pieces):  # slot 2k: turn k's name, 2k+1: its text
        slots[2 * first + 1 + offset] = piece
    turns = [
        EpisodeTurn(slots[2 * k + 1], roles[k], slots[2 * k] or None, f"d{k}") for k in range(8)
    ]
    config = EpisodeConfig(
        roles=("user", "assistant"),
        context_before=before,
        context_after=after,
        max_context_chars=budget,
        min_words=0,
    )
    plan = plan_episodes(turns, config, pii=PIIFilter(turns=mode))  # type: ignore[arg-type]
    for episode in plan.episodes:
        assert _holds(episode.value, variant) == [], (variant, pieces, episode.value)


def test_an_address_cut_before_the_next_speakers_name_is_not_stored_whole() -> None:
    """The halves of an address in a turn's text and the next speaker's name, of a card
    number in a text and a name, of a password statement in a text and a name: each
    record that stores them together stores placeholders (redact) or not them (drop)."""
    cases = [
        (("reach me at ann.lee@", "Ann"), ("thanks, noted", "example.com"), "[EMAIL]"),
        (("my card is 4111 1111", "Ann"), ("ok thanks", "1111 1111"), "[CARD]"),
        (("the wifi password is", "Ann"), ("sure thing", "tulip42"), "[SECRET]"),
        (("write to ann.lee", "Ann"), ("sure thing", "@example.com"), "[EMAIL]"),
    ]
    for (said, who), (reply, name), placeholder in cases:
        turns = [EpisodeTurn(said, speaker=who, id="a"), EpisodeTurn(reply, speaker=name, id="b")]
        config = EpisodeConfig(roles=("user",), context_before=1, context_after=1)
        redacted = plan_episodes(turns, config, pii=PIIFilter())
        values = [e.value for e in redacted.episodes]
        assert len(values) == 2 and redacted.pii_redacted == 2, values
        assert all(placeholder in v["content"] and placeholder in v["context"] for v in values)
        assert values[1]["speaker"].startswith(placeholder), values[1]
        assert all(find_pii("".join(_stored_texts(v))) == [] for v in values)
        dropped = plan_episodes(turns, config, pii=PIIFilter(turns="drop"))
        assert dropped.episodes == [] and dropped.pii_dropped == 2


def test_a_keyword_cut_off_before_a_speakers_name_does_not_make_the_name_a_secret() -> None:
    """A line cut at the budget (or a message) that ends in ``password =`` or ``SECRET_KEY =``
    before the next speaker's name: the name labels a turn, it is no password."""
    turns = [
        EpisodeTurn("class Config: SECRET_KEY =", "user", "User", "u1"),
        EpisodeTurn("Set it from the environment instead.", "assistant", "Assistant", "a1"),
        EpisodeTurn("then password =", "user", "User", "u2"),
        EpisodeTurn("Ann Lee: hello", "user", "Ann Lee", "u3"),
    ]
    config = EpisodeConfig(roles=("user", "assistant"), context_before=2, context_after=1)
    plan = plan_episodes(turns, config, pii=PIIFilter(turns="drop"))
    assert plan.pii_dropped == 0 and len(plan.episodes) == 4
    assert plan_episodes(turns, config, pii=PIIFilter()).episodes == plan.episodes


# -- labels: the longest finding names the placeholder -------------------------------------
def test_a_card_cut_across_five_turns_is_labelled_a_card() -> None:
    """The first turn alone reads as a phone number ("number" nearby, 8 digits); the five
    turns together are one card number: every placeholder says [CARD]."""
    parts = ["my card number is 5174-0681", "241", "5-8", "68", "0"]
    assert luhn_valid("5174068124158680")
    assert [m.category for m in find_pii(parts[0])] == ["phone"]
    turns = [EpisodeTurn(p, speaker=f"S{i}", id=f"d{i}") for i, p in enumerate(parts)]
    config = EpisodeConfig(context_before=4, context_after=4, min_words=1)
    plan = plan_episodes(turns, config, pii=PIIFilter())
    stored = json.dumps([e.value for e in plan.episodes])
    assert len(plan.episodes) == 5 and "[PHONE]" not in stored
    assert plan.episodes[0].value["content"] == "S0: my card number is [CARD]"
    assert stored.count("[CARD]") == 25  # each of the five turns, in each of five records
    assert PIIFilter(mode="redact").clean_window(parts) == [
        "my card number is [CARD]",
        "[CARD]",
        "[CARD]",
        "[CARD]",
        "[CARD]",
    ]


@settings(max_examples=thorough(200), deadline=None, database=None)
@given(
    number=cards.map(lambda c: c.replace(" ", "")),
    style=st.sampled_from([" ", "-", ""]),
    cuts=st.lists(st.integers(1, 30), min_size=1, max_size=5, unique=True),
    lead=st.sampled_from(["my card number is", "call me, card", "number:", "card"]),
    short=st.integers(0, 2),
)
def test_a_card_cut_anywhere_is_redacted_as_a_card(
    number: str, style: str, cuts: list[int], lead: str, short: int
) -> None:
    """Property: a card number (in groups or not) cut into pieces across turns, with a phone
    word before it, is redacted as [CARD] in every record that holds it whole — never
    [PHONE], though a piece of it alone may read as a phone number (a record that holds
    only some of its digits may say [PHONE]: that is all it holds)."""
    written = style.join(number[i : i + 4] for i in range(0, 16, 4))
    points = sorted({c % len(written) for c in cuts} - {0})
    pieces = [written[a:b] for a, b in itertools.pairwise([0, *points, len(written)])]
    assume(all(p.strip(" -") for p in pieces))
    texts = [f"{lead} {pieces[0]}", *pieces[1:]]
    turns = [EpisodeTurn(t, speaker=f"S{i}", id=f"d{i}") for i, t in enumerate(texts)]
    context = len(turns) - (short if len(turns) > 2 else 0)  # some records hold all pieces
    config = EpisodeConfig(context_before=context, context_after=context, min_words=0)
    plan = plan_episodes(turns, config, pii=PIIFilter())
    whole = [e.value for e in plan.episodes if _lines(e.value) == len(turns)]
    assert whole
    for value in whole:  # records that hold every piece: the card, labelled a card
        assert "[CARD]" in value["content"] and "[PHONE]" not in json.dumps(value), value


@settings(max_examples=thorough(300), deadline=None, database=None)
@given(
    spans=st.lists(
        st.tuples(st.integers(0, 40), st.integers(1, 30), st.sampled_from(PII_CATEGORIES)),
        min_size=1,
        max_size=6,
    )
)
def test_the_longest_of_overlapping_findings_labels_their_placeholder(
    spans: list[tuple[int, int, str]],
) -> None:
    """Property: pieces' findings (from readings of any length) merged where they overlap:
    one span each, covering them all, labelled by the longest finding of the group, of
    equal lengths by the first category of email, secret, national_id, card, phone."""
    from langgraph_recall.extraction.pii import _resolve

    weighted = [(PIIMatch(cat, s, s + n), n + k) for k, (s, n, cat) in enumerate(spans)]
    merged = _resolve(weighted)
    assert all(a.end <= b.start for a, b in itertools.pairwise(merged))
    for match, _ in weighted:  # each finding inside exactly one merged span
        (_group,) = [m for m in merged if m.start <= match.start and match.end <= m.end]
    for group in merged:
        members = [(m, w) for m, w in weighted if group.start <= m.start and m.end <= group.end]
        priority = ["email", "secret", "national_id", "card", "phone"]
        best = max(members, key=lambda mw: (mw[1], -priority.index(mw[0].category)))
        assert group.category == best[0].category
        assert group.start == min(m.start for m, _ in members)
        assert group.end == max(m.end for m, _ in members)
