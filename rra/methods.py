"""What every QA method returns, so RRA and the baselines share outputs, metrics and reports.

`infer.py` instantiates `cfg.method` (RRA pipeline, ToG, StructGPT, KGQP, vector, LLM-only) and
calls `answer(example)` per question; the evaluation code only ever sees `Prediction`s.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Protocol, runtime_checkable

from rra.data.records import QAExample
from rra.graph.base import Triple

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
    gold_hop: int | None = None
    gold_path: list[str] | None = None
    extra: dict = field(default_factory=dict)  # method-specific trace (visited entities, ...)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["triples"] = [list(t.as_tuple()) for t in self.triples]
        return d


@runtime_checkable
class QAMethod(Protocol):
    name: str

    def answer(self, example: QAExample) -> Prediction: ...
