"""Query plans: what a question asks of the graph.

A plan is one relation path per anchor entity (their end sets intersected), optionally an
intermediate node the question names, conditions on the answers, and an aggregation:

    chain             [Ilse Varga] -^written_by->                           "what did Ilse Varga write"
    conjunction       [fantasy] -^has_genre-> AND [Lamplight Press] -^published_by->
                                                      "which fantasy books did Lamplight Press publish"
    comparison        [Ilse Varga] -^written_by->, published_in > 1990     "... books by Ilse Varga after 1990"
    two_conditions    ... published_in >= 1990, published_in <= 2000     "... between 1990 and 2000"
    order             [Ilse Varga] -^written_by->, argmin published_in     "the first book by Ilse Varga"
    intermediate      [A] -^author-> (that has mainTopic [T]) -presentedAt->
                                                      "at which conference did A present the paper on T"
    count             count of [Ilse Varga] -^written_by->                "how many books did Ilse Varga write"
    yes_no            is [The Iron Atlas] among [Ilse Varga] -^written_by->  "did Ilse Varga write The Iron Atlas"

A single-chain question is the plan with one anchor and nothing else. How a plan runs on a graph:
rra.plans.execution.

Records here are plain dataclasses; a question file gives the same structure as JSON
(docs/query_plans.md), read by `plan_from_record`.
"""
from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Sequence

from rra.graph.literals import order_key, parse_literal
from rra.records import DataFormatError

# The kinds of plan, by what a plan holds (QueryPlan.shape), simplest first.
SHAPES = ("chain", "conjunction", "three_anchors", "comparison", "two_conditions", "anchors_condition", "order",
          "intermediate", "count", "yes_no")
COMPARISONS = (">", ">=", "<", "<=", "=")
ORDERS = ("argmax", "argmin")
OPERATORS = COMPARISONS + ORDERS
AGGREGATES = ("count", "ask")
# Question words that ask for an order: KG-derived supervision only explains a question's answers
# by an order when it has one (a lone answer among several is otherwise often explained by chance).
ORDER_WORDS = frozenset("""first last earliest latest oldest newest youngest most least largest smallest
highest lowest biggest longest shortest recent earlier later top fewest greatest maximum minimum""".split())


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
    def is_order(self) -> bool:
        return self.op in ORDERS

    def to_dict(self) -> dict:
        d = {"relation": self.relation, "op": self.op}
        if self.op in COMPARISONS:
            d["value"] = self.value
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Constraint":
        return cls(str(d["relation"]), str(d["op"]), d.get("value"))

    def describe(self) -> str:
        if self.op in ORDERS:
            return f"{'max' if self.op == 'argmax' else 'min'} {self.relation}"
        return f"{self.relation} {self.op} {self.value}"


@dataclass(frozen=True)
class Via:
    """An intermediate node the question names: after `step` relations of the plan's first path,
    keep only the nodes n with the triple (n, relation, entity) (`relation` may be `^r`)."""

    step: int
    relation: str
    entity: str

    def to_dict(self) -> dict:
        return {"step": self.step, "relation": self.relation, "entity": self.entity}


