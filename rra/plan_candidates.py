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
`labels`), so any backend serves it, and `PlanLimits` bounds it: a hub (a country with thousands
of papers) costs at most `max_frontier` entities per walk and `max_values` per attribute read.
"""
from __future__ import annotations

import heapq
import math
from collections import Counter
from functools import lru_cache
from dataclasses import dataclass
from itertools import combinations, product
from typing import Sequence

from rra.graph.base import SUBCLASS_RELATIONS, TOP_CLASSES, TYPE_RELATIONS, base_relation, inverse
from rra.graph.literals import value_kind
from rra.graph.rdf import is_literal
from rra.plan import COMPARISONS, ORDERS, Constraint, QueryPlan, Via, aggregate_answers, apply_condition, \
    written_value, literal_value
from rra.text import normalize_answer, relation_words


@dataclass(frozen=True)
class Chain:
    anchor: str
    path: tuple[str, ...]
    score: float = 1.0  # the path predictor's probability of the path (1 for a path the KG gives)


@dataclass
class PlanLimits:
    """Bounds of the enumeration (conf/method/rra.yaml `plans`)."""

    max_plans: int = 400  # candidates per question, every kind together
    paths_per_anchor: int = 5  # chains per anchor, best first
    max_anchors: int = 3  # anchors joined (the question's first entities)
    branch_hops: int = 2  # relations of a conjunction's branches
    max_attributes: int = 6  # attribute relations tried per plan (those most of its entities have)
    modifier_bases: int = 8  # plans that conditions, orders and counts are tried on, best first
    max_pairs: int = 100  # two-condition plans per base plan
    max_values: int = 5000  # result sets larger than this are neither filtered nor ordered
    max_frontier: int = 5000  # a walk reaching more entities is not followed further
    max_literals: int = 2  # question literals used by conditions


@dataclass
class Candidate:
    plan: QueryPlan
    nodes: frozenset  # the result entities before aggregating
    answers: list[str]  # what the plan answers (ids, a count, "yes" / "no")
    prior: float = 0.0  # mean log-probability of its chains (the path predictor's)
    kind: str | None = None  # what its result entities are, in words (KindCheck.kinds_of): "city", "year"


class Walker:
    """Entity sets reached along relation prefixes from an anchor, cached for one question; the
    dataset's answer rule (`semantics`) applied as retrieval applies it. None: a hub (too many)."""

    def __init__(self, kg, semantics=None, max_frontier: int = 5000):
        self.kg, self.semantics, self.max_frontier = kg, semantics, max_frontier
        self._sets: dict[tuple[str, tuple[str, ...]], frozenset | None] = {}

    def reach(self, anchor: str, path: Sequence[str], start: frozenset | None = None) -> frozenset | None:
        """The set `path` reaches from `anchor` (or from `start`, a subset of what its prefix reached)."""
        key = (anchor, tuple(path))
        if start is None and key in self._sets:
            return self._sets[key]
        frontier = start if start is not None else frozenset([anchor])
        sem = self.semantics
        for k, relation in enumerate(path):
            found = self.kg.neighbors_batch(sorted(frontier), relation) if frontier else {}
            reached = {n for ns in found.values() for n in ns}
            last = k + 1 == len(path)
            if sem is not None and ((not last and not sem.revisit_topic) or (last and not sem.topic_can_be_answer)):
                reached.discard(anchor)
            if len(reached) > self.max_frontier:
                frontier = None
                break
            frontier = frozenset(reached)
        if start is None:
            self._sets[key] = frontier
        return frontier


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
                    limits: PlanLimits | None = None, semantics=None,
                    schema: AttributeSchema | None = None, kinds: KindCheck | None = None,
                    read_kinds: bool = True) -> list[Candidate]:
    """Every candidate plan (see the module doc) of a question whose anchors' chains are `chains`
    (best first per anchor), whose literals are `literals` (as written, text order) and which names
    the entities `named` (anchors included: what a named intermediate or a yes/no may test), each
    with the kind of its results (`Candidate.kind`). `schema`, `kinds`: the KG's attribute
    relations and classes as read so far (pass them to reuse across questions)."""
    lim = limits or PlanLimits()
    walker = Walker(kg, semantics, lim.max_frontier)
    pool = _Pool(lim.max_plans)
    anchors = list(dict.fromkeys(c.anchor for c in chains))[: lim.max_anchors]
    named = list(dict.fromkeys(list(named) + anchors))
    per_anchor: dict[str, list[tuple[Chain, frozenset]]] = {a: [] for a in anchors}
    for c in chains:
        if c.anchor in per_anchor and len(per_anchor[c.anchor]) < lim.paths_per_anchor:
            ends = walker.reach(c.anchor, c.path)
            # a path of several relations that only walks back to its anchor ("mayor, mayor (reverse)")
            # answers a question about X with X: it says nothing, whatever the ranker reads in it
            if ends and not (len(c.path) > 1 and ends == {c.anchor}):
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
    _intermediates(kg, walker, per_anchor, named, base)
    kinds = kinds or KindCheck(kg)
    if read_kinds:  # graph reads that a ranker trained without kinds would not use
        for b, kind in zip(bases, kinds.kinds_of([b.nodes for b in bases])):
            b.kind = kind
    ranked = sorted(bases, key=lambda b: (-b.prior, b.plan.complexity))[: lim.modifier_bases]
    values = _AttributeTable(kg, lim, schema or AttributeSchema(kg))
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


