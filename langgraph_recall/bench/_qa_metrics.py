"""Answer scores of the LoCoMo QA harness: token F1, BLEU-1 and the LLM judge (pure).

* :func:`f1_score`: harmonic mean of token precision and recall between the normalised
  prediction and gold answer (lower case, punctuation and the articles a/an/the removed,
  tokens counted with multiplicity) — the answer F1 of the LoCoMo paper.
* :func:`bleu1`: clipped unigram precision of the prediction times the brevity penalty
  ``exp(1 - r/c)`` when the prediction (``c`` tokens) is shorter than the gold answer
  (``r`` tokens) — BLEU with n = 1 and one reference.
* :data:`JUDGE_PROMPT` / :func:`parse_judgement`: the judge as the Mem0 paper
  (arXiv:2504.19413, §4) describes it — shown the question, the gold answer and the
  generated answer, it labels the answer CORRECT or WRONG, generously: an answer that
  refers to the same thing as the gold answer counts even when it is longer or worded
  differently, and a date in another format or a relative date that resolves to the same
  day, month or year counts. The J score is the percentage labelled CORRECT. The prompt
  is written here from that description.

Example:
    ```python
    from langgraph_recall.bench._qa_metrics import bleu1, f1_score, parse_judgement

    assert f1_score("The cat sat", "cat sat") == 1.0
    assert round(bleu1("cat", "the cat sat"), 3) == 0.368
    assert parse_judgement('{"label": "CORRECT"}') is True
    ```
"""

from __future__ import annotations

import json
import math
import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "JUDGE_PROMPT",
    "AnswerScores",
    "aggregate",
    "answer_tokens",
    "bleu1",
    "f1_score",
    "judge_prompt",
    "normalize_answer",
    "parse_judgement",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans({c: " " for c in string.punctuation + "‘’“”–—"})


def normalize_answer(text: object) -> str:
    """Lower case, punctuation and articles removed, whitespace collapsed.

    Example:
        >>> normalize_answer("The  Cat's hat!")
        'cat s hat'
    """
    lowered = str(text).lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", lowered).split())


def answer_tokens(text: object) -> list[str]:
    """The tokens F1 and BLEU-1 compare.

    Example:
        >>> answer_tokens("7 May 2023")
        ['7', 'may', '2023']
    """
    return normalize_answer(text).split()


def f1_score(prediction: object, gold: object) -> float:
    """Token F1 in [0, 1]; two empty answers agree (1.0), one empty answer scores 0.

    Example:
        >>> round(f1_score("she went to Paris in May", "Paris"), 3)
        0.286
    """
    predicted, wanted = answer_tokens(prediction), answer_tokens(gold)
    if not predicted or not wanted:
        return float(predicted == wanted)
    common = sum((Counter(predicted) & Counter(wanted)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def bleu1(prediction: object, gold: object) -> float:
    """BLEU-1 in [0, 1]: clipped unigram precision times the brevity penalty.

    Example:
        >>> bleu1("Paris", "Paris")
        1.0
        >>> bleu1("", "Paris")
        0.0
    """
    predicted, wanted = answer_tokens(prediction), answer_tokens(gold)
    if not predicted or not wanted:
        return float(predicted == wanted)
    clipped = sum((Counter(predicted) & Counter(wanted)).values())
    precision = clipped / len(predicted)
    if len(predicted) >= len(wanted):
        return precision
    return precision * math.exp(1 - len(wanted) / len(predicted))


JUDGE_PROMPT = """\
You are grading an answer given by a chat assistant that remembers a long conversation.

Question: {question}
Gold answer: {gold}
Generated answer: {answer}

Label the generated answer CORRECT or WRONG. Be generous: it is CORRECT when it refers to
the same thing as the gold answer, even if it is longer, worded differently or adds
detail. For a question about time, a date in another format, or a relative date ("the
week before 9 June 2023") that points to the same day, month or year as the gold answer,
is CORRECT. It is WRONG when it names something else, misses what the gold answer names,
or says it does not know.

First give one short sentence of reasoning, then on the last line a JSON object exactly
like {{"label": "CORRECT"}} or {{"label": "WRONG"}}."""
"""The judge's prompt (``{question}``, ``{gold}``, ``{answer}``)."""


def judge_prompt(question: str, gold: object, answer: str) -> str:
    """The judge's input for one answer.

    Example:
        >>> "Gold answer: Paris" in judge_prompt("Where?", "Paris", "In Paris")
        True
    """
    return JUDGE_PROMPT.format(question=question, gold=gold, answer=answer)


_LABEL = re.compile(r'"label"\s*:\s*"(CORRECT|WRONG)"', re.I)
_BARE = re.compile(r"\b(CORRECT|WRONG)\b")


def parse_judgement(text: str) -> bool | None:
    """``True`` (CORRECT), ``False`` (WRONG) or ``None`` (no verdict found).

    The last ``{"label": ...}`` object wins; without one, the last upper-case bare word
    CORRECT / WRONG does.

    Example:
        >>> parse_judgement('It names Paris. {"label": "WRONG"}')
        False
        >>> parse_judgement("no idea") is None
        True
    """
    labels = _LABEL.findall(text)
    if not labels:
        for line in reversed(text.strip().splitlines()):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict) and str(data.get("label", "")).upper() in (
                "CORRECT",
                "WRONG",
            ):
                labels = [str(data["label"])]
                break
    if not labels:
        labels = _BARE.findall(text)
    if not labels:
        return None
    return str(labels[-1]).upper() == "CORRECT"


@dataclass(frozen=True)
class AnswerScores:
    """Mean scores (percent) of ``n`` answers: J (judged correct), F1 and BLEU-1.

    ``judged`` counts the answers the judge gave a verdict on (J is over those).
    """

    n: int = 0
    judged: int = 0
    j: float = 0.0
    f1: float = 0.0
    bleu1: float = 0.0


def aggregate(rows: Sequence[tuple[bool | None, float, float]]) -> AnswerScores:
    """Aggregate ``(correct, f1, bleu1)`` rows into :class:`AnswerScores`.

    Example:
        >>> aggregate([(True, 1.0, 1.0), (False, 0.0, 0.5)])
        AnswerScores(n=2, judged=2, j=50.0, f1=50.0, bleu1=75.0)
    """
    if not rows:
        return AnswerScores()
    verdicts = [correct for correct, _, _ in rows if correct is not None]
    return AnswerScores(
        n=len(rows),
        judged=len(verdicts),
        j=100 * sum(verdicts) / len(verdicts) if verdicts else 0.0,
        f1=100 * sum(f1 for _, f1, _ in rows) / len(rows),
        bleu1=100 * sum(b for _, _, b in rows) / len(rows),
    )
