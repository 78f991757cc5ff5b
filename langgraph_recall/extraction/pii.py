"""Detect and remove PII from every free-text field before anything is written.

Categories: ``email``, ``phone``, ``card`` (13–19 digits, Luhn, card-network prefix, any
separator), ``national_id`` (US SSN, UK NINO, Chinese resident ID with its checksum, IBAN
with mod 97, Indian Aadhaar with Verhoeff, Spanish DNI/NIE with its letter) and ``secret``
(API keys and tokens of well-known formats, private keys, credentials in URLs, and
"password / passcode / pw / PIN is …" in English, German, French, Spanish, Portuguese,
Italian, Dutch, Chinese, Japanese and Korean; in English also "my password's …", "the
password for my bank is …", a login pair "login ann / …" and a password of several words,
"my passphrase is correct horse battery staple").

Matching runs on the text normalised by
:func:`~langgraph_recall.extraction.textnorm.normalize_for_matching` (NFKC, Unicode dashes,
slashes, dots and spaces as ASCII separators, zero-width characters removed, any decimal
digit as ASCII), and each finding is mapped back to the span of the *original* text, so
redaction removes exactly the user's characters: ``张三@qq.com``, ``ann＠example.com``,
``4111/1111/1111/1111`` and ``123–45–6789`` are caught like their ASCII forms.

:class:`PIIFilter` is the single gate every writer of memories goes through:
:meth:`PIIFilter.screen` checks **every free-text field** of a memory value (content,
subject, slot, context, any new field, nested lists and dicts — all but the structural
fields listed in :data:`STRUCTURAL_FIELDS`), :meth:`PIIFilter.screen_candidate` does the
same to a :class:`~langgraph_recall.extraction.types.MemoryCandidate` (before it reaches
consolidation) and :meth:`PIIFilter.screen_plan` to a whole turn's writes. ``mode="drop"``
(the default) discards a new memory that contains PII; ``mode="redact"`` replaces each
finding with ``[EMAIL]``, ``[PHONE]``, … and keeps the rest. A conversation turn kept as an
episode is redacted by default (``turns="redact"``): a developer's turn that shows a config
file with a password in it keeps its code, without the password; ``turns="drop"`` drops it.

Example:
    ```python
    from langgraph_recall.extraction.pii import PIIFilter, find_pii

    assert [m.category for m in find_pii("mail me at ann＠example.com")] == ["email"]
    assert PIIFilter(mode="redact").clean("card 4111–1111–1111–1111") == "card [CARD]"
    assert PIIFilter().clean("my pw is hunter2") is None
    assert PIIFilter().screen({"content": "User likes tea.", "slot": "ann@x.org"}).value is None
    ```
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from langgraph_recall.errors import ConfigurationError
from langgraph_recall.extraction._pii_detectors import detect
from langgraph_recall.extraction.consolidation import PlannedWrite, WritePlan
from langgraph_recall.extraction.dates import parse_iso_datetime
from langgraph_recall.extraction.textnorm import normalize_for_matching
from langgraph_recall.extraction.types import MEMORY_KINDS, Action

__all__ = [
    "PII_CATEGORIES",
    "STRUCTURAL_FIELDS",
    "PIIFilter",
    "PIIMatch",
    "ScreenedPlan",
    "Screening",
    "find_pii",
]

PII_CATEGORIES = ("email", "phone", "card", "national_id", "secret")
"""The categories a :class:`PIIFilter` can look for."""
_PRIORITY = ("email", "secret", "national_id", "card", "phone")  # breaks a tie of lengths

STRUCTURAL_FIELDS = frozenset(
    {
        "kind",
        "importance",
        "valid_from",
        "recorded_at",
        "invalid_at",
        "last_reinforced_at",
        "last_reflection_at",
        "reinforcements",
        "superseded_by",
        "derived_from",
        "source",
    }
)
"""Top-level memory fields that hold no user text, so :meth:`PIIFilter.screen` leaves them
alone: a kind from :data:`~langgraph_recall.extraction.types.MEMORY_KINDS`, numbers, ISO
timestamps, store keys (``superseded_by``, ``derived_from``) and provenance (``source``:
which node and thread wrote it, from which messages). A ``kind`` outside the list or a
date field that is not an ISO timestamp is screened like free text. Every other field is
free text."""

_DATE_FIELDS = frozenset(
    {"valid_from", "recorded_at", "invalid_at", "last_reinforced_at", "last_reflection_at"}
)
_COUNT_OF = {
    Action.ADD: "added",
    Action.UPDATE: "updated",
    Action.INVALIDATE: "invalidated",
    Action.NOOP: "reinforced",
}
T = TypeVar("T")


@dataclass(frozen=True)
class PIIMatch:
    """One PII finding: its category, its character span in the original text, its kind.

    ``kind`` names the detector (``email``, ``phone``, ``card``, ``us_ssn``, ``uk_nino``,
    ``cn_resident_id``, ``iban``, ``in_aadhaar``, ``es_dni``, ``api_key``, ``token``,
    ``private_key``, ``url_credentials``, ``password``).

    Example:
        ```python
        from langgraph_recall.extraction.pii import PIIMatch

        m = PIIMatch("email", 0, 5)
        assert m.placeholder == "[EMAIL]"
        ```
    """

    category: str
    start: int
    end: int
    kind: str = ""

    @property
    def placeholder(self) -> str:
        """The redaction token for this category, e.g. ``[PHONE]``."""
        return "[" + self.category.upper() + "]"


def _check_categories(categories: Iterable[str]) -> frozenset[str]:
    wanted = frozenset(categories)
    unknown = wanted - set(PII_CATEGORIES)
    if unknown:
        raise ConfigurationError(
            f"unknown PII categories {sorted(unknown)}; choose from {list(PII_CATEGORIES)}"
        )
    return wanted


def find_pii(text: str, categories: Iterable[str] = PII_CATEGORIES) -> list[PIIMatch]:
    """Every PII finding in ``text``, as non-overlapping spans of ``text``, left to right.

    Overlapping findings are merged into one span (so redaction never leaves a piece of
    either behind), labelled by the longest of them — the finding that explains the most of
    the text (a card number is longer than the phone number a run of its groups also reads
    as) — and among findings of one length by the first category in the order email,
    secret, national_id, card, phone.

    Example:
        ```python
        from langgraph_recall.extraction.pii import find_pii

        assert find_pii("call +1 415 555 0100")[0].category == "phone"
        assert find_pii("phone 415/555/0100")[0].category == "phone"
        assert find_pii("I was born in 1990, I'm 415 days sober") == []
        ```
    """
    wanted = _check_categories(categories)
    if not text:
        return []
    normalised = normalize_for_matching(text)
    found: list[PIIMatch] = []
    for hit in detect(normalised.text):
        if hit.category in wanted and hit.end > hit.start:
            start, end = normalised.span(hit.start, hit.end)
            found.append(PIIMatch(hit.category, start, end, hit.kind))
    return _resolve([(match, match.end - match.start) for match in found])


def _resolve(weighted: Iterable[tuple[PIIMatch, int]]) -> list[PIIMatch]:
    """Findings (each with its length in the text it was found in) merged where they
    overlap, left to right; a merged span takes the label of its longest finding, and of
    findings of one length the first category of :data:`_PRIORITY`.

    The one precedence rule of every merge: within one text (:func:`find_pii`) and across
    the readings of texts read together (:meth:`PIIFilter.clean_readings`), where a finding
    in one text may be a piece of a longer one that only the joined texts show."""
    merged: list[tuple[PIIMatch, tuple[int, int]]] = []
    for match, length in sorted(weighted, key=lambda item: (item[0].start, item[0].end)):
        rank = (length, -_PRIORITY.index(match.category))
        if merged and match.start < merged[-1][0].end:
            last, best = merged[-1]
            end = max(last.end, match.end)
            if rank > best:
                merged[-1] = (PIIMatch(match.category, last.start, end, match.kind), rank)
            else:
                merged[-1] = (PIIMatch(last.category, last.start, end, last.kind), best)
        else:
            merged.append((match, rank))
    return [match for match, _ in merged]


@dataclass(frozen=True)
class Screening:
    """What :meth:`PIIFilter.screen` did to one value.

    Attributes:
        value: The value to write (redacted where needed), or ``None``: drop it.
        categories: PII categories found (sorted).
        fields: Paths of the fields that held PII (``content``, ``slot``, ``tags[1]``).

    Example:
        ```python
        from langgraph_recall.extraction.pii import PIIFilter

        s = PIIFilter(mode="redact").screen({"content": "Mail ann@example.com"})
        assert s.value == {"content": "Mail [EMAIL]"} and s.redacted and s.fields == ("content",)
        ```
    """

    value: dict[str, Any] | None
    categories: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()

    @property
    def dropped(self) -> bool:
        """True when the value must not be written."""
        return self.value is None

    @property
    def redacted(self) -> bool:
        """True when PII was replaced by placeholders in a value that is kept."""
        return self.value is not None and bool(self.fields)


@dataclass(frozen=True)
class ScreenedPlan:
    """A turn's writes after :meth:`PIIFilter.screen_plan`.

    Attributes:
        plan: The writes to make (counts and notes adjusted).
        dropped: Candidates whose writes were all dropped.
        redacted: Writes kept with PII replaced by placeholders.
    """

    plan: WritePlan
    dropped: int = 0
    redacted: int = 0


def _structural(key: str, value: Any) -> bool:
    if key in _DATE_FIELDS:
        return not isinstance(value, str) or parse_iso_datetime(value) is not None
    if key == "kind":
        return value in MEMORY_KINDS
    return key in STRUCTURAL_FIELDS


@dataclass(frozen=True)
class PIIFilter:
    """Drop or redact PII in memories; the one gate between extracted text and the store.

    Attributes:
        mode: ``"drop"`` (discard a new memory that contains PII) or ``"redact"``.
        categories: Which categories to look for (default: all).
        turns: What happens to a conversation turn recorded as an episode
            (``ingest_history``, ``ExtractNode(episodes=True)``) when it holds PII:
            ``"redact"`` (the default: the turn is kept, each finding replaced by its
            placeholder) or ``"drop"`` (the turn is not stored, nor used as context).

    Example:
        ```python
        from langgraph_recall.extraction.pii import PIIFilter

        f = PIIFilter(mode="redact", categories=("email",))
        assert f.clean("ann@example.com is my email") == "[EMAIL] is my email"
        assert f.clean("call 415-555-0100") == "call 415-555-0100"
        assert PIIFilter().for_turns().clean("my pw is hunter2") == "my pw is [SECRET]"
        ```
    """

    mode: Literal["drop", "redact"] = "drop"
    categories: tuple[str, ...] = PII_CATEGORIES
    turns: Literal["drop", "redact"] = "redact"

    def __post_init__(self) -> None:
        for name in ("mode", "turns"):
            if getattr(self, name) not in ("drop", "redact"):
                raise ConfigurationError(
                    f"PIIFilter {name}={getattr(self, name)!r}: use 'drop' or 'redact'"
                )
        _check_categories(self.categories)

    def for_turns(self) -> PIIFilter:
        """The filter applied to conversation turns kept as episodes: ``mode`` is ``turns``."""
        return self if self.mode == self.turns else dataclasses.replace(self, mode=self.turns)

    def find(self, text: str) -> list[PIIMatch]:
        """:func:`find_pii` with this filter's categories."""
        return find_pii(text, self.categories)

    @staticmethod
    def redact(text: str, matches: Iterable[PIIMatch]) -> str:
        """``text`` with each match replaced by its placeholder.

        Example:
            ```python
            from langgraph_recall.extraction.pii import PIIFilter, find_pii

            assert PIIFilter.redact("a@b.io x", find_pii("a@b.io x")) == "[EMAIL] x"
            ```
        """
        pieces: list[str] = []
        cursor = 0
        for match in sorted(matches, key=lambda m: m.start):
            pieces.append(text[cursor : match.start])
            pieces.append(match.placeholder)
            cursor = match.end
        pieces.append(text[cursor:])
        return "".join(pieces)

    def clean(self, text: str) -> str | None:
        """Return the text without PII, or ``None`` when it must be dropped.

        Example:
            ```python
            from langgraph_recall.extraction.pii import PIIFilter

            assert PIIFilter(mode="redact").clean("SSN 123–45–6789") == "SSN [NATIONAL_ID]"
            ```
        """
        matches = self.find(text)
        if not matches:
            return text
        return None if self.mode == "drop" else self.redact(text, matches)

    def clean_window(
        self, texts: Sequence[str], separators: Sequence[str] = (" ", "")
    ) -> list[str | None]:
        """Clean texts that are read together (a turn and its neighbouring turns), so PII
        split across them — a card number in two messages, an e-mail address cut at the
        ``@`` — is not whole in what they make up.

        The texts are searched joined by each of ``separators`` (a space: a number split in
        groups; nothing: an address cut at the ``@``, which a space would make look like
        code); every text a finding touches is redacted where the finding covers it
        (``"redact"``), or is ``None`` (``"drop"``; the others are searched again joined
        without it, until nothing is found). :meth:`clean_readings` with one reading.

        Returns:
            One entry per text: the text to keep, or ``None``.

        Example:
            ```python
            from langgraph_recall.extraction.pii import PIIFilter

            halves = ["my address is ann.lee", "@example.com, write to me"]
            assert PIIFilter().clean_window(halves) == [None, None]
            assert PIIFilter(mode="redact").clean_window(halves) == [
                "my address is [EMAIL]", "[EMAIL], write to me"]
            assert PIIFilter().clean_window(["I like tea.", "Me too."]) == [
                "I like tea.", "Me too."]
            ```
        """
        return self.clean_readings(texts, [range(len(texts))], separators=separators)

    def clean_readings(
        self,
        pieces: Sequence[str | None],
        readings: Iterable[Sequence[int]],
        *,
        found: Mapping[int, Sequence[PIIMatch]] | None = None,
        tied: Iterable[Sequence[int]] = (),
        separators: Sequence[str] = (" ", ""),
    ) -> list[str | None]:
        """Clean pieces of text that are read together in several ways: each *reading* is
        a sequence of piece indexes, searched joined by each of ``separators``.

        Every piece a finding touches is redacted where the finding covers it
        (``"redact"``), or is ``None`` (``"drop"``: the pieces left are read again without
        it, until nothing is found). Where findings overlap in a piece — its own finding,
        and a longer one that only a reading of several pieces shows — the longest labels
        the placeholder (a card number cut across turns is a ``[CARD]``, though its first
        groups alone read as a phone number).

        Args:
            pieces: The texts (``None``: already dropped).
            readings: How the pieces are read together (e.g. in conversation order, as each
                speaker's turns in a row, as stored).
            found: Findings already known in a piece (on its text as given): they are
                redacted with the rest, and weighed against the readings' findings.
            tied: Groups of pieces kept or dropped together (``"drop"``: a speaker's name
                and what they said).
            separators: What joins the pieces of a reading.

        Returns:
            One entry per piece: the text to keep, or ``None``.

        Example:
            ```python
            from langgraph_recall.extraction.pii import PIIFilter

            turns = ["my card number is 4111-1111", "1111", "1111 thanks"]
            assert PIIFilter(mode="redact").clean_readings(turns, [[0, 1, 2]]) == [
                "my card number is [CARD]", "[CARD]", "[CARD] thanks"]
            assert PIIFilter().clean_readings(["Ann: ", "hi", "Bob: ", "hello"],
                [[0, 1, 2, 3], [1, 3]], tied=[(0, 1), (2, 3)]) == ["Ann: ", "hi", "Bob: ", "hello"]
            ```
        """
        texts: list[str | None] = list(pieces)
        orders = list(dict.fromkeys(tuple(reading) for reading in readings))
        groups = [tuple(group) for group in tied]
        known = {i: [(m, m.end - m.start) for m in ms] for i, ms in (found or {}).items() if ms}
        for attempt in range(len(texts) + 1):
            hits: dict[int, list[tuple[PIIMatch, int]]] = {}
            if attempt == 0:  # the pieces as given: what is known of them holds
                for index, weighted in known.items():
                    if texts[index] is not None:
                        hits.setdefault(index, []).extend(weighted)
            for order in orders:
                for separator in separators:
                    for index, weighted in self._reading(texts, order, separator).items():
                        hits.setdefault(index, []).extend(weighted)
            if not hits:
                return texts
            keep = self.mode == "redact" and attempt < len(texts)
            for index, weighted in hits.items():
                text = texts[index]
                assert text is not None
                texts[index] = self.redact(text, _resolve(weighted)) if keep else None
            for group in groups:
                if any(texts[index] is None for index in group):
                    for index in group:
                        texts[index] = None
        return texts

    def _reading(
        self, pieces: Sequence[str | None], order: Sequence[int], separator: str
    ) -> dict[int, list[tuple[PIIMatch, int]]]:
        """The findings in the pieces of ``order`` joined by ``separator``, cut to each piece
        they touch, each with its length in the joined text (what weighs it)."""
        spans: list[tuple[int, int, int]] = []  # (piece, start, end) in the joined text
        joined = ""
        for index in order:
            piece = pieces[index]
            if piece:
                joined += separator if joined else ""
                spans.append((index, len(joined), len(joined) + len(piece)))
                joined += piece
        matches = self.find(joined) if joined else []
        found: dict[int, list[tuple[PIIMatch, int]]] = {}
        for match in matches:
            for index, start, end in spans:
                if match.start < end and match.end > start:
                    cut = PIIMatch(
                        match.category, max(match.start, start) - start, min(match.end, end) - start
                    )
                    found.setdefault(index, []).append((cut, match.end - match.start))
        return found

    # -- the gate: whole values, candidates and plans -----------------------------------------
    def _walk(self, value: Any, path: str, found: dict[str, set[str]]) -> Any:
        if isinstance(value, str):
            matches = self.find(value)
            if not matches:
                return value
            found[path] = {m.category for m in matches}
            return self.redact(value, matches)
        if isinstance(value, Mapping):
            return {k: self._walk(v, f"{path}.{k}", found) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            items = [self._walk(v, f"{path}[{i}]", found) for i, v in enumerate(value)]
            return items if isinstance(value, list) else tuple(items)
        return value

    def screen(self, value: Mapping[str, Any], *, rewrite: bool = False) -> Screening:
        """Check every free-text field of a memory value (all but :data:`STRUCTURAL_FIELDS`).

        Args:
            value: The value about to be written.
            rewrite: The value rewrites a memory already stored (a reinforcement, an
                invalidation): PII in it is redacted even in ``"drop"`` mode, so closing
                or reinforcing an old memory never fails and never rewrites its PII.

        Example:
            ```python
            from langgraph_recall.extraction.pii import PIIFilter

            s = PIIFilter().screen({"content": "User likes tea.", "subject": "张三@qq.com"})
            assert s.dropped and s.categories == ("email",) and s.fields == ("subject",)
            ```
        """
        found: dict[str, set[str]] = {}
        screened: dict[str, Any] = {}
        for key, field_value in value.items():
            if _structural(key, field_value):
                screened[key] = field_value
            else:
                screened[key] = self._walk(field_value, key, found)
        categories = tuple(sorted(set().union(*found.values()))) if found else ()
        fields = tuple(found)
        if found and self.mode == "drop" and not rewrite:
            return Screening(None, categories, fields)
        return Screening(screened if found else dict(value), categories, fields)

    def screen_candidate(self, candidate: T) -> tuple[T | None, Screening]:
        """Screen every text field of a candidate dataclass (content, subject, slot, …).

        Returns:
            The candidate to keep (redacted where needed) or ``None``, and the screening.

        Example:
            ```python
            from langgraph_recall.extraction.pii import PIIFilter
            from langgraph_recall.extraction.types import MemoryCandidate

            kept, s = PIIFilter().screen_candidate(
                MemoryCandidate("User's key is set.", subject="ann@example.com"))
            assert kept is None and s.fields == ("subject",)
            ```
        """
        if not dataclasses.is_dataclass(candidate) or isinstance(candidate, type):
            raise TypeError(f"screen_candidate needs a dataclass instance, got {candidate!r}")
        texts = {
            f.name: getattr(candidate, f.name)
            for f in dataclasses.fields(candidate)
            if isinstance(getattr(candidate, f.name), (str, list, tuple, dict))
        }
        screening = self.screen(texts)
        if screening.value is None:
            return None, screening
        if not screening.fields:
            return candidate, screening
        changed = {name: screening.value[name] for name in texts}
        return dataclasses.replace(candidate, **changed), screening

    def screen_plan(self, plan: WritePlan) -> ScreenedPlan:
        """Screen every write of a turn; drop a candidate's writes together.

        A new memory with PII (``"drop"`` mode) takes down every write of its candidate
        (so an old memory is never closed for a replacement that is not stored);
        rewrites of stored memories are redacted instead (see :meth:`screen`).

        Example:
            ```python
            from datetime import datetime, timezone

            from langgraph_recall.extraction.consolidation import plan_writes
            from langgraph_recall.extraction.pii import PIIFilter
            from langgraph_recall.extraction.types import MemoryCandidate

            c = [MemoryCandidate("User's mail is ann@example.com."), MemoryCandidate("User is 9.")]
            plan = plan_writes(c, [], [], now=datetime(2026, 1, 1, tzinfo=timezone.utc))
            out = PIIFilter().screen_plan(plan)
            assert out.dropped == 1 and out.plan.counts["added"] == 1
            ```
        """
        screened: list[tuple[PlannedWrite, Screening]] = []
        dropped_groups: dict[int | tuple[str, int], tuple[str, ...]] = {}
        for position, write in enumerate(plan.writes):
            screening = self.screen(write.value, rewrite=write.action is not Action.ADD)
            group: int | tuple[str, int] = (
                write.candidate if write.candidate is not None else ("write", position)
            )
            if screening.dropped:
                dropped_groups[group] = screening.categories
            screened.append((write, screening))
        result = WritePlan(counts=dict(plan.counts), notes=list(plan.notes))
        redacted = 0
        for position, (write, screening) in enumerate(screened):
            group = write.candidate if write.candidate is not None else ("write", position)
            if group in dropped_groups:
                result.counts[_COUNT_OF[write.action]] -= 1
                continue
            assert screening.value is not None
            redacted += screening.redacted
            result.writes.append(dataclasses.replace(write, value=screening.value))
        for group, categories in dropped_groups.items():
            result.counts["skipped"] += 1
            found = ", ".join(categories)
            result.notes.append(f"candidate {group}: not stored, it contains {found}")
        return ScreenedPlan(result, len(dropped_groups), redacted)
