"""The graph layer's contract: one `KnowledgeGraph` protocol that every walker uses.

Relations are plain strings. A relation walked backwards is its own first-class relation,
written with a leading ``^`` as in SPARQL property paths: ``directed_by`` goes movie -> director,
``^directed_by`` goes director -> movie. Triples are always stored and returned in the KG's own
(forward) direction, so ``(Alien, directed_by, Ridley Scott)`` is the triple walked by both.
"""
from __future__ import annotations

import contextvars
import gc
import time
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterable, Literal, Sequence

from rra.graph.rdf import is_literal
from rra.records import Triple  # the graph layer's fact record (re-exported here)

INVERSE_PREFIX = "^"
RELATION_END_SAMPLE = 16  # nodes read per relation to name what it leads to (relation_ends)

Direction = Literal["out", "in", "both"]
# Relations whose objects are classes, as RDF, Wikidata and Freebase spell them.
TYPE_RELATIONS = frozenset({"rdf:type", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type", "type.object.type",
                            "P31", "wdt:P31", "http://www.wikidata.org/prop/direct/P31"})
# Relations from a class to a broader one, and classes every entity belongs to (they name nothing).
SUBCLASS_RELATIONS = frozenset({"rdfs:subClassOf", "http://www.w3.org/2000/01/rdf-schema#subClassOf", "P279",
                                "wdt:P279", "http://www.wikidata.org/prop/direct/P279"})
TOP_CLASSES = frozenset({"owl:Thing", "http://www.w3.org/2002/07/owl#Thing", "rdfs:Resource",
                         "http://www.w3.org/2000/01/rdf-schema#Resource", "http://schema.org/Thing",
                         "https://schema.org/Thing", "Q35120", "http://www.wikidata.org/entity/Q35120"})
MatchMode = Literal["exact", "casefold", "substring"]


def inverse(relation: str) -> str:
    """`r` <-> `^r`."""
    if relation.startswith(INVERSE_PREFIX):
        return relation[len(INVERSE_PREFIX):]
    return INVERSE_PREFIX + relation


def is_inverse(relation: str) -> bool:
    return relation.startswith(INVERSE_PREFIX)


def base_relation(relation: str) -> str:
    """The KG relation under a possibly inverted one: `^directed_by` -> `directed_by`."""
    return relation[len(INVERSE_PREFIX):] if is_inverse(relation) else relation


def step_triple(entity: str, relation: str, neighbor: str) -> Triple:
    """The KG triple crossed when walking `relation` (maybe inverse) from `entity` to `neighbor`."""
    if is_inverse(relation):
        return Triple(neighbor, base_relation(relation), entity)
    return Triple(entity, relation, neighbor)


@dataclass
class PathInstance:
    """One instantiation of a relation path from a start entity: the entities visited and
    the triples crossed, in walk order."""

    entities: list[str]
    triples: list[Triple]

    @property
    def end(self) -> str:
        return self.entities[-1]


@dataclass
class GraphStats:
    entities: int
    triples: int
    relations: dict[str, int] = field(default_factory=dict)


class UnknownEntityError(KeyError):
    """An entity id that the graph does not hold."""

    def __init__(self, entity: str):
        super().__init__(entity)
        self.entity = entity

    def __str__(self) -> str:
        return f"unknown entity {self.entity!r}: not in the knowledge graph"


class GraphError(RuntimeError):
    """A KG backend could not answer: endpoint down or timed out, a refused query, a malformed
    result. Methods record it per question as `graph_error`; it never means "no such fact"."""


class GraphUnavailableError(GraphError):
    """The backend itself is unreachable (refused, reset, timed out, a non-SPARQL reply, or its circuit
    breaker is open): asking again at once, or piece by piece, cannot help, so callers that would
    fall back to smaller requests on a `GraphError` give up on this one instead."""


