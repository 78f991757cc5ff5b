"""How the offline rules read a sentence before and after matching it (pure).

Values cleaned of trailing filler (:func:`clean`) and keyed (:func:`slug`); first-person text
in the third person (:func:`third_person`, :func:`their`); a sentence split into first-person
clauses with an elided subject restored (:func:`clauses`); a clause's preferences read with
the clauses before it -- what "it" names, the aim that is their reason (:func:`situate`); PII
spans shielded from the rules' patterns and put back into what they found (:func:`shield`).
:mod:`~langgraph_recall.extraction.rules` holds the rules themselves.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from langgraph_recall.extraction.pii import find_pii
from langgraph_recall.extraction.types import MemoryCandidate

__all__ = [
    "ARTICLE",
    "clauses",
    "clean",
    "is_goal",
    "shield",
    "situate",
    "slug",
    "their",
    "third_person",
]

_TRAILING = re.compile(
    r"(?i)\s+(?:now|too|as well|a lot|very much|so much|anymore|lately|at work|at home|"
    r"these days|every day|on weekends|for work|for fun)$"
)
ARTICLE = re.compile(r"(?i)^(?:a|an|the)\s+")


ZH_PARTICLES = "了啦呢啊呀吧嘛哦喔哈咯嘞哟噢"
"""Sentence-final particles of spoken Chinese: tone, never part of a fact's value."""
_ZH_ENDING_IN_A_PARTICLE = ("酒吧", "网吧", "贴吧", "水吧", "书吧", "氧吧", "毛呢", "喇嘛")
"""Words whose last character is also a particle; their last character stays."""


def clean(value: str) -> str:
    """A captured value without what closes a sentence rather than the fact: a full stop,
    English trailing words ("now", "too", ...), Chinese particles ("腾讯了", "喝茶啦呢").

    Example:
        ```python
        from langgraph_recall.extraction._sentences import clean

        assert clean("Berlin now.") == "Berlin"
        assert clean("喝茶啦～") == "喝茶"
        assert clean("去酒吧呢") == "去酒吧"
        assert clean("嘛呢") == ""  # nothing but tone: no value
        ```
    """
    value = _TRAILING.sub("", value.strip().rstrip(".!。！~～…"))
    while value and value[-1] in ZH_PARTICLES and not value.endswith(_ZH_ENDING_IN_A_PARTICLE):
        value = value[:-1].rstrip(" 　~～…")
    return value.strip()


def slug(value: str) -> str:
    words = re.findall(r"[\w+#]+", ARTICLE.sub("", value.lower()))
    return " ".join(words[:4])


_POSSESSIVE = [
    (re.compile(r"(?i)\bmy\b"), "their"),
    (re.compile(r"(?i)\bmine\b"), "theirs"),
    (re.compile(r"(?i)\bmyself\b"), "themselves"),
    (re.compile(r"(?i)\b(?:I'm|I am)\b"), "they are"),
    (re.compile(r"\bI\b"), "they"),
    (re.compile(r"(?i)\bme\b"), "them"),
]


def _substituted(text: str, table: list[tuple[re.Pattern[str], str]]) -> str:
    for pattern, replacement in table:
        text = pattern.sub(replacement, text)
    return text


def their(text: str) -> str:
    """``text`` about the user in the third person ("my app" -> "their app")."""
    return _substituted(text, _POSSESSIVE)


_PRONOUNS = [
    (re.compile(r"(?i)\bI am\b|\bI'm\b"), "User is"),
    (re.compile(r"(?i)\bI have\b|\bI've\b"), "User has"),
    (re.compile(r"(?i)\bmy\b"), "User's"),
    (re.compile(r"\bI\b"), "User"),
    (re.compile(r"(?i)\bme\b"), "User"),
]


def third_person(text: str) -> str:
    text = _substituted(text, _PRONOUNS)
    return text[:1].upper() + text[1:]


# A clause that continues the sentence's subject without repeating it ("I live in Berlin
# and work at Siemens", "I'm vegan and allergic to nuts"): the subject is restored so the
# rules, which all start at a first-person subject, see the second fact too.
_CONJUNCTION = r",?\s+(?:and|but|so)\s+(?:also\s+)?"
_SUBJECT_LEAD = re.compile(r"(?i)(?:i|i'm|i've|my|we)\b")
_ELLIDED_VERB = re.compile(
    r"(?i)(?:(?:now|currently|still|also|really|mostly|mainly|usually|recently|just)\s+)*"
    r"(?:work|works|worked|working|live|lived|living|moved|relocated|joined|use|code|program|"
    r"develop|love|like|adore|enjoy|prefer|hate|dislike|don't|do\s+not|can't|never|speak|grew|"
    r"started)\b"
)
_ELLIDED_STATE = re.compile(
    r"(?i)(?:allergic|vegan|vegetarian|pescatarian|based|from|employed|living|working|called|"
    r"an?\s|\d{1,3}\s+years)"
)
_BE = re.compile(r"(?i)\b(?:i'm|i\s+am)\b")


