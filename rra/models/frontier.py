"""What the graph offers a path's next step: the relations around the entities a relation prefix
reaches from a question's topic entity. Both path heads search through it: the relation scorer
chooses among these relations only (graph-constrained search), the classifier masks its vocabulary
to them (`retriever.graph_pruning`).

Everything goes through the `KnowledgeGraph` protocol (`neighbors_batch`, `relations_batch`), so it
runs alike on every backend; results are kept per (topic, prefix) for one search. A frontier above
`max_frontier` entities (a hub: a country, a year) is not expanded: its step may then choose among
every relation of the KG (`fallback`), and the path is checked when it is walked.
"""
from __future__ import annotations

from typing import Callable, Sequence

from rra.graph.base import INVERSE_PREFIX, inverse

MAX_FRONTIER = 5000


def both_directions(relations: Sequence[str]) -> list[str]:
    """Forward relations and their inverses (a KG's `relation_types()` lists forward ones only)."""
    forward = sorted({r for r in relations if not r.startswith(INVERSE_PREFIX)})
    return forward + [inverse(r) for r in forward]


class Frontier:
    """Per query i (topic `topics[i]`, None when unknown): `relations(i, prefix)` -> the relations
    with an instance from where `prefix` leads, sorted; None when that cannot be said (no topic, a
    frontier too large): the caller then uses its fallback."""

    def __init__(self, kg, topics: Sequence[str | None], max_frontier: int = MAX_FRONTIER):
        self.kg, self.topics, self.max_frontier = kg, list(topics), max_frontier
        self._ends: dict[tuple[str, tuple[str, ...]], set[str] | None] = {}
        self._rels: dict[tuple[str, tuple[str, ...]], list[str] | None] = {}
        self._entity_rels: dict[str, list[str]] = {}  # relations around each entity fetched so far
        self.capped = 0  # frontiers left unexpanded because they were too large

    def ends(self, topic: str, prefix: tuple[str, ...]) -> set[str] | None:
        key = (topic, prefix)
        if key not in self._ends:
            if not prefix:
                self._ends[key] = {topic} if self.kg.has_entity(topic) else set()
            else:
                before = self.ends(topic, prefix[:-1])
                if before is None:
                    self._ends[key] = None
                else:
                    found = self.kg.neighbors_batch(sorted(before), prefix[-1]) if before else {}
                    reached = {e for ends in found.values() for e in ends}
                    if len(reached) > self.max_frontier:
                        self.capped += 1
                        reached = None
                    self._ends[key] = reached
        return self._ends[key]

    def relations(self, i: int, prefix: Sequence[str]) -> list[str] | None:
        topic = self.topics[i] if i < len(self.topics) else None
        if not topic:
            return None
        key = (topic, tuple(prefix))
        if key not in self._rels:
            ends = self.ends(topic, key[1])
            if ends is None:
                self._rels[key] = None
            else:
                found = self.kg.relations_batch(sorted(ends)) if ends else {}
                self._rels[key] = sorted({r for rels in found.values() for r in rels})
        return self._rels[key]

    def prepare(self, items: Sequence[tuple[int, Sequence[str]]]) -> None:
        """Fetch what `relations` will be asked for these (query, prefix) items in a few batched
        calls: one `relations_batch` for the new topics, one `neighbors_batch` per distinct last
        relation (over every prefix ending in it), one `relations_batch` over every new frontier
        entity. On a SPARQL store a search round of a whole batch of questions is then a handful
        of queries, not a few per question."""
        wanted = sorted({(self.topics[i], tuple(p)) for i, p in items
                         if i < len(self.topics) and self.topics[i] and (self.topics[i], tuple(p)) not in self._rels})
        if not wanted:
            return
        starts = sorted({t for t, _ in wanted} - {t for (t, p) in self._ends if not p})
        if starts:  # an id is an entity of the KG exactly when some triple holds it
            found = self.kg.relations_batch(starts)
            self._entity_rels.update(found)
            for t in starts:
                self._ends[(t, ())] = {t} if found.get(t) else set()
        for topic, prefix in wanted:  # earlier steps are known from the last round; else one by one
            if prefix and (topic, prefix[:-1]) not in self._ends:
                self.ends(topic, prefix[:-1])
        by_relation: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        for topic, prefix in wanted:
            if prefix and (topic, prefix) not in self._ends:
                by_relation.setdefault(prefix[-1], []).append((topic, prefix))
        for relation, keys in by_relation.items():
            befores = {k: self._ends[(k[0], k[1][:-1])] for k in keys}
            entities = sorted({e for b in befores.values() if b for e in b})
            found = self.kg.neighbors_batch(entities, relation) if entities else {}
            for key, before in befores.items():
                reached = None if before is None else {n for e in before for n in found.get(e, ())}
                if reached is not None and len(reached) > self.max_frontier:
                    self.capped += 1
                    reached = None
                self._ends[key] = reached
        todo = sorted({e for key in wanted for e in (self._ends.get(key) or ())} - set(self._entity_rels))
        if todo:
            self._entity_rels.update(self.kg.relations_batch(todo))
        for key in wanted:
            ends = self._ends.get(key)
            self._rels[key] = None if ends is None else sorted(
                {r for e in ends for r in self._entity_rels.get(e, ())})

    def allowed_ids(self, index: dict[str, int]) -> Callable:
        """The classifier's `allowed(items)` for beam search: relation ids (of `index`) per
        (query, id prefix); the prefix ids are mapped back through `names`."""
        names = {i: r for r, i in index.items()}

        def allowed(items):
            out = []
            for i, prefix in items:
                rels = self.relations(i, tuple(names[r] for r in prefix))
                out.append(None if rels is None else {index[r] for r in rels if r in index})
            return out

        return allowed


