"""In-memory backend on a NetworkX MultiDiGraph (edge key = relation). The embedded default."""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

import networkx as nx

from rra.graph.base import (Direction, GraphStats, KnowledgeGraph, MatchMode, PathInstance, UnknownEntityError,
                            base_relation, is_inverse, label_index, match_labels, paused_gc, sample, walk_path)
from rra.graph.rdf import display, is_literal
from rra.records import Triple


class NetworkXGraph(KnowledgeGraph):
    load_report = None  # set by rra.graph.load_graph: what the loader read and skipped

    def __init__(self, triples: Iterable[Triple] = (), labels: dict[str, str] | None = None):
        self.g = nx.MultiDiGraph()
        self._labels: dict[str, str] = {}
        self._casefold_index: dict[str, list[str]] | None = None
        self.add_triples(triples)
        if labels:
            self._labels.update(labels)

    # -- building -----------------------------------------------------------------------
    def add_triples(self, triples: Iterable[Triple]) -> None:
        # Fill MultiDiGraph's adjacency dicts directly (succ[u][v][key] = attrs, pred[v][u] is the
        # same key dict): ~1.6x faster than add_edges_from, which the MetaQA load-time target needs.
        # The result is exactly what add_edges_from((h, t, r)) builds (tested).
        node, succ, pred = self.g._node, self.g._succ, self.g._pred
        with paused_gc():
            self._fill(triples, node, succ, pred)
        clear_cache = getattr(nx, "_clear_cache", None)  # networkx >= 3.3 caches derived data
        if clear_cache is not None:
            clear_cache(self.g)
        self._casefold_index = None

    @staticmethod
    def _fill(triples: Iterable[Triple], node: dict, succ: dict, pred: dict) -> None:
        for t in triples:
            h, r, x = t.head, t.relation, t.tail
            if h not in node:
                node[h], succ[h], pred[h] = {}, {}, {}
            if x not in node:
                node[x], succ[x], pred[x] = {}, {}, {}
            keys = succ[h].get(x)
            if keys is None:
                keys = succ[h][x] = {}
                pred[x][h] = keys
            keys.setdefault(r, {})

    def set_labels(self, labels: dict[str, str]) -> None:
        self._labels.update(labels)
        self._casefold_index = None

    # -- lookup -------------------------------------------------------------------------
    def has_entity(self, entity: str) -> bool:
        return entity in self.g

    def _require(self, entity: str) -> None:
        if entity not in self.g:
            raise UnknownEntityError(entity)

    def label(self, entity: str) -> str:
        self._require(entity)
        return self._labels.get(entity) or display(entity)

    def labels(self, entities: Iterable[str]) -> dict[str, str]:
        # a literal node reads as its value ("1985"^^xsd:gYear -> 1985), as on the SPARQL backends
        return {e: self._labels.get(e) or display(e) for e in entities if e in self.g}

    def _index(self) -> dict[str, list[str]]:
        if self._casefold_index is None:
            # values are not found by name (no label in a store)
            names = (e for e in self.g.nodes if not (e[:1] == '"' and is_literal(e)))
            self._casefold_index = label_index(names, self._labels)
        return self._casefold_index

    def find_entities(self, text: str, mode: MatchMode = "exact", limit: int = 10) -> list[str]:
        return match_labels(self._index(), self._labels, text, mode, limit)

    def relation_labels(self, relations: Iterable[str]) -> dict[str, str]:
        return {r: self._labels[r] for r in relations if r in self._labels}

    # -- structure ----------------------------------------------------------------------
    def relations(self, entity: str, direction: Direction = "both") -> list[str]:
        self._require(entity)
        rels: set[str] = set()
        if direction in ("out", "both"):
            for keys in self.g.succ[entity].values():
                rels.update(keys)
        if direction in ("in", "both"):
            for keys in self.g.pred[entity].values():
                rels.update("^" + k for k in keys)
        return sorted(rels)

    def neighbors(self, entity: str, relation: str) -> list[str]:
        if entity not in self.g:
            return []
        adj = self.g.pred[entity] if is_inverse(relation) else self.g.succ[entity]
        rel = base_relation(relation)
        return sorted(n for n, keys in adj.items() if rel in keys)

    def neighbors_batch(self, entities: Sequence[str], relation: str) -> dict[str, list[str]]:
        return {e: self.neighbors(e, relation) for e in entities}

    def follow_path(
        self, entity: str, path: Sequence[str], limit: int | None = None
    ) -> list[PathInstance]:
        return walk_path(self, entity, path, limit)

    def follow_path_batch(
        self, entities: Sequence[str], path: Sequence[str], limit: int | None = None
    ) -> dict[str, list[PathInstance]]:
        return {e: walk_path(self, e, path, limit) if self.has_entity(e) else [] for e in dict.fromkeys(entities)}

    def triples(
        self,
        entity: str,
        limit: int | None = None,
        seed: int | None = None,
        direction: Direction = "both",
    ) -> list[Triple]:
        self._require(entity)
        out: list[Triple] = []
        if direction in ("out", "both"):
            out += [Triple(entity, k, t) for t, keys in self.g.succ[entity].items() for k in keys]
        if direction in ("in", "both"):
            out += [Triple(h, k, entity) for h, keys in self.g.pred[entity].items() for k in keys]
        return sample(sorted(set(out)), limit, seed)

    def stats(self) -> GraphStats:
        rels = Counter(k for _, _, k in self.g.edges(keys=True))
        return GraphStats(self.g.number_of_nodes(), self.g.number_of_edges(), dict(rels.most_common()))

    def relation_types(self) -> list[str]:
        return sorted({k for _, _, k in self.g.edges(keys=True)})

    def all_triples(self) -> Iterable[Triple]:
        for h, t, k in self.g.edges(keys=True):
            yield Triple(h, k, t)
