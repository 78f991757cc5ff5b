"""Chinese first-person statements for the offline extractor (pure, no I/O).

The slots are the English rules' own, so a fact said in Chinese and its update said in
English (or the reverse) consolidate as one:

=========================================================  =========================
statement                                                   slot
=========================================================  =========================
"我在X工作/上班/任职", "我就职于X"                                ``employer``
"我来自X", "我是X人"                                            ``hometown``
"我是(一名)X工程师/老师/…"                                       ``role``
"我不吃X", "我吃素", "我是素食者"                                  ``diet:<x>`` / ``diet``
"我不喜欢X", "我讨厌X"                                           ``preference:<x>``
"我会说X语"                                                    ``language:<x>``
"以后/今后/从现在起…", "请不要…", "永远不要…", "总是…"              ``instruction:<text>``
=========================================================  =========================

A clause that continues the sentence's subject without repeating it ("我叫张伟，住在杭州",
"我住在北京，在腾讯上班") gets its "我" back (:func:`zh_clauses`), as the English rules do
for "I live in Berlin and work at Siemens".

Example:
    ```python
    from langgraph_recall.extraction._rules_zh import zh_clauses

    assert zh_clauses("我叫张伟，住在杭州") == ["我叫张伟", "我住在杭州"]
    ```
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from langgraph_recall.extraction._sentences import clean
from langgraph_recall.extraction.types import MemoryCandidate

__all__ = ["ZH_BEFORE_VERB", "ZH_RULES", "ZH_SWITCH_RULES", "zh_clauses"]

_HAN = r"\u3400-\u4dbf\u4e00-\u9fff"
_NAME = rf"[{_HAN}A-Za-z0-9&·\-]"  # a company or place: Han, Latin letters, digits
_STOP = r"[^，。！？；,.!?;]"
_ROLES = (
    "工程师|程序员|开发者|设计师|产品经理|项目经理|经理|老师|教师|学生|研究生|博士生|医生|护士|律师|"
    "分析师|架构师|顾问|作家|研究员|科学家|教授|会计|艺术家|音乐家|厨师|实习生|创始人|记者|编辑"
)
_CONTINUING = re.compile(
    r"(?:现在|目前|也|还|已经|一直)*(?:住在|搬到|在|叫|喜欢|不喜欢|讨厌|不吃|吃素|是|来自|对|会说|就职于)"
)
_OTHER_SUBJECT = re.compile(r"(?:他|她|它|我们|你|他们|她们|大家|别人|[爸妈]妈?|老婆|老公|同事)")

ZH_BEFORE_VERB = (
    r"(?:[0-9０-９〇一二两三四五六七八九十年月日号周星期礼拜天前后以来开始起从自上下这本去今明半个份]"
    r"|现在|目前|如今|最近|已经|一直|刚|也|还|从来|真的|其实|确实|很|非常){0,14}?"
)
"""What may stand between "我" and the verb of a Chinese fact: when it became true ("我去年五月
搬到了杭州", "我从2021年开始住在上海", "我最近在腾讯工作") and adverbs ("也", "一直", "很") --
never another subject ("我妈妈住在北京")."""
Build = Callable[[re.Match[str]], Iterator[MemoryCandidate]]


def _fact(content: str, slot: str | None, kind: str = "semantic", importance: int = 6) -> Build:
    def build(match: re.Match[str]) -> Iterator[MemoryCandidate]:
        groups = match.groupdict()  # a rule with two phrasings captures "v" or "w"
        value = clean(groups.get("v") or groups.get("w") or "")
        if "{v}" in content and not value:
            return
        yield MemoryCandidate(
            content=content.format(v=value),
            kind=kind,
            importance=importance,
            slot=slot.format(v=value.lower()) if slot else None,
        )

    return build


ZH_RULES: list[tuple[re.Pattern[str], Build]] = [
    (
        re.compile(
            rf"我{ZH_BEFORE_VERB}(?:在(?P<v>{_NAME}{{2,20}}?)(?:公司|集团)?"
            rf"(?:工作|上班|任职|实习)|就职于(?P<w>{_NAME}{{2,20}}))"
        ),
        _fact("User works at {v}.", "employer", importance=7),
    ),
    (
        re.compile(
            rf"我{ZH_BEFORE_VERB}(?:来自(?P<v>[{_HAN}]{{2,10}})"
            rf"|是(?![个一很好坏大小老男女新穷富有])(?P<w>[{_HAN}]{{2,6}}?)人(?![员士类]))"
        ),
        _fact("User is from {v}.", "hometown"),
    ),
    (
        re.compile(
            rf"我{ZH_BEFORE_VERB}是(?:一名|一个|一位|个|名)?(?P<v>[{_HAN}A-Za-z]{{0,8}}?(?:{_ROLES}))"
        ),
        _fact("User is a {v}.", "role"),
    ),
    (
        re.compile(rf"我{ZH_BEFORE_VERB}(?:吃素|是素食者|是素食主义者|是吃素的)"),
        _fact("User is vegetarian.", "diet", importance=7),
    ),
    (
        re.compile(rf"我{ZH_BEFORE_VERB}(?:不吃|从不吃|不能吃|不碰)(?P<v>{_STOP}+)"),
        _fact("User doesn't eat {v}.", "diet:{v}", "preference", 7),
    ),
    (
        re.compile(rf"我{ZH_BEFORE_VERB}(?:不喜欢|讨厌)(?P<v>{_STOP}+)"),
        _fact("User doesn't like {v}.", "preference:{v}", "preference", 5),
    ),
    (
        re.compile(rf"我{ZH_BEFORE_VERB}(?:会说|说|讲)(?P<v>[{_HAN}]{{1,4}}[语文话])"),
        _fact("User speaks {v}.", "language:{v}", importance=5),
    ),
    (
        re.compile(
            r"(?:^|[，,])\s*(?:以后|今后|从现在起|从现在开始|从今以后)[，,]?\s*(?P<v>[^。！？!?]+)"
        ),
        _fact("User's instruction: {v}.", "instruction:{v}", "procedural", 7),
    ),
    (
        re.compile(r"^\s*(?:请)?(?P<v>(?:永远不要|不要|别|总是|一定要|务必)[^。！？!?]+)"),
        _fact("User's instruction: {v}.", "instruction:{v}", "procedural", 7),
    ),
]


_TOOL = r"[A-Za-z0-9.+#\-]+|[\u3400-\u4dbf\u4e00-\u9fff]{2,8}?"


def _switch(content: str, slot: str, kind: str = "semantic", family: str = "uses:*") -> Build:
    def build(match: re.Match[str]) -> Iterator[MemoryCandidate]:
        groups = match.groupdict()
        value = clean(groups.get("v") or "")
        old = clean(groups.get("old") or "")
        if not value:
            return
        yield MemoryCandidate(
            content=content.format(v=value),
            kind=kind,
            importance=6,
            slot=slot.format(v=value.lower()),
            replaces=(old,) if old else (family,),
        )

    return build


def _no_longer(match: re.Match[str]) -> Iterator[MemoryCandidate]:
    value = clean(match["v"])
    yield MemoryCandidate(
        content=f"User no longer uses {value}.",
        importance=5,
        slot=f"uses:{value.lower()}",
        replaces=(value,),
    )


ZH_SWITCH_RULES: list[tuple[re.Pattern[str], Build]] = [
    (  # 我从Django换成了FastAPI / 从Django改用FastAPI
        re.compile(
            rf"从(?P<old>{_TOOL})(?:换成了?|改用了?|转向了?|切换到了?|迁移到了?)(?P<v>{_TOOL})(?=$|[，。！？,.!?了])"
        ),
        _switch("User uses {v}.", "uses:{v}"),
    ),
    (  # 现在改用FastAPI / 我换成了FastAPI / 又用回Django了
        re.compile(
            rf"(?:现在|目前|已经|我)?(?:改用|换成了?|换用|切换到了?|又用回了?|用回了?)(?P<v>{_TOOL})(?=$|[，。！？,.!?了])"
        ),
        _switch("User uses {v}.", "uses:{v}"),
    ),
    (  # 我不用Python了 / 我不再用Python
        re.compile(rf"我(?:已经)?(?:不再用|不用|不再使用)(?P<v>{_TOOL})(?:了|$)"),
        _no_longer,
    ),
    (  # 我现在更喜欢X / 现在我喜欢X
        re.compile(
            r"(?:我现在|现在我|我如今)(?:更|比较)?(?:喜欢|偏好|倾向于)(?P<v>[^，。！？,.!?]+)"
        ),
        _switch("User prefers {v}.", "preference:{v}", "preference", "preference:*"),
    ),
]


def zh_clauses(sentence: str) -> list[str]:
    """Split a Chinese sentence at its commas, giving back an elided "我" to each clause."""
    if not re.search(f"[{_HAN}]", sentence):
        return [sentence]
    pieces = [p.strip() for p in re.split(r"[，,；;]", sentence) if p.strip()]
    if len(pieces) < 2:
        return [sentence]
    clauses: list[str] = [pieces[0]]
    subject_is_me = pieces[0].startswith("我")
    for piece in pieces[1:]:
        if piece.startswith("我"):
            subject_is_me = True
            clauses.append(piece)
        elif _OTHER_SUBJECT.match(piece):
            subject_is_me = False
            clauses.append(piece)
        elif subject_is_me and _CONTINUING.match(piece):
            clauses.append("我" + piece)
        else:
            clauses[-1] = clauses[-1] + "，" + piece
    return clauses
