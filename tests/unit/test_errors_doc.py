"""docs/errors.md draws the error hierarchy; the code must be that tree, class for class."""

from __future__ import annotations

import re
from pathlib import Path

from langgraph_recall import errors

DOC = Path(__file__).resolve().parents[2] / "docs" / "errors.md"
_BULLET = re.compile(r"^(?P<indent> *)- `(?P<name>\w+)`")


def _documented_tree() -> dict[str, str | None]:
    """Each documented class and the class it is drawn under (``None`` for the root)."""
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if not (match := _BULLET.match(line)):
            continue
        depth = len(match["indent"])
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[match["name"]] = stack[-1][1] if stack else None
        stack.append((depth, match["name"]))
    return parents


def test_every_error_is_drawn_once_under_the_class_it_derives_from() -> None:
    tree = _documented_tree()
    exported = {
        name: getattr(errors, name)
        for name in errors.__all__
        if issubclass(getattr(errors, name), errors.LangGraphRecallError)
    }
    assert set(tree) == set(exported), "docs/errors.md and errors.__all__ name other classes"
    for name, parent in tree.items():
        ours = [
            base.__name__
            for base in exported[name].__bases__
            if issubclass(base, errors.LangGraphRecallError)
        ]
        assert ours == ([parent] if parent else []), (name, ours, parent)


def test_what_can_be_called_again_is_retryable_and_nothing_else() -> None:
    retryable = {
        name
        for name in errors.__all__
        if isinstance(getattr(errors, name), type)
        and issubclass(getattr(errors, name), errors.RetryableError)
    }
    assert retryable == {
        "RetryableError",
        "TransientError",
        "BackendUnavailableError",
        "NotReplicatedError",
        "ThreadBusyError",
    }
