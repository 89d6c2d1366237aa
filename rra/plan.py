"""Query plans: questions beyond one relation chain, and how a plan runs on any graph backend.

A plan is one relation path per anchor entity plus, optionally, a condition on the answers:

    chain        [Ilse Varga] -^written_by->                               "what did [Ilse Varga] write"
    conjunction  [fantasy] -^has_genre->  AND  [Lamplight Press] -^published_by->
                                                                  "which [fantasy] books did [Lamplight Press] publish"
    comparison   [Ilse Varga] -^written_by->, published_in > 1990   "... books by [Ilse Varga] after 1990"
    order        [Ilse Varga] -^written_by->, argmin published_in   "the first book by [Ilse Varga]"

A single-chain question is the plan with one anchor and no condition, so it runs as it always did.
`execute` runs a plan through the `KnowledgeGraph` protocol only (`follow_path`, `neighbors_batch`,
`labels`), so every backend answers it alike: the chains' end sets are intersected, then the
condition reads the attribute relation of the remaining entities and compares its values as
numbers (years and ISO dates included), never as strings.

Records here are plain dataclasses; a question file gives the same structure as JSON
(`relation_paths`, `constraint`, see README "Your own KG"), read by `plan_from_record`.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Sequence

from rra.graph.base import KnowledgeGraph, PathInstance, Triple, UnknownEntityError, step_triple
from rra.graph.literals import order_key, parse_literal
from rra.records import DataFormatError

SHAPES = ("chain", "conjunction", "comparison", "order")
COMPARISONS = (">", ">=", "<", "<=", "=")
ORDERS = ("argmax", "argmin")
OPERATORS = COMPARISONS + ORDERS
# The plan heads' condition classes: "none" (no condition) first, then every operator.
CONDITIONS = ("none",) + OPERATORS
# Question words that ask for an order; a KG-derived order condition needs one of them in the text.
ORDER_WORDS = frozenset("""first last earliest latest oldest newest youngest most least largest smallest
highest lowest biggest longest shortest recent earlier later top""".split())
OP_WORDS = {">": "after / above", ">=": "at least", "<": "before / below", "<=": "at most", "=": "equal to",
            "argmax": "the largest", "argmin": "the smallest"}


@dataclass
class Constraint:
    relation: str  # the attribute relation (`published_in`, `^r` allowed), read from each candidate answer
    op: str  # one of OPERATORS
    value: float | str | None = None  # the literal of a comparison (from the question); None for an order

    def __post_init__(self):
        if self.op not in OPERATORS:
            raise ValueError(f"constraint op must be one of {', '.join(OPERATORS)}, not {self.op!r}")
        if self.op in COMPARISONS and literal_value(self.value) is None:
            raise ValueError(f"constraint {self.relation} {self.op}: the value {self.value!r} is not a number, "
                             "year or ISO date")

    @property
    def shape(self) -> str:
        return "order" if self.op in ORDERS else "comparison"

    def to_dict(self) -> dict:
        d = {"relation": self.relation, "op": self.op}
        if self.op in COMPARISONS:
            d["value"] = self.value
        return d

    def describe(self) -> str:
        if self.op in ORDERS:
            return f"{'max' if self.op == 'argmax' else 'min'} {self.relation}"
        return f"{self.relation} {self.op} {self.value}"


@dataclass
class QueryPlan:
    anchors: list[str]  # entity ids, one per path
    paths: list[list[str]]
    constraint: Constraint | None = None

    def __post_init__(self):
        if not self.paths or len(self.anchors) != len(self.paths):
            raise ValueError(f"a plan needs one relation path per anchor ({len(self.anchors)} anchors, "
                             f"{len(self.paths)} paths)")

    @property
    def shape(self) -> str:
        """chain / conjunction / comparison / order (a conjunction with a condition is a conjunction)."""
        if len(self.paths) > 1:
            return "conjunction"
        return self.constraint.shape if self.constraint else "chain"

    def to_dict(self) -> dict:
        return {"anchors": list(self.anchors), "paths": [list(p) for p in self.paths],
                "constraint": self.constraint.to_dict() if self.constraint else None, "shape": self.shape}

    @classmethod
    def from_dict(cls, d: dict) -> "QueryPlan":
        c = d.get("constraint")
        return cls(list(d["anchors"]), [list(p) for p in d["paths"]],
                   Constraint(c["relation"], c["op"], c.get("value")) if c else None)

    def describe(self, labels: dict[str, str] | None = None) -> str:
        labels = labels or {}
        chains = " AND ".join(f"{labels.get(a, a)} -> {' -> '.join(p)}" for a, p in zip(self.anchors, self.paths))
        return chains + (f" | {self.constraint.describe()}" if self.constraint else "")


# --- literals ------------------------------------------------------------------------------------
def literal_value(text) -> float | None:
    """A KG literal or question literal as a number that orders correctly, or None: read by the
    graph layer's literal parser (rra.graph.literals: typed N-Triples forms such as
    `"1985"^^xsd:gYear`, numbers, ISO dates) and put on one line (a date as a fractional year, so
    "after 1990" compares with 1990-07-02); an id whose last part is the value (`year/1985`) too."""
    if text is None or isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return float(text)
    s = str(text).strip()
    for candidate in dict.fromkeys([s, s.rsplit("/", 1)[-1]]):
        key = order_key(parse_literal(candidate))
        if key is not None:
            return key[1]
    return None


_QUESTION_LITERAL = re.compile(r"(?<![\w/])(\d{4}-\d{2}-\d{2}|[+-]?\d+(?:\.\d+)?)(?![\w/])")


def question_literals(question: str, mentions: Sequence[str] = ()) -> list[str]:
    """The literals written in a question (numbers, years, ISO dates), in text order, outside
    `[...]` marks and outside the anchors' mentions ("[Route 66] ... after 1990" -> ["1990"]).
    A mention that is itself a value ("13", linked because a KG holds the bare cell 13 as an
    entity) stays: "a number higher than 13" compares with 13 whatever the linker made of it."""
    text = re.sub(r"\[[^\[\]]*\]", " ", question)
    for m in sorted(mentions, key=len, reverse=True):
        if m and literal_value(m) is None:
            text = re.sub(re.escape(m), " ", text, flags=re.IGNORECASE)
    return _QUESTION_LITERAL.findall(text)


def written_value(text: str) -> int | str:
    """A question's literal as a condition keeps it: an integer as an int ("13" -> 13), anything
    else (a decimal, a date, a number too long to be an id of anything countable) as written."""
    t = text.strip()
    return int(t) if t.lstrip("+-").isdigit() and len(t) <= 18 else t


def has_order_word(question: str) -> bool:
    return any(w in ORDER_WORDS for w in re.findall(r"[a-z]+", question.casefold()))


def compare(value: float, op: str, literal: float) -> bool:
    return {">": value > literal, ">=": value >= literal, "<": value < literal, "<=": value <= literal,
            "=": abs(value - literal) < 1e-9}[op]


def apply_condition(values: dict[str, list[float]], op: str, literal: float | None = None) -> set[str]:
    """Entities whose attribute values satisfy the condition: a comparison holds if one of an
    entity's values satisfies it; an order keeps every entity sharing the extreme value. Entities
    without a value never pass."""
    have = {e: v for e, v in values.items() if v}
    if op in ORDERS:
        if not have:
            return set()
        pick = max if op == "argmax" else min
        best = {e: pick(v) for e, v in have.items()}
        extreme = pick(best.values())
        return {e for e, v in best.items() if v == extreme}
    return {e for e, v in have.items() if any(compare(x, op, literal) for x in v)}


# --- execution on a graph ------------------------------------------------------------------------
@dataclass
class Execution:
    """What a plan gave on a graph: the answers, the chain walks that reach them (per anchor), and
    the attribute triples the condition read for them."""

    answers: list[str] = field(default_factory=list)
    chain_ends: list[set[str]] = field(default_factory=list)  # per anchor, before intersecting
    walks: list[list[PathInstance]] = field(default_factory=list)  # per anchor, walks that end at an answer
    condition_triples: list[Triple] = field(default_factory=list)  # (answer, attribute, value) read by the condition
    values: dict[str, list[float]] = field(default_factory=dict)  # attribute values of the joined entities


def attribute_values(kg: KnowledgeGraph, entities: Sequence[str], relation: str) -> tuple[dict[str, list[float]], dict[str, list[str]]]:
    """Per entity, the values of `relation` as numbers (unparseable ones skipped), and the raw
    neighbour ids they came from: one `neighbors_batch` call and one `labels` call."""
    found = kg.neighbors_batch(sorted(entities), relation) if entities else {}
    raw = {e: list(v) for e, v in found.items() if v}
    labels = kg.labels(sorted({x for v in raw.values() for x in v})) if raw else {}
    values = {}
    for e, targets in raw.items():
        nums = [n for n in (_value_of(t, labels) for t in targets) if n is not None]
        if nums:
            values[e] = nums
    return values, raw


def _value_of(target: str, labels: dict[str, str]) -> float | None:
    v = literal_value(labels.get(target))
    return v if v is not None else literal_value(target)


def execute(kg: KnowledgeGraph, plan: QueryPlan, semantics=None, max_instances: int = 10_000,
            walks: Sequence[list[PathInstance]] | None = None) -> Execution:
    """Run `plan` on `kg`: walk each anchor's path (or take `walks`, already fetched), keep the
    walks `semantics` accepts (the dataset's answer rule), intersect the end sets, then filter or
    order them by the condition. Raises the graph's errors (the caller records them)."""
    out = Execution()
    per_anchor = []
    for k, (anchor, path) in enumerate(zip(plan.anchors, plan.paths)):
        found = walks[k] if walks is not None else kg.follow_path(anchor, list(path), limit=max_instances)
        kept = [w for w in found if semantics is None or semantics.keeps(w.entities, anchor)]
        per_anchor.append(kept)
        out.chain_ends.append({w.end for w in kept})
    joined = set.intersection(*out.chain_ends) if out.chain_ends else set()
    c = plan.constraint
    if c is not None and joined:
        out.values, raw = attribute_values(kg, sorted(joined), c.relation)
        joined = apply_condition(out.values, c.op, literal_value(c.value))
        out.condition_triples = [step_triple(e, c.relation, t) for e in sorted(joined) for t in raw.get(e, [])]
    elif c is not None:
        joined = set()
    out.answers = sorted(joined)
    out.walks = [[w for w in kept if w.end in joined] for kept in per_anchor]
    return out


def plan_answers(kg: KnowledgeGraph, plan: QueryPlan, semantics=None) -> set[str]:
    """The answer set of a plan (for the question generator and supervision)."""
    try:
        return set(execute(kg, plan, semantics).answers)
    except UnknownEntityError:
        return set()


# --- the data contract ---------------------------------------------------------------------------
def plan_from_record(record: dict, topics: Sequence[str], relation_path, source: str):
    """The gold plan a question record gives (optional): `relation_paths` (one path per topic
    entity, in the order of `topic_entities`) and/or `constraint` ({"relation", "op", "value"} or an
    order {"relation", "op": "argmax"|"argmin"}). Returns (plan dict or None); errors name `source`."""
    paths = record.get("relation_paths")
    constraint = record.get("constraint")
    if paths is None and constraint is None:
        return None
    if paths is not None:
        if isinstance(paths, str):  # "r1|^r2;r3" in a TSV/CSV cell: ';' between anchors
            paths = [p.split("|") for p in paths.split(";") if p.strip()]
        if not isinstance(paths, list) or not all(isinstance(p, list) and p and all(isinstance(r, str) and r
                                                                                   for r in p) for p in paths):
            raise DataFormatError(source, "relation_paths must be a list of relation paths (one list of "
                                  "relations per topic entity)", paths)
        if not paths:
            raise DataFormatError(source, "relation_paths is empty: give one relation path per topic entity, "
                                  "or leave the key out (the plan is then derived from the KG)", paths)
        if len(paths) > len(topics):
            raise DataFormatError(source, f"relation_paths has {len(paths)} paths but the question has "
                                  f"{len(topics)} topic entities (one path per anchor)", paths)
        if relation_path and list(relation_path) not in [list(p) for p in paths]:
            raise DataFormatError(source, f"relation_path {list(relation_path)} is none of relation_paths "
                                  f"{paths}: the two contradict each other", relation_path)
    if isinstance(constraint, str):
        try:
            constraint = json.loads(constraint)
        except ValueError:
            raise DataFormatError(source, "constraint must be a JSON object", constraint) from None
    parsed = None
    if constraint is not None:
        if not isinstance(constraint, dict) or "relation" not in constraint or "op" not in constraint:
            raise DataFormatError(source, 'constraint must be {"relation": R, "op": OP, "value": V} '
                                  f"(OP one of {', '.join(OPERATORS)}; no value for argmax/argmin)", constraint)
        try:
            parsed = Constraint(str(constraint["relation"]), str(constraint["op"]), constraint.get("value"))
        except ValueError as err:
            raise DataFormatError(source, str(err), constraint) from None
    if paths is None:
        if not relation_path:  # a constraint alone: the chain is derived from the KG
            return {"constraint": parsed.to_dict(), "anchors": None, "paths": None}
        paths = [list(relation_path)]
    plan = QueryPlan(list(topics[: len(paths)]), [list(p) for p in paths], parsed)
    return plan.to_dict()


def question_shape(plan: dict | None, topics: Sequence[str] = ()) -> str:
    """The shape of a question from its (gold or derived) plan dict; without one, by its topics."""
    if plan:
        if plan.get("shape"):
            return plan["shape"]
        paths = plan.get("paths") or []
        c = plan.get("constraint")
        if len(paths) > 1:
            return "conjunction"
        if c:
            return "order" if c.get("op") in ORDERS else "comparison"
    return "chain"


def focus_text(question: str, mentions: Sequence[str], focus: int, mask: str = "[E]", other: str = "<e>") -> str:
    """The question as the path predictor reads it for one anchor: anchor `focus` masked as the
    topic (`[E]`), the other anchors as `other`. `mentions` are the anchors' surface strings (or
    their `[...]` spans); a mention not in the text is skipped."""
    marked = re.findall(r"\[([^\[\]]+)\]", question)
    text = question
    if marked and len(marked) >= len(mentions):
        spans = iter(range(len(marked)))
        return re.sub(r"\[[^\[\]]+\]", lambda m: mask if next(spans) == focus else other, text)
    for k, m in sorted(enumerate(mentions), key=lambda km: -len(km[1])):
        if not m:
            continue
        text = re.sub(re.escape(m), mask if k == focus else other, text, count=1, flags=re.IGNORECASE)
    return text
