"""The entities a text mentions: people, places, organisations, projects (pure, no I/O).

A heuristic, used by the LoCoMo benchmark's entity-link experiment (``bench locomo
--retrievers ours-exact-entities``), which measures whether links between memories that name
the same rare entity reach evidence the hybrid search ranks low (it does not, by more than a
question or two: see docs/retrieval.md). Nothing in the store or the nodes uses it.

* **Latin script**: a run of capitalised words (``Melanie``, ``New York``, ``Bank of
  America``, ``Charlotte's Web`` → ``charlotte's web``), an acronym (``NASA``), a word with
  an inner capital or digit (``LangGraph``, ``iPhone``, ``GPT-4``). A single capitalised word
  that opens a sentence ("Sounds good", "Sweden is cold") counts only when the text also
  names it elsewhere; days, months, pronouns and greetings never count.
* **Chinese**: a name after 我叫 / 名叫 / 叫做, a place after 住在 / 来自 / 搬到 / 去了 / 在…工作,
  and any run of two to eight Han characters ending in a place or organisation word (``杭州市``,
  ``西湖区``, ``阿里巴巴公司``, ``浙江大学``).

Names are compared normalised (:func:`normalize_entity`: NFKC, case-folded, possessive
``'s`` and surrounding punctuation removed, inner spaces single), so ``Melanie's`` and
``MELANIE`` are one entity.

Example:
    ```python
    from langgraph_recall.bench._entities import find_entities

    assert find_entities("Yesterday Melanie took the kids to Lake Tahoe.") == (
        "melanie", "lake tahoe")
    assert find_entities("我住在杭州西湖区，在阿里巴巴公司工作。") == ("杭州西湖区", "阿里巴巴公司")
    assert find_entities("thanks, sounds good!") == ()
    ```
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MAX_ENTITIES", "find_entities", "normalize_entity"]

MAX_ENTITIES = 16
"""At most this many entities are kept per text (the first ones it mentions)."""

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
        "today tomorrow yesterday tonight morning evening night am pm btw fyi omg"
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
    """The form entities are compared in: NFKC, case-folded, no possessive ``'s``.

    Example:
        ```python
        from langgraph_recall.bench._entities import normalize_entity

        assert normalize_entity("  Melanie’s ") == normalize_entity("MELANIE") == "melanie"
        ```
    """
    text = unicodedata.normalize("NFKC", name).translate(_APOSTROPHES).casefold()
    text = " ".join(text.split()).strip(" \t.,;:!?\"'()[]{}")
    return text[:-2] if text.endswith("'s") else text


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
        while first <= last and normalize_entity(words[first].group()) in _NEVER:
            first += 1
            opening = False  # "Hey Melanie": what follows a greeting is no sentence start
        while first <= last and words[last].group().lower() in _CONNECTORS:
            last -= 1
        if first <= last:
            head = words[first].group()
            if first == last and opening and not _marked(head):
                openers.append(head)  # "Sweden is cold" / "Sounds good": kept if seen again
            else:
                found.append(sentence[words[first].start() : words[last].end()])
        index = end
    return found


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
        from langgraph_recall.bench._entities import find_entities

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
    seen: dict[str, None] = {}
    for name in names:
        key = normalize_entity(name)
        if key and key not in _NEVER:
            seen.setdefault(key, None)
        if len(seen) >= MAX_ENTITIES:
            break
    return tuple(seen)
