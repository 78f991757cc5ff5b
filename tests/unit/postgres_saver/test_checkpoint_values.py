"""The value rules both savers apply at the door (``checkpoint/_values.py``, pure)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from langgraph_recall.checkpoint import _values
from langgraph_recall.errors import InvalidFilterError, InvalidValueError

SERDE = JsonPlusSerializer()


def test_text_the_serializer_represents_round_trips_exactly() -> None:
    for text in ("a\x00b", "é🙂\u202e", "what? why?", "x" * 5000):
        assert SERDE.loads_typed(_values.dump_value(SERDE, text, "channel 'c'")) == text


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ("a\ud800b", ""),
        ({"k": ["ok", "x\udc80"]}, "['k'][1]"),
        ({"k\udfff": 1}, " (a key)"),
        ([HumanMessage(content="hi \ud800?")], "[0].content"),
        ([HumanMessage(content="hi", extra="\ud801")], "[0].extra"),
    ],
)
def test_unpaired_surrogates_are_refused_with_where_they_are(value: Any, path: str) -> None:
    with pytest.raises(InvalidValueError, match="unpaired surrogate") as info:
        _values.dump_value(SERDE, value, "channel 'c'")
    assert "channel 'c' holds text with an unpaired surrogate" in str(info.value)
    assert path in str(info.value)
    assert "nothing was written" in str(info.value)


def test_what_the_serializer_cannot_encode_is_refused_with_its_reason() -> None:
    deep: Any = "leaf"
    for _ in range(300):
        deep = [deep]
    for value, reason in ((2**70, "64-bit"), (deep, "Recursion"), (object(), "not msgpack")):
        with pytest.raises(InvalidValueError, match=reason):
            _values.dump_value(SERDE, value, "channel 'c'")


def test_oversize_values_and_calls_are_refused() -> None:
    big = b"x" * (_values.MAX_VALUE_BYTES + 1)
    with pytest.raises(InvalidValueError, match="at most 134,217,728 bytes per value"):
        _values.dump_value(SERDE, big, "channel 'c'")
    assert _values.dump_value(SERDE, big, "metadata", limit=False)[0] == "bytes"
    _values.check_call_size(_values.MAX_CALL_BYTES, "put")
    with pytest.raises(InvalidValueError, match="per call"):
        _values.check_call_size(_values.MAX_CALL_BYTES + 1, "put")


def test_only_what_jsonb_holds_exactly_stays_inline() -> None:
    for value in (None, True, 0, 2**64 - 1, -(2**63), 2.5, -0.0, 1e-4, "plain", "é" * 256):
        assert _values.fits_jsonb(value), value
    for value in ("a\x00b", 1e16, 1e-7, float("nan"), float("inf"), 2**64, "x" * 1025,
                  "é" * 600, b"x", [1], {"a": 1}):  # fmt: skip
        assert not _values.fits_jsonb(value), value


def test_metadata_and_filters_are_json_every_backend_stores_alike() -> None:
    assert _values.check_json({"source": "loop", "step": 1, "tags": ("a",), "x": None}, "m") > 0
    deep: Any = 1
    for _ in range(_values.MAX_JSON_DEPTH + 1):
        deep = [deep]
    for bad, reason in (
        ({"a": {"b": "x\x00"}}, "NUL"),
        ({"a": "\ud800"}, "surrogate"),
        ({"a": 2**64}, "64 bits"),
        ({"a": float("nan")}, "NaN"),
        ({"a": 6.8e16}, "1e16"),
        ({1: "a"}, "not a str"),
        ({"a": {1, 2}}, "set"),
        ({"a": deep}, "nesting"),
    ):
        with pytest.raises(InvalidValueError, match=reason):
            _values.check_json(bad, "metadata")
        with pytest.raises(InvalidFilterError):
            _values.check_json(bad, "filter", error=InvalidFilterError)
    with pytest.raises(InvalidValueError, match="over 10 bytes"):
        _values.check_json({"a": "x" * 20}, "metadata", max_bytes=10)
