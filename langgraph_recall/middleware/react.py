"""A ready ``pre_model_hook`` for ``langgraph.prebuilt.create_react_agent``.

:class:`MemoryPreModelHook` searches the store for the latest user turn
(:class:`~langgraph_recall.nodes.RetrieveNode`) and returns ``llm_input_messages``: the
model sees the ``<memory>`` block (and a running summary, if any) first, while the
agent's ``messages`` state is left untouched.

Example:
    ```python
    from langgraph.prebuilt import create_react_agent
    from langgraph.store.memory import InMemoryStore

    from langgraph_recall.middleware import MemoryPreModelHook
    from langgraph_recall.offline import ScriptedChatModel

    store = InMemoryStore()
    store.put(("memories", "user_id:u1"), "m1", {"content": "User's name is Zhang San."})
    model = ScriptedChatModel(default="Hello Zhang San!")
    agent = create_react_agent(model, tools=[], pre_model_hook=MemoryPreModelHook(),
                               store=store)
    out = agent.invoke({"messages": [("user", "What's my name?")]},
                       {"configurable": {"user_id": "u1"}})
    assert "Zhang San" in model.calls[-1][0].text
    assert all("<memory>" not in m.text for m in out["messages"])
    ```
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, SystemMessage
from langgraph.store.base import BaseStore

from langgraph_recall._memory.context import NodeContext, messages_of
from langgraph_recall._memory.messages import is_block, render_memory_block
from langgraph_recall.middleware._core import append_system_text, lift_blocks
from langgraph_recall.nodes import (
    DEFAULT_NAMESPACE,
    MEMORY_BLOCK_ID,
    SUMMARY_BLOCK_ID,
    MemoryNode,
    RetrieveNode,
)
from langgraph_recall.prompts import DEFAULT_MEMORY_BLOCK_PROMPT

__all__ = ["MemoryPreModelHook", "llm_input"]


def llm_input(messages: list[BaseMessage], block: str | None) -> list[BaseMessage]:
    """The model input: one leading system message (the conversation's system messages,
    the summary block, then the memory ``block``) followed by the other messages (pure).

    Example:
        ```python
        from langchain_core.messages import HumanMessage

        from langgraph_recall.middleware.react import llm_input

        out = llm_input([HumanMessage("hi")], "<memory>x</memory>")
        assert out[0].text == "<memory>x</memory>" and out[1].text == "hi"
        ```
    """
    system: SystemMessage | None = None
    others: list[BaseMessage] = []
    for message in messages:
        if is_block(message) and message.id == MEMORY_BLOCK_ID:
            continue  # a stale block: this turn's replaces it
        if isinstance(message, SystemMessage) and message.id != SUMMARY_BLOCK_ID:
            system = append_system_text(system, message.text)
        else:
            others.append(message)
    memory = [SystemMessage(block, id=MEMORY_BLOCK_ID)] if block else []
    system, others = lift_blocks(system, [*others, *memory])
    return [system, *others] if system is not None else others


class MemoryPreModelHook(MemoryNode):
    """``create_react_agent(..., pre_model_hook=MemoryPreModelHook())``.

    Args:
        store: A ``BaseStore``; default: the agent's (``create_react_agent(store=...)``).
        namespace: Namespace template of the memories.
        retrieve: A configured :class:`~langgraph_recall.nodes.RetrieveNode` instead
            (limit, token budget, filter...).
        prompt: Template of the block, with ``{memories}``.

    Example:
        ```python
        from langgraph_recall.middleware.react import MemoryPreModelHook

        hook = MemoryPreModelHook(namespace=("memories", "{user_id}"))
        assert hook.retrieve.namespace == ("memories", "{user_id}")
        ```
    """

    node_name = "memory_pre_model_hook"

    def __init__(
        self,
        *,
        store: BaseStore | None = None,
        namespace: tuple[str, ...] = DEFAULT_NAMESPACE,
        retrieve: RetrieveNode | None = None,
        prompt: str = DEFAULT_MEMORY_BLOCK_PROMPT,
        name: str | None = None,
    ) -> None:
        super().__init__(store=store, name=name)
        self.retrieve = retrieve or RetrieveNode(store=store, namespace=namespace)
        self.prompt = prompt

    def _update(self, state: Any, found: dict[str, Any]) -> dict[str, Any]:
        memories = found.get(self.retrieve.memories_key) or []
        block = render_memory_block(memories, self.prompt) if memories else None
        messages = messages_of(state, self.retrieve.messages_key)
        return {"llm_input_messages": llm_input(messages, block)}

    def _run(self, state: Any, ctx: NodeContext) -> dict[str, Any]:
        return self._update(state, self.retrieve.invoke(state, ctx.config))

    async def _arun(self, state: Any, ctx: NodeContext) -> dict[str, Any]:
        return self._update(state, await self.retrieve.ainvoke(state, ctx.config))