class KnowledgeGraph(ABC):
    """What every backend (NetworkX, embedded Oxigraph, SPARQL endpoint) answers, identically.
    A backend subclasses it and writes every abstract query; the batched lookups and `close` have
    defaults that a backend may override."""

    @abstractmethod
    def has_entity(self, entity: str) -> bool: ...

    @abstractmethod
    def find_entities(self, text: str, mode: MatchMode = "exact", limit: int = 10) -> list[str]:
        """Entity ids whose label matches `text` (exact, case-insensitive, or case-insensitive
        substring), at most `limit`, sorted by (label length, label) so short exact-ish hits come first."""

    @abstractmethod
    def label(self, entity: str) -> str: ...

    @abstractmethod
    def labels(self, entities: Iterable[str]) -> dict[str, str]: ...

    @abstractmethod
    def relations(self, entity: str, direction: Direction = "both") -> list[str]:
        """Distinct relations around `entity`, sorted; incoming ones carry the `^` prefix."""

    @abstractmethod
    def neighbors(self, entity: str, relation: str) -> list[str]:
        """Entities reached from `entity` over `relation` (`^r` walks r backwards), sorted."""

    @abstractmethod
    def neighbors_batch(self, entities: Sequence[str], relation: str) -> dict[str, list[str]]:
        """`neighbors` for many entities at once (one query on SPARQL backends)."""

    @abstractmethod
    def follow_path(
        self, entity: str, path: Sequence[str], limit: int | None = None
    ) -> list[PathInstance]:
        """All instantiations of `path` from `entity` (at most `limit`, in a deterministic order)."""

    @abstractmethod
    def follow_path_batch(
        self, entities: Sequence[str], path: Sequence[str], limit: int | None = None
    ) -> dict[str, list[PathInstance]]:
        """`follow_path` from many entities at once: one query per path on SPARQL backends, so a
        batch of questions costs a request per distinct predicted path, not per question.
        An entity the KG does not hold maps to []."""

    @abstractmethod
    def triples(
        self,
        entity: str,
        limit: int | None = None,
        seed: int | None = None,
        direction: Direction = "both",
    ) -> list[Triple]:
        """Triples around `entity`, sorted; if more than `limit`, a seeded random sample of `limit`."""

    @abstractmethod
    def stats(self) -> GraphStats: ...

    @abstractmethod
    def relation_types(self) -> list[str]:
        """All (forward) relations of the KG, sorted."""

    @abstractmethod
    def all_triples(self) -> Iterable[Triple]:
        """Every fact of the KG (label triples excluded), in no set order: for whole-graph work such
        as the vector baseline's index or silver rewriter pairs."""

    # Resources: every backend is a context manager; only those holding a connection close anything.
    def close(self) -> None:
        """Release what the backend holds (an HTTP client); nothing by default."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # Batched lookups: part of the contract with a one-by-one default, so callers have one code
    # path; SPARQL backends override them with one query per batch.
    def follow_paths_batch(
        self, requests: Sequence[tuple[Sequence[str], Sequence[str]]], limit: int | None = None
    ) -> list[dict[str, list[PathInstance]]]:
        """Several (start entities, path) requests at once, each answered as `follow_path_batch`
        would (SPARQL backends: one UNION query for all of them)."""
        return [self.follow_path_batch(list(starts), list(path), limit=limit) for starts, path in requests]

    def neighbors_by_relation(self, wanted: dict[str, Sequence[str]]) -> dict[str, dict[str, list[str]]]:
        """`neighbors_batch` of several relations at once: {relation: entities} -> {relation:
        {entity: neighbours}} (SPARQL backends: one UNION query for all of them)."""
        return {r: self.neighbors_batch(list(es), r) for r, es in wanted.items()}

    def find_entities_batch(self, texts: Sequence[str], mode: MatchMode = "exact",
                            limit: int = 10) -> dict[str, list[str]]:
        """`find_entities` for many texts, keyed by text (SPARQL backends: one query per batch)."""
        return {t: self.find_entities(t, mode, limit) for t in dict.fromkeys(texts)}

    def relations_batch(self, entities: Sequence[str], direction: Direction = "both") -> dict[str, list[str]]:
        """`relations` of many entities at once (SPARQL backends: one query per chunk): what a
        relation scorer chooses from at a path's frontier. An entity the KG does not hold maps to []."""
        return {e: self.relations(e, direction) if self.has_entity(e) else [] for e in dict.fromkeys(entities)}

    def relation_ends(self, relations: Sequence[str], limit: int = RELATION_END_SAMPLE) -> dict[str, list[str]]:
        """For each relation (`^r`: r walked backwards), the first `limit` distinct nodes at its
        far end (the tails of r's facts; for `^r`, their heads), sorted: what a relation leads to,
        so its results can be named ("city", "year": rra.plans.reads.KindCheck.relation_kinds).
        Default: one pass over every fact (in-memory graphs), the `limit` smallest ids of each;
        SPARQL backends ask the store for a bounded sample of each relation instead."""
        out: dict[str, set[str]] = {r: set() for r in dict.fromkeys(relations)}
        top: dict[str, str] = {}  # the largest id kept, once a relation holds `limit`
        wanted = {base_relation(r) for r in out}
        for t in self.all_triples():
            if t.relation not in wanted:
                continue
            for r, node in ((t.relation, t.tail), (INVERSE_PREFIX + t.relation, t.head)):
                ends = out.get(r)
                if ends is None or node in ends or (r in top and node > top[r]):
                    continue
                ends.add(node)  # the `limit` smallest are kept: the same sample whatever the fact order
                if len(ends) > limit:
                    ends.remove(max(ends))
                if len(ends) >= limit:
                    top[r] = max(ends)
        return {r: sorted(ends) for r, ends in out.items()}

    def all_aliases(self) -> dict[str, list[str]]:
        """Every entity's other names, which `find_entities` finds it by beside its label: the values
        of its alias predicates (skos:altLabel "JFK"), its labels in other languages, other naming
        predicates' values. For whole-graph work such as the fuzzy name index (rra.linking.FuzzyIndex).
        Default: none."""
        return {}

    def all_names(self) -> dict[str, list[str]]:
        """Every node's names: its label first (its id's reading where it has none), then its other
        names (`all_aliases`). What the fuzzy name index (rra.linking.FuzzyIndex) reads. Default: the
        nodes of `all_triples`, their `labels` and `all_aliases`; a store answers from its naming
        triples instead of sending every fact."""
        nodes = sorted({x for t in self.all_triples() for x in (t.head, t.tail) if not is_literal(x)})
        other = self.all_aliases()
        return {node: [label, *other.get(node, [])] for node, label in self.labels(nodes).items()}

    def relation_labels(self, relations: Iterable[str]) -> dict[str, str]:
        """Names the KG gives its relations (e.g. an `rdfs:label` on a property IRI), keyed by
        forward relation id; relations without one are left out. What an encoder reads of a relation
        whose id is opaque (`P50`, an IRI). Default: none."""
        return {}


