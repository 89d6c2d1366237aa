"""The graph reads of plan enumeration (rra.plans.candidates), cached and made together.

A question's candidate plans read the graph around its anchors: the entity sets its chains reach
(`Walker`), the classes and value kinds of those sets (`KindCheck`), their numeric attributes
(`AttributeSchema`, `AttributeTable`) and the relations of the other entities it names.
`PlanReads` holds them for a batch of questions; its `prefetch` makes them for the whole batch at
once, a hop at a time, with one `neighbors_batch` per (hop, relation) and one `relations_batch`
per kind of read, so that on a SPARQL store a batch's plans cost about the requests one
question's would, not a request per walk per question. Whatever the prefetch did not foresee is
read when first needed, as before. All of it goes through the `KnowledgeGraph` protocol.
"""
from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Iterable, Sequence

from rra.graph.base import SUBCLASS_RELATIONS, TOP_CLASSES, TYPE_RELATIONS, base_relation, inverse
from rra.graph.literals import value_kind
from rra.graph.rdf import is_literal
from rra.plans.plan import literal_value
from rra.text.relations import relation_words


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
    # a chain of several relations that only walks back to its anchor is a candidate (the data has
    # questions answered by their own topic: datamodule, `plan_round_trips`)
    round_trips: bool = False


def neighbourhoods(kg, entities: Sequence[str], keep=None, direction: str = "both") -> dict[str, dict[str, list]]:
    """{entity: {relation: its neighbours over it}} over each entity's relations (those `keep`
    accepts): two batched reads for all of them (`relations_batch`, `neighbors_by_relation`)."""
    rels = kg.relations_batch(entities, direction)
    wanted: dict[str, list[str]] = defaultdict(list)
    for e in entities:
        for r in rels.get(e, ()):
            if keep is None or keep(r):
                wanted[r].append(e)
    out: dict[str, dict[str, list]] = {e: {} for e in entities}
    for r, of in (kg.neighbors_by_relation(dict(sorted(wanted.items()))) if wanted else {}).items():
        for e, ns in of.items():
            out[e][r] = ns
    return out


