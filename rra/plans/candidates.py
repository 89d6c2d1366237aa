"""Candidate query plans of a question, built from the graph around its anchors.

Plans are not classified, they are enumerated: given each anchor's candidate chains (at inference
the path predictor's best paths with that anchor in focus, in training the KG's own paths) and
the literals the question writes, every plan below that executes to a non-empty result on the
graph is a candidate; a ranker (rra.models.plan_ranker) then picks one.

- **chains**: each anchor's paths;
- **conjunctions**: the intersection of two or three anchors' chains (branches of at most
  `branch_hops` relations);
- **a named intermediate**: a chain of two or more relations whose node after step k is linked to
  another entity the question names (every relation of that entity is tried);
- **conditions**: on the result of one of the best `modifier_bases` plans, an attribute (a
  relation whose values are numbers, years or dates) compared with a literal of the question by
  each operator; two conditions with two literals (a range of one attribute, or two attributes),
  with every operator pair that keeps the same entities ("between" may read `>=` / `<=`);
- **orders**: the entities with the largest / smallest value of an attribute;
- **count**: the number of a plan's result entities (not of a chain that ends in typed numbers or
  dates: "what is the citation count of X" asks for the value);
- **yes/no**: whether another named entity is among a chain's results.

An order that keeps every entity (or none) says nothing and is not a candidate, nor is a condition
that keeps none. A condition on a literal the question writes that keeps every entity is one: "what
have A and B written together since 2017", where all of it is, is answered by it as by the bare
conjunction, and without it the question's literal pushed the ranker to a condition that drops some
(`= 2017`).
Everything goes through the `KnowledgeGraph` protocol (`neighbors_batch`, `relations_batch`,
`labels`; rra.plans.reads, which batches the reads of many questions), so any backend serves it, and
`PlanLimits` bounds it: a hub (a country with thousands
of papers) costs at most `max_frontier` entities per walk and `max_values` per attribute read.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, product
from typing import Sequence

from rra.graph.base import inverse
from rra.graph.rdf import is_literal
from rra.plans.execution import aggregate_answers, apply_condition
from rra.plans.plan import COMPARISONS, ORDERS, Constraint, QueryPlan, Via, written_value, literal_value
from rra.plans.reads import Chain, PlanLimits, PlanReads, Walker
from rra.text.matching import normalize_answer

@dataclass
class Candidate:
    plan: QueryPlan
    nodes: frozenset  # the result entities before aggregating
    answers: list[str]  # what the plan answers (ids, a count, "yes" / "no")
    prior: float = 0.0  # mean log-probability of its chains (the path predictor's)
    kind: str | None = None  # what its result entities are, in words (KindCheck.kinds_of): "city", "year"


class _Pool:
    """The candidates so far: one per plan, at most `limit`."""

    def __init__(self, limit: int):
        self.limit, self.items, self.keys = limit, [], set()

    @property
    def full(self) -> bool:
        return len(self.items) >= self.limit

    def add(self, plan: QueryPlan, nodes, prior: float) -> Candidate | None:
        key = plan.key()
        if self.full or key in self.keys or not nodes:
            return None
        self.keys.add(key)
        cand = Candidate(plan, frozenset(nodes), aggregate_answers(plan, nodes), prior)
        self.items.append(cand)
        return cand


def _log(score: float) -> float:
    return math.log(max(float(score), 1e-12))


def enumerate_plans(kg, chains: Sequence[Chain], literals: Sequence[str] = (), named: Sequence[str] = (),
                    limits: PlanLimits | None = None, semantics=None, read_kinds: bool = True,
                    reads: PlanReads | None = None) -> list[Candidate]:
    """Every candidate plan (see the module doc) of a question whose anchors' chains are `chains`
    (best first per anchor), whose literals are `literals` (as written, text order) and which names
    the entities `named` (anchors included: what a named intermediate or a yes/no may test), each
    with the kind of its results (`Candidate.kind`). `reads`: the graph reads made so far
    (PlanReads, built with the same limits and semantics: a batch's, its prefetch made together,
    or one that keeps the KG's attribute schema and classes across questions); a fresh one without."""
    lim = limits or PlanLimits()
    reads = reads or PlanReads(kg, semantics, lim)
    walker = reads.walker
    pool = _Pool(lim.max_plans)
    anchors = list(dict.fromkeys(c.anchor for c in chains))[: lim.max_anchors]
    named = list(dict.fromkeys(list(named) + anchors))
    per_anchor: dict[str, list[tuple[Chain, frozenset]]] = {a: [] for a in anchors}
    for c in chains:
        if c.anchor in per_anchor and len(per_anchor[c.anchor]) < lim.paths_per_anchor:
            ends = walker.reach(c.anchor, c.path)
            # a path of several relations that only walks back to its anchor ("mayor, mayor (reverse)")
            # answers a question about X with X: it says nothing, whatever the ranker reads in it,
            # unless the data asks such questions ("which books won the prize X won": X alone)
            if ends and (lim.round_trips or not (len(c.path) > 1 and ends == {c.anchor})):
                per_anchor[c.anchor].append((c, ends))
    bases: list[Candidate] = []  # plans of entity sets that modifiers may refine

    def base(plan, nodes, prior):
        made = pool.add(plan, nodes, prior)
        if made is not None:
            bases.append(made)

    for a in anchors:
        for c, ends in per_anchor[a]:
            base(QueryPlan([a], [list(c.path)]), ends, _log(c.score))
    short = {a: [(c, e) for c, e in per_anchor[a] if len(c.path) <= lim.branch_hops] for a in anchors}
    for size in (2, 3):
        for group in combinations(anchors, size):
            width = lim.paths_per_anchor if size == 2 else max(1, lim.paths_per_anchor // 2 + 1)
            for picks in product(*(short[a][:width] for a in group)):
                nodes = frozenset.intersection(*(e for _, e in picks))
                prior = sum(_log(c.score) for c, _ in picks) / size
                base(QueryPlan(list(group), [list(c.path) for c, _ in picks]), nodes, prior)
    _intermediates(reads, per_anchor, named, base)
    kinds = reads.kinds
    if read_kinds:  # graph reads that a ranker trained without kinds would not use
        for b, kind in zip(bases, kinds.kinds_of([b.nodes for b in bases])):
            b.kind = kind
    ranked = sorted(bases, key=lambda b: (-b.prior, b.plan.complexity))[: lim.modifier_bases]
    values = reads.values
    numbers = [x for x in dict.fromkeys(literals) if literal_value(x) is not None][: lim.max_literals]
    for b in ranked:
        if not _quantities(b.nodes):
            pool.add(QueryPlan(b.plan.anchors, b.plan.paths, [], b.plan.via, "count"), b.nodes, b.prior)
        if len(b.nodes) < 2 or len(b.nodes) > lim.max_values:
            continue
        table = values.of(b.nodes)
        _orders(pool, b, table)
        _comparisons(pool, b, table, numbers, lim.max_pairs)
    for a in anchors:  # yes/no: is another named entity among a chain's results
        for c, ends in per_anchor[a]:
            for e in named:
                # only of a chain whose results are things like it ("is <university> in <country>"
                # asks `country`, never a chain ending at people, which answers "no" to anything)
                if e != a and kinds.could_be_among(e, c.path[-1], ends):
                    pool.add(QueryPlan([a], [list(c.path)], aggregate="ask", ask=e), ends, _log(c.score))
    of_base = {_base_key(b.plan): b.kind for b in bases}
    for c in pool.items:  # a condition, an order, a count or a yes/no reads its base plan's entities
        c.kind = of_base.get(_base_key(c.plan))
    return pool.items


def _base_key(plan: QueryPlan) -> tuple:
    """The plan without its conditions, order and aggregation: the plan whose entities it reads."""
    key = plan.key()
    return key[0], key[1], key[3]


def _quantities(nodes) -> bool:
    """Whether every node is a typed number or date literal: a chain that ends in a quantity
    ("what is the citation count of X", "how long is X in pages") is asked for its value, never
    for how many values it has, so such chains get no count plan (which would answer 1)."""
    return all(is_literal(n) and literal_value(n) is not None for n in nodes)


def _intermediates(reads: PlanReads, per_anchor, named, base) -> None:
    """Chains of 2+ relations whose node after step k is linked to another named entity e (over any
    relation of e): the plan keeps the walks through such nodes."""
    walker: Walker = reads.walker
    for a, chains in per_anchor.items():
        for c, ends in chains:
            for e in named:
                if e == a or len(c.path) < 2:
                    continue
                for k in range(1, len(c.path)):
                    middle = walker.reach(a, c.path[:k])
                    if not middle:
                        continue
                    for r, linked in reads.around(e).items():
                        hit = middle & linked
                        if not hit:
                            continue
                        nodes = walker.reach(a, c.path[k:], start=hit, walked=k)
                        if nodes and nodes != ends:  # the named node must matter
                            base(QueryPlan([a], [list(c.path)], via=Via(k, inverse(r), e)), nodes, _log(c.score))


def _orders(pool: _Pool, b: Candidate, table) -> None:
    for r, vals in table.items():
        for op in ORDERS:
            kept = apply_condition(vals, op)
            if kept and kept != b.nodes:
                pool.add(QueryPlan(b.plan.anchors, b.plan.paths, [Constraint(r, op)], b.plan.via), kept, b.prior)


def _comparisons(pool: _Pool, b: Candidate, table, literals: Sequence[str], max_pairs: int) -> None:
    """One condition per (attribute, literal, operator) that keeps some but not all entities; two
    conditions with two different literals: a range of one attribute (a lower bound with the smaller
    literal, an upper bound with the larger) or two attributes, each pair of results once (counted
    against `max_pairs`) but with every operator that keeps them: "between 1961 and 1978" reads
    `>=` / `<=`, "after 1961 but before 1978" `>` / `<`, and where no value sits on a bound both
    keep the same entities, so only the words can tell them apart."""
    singles: dict[str, dict[tuple, list[Constraint]]] = {lit: {} for lit in literals}
    values = {lit: literal_value(lit) for lit in literals}
    for r, vals in table.items():
        for lit in literals:
            v = values[lit]
            for op in COMPARISONS:
                kept = apply_condition(vals, op, v)
                if kept:  # keeping every entity too: the question wrote the literal (module doc)
                    c = Constraint(r, op, written_value(lit))
                    pool.add(QueryPlan(b.plan.anchors, b.plan.paths, [c], b.plan.via), kept, b.prior)
                    singles[lit].setdefault((r, frozenset(kept)), []).append(c)
    pairs = 0
    for l1, l2 in combinations(literals, 2):
        for ((r1, k1), cs1), ((r2, k2), cs2) in product(singles[l1].items(), singles[l2].items()):
            if pairs >= max_pairs or pool.full:
                return
            kept = k1 & k2
            if not kept or kept == k1 or kept == k2:
                continue
            made = 0
            for c1, c2 in product(cs1, cs2):
                if r1 == r2:
                    lo, hi = (c1, c2) if literal_value(l1) < literal_value(l2) else (c2, c1)
                    if lo.op not in (">", ">=") or hi.op not in ("<", "<="):
                        continue
                if pool.add(QueryPlan(b.plan.anchors, b.plan.paths, [c1, c2], b.plan.via), kept, b.prior):
                    made += 1
            pairs += made > 0


def answers_match(answers: Sequence[str], gold: Sequence[str] | set[str]) -> bool:
    """Whether a plan's answers are exactly the gold ones, compared as the metrics compare them
    (rra.text.matching.normalize_answer: ids, a literal node as its value, "7", "yes"). `gold` may be given
    already normalised, as a set."""
    want = gold if isinstance(gold, (set, frozenset)) else {normalize_answer(g) for g in gold}
    if not want or len(set(answers)) < len(want):
        return False
    return {_normal(a) for a in answers} == want


@lru_cache(maxsize=200_000)
def _normal(x: str) -> str:
    return normalize_answer(x)
