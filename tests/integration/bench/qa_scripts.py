"""Scripted stand-ins for the LLM in the QA harness tests (the rest is the real code).

``Script`` is the answer/extraction model: extraction returns each turn as a memory,
consolidation adds every candidate, the memory method's answerer answers with the gold
answer exactly when the ``<memory>`` block it was given holds the question's evidence
turns, and the full-context answerer knows the gold answer of every other question.
``Judge`` calls an answer CORRECT when it equals the gold answer after normalisation.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, SystemMessage

from langgraph_recall.bench import locomo_qa
from langgraph_recall.bench._qa_metrics import normalize_answer
from langgraph_recall.offline import tool_call_message

__all__ = [
    "DIMS",
    "MINI",
    "UNKNOWN",
    "Judge",
    "Script",
    "mini_conversation",
    "prompt_tokens",
    "text_of",
]

DIMS = 64
UNKNOWN = "no idea"


def text_of(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


MINI = Path(__file__).parent / "data"  # a hand-written conversation in LoCoMo's format


def mini_conversation() -> locomo_qa.QAConversation:
    """The hand-written two-session conversation (13 turns, 9 questions of categories 1-4)."""
    [conversation] = locomo_qa.load_qa_conversations(MINI)
    return conversation


class Script:
    """The scripted answer/extraction model's reply function, with call counters."""

    def __init__(
        self,
        conversation: locomo_qa.QAConversation,
        fail_after: int | None = None,
        unreadable: str | None = None,
    ):
        self.lock = threading.Lock()
        self.unreadable = unreadable  # extraction of a turn holding this text gets no JSON
        self.texts = {t.dia_id: t.text for t in conversation.turns}
        self.questions = {q.text: q for q in conversation.questions}
        self.full_context_known = {q.text for q in conversation.questions[::2]}
        self.calls: dict[str, int] = {"extract": 0, "consolidate": 0, "memory": 0, "full": 0}
        self.fail_after = fail_after
        self.memory_hits: dict[str, bool] = {}

    def __call__(self, messages: list[BaseMessage]) -> Any:
        with self.lock:  # the harness answers questions on several threads
            return self._reply(messages)

    def _reply(self, messages: list[BaseMessage]) -> Any:
        system = text_of(messages[0]) if isinstance(messages[0], SystemMessage) else ""
        last = text_of(messages[-1])
        if "You extract long-term memories" in system:
            self.calls["extract"] += 1
            if self.fail_after is not None and self.calls["extract"] > self.fail_after:
                raise KeyboardInterrupt("scripted interruption")
            if self.unreadable is not None and self.unreadable in last:
                return "sorry, I cannot produce JSON today"
            memories = [
                {"content": line.split(": ", 2)[2], "kind": "episodic", "importance": 5}
                for line in last.splitlines()
                if line.count(": ") >= 2
            ]
            return tool_call_message("ExtractionOutput", {"memories": memories})
        if "New candidate memories" in last:
            self.calls["consolidate"] += 1
            n = len(re.findall(r"^C\d+:", last, re.M))
            decisions = [{"candidate": i, "action": "ADD"} for i in range(n)]
            return tool_call_message("ConsolidationOutput", {"decisions": decisions})
        question = self.questions[last]
        if "this conversation between" in system:
            self.calls["full"] += 1
            return question.answer if last in self.full_context_known else UNKNOWN
        self.calls["memory"] += 1
        block = "\n".join(text_of(m) for m in messages if isinstance(m, SystemMessage))
        hit = all(
            " ".join(self.texts[e].split())[:60] in " ".join(block.split())
            for e in question.evidence
        )
        self.memory_hits[last] = hit
        return question.answer if hit else UNKNOWN


def prompt_tokens() -> int:
    from langgraph_recall._memory.messages import count_tokens
    from langgraph_recall.prompts import DEFAULT_MEMORY_BLOCK_PROMPT

    return int(count_tokens([SystemMessage(DEFAULT_MEMORY_BLOCK_PROMPT)]))


class Judge:
    """CORRECT when the generated answer equals the gold answer after normalisation."""

    def __init__(self) -> None:
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, messages: list[BaseMessage]) -> str:
        with self.lock:
            self.calls += 1
        prompt = text_of(messages[-1])
        gold = re.search(r"^Gold answer: (.*)$", prompt, re.M)
        answer = re.search(r"^Generated answer: (.*)$", prompt, re.M)
        assert gold and answer
        same = normalize_answer(gold[1]) == normalize_answer(answer[1])
        return f'Compared.\n{{"label": "{"CORRECT" if same else "WRONG"}"}}'
