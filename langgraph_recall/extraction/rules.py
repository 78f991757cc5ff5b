"""``RuleBasedExtractor``: a deterministic, offline extractor for first-person facts.

This is **not** an LLM. It recognises a documented set of English and Chinese
first-person statements in the user's messages and turns each into a
:class:`~langgraph_recall.extraction.types.MemoryCandidate` with a ``slot``, so that
consolidation is deterministic too (same subject + slot ⇒ the newer fact supersedes):

========================================================  ==========================
statement                                                  slot
========================================================  ==========================
"my name is X", "call me X", "I'm called X", "我叫X"        ``name``
"I live in X", "I moved to X", "I'm based in X",           ``location`` (one current
"I work in <City>", "我住在X", "我搬到X"                     city)
"I'm from X", "I grew up in X"                             ``hometown``
"I work at/for X", "I joined X", "I'm employed at X"        ``employer``
"I'm a/an <role>", "I work as a <role>"                     ``role``
"I use / code in / work with X, Y and Z", "my stack is…"    ``uses:<item>``
"I love/like/enjoy/prefer/hate/dislike X", "我喜欢X"          ``preference:<x>``
"my favorite <thing> is X"                                 ``favorite:<thing>``
"I'm allergic to X", "I have a X allergy", "我对X过敏"        ``allergy:<x>``
"I'm vegetarian/vegan", "I don't eat X"                     ``diet`` / ``diet:<x>``
"I'm N years old", "my birthday is X"                      ``age`` / ``birthday``
"I speak X"                                                ``language:<x>``
"always/never …", "from now on …" (instructions)            ``instruction:<text>``
"remember (that) …"                                        none (free-form)
========================================================  ==========================

Switches say what they replace (``MemoryCandidate.replaces``), so consolidation closes the
earlier memory (kept as history) even though its slot differs: "I switched from Django to
FastAPI", "I use FastAPI instead of Django" (the one named), "I switched to FastAPI", "now I
use FastAPI", "I use Django again" (the newest ``uses:`` memory), "I no longer use Django",
"I now prefer tabs" / "I prefer tabs over spaces" (the newest preference / the one named);
in Chinese "我从Django换成了FastAPI", "现在改用FastAPI", "我不用Python了", "我现在更喜欢X". A
new instruction closes the earlier instructions on the same topic (newest wins).

Chinese statements beyond the ones above (我在X工作, 我来自X, 我是X工程师, 我不吃X,
以后…) are listed in :mod:`langgraph_recall.extraction._rules_zh`; a clause that drops
its "我" ("我叫张伟，住在杭州") is read with it. Every Chinese rule reads past a time word
or adverb between "我" and its verb ("我去年在腾讯工作"), and every value loses its
sentence-final particles ("我叫李雷呢" stores 李雷).

Stated dates in the same sentence ("since last May", "in 2021") set ``valid_from``; a date
still to come only with a start phrase ("starting 2030", "下周三开始").
Consolidation uses :func:`~langgraph_recall.extraction.consolidation.rule_decisions`:
repeat → NOOP, same slot → INVALIDATE (+ADD), else ADD.

Example:
    ```python
    from datetime import datetime, timezone

    from langchain_core.messages import HumanMessage

    from langgraph_recall.extraction import RuleBasedExtractor

    now = datetime(2026, 11, 29, tzinfo=timezone.utc)
    found = RuleBasedExtractor().extract([HumanMessage("My name is Zhang San.")], now=now)
    assert found[0].content == "User's name is Zhang San." and found[0].slot == "name"
    ```
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime

from langchain_core.messages import BaseMessage, HumanMessage

from langgraph_recall.extraction._names import (
    UPPER,
    greeting_only,
    introductions,
    name_value,
    plain_text,
)
from langgraph_recall.extraction._rules_zh import ZH_BEFORE_VERB as _ZH_BEFORE_VERB
from langgraph_recall.extraction._rules_zh import ZH_RULES, ZH_SWITCH_RULES, zh_clauses
from langgraph_recall.extraction._sentences import ARTICLE as _ARTICLE
from langgraph_recall.extraction._sentences import ZH_PARTICLES as _ZH_PARTICLES
from langgraph_recall.extraction._sentences import clauses as _clauses
from langgraph_recall.extraction._sentences import clean as _clean
from langgraph_recall.extraction._sentences import is_goal as _is_goal
from langgraph_recall.extraction._sentences import shield as _shield
from langgraph_recall.extraction._sentences import situate as _situate
from langgraph_recall.extraction._sentences import slug as _slug
from langgraph_recall.extraction._sentences import their as _their
from langgraph_recall.extraction._sentences import third_person as _third_person
from langgraph_recall.extraction.consolidation import rule_decisions
from langgraph_recall.extraction.dates import resolve_date_phrase
from langgraph_recall.extraction.prefilter import split_sentences
from langgraph_recall.extraction.types import (
    ConsolidationDecision,
    ExistingMemory,
    MemoryCandidate,
)

__all__ = ["RuleBasedExtractor", "message_text"]

_PROPER = (  # capitalised words in any script ("Örebro", "Île-de-France", "Łódź") or CJK
    rf"(?:the\s+)?(?P<v>[{UPPER}\u4e00-\u9fff][\w&'\-]*"
    rf"(?:\s+(?:(?:of|de|la|du|von|van)\s+)?[{UPPER}][\w&'\-]*)*)"
)
_FREE = r"(?P<v>[^,;:!?。]+?)"
_END = r"\s*(?:[,;:!?。]|\.(?=\s|$)|$|\s+(?:because|since|but|as|when|for|from|now|too)\b)"
_LIST = r"(?P<v>[^;:!?。]+?)"
_LIST_END = r"\s*(?:[;:!?。]|\.(?=\s|$)|$|\s+(?:because|but|when|for|since)\b)"
_PREFER_END = (  # a preference keeps its reason ("... over X due to ...", "... to keep ...")
    r"\s*(?:[;:!?。]|\.(?=\s|$)|$|,\s*(?=(?i:how|can|could|what|which|so|but|and i|"
    r"please|while|is there|do you|would)\b)|\s+(?i:but|so|when)\b)"
)
_ROLES = (
    r"engineer|developer|designer|manager|scientist|teacher|student|doctor|nurse|lawyer|"
    r"analyst|architect|consultant|writer|researcher|programmer|founder|ceo|cto|professor|"
    r"accountant|artist|musician|chef|product owner|data scientist|devops|sre|intern"
)
_TECH_WORDS = [
    "python",
    "go",
    "golang",
    "rust",
    "java",
    "javascript",
    "typescript",
    "kotlin",
    "swift",
    "ruby",
    "php",
    "scala",
    "elixir",
    "c",
    "c++",
    "c#",
    "sql",
    "postgres",
    "postgresql",
    "mysql",
    "redis",
    "kafka",
    "docker",
    "kubernetes",
    "react",
    "vue",
    "angular",
    "django",
    "flask",
    "fastapi",
    "langgraph",
    "langchain",
    "pytorch",
    "tensorflow",
    "numpy",
    "pandas",
    "aws",
    "gcp",
    "azure",
    "linux",
]
_VERBS = {
    "love": "loves",
    "adore": "adores",
    "like": "likes",
    "really like": "really likes",
    "enjoy": "enjoys",
    "prefer": "prefers",
    "hate": "hates",
    "dislike": "dislikes",
    "don't like": "doesn't like",
    "do not like": "does not like",
    "can't stand": "can't stand",
}


def message_text(message: BaseMessage) -> str:
    """The plain text of a message (text blocks of multi-part content joined).

    Example:
        ```python
        from langchain_core.messages import HumanMessage

        from langgraph_recall.extraction.rules import message_text

        assert message_text(HumanMessage("hi")) == "hi"
        ```
    """
    content = message.content
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return " ".join(parts)


Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], Iterator[MemoryCandidate]]]


def _one(
    content: str, slot: str | None, kind: str = "semantic", importance: int = 6
) -> Callable[[re.Match[str]], Iterator[MemoryCandidate]]:
    def build(match: re.Match[str]) -> Iterator[MemoryCandidate]:
        value = _clean(match["v"])
        if not value:
            return
        yield MemoryCandidate(
            content=content.format(v=value),
            kind=kind,
            importance=importance,
            slot=slot.format(v=_slug(value)) if slot else None,
        )

    return build


def _named(value: str) -> Iterator[MemoryCandidate]:
    name = name_value(_clean(value))
    if name is not None:  # "call me Maybe", "my name is Not Important": no name
        yield MemoryCandidate(content=f"User's name is {name}.", importance=8, slot="name")


def _preference(match: re.Match[str]) -> Iterator[MemoryCandidate]:
    verb = _VERBS[re.sub(r"\s+", " ", match["verb"].lower())]
    value = _clean(match["v"])
    if not value or value.lower() in {"it", "that", "this", "you", "them"}:
        return
    yield MemoryCandidate(
        content=f"User {verb} {value}.",
        kind="preference",
        importance=5,
        slot=f"preference:{_slug(value)}",
    )


_QUESTION_TAIL = re.compile(
    r",\s*(?:so\s+|and\s+|but\s+)?(?=(?i:how|can|could|what|which|would|will|should|do you|"
    r"is there|are there|any)\b)"
)
_ASKS = re.compile(
    r"(?i)^\W*(?:what|which|who|where|when|why|how|do|does|did|is|are|am|can|could|would|"
    r"will|should|shall)\b"
)


_ZH_QUESTION = re.compile(r"[吗么][了啦呢吧啊呀嘛]*[\s.。!！]*$")
"""A Chinese sentence that asks, without a question mark ("我喜欢喝茶了吗")."""


def _statement_before_question(sentence: str) -> str | None:
    """The statement a question opens with ("I prefer X, how do I start?" -> "I prefer
    X."), or ``None`` when the whole sentence asks."""
    head = _QUESTION_TAIL.split(sentence, maxsplit=1)
    if len(head) < 2 or _ASKS.match(head[0]):
        return None
    return head[0].rstrip(" ,") + "."


def _preferred(match: re.Match[str]) -> Iterator[MemoryCandidate]:
    """A stated preference, kept whole (commas included) as one ``preference`` memory ("it":
    named by its sentence, see :func:`~langgraph_recall.extraction._sentences.situate`)."""
    value = _clean(match["v"])
    if not value or value.lower() in {"you", "not"}:
        return
    yield MemoryCandidate(
        content=f"User prefers {value}.",
        kind="preference",
        importance=6,
        slot=f"preference:{_slug(_REASON.sub('', value))}",  # the thing preferred, not why
    )


# What a kept thing is kept at: a bound or a quality ("under 2.5MB", "lightweight"); "keep
# track of", "keep in mind", "keep getting errors" state no constraint.
_KEPT_AT = re.compile(
    r"(?i)\b(?:under|below|within|less than|at most|no more than|above|at least|lightweight|light"
    r"|small|simple|minimal|lean|fast|responsive|clean|secure|readable|maintainable|easy|low"
    r"|consistent|short|private|free|accessible|stable|up to date)\b"
)


def _kept(match: re.Match[str]) -> Iterator[MemoryCandidate]:
    """A constraint the user keeps to ("keep my app under 2.5MB"), as a preference."""
    value = _clean(match["v"])
    if not _KEPT_AT.search(value) or re.match(r"(?i)(?:track|in mind|up|getting|on)\b", value):
        return
    yield MemoryCandidate(
        content=f"User wants to keep {_their(value)}.",
        kind="preference",
        importance=5,
        slot=f"goal:keep {_slug(value)}",
    )


def _tech(match: re.Match[str]) -> Iterator[MemoryCandidate]:
    items = re.split(r"\s*(?:,|/|\band\b|&)\s*", _clean(match["v"]))
    for item in items:
        item = _ARTICLE.sub("", item.strip())
        if item and (item[0].isupper() or item.lower() in _TECH_WORDS):
            yield MemoryCandidate(
                content=f"User uses {item}.", importance=5, slot=f"uses:{_slug(item)}"
            )


def _i(pattern: str) -> str:
    """Case-insensitive lead words, case-sensitive captures."""
    return "(?i:" + pattern + ")"


_ITEM = r"(?P<v>[\w.+#\-]+(?:\s+[A-Z][\w.+#\-]*)?)"
_OLD = r"(?P<old>[\w.+#\-]+(?:\s+[A-Z][\w.+#\-]*)?)"


def _switch(match: re.Match[str]) -> Iterator[MemoryCandidate]:
    """ "I switched from Django to FastAPI", "now I use FastAPI", "I use Django again"."""
    value = _clean(match["v"])
    if not value or value.lower() in {"it", "that", "this", "them", "a", "the"}:
        return
    groups = match.groupdict()
    old = (groups.get("old") or "").strip()
    yield MemoryCandidate(
        content=f"User uses {value}.",
        importance=6,
        slot=f"uses:{_slug(value)}",
        replaces=(old,) if old else ("uses:*",),
    )


def _no_longer(match: re.Match[str]) -> Iterator[MemoryCandidate]:
    value = _clean(match["v"])
    yield MemoryCandidate(
        content=f"User no longer uses {value}.",
        importance=5,
        slot=f"uses:{_slug(value)}",
        replaces=(value,),
    )


_REASON = re.compile(
    r"(?i)\s+(?:because|since|as|due\s+to|given|so\s+that|to\s+(?:keep|make|avoid|stay|reduce"
    r"|speed|save|get|ensure)|for\s+(?:its|their|the|better))\b.*$"
)


def _preference_switch(match: re.Match[str]) -> Iterator[MemoryCandidate]:
    """ "I prefer X over Y (due to ...)": the whole statement, replacing Y (its reason
    is not part of what it replaces); "I now prefer X": the newest preference."""
    value = _clean(match["v"])
    groups = match.groupdict()
    rest = _clean(groups.get("old") or "")
    old = _REASON.sub("", rest).strip()
    said = f"{value} {' '.join(groups['joint'].lower().split())} {rest}" if rest else value
    yield MemoryCandidate(
        content=f"User prefers {said}.",
        kind="preference",
        importance=6,
        slot=f"preference:{_slug(value)}",
        replaces=(old,) if old else ("preference:*",),
    )


SWITCH_RULES: list[Rule] = [
    (
        re.compile(
            r"\b"
            + _i(r"i (?:have |'ve )?(?:just |recently )?(?:switched|changed|migrated|moved over)")
            + r"\s+"
            + _i("from")
            + r"\s+"
            + _OLD
            + r"\s+"
            + _i("to")
            + r"\s+"
            + _ITEM
        ),
        _switch,
    ),
    (
        re.compile(
            r"\b"
            + _i(
                r"i (?:have |'ve )?(?:just |recently |now )?(?:switched|migrated|moved over) to|"
                r"(?:now|these days),? i (?:use|code in|work with)|i now use|i(?:'m| am) back to"
            )
            + r"\s+"
            + _ITEM
        ),
        _switch,
    ),
    (
        re.compile(r"\b" + _i(r"i use") + r"\s+" + _ITEM + r"\s+" + _i(r"(?:now|again)\b")),
        _switch,
    ),
    (
        re.compile(
            r"\b"
            + _i(r"i (?:now )?use")
            + r"\s+"
            + _ITEM
            + r"\s+"
            + _i("instead of")
            + r"\s+"
            + _OLD
        ),
        _switch,
    ),
    (
        re.compile(r"\b" + _i(r"i no longer use") + r"\s+(?P<v>[\w.+#\-]+)"),
        _no_longer,
    ),
    (
        re.compile(
            r"\b" + _i(r"i don't use|i do not use") + r"\s+(?P<v>[\w.+#\-]+)\s+" + _i(r"any ?more")
        ),
        _no_longer,
    ),
    (
        re.compile(
            r"\b"
            + _i(r"i (?:now prefer|prefer)")
            + r"\s+"
            + r"(?P<v>[^,;.!?。]+?)"
            + r"\s+"
            + _i(r"(?P<joint>instead of|rather than|over)")
            + r"\s+"
            + r"(?P<old>[^,;.!?。]+)"
        ),
        _preference_switch,
    ),
    (
        re.compile(
            r"\b" + _i(r"(?:now|these days),? i prefer|i now prefer") + r"\s+(?P<v>[^,;.!?。]+)"
        ),
        _preference_switch,
    ),
]

_RULES: list[Rule] = [
    (
        re.compile(
            r"\b"
            + _i(r"my name is|my name's|call me|i'm called|i am called|people call me")
            + r"\s+"
            + _PROPER
        ),
        lambda m: _named(m["v"]),
    ),
    (
        re.compile(r"(?:我叫|我的名字是|我的名字叫)(?P<v>[\u4e00-\u9fffA-Za-z]+)"),
        _one("User's name is {v}.", "name", importance=8),
    ),
    (
        re.compile(
            r"\b"
            + _i(
                r"i (?:just |recently |have |'ve )?(?:moved|relocated) to|"
                r"i(?:'ve| have)? (?:just |recently )?moved to|"
                r"i (?:now |currently )?live in|i'm (?:now )?living in|i am (?:now )?living in|"
                r"i'm based in|i am based in|i (?:now |currently )?work in|i'm working in|"
                r"i(?:'ve| have) (?:been )?(?:lived|living) in"
            )
            + r"\s+"
            + _PROPER
        ),
        _one("User lives in {v}.", "location", importance=7),
    ),
    (
        re.compile(  # "我现在在上海工作" says where the user works, not lives
            r"我" + _ZH_BEFORE_VERB + r"(?:住在|搬到了?|搬去了?|现在在"
            r"(?![\u4e00-\u9fff]{2,}?(?:工作|上班|任职|实习|读书)))"
            r"(?P<v>[\u4e00-\u9fff]{2,}?)"
            rf"(?=[{_ZH_PARTICLES}~～…]*(?:$|[，。！？,.!?；;\s]))"
        ),
        _one("User lives in {v}.", "location", importance=7),
    ),
    (
        re.compile(r"\b" + _i(r"i'm from|i am from|i grew up in|i was born in") + r"\s+" + _PROPER),
        _one("User is from {v}.", "hometown", importance=6),
    ),
    (
        re.compile(
            r"\b"
            + _i(
                r"i (?:now |currently |still )?work (?:at|for)|i'm (?:now )?working (?:at|for)|"
                r"i(?:'ve| have) (?:been )?work(?:ed|ing) (?:at|for)|"
                r"i am (?:now )?working (?:at|for)|i (?:just |recently |have |'ve )?joined|"
                r"i(?:'ve| have)? (?:just |recently )?joined|i'm employed (?:at|by)|"
                r"i am employed (?:at|by)|i started (?:a new job )?at"
            )
            + r"\s+"
            + _PROPER
        ),
        _one("User works at {v}.", "employer", importance=7),
    ),
    (
        re.compile(
            r"\b"
            + _i(r"i'm an?|i am an?|i work as an?|my (?:role|job|title) is(?: an?)?")
            + r"\s+(?P<v>(?:[\w\-+#]+\s+){0,3}?(?i:"
            + _ROLES
            + r"))\b"
        ),
        _one("User is a {v}.", "role", importance=6),
    ),
    (
        re.compile(
            r"\b"
            + _i(
                r"i (?:mostly |mainly |usually )?(?:use|code in|program in|work with|develop in)|"
                r"my (?:tech )?stack is|our (?:tech )?stack is|we (?:mostly |mainly )?use"
            )
            + r"\s+"
            + _LIST
            + _LIST_END
        ),
        _tech,
    ),
    (
        re.compile(
            r"\b"
            + _i(
                r"i (?P<verb>really like|love|adore|like|enjoy|hate|dislike|"
                r"don't like|do not like|can't stand)"
            )
            + r"\s+"
            + _FREE
            + _END
        ),
        _preference,
    ),
    (  # "I prefer simple, minimal dependencies, how can I ...": a list may hold commas
        re.compile(
            r"\b"
            + _i(
                r"i (?:really |strongly |generally |usually |always )?prefer|"
                r"my preference (?:is|for)(?: to)?|i(?:'d| would) rather"
            )
            + r"\s+"
            + _LIST
            + _PREFER_END
        ),
        lambda m: _preferred(m),
    ),
    (  # "I'm trying to keep my bundle size under 100KB by using ...": a standing constraint
        re.compile(
            r"\b"
            + _i(
                r"(?:i(?:'m| am) trying|i (?:want|need|try|aim|'d like|would like|have)|"
                r"i'm aiming|i am aiming|we (?:want|need))\s+to\s+keep"
            )
            + r"\s+"
            + _LIST
            + _PREFER_END
        ),
        lambda m: _kept(m),
    ),
    (
        re.compile(r"我(?:一直|更|比较)?(?:偏好|偏爱|倾向于|更喜欢|宁愿|宁可)(?P<v>[^。！？!?]+)"),
        _one("User prefers {v}.", "preference:{v}", "preference", 6),
    ),
    (
        re.compile(
            r"我(?:想|希望|要|需要|尽量|一直|在努力)(?:把|让)?(?P<v>[^，。！？,!?]*?(?:保持|控制)[^，。！？,!?]+)"
        ),
        _one("User wants to keep {v}.", "goal:{v}", "preference", 5),
    ),
    (
        # "我现在喜欢X" is a switch (ZH_SWITCH_RULES), not also a plain like
        re.compile(r"我(?!现在|如今)" + _ZH_BEFORE_VERB + r"喜欢(?P<v>[^，。！？,.!?]+)"),
        _one("User likes {v}.", "preference:{v}", "preference", 5),
    ),
    (
        re.compile(r"\b" + _i(r"my favou?rite (?P<thing>[a-z ]+?) is") + r"\s+" + _FREE + _END),
        lambda m: iter(
            [
                MemoryCandidate(
                    content=f"User's favorite {m['thing'].strip()} is {_clean(m['v'])}.",
                    kind="preference",
                    importance=5,
                    slot=f"favorite:{_slug(m['thing'])}",
                )
            ]
        ),
    ),
    (
        re.compile(r"\b" + _i(r"i'm allergic to|i am allergic to") + r"\s+" + _FREE + _END),
        lambda m: _allergy(m),
    ),
    (
        re.compile(r"\b" + _i(r"i have an?") + r"\s+(?P<v>[\w\- ]+?)\s+" + _i("allergy") + r"\b"),
        lambda m: _allergy(m),
    ),
    (
        re.compile(r"我对(?P<v>[^，。！？,.!?]+)过敏"),
        _one("User is allergic to {v}.", "allergy:{v}", "semantic", 9),
    ),
    (
        re.compile(
            r"\b" + _i(r"i'm (?:a )?|i am (?:a )?") + r"(?P<v>(?i:vegetarian|vegan|pescatarian))\b"
        ),
        _one("User is {v}.", "diet", importance=7),
    ),
    (
        re.compile(r"\b" + _i(r"i don't eat|i do not eat|i never eat") + r"\s+" + _FREE + _END),
        _one("User doesn't eat {v}.", "diet:{v}", "preference", 7),
    ),
    (
        re.compile(r"\b" + _i(r"i'm|i am") + r"\s+(?P<v>\d{1,3})\s+" + _i(r"years old")),
        _one("User is {v} years old.", "age", importance=5),
    ),
    (
        re.compile(r"\b" + _i(r"my birthday is(?: on)?") + r"\s+" + _FREE + _END),
        _one("User's birthday is {v}.", "birthday", importance=6),
    ),
    (
        re.compile(
            r"\b"
            + _i(
                r"my (?P<thing>e-?mail(?: address)?|phone(?: number)?|mobile(?: number)?|"
                r"(?:home )?address|credit card(?: number)?|card number|api key|password|"
                r"passport number|social security number|ssn) is"
            )
            + r"\s+"
            + _FREE
            + _END
        ),
        lambda m: iter(
            [
                MemoryCandidate(
                    content=f"User's {m['thing'].lower()} is {_clean(m['v'])}.",
                    importance=6,
                    slot=f"contact:{_slug(m['thing'])}",
                )
            ]
        ),
    ),
    (
        re.compile(r"\b" + _i(r"i (?:also )?speak") + r"\s+" + _PROPER),
        _one("User speaks {v}.", "language:{v}", importance=5),
    ),
    (
        re.compile(r"^\s*" + _i(r"(?:please\s+)?(?P<v>(?:always|never(?!\s+mind))\s+[^.!?]+)")),
        _one("User's instruction: {v}.", "instruction:{v}", "procedural", 7),
    ),
    (
        re.compile(_i(r"\bfrom now on,?\s+(?P<v>[^.!?]+)")),
        _one("User's instruction: {v}.", "instruction:{v}", "procedural", 7),
    ),
]

_REMEMBER = re.compile(r"(?i)\bremember(?: that)?[:,]?\s+(?P<v>.+?)[.!]?$")


def _allergy(match: re.Match[str]) -> Iterator[MemoryCandidate]:
    value = _clean(match["v"])
    value = re.sub(r"(?i)\s+allergy$", "", value)
    if not value:
        return
    yield MemoryCandidate(
        content=f"User is allergic to {value}.",
        importance=9,
        slot=f"allergy:{_slug(value)}",
    )


class RuleBasedExtractor:
    """Deterministic offline extractor and consolidator (see the module docs for the rules).

    Not an LLM: ``uses_llm`` is ``False``, so the ``extract`` node counts no model calls.

    Args:
        min_importance: Candidates below this importance are dropped.

    Example:
        ```python
        from datetime import datetime, timezone

        from langchain_core.messages import HumanMessage

        from langgraph_recall.extraction.rules import RuleBasedExtractor

        ex = RuleBasedExtractor()
        now = datetime(2026, 11, 29, tzinfo=timezone.utc)
        facts = ex.extract([HumanMessage("I work in Shanghai and I love Python.")], now=now)
        assert [f.slot for f in facts] == ["location", "preference:python"]
        ```
    """

    uses_llm = False

    def __init__(self, *, min_importance: int = 1) -> None:
        self.min_importance = min_importance

    def extract_text(self, text: str, *, now: datetime) -> list[MemoryCandidate]:
        """Candidates found in one user message.

        PII in the message is found on the whole text first and kept whole through the
        rules (sentence and clause splitting, value captures), so a candidate carries an
        address like ``zoë@пример。рф`` entirely — for the PII filter to see — never a
        piece cut at its ideographic full stop.
        """
        shielded, restore = _shield(plain_text(text))
        return [restore(c) for c in self._extract_plain(shielded, now=now)]

    def _extract_plain(self, text: str, *, now: datetime) -> list[MemoryCandidate]:
        found: list[MemoryCandidate] = []
        opening = True  # "This is Gina" / "Gina here" introduce only at the start
        for sentence in split_sentences(text):
            if sentence.endswith(("?", "？")) or _ZH_QUESTION.search(sentence):
                opening = False
                statement = _statement_before_question(sentence)
                if statement is None:
                    continue
                sentence = statement
            stated = resolve_date_phrase(sentence, now)
            before = len(found)
            clauses = [part for clause in _clauses(sentence) for part in zh_clauses(clause)]
            previous = len(found)  # where the previous clause's candidates start
            for position, clause in enumerate(clauses):
                here: list[MemoryCandidate] = []
                for pattern, build in (*SWITCH_RULES, *ZH_SWITCH_RULES, *_RULES, *ZH_RULES):
                    for match in pattern.finditer(clause):
                        here.extend(build(match))
                here, absorbed = _situate(here, clauses, position)
                if absorbed:  # "I'm trying to keep X, so I prefer Y": one preference, with X
                    found[previous:] = [c for c in found[previous:] if not _is_goal(c)]
                previous = len(found)
                found.extend(here)
                for name in introductions(clause, opening=opening and position == 0):
                    found.extend(_named(name))
            opening = greeting_only(sentence)
            remember = _REMEMBER.search(sentence) if len(found) == before else None
            if remember is not None:
                found.append(
                    MemoryCandidate(
                        content=_third_person(remember["v"]).rstrip(".") + ".", importance=6
                    )
                )
            if stated is not None:
                found[before:] = [dataclasses.replace(c, valid_from=stated) for c in found[before:]]
        switched = [c.content.rstrip(".") + " " for c in found if c.replaces]
        found = [  # "I use Django again": the switch, not "User uses Django again."
            c for c in found if c.replaces or not any(c.content.startswith(p) for p in switched)
        ]
        unique: dict[str, MemoryCandidate] = {}
        for candidate in found:
            if candidate.importance >= self.min_importance:
                unique.setdefault(candidate.content.lower(), candidate)
        return list(unique.values())

    def extract(self, messages: Sequence[BaseMessage], *, now: datetime) -> list[MemoryCandidate]:
        """Candidates from the human messages among ``messages``."""
        found: list[MemoryCandidate] = []
        for message in messages:
            if isinstance(message, HumanMessage):
                found.extend(self.extract_text(message_text(message), now=now))
        return found

    async def aextract(
        self, messages: Sequence[BaseMessage], *, now: datetime
    ) -> list[MemoryCandidate]:
        """Same as :meth:`extract` (no I/O)."""
        return self.extract(messages, now=now)

    def consolidate(
        self, candidates: Sequence[MemoryCandidate], existing: Sequence[ExistingMemory]
    ) -> list[ConsolidationDecision]:
        """Rule consolidation: repeat → NOOP, same subject/slot → INVALIDATE, else ADD."""
        return rule_decisions(candidates, existing)

    async def aconsolidate(
        self, candidates: Sequence[MemoryCandidate], existing: Sequence[ExistingMemory]
    ) -> list[ConsolidationDecision]:
        """Same as :meth:`consolidate` (no I/O)."""
        return rule_decisions(candidates, existing)
