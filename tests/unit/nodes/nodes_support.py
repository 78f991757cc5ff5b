"""Helpers for the node tests: a scripted "LLM" that plays extractor, consolidator and
responder from tables (deterministic, logs every call), and graph builders."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_recall.offline import ScriptedChatModel, tool_call_message

EXTRACTION_MARK = "You extract long-term memories"
CONSOLIDATION_MARK = "You maintain a user's long-term memory"


def fact(content: str, slot: str | None = None, **extra: Any) -> dict[str, Any]:
    """One ExtractedMemory payload."""
    return {"content": content, "slot": slot, **extra}


_CANDIDATE = re.compile(r"^C(\d+): \[(\w+)\] (.*) \(subject: (.*?), slot: (.*?)\)$")
_EXISTING = re.compile(r"^M(\d+): \[(\w+)\] (.*) \(subject: (.*?), slot: (.*?), valid from .*\)$")


def consolidate_like_a_careful_llm(prompt: str) -> dict[str, Any]:
    """Decisions a good model would return: repeat → NOOP, same slot → INVALIDATE, else ADD."""
    candidates = [m.groups() for line in prompt.splitlines() if (m := _CANDIDATE.match(line))]
    existing = [m.groups() for line in prompt.splitlines() if (m := _EXISTING.match(line))]
    decisions = []
    for index, _kind, text, subject, slot in candidates:
        same_text = [e for e in existing if e[2].lower() == text.lower()]
        same_slot = [e for e in existing if slot != "-" and e[4] == slot and e[3] == subject]
        if same_text:
            decisions.append(
                {"candidate": int(index), "action": "NOOP", "target": int(same_text[0][0])}
            )
        elif same_slot:
            decisions.append(
                {"candidate": int(index), "action": "INVALIDATE", "target": int(same_slot[0][0])}
            )
        else:
            decisions.append({"candidate": int(index), "action": "ADD"})
    return {"decisions": decisions}


def _last_user_text(messages: Sequence[BaseMessage]) -> str:
    transcript = next(
        (str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage)), ""
    )
    users = [line[len("user: ") :] for line in transcript.splitlines() if line.startswith("user: ")]
    return "\n".join(users)


class TableModel:
    """Routes each call of one ScriptedChatModel by its prompt: extraction answers come
    from ``table`` (user text → list of facts), consolidation from
    :func:`consolidate_like_a_careful_llm`, anything else gets ``reply``."""

    def __init__(
        self,
        table: dict[str, list[dict[str, Any]]],
        reply: str | Callable[[list[BaseMessage]], str] = "OK.",
    ) -> None:
        self.table = table
        self.reply = reply
        self.model = ScriptedChatModel(default=self._route)

    def _route(self, messages: list[BaseMessage]) -> Any:
        first = messages[0]
        if isinstance(first, SystemMessage) and str(first.content).startswith(EXTRACTION_MARK):
            facts = self.table.get(_last_user_text(messages), [])
            return tool_call_message("ExtractionOutput", {"memories": facts})
        if isinstance(first, HumanMessage) and str(first.content).startswith(CONSOLIDATION_MARK):
            return tool_call_message(
                "ConsolidationOutput", consolidate_like_a_careful_llm(str(first.content))
            )
        return self.reply(messages) if callable(self.reply) else self.reply

    def calls_of(self, kind: str) -> list[list[BaseMessage]]:
        """Logged calls of one kind: extraction, consolidation or respond."""
        found = []
        for call in self.model.calls:
            text = str(call[0].content)
            purpose = (
                "extraction"
                if text.startswith(EXTRACTION_MARK)
                else "consolidation"
                if text.startswith(CONSOLIDATION_MARK)
                else "respond"
            )
            if purpose == kind:
                found.append(call)
        return found


def memory_block(messages: Sequence[BaseMessage]) -> str:
    """The text of the <memory> system block among ``messages`` ('' if none)."""
    for message in messages:
        if isinstance(message, SystemMessage) and str(message.content).startswith("<memory>"):
            return str(message.content)
    return ""


# -- the cross-thread city scenario (used with InMemoryStore and with our Postgres store) --
TURN_1 = "Hi! My name is Zhang San. I work in Shanghai and I love Python."
TURN_MOVE = "I just moved to Beijing."
TURN_SINCE = "I've worked at Acme since last May."

SCENARIO_TABLE: dict[str, list[dict[str, Any]]] = {
    TURN_1: [
        fact("User's name is Zhang San.", "name", importance=8),
        fact("User lives in Shanghai.", "location", importance=7),
        fact("User loves Python.", "preference:python", kind="preference"),
    ],
    TURN_MOVE: [fact("User lives in Beijing.", "location", importance=7)],
    TURN_SINCE: [
        fact("User works at Acme.", "employer", importance=7, valid_from="since last May")
    ],
}


class Scenario:
    """Runs the city scenario through langgraph_recall.graphs.build_graph on ``store``."""

    def __init__(self, store: Any, mode: str, checkpointer: Any = None) -> None:
        from langgraph_recall.extraction import RuleBasedExtractor
        from langgraph_recall.graphs import build_graph

        self.store = store
        self.mode = mode
        if mode == "llm":
            self.table_model: TableModel | None = TableModel(SCENARIO_TABLE)
            self.model = self.table_model.model
            self.graph = build_graph(self.model, store=store, checkpointer=checkpointer)
        else:
            self.table_model = None
            self.model = ScriptedChatModel(default="OK.")
            self.graph = build_graph(
                self.model, store=store, checkpointer=checkpointer, extractor=RuleBasedExtractor()
            )

    def respond_inputs(self) -> list[list[BaseMessage]]:
        if self.table_model is not None:
            return self.table_model.calls_of("respond")
        return list(self.model.calls)

    def turn(self, thread: str, text: str, user: str = "zhang") -> dict[str, Any]:
        config = {"configurable": {"thread_id": thread}}
        result: dict[str, Any] = self.graph.invoke(
            {"messages": [("user", text)]}, config, context={"user_id": user}
        )
        return result

    def last_block(self) -> str:
        return memory_block(self.respond_inputs()[-1])


def tool_round(n: int, words: int) -> list[Any]:
    """One user turn with two parallel tool calls (5 messages, fixed ids)."""
    ids = [f"call-{n}-a", f"call-{n}-b"]
    return [
        HumanMessage(f"turn {n} question " + "lorem " * words, id=f"h{n}"),
        AIMessage(
            "", tool_calls=[{"name": "search", "args": {"q": n}, "id": i} for i in ids], id=f"ai{n}"
        ),
        ToolMessage("result " * words, tool_call_id=ids[0], id=f"ta{n}"),
        ToolMessage("result " * words, tool_call_id=ids[1], id=f"tb{n}"),
        AIMessage(f"answer {n} " + "ipsum " * words, id=f"a{n}"),
    ]


def pairs_intact(messages: Sequence[BaseMessage]) -> bool:
    """Every ``ToolMessage`` follows the ``AIMessage`` whose tool call it answers."""
    open_ids: set[str] = set()
    for message in messages:
        if isinstance(message, AIMessage) and message.tool_calls:
            open_ids = {str(c["id"]) for c in message.tool_calls}
        elif isinstance(message, ToolMessage):
            if message.tool_call_id not in open_ids:
                return False
        else:
            open_ids = set()
    return True
