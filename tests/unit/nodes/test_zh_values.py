"""Chinese facts read by the offline rules: a sentence-final particle ("了", "啦", "呢", …) is
tone, never part of the stored value, and a time word or adverb between "我" and the verb
("我去年在腾讯工作", "我从去年开始不吃肉了") does not hide the fact — for every rule, through
one value-cleaning step and one list of words that may stand before the verb."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_recall.extraction import RuleBasedExtractor
from langgraph_recall.extraction._sentences import ZH_PARTICLES
from tests._hypothesis import thorough

NOW = datetime(2026, 11, 29, 15, 30, tzinfo=timezone.utc)

# (statement with {when} before the verb, what the memory says, values)
STATEMENTS = [
    ("我{when}在{v}工作", "User works at {v}.", ["腾讯", "阿里巴巴", "Google"]),
    ("我{when}就职于{v}", "User works at {v}.", ["字节跳动", "华为"]),
    ("我{when}住在{v}", "User lives in {v}.", ["北京", "杭州"]),
    ("我{when}喜欢{v}", "User likes {v}.", ["喝茶", "跑步", "去酒吧"]),
    ("我{when}不喜欢{v}", "User doesn't like {v}.", ["咖啡", "下雨天"]),
    ("我{when}不吃{v}", "User doesn't eat {v}.", ["香菜", "牛肉"]),
    ("我{when}来自{v}", "User is from {v}.", ["上海", "成都"]),
    ("我{when}是{v}", "User is a {v}.", ["工程师", "老师"]),
    ("我{when}会说{v}", "User speaks {v}.", ["法语", "粤语"]),
    ("我叫{v}", "User's name is {v}.", ["李雷", "张伟"]),
    ("以后{v}", "User's instruction: {v}.", ["用中文回答", "说话简短一点"]),
]
WHEN = ["", "去年", "2020年", "上个月", "从去年开始", "最近", "也", "一直", "已经", "其实", "确实"]


def contents(text: str) -> list[str]:
    return [c.content for c in RuleBasedExtractor().extract_text(text, now=NOW)]


@settings(max_examples=thorough(300), deadline=None)
@given(
    st.sampled_from(STATEMENTS),
    st.data(),
    st.sampled_from(WHEN),
    st.text(alphabet=ZH_PARTICLES, max_size=3),
    st.sampled_from(["", "。", "！", "～"]),
)
def test_particles_and_time_words_never_reach_the_value(
    statement: tuple[str, str, list[str]],
    data: st.DataObject,
    when: str,
    particles: str,
    end: str,
) -> None:
    said, memory, values = statement
    value = data.draw(st.sampled_from(values), label="value")
    text = said.format(when=when, v=value) + particles + end
    found = contents(text)
    assert memory.format(v=value) in found, (text, found)
    for content in found:
        assert content.rstrip(".")[-1] not in ZH_PARTICLES or content.endswith("酒吧."), text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我在腾讯工作了", "User works at 腾讯."),
        ("我叫李雷呢", "User's name is 李雷."),
        ("我喜欢喝茶啦", "User likes 喝茶."),
        ("我去年在腾讯工作", "User works at 腾讯."),
        ("我从去年开始不吃肉了", "User doesn't eat 肉."),
        ("我现在更喜欢FastAPI了", "User prefers FastAPI."),
        ("我喜欢去网吧", "User likes 去网吧."),
    ],
)
def test_the_reported_sentences(text: str, expected: str) -> None:
    assert expected in contents(text)


def test_now_liking_something_is_one_switch_not_also_a_plain_like() -> None:
    assert contents("我现在喜欢FastAPI") == ["User prefers FastAPI."]


@pytest.mark.parametrize("text", ["我喜欢喝茶了吗", "我住在北京吗", "我是老师么", "我在腾讯工作吗"])
def test_a_chinese_question_without_a_question_mark_stores_nothing(text: str) -> None:
    assert contents(text) == []
