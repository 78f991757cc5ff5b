"""Chinese date phrases set a memory's validity as English ones do."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_recall.extraction import RuleBasedExtractor, resolve_date_phrase
from tests._hypothesis import thorough

UTC = timezone.utc
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)  # a Sunday


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我去年五月搬到了杭州", datetime(2025, 5, 1, tzinfo=UTC)),
        ("去年5月份", datetime(2025, 5, 1, tzinfo=UTC)),
        ("上个月换了工作", datetime(2026, 10, 1, tzinfo=UTC)),
        ("上上个月", datetime(2026, 9, 1, tzinfo=UTC)),
        ("我2024年3月5日入职", datetime(2024, 3, 5, tzinfo=UTC)),
        ("２０２４年３月５号", datetime(2024, 3, 5, tzinfo=UTC)),
        ("2024年3月", datetime(2024, 3, 1, tzinfo=UTC)),
        ("二〇二四年十二月", datetime(2024, 12, 1, tzinfo=UTC)),
        ("我1990年出生", datetime(1990, 1, 1, tzinfo=UTC)),
        ("三年前开始学日语", datetime(2023, 11, 1, tzinfo=UTC)),
        ("两个月前", datetime(2026, 9, 1, tzinfo=UTC)),
        ("半年前", datetime(2026, 5, 1, tzinfo=UTC)),
        ("十天前", datetime(2026, 11, 19, tzinfo=UTC)),
        ("昨天", datetime(2026, 11, 28, tzinfo=UTC)),
        ("前年", datetime(2024, 1, 1, tzinfo=UTC)),
        ("上周三", datetime(2026, 11, 18, tzinfo=UTC)),
        ("上个星期", datetime(2026, 11, 22, tzinfo=UTC)),
        ("五月以来", datetime(2026, 5, 1, tzinfo=UTC)),
        ("从五月开始", datetime(2026, 5, 1, tzinfo=UTC)),
        # a moment to come counts only when something starts then
        ("下周三开始上夜班", datetime(2026, 12, 2, tzinfo=UTC)),
        ("从下个月起", datetime(2026, 12, 1, tzinfo=UTC)),
        ("明年三月起", datetime(2027, 3, 1, tzinfo=UTC)),
        ("从十二月开始", datetime(2026, 12, 1, tzinfo=UTC)),
        ("下周三我要去北京", None),
        ("明年三月我去日本", None),
        # 起 and 自 of other words, 以后 ("after then"): nothing starts
        ("下周三起飞去北京", None),
        ("明年起诉他", None),
        ("下个月起床早", None),
        ("下个月起码要存钱", None),
        ("我独自下周三去北京", None),
        ("我们各自明年去上海", None),
        ("明年以后我会退休", None),
        ("2099年之后我住在火星", None),
        ("自明年起我住在上海", datetime(2027, 1, 1, tzinfo=UTC)),
        ("明年起我不吃肉", datetime(2027, 1, 1, tzinfo=UTC)),
        # no date
        ("我叫王伟", None),
        ("2021年的车型", None),
        ("五月天的演唱会", None),
        ("2024年2月30日", None),  # no such day: no date, no error
        ("2024年2月30日, since May 2024", datetime(2024, 5, 1, tzinfo=UTC)),  # read on
        # numbers that are none, or longer than a date's: no date (not their last digits)
        ("去年十十月搬到杭州", None),
        ("十十天前", None),
        ("1500天前我搬到了杭州", None),
        ("12024年3月我搬到杭州", None),
        ("从99999年开始上班", None),
        ("一千零一天前", None),
    ],
)
def test_chinese_date_phrases(text: str, expected: datetime | None) -> None:
    assert resolve_date_phrase(text, NOW) == expected


_NUMERALS = "〇一二三四五六七八九"


def _chinese(number: int, *, digits_only: bool = False) -> str:
    if digits_only:
        return "".join(_NUMERALS[int(d)] for d in str(number))
    tens, ones = divmod(number, 10)
    return (
        ("" if tens <= 1 else _NUMERALS[tens])
        + ("十" if tens else "")
        + (_NUMERALS[ones] if ones or not tens else "")
    )


@settings(max_examples=thorough(200))
@given(
    day=st.dates(min_value=date(1900, 1, 1), max_value=date(2026, 11, 29)),
    form=st.sampled_from(["digits", "wide", "numerals"]),
    suffix=st.sampled_from(["日", "号"]),
    before=st.sampled_from(["", "我在", "大约"]),
    after=st.sampled_from(["", "入职了", "搬到上海"]),
)
def test_any_written_chinese_date_is_that_day(
    day: date, form: str, suffix: str, before: str, after: str
) -> None:
    """Property: a date written as 年/月/日 (Arabic, full-width or Chinese numerals) is that
    day, whatever is said around it."""
    if form == "digits":
        written = f"{day.year}年{day.month}月{day.day}{suffix}"
    elif form == "wide":
        written = f"{day.year}年{day.month}月{day.day}{suffix}".translate(
            str.maketrans("0123456789", "０１２３４５６７８９")
        )
    else:
        written = (
            f"{_chinese(day.year, digits_only=True)}年{_chinese(day.month)}月"
            f"{_chinese(day.day)}{suffix}"
        )
    assert resolve_date_phrase(before + written + after, NOW) == datetime(
        day.year, day.month, day.day, tzinfo=UTC
    )


_CHINESE_TEXT = st.text(
    st.one_of(
        st.sampled_from(list("年月日号周星期礼拜天前以来开始起从自上下这本去今明半个两十")),
        st.sampled_from(list(_NUMERALS + "0123456789０１２３")),
        st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
    ),
    max_size=20,
)


@settings(max_examples=thorough(300))
@given(text=_CHINESE_TEXT, days=st.integers(min_value=-40_000, max_value=2_000))
def test_any_chinese_text_gives_a_storable_moment_or_none_and_nothing_to_come_unannounced(
    text: str, days: int
) -> None:
    """Property: any text gives ``None`` or a moment the store can keep, in ``now``'s time
    zone, never an error; a moment after the day it was said only with a word that says
    something starts then."""
    now = NOW + timedelta(days=days)
    moment = resolve_date_phrase(text, now)
    if moment is None:
        return
    assert moment.tzinfo == now.tzinfo
    if moment > now.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1):
        assert any(word in text for word in ("从", "自", "开始", "起"))


_LOOKALIKES = ["起飞", "起诉", "起床", "起码", "起来", "起身"]


@settings(max_examples=thorough(200))
@given(
    st.sampled_from(["下周三", "明年", "下个月", "明年三月", "2099年", "下周一", "下下周一"]),
    st.sampled_from([*_LOOKALIKES, "以后", "之后", "起去"]),
    st.sampled_from(["", "我", "我独自", "我们各自", "他亲自"]),
    st.sampled_from(["", "去北京", "他", "。"]),
)
def test_words_that_only_look_like_a_start_date_nothing_to_come(
    date: str, word: str, before: str, after: str
) -> None:
    """Property: a date to come followed by a word that only begins with 起 (起飞, 起诉, …),
    by 以后 / 之后, or 一起 after a Monday, or preceded by 独自 / 各自 / 亲自, gives no moment
    to come."""
    if word == "起去" and not date.endswith("一"):
        word = "一起去"
    text = f"{before}{date}{word}{after}"
    moment = resolve_date_phrase(text, NOW)  # a Sunday: 下周一 is tomorrow, no moment to come
    tomorrow = NOW.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    assert moment is None or moment <= tomorrow, (text, moment)


def test_the_offline_extractor_dates_a_chinese_memory_from_the_phrase() -> None:
    candidates = RuleBasedExtractor().extract_text("我从去年五月开始住在杭州。", now=NOW)
    homes = [c for c in candidates if "杭州" in c.content]
    assert homes and all(c.valid_from == datetime(2025, 5, 1, tzinfo=UTC) for c in homes)


@settings(max_examples=thorough(200))
@given(days=st.integers(min_value=0, max_value=10**7), wide=st.booleans())
def test_a_count_of_days_ago_is_that_count_or_no_date(days: int, wide: bool) -> None:
    """Property: "N天前" is N days before, for the counts read (up to 999), and no date for a
    longer number -- never its last digits."""
    written = (
        str(days).translate(str.maketrans("0123456789", "０１２３４５６７８９"))
        if wide
        else str(days)
    )
    moment = resolve_date_phrase(f"{written}天前我搬到了杭州", NOW)
    if days <= 999:
        assert moment == datetime(2026, 11, 29, tzinfo=UTC) - timedelta(days=days)
    else:
        assert moment is None


@settings(max_examples=thorough(300))
@given(
    numeral=st.text(st.sampled_from(list(_NUMERALS + "两十")), min_size=1, max_size=4),
    unit=st.sampled_from(["天前", "个月前", "年前", "月", "年"]),
    before=st.sampled_from(["", "去年", "2024年", "从"]),
)
def test_any_run_of_chinese_numerals_is_a_number_or_no_date(
    numeral: str, unit: str, before: str
) -> None:
    """Property: a run of Chinese numerals that is no number ("十十") gives no date, never an
    error, through the date reader and the offline extractor."""
    text = f"我{before}{numeral}{unit}搬到了杭州"
    moment = resolve_date_phrase(text, NOW)
    assert moment is None or moment.tzinfo == UTC
    RuleBasedExtractor().extract_text(text, now=NOW)
