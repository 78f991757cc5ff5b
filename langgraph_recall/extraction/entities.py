"""The entities a text mentions: people, places, organisations, projects (pure, no I/O).

The offline entity finder. The memory store runs it on the indexed text of every memory it
writes (unless the value names its ``entities`` itself, as a model's extraction does) and on
every search query, and links memories through the entities they share (see
docs/retrieval.md, "Entity links").

* **Latin script**: a run of capitalised words (``Melanie``, ``New York``, ``Bank of
  America``, ``Charlotte's Web`` → ``charlotte's web``), an acronym (``NASA``), a word with
  an inner capital or digit (``LangGraph``, ``iPhone``, ``GPT-4``). A single capitalised word
  that opens a sentence ("Sounds good", "Sweden is cold") counts only when the text also
  names it elsewhere, when it labels a speaker ("Melanie: ...") or when a verb people and
  organisations do follows it ("Ana moved to Lisbon"); days, months, pronouns, greetings
  and stop words never count.
* **Chinese**: a name after 我叫 / 名叫 / 叫做, a place after 住在 / 来自 / 搬到 / 去了 / 在…工作,
  and any run of two to eight Han characters ending in a place or organisation word (``杭州市``,
  ``西湖区``, ``阿里巴巴公司``, ``浙江大学``).

Names are compared normalised (:func:`normalize_entity`: NFKC, case-folded, possessive
``'s`` and surrounding punctuation removed, inner spaces single), so ``Melanie's`` and
``MELANIE`` are one entity.

Example:
    ```python
    from langgraph_recall.extraction.entities import find_entities

    assert find_entities("Yesterday Melanie took the kids to Lake Tahoe.") == (
        "melanie", "lake tahoe")
    assert find_entities("我住在杭州西湖区，在阿里巴巴公司工作。") == ("杭州西湖区", "阿里巴巴公司")
    assert find_entities("thanks, sounds good!") == ()
    ```
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

from langgraph_recall.extraction.textnorm import ENGLISH_STOP_WORDS

__all__ = [
    "MAX_ENTITIES",
    "MAX_ENTITY_CHARS",
    "find_entities",
    "normalize_entities",
    "normalize_entity",
]

MAX_ENTITIES = 16
"""At most this many entities are kept per text (the first ones it mentions)."""
MAX_ENTITY_CHARS = 100
"""A longer name is cut to this many characters (before it is normalised)."""
_PUNCTUATION = " \t.,;:!?\"'()[]{}"

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
_NEVER = frozenset(
    str.split(
        "i i'm i've i'll i'd im ive hey hi hello oh ok okay wow yeah yes yep no nope thanks thank "
        "sure well so and but or the a an it it's that that's this these those there what where "
        "when why how who whom which me my mine you your yours we our they them their he him his "
        "she her hers let let's lets just also really good great awesome cool nice sorry congrats "
        "congratulations haha lol aw aww ah anyway absolutely definitely totally glad happy love "
        "dear mr mrs ms dr mom dad monday tuesday wednesday thursday friday saturday sunday "
        "january february march april may june july august september october november december "
        "today tomorrow yesterday tonight morning evening night am pm btw fyi omg bye goodbye "
        "since last next mon tue tues wed thu thur thurs fri sat sun jan feb mar apr jun jul aug "
        "sep sept oct nov dec"
    )
)
_ACTIONS = frozenset(
    str.split(
        "moved moves lives lived works worked went goes met meets married joined joins started "
        "founded said says told tells visited visits loves loved likes liked bought took takes "
        "wants wanted plays played studies studied teaches taught leads led owns owned hired "
        "called adopted painted wrote writes sent asked thinks thought knows knew feels felt "
        "decided graduated retired launched released announced acquired"
    )
)
_CONNECTORS = frozenset({"of", "the", "de", "del", "da", "di", "van", "von", "la", "le"})
_WORD = re.compile(r"[^\W\d_][\w'\-\.]*[\w]|[^\W\d_]", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?。！？\n]+\s*")
_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK = re.compile(rf"[{_HAN}\u3040-\u30ff\uac00-\ud7af]")
_ZH_SUFFIX = (
    "市|省|区|县|镇|村|州|路|街|山|湖|江|河|岛|国|公司|大学|学院|中学|小学|集团|银行|医院|"
    "酒店|餐厅|研究所|实验室|项目|工作室|俱乐部|协会"
)
_ZH_NAMED = re.compile(rf"[{_HAN}]{{1,7}}?(?:{_ZH_SUFFIX})(?![{_HAN}]?(?:{_ZH_SUFFIX}))")
_ZH_AFTER = re.compile(
    rf"(?:我叫|名叫|叫做|名字是|住在|来自|搬到了?|去了|到了|在)([{_HAN}]{{2,8}}?)"
    rf"(?=工作|上班|读书|上学|生活|旅游|出差|[，。、！？,.!?\s]|$)"
)
_ZH_MARKER = re.compile(
    r"我们|我|你|他们|他|她|用户|住在|来自|搬到了?|去了|到了|回到|在|是|的|和|跟|与|从|于|叫|去|到"
)
_ZH_STOP = frozenset({"这里", "那里", "哪里", "家里", "公司", "学校", "现在", "以后", "以前"})


def normalize_entity(name: str) -> str:
    """The form entities are compared in: NFKC, case-folded, single inner spaces, no
    surrounding punctuation and no possessive ``'s`` (applied until nothing changes, so
    normalising twice is normalising once).

    Example:
        ```python
        from langgraph_recall.extraction.entities import normalize_entity

        assert normalize_entity("  Melanie’s ") == normalize_entity("MELANIE") == "melanie"
        ```
    """
    text = name
    for _ in range(len(name) + 2):  # each pass that changes the text shortens or folds it
        step = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES).casefold()
        step = " ".join(step.split()).strip(_PUNCTUATION)
        while step.endswith("'s"):
            step = step[:-2].strip(_PUNCTUATION)
        if step == text:
            break
        text = step
    return text


def normalize_entities(names: Iterable[object]) -> tuple[str, ...]:
    """Entity names given by a caller or a model (``value["entities"]``), normalised, each
    once, at most :data:`MAX_ENTITIES`: strings, or mappings with a ``"name"`` (a model's
    ``{"name": "Ana", "type": "person"}``). Empty names, stop words, days and months are
    left out, as :func:`find_entities` leaves them out.

    Example:
        ```python
        from langgraph_recall.extraction.entities import normalize_entities

        assert normalize_entities(["Ana", {"name": "ACME Corp", "type": "org"}, "ana", "May"]) == (
            "ana", "acme corp")
        ```
    """
    given = (raw.get("name") if isinstance(raw, Mapping) else raw for raw in names)
    return _first_kept(name for name in given if isinstance(name, str))


def _first_kept(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` normalised, each once, in order, without those never kept; at most
    :data:`MAX_ENTITIES`."""
    seen: dict[str, None] = {}
    for name in names:
        key = normalize_entity(name[:MAX_ENTITY_CHARS])
        if _kept(key):
            seen.setdefault(key, None)
        if len(seen) >= MAX_ENTITIES:
            break
    return tuple(seen)


