"""The records every layer shares: the bottom floor of the package, importing nothing of rra.

Questions (`QAExample`) and the dataset's answer rule (`AnswerSemantics`) go from the data layer
to every method and to scoring; `Triple` is what the graph layer returns; `LLMReply` / `LLMUsage`
what the LLM layer returns; `Prediction` (with its status) and the per-question `Trace` are what
every method hands to the evaluation. Each layer re-exports the ones it speaks in, so
`rra.graph.Triple` and `rra.llm.LLMReply` stay the same classes as the ones here.
"""
from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Sequence

# --------------------------------------------------------------------------- questions


# What scoring reads of a question, once kept in `extra` by these names (old files, caches).
SCORED_FIELDS = ("gold_path", "answer_labels", "answer_ids")


@dataclass
class QAExample:
    """One question. `topic_entities` are KG entity ids (or names, linked later); `relation_path`
    is the path a retriever trains on from the first topic entity, inverse relations written `^r`:
    the dataset's own, until KG supervision replaces it (rra.data.supervision). `gold_path` keeps
    the dataset's own path (the one given when the question was made) for scoring."""

    question: str
    topic_entities: list[str]
    answers: list[str]
    relation_path: list[str] | None = None
    qid: str = ""
    hops: int | None = None  # dataset's own hop count (e.g. MetaQA 1/2/3-hop split), if known
    source: str = ""  # "file:line" it came from, for error messages and traceability
    extra: dict = field(default_factory=dict)  # reader- or supervision-specific notes, never scored
    gold_path: list[str] | None = None  # the dataset's own relation path (default: relation_path as given)
    answer_labels: list[str] = field(default_factory=list)  # the KG's label of each answer (id-named KGs)
    answer_ids: list[list[str]] = field(default_factory=list)  # KG ids each answer names (answers given as names)

    def __post_init__(self):
        for key in SCORED_FIELDS:  # a record written before these were fields
            if key in self.extra and not getattr(self, key):
                setattr(self, key, self.extra.pop(key))
        if self.gold_path is None and self.relation_path is not None:
            self.gold_path = list(self.relation_path)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "QAExample":
        return cls(**d)


class DataFormatError(ValueError):
    """A malformed input line. The message always names `file:line` and the offending value."""

    def __init__(self, source: str, problem: str, value: object = None):
        self.source, self.problem, self.value = source, problem, value
        shown = "" if value is None else f": {str(value)[:200]!r}"
        super().__init__(f"{source}: {problem}{shown}")


@dataclass(frozen=True)
class AnswerSemantics:
    """What counts as an answer on a dataset: read alike by KG supervision, retrieval, the graph
    scorer and the metrics, and set by the dataset's config (`data.semantics`).

    The defaults are the general rule: a relation path's answers are simply the entities it ends
    at, so "the spouse of X's spouse" may be X, and a self-loop answers with its own entity.
    A dataset whose multi-hop answers exclude the topic ("films by the director of X" are the *other*
    films) sets `revisit_topic: false` and `topic_can_be_answer: false` or `one_hop` in its data config.
    """

    # a path that ends at the topic entity answers with it: true, false, or "one_hop" (only a path of
    # one relation, a self-loop; a longer path never answers with its topic). With one_hop, the far end
    # of a self-loop stands for another entity of the same name (a dataset that merges entities by
    # name): it answers a 1-hop question, and a longer walk may go on from it even where
    # revisit_topic is false
    topic_can_be_answer: bool | str = True
    revisit_topic: bool = True  # a path may pass through the topic entity on its way

    def __post_init__(self):
        if self.topic_can_be_answer not in (True, False, "one_hop"):
            raise ValueError("data.semantics.topic_can_be_answer must be true, false or one_hop, "
                             f"not {self.topic_can_be_answer!r}")

    def topic_answers(self, hops: int) -> bool:
        """Whether a path of `hops` relations that ends at its topic answers with it."""
        return self.topic_can_be_answer is True or (self.topic_can_be_answer == "one_hop" and hops == 1)

    def passes_topic(self, hops: int) -> bool:
        """Whether a walk that is at its topic after `hops` relations (not its last) may go on: always
        under revisit_topic; else only from a self-loop's far end under one_hop (the first step)."""
        return self.revisit_topic or (hops == 1 and self.topic_can_be_answer == "one_hop")

    def drops_topic(self, hops: int, last: bool) -> bool:
        """Whether a walk's entity set after `hops` relations loses the topic: at its end where the
        topic is no answer there, on its way where no walk may go on from it (set-based walkers)."""
        return not (self.topic_answers(hops) if last else self.passes_topic(hops))

    def keeps(self, entities, topic: str) -> bool:
        """Whether a walk (its entities, topic first) is an answer path under these rules."""
        if not self.revisit_topic and any(e == topic and not self.passes_topic(i)
                                          for i, e in enumerate(entities[1:-1], start=1)):
            return False
        return entities[-1] != topic or self.topic_answers(len(entities) - 1)

    @classmethod
    def of(cls, value) -> "AnswerSemantics":
        """From a config mapping (or None for the defaults, or an instance as it is)."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        unknown = set(dict(value)) - {"topic_can_be_answer", "revisit_topic"}
        if unknown:
            raise ValueError(f"unknown answer-semantics keys {sorted(unknown)}; expected "
                             "topic_can_be_answer, revisit_topic")
        return cls(**{k: v if isinstance(v, str) else bool(v) for k, v in dict(value).items()})


# --------------------------------------------------------------------------- graph facts


@dataclass(frozen=True, order=True)
class Triple:
    """One KG fact, always in the KG's own (forward) direction (`^r` walks are stored as `r`)."""

    head: str
    relation: str
    tail: str

    def as_tuple(self) -> tuple[str, str, str]:
        return (self.head, self.relation, self.tail)