@dataclass
class QueryPlan:
    anchors: list[str]  # entity ids, one per path
    paths: list[list[str]]
    constraints: list[Constraint] = field(default_factory=list)  # comparisons, then at most one order
    via: Via | None = None  # on the first path
    aggregate: str | None = None  # None (the entities), "count" or "ask" (yes/no)
    ask: str | None = None  # the entity a yes/no question asks about

    def __post_init__(self):
        if isinstance(self.constraints, Constraint):  # QueryPlan(anchors, paths, Constraint(...))
            self.constraints = [self.constraints]
        self.constraints = [c for c in (self.constraints or []) if c is not None]
        if not self.paths or len(self.anchors) != len(self.paths):
            raise ValueError(f"a plan needs one relation path per anchor ({len(self.anchors)} anchors, "
                             f"{len(self.paths)} paths)")
        if any(not p for p in self.paths):
            raise ValueError("a plan's relation paths may not be empty")
        orders = [c for c in self.constraints if c.is_order]
        if len(orders) > 1:
            raise ValueError("a plan has at most one order (argmax / argmin)")
        self.constraints = [c for c in self.constraints if not c.is_order] + orders
        if self.via is not None and not 1 <= self.via.step < len(self.paths[0]):
            raise ValueError(f"via.step must be 1..{len(self.paths[0]) - 1} (a node inside the first path "
                             f"{self.paths[0]}), not {self.via.step}")
        if self.aggregate not in (None,) + AGGREGATES:
            raise ValueError(f"aggregate must be one of {', '.join(AGGREGATES)} (or none), not {self.aggregate!r}")
        if (self.aggregate == "ask") != bool(self.ask):
            raise ValueError("a yes/no plan (aggregate 'ask') names the entity it asks about (ask), and only it does")

    @property
    def constraint(self) -> Constraint | None:
        """The first condition (plans of one condition, and readers written before several)."""
        return self.constraints[0] if self.constraints else None

    @property
    def comparisons(self) -> list[Constraint]:
        return [c for c in self.constraints if not c.is_order]

    @property
    def order(self) -> Constraint | None:
        return next((c for c in self.constraints if c.is_order), None)

    @property
    def shape(self) -> str:
        """What the plan holds (SHAPES): aggregations first, then a named intermediate, then anchors
        and conditions together, then several anchors, then conditions."""
        if self.aggregate == "count":
            return "count"
        if self.aggregate == "ask":
            return "yes_no"
        if self.via is not None:
            return "intermediate"
        if len(self.paths) > 1:
            if self.constraints:
                return "anchors_condition"
            return "three_anchors" if len(self.paths) > 2 else "conjunction"
        if len(self.comparisons) > 1:
            return "two_conditions"
        if self.order is not None:
            return "order"
        return "comparison" if self.constraints else "chain"

    @property
    def entities(self) -> list[str]:
        """Every entity the plan names: its anchors, a named intermediate and the entity a yes/no asks
        about (what a reader of the plan needs labels for)."""
        return [*self.anchors, *([self.via.entity] if self.via else []), *([self.ask] if self.ask else [])]

    @property
    def complexity(self) -> int:
        """How many parts the plan joins (anchors, conditions, a named intermediate); an aggregation
        changes what is answered, not how much the plan assumes, so it adds none."""
        return len(self.paths) + len(self.constraints) + (self.via is not None)

    @property
    def is_chain(self) -> bool:
        return self.shape == "chain"

    def key(self) -> tuple:
        """Identity of a plan (its branches in any order are one plan)."""
        branches = tuple(sorted((a, tuple(p)) for a, p in zip(self.anchors[1:], self.paths[1:])))
        return ((self.anchors[0], tuple(self.paths[0])), branches,
                tuple((c.relation, c.op, str(c.value)) for c in self.constraints),
                (self.via.step, self.via.relation, self.via.entity) if self.via else None, self.aggregate, self.ask)

    def to_dict(self) -> dict:
        d = {"anchors": list(self.anchors), "paths": [list(p) for p in self.paths],
             "constraint": self.constraint.to_dict() if self.constraint else None, "shape": self.shape}
        if len(self.constraints) > 1:
            d["constraints"] = [c.to_dict() for c in self.constraints]
        if self.via is not None:
            d["via"] = self.via.to_dict()
        if self.aggregate:
            d["aggregate"] = self.aggregate
        if self.ask:
            d["ask"] = self.ask
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "QueryPlan":
        """From `to_dict`, or from the benchmark generators' gold plans (`conditions`, `order`)."""
        raw = d.get("constraints")
        if raw is None:
            raw = d.get("constraint")
        raw = [raw] if isinstance(raw, dict) else list(raw or [])
        raw += list(d.get("conditions") or []) + ([d["order"]] if d.get("order") else [])
        via = d.get("via")
        return cls(list(d["anchors"]), [list(p) for p in d["paths"]], [Constraint.from_dict(c) for c in raw],
                   Via(int(via["step"]), str(via["relation"]), str(via["entity"])) if via else None,
                   d.get("aggregate"), d.get("ask"))

    def describe(self, labels: dict[str, str] | None = None) -> str:
        labels = labels or {}
        chains = []
        for k, (a, p) in enumerate(zip(self.anchors, self.paths)):
            steps = list(p)
            if k == 0 and self.via is not None:
                steps.insert(self.via.step, f"[{self.via.relation} {labels.get(self.via.entity, self.via.entity)}]")
            chains.append(f"{labels.get(a, a)} -> {' -> '.join(steps)}")
        text = " AND ".join(chains) + "".join(f" | {c.describe()}" for c in self.constraints)
        if self.aggregate == "count":
            return f"count({text})"
        if self.aggregate == "ask":
            return f"{labels.get(self.ask, self.ask)} in ({text})?"
        return text


