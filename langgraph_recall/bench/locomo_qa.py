"""End-to-end LoCoMo QA: our nodes write, retrieve and answer; an LLM judge scores.

For every conversation:

1. **Ingest.** Every session is fed, in order, through :class:`ExtractNode` with an
   :class:`LLMExtractor` on the model: each pair of consecutive turns of a session is one
   node turn (the first speaker's turn as the user message, the reply as the assistant
   message, both prefixed with the speaker's name and stamped with the session's date),
   so extraction, the PII filter and consolidation run exactly as in an app. With
   ``episodic=True`` the node also keeps both speakers' raw turns as episodic memories
   (:class:`~langgraph_recall.episodes.EpisodeConfig`) and retrieval blends them in.
2. **Answer.** Every question of categories 1–4 goes through :class:`RetrieveNode`
   (``inject=True``: the ``<memory>`` block under its token budget) and
   :class:`RespondNode` on the same model, as a fresh one-message conversation.
3. **Full-context baseline.** The same model answers from the whole conversation (every
   session with its date) in its system prompt: no memory, no retrieval.
4. **Judge.** A judge model labels every answer CORRECT/WRONG with the Mem0 paper's
   protocol (:data:`langgraph_recall.bench._qa_metrics.JUDGE_PROMPT`); J is the percentage correct.
   Token F1 and BLEU-1 against the gold answer are computed too.

The report gives J / F1 / BLEU-1 overall and per category, tokens injected per answer,
LLM calls and latency per ingested turn and per answer, for both methods.

**Resumable and cached.** Every answer, verdict and ingest step is appended to a cache
file (``--cache``; keys: conversation, question, method, model and prompt hashes), so an
interrupted run continues where it stopped: finished answers and verdicts are not asked
again, and a conversation's ingest continues after the last turn it stored (the store
must persist: the embedded Postgres in ``$LANGGRAPH_RECALL_HOME`` by default, or
``--postgres DSN``). Changing the model or a prompt changes the keys (a fresh run).

Models: any OpenAI-compatible endpoint through ``langchain-openai``:
``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``LANGGRAPH_RECALL_MODEL`` (or ``--model``) and
``--judge-model`` (default ``$LANGGRAPH_RECALL_JUDGE_MODEL``, else the answer model).
No figure comes out of this harness without a model; CI runs it on scripted models.

Run::

    pip install langchain-openai
    export OPENAI_API_KEY=... LANGGRAPH_RECALL_MODEL=gpt-4o-mini
    python -m langgraph_recall.bench.locomo_qa --limit-conversations 1 --limit-questions 50
    python -m langgraph_recall.bench.locomo_qa --cache qa-cache.jsonl --json qa.json  # resumable
    langgraph-recall bench locomo-qa --limit-conversations 1

Example:
    Not executed (it needs data or a model)::

        from langgraph_recall.bench.locomo_qa import format_report, openai_model, run

        model, name = openai_model(None)  # OPENAI_API_KEY, OPENAI_BASE_URL, LANGGRAPH_RECALL_MODEL
        report = run(model=model, model_name=name, limit_conversations=1, cache="qa.jsonl")
        print(format_report(report))
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import importlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from langgraph_recall.bench._common import percentile
from langgraph_recall.bench._qa_cache import QACache, cache_key, text_hash
from langgraph_recall.bench._qa_data import (
    CATEGORIES,
    QAConversation,
    QAQuestion,
    load_qa_conversation,
    load_qa_conversations,
    message_text,
    pair_messages,
    transcript,
    turn_groups,
)
from langgraph_recall.bench._qa_metrics import (
    JUDGE_PROMPT,
    aggregate,
    bleu1,
    f1_score,
    judge_prompt,
    parse_judgement,
)
from langgraph_recall.bench._qa_report import (
    COST_HEADER,
    SCORE_HEADER,
    AnswerRecord,
    MethodResult,
    QAReport,
    cost_rows,
    format_report,
    score_rows,
)
from langgraph_recall.bench.progress import OnProgress, Progress, ProgressBar, print_progress

__all__ = [
    "ANSWER_PROMPT",
    "CATEGORIES",
    "CONVERSATION_EXTRACTION_PROMPT",
    "COST_HEADER",
    "FULL_CONTEXT_PROMPT",
    "METHODS",
    "SCORE_HEADER",
    "AnswerRecord",
    "MethodResult",
    "QAConversation",
    "QAQuestion",
    "QAReport",
    "cost_rows",
    "format_report",
    "load_qa_conversation",
    "load_qa_conversations",
    "main",
    "pair_messages",
    "run",
    "run_openai",
    "score_rows",
    "split_methods",
    "transcript",
    "turn_groups",
]

METHODS = ("memory", "full-context")
"""``memory``: our nodes (extract → store → retrieve → respond); ``full-context``: the
whole conversation in the prompt."""
HARNESS_VERSION = "1"
DEFAULT_TOKEN_BUDGET = 1000
DEFAULT_LIMIT = 20

CONVERSATION_EXTRACTION_PROMPT = """\
You extract long-term memories from the latest turn of a conversation between two
people, {speaker_a} and {speaker_b}. Today is {{now}}.

