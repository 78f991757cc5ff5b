"""Identity as users have it: the reversible, collision-free label encoding of identity
values (``alice@example.com``, ``org.team/user``, unicode, ``*``, ``%``...), its inverse
for whole namespace templates, and the nodes using it end to end (InMemoryStore)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.memory import InMemoryStore

from langgraph_recall._internal.identity import (
    RESERVED_CHARACTERS,
    decode_label,
    encode_label,
    format_namespace,
    parse_namespace,
    template_fields,
)
from langgraph_recall.errors import ConfigurationError, InvalidNamespaceError
from langgraph_recall.nodes import ExtractNode, RetrieveNode
from langgraph_recall.store._namespace import validate_namespace
from tests._hypothesis import thorough

ANY_CHAR = st.characters(blacklist_categories=())  # surrogates and controls included
IDS = st.text(ANY_CHAR, min_size=1, max_size=40)
LOOKALIKES = ["u1", "u1.", "u1%2E", "u1%252E", "u1%", "u1*", "*", "%", ".", "U1", "u1 ", "u１"]
TEMPLATES = [
    ("memories", "{user_id}"),
    ("memories", "{org}", "{user_id}"),
    ("{org}", "u", "{user_id}", "{thread_id}"),
    ("m", "{user_id}", "{user_id}"),
]


@settings(max_examples=thorough(400), deadline=None)
@given(IDS)
def test_identity_labels_are_reversible(value: str) -> None:
    label = encode_label(value)
    assert decode_label(label) == value
    validate_namespace(("memories", label))  # every encoded id is a storable label
    assert not any(char in label for char in ".*\x00")


@settings(max_examples=thorough(400), deadline=None)
@given(IDS, IDS)
def test_identity_labels_are_collision_free(first: str, second: str) -> None:
    if first != second:
        assert encode_label(first) != encode_label(second)


@settings(max_examples=thorough(300), deadline=None)
@given(st.text(ANY_CHAR, max_size=20))
def test_decoding_accepts_only_canonical_labels(label: str) -> None:
    """Every label decodes to at most one id, and only the id's own encoding decodes."""
    try:
        value = decode_label(label)
    except InvalidNamespaceError:
        return
    assert encode_label(value) == label


@given(
    st.text(
        st.characters(
            blacklist_characters="".join(RESERVED_CHARACTERS), blacklist_categories=("Cs",)
        ),
        min_size=1,
    )
)
def test_ids_that_need_no_encoding_keep_their_label(value: str) -> None:
    assert encode_label(value) == value


@settings(max_examples=thorough(300), deadline=None)
@given(st.sampled_from(TEMPLATES), IDS, IDS, IDS)
def test_templates_with_several_fields_are_reversible(
    template: tuple[str, ...], org: str, user: str, thread: str
) -> None:
    values = {"org": org, "user_id": user, "thread_id": thread}
    wanted = {name: values[name] for name in template_fields(template)}
    namespace = format_namespace(template, context=wanted, config=None)
    validate_namespace(namespace)
    assert parse_namespace(template, namespace) == wanted


@settings(max_examples=thorough(300), deadline=None)
@given(st.sampled_from(TEMPLATES), IDS, IDS, IDS, IDS)
def test_templates_with_several_fields_are_collision_free(
    template: tuple[str, ...], org1: str, user1: str, org2: str, user2: str
) -> None:
    fields = template_fields(template)
    first = {"org": org1, "user_id": user1, "thread_id": "t"}
    second = {"org": org2, "user_id": user2, "thread_id": "t"}
    if [first[name] for name in fields] != [second[name] for name in fields]:
        assert format_namespace(template, context=first, config=None) != format_namespace(
            template, context=second, config=None
        )


def test_lookalike_ids_get_distinct_labels() -> None:
    labels = [encode_label(value) for value in LOOKALIKES]
    assert len(set(labels)) == len(LOOKALIKES)
    assert encode_label("alice@example.com") == "alice@example%2Ecom"
    assert encode_label("org.team/user") == "org%2Eteam/user"
    assert encode_label("张三") == "张三"
    assert [decode_label(label) for label in labels] == LOOKALIKES


@pytest.mark.parametrize("label", ["u1%2e", "%41", "a.b", "%", "a*", "%E0%80", "%ZZ", "", "x%0"])
def test_non_canonical_labels_are_rejected(label: str) -> None:
    with pytest.raises(InvalidNamespaceError, match="not an encoded identity"):
        decode_label(label)


def test_parse_namespace_rejects_foreign_namespaces() -> None:
    with pytest.raises(InvalidNamespaceError, match="labels"):
        parse_namespace(("memories", "{user_id}"), ("memories",))
    with pytest.raises(InvalidNamespaceError, match="does not match"):
        parse_namespace(("memories", "{user_id}"), ("other", "user_id:u1"))
    with pytest.raises(InvalidNamespaceError, match="not a 'user_id' label"):
        parse_namespace(("memories", "{user_id}"), ("memories", "u1"))  # 0.1's label
    with pytest.raises(InvalidNamespaceError, match="not a 'user_id' label"):
        parse_namespace(("memories", "{user_id}"), ("memories", "org:u1"))
    with pytest.raises(InvalidNamespaceError, match="two values"):
        parse_namespace(("{user_id}", "{user_id}"), ("user_id:a", "user_id:b"))


