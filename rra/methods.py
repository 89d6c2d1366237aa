"""What every QA method returns, so RRA and the baselines share outputs, metrics and reports.

`infer.py` instantiates `cfg.method` (RRA pipeline, ToG, StructGPT, KGQP, vector, LLM-only) and
calls `answer(example)` per question; the evaluation code only ever sees `Prediction`s.
"""
from __future__ import annotations

import time
from abc import ABC, abstractmethod
from typing import Iterable, Sequence

from rra.records import STATUSES, Prediction, QAExample, Status, Trace  # noqa: F401  (re-exported: the method layer's records)


def failure_status(err: Exception, strict: bool = False) -> Status:
    """The per-question status of an exception raised while answering: the graph and LLM layers'
    own errors by name, anything else ERROR, or re-raised when `strict` (a bug stops the run)."""
    from rra.graph.base import GraphError
    from rra.llm.base import LLMError

    if isinstance(err, GraphError):
        return Status.GRAPH_ERROR
    if isinstance(err, LLMError):
        return Status.LLM_ERROR
    if strict:
        raise err
    return Status.ERROR


def safe_answer(method: "QAMethod", example: QAExample) -> Prediction:
    """`method.answer(example)`; an exception costs that question (status by the error's layer, see
    `failure_status`), never the run, unless the method is `strict`."""
    t0 = time.perf_counter()
    try:
        return method.answer(example)
    except Exception as err:
        return Prediction(example.qid, example.question, [], status=failure_status(err, method.strict),
                          errors=[f"{type(err).__name__}: {err}"], latency_s=time.perf_counter() - t0)


class QAMethod(ABC):
    """A QA method (RRA or a baseline): subclasses set `name` and write `answer`. `strict`: an
    unexpected exception inside the method (a bug) is raised instead of recorded as status ERROR
    (infer.py's `strict=true`; the tests make every method strict)."""

    name: str
    strict: bool = False

    @abstractmethod
    def answer(self, example: QAExample) -> Prediction:
        """One question's prediction; a failure is a status, never an exception (see `safe_answer`)."""

    def answer_batch(self, examples: Sequence[QAExample], concurrency: int = 1) -> Iterable[Prediction]:
        """One prediction per example, in order; a failure costs its question only. Default: yields
        question by question as each is answered (so a caller can stream them to disk), or with
        `concurrency` > 1 answers that many at once in threads (their LLM calls are then pooled into
        batches by `BatchingLLM`). RRA overrides it to run its encoder on the whole batch."""
        if concurrency <= 1:
            for ex in examples:
                yield safe_answer(self, ex)
            return
        import contextvars
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=concurrency)
        # each question in a copy of the caller's context: the question's work budget (rra.graph.base)
        # reaches the worker threads
        tasks = [(contextvars.copy_context(), ex) for ex in examples]
        try:
            yield from pool.map(lambda task: task[0].run(safe_answer, self, task[1]), tasks)
        finally:  # closed early (a time cap): drop the questions not started instead of waiting
            pool.shutdown(wait=False, cancel_futures=True)

    def describe(self) -> dict:
        """What a reader of a run's summary should know about this method's parts (a checkpoint,
        the steps it was built from), as label -> value; nothing by default."""
        return {}