Each line of the turn starts with the role ("user:" or "assistant:", which only marks
who spoke first) and then the speaker's name. Both speakers are people: keep what either
of them says about themselves or each other that is worth remembering later — events
and what they did, plans, people in their lives, jobs, hobbies, preferences, possessions,
places, feelings about important things. Skip greetings and small talk. Never copy
e-mail addresses, phone numbers, card or ID numbers, passwords or API keys.

For each memory give:
- content: one short self-contained sentence in the third person that names the person
  ("{speaker_a} adopted a dog named Max."), with the date when the turn states or implies
  one ("last week" said on 8 May 2023 → "around 1 May 2023");
- kind: one of {{kinds}};
- importance: 1 (trivia) to 10 (life-changing);
- subject: the person the fact is about, lower case ("{subject_a}", "{subject_b}");
- slot: the attribute the fact fills, lower case, stable across turns so that a newer
  fact on the same attribute replaces the older one ("location", "employer",
  "relationship_status", "pet:<name>"); leave empty for events and free-form facts;
- valid_from: the date expression the speaker stated for when the fact became true,
  copied verbatim, or empty when none was stated.

Return an empty list when the turn contains nothing worth remembering."""
"""Extraction prompt of the harness (LoCoMo conversations are between two people, not a
user and an assistant); ``--package-prompt`` uses the package's default instead."""

ANSWER_PROMPT = """\
You answer questions about a long conversation between {speaker_a} and {speaker_b},
using only what you remember of it: the <memory> block (each line is "[kind] fact
(validity)"; "valid from" is when it was said or became true). Resolve relative times
against those dates ("last year" said in May 2023 is 2022). Answer with a short phrase
(at most ten words, no explanation). If the memories do not say, give your best guess
from them."""
"""System prompt of the answering ``RespondNode`` (memory method)."""

FULL_CONTEXT_PROMPT = """\
You answer questions about this conversation between {speaker_a} and {speaker_b}:

{transcript}

Resolve relative times against the session dates ("last year" said in May 2023 is 2022).
Answer with a short phrase (at most ten words, no explanation). If the conversation does
not say, give your best guess."""
"""System prompt of the full-context baseline (``{transcript}``: every session with its
date)."""


# ---------------------------------------------------------------------------- ingest and answer


@dataclass
class _IngestCursor:
    turns: int = 0
    llm_calls: int = 0
    errors: int = 0
    turn_ms: list[float] = field(default_factory=list)


# ---------------------------------------------------------------------------- run