TRANSITION_SAMPLE = 256  # far ends of a walked relation read to learn what may follow it


class Transitions:
    """Which relations a path may walk after a relation, as the graph's facts say. `rare(r, cands)`
    are the candidates c that barely touch r in both directions: under `floor` of a sample of r's far
    ends hold c, and under `floor` of a sample of the entities that hold c are far ends of r
    (`relation_ends` of r and of c's inverse); `keep(r, cands)` the others. A graph that keys its
    nodes by name merges an actor with a film of the same title, so the actors of a film offer
    `starred_actors` forward (0.4% of that relation's far ends hold it, and none of the films are
    actors in the sample), and a scorer unsure of a step walked that stray edge. One direction alone is not enough: from a class,
    `^rdf:type` reaches every typed entity, under 1% of which have a capital, but every entity with a
    capital is typed. A relation whose far ends number no more than the sample is read whole. Where
    the backend gives no far ends (per-question graphs), nothing is left out. Kept per graph for the
    retriever's life."""

    def __init__(self, kg, floor: float = 0.01, sample: int = TRANSITION_SAMPLE):
        self.kg, self.floor, self.sample = kg, floor, sample
        self._share: dict[str, dict[str, float] | None] = {}

    def prepare(self, walked, candidates=()) -> None:
        """Read what `rare` needs for these walked relations and candidates: the far ends of each
        walked relation and of each candidate's inverse, and the relations those ends hold, in one
        `relation_ends` and one `relations_batch` call."""
        if self.floor <= 0:
            return
        todo = sorted({r for r in (*walked, *map(inverse, candidates)) if r not in self._share})
        if not todo:
            return
        ends = self.kg.relation_ends(todo, self.sample)
        held = self.kg.relations_batch(sorted({e for es in ends.values() for e in es}))
        for r in todo:
            sample = ends.get(r) or []
            counts: dict[str, int] = {}
            for e in sample:
                for after in held.get(e, ()):
                    counts[after] = counts.get(after, 0) + 1
            self._share[r] = {a: c / len(sample) for a, c in counts.items()} if sample else None

    def rare(self, relation: str, candidates) -> set[str]:
        if self.floor <= 0:
            return set()
        self.prepare([relation], candidates)
        after = self._share.get(relation)
        if after is None:
            return set()

        def before(c: str) -> float:  # the share of c's holders that are far ends of `relation`
            holders = self._share.get(inverse(c))
            return 1.0 if holders is None else holders.get(inverse(relation), 0.0)

        return {c for c in candidates if after.get(c, 0.0) < self.floor and before(c) < self.floor}

    def keep(self, relation: str, candidates: list[str]) -> list[str]:
        """The candidates a path may walk after `relation`: all but the rare ones, unless every one is."""
        rare = self.rare(relation, candidates)
        return [c for c in candidates if c not in rare] if len(rare) < len(candidates) else candidates
