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

An update said as a clause of a long turn about something else is found by its shape
instead: :func:`value_statement` reads the values (numbers, dates) a text states within a few
words of the question's words (:func:`query_terms`), and whether a change word stands beside
them; :func:`restated_first` then puts a newer text stating the asked value as changed just
above the older one stating it. The store applies it within the page it returns.

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
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from langgraph_recall.extraction.textnorm import ENGLISH_STOP_WORDS

__all__ = [
    "ValueStatement",
    "asks_about_the_past",
    "query_terms",
    "restated_first",
    "states_change",
    "value_statement",
]

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


# ---------------------------------------------------------------- the newest statement of a value
#
# "What is the test coverage of my API integration module?" is answered by the turn that says
# "... the unit test coverage for my API integration, which has recently improved to 78%",
# not by the earlier, longer turn about reaching 65%, though the whole earlier turn is closer
# to the question. What the two have in common is a clause: a value (a number, a date) near
# the words the question asks about. :func:`value_statement` finds that clause in a text;
# :func:`restated_first` puts a newer text whose clause states a change above an older one
# stating a value for the same asked words. It reorders, it never adds or drops.

_QUESTION_WORDS = (
    # a question's words that name no value: function words (a reason, a reflexive or a
    # contraction's pieces can still be what is asked about) and words that ask for a value
    ENGLISH_STOP_WORDS
    - frozenset(
        str.split(
            "against because d down herself himself ll m ourselves re s t theirs themselves ve "
            "yourself yourselves"
        )
    )
) | frozenset(str.split("also amount current currently done i'm i've many much number total value"))
_TOKEN = re.compile(r"\d[\d.,:/%]*\w*|[^\W\d_][\w'\-]*|[\u3400-\u9fff]+")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_CJK = re.compile(r"[\u3400-\u9fff]")
# A tally to date ("I've already completed 15", "so far", 已经, 目前为止) is the value as it
# stands now: near a value, a change as much as "now" is.
_SO_FAR = re.compile(
    r"(?i)\b(?:already|so\s+far|to\s+date|by\s+now|up\s+to\s+now)\b|已经|迄今|目前为止"
)
_WINDOW = 12
"""Words on each side of a value that can name what the value is of."""
_SHARED = 2
"""Asked words two statements must share to be about the same thing."""


def _term(word: str) -> str:
    """A word's crude stem: lower case, plural and verb endings cut ("commits" -> "commit")."""
    word = word.lower().strip("'-")
    for suffix, keep in (
        ("ies", "y"),
        ("sses", "ss"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("xes", "x"),
        ("ing", ""),
        ("ed", ""),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: len(word) - len(suffix)] + keep
    return word


def _terms(token: str) -> list[str]:
    if _CJK.match(token):  # a CJK run: its character bigrams
        return [token[i : i + 2] for i in range(max(len(token) - 1, 1))]
    return [] if token.lower() in _QUESTION_WORDS else [_term(token)]


def query_terms(query: str) -> frozenset[str]:
    """The words a question asks about: content words, stemmed, without question words or
    the question's own numbers.

    Example:
        >>> sorted(query_terms("How many commits have been merged into the main branch?"))
        ['branch', 'commit', 'main', 'merg']
    """
    return frozenset(
        term for token in _TOKEN.findall(query) if not token[0].isdigit() for term in _terms(token)
    )


@dataclass(frozen=True, slots=True)
class ValueStatement:
    """What a text says about a question's value.

    Attributes:
        asked: The asked words near a value the text states (the best such clause).
        changed: The asked words near a value the text states as changed ("has recently
            improved to 78%"; empty when it states none).
    """

    asked: frozenset[str] = frozenset()
    changed: frozenset[str] = frozenset()


def value_statement(text: str, asked: frozenset[str], query: str = "") -> ValueStatement:
    """The clauses of ``text`` that state a value (a number or date not in ``query``) of
    what ``asked`` names: the asked words within a few words of the value, in its sentence.

    Example:
        >>> q = "What is the test coverage of my API integration module?"
        >>> v = value_statement("Nice. Coverage for my API integration has recently "
        ...                     "improved to 78%, and tests pass.", query_terms(q), q)
        >>> sorted(v.asked), sorted(v.changed)
        (['api', 'coverage', 'integration', 'test'], ['api', 'coverage', 'integration', 'test'])
    """
    if not asked:
        return ValueStatement()
    given = {token for token in _TOKEN.findall(query) if token[0].isdigit()}
    best: frozenset[str] = frozenset()
    best_changed: frozenset[str] = frozenset()
    for sentence in _SENTENCE.split(text):
        tokens = _TOKEN.findall(sentence)
        for at, token in enumerate(tokens):
            if not token[0].isdigit() or token.rstrip(".,") in given:
                continue
            window = tokens[max(at - _WINDOW, 0) : at + _WINDOW + 1]
            near = frozenset(t for w in window for t in _terms(w)) & asked
            if len(near) > len(best):
                best = near
            said = " ".join(window)
            if len(near) > len(best_changed) and (states_change(said) or _SO_FAR.search(said)):
                best_changed = near
    return ValueStatement(best, best_changed)


def _same_value(older: frozenset[str], changed: frozenset[str]) -> bool:
    """Whether a change near ``changed`` restates the value an older text states near
    ``older``: they share two asked words and a third of the older's."""
    shared = len(older & changed)
    return shared >= _SHARED and 3 * shared >= len(older)


def restated_first(statements: Sequence[tuple[ValueStatement, datetime | None]]) -> list[int]:
    """An order of ``statements`` (given best first) in which a newer one that states a
    change of the asked value comes just above the best older one stating a value for the
    same asked words (two shared, and a third of the older's); every other keeps its place
    (pure). Chains
    keep their time order: the newest change comes first.

    Example:
        >>> from datetime import datetime, timezone
        >>> t = lambda d: datetime(2024, 1, d, tzinfo=timezone.utc)
        >>> a = frozenset({"test", "coverage"})
        >>> restated_first([(ValueStatement(a), t(1)), (ValueStatement(), t(2)),
        ...                 (ValueStatement(a, a), t(3))])
        [2, 0, 1]
    """
    order = list(range(len(statements)))
    dated = [
        (moment, i) for i, (s, moment) in enumerate(statements) if s.changed and moment is not None
    ]
    by_time = [i for _, i in sorted(dated, key=lambda pair: pair[0])]  # stable: ties by index
    for newer in by_time:
        changed, moment = statements[newer][0].changed, statements[newer][1]
        assert moment is not None
        here = order.index(newer)
        above = [
            position
            for position, i in enumerate(order[:here])
            if (when := statements[i][1]) is not None
            and when < moment
            and _same_value(statements[i][0].asked, changed)
        ]
        if above:
            order.insert(above[0], order.pop(here))
    return order
