"""``forget_user`` on LangGraph's own InMemoryStore / InMemorySaver (the generic path: no
``forget()`` on the store): threads found through the registry and through metadata as
text or number, look-alike users untouched, bad input refused before anything changes."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langgraph_recall import aforget_user, forget_user
from langgraph_recall.erasure import find_user_data, metadata_values
from langgraph_recall.errors import ConfigurationError, InvalidValueError
from tests.reliability._erasure import WAYS, arun_user, marker, memory_graph, plain_graph, run_user


def texts(store: InMemoryStore, saver: InMemorySaver) -> str:
    """Everything both hold, as one string (values and checkpoint contents)."""
    items = store.search((), limit=10_000)
    checkpoints = list(saver.list(None))
    return repr([i.value for i in items]) + repr([(c.checkpoint, c.metadata) for c in checkpoints])


def test_metadata_values_cover_what_langgraph_stores() -> None:
    assert metadata_values("123") == ["123", 123]
    assert metadata_values("1.5") == ["1.5", 1.5]
    assert metadata_values("True") == ["True", True]
    assert metadata_values("0123") == ["0123"]  # int("0123") is 123, whose text differs
    assert metadata_values("1e400") == ["1e400"]
    assert metadata_values("9" * 5000) == ["9" * 5000]  # int() refuses; no OverflowError


@pytest.mark.parametrize("way", WAYS)
def test_forget_user_finds_the_thread_however_user_id_was_passed(way: str) -> None:
    store, saver = InMemoryStore(), InMemorySaver()
    graphs = (memory_graph(store, saver), plain_graph(saver))
    victim, bystander = marker(), marker()
    run_user(graphs, "123", way, "victim-thread", victim)
    run_user(graphs, "1234", "configurable", "bystander-thread", bystander)
    run_user(graphs, "123 ", "context-dict", "lookalike-thread", bystander)
    assert victim in texts(store, saver)

    report = forget_user(store, saver, 123 if way == "configurable-int" else "123")
    assert report.complete, report.residue
    assert report.threads == ("victim-thread",)
    assert victim not in texts(store, saver)
    assert texts(store, saver).count(bystander) > 0
    left = {str(t.config["configurable"]["thread_id"]) for t in saver.list(None)}
    assert left == {"bystander-thread", "lookalike-thread"}
    again = find_user_data(store, saver, "123")
    assert again.threads == {} and again.memories == 0


async def test_aforget_user_on_the_generic_path() -> None:
    store, saver = InMemoryStore(), InMemorySaver()
    graphs = (memory_graph(store, saver), plain_graph(saver))
    mark = marker()
    for way in ("context-dataclass", "configurable"):
        await arun_user(graphs, "ann@example.com", way, f"t-{way}", mark)
    report = await aforget_user(store, saver, "ann@example.com")
    assert report.complete and len(report.threads) == 2 and report.items_erased > 0
    assert mark not in texts(store, saver)


def test_bad_input_is_refused_and_nothing_changes() -> None:
    store, saver = InMemoryStore(), InMemorySaver()
    graphs = (memory_graph(store, saver), plain_graph(saver))
    run_user(graphs, "u1", "configurable", "t", marker())
    before = texts(store, saver)
    for bad in ("", None, 1.5, True, ["u1"]):
        with pytest.raises(InvalidValueError):
            forget_user(store, saver, bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="user_id"):
        forget_user(store, saver, "u1", namespaces=[("memories",)])
    assert texts(store, saver) == before


def test_custom_templates_and_identity_values() -> None:
    store = InMemoryStore()
    store.put(("org", "acme", "u%2E1"), "k", {"content": "acme memory of 'u.1'"})
    store.put(("org", "acme", "u%252E1"), "k", {"content": "look-alike 'u%2E1' stays"})
    report = forget_user(
        store,
        None,
        "u.1",
        namespaces=[("org", "{org}", "{user_id}")],
        identity={"org": "acme"},
    )
    assert report.complete and report.items_erased == 1
    remaining: list[Any] = [i.value["content"] for i in store.search(("org",))]
    assert remaining == ["look-alike 'u%2E1' stays"]
