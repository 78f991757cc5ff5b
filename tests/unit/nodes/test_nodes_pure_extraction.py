"""Pure extraction pieces: identity templates, dates, PII, pre-filter, rules, consolidation."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_recall._internal.identity import format_namespace, require_identity
from langgraph_recall.errors import ConfigurationError
from langgraph_recall.extraction import (
    Action,
    ConsolidationDecision,
    ExistingMemory,
    MemoryCandidate,
    PIIFilter,
    RuleBasedExtractor,
    find_pii,
    looks_memorable,
    resolve_date_phrase,
)
from langgraph_recall.extraction._pii_detectors import luhn_valid
from langgraph_recall.extraction.consolidation import plan_writes, rule_decisions
from tests._hypothesis import thorough

NOW = datetime(2026, 11, 29, 15, 30, tzinfo=timezone.utc)


# -- identity --------------------------------------------------------------------------
def test_namespace_from_context_beats_configurable() -> None:
    ns = format_namespace(
        ("memories", "{user_id}"),
        context={"user_id": "ctx"},
        config={"configurable": {"user_id": "cfg"}},
    )
    assert ns == ("memories", "user_id:ctx")


def test_namespace_from_dataclass_context_and_int_value() -> None:
    class Ctx:
        user_id = 42

    assert format_namespace(("m", "{user_id}"), context=Ctx(), config=None) == ("m", "user_id:42")


def test_missing_identity_names_the_key() -> None:
    with pytest.raises(ConfigurationError, match="user_id"):
        format_namespace(("m", "{user_id}"), context=None, config={"configurable": {}})
    with pytest.raises(ConfigurationError, match="thread_id"):
        require_identity("thread_id", context={}, config=None)


def test_namespace_encodes_dots_and_rejects_empty_placeholders() -> None:
    ns = format_namespace(("m", "{user_id}"), context={"user_id": "a.b"}, config=None)
    assert ns == ("m", "user_id:a%2Eb")
    with pytest.raises(ConfigurationError, match="contains"):
        format_namespace(("m.x", "{user_id}"), context={"user_id": "a"}, config=None)
    with pytest.raises(ConfigurationError, match="empty"):
        format_namespace(("m", "{}"), context={}, config=None)


# -- dates -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I've lived here since last May", datetime(2026, 5, 1, tzinfo=timezone.utc)),
        ("since last December", datetime(2025, 12, 1, tzinfo=timezone.utc)),
        ("I started in March 2021", datetime(2021, 3, 1, tzinfo=timezone.utc)),
        ("on 2024-02-29 I joined", datetime(2024, 2, 29, tzinfo=timezone.utc)),
        ("since 3 May 2023", datetime(2023, 5, 3, tzinfo=timezone.utc)),
        ("since May 3rd, 2023", datetime(2023, 5, 3, tzinfo=timezone.utc)),
        ("since 2019", datetime(2019, 1, 1, tzinfo=timezone.utc)),
        ("two years ago", datetime(2024, 11, 1, tzinfo=timezone.utc)),
        ("3 days ago", datetime(2026, 11, 26, tzinfo=timezone.utc)),
        ("yesterday", datetime(2026, 11, 28, tzinfo=timezone.utc)),
        ("for 5 years now", datetime(2021, 11, 1, tzinfo=timezone.utc)),
        ("in December", datetime(2025, 12, 1, tzinfo=timezone.utc)),
        ("last month", datetime(2026, 10, 1, tzinfo=timezone.utc)),
    ],
)
def test_resolve_date_phrase(text: str, expected: datetime) -> None:
    assert resolve_date_phrase(text, NOW) == expected


@pytest.mark.parametrize("text", ["I love Python", "you may go", "from may be", "I have 3 cats"])
def test_no_date_in_plain_sentences(text: str) -> None:
    assert resolve_date_phrase(text, NOW) is None


# -- PII -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("write to zhang.san+x@example.co.uk", "email"),
        ("call me at +1 (415) 555-0100", "phone"),
        ("my mobile 13812345678", "phone"),
        ("card 4111-1111-1111-1111 please", "card"),
        ("amex 378282246310005", "card"),
        ("ssn 123-45-6789", "national_id"),
        ("身份证 11010519491231002X", "national_id"),
        ("key sk-proj-abcdefghijklmnopqrstuvwxyz012345", "secret"),
        ("AKIAIOSFODNN7EXAMPLE is the key id", "secret"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "secret"),
        ("my password is hunter2!", "secret"),
    ],
)
def test_pii_categories(text: str, category: str) -> None:
    assert category in {m.category for m in find_pii(text)}


@pytest.mark.parametrize(
    "text",
    [
        "User was born in 1990.",
        "User moved on 2024-05-01.",
        "User has 3 cats and 12 books.",
        "User works at Google.",
        "User uses Python 3.11.",
        "card 4111 1111 1111 1112",  # fails Luhn
    ],
)
def test_no_pii_false_positives(text: str) -> None:
    assert find_pii(text) == []


def test_luhn() -> None:
    assert luhn_valid("4539578763621486")
    assert not luhn_valid("4539578763621487")
    assert not luhn_valid("12ab")


def test_pii_filter_modes() -> None:
    text = "User's email is ann@example.com and phone +44 20 7946 0958."
    assert PIIFilter().clean(text) is None
    assert PIIFilter(mode="redact").clean(text) == "User's email is [EMAIL] and phone [PHONE]."
    assert PIIFilter(categories=("card",)).clean(text) == text
    with pytest.raises(ConfigurationError):
        PIIFilter(mode="mask")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="unknown PII"):
        PIIFilter(categories=("ssn",))


# -- pre-filter and rules ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "memorable"),
    [
        ("Hi!", False),
        ("Thanks, bye.", False),
        ("What's my name?", False),
        ("Which city am I in now?", False),
        ("Do I like tea", False),
        ("I just moved to Beijing.", True),
        ("Hi! My name is Zhang San.", True),
        ("我住在上海", True),
        ("Remember the deploy key rotates on Fridays", True),
    ],
)
def test_prefilter(text: str, memorable: bool) -> None:
    assert looks_memorable(text) is memorable


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hi! My name is Zhang San.", [("User's name is Zhang San.", "name")]),
        ("Call me Ann", [("User's name is Ann.", "name")]),
        ("I just moved to Beijing.", [("User lives in Beijing.", "location")]),
        ("I live in New York City now.", [("User lives in New York City.", "location")]),
        ("I work for the Bank of America.", [("User works at Bank of America.", "employer")]),
        ("I joined Microsoft.", [("User works at Microsoft.", "employer")]),
        ("I'm a senior backend engineer.", [("User is a senior backend engineer.", "role")]),
        ("I hate Java!", [("User hates Java.", "preference:java")]),
        ("I have a peanut allergy.", [("User is allergic to peanut.", "allergy:peanut")]),
        ("I have a dog.", []),
        ("My favorite color is blue.", [("User's favorite color is blue.", "favorite:color")]),
        ("我叫张三", [("User's name is 张三.", "name")]),
        ("What's my name?", []),
        # compound sentences: the elided subject of the second clause is restored
        (
            "I live in Berlin and work at Siemens.",
            [("User lives in Berlin.", "location"), ("User works at Siemens.", "employer")],
        ),
        (
            "I love sushi but hate olives.",
            [
                ("User loves sushi.", "preference:sushi"),
                ("User hates olives.", "preference:olives"),
            ],
        ),
        (
            "I'm vegan and allergic to peanuts.",
            [("User is vegan.", "diet"), ("User is allergic to peanuts.", "allergy:peanuts")],
        ),
        (
            "I am 34 years old and a teacher.",
            [("User is 34 years old.", "age"), ("User is a teacher.", "role")],
        ),
        (
            "I use Python and Go at work, and I prefer vim.",
            [
                ("User uses Python.", "uses:python"),
                ("User uses Go.", "uses:go"),
                ("User prefers vim.", "preference:vim"),
            ],
        ),
        # "and"/"so" inside one fact do not split it
        (
            "I love hiking and swimming.",
            [("User loves hiking and swimming.", "preference:hiking and swimming")],
        ),
        ("I'm so happy and I love tea.", [("User loves tea.", "preference:tea")]),
    ],
)
def test_rule_extractor(text: str, expected: list[tuple[str, str]]) -> None:
    found = RuleBasedExtractor().extract_text(text, now=NOW)
    assert [(c.content, c.slot) for c in found] == expected


def test_rule_extractor_multi_clause_and_dates() -> None:
    ex = RuleBasedExtractor()
    found = ex.extract(
        [
            HumanMessage("I work in Shanghai and I love Python. I use Go, Rust and Postgres."),
            AIMessage("I live in Paris."),  # assistant text is not about the user
            HumanMessage("I've lived in Berlin since last May."),
        ],
        now=NOW,
    )
    assert [c.slot for c in found] == [
        "location",
        "preference:python",
        "uses:go",
        "uses:rust",
        "uses:postgres",
        "location",
    ]
    assert found[-1].valid_from == datetime(2026, 5, 1, tzinfo=timezone.utc)
    assert all(c.valid_from is None for c in found[:-1])


# -- consolidation ---------------------------------------------------------------------------
def _mem(key: str, content: str, slot: str | None, **extra: object) -> ExistingMemory:
    value: dict[str, object] = {"content": content, "importance": 5, **extra}
    if slot:
        value["slot"] = slot
    return ExistingMemory(key, value)


def _keys() -> object:
    counter = iter(range(1000))
    return lambda: f"new{next(counter)}"


def test_repeat_is_noop_and_reinforces() -> None:
    old = _mem("k1", "User loves Python.", "preference:python")
    cand = [MemoryCandidate("User loves Python.", slot="preference:python")]
    plan = plan_writes(cand, [old], rule_decisions(cand, [old]), now=NOW, new_key=_keys())  # type: ignore[arg-type]
    assert plan.counts == {
        "added": 0,
        "updated": 0,
        "invalidated": 0,
        "reinforced": 1,
        "skipped": 0,
    }
    (write,) = plan.writes
    assert write.key == "k1" and write.action is Action.NOOP
    assert write.value["importance"] == 6 and write.value["reinforcements"] == 1


def test_new_employer_supersedes_old_with_interval() -> None:
    old = _mem("g", "User works at Google.", "employer", valid_from="2020-01-01T00:00:00+00:00")
    cand = [MemoryCandidate("User works at Microsoft.", slot="employer")]
    plan = plan_writes(cand, [old], rule_decisions(cand, [old]), now=NOW, new_key=_keys())  # type: ignore[arg-type]
    by_key = {w.key: w for w in plan.writes}
    assert by_key["g"].action is Action.INVALIDATE
    assert by_key["g"].value["invalid_at"] == NOW.isoformat()
    assert by_key["g"].value["superseded_by"] == "new0"
    assert by_key["new0"].value["content"] == "User works at Microsoft."
    assert by_key["new0"].value["valid_from"] == NOW.isoformat()


def test_llm_noop_that_hides_a_change_becomes_invalidate() -> None:
    old = _mem("g", "User works at Google.", "employer")
    cand = [MemoryCandidate("User works at Microsoft.", slot="employer")]
    wrong = [ConsolidationDecision(0, Action.NOOP, target="g")]
    plan = plan_writes(cand, [old], wrong, now=NOW, new_key=_keys())  # type: ignore[arg-type]
    assert plan.counts["invalidated"] == 1 and plan.counts["added"] == 1
    assert "swallow" in plan.notes[0]


def test_collateral_invalidation_is_refused() -> None:
    city = _mem("c", "User lives in Shanghai.", "location")
    cand = [MemoryCandidate("User works at Microsoft.", slot="employer")]
    bad = [ConsolidationDecision(0, Action.INVALIDATE, target="c")]
    plan = plan_writes(cand, [city], bad, now=NOW, new_key=_keys())  # type: ignore[arg-type]
    assert [w.key for w in plan.writes] == ["new0"]
    assert plan.counts["invalidated"] == 0 and "refused" in plan.notes[0]


def test_slotless_update_of_other_memory_is_refused_and_unknown_target_adds() -> None:
    city = _mem("c", "User lives in Shanghai.", None)
    cands = [MemoryCandidate("User likes tea."), MemoryCandidate("User likes cake.")]
    decisions = [
        ConsolidationDecision(0, Action.UPDATE, target="c", content="merged"),
        ConsolidationDecision(1, Action.NOOP, target="does-not-exist"),
    ]
    plan = plan_writes(cands, [city], decisions, now=NOW, new_key=_keys())  # type: ignore[arg-type]
    assert sorted(w.value["content"] for w in plan.writes) == [
        "User likes cake.",
        "User likes tea.",
    ]
    assert all(w.action is Action.ADD for w in plan.writes)


def test_update_same_slot_rewrites_in_place() -> None:
    old = _mem("r", "User is an engineer.", "role", valid_from="2020-01-01T00:00:00+00:00")
    cand = [MemoryCandidate("User is a backend engineer.", slot="role", importance=7)]
    dec = [
        ConsolidationDecision(0, Action.UPDATE, target="r", content="User is a backend engineer.")
    ]
    plan = plan_writes(cand, [old], dec, now=NOW)
    (write,) = plan.writes
    assert write.key == "r" and write.value["content"] == "User is a backend engineer."
    assert write.value["valid_from"] == "2020-01-01T00:00:00+00:00"
    assert write.value["importance"] == 7


def test_older_candidate_is_stored_as_history() -> None:
    newer = _mem("b", "User lives in Beijing.", "location", valid_from="2026-05-01T00:00:00+00:00")
    cand = [
        MemoryCandidate(
            "User lives in Shanghai.",
            slot="location",
            valid_from=datetime(2020, 1, 1, tzinfo=timezone.utc),
        )
    ]
    plan = plan_writes(cand, [newer], rule_decisions(cand, [newer]), now=NOW, new_key=_keys())  # type: ignore[arg-type]
    (write,) = plan.writes
    assert write.key == "new0" and write.value["invalid_at"] == "2026-05-01T00:00:00+00:00"


def test_missing_decision_adds_and_duplicate_candidates_skip() -> None:
    cands = [MemoryCandidate("User likes tea."), MemoryCandidate("user likes tea")]
    plan = plan_writes(cands, [], [], now=NOW)
    assert plan.counts["added"] == 1 and plan.counts["skipped"] == 1


def test_fifty_fact_conversation_never_invalidates_unrelated_memories() -> None:
    """Scripted 50-fact conversation through the rule extractor + consolidation."""
    ex = RuleBasedExtractor()
    statements = [f"I love topic{i}." for i in range(20)]
    statements += [f"I speak Language{i}." for i in range(10)]
    statements += ["My name is Ann Lee.", "I live in Oslo.", "I work at Acme.", "I'm vegan."]
    statements += [f"I use Tool{i}." for i in range(10)]
    statements += ["I moved to Bergen.", "I joined Globex.", "I love topic3.", "I hate topic4."]
    statements += ["My favorite color is green.", "I'm allergic to nuts."]
    assert len(statements) == 50
    store: dict[str, dict[str, object]] = {}
    keys = _keys()
    for turn, text in enumerate(statements):
        now = NOW + timedelta(minutes=turn)
        cands = ex.extract_text(text, now=now)
        current = [ExistingMemory(k, v) for k, v in store.items() if "invalid_at" not in v]
        plan = plan_writes(cands, current, rule_decisions(cands, current), now=now, new_key=keys)  # type: ignore[arg-type]
        for write in plan.writes:
            if write.action is Action.INVALIDATE:
                assert store[write.key].get("slot") == cands[0].slot, text
            store[write.key] = write.value
    invalid = sorted(str(v["content"]) for v in store.values() if "invalid_at" in v)
    assert invalid == ["User lives in Oslo.", "User loves topic4.", "User works at Acme."]
    current = {str(v["content"]) for v in store.values() if "invalid_at" not in v}
    assert {"User lives in Bergen.", "User works at Globex.", "User hates topic4."} <= current
    assert len(current) == 46
    loves3 = next(v for v in store.values() if v["content"] == "User loves topic3.")
    assert loves3["reinforcements"] == 1


def test_slotless_update_only_enriches() -> None:
    dog = _mem("d", "User has a dog.", None)
    richer = [MemoryCandidate("User has a dog named Rex.")]
    plan = plan_writes(
        richer, [dog], [ConsolidationDecision(0, Action.UPDATE, target="d")], now=NOW
    )
    assert [(w.key, w.action) for w in plan.writes] == [("d", Action.UPDATE)]
    assert plan.writes[0].value["content"] == "User has a dog named Rex."
    other = [MemoryCandidate("User has a cat.")]
    plan = plan_writes(other, [dog], [ConsolidationDecision(0, Action.UPDATE, target="d")], now=NOW)
    assert [w.action for w in plan.writes] == [Action.ADD]


# -- Chinese statements --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "我叫张伟，住在杭州。",
            [("User's name is 张伟.", "name"), ("User lives in 杭州.", "location")],
        ),
        ("我在阿里巴巴工作", [("User works at 阿里巴巴.", "employer")]),
        (
            "我住在北京，在腾讯上班。",
            [("User lives in 北京.", "location"), ("User works at 腾讯.", "employer")],
        ),
        ("我就职于字节跳动。", [("User works at 字节跳动.", "employer")]),
        ("我是一名软件工程师。", [("User is a 软件工程师.", "role")]),
        ("我来自成都。", [("User is from 成都.", "hometown")]),
        ("我是北京人。", [("User is from 北京.", "hometown")]),
        (
            "我吃素，也不吃鸡蛋。",
            [("User is vegetarian.", "diet"), ("User doesn't eat 鸡蛋.", "diet:鸡蛋")],
        ),
        ("我不喜欢香菜。", [("User doesn't like 香菜.", "preference:香菜")]),
        ("我会说日语。", [("User speaks 日语.", "language:日语")]),
        (
            "以后代码注释都用英文。",
            [("User's instruction: 代码注释都用英文.", "instruction:代码注释都用英文")],
        ),
        (
            "请不要在回答里用表情符号。",
            [("User's instruction: 不要在回答里用表情符号.", "instruction:不要在回答里用表情符号")],
        ),
        ("我现在在杭州。", [("User lives in 杭州.", "location")]),
        ("他住在北京，在腾讯上班。", []),  # someone else's facts
        ("我是个好人。", []),
        ("我以后想去日本。", []),  # a plan, not an instruction
        ("你在哪里工作？", []),
    ],
)
def test_chinese_rules(text: str, expected: list[tuple[str, str]]) -> None:
    if expected:  # the pre-filter lets every statement the rules read through
        assert looks_memorable(text)
    found = RuleBasedExtractor().extract_text(text, now=NOW)
    assert [(c.content, c.slot) for c in found] == expected


@settings(max_examples=thorough(200), deadline=None, database=None)
@given(
    name=st.sampled_from(["张伟", "李娜", "欧阳娜娜", "王芳"]),
    city=st.sampled_from(["杭州", "成都", "乌鲁木齐", "深圳"]),
    company=st.sampled_from(["阿里巴巴", "腾讯", "华为", "字节跳动", "小米"]),
    order=st.permutations(["name", "city", "company"]),
    joint=st.sampled_from(["，", ",", "；"]),
)
def test_chinese_facts_in_any_order_are_each_extracted(
    name: str, city: str, company: str, order: list[str], joint: str
) -> None:
    """One sentence, "我" said once, the facts in any order: each fact is found with its value."""
    phrases = {"name": f"叫{name}", "city": f"住在{city}", "company": f"在{company}工作"}
    text = "我" + joint.join(phrases[part] for part in order) + "。"
    found = {c.slot: c.content for c in RuleBasedExtractor().extract_text(text, now=NOW)}
    assert found == {
        "name": f"User's name is {name}.",
        "location": f"User lives in {city}.",
        "employer": f"User works at {company}.",
    }, text
