"""What the baselines share: per-question LLM accounting, relation filters, triple text,
topic-entity resolution and the final `Prediction` (relation text and prompts: rra.text.relations,
rra.text.prompts)."""
from __future__ import annotations

import fnmatch
import time
import zlib
from dataclasses import dataclass, field
from abc import abstractmethod
from typing import Sequence

from rra.graph.base import KnowledgeGraph, base_relation
from rra.methods import QAMethod, failure_status
from rra.records import Prediction, QAExample, Status, Trace, Triple
from rra.text.matching import mentioned_entities, normalize
from rra.text.relations import RelationNames, relation_display, relation_names

# Schema / label relations carry no answer-bearing facts and would flood every step (Freebase's
# type.object.name, RDF's rdf:type / rdfs:label, ...). Matched with fnmatch on the base relation.
DEFAULT_EXCLUDED = [
    "rdf:type", "rdfs:label", "*#type", "*#label", "*/type", "*/label", "*rdf-schema#*",
    "type.object.*", "type.type.*", "common.*", "freebase.*", "kg.*", "label", "name", "type",
]


def excluded(relation: str, patterns: Sequence[str]) -> bool:
    rel = base_relation(relation)
    return any(fnmatch.fnmatchcase(rel, p) for p in patterns)


def triple_text(t: Triple, labels: dict[str, str], names: dict[str, str] | None = None) -> str:
    return f"({labels.get(t.head, t.head)}, {relation_display(t.relation, names)}, {labels.get(t.tail, t.tail)})"


def seed_for(seed: int, *parts: str) -> int:
    """A stable per-(question, entity, relation) seed; Python's hash() changes per process."""
    return zlib.crc32("|".join([str(seed), *parts]).encode())


def topic_entities(kg: KnowledgeGraph, example: QAExample) -> list[str]:
    """Where a walk starts: the example's topic entities that the KG holds (a name not held as an
    id is looked up as a label, as RRA links given topics); a question that gives none is linked
    from its text with RRA's linker (`[marked]` mentions, else the ranked labels found in it), so RRA
    and the baselines start from the same entities, every anchor of a question with several."""
    from rra.linking import link_anchors, link_entities, lookup

    if example.topic_entities:
        return list(dict.fromkeys(e for name in example.topic_entities for e in lookup(kg, name, 1)))
    link = link_entities(kg, example.question)
    # every anchor the linker found (two for "books by X set in Y"), as RRA's plans use them; a
    # mention that is a literal ("after 1990") is the question's value, not a place to start from
    return link_anchors(link)[0] if link.entities else []


def missing_status(example: QAExample, topics: Sequence[str]) -> Status | None:
    """"no_topic_entity" (none given or found in the text) / "unknown_entity" (the given ones are
    not in the KG) when there is nothing to start a walk from."""
    if topics:
        return None
    return Status.UNKNOWN_ENTITY if example.topic_entities else Status.NO_TOPIC_ENTITY


def start_prediction(example: QAExample) -> Prediction:
    return Prediction(
        qid=example.qid, question=example.question, answers=[],
        topic_entities=list(example.topic_entities),
    )


def resolve_mode(name: str, mode: str, llm, encoder, encoder_always: bool = False) -> str:
    """`auto` -> `llm` when an LLM is configured, else `heuristic` (llm=none); then check that the
    chosen mode has what it needs (`encoder_always`: the method embeds in both modes)."""
    if mode == "auto":
        mode = "llm" if llm is not None else "heuristic"
    if mode not in ("llm", "heuristic"):
        raise ValueError(f"{name} mode must be 'llm' or 'heuristic', got {mode!r}")
    if mode == "llm" and llm is None:
        raise ValueError(f"{name} in llm mode needs an `llm`; use mode=heuristic to run without one")
    if (mode == "heuristic" or encoder_always) and encoder is None:
        raise ValueError(f"{name} in heuristic mode needs a sentence `encoder` (rra.embed.SentenceEncoder)")
    return mode