class KindCheck:
    """Whether an entity a yes/no question names is the kind of thing a chain returns, so the chain
    may ask about it: the entity is at the far end of the chain's last relation somewhere in the
    graph, and where the graph gives classes (`TYPE_RELATIONS`) to the entity and to the chain's
    results, it shares one with some of them. Without the class test, "is <conference> held in
    <country>" could ask the members of the conference's own class (a country is at the far end of
    `^rdf:type` too). The same test builds the plans the ranker trains on and those it ranks.
    Lookups are cached; classes are read for at most `sample` of a chain's results."""

    def __init__(self, kg, sample: int = 16):
        self.kg, self.sample = kg, sample
        self._range: dict[tuple[str, str], bool] = {}
        self._types: dict[str, dict[str, frozenset]] = {}  # node -> {type relation it has: its classes}
        self._class_names: dict[str, str] = {}
        self._supers: dict[str, frozenset] = {}  # class -> its direct broader classes

    def kinds_of(self, node_sets: Sequence[frozenset]) -> list[str | None]:
        """What each set of result nodes is, in the words a question uses for it (the plan ranker
        reads it, rra.text.plan_words): of a sample of its nodes, the most common class name (its
        label, else its id in words: "researcher", "city") or value kind ("year", "number", "text",
        rra.graph.literals.value_kind); None where the graph gives neither (untyped entity
        ids, no classes). "In which city is X based" then tells `headquarters` from `headquarters, ^locatedIn`
        (the institutions of that city), which read almost alike. Where several names tie (an entity
        typed Person, Agent and Thing), the most specific: not a class of everything (owl:Thing) nor
        a superclass of another where the graph says so (rdfs:subClassOf, P279); then alphabetical.
        Three batched graph reads for all the sets together (two more for tied classes), cached."""
        samples = [heapq.nsmallest(self.sample, s) for s in node_sets]
        types = self._types_of([n for ns in samples for n in ns])
        new = sorted({c for t in types.values() for cs in t.values() for c in cs} - set(self._class_names))
        labels = self.kg.labels(new) if new else {}
        # a label in words ("research institute"), or an id in words ("ScholarlyArticle", "film.film")
        self._class_names.update((c, relation_words(labels.get(c) or c)) for c in new)
        out = []
        for ns in samples:
            votes = Counter(k for n in ns for k in ((value_kind(n),) if is_literal(n) else
                                                    {self._class_names[c] for cs in types[n].values() for c in cs}))
            if not votes:
                out.append(None)
                continue
            top = max(votes.values())
            tied = sorted(k for k, v in votes.items() if v == top)
            if len(tied) > 1:  # every node has them all (Person, Agent, Thing): the most specific names them
                ids = {c for n in ns if not is_literal(n) for cs in types[n].values() for c in cs
                       if self._class_names[c] in tied}
                tied = self._most_specific(tied, ids) or tied
            out.append(tied[0])
        return out

    def _most_specific(self, names: list[str], ids: set[str]) -> list[str]:
        """The tied class names that are neither a class every entity belongs to (owl:Thing) nor a
        superclass (rdfs:subClassOf, P279) of another tied class, where the graph says so."""
        broader = self._broader(sorted(ids))
        general = set(TOP_CLASSES) | {b for c in ids for b in broader.get(c, ()) if b in ids and b != c}
        keep = []
        for k in names:
            mine = [c for c in ids if self._class_names[c] == k]
            if not mine or any(c not in general for c in mine):  # a value kind ("year") has no class to test
                keep.append(k)
        return keep

    def _broader(self, classes: list[str]) -> dict[str, frozenset]:
        todo = [c for c in classes if c not in self._supers]
        if todo:
            found: dict[str, set] = {c: set() for c in todo}
            rels = self.kg.relations_batch(todo, "out")
            for r in sorted({r for rs in rels.values() for r in rs if r in SUBCLASS_RELATIONS}):
                for c, supers in self.kg.neighbors_batch([c for c in todo if r in rels.get(c, ())], r).items():
                    found[c].update(supers)
            self._supers.update({c: frozenset(v) for c, v in found.items()})
        return {c: self._supers[c] for c in classes}

    def relation_kinds(self, relations: Sequence[str]) -> dict[str, str | None]:
        """What each relation leads to, as `kinds_of` names it, read from a sample of its far ends
        anywhere in the graph (`KnowledgeGraph.relation_ends`): `birthPlace` -> "city",
        `^author` -> "scholarly article". The relation scorer reads it beside the relation's name
        (rra.text.RelationText.with_kinds): "hometown" then finds `birthPlace`, not `affiliation`."""
        relations = list(dict.fromkeys(relations))
        # a type relation leads to classes, or back to their members of every kind: none to name
        asked = [r for r in relations if base_relation(r) not in TYPE_RELATIONS]
        ends = self.kg.relation_ends(asked, self.sample) if asked else {}
        kinds = dict(zip(asked, self.kinds_of([frozenset(ends.get(r, ())) for r in asked])))
        return {r: kinds.get(r) for r in relations}

    def could_be_among(self, entity: str, relation: str, ends) -> bool:
        if entity in ends:
            return True
        if not self._in_range(entity, relation):
            return False
        own = self._types_of([entity])[entity]
        mine = frozenset().union(*own.values())
        if not mine:
            return True
        sample = heapq.nsmallest(self.sample, (n for n in ends if not is_literal(n)))  # not a sort of every result
        # their classes by the type relations the entity has (a graph may mix rdf:type and P31)
        theirs = [c for c in (frozenset().union(*(t.get(r, frozenset()) for r in own))
                              for t in self._types_of(sample).values()) if c]
        return not theirs or any(c & mine for c in theirs)

    def _in_range(self, entity: str, relation: str) -> bool:
        key = (entity, relation)
        if key not in self._range:
            self._range[key] = bool(self.kg.neighbors_batch([entity], inverse(relation)).get(entity))
        return self._range[key]

    def _types_of(self, nodes: Sequence[str]) -> dict[str, dict[str, frozenset]]:
        """{node: {type relation (TYPE_RELATIONS) it has: its classes}}, read for the nodes not yet
        seen in one batch per type relation; literals have none. The yes/no test and the result
        kinds share it, so a node's classes are read once per batch of questions."""
        todo = sorted({n for n in nodes if not is_literal(n) and n not in self._types})
        if todo:
            typed = {e: [r for r in rels if r in TYPE_RELATIONS] for e, rels in self.kg.relations_batch(todo).items()}
            found: dict[str, dict[str, frozenset]] = {e: {} for e in todo}
            for r in sorted({r for rs in typed.values() for r in rs}):
                for e, classes in self.kg.neighbors_batch([e for e in todo if r in typed.get(e, ())], r).items():
                    found[e][r] = frozenset(c for c in classes if not is_literal(c))
            self._types.update(found)
        return {n: self._types.get(n, {}) for n in nodes}