def _kept(key: str) -> bool:
    """Whether a normalised name may be an entity: not empty, not a stop word, day, month
    or greeting, nor made of such words only."""
    if not key or key in _ZH_STOP:
        return False
    words = key.split()
    return not all(word in _NEVER or word in ENGLISH_STOP_WORDS for word in words)


def _capitalised(word: str) -> bool:
    return word[:1].isupper()


def _marked(word: str) -> bool:
    """An acronym, or a word with an inner capital or digit (``NASA``, ``LangGraph``)."""
    letters = [c for c in word if c.isalpha()]
    if len(letters) >= 2 and all(c.isupper() for c in letters) and len(word) <= 8:
        return True
    inner = word[1:]
    return any(c.isupper() for c in inner) or (
        any(c.isdigit() for c in word) and any(c.isalpha() for c in word)
    )


def _latin(sentence: str, openers: list[str]) -> list[str]:
    """Runs of capitalised words (joined by connectors) and marked words, in order; a single
    capitalised word that opens the sentence goes to ``openers`` instead."""
    found: list[str] = []
    words = list(_WORD.finditer(sentence))
    index = 0
    while index < len(words):
        word = words[index].group()
        if not (_capitalised(word) or _marked(word)):
            index += 1
            continue
        end = index + 1
        while end < len(words):
            gap = sentence[words[end - 1].end() : words[end].start()]
            nxt = words[end].group()
            if gap.strip() not in ("", "&") or "\n" in gap:
                break
            if _capitalised(nxt) or _marked(nxt):
                end += 1
                continue
            joins = nxt.lower() in _CONNECTORS and end + 1 < len(words)
            if joins and _capitalised(words[end + 1].group()):  # "Bank of America"
                end += 2
                continue
            break
        first, last = index, end - 1
        opening = sentence[: words[first].start()].strip(" \"'(*-#>") == ""
        while first <= last and _filler(words[first].group()):
            first += 1
            opening = False  # "Hey Melanie": what follows a greeting is no sentence start
        while first <= last and (
            words[last].group().lower() in _CONNECTORS or _filler(words[last].group())
        ):
            last -= 1
        if first <= last:
            head = words[first].group()
            if first == last and opening and not _marked(head) and not _acts(sentence, words, last):
                openers.append(head)  # "Sounds good" / "Sweden is cold": kept if seen again
            else:
                found.append(sentence[words[first].start() : words[last].end()])
        index = end
    return found