# --- literals ------------------------------------------------------------------------------------
class DateValue(float):
    """A date's place on the time line (a fractional year, as `literal_value` gives it), marked as a
    date: a condition that writes a bare year compares it by its year, as the graph layer's
    rra.graph.literals.compare does ("published after 1999" keeps no paper of 1999-07-02)."""


def literal_value(text) -> float | None:
    """A KG literal or question literal as a number that orders correctly, or None: read by the
    graph layer's literal parser (rra.graph.literals: typed N-Triples forms such as
    `"1985"^^xsd:gYear`, numbers, ISO dates) and put on one line (a date as a fractional year, so
    "after 1990" compares with 1990-07-02); an id whose last part is the value (`year/1985`) too."""
    if text is None or isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return float(text)
    return _text_value(str(text).strip())


@lru_cache(maxsize=200_000)
def _text_value(s: str) -> float | None:
    """literal_value of a text, cached: deriving plans reads the same attribute values of a KG for
    question after question (the values are immutable floats; at most ~50 MB of entries)."""
    for candidate in dict.fromkeys([s, s.rsplit("/", 1)[-1]]):
        value = parse_literal(candidate)
        key = order_key(value)
        if key is not None:
            return DateValue(key[1]) if isinstance(value, dt.date) else key[1]
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


# --- the data contract ---------------------------------------------------------------------------
def _paths_field(paths, topics, source) -> list[list[str]]:
    if isinstance(paths, str):  # "r1|^r2;r3" in a TSV/CSV cell: ';' between anchors
        paths = [p.split("|") for p in paths.split(";") if p.strip()]
    if not isinstance(paths, list) or not all(
            isinstance(p, list) and p and all(isinstance(r, str) and r for r in p) for p in paths):
        raise DataFormatError(source, "relation_paths must be a list of relation paths (one list of "
                              "relations per topic entity)", paths)
    if not paths:
        raise DataFormatError(source, "relation_paths is empty: give one relation path per topic entity, "
                              "or leave the key out (the plan is then derived from the KG)", paths)
    if len(paths) > len(topics):
        raise DataFormatError(source, f"relation_paths has {len(paths)} paths but the question has "
                              f"{len(topics)} topic entities (one path per anchor)", paths)
    return paths


def _json_field(value, name: str, source: str):
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            raise DataFormatError(source, f"{name} must be JSON", value) from None
    return value