def _model_name(model: Any, given: str | None) -> str:
    if given:
        return given
    for attribute in ("model_name", "model"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def _extract_node(model: BaseChatModel, store: Any, prompt: str | None, episodic: bool) -> Any:
    from langgraph_recall.extraction import LLMExtractor
    from langgraph_recall.nodes import ExtractNode

    extractor = (
        LLMExtractor(model) if prompt is None else LLMExtractor(model, extraction_prompt=prompt)
    )
    episodes = _episodes(episodic)
    # Both speakers' words matter: no pre-filter on the first speaker's text.
    return ExtractNode(extractor=extractor, store=store, prefilter=None, episodes=episodes)


def _episodes(episodic: bool) -> Any:
    """Both speakers' turns as episodes (LoCoMo is two people talking), or ``None``."""
    from langgraph_recall.episodes import EpisodeConfig

    return EpisodeConfig(roles=("user", "assistant")) if episodic else None


def _ingest(
    conversation: QAConversation,
    *,
    node: Any,
    store: Any,
    user_id: str,
    cache: QACache,
    cursor_key: str,
    progress: OnProgress,
) -> _IngestCursor:
    from langgraph_recall.cli.admin import user_namespace
    from langgraph_recall.errors import ConfigurationError

    saved = cache.get(cursor_key)
    cursor = _IngestCursor(**saved) if saved else _IngestCursor()
    if cursor.turns == 0:  # a fresh ingest: nothing of an earlier, unrecorded attempt
        store.forget(user_namespace(user_id))
    groups = turn_groups(conversation)
    total = len(conversation.turns)
    done = fed = 0
    for group in groups:
        done += len(group)
        if done <= cursor.turns:
            continue
        fed += 1
        started = time.perf_counter()
        try:
            out = node.invoke(
                {"messages": pair_messages(group)},
                config={
                    "configurable": {
                        "user_id": user_id,
                        "thread_id": f"{user_id}-s{group[0].session}",
                    }
                },
            )
        except ConfigurationError as exc:  # the model's answer stayed unreadable: skip the turn
            out = {"memory_report": {"total_llm_calls": 0}}
            cursor.errors += 1
            progress(
                Progress(f"{conversation.sample_id}: extraction failed at {group[0].dia_id}: {exc}")
            )
            if cursor.errors > 10 and cursor.errors > fed / 2:
                raise  # most turns fail: a setup problem, not one bad answer
        elapsed = (time.perf_counter() - started) * 1000
        cursor.turns = done
        cursor.llm_calls += int(out.get("memory_report", {}).get("total_llm_calls", 0))
        cursor.turn_ms += [round(elapsed / len(group), 1)] * len(group)
        cache.put(cursor_key, asdict(cursor))
        progress(Progress(f"{conversation.sample_id} ingest turns", done, total))
    return cursor


def _count_tokens(messages: Sequence[BaseMessage]) -> int:
    from langgraph_recall._memory.messages import count_tokens

    return int(count_tokens(messages))


def _answer_memory(
    question: QAQuestion, *, retrieve: Any, respond: Any, user_id: str
) -> dict[str, Any]:
    config = {"configurable": {"user_id": user_id}}
    asked = HumanMessage(question.text)
    started = time.perf_counter()
    update = retrieve.invoke({"messages": [asked]}, config=config)
    block = [m for m in update.get("messages", []) if isinstance(m, SystemMessage)]
    out = respond.invoke({"messages": [*block, asked]}, config=config)
    return {
        "answer": message_text(out["messages"][-1]),
        "tokens": _count_tokens(block) if block else 0,
        "latency_ms": (time.perf_counter() - started) * 1000,
        "llm_calls": 1,
    }


def _answer_full_context(question: QAQuestion, *, respond: Any, tokens: int) -> dict[str, Any]:
    started = time.perf_counter()
    out = respond.invoke({"messages": [HumanMessage(question.text)]})
    return {
        "answer": message_text(out["messages"][-1]),
        "tokens": tokens,
        "latency_ms": (time.perf_counter() - started) * 1000,
        "llm_calls": 1,
    }


def _judge(
    question: QAQuestion, answer: str, *, judge: BaseChatModel, name: str, cache: QACache
) -> tuple[bool | None, bool]:
    """(verdict, whether the judge model was called)."""
    key = cache_key("judge", question.text, question.answer, answer, name, text_hash(JUDGE_PROMPT))
    cached = cache.get(key)
    if cached is not None:
        return cached["correct"], False
    reply = judge.invoke([HumanMessage(judge_prompt(question.text, question.answer, answer))])
    correct = parse_judgement(message_text(reply))
    cache.put(key, {"correct": correct, "reply": message_text(reply)[-300:]})
    return correct, True


def _answer_and_judge(
    question: QAQuestion,
    *,
    answer_with: Callable[[QAQuestion], dict[str, Any]],
    cache: QACache,
    keys: tuple[str, ...],
    judge: BaseChatModel,
    judge_name: str,
) -> tuple[AnswerRecord, bool]:
    """Answer one question (or read its cached answer), judge it; (record, judge called)."""
    key = cache_key(*keys, question.text)
    answered = cache.get(key)
    if answered is None:
        answered = answer_with(question)
        cache.put(key, answered)
    correct, called = _judge(
        question, answered["answer"], judge=judge, name=judge_name, cache=cache
    )
    record = AnswerRecord(
        conversation="",
        question=question.text,
        category=question.category,
        gold=question.answer,
        answer=answered["answer"],
        correct=correct,
        f1=f1_score(answered["answer"], question.answer),
        bleu1=bleu1(answered["answer"], question.answer),
        tokens=int(answered["tokens"]),
        latency_ms=float(answered["latency_ms"]),
        llm_calls=int(answered["llm_calls"]),
    )
    return record, called


@contextlib.contextmanager
def _open_store(dsn: str | None, embeddings: Embeddings, dims: int) -> Iterator[Any]:
    from langgraph_recall.store.postgres import PostgresMemoryStore

    if dsn is None:
        from langgraph_recall.embedded import embedded_dsn

        dsn = embedded_dsn()
    index: Any = {"dims": dims, "embed": embeddings}
    with PostgresMemoryStore.from_conn_string(dsn, index=index) as store:
        store.setup()
        yield store


def _summarise(result: MethodResult, costs: Sequence[_IngestCursor]) -> None:
    rows = [(a.correct, a.f1, a.bleu1) for a in result.answers]
    result.overall = aggregate(rows)
    result.by_category = {
        c: aggregate([(a.correct, a.f1, a.bleu1) for a in result.answers if a.category == c])
        for c in CATEGORIES
    }
    n = len(result.answers)
    if n:
        result.tokens_per_answer = sum(a.tokens for a in result.answers) / n
        result.answer_llm_calls_per_question = sum(a.llm_calls for a in result.answers) / n
        latencies = [a.latency_ms for a in result.answers]
        result.answer_ms_p50 = percentile(latencies, 0.5)
        result.answer_ms_p95 = percentile(latencies, 0.95)
    turn_ms = [ms for cursor in costs for ms in cursor.turn_ms]
    result.ingest_turns = sum(c.turns for c in costs)
    result.ingest_llm_calls = sum(c.llm_calls for c in costs)
    result.ingest_errors = sum(c.errors for c in costs)
    if result.ingest_turns:
        result.ingest_llm_calls_per_turn = result.ingest_llm_calls / result.ingest_turns
        result.ingest_ms_per_turn_p50 = percentile(turn_ms, 0.5)
        result.ingest_ms_per_turn_p95 = percentile(turn_ms, 0.95)


def run(
    data_dir: Path | str | None = None,
    *,
    model: BaseChatModel,
    judge_model: BaseChatModel | None = None,
    model_name: str | None = None,
    judge_model_name: str | None = None,
    methods: Sequence[str] = METHODS,
    limit_conversations: int | None = None,
    limit_questions: int | None = None,
    conversations: Sequence[QAConversation] | None = None,
    embeddings: Embeddings | None = None,
    dims: int | None = None,
    postgres: str | None = None,
    cache: QACache | Path | str | None = None,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    limit: int = DEFAULT_LIMIT,
    episodic: bool = False,
    package_prompt: bool = False,
    workers: int = 4,
    progress: OnProgress = print_progress,
) -> QAReport:
    """Run the QA benchmark and return its report (``main`` prints it; tests assert on it).

    Args:
        data_dir: The LoCoMo folder (default ``$LANGGRAPH_RECALL_LOCOMO_DIR``).
        model: The chat model that extracts memories and answers (any LangChain chat model).
        judge_model: The judge (default: ``model``).
        model_name / judge_model_name: Names used in the cache keys and the report
            (default: the models' ``model_name``).
        methods: From :data:`METHODS`.
        limit_conversations: Use only the first N conversations.
        limit_questions: Use only the first N questions of each conversation.
        conversations: Use these instead of loading ``data_dir``.
        embeddings: Embedder of the store (default ``default_embeddings()``).
        dims: Its dimensions (default ``embeddings.dims`` or 384).
        postgres: DSN of the store's database (default: the embedded Postgres in
            ``$LANGGRAPH_RECALL_HOME``, which persists, so an interrupted run resumes).
        cache: A :class:`QACache` or the path of its file (``None``: in memory only).
        token_budget: ``RetrieveNode`` token budget of the memory block.
        limit: ``RetrieveNode`` search limit.
        episodic: Also keep both speakers' raw turns as episodic memories and blend them
            into retrieval (``EpisodeConfig``).
        package_prompt: Extract with the package's default (user-centred) prompt instead
            of :data:`CONVERSATION_EXTRACTION_PROMPT`.
        workers: Questions answered and judged at once (threads; ingest is sequential,
            in turn order, as consolidation needs).
        progress: Receives the :class:`~langgraph_recall.bench.progress.Progress` events.
    """
    from langgraph_recall.nodes import RespondNode, RetrieveNode
    from langgraph_recall.prompts import DEFAULT_EXTRACTION_PROMPT

    if workers < 1:
        raise ValueError("workers must be >= 1")
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        raise ValueError(f"unknown methods {unknown}; choose from {', '.join(METHODS)}")
    if conversations is None:
        conversations = load_qa_conversations(data_dir)
    conversations = list(conversations)[:limit_conversations]
    if limit_questions is not None:
        conversations = [
            QAConversation(c.sample_id, c.speakers, c.turns, c.questions[:limit_questions])
            for c in conversations
        ]
    judge_model = judge_model or model
    name = _model_name(model, model_name)
    judge_name = _model_name(judge_model, judge_model_name)
    if not isinstance(cache, QACache):
        cache = QACache(cache)
    n_questions = sum(len(c.questions) for c in conversations)
    results = {m: MethodResult(m) for m in methods}
    ingest_costs: list[_IngestCursor] = []
    judge_calls = 0
    embedder = "none"
    with contextlib.ExitStack() as stack:
        store: Any = None
        if "memory" in methods:
            if embeddings is None:
                from langgraph_recall.embeddings import default_embeddings

                embeddings = default_embeddings()
            dims = dims or int(getattr(embeddings, "dims", 384))
            embedder = str(getattr(embeddings, "model_name", type(embeddings).__name__))
            store = stack.enter_context(_open_store(postgres, embeddings, dims))
        progress(
            Progress(
                f"LoCoMo QA: {len(conversations)} conversations, {n_questions} questions, "
                f"model {name}, judge {judge_name}, methods {', '.join(methods)}"
            )
        )
        for conversation in conversations:
            speakers = {
                "speaker_a": conversation.speakers[0],
                "speaker_b": conversation.speakers[1],
            }
            prompt = None
            if not package_prompt:
                prompt = CONVERSATION_EXTRACTION_PROMPT.format(
                    **speakers,
                    subject_a=conversation.speakers[0].lower(),
                    subject_b=conversation.speakers[1].lower(),
                )
            extraction = prompt if prompt is not None else DEFAULT_EXTRACTION_PROMPT
            run_key = text_hash(
                HARNESS_VERSION, name, extraction, str(episodic), embedder, str(dims)
            )
            user_id = f"locomo-qa-{run_key}-{conversation.sample_id}"
            answer_prompt = ANSWER_PROMPT.format(**speakers)
            full_prompt = FULL_CONTEXT_PROMPT.format(
                **speakers, transcript=transcript(conversation)
            )
            responders: dict[str, Callable[[QAQuestion], dict[str, Any]]] = {}
            if "memory" in methods:
                node = _extract_node(model, store, prompt, episodic)
                cursor = _ingest(
                    conversation,
                    node=node,
                    store=store,
                    user_id=user_id,
                    cache=cache,
                    cursor_key=cache_key("ingest", run_key, conversation.sample_id),
                    progress=progress,
                )
                ingest_costs.append(cursor)
                from langgraph_recall.cli.admin import user_namespace

                results["memory"].memories += len(
                    store.search(user_namespace(user_id), limit=10_000)
                )
                retrieve = RetrieveNode(
                    store=store,
                    inject=True,
                    token_budget=token_budget,
                    limit=limit,
                    episodes=_episodes(episodic),
                )
                respond = RespondNode(model, system_prompt=answer_prompt)
                responders["memory"] = functools.partial(
                    _answer_memory, retrieve=retrieve, respond=respond, user_id=user_id
                )
            if "full-context" in methods:
                full = RespondNode(model, system_prompt=full_prompt)
                tokens = _count_tokens([SystemMessage(full_prompt)])
                responders["full-context"] = functools.partial(
                    _answer_full_context, respond=full, tokens=tokens
                )
            for method, answer_with in responders.items():
                prompt_key = text_hash(
                    answer_prompt if method == "memory" else full_prompt,
                    str(token_budget),
                    str(limit),
                )
                ask = functools.partial(
                    _answer_and_judge,
                    answer_with=answer_with,
                    cache=cache,
                    keys=("answer", conversation.sample_id, method, name, prompt_key)
                    + ((run_key,) if method == "memory" else ()),
                    judge=judge_model,
                    judge_name=judge_name,
                )
                total = len(conversation.questions)
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    futures = [pool.submit(ask, q) for q in conversation.questions]
                    for done, future in enumerate(as_completed(futures), start=1):
                        future.result()  # the first failure stops the run (resume continues)
                        progress(
                            Progress(f"{conversation.sample_id} {method} questions", done, total)
                        )
                for future in futures:
                    record, called = future.result()
                    judge_calls += called
                    results[method].answers.append(
                        dataclasses.replace(record, conversation=conversation.sample_id)
                    )
    for method, result in results.items():
        _summarise(result, ingest_costs if method == "memory" else [])
    return QAReport(
        conversations=[c.sample_id for c in conversations],
        questions=n_questions,
        model=name,
        judge_model=judge_name,
        embedder=embedder,
        episodic=episodic,
        token_budget=token_budget,
        methods=list(results.values()),
        judge_calls=judge_calls,
        cache_hits=cache.hits,
        cache_misses=cache.misses,
        cache_path=str(cache.path) if cache.path else None,
    )


# ---------------------------------------------------------------------------- CLI


def openai_model(name: str | None, *, env: Any = None) -> tuple[BaseChatModel, str]:
    """``ChatOpenAI`` on ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (temperature 0).

    Raises:
        RuntimeError: No ``OPENAI_API_KEY`` or ``langchain-openai`` not installed.
    """
    env = os.environ if env is None else env
    if not env.get("OPENAI_API_KEY"):
        raise RuntimeError(
            "the QA benchmark needs a chat model: set OPENAI_API_KEY (and OPENAI_BASE_URL for "
            "an OpenAI-compatible server) and LANGGRAPH_RECALL_MODEL or --model"
        )
    try:
        chat_openai: Any = importlib.import_module("langchain_openai").ChatOpenAI
    except ImportError as exc:
        raise RuntimeError("pip install langchain-openai (or 'langgraph-recall[openai]')") from exc
    chosen = name or env.get("LANGGRAPH_RECALL_MODEL") or "gpt-4o-mini"
    model: BaseChatModel = chat_openai(model=chosen, temperature=0)
    return model, chosen


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``python -m langgraph_recall.bench.locomo_qa`` (shared with
    ``langgraph-recall bench``)."""
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="LoCoMo folder (default $LANGGRAPH_RECALL_LOCOMO_DIR)",
    )
    parser.add_argument(
        "--model", default=None, help="answer/extraction model (default $LANGGRAPH_RECALL_MODEL)"
    )
    parser.add_argument(
        "--judge-model",
        default=None,
        help="judge model (default $LANGGRAPH_RECALL_JUDGE_MODEL, else --model)",
    )
    parser.add_argument("--methods", default=",".join(METHODS), help="memory,full-context")
    parser.add_argument("--limit-conversations", type=int, default=None)
    parser.add_argument("--limit-questions", type=int, default=None)
    parser.add_argument(
        "--postgres", default=None, help="store DSN (default: the embedded Postgres)"
    )
    parser.add_argument(
        "--cache", type=Path, default=Path("locomo-qa-cache.jsonl"), help="resumable cache file"
    )
    parser.add_argument("--token-budget", type=int, default=DEFAULT_TOKEN_BUDGET)
    parser.add_argument(
        "--episodic", action="store_true", help="also keep raw turns as episodic memories"
    )
    parser.add_argument(
        "--package-prompt", action="store_true", help="extract with the package's default prompt"
    )
    parser.add_argument(
        "--workers", type=int, default=4, help="questions answered and judged at once"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the results here")


def run_openai(
    data_dir: Path | str | None = None,
    *,
    model: str | None = None,
    judge_model: str | None = None,
    methods: Sequence[str] = METHODS,
    limit_conversations: int | None = None,
    limit_questions: int | None = None,
    postgres: str | None = None,
    cache: Path | str | None = None,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    episodic: bool = False,
    package_prompt: bool = False,
    workers: int = 4,
    progress: OnProgress = print_progress,
) -> QAReport:
    """:func:`run` with OpenAI-compatible models named here or by the environment.

    ``model`` defaults to ``$LANGGRAPH_RECALL_MODEL`` (else ``gpt-4o-mini``), ``judge_model``
    to ``$LANGGRAPH_RECALL_JUDGE_MODEL``, else the answer model; the other arguments are
    :func:`run`'s.

    Raises:
        RuntimeError: No ``OPENAI_API_KEY`` or ``langchain-openai`` not installed.
        ValueError: Unknown methods or ``workers < 1``.
    """
    answerer, name = openai_model(model)
    judge_name = judge_model or os.environ.get("LANGGRAPH_RECALL_JUDGE_MODEL") or name
    judge, judge_name = (answerer, name) if judge_name == name else openai_model(judge_name)
    return run(
        data_dir,
        model=answerer,
        judge_model=judge,
        model_name=name,
        judge_model_name=judge_name,
        methods=methods,
        limit_conversations=limit_conversations,
        limit_questions=limit_questions,
        postgres=postgres,
        cache=cache,
        token_budget=token_budget,
        episodic=episodic,
        package_prompt=package_prompt,
        workers=workers,
        progress=progress,
    )


def split_methods(text: str) -> list[str]:
    """``"memory, full-context"`` → ``["memory", "full-context"]``."""
    return [m.strip() for m in text.split(",") if m.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point (``python -m langgraph_recall.bench.locomo_qa``)."""
    parser = argparse.ArgumentParser(
        prog="python -m langgraph_recall.bench.locomo_qa", description=__doc__
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        with ProgressBar("locomo-qa") as bar:
            result = run_openai(
                args.data,
                model=args.model,
                judge_model=args.judge_model,
                methods=split_methods(args.methods),
                limit_conversations=args.limit_conversations,
                limit_questions=args.limit_questions,
                postgres=args.postgres,
                cache=args.cache,
                token_budget=args.token_budget,
                episodic=args.episodic,
                package_prompt=args.package_prompt,
                workers=args.workers,
                progress=bar,
            )
    except RuntimeError as exc:
        print_progress(Progress(f"error: {exc}"))
        return 2
    print(format_report(result))
    if args.json:
        args.json.write_text(json.dumps(result.to_json(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
