"""The LangGraph server's own copy of a conversation, as the erasure sees it (thin shell).

Under ``langgraph dev`` or on LangGraph Platform the server keeps threads (with their
latest values: the whole conversation), runs (with their inputs) and crons in its own
persistence (``.langgraph_api/`` files, the Platform's database), besides the checkpoints
it writes through our saver. Deleting a thread through the server's API
(``DELETE /threads/{id}``) removes all of it and calls the saver's ``adelete_thread``.

A thread run by a server is recognisable by its checkpoints' metadata: the server puts
its own keys there (:data:`SERVER_METADATA_KEYS`, e.g. ``langgraph_api_version``,
``assistant_id``). :func:`run_by_server` tells; the erasure reports such a thread as
not erased unless it was given the server's URL.

Example:
    ```python
    from langgraph_recall._langgraph_server import run_by_server

    assert run_by_server({"source": "loop", "assistant_id": "fe096781", "graph_id": "agent"})
    assert not run_by_server({"source": "loop", "step": 1, "user_id": "u1"})
    ```
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langgraph_recall.errors import BackendUnavailableError

__all__ = [
    "SERVER_METADATA_KEYS",
    "AsyncServerThreads",
    "ServerThreads",
    "run_by_server",
]

SERVER_METADATA_KEYS = frozenset(
    {"assistant_id", "graph_id", "langgraph_api_version", "langgraph_host", "run_attempt"}
)
"""Checkpoint metadata keys only the LangGraph server writes."""

PAGE = 100


def run_by_server(metadata: Mapping[str, Any] | None) -> bool:
    """Whether a checkpoint with this metadata was written by a run of a LangGraph server."""
    return bool(metadata) and not SERVER_METADATA_KEYS.isdisjoint(metadata or {})


def _missing(exc: Exception) -> bool:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None) == 404


def _unreachable(url: str, exc: Exception) -> BackendUnavailableError:
    return BackendUnavailableError(
        f"the LangGraph server at {url} could not be asked about the user's threads "
        f"({type(exc).__name__}: {exc}); nothing was reported erased there. Check the URL "
        "(the one `langgraph dev` prints, or your deployment's) and its API key "
        "(LANGSMITH_API_KEY), then run the erasure again"
    )


class ServerThreads:
    """The threads API of one LangGraph server (``langgraph_sdk``'s sync client)."""

    def __init__(self, url: str) -> None:
        from langgraph_sdk import get_sync_client

        self.url = url
        self.client = get_sync_client(url=url)

    def with_metadata(self, values: Iterable[Any]) -> list[str]:
        """Threads whose metadata names the user (``{"user_id": value}``)."""
        found: list[str] = []
        try:
            for value in values:
                offset = 0
                while True:
                    page = self.client.threads.search(
                        metadata={"user_id": value}, limit=PAGE, offset=offset
                    )
                    found += [str(thread["thread_id"]) for thread in page]
                    if len(page) < PAGE:
                        break
                    offset += PAGE
        except Exception as exc:
            raise _unreachable(self.url, exc) from exc
        return list(dict.fromkeys(found))

    def delete(self, thread_ids: Sequence[str]) -> list[str]:
        """Delete the threads the server has (its values, runs and our checkpoints);
        returns those it had."""
        deleted = []
        for thread_id in thread_ids:
            try:
                self.client.threads.delete(thread_id)
            except Exception as exc:
                if not _missing(exc):
                    raise _unreachable(self.url, exc) from exc
            else:
                deleted.append(thread_id)
        return deleted

    def present(self, thread_ids: Sequence[str]) -> list[str]:
        """Those of ``thread_ids`` the server still has."""
        left = []
        for thread_id in thread_ids:
            try:
                self.client.threads.get(thread_id)
            except Exception as exc:
                if not _missing(exc):
                    raise _unreachable(self.url, exc) from exc
            else:
                left.append(thread_id)
        return left


class AsyncServerThreads:
    """Async :class:`ServerThreads` (``langgraph_sdk``'s async client)."""

    def __init__(self, url: str) -> None:
        from langgraph_sdk import get_client

        self.url = url
        self.client = get_client(url=url)

    async def with_metadata(self, values: Iterable[Any]) -> list[str]:
        """Async :meth:`ServerThreads.with_metadata`."""
        found: list[str] = []
        try:
            for value in values:
                offset = 0
                while True:
                    page = await self.client.threads.search(
                        metadata={"user_id": value}, limit=PAGE, offset=offset
                    )
                    found += [str(thread["thread_id"]) for thread in page]
                    if len(page) < PAGE:
                        break
                    offset += PAGE
        except Exception as exc:
            raise _unreachable(self.url, exc) from exc
        return list(dict.fromkeys(found))

    async def delete(self, thread_ids: Sequence[str]) -> list[str]:
        """Async :meth:`ServerThreads.delete`."""
        deleted = []
        for thread_id in thread_ids:
            try:
                await self.client.threads.delete(thread_id)
            except Exception as exc:
                if not _missing(exc):
                    raise _unreachable(self.url, exc) from exc
            else:
                deleted.append(thread_id)
        return deleted

    async def present(self, thread_ids: Sequence[str]) -> list[str]:
        """Async :meth:`ServerThreads.present`."""
        left = []
        for thread_id in thread_ids:
            try:
                await self.client.threads.get(thread_id)
            except Exception as exc:
                if not _missing(exc):
                    raise _unreachable(self.url, exc) from exc
            else:
                left.append(thread_id)
        return left
