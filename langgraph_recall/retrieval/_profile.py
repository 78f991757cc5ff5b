"""The user profile: a compact summary of the user's stable facts and preferences (pure).

Example:
    ```python
    from datetime import datetime, timezone

    from langgraph.store.base import SearchItem

    from langgraph_recall.retrieval._profile import profile_items

    now = datetime.now(timezone.utc)
    name = SearchItem(("m",), "n", {"content": "User's name is Ann.", "slot": "name"}, now, now)
    chat = SearchItem(("m",), "e", {"content": "hi", "kind": "episodic"}, now, now)
    assert [i.key for i in profile_items([chat, name], limit=8)] == ["n"]
    ```
"""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.store.base import SearchItem

__all__ = ["PROFILE_SLOTS", "profile_items"]

PROFILE_SLOTS = (
    "name",
    "location",
    "hometown",
    "employer",
    "role",
    "diet",
    "allergy:",
    "age",
    "birthday",
    "language:",
    "uses:",
    "preference:",
    "favorite:",
)
"""Slots (a trailing ``:`` names a family) whose memories make up the profile, in the
order they are shown: who the user is first, then what they use and like."""


def _order(slot: str) -> int | None:
    for position, known in enumerate(PROFILE_SLOTS):
        if slot == known or (known.endswith(":") and slot.startswith(known)):
            return position
    return None


def profile_items(items: Sequence[SearchItem], *, limit: int) -> list[SearchItem]:
    """The profile's memories among ``items`` (pure): current facts with a profile slot,
    one per slot (the newest), identity first, at most ``limit``."""
    best: dict[str, SearchItem] = {}
    for item in items:
        value = item.value
        slot = value.get("slot")
        if value.get("kind") == "episodic" or value.get("invalid_at") or not slot:
            continue
        if _order(str(slot)) is None:
            continue
        kept = best.get(str(slot))
        if kept is None or item.updated_at > kept.updated_at:
            best[str(slot)] = item
    ordered = sorted(
        best.values(),
        key=lambda i: (_order(str(i.value["slot"])), -i.updated_at.timestamp()),
    )
    return ordered[:limit]
