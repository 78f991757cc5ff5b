"""Chinese date phrases ("去年五月", "上个月", "三年前", "2024年3月", "下周三开始") (pure).

:func:`read_zh` is :func:`~langgraph_recall.extraction.dates.resolve_date_phrase`'s
Chinese half: the moment the first Chinese date expression of a text names, truncated to the
start of its day, month or year, and whether the text says something *starts* then
(从下周三开始, 明年三月起) — or ``None``. Numbers are digits (half- or full-width) or
Chinese numerals (五, 十二, 两, 二〇二四). ``resolve_date_phrase`` keeps a moment after the day
the text was said only when something starts then: "下周三我要去北京" (an event to come) must
not hide the memory until next Wednesday.

Example:
    ```python
    from datetime import datetime, timezone

    from langgraph_recall.extraction._dates_zh import read_zh

    utc = timezone.utc
    now = datetime(2026, 11, 29, 12, 0, tzinfo=utc)  # a Sunday
    assert read_zh("我去年五月搬到了杭州", now) == (datetime(2025, 5, 1, tzinfo=utc), False)
    assert read_zh("上个月换了工作", now) == (datetime(2026, 10, 1, tzinfo=utc), False)
    assert read_zh("下周三开始上夜班", now) == (datetime(2026, 12, 2, tzinfo=utc), True)
    assert read_zh("下周三我要去北京", now) == (datetime(2026, 12, 2, tzinfo=utc), False)
    ```
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime, timedelta

__all__ = ["read_zh"]

_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6}
_DIGITS |= {"七": 7, "八": 8, "九": 9}
# a number starts where no other digit or numeral stands before it: "1500天前" is no "500天前",
# "一千零一天" no "零一天"
_ALONE = r"(?<![0-9零〇一二两三四五六七八九十百千万亿])"
_N = _ALONE + r"(?:\d{1,3}|[零〇一二两三四五六七八九十]{1,3})(?![0-9])"
_YEAR = r"(?P<y>" + _ALONE + r"(?:\d{4}|[零〇一二三四五六七八九]{4}))"
_WEEKDAYS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "日": 7, "天": 7}
_WEEK = r"(?:周|星期|礼拜)"
_START = r"(?:开始|起|以来|以后|之后)"

_FULL_DATE = re.compile(_YEAR + r"\s*年\s*(?P<m>" + _N + r")\s*月\s*(?P<d>" + _N + r")\s*[日号]")
_YEAR_MONTH = re.compile(_YEAR + r"\s*年\s*(?P<m>" + _N + r")\s*月")
_NAMED_YEAR_MONTH = re.compile(r"(?P<rel>大前年|前年|去年|今年|明年)\s*(?P<m>" + _N + r")\s*月")
_YEAR_ONLY = re.compile(_YEAR + r"\s*年(?![的代级报度款月前]|以前|之前)")  # "1000年前": ago
_NAMED_YEAR = re.compile(r"(?P<rel>大前年|前年|去年|今年|明年)")
_NAMED_MONTH = re.compile(r"(?P<rel>上上个月|上个月|上月|这个月|本月|下个月|下月)")
_NAMED_WEEK = re.compile(
    r"(?P<rel>上上|上个?|这个?|本|下个?)" + _WEEK + r"(?P<day>[一二三四五六日天])?"
)
_AGO = re.compile(
    r"(?P<count>" + _N + r"|半)\s*(?:个)?\s*(?P<unit>天|日|周|星期|礼拜|月|年)\s*(?:以前|之前|前)"
)
_NAMED_DAY = re.compile(r"(?P<rel>大前天|前天|昨天|昨日|昨晚|今天|今日|今早|今晚|今天早上)")
_MONTH_STARTS = re.compile(
    r"(?:(?P<pre>从|自)\s*(?P<m1>"
    + _N
    + r")\s*月份?|(?P<m2>"
    + _N
    + r")\s*月份?\s*"
    + _START
    + r")"
)

_YEAR_OFFSETS = {"大前年": -3, "前年": -2, "去年": -1, "今年": 0, "明年": 1}
_MONTH_OFFSETS = {"上上个月": -2, "上个月": -1, "上月": -1, "这个月": 0, "本月": 0}
_MONTH_OFFSETS |= {"下个月": 1, "下月": 1}
_DAY_OFFSETS = {"大前天": -3, "前天": -2, "昨天": -1, "昨日": -1, "昨晚": -1}
_UNIT_DAYS = {"天": 1, "日": 1, "周": 7, "星期": 7, "礼拜": 7}


def _number(text: str) -> int:
    """``12``, ``十二``, ``两``, ``二〇二四`` as an int (ValueError if it is none)."""
    if text.isdigit():
        return int(text)
    if text.count("十") > 1 or any(c not in _DIGITS and c != "十" for c in text):
        raise ValueError(f"not a number: {text!r}")  # "十十"
    if "十" in text:
        tens, _, ones = text.partition("十")
        if len(tens) > 1 or len(ones) > 1:
            raise ValueError(text)
        return (_DIGITS[tens] if tens else 1) * 10 + (_DIGITS[ones] if ones else 0)
    return int("".join(str(_DIGITS[c]) for c in text))


def _day(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _month(year: int, month: int, like: datetime) -> datetime:
    return datetime(year, month, 1, tzinfo=like.tzinfo)


def _months_from(now: datetime, offset: int) -> datetime:
    months = now.year * 12 + (now.month - 1) + offset
    return _month(months // 12, months % 12 + 1, now)


_STARTS_BEFORE = re.compile(r"(?:从|(?<![独各亲擅来])自)\s*$")
"""从 or 自 right before the date (自 not of 独自, 各自, 亲自, 擅自, 来自)."""
_STARTS_AFTER = re.compile(r"\s*(?:的)?(?:开始|起(?![飞诉床码身来草点源因义航跑早止落伏]))")
"""开始 or 起 right after the date (起 not of 起飞, 起诉, 起床, 起码, 起来, …). 以后 / 之后
("after then") tell of something to come, not of something that starts: not here."""


def _starts_here(text: str, match: re.Match[str]) -> bool:
    """The phrase says something starts then: 从/自 before it, 开始/起 right after it; a date
    ending in 一 before 起 reads as 一起 ("together": 下周一起去) and says nothing starts."""
    before = text[max(0, match.start() - 3) : match.start()]
    after = text[match.end() : match.end() + 4]
    if _STARTS_BEFORE.search(before):
        return True
    if match.group(0).endswith("一") and after.startswith("起"):
        return False
    return _STARTS_AFTER.match(after) is not None


def read_zh(text: str, now: datetime) -> tuple[datetime, bool] | None:
    """The moment the first Chinese date expression in ``text`` names, and whether the text
    says something starts then; or ``None``.

    Raises:
        ValueError: a date that does not exist (2024年2月30日) or a numeral that is none;
            :func:`~langgraph_recall.extraction.dates.resolve_date_phrase` reads both as
            no date.
    """
    text = unicodedata.normalize("NFKC", text)
    found = _first(text, now)
    if found is None:
        return None
    moment, match = found
    return moment, _starts_here(text, match)


def _first(text: str, now: datetime) -> tuple[datetime, re.Match[str]] | None:
    if match := _FULL_DATE.search(text):
        year, month, day = _number(match["y"]), _number(match["m"]), _number(match["d"])
        return datetime(year, month, day, tzinfo=now.tzinfo), match
    if match := _YEAR_MONTH.search(text):
        return _month(_number(match["y"]), _number(match["m"]), now), match
    if match := _NAMED_YEAR_MONTH.search(text):
        year = now.year + _YEAR_OFFSETS[match["rel"]]
        return _month(year, _number(match["m"]), now), match
    if match := _YEAR_ONLY.search(text):
        return datetime(_number(match["y"]), 1, 1, tzinfo=now.tzinfo), match
    if match := _NAMED_MONTH.search(text):
        return _months_from(now, _MONTH_OFFSETS[match["rel"]]), match
    if match := _NAMED_WEEK.search(text):
        rel = match["rel"]
        weeks = -2 if rel == "上上" else -1 if rel.startswith("上") else 1 if rel[0] == "下" else 0
        if match["day"] is None:  # "上周": a week back, as "last week"
            return _day(now + timedelta(weeks=weeks)) if weeks else _day(now), match
        monday = _day(now) - timedelta(days=now.weekday())
        return monday + timedelta(weeks=weeks, days=_WEEKDAYS[match["day"]] - 1), match
    if match := _AGO.search(text):
        count, unit = match["count"], match["unit"]
        if count == "半":
            return (
                _months_from(now, -6) if unit == "年" else _day(now - timedelta(days=15))
            ), match
        number = _number(count)
        if unit == "月":
            return _months_from(now, -number), match
        if unit == "年":
            return _month(now.year - number, now.month, now), match
        return _day(now - timedelta(days=number * _UNIT_DAYS[unit])), match
    if match := _NAMED_YEAR.search(text):
        return datetime(now.year + _YEAR_OFFSETS[match["rel"]], 1, 1, tzinfo=now.tzinfo), match
    if match := _NAMED_DAY.search(text):
        return _day(now + timedelta(days=_DAY_OFFSETS.get(match["rel"], 0))), match
    if match := _MONTH_STARTS.search(text):
        month = _number(match["m1"] or match["m2"])
        # a month after this one: the one to come (从十二月开始), unless it is "since" (以来)
        upcoming = month > now.month and not match.group(0).endswith("以来")
        year = now.year if month <= now.month or upcoming else now.year - 1
        return _month(year, month, now), match
    return None
