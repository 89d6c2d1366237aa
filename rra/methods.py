"""What every QA method returns, so RRA and the baselines share outputs, metrics and reports.

`infer.py` instantiates `cfg.method` (RRA pipeline, ToG, StructGPT, KGQP, vector, LLM-only) and
calls `answer(example)` per question; the evaluation code only ever sees `Prediction`s.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Iterable, Protocol, Sequence, runtime_checkable

from rra.data.records import QAExample
from rra.graph.base import Triple
from rra.llm.base import LLMReply, LLMUsage

# Per-question status values. Anything but "ok" is still a scored prediction, never a crash.
STATUSES = (
    "ok",
    "unknown_entity",  # topic entity not found in the KG
    "no_topic_entity",  # question names no entity we could find
    "no_path",  # retrieval found no instantiable path / nothing to read
    "empty_graph_reply",  # the graph answered nothing (e.g. endpoint returned no rows)
    "graph_error",  # graph backend failed (endpoint down, time-out) after retries
    "llm_error",  # LLM call failed or timed out after retries; answered as well as possible
    "unparseable",  # LLM replied but the reply could not be parsed; answered as well as possible
    "error",  # anything else went wrong (a bug): recorded with the exception type; raised under strict
)


def strict_errors() -> bool:
    """Whether an unexpected exception inside a method is raised instead of recorded as status
    "error" (tests set RRA_STRICT_ERRORS=1, so a bug fails them instead of becoming a status)."""
    import os

    return os.environ.get("RRA_STRICT_ERRORS", "") == "1"


def failure_status(err: Exception) -> str:
    """The per-question status of an exception raised while answering: the graph and LLM layers'
    own errors by name, anything else "error" (re-raised when `strict_errors()`)."""
    from rra.graph.base import GraphError
    from rra.llm.base import LLMError

    if isinstance(err, GraphError):
        return "graph_error"
    if isinstance(err, LLMError):
        return "llm_error"
    if strict_errors():
        raise err
    return "error"


@dataclass
class Prediction:
    qid: str
    question: str
    answers: list[str]  # ranked answer entities/strings; answers[0] is the Hits@1 answer
    status: str = "ok"
    reply: str = ""  # the LLM's raw final reply ("" when no LLM answered)
    knowledge: str = ""  # the text the answerer read (rewritten triples)
    paths: list[dict] = field(default_factory=list)  # e.g. {"path": [...], "score": .9}
    triples: list[Triple] = field(default_factory=list)  # evidence actually retrieved
    gold_answers: list[str] = field(default_factory=list)
    topic_entities: list[str] = field(default_factory=list)
    llm_calls: int = 0
    llm_prompt_tokens: int = 0
    llm_completion_tokens: int = 0
    latency_s: float = 0.0
    errors: list[str] = field(default_factory=list)  # every failure on the way, in order
    # How the answers are scored (set by the method): F1 is computed on `answer_set` (None: the
    # top answer); "top" = answers[0] must be gold, "reply" = a gold answer in the LLM's reply.
    answer_set: list[str] | None = None
    hits_mode: str = "top"
    pred_hop: int | None = None  # the retrieved path's length and relations (RRA)
    pred_path: list[str] | None = None
    # Gold labels: attached by the evaluator (rra.eval.run.with_gold) after the method answered.
    gold_labels: list[str] = field(default_factory=list)  # labels of gold_answers for id-named KGs
    gold_aliases: list[list[str]] = field(default_factory=list)  # KG ids named by a gold answer given as a label
    gold_hop: int | None = None
    gold_path: list[str] | None = None
    extra: dict = field(default_factory=dict)  # method-specific trace (visited entities, ...)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["triples"] = [list(t.as_tuple()) for t in self.triples]
        return d


def safe_answer(method, example: QAExample) -> Prediction:
    """`method.answer(example)`; an exception costs that question (status by the error's layer, see
    `failure_status`), never the run, unless strict errors are on."""
    t0 = time.perf_counter()
    try:
        return method.answer(example)
    except Exception as err:
        return Prediction(example.qid, example.question, [], status=failure_status(err),
                          errors=[f"{type(err).__name__}: {err}"], latency_s=time.perf_counter() - t0)


@runtime_checkable
class QAMethod(Protocol):
    name: str

    def answer(self, example: QAExample) -> Prediction: ...

    def answer_batch(self, examples: Sequence[QAExample], concurrency: int = 1) -> Iterable[Prediction]:
        """One prediction per example, in order; a failure costs its question only. Default: yields
        question by question as each is answered (so a caller can stream them to disk), or with
        `concurrency` > 1 answers that many at once in threads (their LLM calls are then pooled into
        batches by `BatchingLLM`). RRA overrides it to run its encoder on the whole batch."""
        if concurrency <= 1:
            for ex in examples:
                yield safe_answer(self, ex)
            return
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=concurrency)
        try:
            yield from pool.map(lambda ex: safe_answer(self, ex), examples)
        finally:  # closed early (a time cap): drop the questions not started instead of waiting
            pool.shutdown(wait=False, cancel_futures=True)

    def describe(self) -> dict:
        """What a reader of a run's summary should know about this method's parts (a checkpoint,
        the steps it was built from), as label -> value; nothing by default."""
        return {}


@dataclass
class Trace:
    """One question's LLM use (an `LLMUsage` of its own: calls, tokens, cache hits, failures),
    its error messages and its start time. Every method keeps one per question (the baselines
    through `ask`, RRA's rewrite and answer steps by `record`ing each reply of a batched call), so
    a Prediction reports its own calls and tokens even when the backend is shared (the backend's
    `usage` totals are for the whole run)."""

    llm: object = None
    max_new_tokens: int = 128
    usage: LLMUsage = field(default_factory=LLMUsage)
    errors: list[str] = field(default_factory=list)
    failed: bool = False
    unparseable: bool = False
    start: float = field(default_factory=time.perf_counter)

    def record(self, reply: LLMReply) -> LLMReply:
        """Count one reply (a failed one too: it was a call)."""
        self.usage.record(reply)
        return reply

    def ask(self, prompts: Sequence, max_new_tokens: int | None = None) -> list[LLMReply]:
        """One reply per prompt from `self.llm` (independent prompts go in one call: HTTP backends
        run them concurrently), counted, failures recorded. A backend that raises despite the
        protocol is caught and recorded."""
        if not prompts:
            return []
        try:
            replies = list(self.llm.generate(list(prompts), max_new_tokens=max_new_tokens or self.max_new_tokens))
        except Exception as e:  # the protocol says never raise; a broken backend must not crash a run
            replies = [LLMReply("", error=f"{type(e).__name__}: {e}") for _ in prompts]
        if len(replies) != len(prompts):
            replies = (replies + [LLMReply("", error="backend returned too few replies")] * len(prompts))[: len(prompts)]
        for r in replies:
            self.record(r)
            if r.error:
                self.failed = True
                self.errors.append(f"llm: {r.error}")
        return replies

    def bad_reply(self, what: str, reply: LLMReply) -> None:
        """Record a reply we could not read (failed calls are already recorded by `ask`)."""
        if reply.ok:
            self.unparseable = True
            self.errors.append(f"unparseable {what}: {reply.text[:200]!r}")

    def status(self, default: str = "ok") -> str:
        if self.failed:
            return "llm_error"
        if self.unparseable:
            return "unparseable"
        return default

    def count_into(self, pred: Prediction) -> None:
        """Copy the LLM counts into `pred`."""
        pred.llm_calls = self.usage.calls
        pred.llm_prompt_tokens = self.usage.prompt_tokens
        pred.llm_completion_tokens = self.usage.completion_tokens
        if self.usage.cache_hits:
            pred.extra["llm_cache_hits"] = self.usage.cache_hits

    def fill(self, pred: Prediction) -> Prediction:
        """Copy the counts into `pred`; this trace's errors go before the ones `pred` has."""
        self.count_into(pred)
        pred.errors = self.errors + pred.errors
        return pred
