"""What the in-memory backends share: labels and lookups by name, relations and neighbours, paths
and the triples around an entity, written once over three primitives a backend gives (which ids it
holds, an entity's outgoing and incoming edges). `NetworkXGraph` (one large KG) and `DictGraph`
(a graph per question) differ only in how they store the edges, so they answer alike by
construction; the contract suite (tests/graph/test_contract.py) checks both.
"""
from __future__ import annotations

from abc import abstractmethod
from collections import Counter
from typing import Collection, Iterable, Sequence

from rra.graph.base import (INVERSE_PREFIX, RELATION_END_SAMPLE, Direction, GraphStats, KnowledgeGraph, MatchMode,
                            PathInstance, UnknownEntityError, base_relation, is_inverse, label_index, match_labels,
                            sample, walk_path)
from rra.graph.rdf import display, is_literal
from rra.records import Triple


class InMemoryGraph(KnowledgeGraph):
    """A KG held in this process. Subclasses store the edges and set `self._labels` (id -> name)
    and `self._casefold_index = None` (the name index, rebuilt on first lookup after a change)."""

    _labels: dict[str, str]
    _casefold_index: dict[str, list[tuple[str, str]]] | None

    # -- what a backend gives -------------------------------------------------------------
    @abstractmethod
    def _entity_ids(self) -> Collection[str]:
        """Every entity and value node (membership and iteration)."""

    @abstractmethod
    def _out_edges(self, entity: str) -> Iterable[tuple[str, str]]:
        """(relation, tail) of every fact whose head is `entity` (nothing for an unknown id)."""

    @abstractmethod
    def _in_edges(self, entity: str) -> Iterable[tuple[str, str]]:
        """(relation, head) of every fact whose tail is `entity` (nothing for an unknown id)."""

    # -- lookup -------------------------------------------------------------------------
    def has_entity(self, entity: str) -> bool:
        return entity in self._entity_ids()

    def _require(self, entity: str) -> None:
        if entity not in self._entity_ids():
            raise UnknownEntityError(entity)

    def set_labels(self, labels: dict[str, str]) -> None:
        self._labels.update(labels)
        self._casefold_index = None

    _aliases: dict[str, list[str]] = {}  # entity -> other names it is found by (set_aliases)

    def set_aliases(self, aliases: dict[str, list[str]]) -> None:
        """Other names `find_entities` finds each entity by (the loader's: the values of its alias
        predicates, rra.graph.rdf.ALIAS_PREDICATES); added to those set before."""
        merged = {e: list(names) for e, names in self._aliases.items()}
        for e, names in aliases.items():
            merged[e] = list(dict.fromkeys([*merged.get(e, []), *names]))
        self._aliases = merged
        self._casefold_index = None

    def all_aliases(self) -> dict[str, list[str]]:
        ids = self._entity_ids()
        return {e: list(names) for e, names in self._aliases.items() if e in ids}

    def all_names(self) -> dict[str, list[str]]:
        return {e: [self._labels.get(e) or display(e), *self._aliases.get(e, [])]
                for e in self._entity_ids() if not is_literal(e)}

    def label(self, entity: str) -> str:
        self._require(entity)
        return self._labels.get(entity) or display(entity)

    def labels(self, entities: Iterable[str]) -> dict[str, str]:
        # a literal node reads as its value ("1985"^^xsd:gYear -> 1985), as on the SPARQL backends
        ids = self._entity_ids()
        return {e: self._labels.get(e) or display(e) for e in entities if e in ids}

    def _index(self) -> dict[str, list[str]]:
        if self._casefold_index is None:
            # values are not found by name (no label in a store)
            names = (e for e in self._entity_ids() if not (e[:1] == '"' and is_literal(e)))
            ids = self._entity_ids()
            self._casefold_index = label_index(names, self._labels,
                                               {e: a for e, a in self._aliases.items() if e in ids})
        return self._casefold_index

    def relation_labels(self, relations: Iterable[str]) -> dict[str, str]:
        # the loader keeps every label-predicate subject, property IRIs included
        return {r: self._labels[r] for r in relations if r in self._labels}

    def find_entities(self, text: str, mode: MatchMode = "exact", limit: int = 10) -> list[str]:
        return match_labels(self._index(), text, mode, limit)

    # -- structure ----------------------------------------------------------------------
    def relations(self, entity: str, direction: Direction = "both") -> list[str]:
        self._require(entity)
        rels: set[str] = set()
        if direction in ("out", "both"):
            rels.update(r for r, _ in self._out_edges(entity))
        if direction in ("in", "both"):
            rels.update("^" + r for r, _ in self._in_edges(entity))
        return sorted(rels)

    def neighbors(self, entity: str, relation: str) -> list[str]:
        rel = base_relation(relation)
        edges = self._in_edges(entity) if is_inverse(relation) else self._out_edges(entity)
        return sorted({n for r, n in edges if r == rel})

    def neighbors_batch(self, entities: Sequence[str], relation: str) -> dict[str, list[str]]:
        return {e: self.neighbors(e, relation) for e in entities}

    def follow_path(self, entity: str, path: Sequence[str], limit: int | None = None) -> list[PathInstance]:
        return walk_path(self, entity, path, limit)

    def follow_path_batch(self, entities: Sequence[str], path: Sequence[str],
                          limit: int | None = None) -> dict[str, list[PathInstance]]:
        return {e: walk_path(self, e, path, limit) if self.has_entity(e) else [] for e in dict.fromkeys(entities)}

    def triples(self, entity: str, limit: int | None = None, seed: int | None = None,
                direction: Direction = "both") -> list[Triple]:
        self._require(entity)
        out: list[Triple] = []
        if direction in ("out", "both"):
            out += [Triple(entity, r, t) for r, t in self._out_edges(entity)]
        if direction in ("in", "both"):
            out += [Triple(h, r, entity) for r, h in self._in_edges(entity)]
        return sample(sorted(set(out)), limit, seed)

    def stats(self) -> GraphStats:
        rels = Counter(t.relation for t in self.all_triples())
        return GraphStats(len(self._entity_ids()), sum(rels.values()), dict(rels.most_common()))

    def relation_types(self) -> list[str]:
        # kept until the next add_triples: a training's setup asks three times, and each pass reads
        # every fact (2 s at 1e6 triples)
        known = self.__dict__.get("_relation_types")
        if known is None:
            known = self._relation_types = sorted({t.relation for t in self.all_triples()})
        return list(known)

    def relation_ends(self, relations: Sequence[str], limit: int = RELATION_END_SAMPLE) -> dict[str, list[str]]:
        # every relation's ends in one pass, kept: the scorer asks again for each batch of new relations
        index = self.__dict__.setdefault("_end_index", {})
        if limit not in index:
            rels = self.relation_types()
            index[limit] = KnowledgeGraph.relation_ends(self, rels + [INVERSE_PREFIX + r for r in rels], limit)
        return {r: list(index[limit].get(r, ())) for r in dict.fromkeys(relations)}
