"""Store extras are declared by the class (``supports_<x> = True``), never read off a signature."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from langgraph_recall.store._capabilities import store_supports
from langgraph_recall.store.postgres import AsyncPostgresMemoryStore, PostgresMemoryStore

EXTRAS = ("as_of", "explain", "include_invalid", "forget", "ttl")


@pytest.mark.parametrize("cls", [PostgresMemoryStore, AsyncPostgresMemoryStore])
@pytest.mark.parametrize("capability", EXTRAS)
def test_our_stores_declare_every_extra(cls: type[Any], capability: Any) -> None:
    assert store_supports(cls, capability)


class _LookAlike(InMemoryStore):
    """Takes the same keywords as our search, but declares nothing."""

    def search(self, *args: Any, as_of: Any = None, explain: bool = False, **kw: Any) -> Any:
        return super().search(*args, **kw)


@pytest.mark.parametrize("capability", ["as_of", "explain", "include_invalid", "forget"])
def test_a_signature_alone_claims_nothing(capability: Any) -> None:
    assert not store_supports(_LookAlike(), capability)
    assert not store_supports(InMemoryStore(), capability)


def test_only_true_counts() -> None:
    class Truthy(InMemoryStore):
        supports_as_of = "yes"  # not the flag: a truthy non-bool must not pass

    assert not store_supports(Truthy(), "as_of")