class Walker:
    """Entity sets reached along relation paths from an anchor, cached per (anchor, prefix) so a
    path continues from its prefix's walk; the dataset's answer rule (`semantics`) applied as
    retrieval applies it. None: a hub (more than `max_frontier` entities) on the way."""

    def __init__(self, kg, semantics=None, max_frontier: int = 5000):
        self.kg, self.semantics, self.max_frontier = kg, semantics, max_frontier
        # (anchor, prefix) -> the entities its last step reached, the anchor not yet dropped (None: a hub)
        self._raw: dict[tuple[str, tuple[str, ...]], set | None] = {}
        self._sets: dict[tuple[str, tuple[str, ...]], frozenset | None] = {}

    def reach(self, anchor: str, path: Sequence[str], start: frozenset | None = None,
              walked: int = 0) -> frozenset | None:
        """The set `path` reaches from `anchor` (or from `start`, a subset of what a prefix of `walked`
        relations reached)."""
        path = tuple(path)
        if start is None:
            key = (anchor, path)
            if key not in self._sets:
                self.prefill([key])
                raw = self._raw.get(key) if path else {anchor}
                self._sets[key] = None if raw is None else self._kept(anchor, raw, last=True, hops=len(path))
            return self._sets[key]
        frontier = start
        for k, relation in enumerate(path):
            found = self.kg.neighbors_batch(sorted(frontier), relation) if frontier else {}
            frontier = self._kept(anchor, {n for ns in found.values() for n in ns}, k + 1 == len(path),
                                  hops=walked + k + 1)
            if frontier is None:
                break
        return frontier

    def prefill(self, walks: Iterable[tuple[str, Sequence[str]]]) -> None:
        """Walk many (anchor, path) pairs together, a hop at a time: one `neighbors_batch` per
        (hop, relation) for all of them, each prefix walked once."""
        todo = {(a, tuple(p)) for a, p in walks if p}
        for k in range(max((len(p) for _, p in todo), default=0)):
            steps = {}
            for a, p in todo:
                if len(p) > k and (a, p[:k + 1]) not in self._raw:
                    steps[(a, p[:k + 1])] = self._frontier(a, p[:k])
            wanted: dict[str, set] = defaultdict(set)
            for (_, pre), start in steps.items():
                if start:
                    wanted[pre[-1]] |= start
            found = self.kg.neighbors_by_relation({r: sorted(es) for r, es in sorted(wanted.items())}) if wanted else {}
            for (a, pre), start in steps.items():
                if start is None:  # past a hub
                    self._raw[(a, pre)] = None
                    continue
                got = found.get(pre[-1], {})
                reached = {n for e in start for n in got.get(e, ())}
                # dropping the anchor takes at most one away: keep what `_kept` needs to decide
                self._raw[(a, pre)] = None if len(reached) > self.max_frontier + 1 else reached

    def _frontier(self, anchor: str, prefix: tuple[str, ...]) -> frozenset | None:
        """What a walk goes on from after `prefix` (walked already)."""
        if not prefix:
            return frozenset([anchor])
        raw = self._raw[(anchor, prefix)]
        return None if raw is None else self._kept(anchor, raw, last=False, hops=len(prefix))

    def _kept(self, anchor: str, reached: set, last: bool, hops: int) -> frozenset | None:
        sem = self.semantics
        if sem is not None and anchor in reached and sem.drops_topic(hops, last):
            reached = reached - {anchor}
        return None if len(reached) > self.max_frontier else frozenset(reached)


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
        reads it, rra.plans.text.plan_words): of a sample of its nodes, the most common class name (its
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
            found = neighbourhoods(self.kg, todo, lambda r: r in SUBCLASS_RELATIONS, "out")
            self._supers.update({c: frozenset().union(*found[c].values()) for c in todo})
        return {c: self._supers[c] for c in classes}

    def relation_kinds(self, relations: Sequence[str]) -> dict[str, str | None]:
        """What each relation leads to, as `kinds_of` names it, read from a sample of its far ends
        anywhere in the graph (`KnowledgeGraph.relation_ends`): `birthPlace` -> "city",
        `^author` -> "scholarly article". The relation scorer reads it beside the relation's name
        (rra.text.relations.RelationText.with_kinds): "hometown" then finds `birthPlace`, not `affiliation`."""
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

    def prefetch_ranges(self, asked: dict[str, set]) -> None:
        """`_in_range` of many (relation -> entities) at once, one read per relation, and the classes
        of the entities in range (what `could_be_among` reads next)."""
        todo = {r: sorted(e for e in es if (e, r) not in self._range) for r, es in sorted(asked.items())}
        todo = {r: es for r, es in todo.items() if es}
        found = self.kg.neighbors_by_relation({inverse(r): es for r, es in todo.items()}) if todo else {}
        hit = []
        for r, es in todo.items():
            for e in es:
                self._range[(e, r)] = bool(found[inverse(r)].get(e))
                if self._range[(e, r)]:
                    hit.append(e)
        if hit:
            self._types_of(hit)

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
            found = neighbourhoods(self.kg, todo, lambda r: r in TYPE_RELATIONS)
            self._types.update({e: {r: frozenset(c for c in classes if not is_literal(c)) for r, classes in of.items()}
                                for e, of in found.items()})
        return {n: self._types.get(n, {}) for n in nodes}


class AttributeSchema:
    """Which relations of a KG are attributes (most of their targets read as numbers, years or
    dates: by id, else by label), learnt from the first entities seen with each relation and kept
    for every later question (one per KG: the pipeline's, or supervision's)."""

    def __init__(self, kg, sample: int = 20):
        self.kg, self.sample = kg, sample
        self.known: dict[str, bool] = {}
        self.by_label: set[str] = set()  # attributes whose values are read from their targets' labels

    def check(self, holders: dict[str, Sequence[str]]) -> list[str]:
        """Which of the relations (relation -> entities that have it) are attributes, deciding the
        new ones from the targets of their first `sample` entities (two batched reads for all)."""
        todo = {r: list(es)[: self.sample] for r, es in holders.items() if r not in self.known and es}
        found = self.kg.neighbors_by_relation(todo) if todo else {}
        targets = {r: sorted({t for ts in found.get(r, {}).values() for t in ts})[: self.sample] for r in todo}
        by_label = {r: ts for r, ts in targets.items()
                    if ts and sum(literal_value(t) is not None for t in ts) * 2 < len(ts)}
        labels = self.kg.labels(sorted({t for ts in by_label.values() for t in ts})) if by_label else {}
        for r, ts in targets.items():
            if not ts:
                continue  # not decided yet: none of these entities has it
            if r not in by_label:
                self.known[r] = True
                continue
            self.known[r] = sum(literal_value(labels.get(t)) is not None for t in ts) * 2 >= len(ts)
            if self.known[r]:
                self.by_label.add(r)
        return [r for r in holders if self.known.get(r)]


class AttributeTable:
    """Numeric attribute values of entities: relation -> {entity: [values]}, each entity's
    attributes read once (for a batch of questions where PlanReads.prefetch read them together)."""

    def __init__(self, kg, lim: PlanLimits, schema: AttributeSchema):
        self.kg, self.lim, self.schema = kg, lim, schema
        self.values: dict[str, dict[str, list[float]]] = {}
        self.done: set[str] = set()  # entities whose attributes are in `values`

    def read(self, entities) -> None:
        todo = sorted(set(entities) - self.done)
        if not todo:
            return
        rels = self.kg.relations_batch(todo)
        holders: dict[str, list[str]] = defaultdict(list)
        for e in todo:
            for r in rels.get(e, ()):
                holders[r].append(e)
        attributes = self.schema.check(dict(sorted(holders.items())))
        read = self.kg.neighbors_by_relation({r: holders[r] for r in attributes}) if attributes else {}
        named = sorted({t for r in attributes if r in self.schema.by_label for ts in read[r].values() for t in ts
                        if literal_value(t) is None})
        labels = self.kg.labels(named) if named else {}
        for r in attributes:
            found = read[r]
            targets = sorted({t for ts in found.values() for t in ts})
            parsed = {t: literal_value(t) for t in targets}
            if r in self.schema.by_label:
                parsed.update({t: literal_value(labels.get(t)) for t, v in parsed.items() if v is None})
            table = self.values.setdefault(r, {})
            for e, ts in found.items():
                nums = [parsed[t] for t in ts if parsed.get(t) is not None]
                if nums:
                    table[e] = nums
        self.done |= set(todo)

    def of(self, entities: frozenset) -> dict[str, dict[str, list[float]]]:
        """The attributes most of `entities` have (at most `max_attributes`): relation -> their values."""
        self.read(entities)
        have = []
        for r, table in self.values.items():
            # from the smaller side: a hub's thousands of results against an attribute a few have
            mine = ({e: v for e, v in table.items() if e in entities} if len(table) < len(entities) else
                    {e: table[e] for e in entities if e in table})
            if mine:
                have.append((-len(mine), r, mine))
        return {r: mine for _, r, mine in sorted(have)[: self.lim.max_attributes]}


class PlanReads:
    """Everything plan enumeration reads from the graph, for a batch of questions (the graph may
    change between batches): walks, classes, attributes, the relations around named entities."""

    def __init__(self, kg, semantics=None, limits: PlanLimits | None = None,
                 schema: AttributeSchema | None = None, kinds: KindCheck | None = None):
        self.kg, self.lim = kg, limits or PlanLimits()
        self.walker = Walker(kg, semantics, self.lim.max_frontier)
        self.kinds = kinds or KindCheck(kg)
        self.values = AttributeTable(kg, self.lim, schema or AttributeSchema(kg))
        self._around: dict[str, dict[str, frozenset]] = {}

    def around(self, entity: str) -> dict[str, frozenset]:
        """Every relation of `entity` (both directions) -> its neighbours over it."""
        self._read_around([entity])
        return self._around[entity]

    def _read_around(self, entities: Sequence[str]) -> None:
        todo = [e for e in dict.fromkeys(entities) if e not in self._around]
        if todo:
            self._around.update({e: {r: frozenset(ns) for r, ns in of.items()}
                                 for e, of in neighbourhoods(self.kg, todo).items()})

    def prefetch(self, questions: Sequence[tuple[Sequence[Chain], Sequence[str]]], read_kinds: bool = True) -> None:
        """Read together what enumerating the plans of each (chains, named entities) will read:
        the walks of each anchor's first `paths_per_anchor` chains, the classes and attributes of
        what they reach, whether the named entities can be at their far ends, and the relations
        around named entities that a chain of two or more relations may pass."""
        lim, walks, named_of = self.lim, [], []
        for chains, named in questions:
            anchors = list(dict.fromkeys(c.anchor for c in chains))[: lim.max_anchors]
            taken = Counter()
            for c in chains:
                if c.anchor in anchors and taken[c.anchor] < lim.paths_per_anchor:
                    taken[c.anchor] += 1
                    walks.append((c.anchor, c.path))
            named_of.append(list(dict.fromkeys(list(named) + anchors)))
        self.walker.prefill(walks)
        reached = [(a, p, self.walker.reach(a, p)) for a, p in walks]
        ends = [e for _, _, e in reached if e]
        if read_kinds:
            self.kinds.kinds_of(ends)
        self.values.read({n for e in ends if 2 <= len(e) <= lim.max_values for n in e})
        ranges, middle = defaultdict(set), set()
        for (chains, _), named in zip(questions, named_of):
            mine = {(c.anchor, tuple(c.path)) for c in chains}
            for a, p, e in reached:
                if (a, p) not in mine or not e:
                    continue
                for x in named:
                    if x != a and x not in e:
                        ranges[p[-1]].add(x)
                    if x != a and len(p) > 1:
                        middle.add(x)
        self.kinds.prefetch_ranges(ranges)
        self._read_around(sorted(middle))