def plan_from_record(record: dict, topics: Sequence[str], relation_path, source: str):
    """The gold plan a question record gives (optional; docs/query_plans.md): `relation_paths` (one
    path per topic entity, in the order of `topic_entities`), `constraint` (one
    {"relation", "op", "value"} or an order {"relation", "op": "argmax"|"argmin"}, or a list of
    them: every condition must hold), `via` ({"step", "relation", "entity"}: an intermediate node of
    the first path the question names), `aggregate` ("count" | "ask") and `ask` (the entity a
    yes/no question asks about; default: the first topic entity that is not an anchor); or the
    whole plan as one object `plan` ({"anchors", "paths", ...}, QueryPlan.to_dict's keys).
    Returns the plan as a dict, or None; errors name `source`."""
    if record.get("plan") is not None:
        return _whole_plan(_json_field(record["plan"], "plan", source), source)
    keys = ("relation_paths", "constraint", "constraints", "via", "aggregate")
    if all(record.get(k) in (None, "") for k in keys):
        return None
    paths = record.get("relation_paths")
    if paths not in (None, ""):
        paths = _paths_field(paths, topics, source)
        if relation_path and list(relation_path) not in [list(p) for p in paths]:
            raise DataFormatError(source, f"relation_path {list(relation_path)} is none of relation_paths "
                                  f"{paths}: the two contradict each other", relation_path)
    else:
        paths = None
    raw = _json_field(record.get("constraints") or record.get("constraint"), "constraint", source)
    raw = [raw] if isinstance(raw, dict) else raw
    parsed = []
    for c in raw or []:
        if not isinstance(c, dict) or "relation" not in c or "op" not in c:
            raise DataFormatError(source, 'constraint must be {"relation": R, "op": OP, "value": V} '
                                  f"(OP one of {', '.join(OPERATORS)}; no value for argmax/argmin), or a list "
                                  "of them", c)
        try:
            parsed.append(Constraint.from_dict(c))
        except ValueError as err:
            raise DataFormatError(source, str(err), c) from None
    aggregate = record.get("aggregate") or None
    if aggregate not in (None,) + AGGREGATES:
        raise DataFormatError(source, f"aggregate must be one of {', '.join(AGGREGATES)}", aggregate)
    via = _json_field(record.get("via"), "via", source)
    if paths is None:
        if not relation_path:  # conditions alone: the chain is derived from the KG
            if via or aggregate:
                raise DataFormatError(source, "via and aggregate need the plan's paths (relation_paths or "
                                      "relation_path)", record.get("via") or aggregate)
            return {"constraint": parsed[0].to_dict(), "constraints": [c.to_dict() for c in parsed],
                    "anchors": None, "paths": None}
        paths = [list(relation_path)]
    anchors = list(topics[: len(paths)])
    ask = record.get("ask")
    if aggregate == "ask" and not ask:
        rest = [t for t in topics if t not in anchors]
        if not rest:
            raise DataFormatError(source, "a yes/no plan (aggregate 'ask') needs the entity it asks about: "
                                  "give `ask` or one more topic entity than paths", topics)
        ask = rest[0]
    plan = {"anchors": anchors, "paths": paths, "constraints": [c.to_dict() for c in parsed], "via": via,
            "aggregate": aggregate, "ask": ask if aggregate == "ask" else None}
    return _whole_plan(plan, source)


def _whole_plan(d, source: str) -> dict:
    if not isinstance(d, dict) or not isinstance(d.get("anchors"), list) or not isinstance(d.get("paths"), list):
        raise DataFormatError(source, 'plan must be an object {"anchors": [...], "paths": [[...], ...], ...}', d)
    _paths_field(d["paths"], d["anchors"], source)
    via = d.get("via")
    if via is not None and (not isinstance(via, dict) or not {"step", "relation", "entity"} <= set(via)):
        raise DataFormatError(source, 'via must be {"step": K, "relation": R, "entity": E}', via)
    try:
        return QueryPlan.from_dict(d).to_dict()
    except (ValueError, TypeError, KeyError) as err:
        raise DataFormatError(source, f"plan: {err}", d) from None


def question_shape(plan: dict | None, topics: Sequence[str] = ()) -> str:
    """The shape of a question from its (gold or derived) plan dict; without one, by its topics."""
    if plan:
        if plan.get("shape"):
            return plan["shape"]
        if plan.get("paths"):
            return QueryPlan.from_dict(plan).shape
        raw = plan.get("constraints") or ([plan["constraint"]] if plan.get("constraint") else [])
        if len(raw) > 1:
            return "two_conditions"
        if raw:
            return "order" if raw[0].get("op") in ORDERS else "comparison"
    return "conjunction" if len(set(topics)) > 1 else "chain"


def focus_text(question: str, mentions: Sequence[str], focus: int, mask: str = "[E]", other: str = "<e>") -> str:
    """The question as the path predictor reads it for one anchor: anchor `focus` masked as the
    topic (`[E]`), the other anchors as `other`. `mentions` are the anchors' surface strings, in
    the anchors' order (not necessarily the text's); in a question whose anchors are marked
    `[...]`, the span spelling mention `focus` is the focus (else the span at that position); a
    mention not in the text is skipped."""
    spans = re.findall(r"\[([^\[\]]+)\]", question)
    if spans and len(spans) >= len(mentions):
        target = mentions[focus].strip().casefold() if focus < len(mentions) and mentions[focus] else None
        at = next((i for i, s in enumerate(spans) if target and s.strip().casefold() == target), focus)
        order = iter(range(len(spans)))
        return re.sub(r"\[[^\[\]]+\]", lambda m: mask if next(order) == at else other, question)
    text = question
    for k, m in sorted(enumerate(mentions), key=lambda km: -len(km[1])):
        if not m:
            continue
        text = re.sub(re.escape(m), mask if k == focus else other, text, count=1, flags=re.IGNORECASE)
    return text