def _intermediates(kg, walker: Walker, per_anchor, named, base) -> None:
    """Chains of 2+ relations whose node after step k is linked to another named entity e (over any
    relation of e): the plan keeps the walks through such nodes."""
    around: dict[str, dict[str, frozenset]] = {}
    for a, chains in per_anchor.items():
        for c, ends in chains:
            for e in named:
                if e == a or len(c.path) < 2:
                    continue
                if e not in around:
                    rels = kg.relations_batch([e]).get(e, [])
                    around[e] = {r: frozenset(kg.neighbors_batch([e], r).get(e, [])) for r in rels}
                for k in range(1, len(c.path)):
                    middle = walker.reach(a, c.path[:k])
                    if not middle:
                        continue
                    for r, linked in around[e].items():
                        hit = middle & linked
                        if not hit:
                            continue
                        nodes = walker.reach(a, c.path[k:], start=hit)
                        if nodes and nodes != ends:  # the named node must matter
                            base(QueryPlan([a], [list(c.path)], via=Via(k, inverse(r), e)), nodes, _log(c.score))


class AttributeSchema:
    """Which relations of a KG are attributes (most of their targets read as numbers, years or
    dates: by id, else by label), learnt from the first entities seen with each relation and kept
    for every later question (one per KG: the pipeline's, or supervision's)."""

    def __init__(self, kg, sample: int = 20):
        self.kg, self.sample = kg, sample
        self.known: dict[str, bool] = {}
        self.by_label: set[str] = set()  # attributes whose values are read from their targets' labels

    def check(self, relations, entities: Sequence[str]) -> list[str]:
        todo = [r for r in relations if r not in self.known]
        few = list(entities)[: self.sample]
        for r in todo:
            targets = sorted({t for ts in self.kg.neighbors_batch(few, r).values() for t in ts})[: self.sample]
            if not targets:
                continue  # not decided yet: none of these entities has it
            direct = sum(literal_value(t) is not None for t in targets)
            if direct * 2 >= len(targets):
                self.known[r] = True
                continue
            labels = self.kg.labels(targets)
            self.known[r] = sum(literal_value(labels.get(t)) is not None for t in targets) * 2 >= len(targets)
            if self.known[r]:
                self.by_label.add(r)
        return [r for r in relations if self.known.get(r)]


