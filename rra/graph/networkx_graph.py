"""In-memory backend on a NetworkX MultiDiGraph (edge key = relation). The embedded default."""
from __future__ import annotations

from collections import Counter
from typing import Iterable

import networkx as nx

from rra.graph.base import GraphStats, paused_gc
from rra.graph.memory import InMemoryGraph
from rra.records import Triple


class NetworkXGraph(InMemoryGraph):
    load_report = None  # set by rra.graph.load_graph: what the loader read and skipped

    def __init__(self, triples: Iterable[Triple] = (), labels: dict[str, str] | None = None):
        self.g = nx.MultiDiGraph()
        self._labels: dict[str, str] = {}
        self._casefold_index: dict[str, list[tuple[str, str]]] | None = None
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
        self._end_index = {}  # relation_ends, rebuilt on first use after a change
        self._relation_types = None  # likewise relation_types

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

    # -- what InMemoryGraph reads -----------------------------------------------------------
    def _entity_ids(self):
        return self.g  # a NetworkX graph: `in` and iteration over its nodes

    def _out_edges(self, entity: str) -> Iterable[tuple[str, str]]:
        if entity not in self.g:
            return ()
        return ((k, t) for t, keys in self.g.succ[entity].items() for k in keys)

    def _in_edges(self, entity: str) -> Iterable[tuple[str, str]]:
        if entity not in self.g:
            return ()
        return ((k, h) for h, keys in self.g.pred[entity].items() for k in keys)

    def stats(self) -> GraphStats:
        rels = Counter(k for _, _, k in self.g.edges(keys=True))
        return GraphStats(self.g.number_of_nodes(), self.g.number_of_edges(), dict(rels.most_common()))

    def all_triples(self) -> Iterable[Triple]:
        for h, t, k in self.g.edges(keys=True):
            yield Triple(h, k, t)