# --------------------------------------------------------------------------- LLM replies

# One lock for every usage record: backends record from worker threads (HTTP concurrency), and a
# plain lock keeps LLMUsage a copyable, picklable dataclass.
_USAGE_LOCK = threading.Lock()


@dataclass
class LLMReply:
    text: str
    error: str | None = None  # "timeout: ...", "http 500: ...", "unparseable: ..." - never raised
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    truncated_tokens: int = 0  # prompt tokens cut by a backend's max-input guard (0 = none)
    attempts: int = 1  # requests sent for it, retries included (HTTP; 0: refused by an open circuit breaker)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class LLMUsage:
    """Running totals per backend; pipelines report calls and tokens per question from it."""

    calls: int = 0  # requests to the backend, retries included (a reply refused unsent counts as one)
    failures: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    per_call_latency: list[float] = field(default_factory=list)

    def record(self, r: LLMReply) -> None:
        with _USAGE_LOCK:
            self.calls += max(1, r.attempts)
            self.failures += int(not r.ok)
            self.cache_hits += int(r.cached)
            self.prompt_tokens += r.prompt_tokens
            self.completion_tokens += r.completion_tokens
            self.seconds += r.latency_s
            self.per_call_latency.append(r.latency_s)

    def snapshot(self) -> LLMUsage:
        """A frozen copy; `usage.since(snap)` later gives what happened in between."""
        with _USAGE_LOCK:
            return LLMUsage(
                self.calls, self.failures, self.cache_hits, self.prompt_tokens,
                self.completion_tokens, self.seconds, list(self.per_call_latency),
            )

    def since(self, earlier: LLMUsage) -> LLMUsage:
        """Usage accumulated after `earlier` (a snapshot of this same object)."""
        now = self.snapshot()
        return LLMUsage(
            calls=now.calls - earlier.calls,
            failures=now.failures - earlier.failures,
            cache_hits=now.cache_hits - earlier.cache_hits,
            prompt_tokens=now.prompt_tokens - earlier.prompt_tokens,
            completion_tokens=now.completion_tokens - earlier.completion_tokens,
            seconds=now.seconds - earlier.seconds,
            per_call_latency=now.per_call_latency[len(earlier.per_call_latency):],
        )

    def add(self, other: LLMUsage) -> None:
        """Add another counter's totals (e.g. a `since` delta) to this one."""
        with _USAGE_LOCK:
            self.calls += other.calls
            self.failures += other.failures
            self.cache_hits += other.cache_hits
            self.prompt_tokens += other.prompt_tokens
            self.completion_tokens += other.completion_tokens
            self.seconds += other.seconds
            self.per_call_latency += other.per_call_latency

    def to_dict(self) -> dict:
        lat = sorted(self.per_call_latency)

        def pct(q: float) -> float:
            return lat[min(len(lat) - 1, int(q * len(lat)))] if lat else 0.0

        return {
            "calls": self.calls, "failures": self.failures, "cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
            "seconds": round(self.seconds, 4),
            "latency_p50_s": round(pct(0.5), 4), "latency_p95_s": round(pct(0.95), 4),
        }


# --------------------------------------------------------------------------- predictions

class Status(StrEnum):
    """How a question ended. Anything but OK is still a scored prediction, never a crash. A
    `StrEnum`: it is written to predictions.jsonl as its value and equals that string."""

    OK = "ok"
    UNKNOWN_ENTITY = "unknown_entity"  # topic entity not found in the KG
    NO_TOPIC_ENTITY = "no_topic_entity"  # question names no entity we could find
    NO_PATH = "no_path"  # retrieval found no instantiable path / nothing to read
    EMPTY_GRAPH_REPLY = "empty_graph_reply"  # the graph answered nothing (e.g. endpoint returned no rows)
    GRAPH_ERROR = "graph_error"  # graph backend failed (endpoint down, time-out) after retries
    LLM_ERROR = "llm_error"  # LLM call failed or timed out after retries; answered as well as possible
    UNPARSEABLE = "unparseable"  # LLM replied but the reply could not be parsed; answered as well as possible
    ERROR = "error"  # anything else went wrong (a bug): recorded with the exception type; raised under strict
    OVER_BUDGET = "over_budget"  # the question used up its time budget (bounds.max_seconds): answered with what it had


STATUSES = tuple(s.value for s in Status)


@dataclass
class Prediction:
    qid: str
    question: str
    answers: list[str]  # ranked answer entities/strings; answers[0] is the Hits@1 answer
    status: Status = Status.OK
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
    answer_labels: list[str] = field(default_factory=list)  # labels of the top answers, for a reader (RRA)
    extra: dict = field(default_factory=dict)  # method-specific trace (visited entities, ...)

    def __post_init__(self):
        self.status = Status(self.status)  # a plain string is checked and made the enum member

    def to_dict(self) -> dict:
        d = asdict(self)
        d["triples"] = [list(t.as_tuple()) for t in self.triples]
        return d


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

    def status(self, default: Status = Status.OK) -> Status:
        if self.failed:
            return Status.LLM_ERROR
        if self.unparseable:
            return Status.UNPARSEABLE
        return Status(default)

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
