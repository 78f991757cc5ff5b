"""Episodic memories from conversation turns (pure: no I/O).

An *episode* is one raw turn kept as a memory (``kind="episodic"``): ``content`` is the
turn as said (``"Speaker: text"``) and ``context`` holds its neighbouring turns of the same
session, nearest first, within a character budget. The memory is indexed on
:data:`EPISODE_INDEX_FIELDS` (context and content), so its embedding and full-text entry
know what the turn answered and what came of it, while what is injected stays the turn.

Every text passes the PII filter three times: each turn on its own (a turn with PII is
neither an episode nor anyone's context), then each episode's record — its turn and its
context turns read together, with their speakers' names as the record stores them and
without, so PII split across turns or between a message and the next speaker's name (half
a card number in each, an e-mail address cut at the ``@``) is never whole in one record,
and each placeholder is named by the longest finding — and then the whole value (the gate
every written value passes).
Keys are derived from the turn (its id, else speaker, text and time), so the same turn
written twice is one memory.

Example:
    ```python
    from langgraph_recall.episodes import EpisodeConfig, EpisodeTurn, plan_episodes

    turns = [EpisodeTurn("I adopted a puppy last week!", speaker="Ann", id="d1"),
             EpisodeTurn("What is its name?", speaker="Bob", id="d2"),
             EpisodeTurn("Her name is Luna.", speaker="Ann", id="d3")]
    plan = plan_episodes(turns, EpisodeConfig(context_before=1, context_after=1))
    luna = plan.episodes[-1]
    assert luna.value["content"] == "Ann: Her name is Luna."
    assert luna.value["context"] == "Bob: What is its name?"
    assert plan_episodes(turns).episodes[0].key == plan.episodes[0].key  # stable keys
    ```
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.messages.utils import convert_to_messages
from langgraph.store.base import PutOp

from langgraph_recall.errors import ConfigurationError, InvalidValueError
from langgraph_recall.extraction.dates import parse_iso_datetime
from langgraph_recall.extraction.pii import PIIFilter, PIIMatch
from langgraph_recall.extraction.rules import message_text
from langgraph_recall.extraction.textnorm import CJK_RUN

__all__ = [
    "EPISODE_INDEX_FIELDS",
    "Episode",
    "EpisodeConfig",
    "EpisodePlan",
    "EpisodeTurn",
    "episode_key",
    "episode_ops",
    "plan_episodes",
    "to_turns",
]

EPISODE_INDEX_FIELDS: tuple[str, ...] = ("context", "content")
"""The fields an episode is indexed on (embedding and full text): its context, then it."""

ROLES = ("user", "assistant")


@dataclass(frozen=True)
class EpisodeConfig:
    """How turns become episodic memories.

    Args:
        roles: Whose turns become episodes (``"user"``, ``"assistant"``); every turn of the
            session may still serve as context.
        context_before: Earlier turns of the same session kept as context.
        context_after: Later turns of the same session kept as context (the reply to a
            statement says what it was about).
        max_context_chars: Budget of the whole ``context`` text; the nearest turns are kept
            first and a turn that does not fit is cut at a word boundary.
        max_turn_chars: Longer turns are cut (the beginning is kept).
        min_words: Turns with fewer words are not kept ("ok", "thanks!", "好的"); see
            :func:`word_count`.
        importance: Importance of an episode (1-10; facts default higher, so under equal
            relevance a fact ranks first).
        ttl: Minutes an episode lives; ``None``: the store's ``default_ttl`` (no expiry when
            the store has none). Older episodes also rank lower through the store's
            recency weight.
        retrieve_limit: Episodes ``RetrieveNode`` fetches beside the facts.
        token_share: Most of the retrieval token budget episodes may take (0-1); facts may
            use all of it.

    Example:
        ```python
        from langgraph_recall.episodes import EpisodeConfig

        config = EpisodeConfig(context_before=1, max_context_chars=200)
        assert config.context_after == 1 and config.roles == ("user",)
        ```
    """

    roles: tuple[str, ...] = ("user",)
    context_before: int = 2
    context_after: int = 1
    max_context_chars: int = 600
    max_turn_chars: int = 1000
    min_words: int = 2
    importance: int = 3
    ttl: float | None = None
    retrieve_limit: int = 3
    token_share: float = 0.4

    def __post_init__(self) -> None:
        unknown = sorted(set(self.roles) - set(ROLES))
        if unknown or not self.roles:
            raise ConfigurationError(f"EpisodeConfig: roles must be among {ROLES}, got {unknown}")
        for name in ("context_before", "context_after", "min_words", "retrieve_limit"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1000:
                raise ConfigurationError(f"EpisodeConfig: {name} must be an int in 0..1000")
        for name, low in (("max_context_chars", 0), ("max_turn_chars", 20)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= 60000:
                raise ConfigurationError(f"EpisodeConfig: {name} must be an int in {low}..60000")
        if isinstance(self.importance, bool) or self.importance not in range(1, 11):
            raise ConfigurationError("EpisodeConfig: importance must be an int from 1 to 10")
        if self.ttl is not None and (
            isinstance(self.ttl, bool)
            or not isinstance(self.ttl, (int, float))
            or not (math.isfinite(self.ttl) and self.ttl > 0)
        ):
            raise ConfigurationError("EpisodeConfig: ttl must be a positive number of minutes")
        share = self.token_share
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
            raise ConfigurationError("EpisodeConfig: token_share must be a number in 0..1")


@dataclass(frozen=True)
class EpisodeTurn:
    """One turn of a conversation history.

    Args:
        text: What was said.
        role: ``"user"`` or ``"assistant"``.
        speaker: Name shown in the memory (default ``"User"`` / ``"Assistant"``).
        id: A stable id (message id, dialog id); the episode's key derives from it.
        session: Turns of one session are each other's context (``None``: one session).
        time: When it was said (the episode's ``valid_from``).

    Example:
        ```python
        from langgraph_recall.episodes import EpisodeTurn

        assert EpisodeTurn("hi there", speaker="Ann").label == "Ann"
        ```
    """

    text: str
    role: str = "user"
    speaker: str | None = None
    id: str | None = None
    session: str | None = None
    time: datetime | None = None

    @property
    def label(self) -> str:
        """The speaker shown before the text."""
        return self.speaker or self.role.capitalize()


@dataclass(frozen=True)
class Episode:
    """One planned write: ``key`` and ``value`` in the namespace of the plan."""

    key: str
    value: dict[str, Any]


@dataclass
class EpisodePlan:
    """What :func:`plan_episodes` made of the turns."""

    episodes: list[Episode] = field(default_factory=list)
    turns: int = 0
    skipped: int = 0
    duplicates: int = 0
    pii_dropped: int = 0
    pii_redacted: int = 0


def episode_key(turn: EpisodeTurn) -> str:
    """The key of a turn's episode: from its id, else from speaker, text and time.

    Example:
        ```python
        from langgraph_recall.episodes import EpisodeTurn
        from langgraph_recall.episodes._plan import episode_key

        a = EpisodeTurn("I live in Oslo.", id="m1")
        assert episode_key(a) == episode_key(EpisodeTurn("edited text", id="m1"))
        assert episode_key(EpisodeTurn("x y")) == episode_key(EpisodeTurn("x  y"))
        ```
    """
    if turn.id:
        basis: list[Any] = ["id", turn.id]
    else:
        when = turn.time.isoformat() if turn.time is not None else None
        basis = ["turn", turn.role, turn.label, " ".join(turn.text.split()), when]
    digest = hashlib.sha256(json.dumps(basis, ensure_ascii=False).encode()).hexdigest()
    return f"episode-{digest[:32]}"


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, cut at a word boundary when one is near."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip()


def _context(
    lines: Sequence[str | None], position: int, before: int, after: int, budget: int
) -> dict[int, str]:
    """The neighbours of ``lines[position]`` (``None`` = not usable), nearest first within
    ``budget`` characters, by position (shown in conversation order)."""
    order: list[int] = []
    for distance in range(1, max(before, after) + 1):
        if distance <= before and position - distance >= 0:
            order.append(position - distance)
        if distance <= after and position + distance < len(lines):
            order.append(position + distance)
    chosen: dict[int, str] = {}
    used = 0
    for index in order:
        line = lines[index]
        if not line:
            continue
        room = budget - used - (1 if chosen else 0)
        if room < 20:
            break
        piece = _cut(line, room)
        chosen[index] = piece
        used += len(piece) + (1 if len(chosen) > 1 else 0)
    return chosen


def word_count(text: str) -> int:
    """Words of ``text`` as ``min_words`` counts them: whitespace-separated words, and a word
    per two characters of a run of Chinese, Japanese or Korean script (written without
    spaces; a Chinese word is one to two characters on average); punctuation is no word.

    Example:
        ```python
        from langgraph_recall.episodes._plan import word_count

        assert word_count("ok") == 1 and word_count("好的") == 1 and word_count("谢谢！") == 1
        assert word_count("我在用Django写后端") == 5  # 我在用 → 2, 写后端 → 2, Django
        ```
    """
    runs = CJK_RUN.findall(text)
    others = CJK_RUN.sub(" ", text).split()
    words = sum(1 for word in others if any(char.isalnum() for char in word))
    return sum((len(run) + 1) // 2 for run in runs) + words


def _said_prefix(text: str, own: Sequence[PIIMatch], kept: int) -> tuple[str, list[PIIMatch]]:
    """The start of ``text`` behind the first ``kept`` characters of its redaction (each of
    ``own`` replaced by its placeholder), and the findings inside it. A placeholder the cut
    falls in leaves its finding out: never a piece of PII at the end."""
    raw = shown = 0
    inside: list[PIIMatch] = []
    for match in own:
        if shown + match.start - raw >= kept:
            break
        shown, raw = shown + match.start - raw, match.start
        if shown + len(match.placeholder) > kept:
            return text[:raw].rstrip(), inside
        shown, raw = shown + len(match.placeholder), match.end
        inside.append(match)
    return text[: raw + kept - shown], inside


def _window(
    pii: PIIFilter,
    turns: Sequence[EpisodeTurn],
    said: Sequence[tuple[str, list[PIIMatch]]],
    content: tuple[int, str],
    context: Mapping[int, str],
) -> tuple[str | None, str, dict[int, str], bool]:
    """One episode's record — its turn and its context turns, each ``"Speaker: text"`` —
    cleaned of PII that only the record as a whole holds. Its pieces (each speaker's name
    and what they said, as said: ``said`` holds each turn's text and its own findings) are
    read together as the record stores them — the context's lines, then the turn — and in
    conversation order, names included, and what was said alone in conversation order and
    as the turns of each role in a row (half an address, the assistant's "ok", the other
    half), so no split — across two turns, or between what one said and the next speaker's
    name — is whole in the record, and each placeholder is labelled by the longest finding.

    Returns the content (``None``: the episode is dropped), its speaker as stored, the
    context left, and whether anything changed."""
    lines = {**context, content[0]: content[1]}
    order = sorted(lines)
    pieces: list[str | None] = []
    known: dict[int, list[PIIMatch]] = {}
    head: dict[int, int] = {}  # line -> its name's piece (what was said follows it)
    for i in order:
        prefix, line = f"{turns[i].label}: ", lines[i]
        head[i] = len(pieces)
        if line.startswith(prefix):
            body, known[head[i] + 1] = _said_prefix(*said[i], len(line) - len(prefix))
            pieces += [prefix, body]
        else:  # cut inside the speaker's name: the line is all name
            pieces += [line, ""]

    def named(among: Sequence[int]) -> list[int]:
        return [piece for i in among for piece in (head[i], head[i] + 1)]

    stored = [*sorted(context), content[0]]  # the record's text: its context, then its turn
    readings = [named(stored), named(order), [head[i] + 1 for i in order]]
    readings += [[head[i] + 1 for i in order if turns[i].role == role] for role in ROLES]
    # a text alone was screened already (its own findings are known): two or more
    readings = [r for r in readings if sum(1 for piece in r if pieces[piece]) > 1]
    tied = [(head[i], head[i] + 1) for i in order]
    cleaned = pii.clean_readings(pieces, readings, found=known, tied=tied)
    redacted = [pii.redact(p or "", known.get(n, [])) for n, p in enumerate(pieces)]
    if cleaned == redacted:  # nothing but each turn's own findings, as its line shows them
        return content[1], turns[content[0]].label, dict(context), False
    kept = {
        i: who + what
        for i in order
        if (who := cleaned[head[i]]) is not None and (what := cleaned[head[i] + 1]) is not None
    }
    text = kept.pop(content[0], None)
    speaker = cleaned[head[content[0]]] or ""
    return text, speaker.removesuffix(": "), kept, True


def plan_episodes(
    turns: Sequence[EpisodeTurn],
    config: EpisodeConfig | None = None,
    *,
    pii: PIIFilter | None = None,
    source: Mapping[str, Any] | None = None,
    only: Iterable[int] | None = None,
    now: datetime | None = None,
) -> EpisodePlan:
    """Episodes for ``turns`` (in conversation order).

    Args:
        turns: The conversation, oldest first.
        config: Budgets and roles (default :class:`EpisodeConfig`).
        pii: Filter for every turn and every value (``None``: no filtering); turns are
            dropped or redacted as its ``turns`` says (:meth:`PIIFilter.for_turns`).
        source: Stored as the value's ``source`` (e.g. ``{"by": "extract_memories"}``).
        only: Positions of the turns to make episodes of (default: all); the others serve
            as context only (the node keeps the latest turn, the history is context).
        now: ``valid_from`` of turns without a time (not part of their key, so a retried
            turn is still one memory).
    """
    config = config or EpisodeConfig()
    pii = pii.for_turns() if pii is not None else None
    plan = EpisodePlan(turns=len(turns))
    lines: list[str | None] = []
    said: list[tuple[str, list[PIIMatch]]] = []  # each turn's text and its own findings
    for turn in turns:
        text = " ".join(turn.text.split())
        own = pii.find(text) if pii is not None and text else []
        cleaned: str | None = text
        if own and pii is not None:
            cleaned = pii.redact(text, own) if pii.mode == "redact" else None
            plan.pii_dropped += cleaned is None
            plan.pii_redacted += cleaned is not None
        said.append((text, own))
        lines.append(f"{turn.label}: {_cut(cleaned, config.max_turn_chars)}" if cleaned else None)
    wanted = set(range(len(turns)) if only is None else only)
    by_key: dict[str, Episode] = {}
    sessions = [turn.session for turn in turns]
    for position, turn in enumerate(turns):
        line = lines[position]
        if position not in wanted:
            continue
        if line is None or turn.role not in config.roles:
            plan.skipped += line is not None
            continue
        if word_count(turn.text) < config.min_words:
            plan.skipped += 1
            continue
        start, end = position, position + 1
        while start > 0 and sessions[start - 1] == turn.session:
            start -= 1
        while end < len(turns) and sessions[end] == turn.session:
            end += 1
        chosen = _context(
            lines[start:end],
            position - start,
            config.context_before,
            config.context_after,
            config.max_context_chars,
        )
        content: str | None = line
        speaker = turn.label
        if pii is not None:  # PII split across the pieces this record joins
            window = (turns[start:end], said[start:end])
            content, speaker, chosen, changed = _window(
                pii, *window, (position - start, line), chosen
            )
            if content is None:
                plan.pii_dropped += 1
                continue
            plan.pii_redacted += changed and pii.mode == "redact"
        context = "\n".join(chosen[i] for i in sorted(chosen))
        value: dict[str, Any] = {
            "content": content,
            "kind": "episodic",
            "importance": config.importance,
            "role": turn.role,
            "speaker": speaker,
        }
        if context:
            value["context"] = context
        moment = turn.time if turn.time is not None else now
        if moment is not None:
            moment = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
            value["valid_from"] = moment.isoformat()
        if turn.id:
            value["turn_id"] = turn.id
        if source:
            value["source"] = dict(source)
        if pii is not None:  # the gate every written value passes, whatever its field
            screening = pii.screen(value)
            if screening.value is None:
                plan.pii_dropped += 1
                continue
            value = dict(screening.value)
        key = episode_key(turn)
        plan.duplicates += key in by_key
        by_key[key] = Episode(key, value)
    plan.episodes = list(by_key.values())
    return plan


def _message_turn(message: BaseMessage, session: str | None) -> EpisodeTurn | None:
    if isinstance(message, HumanMessage):
        role = "user"
    elif isinstance(message, AIMessage) and not message.tool_calls:
        role = "assistant"
    else:
        return None  # system blocks, tool calls and tool results are not conversation
    when: datetime | None = None
    for name in ("timestamp", "created_at", "sent_at"):
        when = parse_iso_datetime(message.additional_kwargs.get(name))
        if when is not None:
            break
    return EpisodeTurn(
        message_text(message), role, message.name or None, message.id or None, session, when
    )


def _mapping_turn(raw: Mapping[str, Any], session: str | None) -> EpisodeTurn:
    text = raw.get("text", raw.get("content"))
    if not isinstance(text, str):
        raise InvalidValueError("a turn needs 'text' (or 'content') as a string")
    role = raw.get("role", "user")
    if role in ("human",):
        role = "user"
    if role in ("ai",):
        role = "assistant"
    if role not in ROLES:
        raise InvalidValueError(f"turn role={role!r} is not one of {ROLES}")
    when = raw.get("time")
    if when is not None and not isinstance(when, datetime):
        when = parse_iso_datetime(when)
        if when is None:
            raise InvalidValueError(f"turn time={raw.get('time')!r} is not an ISO-8601 time")
    speaker, turn_id = raw.get("speaker"), raw.get("id")
    return EpisodeTurn(
        text,
        role,
        str(speaker) if speaker is not None else None,
        str(turn_id) if turn_id is not None else None,
        str(raw["session"]) if raw.get("session") is not None else session,
        when,
    )


def to_turns(
    history: Iterable[EpisodeTurn | BaseMessage | Mapping[str, Any] | tuple[str, str]],
    session: str | None = None,
) -> list[EpisodeTurn]:
    """Normalise a history (turns, LangChain messages, ``("user", "text")`` pairs or
    ``{"role", "text", ...}`` dicts).

    Messages that are not conversation (system, tool calls, tool results) are left out.

    Raises:
        InvalidValueError: an entry of another type, or a dict without text.

    Example:
        ```python
        from langchain_core.messages import AIMessage, HumanMessage

        from langgraph_recall.episodes._plan import to_turns

        turns = to_turns([HumanMessage("I moved to Oslo."), AIMessage("Nice!"), ("user", "Yes")])
        assert [t.role for t in turns] == ["user", "assistant", "user"]
        ```
    """
    turns: list[EpisodeTurn] = []
    for entry in history:
        if isinstance(entry, EpisodeTurn):
            turns.append(entry)
        elif isinstance(entry, BaseMessage):
            turn = _message_turn(entry, session)
            if turn is not None:
                turns.append(turn)
        elif isinstance(entry, Mapping):
            turns.append(_mapping_turn(entry, session))
        elif isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], str):
            (message,) = convert_to_messages([entry])  # ("user", "text") as in a graph's input
            turn = _message_turn(message, session)
            if turn is not None:
                turns.append(turn)
        else:
            raise InvalidValueError(
                f"a history entry is {type(entry).__name__}; pass EpisodeTurn, messages or dicts"
            )
    return turns


def episode_ops(
    namespace: tuple[str, ...], episodes: Sequence[Episode], ttl: float | None
) -> list[PutOp]:
    """The store writes of ``episodes`` (indexed on their context and content).

    Example:
        ```python
        from langgraph_recall.episodes import Episode
        from langgraph_recall.episodes._plan import episode_ops

        op = episode_ops(("m", "u"), [Episode("k", {"content": "A: hi"})], None)[0]
        assert op.index == ["context", "content"] and op.ttl is None
        ```
    """
    fields = list(EPISODE_INDEX_FIELDS)
    return [PutOp(namespace, e.key, e.value, index=fields, ttl=ttl) for e in episodes]
