"""Updates that win: a newer memory that states a change ranks above the older one it updates.

"The dashboard API now averages 250 ms" and, weeks earlier, "the dashboard API averages
400 ms" are both relevant to "What is the dashboard API's response time?", and similarity
alone may put the older first. A memory that states a change (:func:`states_change`:
"now", "recently", "has increased to", "new ... of", 现在, 改为, 提高到 ...) and is newer
than a candidate about the same question (whose relevance is at most
``1 / update_similarity`` times its own) is lifted just above that candidate, by at most
``update_weight``: the *update* term of :class:`~langgraph_recall.retrieval.ScoreBreakdown`.
A query that asks about the past (:func:`asks_about_the_past`: "originally", "before",
"used to", 以前, 最初 ...) gets no such term: it asks for the older fact.

Pure functions, no I/O.

Example:
    >>> states_change("The quota has recently increased to 1,200 calls per day.")
    True
    >>> states_change("The quota is 1,000 calls per day.")
    False
    >>> states_change("我现在改用FastAPI了"), asks_about_the_past("我以前用什么框架？")
    (True, True)
"""

from __future__ import annotations

import re

__all__ = ["asks_about_the_past", "states_change"]

# A change of state said in so many words: a time word of the present ("now", "recently"),
# a change verb with its new value ("increased to", "reached", "switched"), a new value
# ("the new deadline of ..."), or an end ("no longer", "anymore"). English and Chinese.
# "Now, ..." / "now let's" / "now that" open a step or give a reason: no change is stated.
_CHANGE_WORDS = (
    r"now(?!\s*,|\s+(?:let|we|you|that)\b)|recently|currently|lately|latest|newly|updated?|revised"
    r"|no\s+longer|any\s*more|instead"
    r"|(?:improved|increased|decreased|reduced|dropped|grown|grew|risen|rose|fallen|fell"
    r"|climbed|jumped|raised|lowered|bumped|extended|expanded|shortened|cut|upgraded"
    r"|downgraded|changed|moved|switched|shifted|adjusted)(?:\s+\w+){0,2}\s+(?:to|from)"
    r"|reached|hit|totals?|new(?:\s+[\w-]+){0,3}\s+(?:of|is|are|at|to)"
)
_CHANGE_EN = re.compile(rf"\b(?:{_CHANGE_WORDS})\b", re.IGNORECASE)
_CHANGE_ZH = re.compile(
    r"现在|目前|最近|最新|如今|已经?(?:增加|提高|提升|降低|减少|达到|变成|改成|改为|换成|升级)"
    r"|改成|改为|改用|换成|变成|更新为|更新到|调整为|调整到|提高到|提升到|增加到|降低到|减少到"
    r"|达到了|不再"
)
_PAST_EN = re.compile(
    r"\b(?:original(?:ly)?|initially|at\s+first|first\s+(?:set|planned|had|was|were)|before"
    r"|previous(?:ly)?|used\s+to|earlier|prior|old|former(?:ly)?|at\s+the\s+start)\b",
    re.IGNORECASE,
)
_PAST_ZH = re.compile(r"以前|之前|原来|原先|最初|起初|一开始|当初|过去|曾经")


def states_change(text: str) -> bool:
    """Whether ``text`` states that something changed or now has a new value.

    Example:
        >>> [states_change(t) for t in ("We now have 10 project cards.",
        ...                             "Coverage improved to 78%.",
        ...                             "I like the new design.")]
        [True, True, False]
    """
    return bool(_CHANGE_EN.search(text) or _CHANGE_ZH.search(text))


def asks_about_the_past(query: str) -> bool:
    """Whether ``query`` asks for an earlier state ("What was the original deadline?").

    Example:
        >>> asks_about_the_past("What was the original deadline?")
        True
        >>> asks_about_the_past("What is the deadline?")
        False
    """
    return bool(_PAST_EN.search(query) or _PAST_ZH.search(query))