class _AttributeTable:
    """Numeric attribute values of the question's entities: relation -> {entity: [values]}, each
    entity's attributes read once."""

    def __init__(self, kg, lim: PlanLimits, schema: AttributeSchema):
        self.kg, self.lim, self.schema = kg, lim, schema
        self.values: dict[str, dict[str, list[float]]] = {}
        self.read: set[str] = set()  # entities whose attributes are in `values`

    def of(self, entities: frozenset) -> dict[str, dict[str, list[float]]]:
        todo = sorted(set(entities) - self.read)
        if todo:
            rels = sorted({r for rs in self.kg.relations_batch(todo).values() for r in rs})
            for r in self.schema.check(rels, todo):
                found = self.kg.neighbors_batch(todo, r)
                targets = sorted({t for ts in found.values() for t in ts})
                parsed = {t: literal_value(t) for t in targets}
                if r in self.schema.by_label:
                    labels = self.kg.labels([t for t in targets if parsed[t] is None])
                    parsed.update({t: literal_value(labels.get(t)) for t, v in parsed.items() if v is None})
                table = self.values.setdefault(r, {})
                for e, ts in found.items():
                    nums = [parsed[t] for t in ts if parsed.get(t) is not None]
                    if nums:
                        table[e] = nums
            self.read |= set(todo)
        have = []
        for r, table in self.values.items():
            # from the smaller side: a hub's thousands of results against an attribute a few have
            mine = ({e: v for e, v in table.items() if e in entities} if len(table) < len(entities) else
                    {e: table[e] for e in entities if e in table})
            if mine:
                have.append((-len(mine), r, mine))
        return {r: mine for _, r, mine in sorted(have)[: self.lim.max_attributes]}


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
    (rra.text.normalize_answer: ids, a literal node as its value, "7", "yes"). `gold` may be given
    already normalised, as a set."""
    want = gold if isinstance(gold, (set, frozenset)) else {normalize_answer(g) for g in gold}
    if not want or len(set(answers)) < len(want):
        return False
    return {_normal(a) for a in answers} == want


@lru_cache(maxsize=200_000)
def _normal(x: str) -> str:
    return normalize_answer(x)