def sample(items: list, limit: int | None, seed: int | None) -> list:
    """Deterministic cap: keep all when under `limit`, else a seeded sample kept in input order."""
    import random

    if limit is None or len(items) <= limit:
        return items
    idx = sorted(random.Random(seed if seed is not None else 0).sample(range(len(items)), limit))
    return [items[i] for i in idx]


def label_index(entities: Iterable[str], labels: dict[str, str],
                aliases: dict[str, list[str]] | None = None) -> dict[str, list[tuple[str, str]]]:
    """Casefolded name -> (entity id, name) pairs: each entity by its label (its id where it has
    none), and by its aliases. What the in-memory backends' `find_entities` looks text up in (built
    once, dropped when labels or facts change)."""
    idx: dict[str, list[tuple[str, str]]] = {}
    for e in entities:
        name = labels.get(e, e)
        idx.setdefault(name.casefold(), []).append((e, name))
    for e, names in (aliases or {}).items():
        for name in names:
            idx.setdefault(name.casefold(), []).append((e, name))
    return idx


def match_labels(index: dict[str, list[tuple[str, str]]], text: str, mode: MatchMode, limit: int) -> list[str]:
    """`find_entities` over a `label_index`, shared by the in-memory backends so they rank alike:
    the entities with a name that matches, by (length, name, id) of each one's best matching name,
    as the SPARQL backends rank them."""
    needle = text.casefold()
    if mode == "exact":
        pairs = [(e, n) for e, n in index.get(needle, []) if n == text]
    elif mode == "casefold":
        pairs = index.get(needle, [])
    elif mode == "substring":
        pairs = [p for key, found in index.items() if needle in key for p in found]
    else:
        raise ValueError(f"unknown match mode {mode!r}; expected exact, casefold or substring")
    best: dict[str, str] = {}
    for e, name in pairs:
        if e not in best or (len(name), name) < (len(best[e]), best[e]):
            best[e] = name
    return sorted(best, key=lambda e: (len(best[e]), best[e], e))[:limit]