@dataclass(eq=False)  # identity semantics: methods are shared objects, not values
class BaselineSettings(QAMethod):
    """The settings every graph baseline shares, declared once; ToG, StructGPT, KGQP and VectorRAG
    are dataclasses that add their own. `mode` "auto" becomes "llm" when an LLM is configured, else
    "heuristic" (MiniLM similarity, no LLM)."""

    kg: KnowledgeGraph = field(repr=False)
    llm: object = field(default=None, repr=False)
    encoder: object = field(default=None, repr=False)
    mode: str = "auto"
    excluded_relations: list[str] | None = None  # None: DEFAULT_EXCLUDED (schema/label relations)
    seed: int = 0
    max_new_tokens: int = 96  # exploration prompts
    answer_max_new_tokens: int = 64  # the final answer
    relation_labels: object = field(default=None, repr=False)  # the dataset's names for relation ids

    name = "baseline"
    needs_encoder_always = False  # VectorRAG embeds in both modes

    def __post_init__(self):
        self.mode = resolve_mode(self.name, self.mode, self.llm, self.encoder, self.needs_encoder_always)
        self.excluded = list(DEFAULT_EXCLUDED if self.excluded_relations is None else self.excluded_relations)
        # the dataset's names for relation ids, else the KG's own, as RRA reads them (rra.text.relations.RelationNames)
        self.relation_names = RelationNames(relation_names(self.relation_labels), self.kg)

    def answer(self, example: QAExample) -> Prediction:
        return run_method(self, example, self.max_new_tokens)

    @abstractmethod
    def explore(self, example: QAExample, pred: Prediction, trace: Trace) -> None:
        """One question's exploration: fill `pred` (answers, paths, knowledge, status), asking the
        LLM through `trace`."""


@dataclass(eq=False)
class WalkSettings(BaselineSettings):
    """What the step-by-step walkers (ToG, StructGPT) add: how many neighbours a step reads and,
    in heuristic mode, how entity labels weigh and when the walk has found enough."""

    max_candidates: int = 20  # neighbours read per (entity, relation), seeded sample
    entity_weight: float = 0.0  # heuristic: weight of the end entity's label similarity (0 = skip)
    stop_similarity: float = 0.8  # heuristic sufficiency: stop when the best path is this similar


def run_method(method: BaselineSettings, example: QAExample, max_new_tokens: int) -> Prediction:
    """The shared `answer()` of every baseline: run `method.explore(example, pred, trace)`, turn any
    failure on the way (graph backend down, ...) into status `graph_error` while keeping what was
    already found, and fill in the LLM usage of this question."""
    pred = start_prediction(example)
    trace = Trace(method.llm, max_new_tokens)
    try:
        method.explore(example, pred, trace)
    except Exception as e:  # keep what we have, report, go on (a bug raises under strict errors)
        pred.status = failure_status(e, method.strict)
        pred.errors.append(f"{type(e).__name__}: {e}")
    pred.extra["mode"] = method.mode
    pred.latency_s = time.perf_counter() - trace.start
    return trace.fill(pred)


def knowledge_text(triples: Sequence[Triple], labels: dict[str, str], names: dict[str, str] | None = None) -> str:
    return "\n".join(triple_text(t, labels, names) for t in triples)


def set_answers(pred: Prediction, answers: list[str], free_form: bool, answer_set: list[str] | None = None) -> None:
    """Answers plus how `rra.eval.metrics` scores them: an LLM's free-form answer the way RRA's
    LLM answerer is scored (hits_mode "reply": a gold answer in the reply), a ranking by its top."""
    pred.answers = list(answers)
    pred.answer_set = list(answer_set if answer_set is not None else answers)
    pred.hits_mode = "reply" if free_form and pred.reply else "top"


def read_answers(reply: str, candidates: dict[str, str], topic: Sequence[str] = ()) -> list[str] | None:
    """Ranked answers from an answer reply. KG entities the reply names (among `candidates`,
    id -> label, e.g. the explored ones) come first, by first mention, topic entities last;
    then any other answer strings the reply gives. None when the reply gives nothing."""
    from rra.baselines.replies import parse_answers

    parsed = parse_answers(reply) or []
    # a reply that parrots the knowledge names many entities; trust the parsed answer span first
    answer_span = " | ".join(parsed)
    ents = mentioned_entities(answer_span, candidates) or mentioned_entities(reply, candidates)
    ents = [e for e in ents if e not in topic] + [e for e in ents if e in topic]
    covered = [normalize(candidates[e]) for e in ents]
    # "Ridley Scott and James Cameron" is covered by the two entities it names
    rest = [a for a in parsed if not any(c and c in normalize(a) for c in covered)]
    return (ents + rest) or None