def clauses(sentence: str) -> list[str]:
    """Split a sentence into first-person clauses, restoring an elided subject.

    Example:
        ```python
        from langgraph_recall.extraction._sentences import clauses

        assert clauses("I live in Berlin and work at Siemens") == [
            "I live in Berlin",
            "I work at Siemens",
        ]
        ```
    """
    pieces = re.split(f"({_CONJUNCTION})", sentence, flags=re.IGNORECASE)
    clauses: list[str] = [pieces[0].strip()]
    for joint, raw in zip(pieces[1::2], pieces[2::2], strict=True):
        part = raw.strip()
        if _SUBJECT_LEAD.match(part):
            clauses.append(part)
        elif _ELLIDED_VERB.match(part):
            clauses.append("I " + part)
        elif _BE.search(clauses[-1]) and _ELLIDED_STATE.match(part):
            clauses.append("I'm " + part)
        else:
            clauses[-1] = clauses[-1] + joint + raw
    return [clause for clause in clauses if clause]


_PRONOUN_PREFERENCE = re.compile(r"^User prefers (?:it|this|that|them|these|those)\b")
# A name the pronoun stands for: a capitalised term with its version ("Bootstrap 5.3.0"),
# not "I".
_NAME = re.compile(r"(?<![\w'])(?!I\b)[A-Z][\w.+#\-]*(?:\s+(?:v?\d[\w.]*|[A-Z][\w.+#\-]*))*")
# An aim stated before "so I prefer ...": the preference's reason.
_PURPOSE = re.compile(
    r"(?i)^(?:i(?:'m| am) trying|i (?:want|need|try|aim|'d like|would like)|i'm aiming"
    r"|in order)\s+(?P<v>to\s+(?:keep|make|avoid|stay|reduce|minimi[sz]e|maximi[sz]e|ensure"
    r"|save|limit|speed up|cut)\b.+?)[\s,]*$"
)
_GIVES_REASON = re.compile(
    r"(?i)\b(?:because|since|due\s+to|so\s+that|in\s+order\s+to|to\s+(?:keep|make|avoid"
    r"|stay|reduce|minimi[sz]e|maximi[sz]e|ensure|save|limit|speed|cut))\b"
)


def is_goal(candidate: MemoryCandidate) -> bool:
    return bool(candidate.slot and candidate.slot.startswith("goal:"))


def situate(
    candidates: list[MemoryCandidate], clauses: Sequence[str], position: int
) -> tuple[list[MemoryCandidate], bool]:
    """A clause's preferences read with the clauses of its sentence before it: "I use
    Bootstrap 5.3.0 and I prefer it over Foundation" names what "it" is (the last name
    before it; with none, "User prefers it" says nothing and is dropped), and "I'm trying
    to keep my app under 2.5MB, so I prefer X" gives X its reason. Returns the candidates
    and whether a reason was taken from the clause before (its goal is then this one's)."""
    purpose = _PURPOSE.match(clauses[position - 1].strip()) if position else None
    absorbed = False
    situated: list[MemoryCandidate] = []
    for candidate in candidates:
        if candidate.kind != "preference" or not candidate.content.startswith("User prefers "):
            situated.append(candidate)
            continue
        if _PRONOUN_PREFERENCE.match(candidate.content):
            names = _NAME.findall(" ".join(clauses[:position]))
            if not names:
                continue
            name = names[-1].strip()
            candidate = dataclasses.replace(
                candidate,
                content=_PRONOUN_PREFERENCE.sub(f"User prefers {name}", candidate.content),
                slot=f"preference:{slug(name)}",
            )
        if purpose is not None and not _GIVES_REASON.search(candidate.content):
            reason = their(purpose["v"])
            candidate = dataclasses.replace(
                candidate, content=f"{candidate.content.rstrip('.')} {reason}."
            )
            absorbed = True
        situated.append(candidate)
    return situated, absorbed


_SHIELD = re.compile("\ue000(.)\ue001")


def shield(text: str) -> tuple[str, Callable[[MemoryCandidate], MemoryCandidate]]:
    """``text`` with each PII span replaced by an opaque word (private-use characters, no
    punctuation), and the function putting the spans back into a candidate."""
    spans = find_pii(text)
    if not spans:
        return text, lambda candidate: candidate
    originals = [text[m.start : m.end] for m in spans]
    for index, match in reversed(list(enumerate(spans))):
        text = text[: match.start] + f"\ue000{chr(0xE100 + index)}\ue001" + text[match.end :]

    def put_back(value: str) -> str:
        return _SHIELD.sub(lambda m: originals[ord(m.group(1)) - 0xE100], value)

    def restore(candidate: MemoryCandidate) -> MemoryCandidate:
        slot = put_back(candidate.slot) if candidate.slot else candidate.slot
        return dataclasses.replace(candidate, content=put_back(candidate.content), slot=slot)

    return text, restore