def walk_path(
    kg: KnowledgeGraph, entity: str, path: Sequence[str], limit: int | None = None
) -> list[PathInstance]:
    """Breadth-first instantiation of `path`, one `neighbors_batch` call per hop, so SPARQL
    backends send one query per hop instead of one per entity. Shared by every backend."""
    frontier = [PathInstance([entity], [])]
    for relation in path:
        check_time()  # a question past its time budget stops here (OverBudgetError)
        ends = sorted({p.end for p in frontier})
        nbrs = kg.neighbors_batch(ends, relation)
        grown: list[PathInstance] = []
        for p in frontier:
            for n in nbrs.get(p.end, []):
                if limit is not None and len(grown) >= limit:
                    # Bounded while walking, not after: a walk through a hub would otherwise build
                    # every instance first (3 hops through 100,000 neighbours: millions). The kept
                    # ones are the first `limit` in walk order, as the cut after the walk kept.
                    note(f"path instances capped at {limit} ({' / '.join(path)} from {entity})")
                    break
                grown.append(
                    PathInstance(p.entities + [n], p.triples + [step_triple(p.end, relation, n)])
                )
            else:
                continue
            break
        frontier = grown
        if not frontier:
            return []
    if not path:  # an empty path instantiates nothing
        return []
    return frontier


@contextmanager
def paused_gc():
    """Pause the cyclic garbage collector while building a big KG. Millions of new, acyclic
    objects (triples, adjacency dicts) otherwise trigger repeated full collections that make the
    MetaQA load ~1.8x slower; the previous GC state is restored afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()



# -- per-question work bounds --------------------------------------------------------------------
# How much work one question may cost, on every backend: a hub (an entity with 100,000 neighbours)
# must cost its question a bounded time and memory, never the run. The evaluation loop and the
# server open a `question_budget(max_seconds)` around each question (or batch). Inside it the
# graph layer's expensive loops call `check_time()` (a walk, before each hop) and `note(...)` where
# they cut work short (a walk stops growing at its instance limit), so the prediction says which
# bound it hit (`extra["bounds"]`), never silently. Past the deadline `check_time()` raises
# `OverBudgetError` (a GraphError: every method records a graph failure as its question's and goes
# on); the loop then marks the question `over_budget`. Outside a budget nothing is checked.
class OverBudgetError(GraphError):
    """The question used up its time budget (`bounds.max_seconds`)."""


@dataclass
class QuestionBudget:
    deadline: float | None  # time.monotonic() value, None: no time limit
    seconds: float | None
    hits: list[str] = field(default_factory=list)  # the bounds this question hit, in words
    expired: bool = False

    def note(self, what: str) -> None:
        if what not in self.hits and len(self.hits) < 20:
            self.hits.append(what)


_CURRENT: contextvars.ContextVar[QuestionBudget | None] = contextvars.ContextVar("rra_budget", default=None)


@contextmanager
def question_budget(max_seconds: float | None = None):
    """A budget for the work inside (this thread and the context it runs in)."""
    budget = QuestionBudget(time.monotonic() + max_seconds if max_seconds else None, max_seconds)
    token = _CURRENT.set(budget)
    try:
        yield budget
    finally:
        _CURRENT.reset(token)


def current() -> QuestionBudget | None:
    return _CURRENT.get()


def check_time() -> None:
    """Raise OverBudgetError once the current question's deadline has passed."""
    budget = _CURRENT.get()
    if budget is not None and budget.deadline is not None and time.monotonic() > budget.deadline:
        if not budget.expired:
            budget.expired = True
            budget.note(f"time budget of {budget.seconds:g} s used up")
        raise OverBudgetError(f"the question used up its time budget of {budget.seconds:g} s "
                              "(bounds.max_seconds); answered with what was found before it")


def note(what: str) -> None:
    """Record that the current question hit a bound (no-op outside a budget)."""
    budget = _CURRENT.get()
    if budget is not None:
        budget.note(what)


# -- reading ----------------------------------------------------------------------------