def _filler(word: str) -> bool:
    """A word that never starts or ends a name: a greeting, day, month, pronoun or stop word
    ("Last Friday", "Bye Jon", "Do Jon ...", "Since I")."""
    key = normalize_entity(word)
    return key in _NEVER or key in ENGLISH_STOP_WORDS


def _acts(sentence: str, words: list[re.Match[str]], index: int) -> bool:
    """Whether the word at ``index`` opens its sentence as someone who speaks or acts: a
    speaker's label ("Melanie: ...") or the subject of a verb people and organisations do
    ("Ana moved to Lisbon", "Acme hired me")."""
    after = sentence[words[index].end() :]
    if after.startswith(":"):
        return True
    return index + 1 < len(words) and words[index + 1].group().lower() in _ACTIONS


def _chinese(text: str) -> list[str]:
    found: list[tuple[int, str]] = []
    for match in _ZH_AFTER.finditer(text):
        found.append((match.start(1), match.group(1)))
    for match in _ZH_NAMED.finditer(text):
        name = match.group()
        cut = max((m.end() for m in _ZH_MARKER.finditer(name[:-1])), default=0)
        if len(name) - cut >= 2:  # "用户住在杭州西湖区" → "杭州西湖区"
            found.append((match.start() + cut, name[cut:]))
    found.sort()
    kept: list[str] = []
    for _, name in found:
        if name in _ZH_STOP or any(name in other or other in name for other in kept):
            if any(other in name and other != name for other in kept):
                kept = [other for other in kept if other not in name] + [name]
            continue
        kept.append(name)
    return kept


def find_entities(text: str) -> tuple[str, ...]:
    """The entities ``text`` mentions, normalised, first mention first, each once.

    Example:
        ```python
        from langgraph_recall.extraction.entities import find_entities

        assert find_entities("I switched from Django to FastAPI at Acme Corp.") == (
            "django", "fastapi", "acme corp")
        ```
    """
    plain = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES)
    names: list[str] = []
    openers: list[str] = []
    # "我用FastAPI写了" → " , FastAPI , ": Latin words on either side of Chinese text never
    # join into one name ("B一A" is no "B A")
    latin = re.sub(f"(?:{_CJK.pattern})+", " , ", plain)
    for sentence in _SENTENCE_END.split(latin):
        names.extend(_latin(sentence, openers))
    elsewhere = {normalize_entity(name) for name in names}
    names.extend(word for word in openers if normalize_entity(word) in elsewhere)
    if re.search(f"[{_HAN}]", plain):
        names.extend(_chinese(plain))
    return _first_kept(names)
