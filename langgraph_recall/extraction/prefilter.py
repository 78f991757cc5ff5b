"""Cheap pre-filter: does a user turn state anything worth remembering?

Runs before any extraction model call, so greetings, thanks and questions ("What's my
name?") cost nothing. Two filters, one per kind of extractor (``ExtractNode`` picks by
default): :func:`looks_memorable` for the rule-based extractor, whose rules read English and
Chinese first-person statements only, and :func:`states_something` for a model, which reads
any language. :func:`looks_memorable`: a turn passes when at least one sentence that is not a
question speaks in the first person ("I", "I'm", "my", "we", "our", "我") or asks to remember
or gives an instruction for later ("from now on", "以后", "记住", "请不要"), or
when the speaker introduces themselves ("Gina here", "This is Gina", "I'm Al").

Example:
    ```python
    from langgraph_recall.extraction.prefilter import looks_memorable

    assert looks_memorable("I just moved to Beijing.")
    assert not looks_memorable("What's my name?")
    assert not looks_memorable("Hi! Thanks a lot.")
    assert looks_memorable("Hi! Gina here.")
    assert looks_memorable("Ｉ’ｍ ｖｅｇａｎ ｎｏｗ．")  # fullwidth, typographic apostrophe
    ```
"""

from __future__ import annotations

import re

from langgraph_recall.extraction._names import greeting_only, introductions, plain_text

__all__ = ["looks_memorable", "split_sentences", "states_something"]

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])\s*|\n+")
_FIRST_PERSON = re.compile(
    r"(?i)\b(?:i|i'm|im|i've|i'd|i'll|my|mine|me|we|we're|our|ours|myself)\b"
    r"|我|remember|from now on|以后|今后|从现在起|从现在开始|从今以后|记住|请不要|永远不要"
    r"|改用|换成|用回"
)
_CJK = re.compile(r"[\u4e00-\u9fff]")
# Standing instructions, stated preferences and kept constraints are worth keeping even
# without "I" ("Always format code with syntax highlighting.") or inside a question ("I prefer
# X, how do I ...?", "I'm trying to keep my app under 2MB, any ideas?").
_STANDING = re.compile(
    r"(?i)^\W*(?:please,?\s+)?(?:always|never(?!\s+mind)|don't ever|do not ever|from now on)\b"
    r"|\b(?:i (?:really |strongly |generally |usually |always )?prefer|i'd rather|"
    r"i would rather|my preference (?:is|for)|(?:trying|want|need|aim|like) to keep)\b"
    r"|我(?:一直|更|比较)?(?:偏好|偏爱|倾向于|更喜欢)"
)
_QUESTION_START = re.compile(
    r"(?i)^(?:what|which|who|whom|whose|where|when|why|how|do|does|did|is|are|am|can|could"
    r"|would|will|should|shall)\b"
)


def split_sentences(text: str) -> list[str]:
    """Split text into sentences (keeps the terminal punctuation).

    Example:
        ```python
        from langgraph_recall.extraction.prefilter import split_sentences

        assert split_sentences("Hi! I like tea. You?") == ["Hi!", "I like tea.", "You?"]
        ```
    """
    return [part.strip() for part in _SENTENCE_END.split(text) if part and part.strip()]


def _is_question(sentence: str) -> bool:
    return sentence.endswith(("?", "？")) or bool(_QUESTION_START.match(sentence))


def looks_memorable(text: str, *, min_chars: int = 8) -> bool:
    """True when some non-question sentence of ``text`` is a first-person statement, or
    some sentence gives a standing instruction ("Always ...", "Never ...") or states a
    preference ("I prefer ...", even inside a question).

    Args:
        text: The user's message.
        min_chars: Sentences shorter than this are ignored ("I see."), except CJK text.

    Example:
        ```python
        from langgraph_recall.extraction.prefilter import looks_memorable

        assert looks_memorable("Remember that the deploy key rotates on Fridays")
        ```
    """
    opening = True
    for sentence in split_sentences(plain_text(text)):
        if _STANDING.search(sentence):
            return True
        if _is_question(sentence):
            opening = False
            continue
        if introductions(sentence, opening=opening):  # "Gina here", "This is Gina", "I'm Al"
            return True
        opening = greeting_only(sentence)
        too_short = len(sentence) < min_chars and not _CJK.search(sentence)
        if not too_short and _FIRST_PERSON.search(sentence):
            return True
    return False


def states_something(text: str, *, min_chars: int = 8) -> bool:
    """True when some sentence of ``text`` is a statement in any language: not a question,
    not only a greeting, at least ``min_chars`` long (CJK text at any length).

    The filter in front of a model extractor: it skips greetings and questions without
    reading the language, so a statement nobody wrote a rule for ("Ich heiße Jonas und
    wohne in München.") still reaches the model.

    Example:
        ```python
        from langgraph_recall.extraction.prefilter import looks_memorable, states_something

        assert states_something("Ich heiße Jonas und wohne in München.")
        assert not looks_memorable("Ich heiße Jonas und wohne in München.")
        assert not states_something("Hi! What's my name?")
        assert not states_something("Wie heiße ich?")
        ```
    """
    for sentence in split_sentences(plain_text(text)):
        if _is_question(sentence) or greeting_only(sentence):
            continue
        if len(sentence) >= min_chars or _CJK.search(sentence):
            return True
    return False