@pytest.mark.parametrize(
    ("template", "message"),
    [
        (("m", "{}"), "empty"),
        (("m", "{a}{b}"), "segment of its own"),
        (("m", "{org}-{user_id}"), "segment of its own"),
        (("m", "u{user_id}"), "segment of its own"),
        (("m", "team:x"), "marks identity values"),
        (("m", "{a.b}"), "plain name"),
        (("m", "{a[0]}"), "plain name"),
        (("m", "{a:.3}"), "format"),
        (("m", "{a!r}"), "format"),
        (("m", "{a"), "malformed"),
        (("m", 3), "int segment"),
    ],
)
def test_templates_that_could_collide_are_refused(template: tuple[str, ...], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        template_fields(template)


def test_nodes_store_users_as_they_are_named() -> None:
    """Ids with dots, slashes and unicode work in the nodes, and look-alikes stay apart."""
    store = InMemoryStore()
    extract = ExtractNode(store=store)
    users = ["alice@example.com", "org.team/user", "u1", "u1.", "u1%2E", "Zhāng Sān"]
    for index, user in enumerate(users):
        extract.invoke(
            {"messages": [("user", f"I live in City{index}.")]},
            config={"configurable": {"user_id": user, "thread_id": f"t{index}"}},
        )
    for index, user in enumerate(users):
        namespace = ("memories", f"user_id:{encode_label(user)}")
        contents = [item.value["content"] for item in store.search(namespace)]
        assert contents == [f"User lives in City{index}."]
        found = RetrieveNode(store=store).invoke(
            {"messages": [("user", "Where do I live?")]},
            config={"configurable": {"user_id": user}},
        )
        assert [m["content"] for m in found["memories"]] == [f"User lives in City{index}."]


# -- a user's scope is exactly the user's namespaces -----------------------------------
FIELDS = ["user_id", "org", "team", "thread_id"]
LITERALS = st.sampled_from(["memories", "m", "u", "42", "7", "user_id", "org", "shared", "x%41"])
SEGMENTS = st.one_of(LITERALS, st.sampled_from([f"{{{name}}}" for name in FIELDS]))
LAYOUTS = st.lists(SEGMENTS, min_size=1, max_size=4).map(lambda segs: tuple([*segs, "{user_id}"]))
SMALL_IDS = st.one_of(st.sampled_from(["42", "7", "u", "memories", "user_id:42", "org:42"]), IDS)


def scope(
    layouts: list[tuple[str, ...]], user: str, others: dict[str, str]
) -> set[tuple[str, ...]]:
    return {
        format_namespace(layout, context={**others, "user_id": user}, config=None)
        for layout in layouts
    }


def overlap(mine: set[tuple[str, ...]], theirs: set[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Namespaces of ``theirs`` lying in (or equal to) a namespace of ``mine``: what a
    prefix search, ``forget(prefix)`` or ``inspect`` of ``mine`` would reach."""
    return [ns for ns in theirs for own in mine if ns[: len(own)] == own]


@settings(max_examples=thorough(500), deadline=None)
@given(
    st.lists(LAYOUTS, min_size=1, max_size=4),
    SMALL_IDS,
    SMALL_IDS,
    st.fixed_dictionaries({name: SMALL_IDS for name in FIELDS if name != "user_id"}),
    st.fixed_dictionaries({name: SMALL_IDS for name in FIELDS if name != "user_id"}),
)
def test_a_users_scope_never_contains_another_users_namespace(
    layouts: list[tuple[str, ...]],
    user: str,
    other_user: str,
    values: dict[str, str],
    other_values: dict[str, str],
) -> None:
    """Random layouts x random ids (the other fields random too, ids that look like
    labels or literals included): no namespace of one user lies under any namespace of
    another user, in any two layouts of one store."""
    if user == other_user:
        return
    mine, theirs = scope(layouts, user, values), scope(layouts, other_user, other_values)
    assert overlap(mine, theirs) == [] and overlap(theirs, mine) == []


def test_the_documented_layouts_overlapped_before_and_no_longer_do() -> None:
    """The finding: with ``("memories", "{user_id}")`` and ``("memories", "{org}",
    "{user_id}")`` in one store, user 42's namespace was a prefix of org 42's members'."""
    from langgraph_recall._internal.identity import legacy_namespace

    flat, nested = ("memories", "{user_id}"), ("memories", "{org}", "{user_id}")
    old_user, old_member = (
        legacy_namespace(flat, {"user_id": "42"}),
        legacy_namespace(nested, {"org": "42", "user_id": "7"}),
    )
    assert old_member[: len(old_user)] == old_user  # 0.1: the member's data was under 42's
    user = format_namespace(flat, context={"user_id": "42"}, config=None)
    member = format_namespace(nested, context={"org": "42", "user_id": "7"}, config=None)
    assert (user, member) == (("memories", "user_id:42"), ("memories", "org:42", "user_id:7"))
    assert member[: len(user)] != user
