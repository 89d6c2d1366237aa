"""Embedded SPARQL backend on a pyoxigraph `Store`, in memory or on disk.

Building goes through N-Triples text and Oxigraph's bulk loader (the fast path: MetaQA's 134k
triples load in about a second); queries are the shared ones of queries.py.
"""
from __future__ import annotations

from pathlib import Path
from typing import Collection, Iterable, Sequence

import pyoxigraph as ox

from rra.graph.base import GraphError
from rra.graph.rdf import (DEFAULT_ENTITY_BASE, DEFAULT_RELATION_BASE, RDFS_LABEL, RdfMapping, graph_iris,
                           is_literal, ntriples_text)
from rra.graph.sparql_backed import Row, SparqlBackedGraph
from rra.records import Triple


def _term(t) -> tuple | None:
    if t is None:
        return None
    if isinstance(t, ox.NamedNode):
        return ("iri", t.value)
    if isinstance(t, ox.Literal):  # with its datatype and language: "1985"^^xsd:gYear is a value
        return ("literal", t.value, t.datatype.value, t.language)
    return ("bnode", t.value)


class OxigraphGraph(SparqlBackedGraph):
    names_in_memory = True  # the store lives in this process: case-insensitive lookups from one scan

    def __init__(
        self,
        store: ox.Store | None = None,
        path: str | Path | None = None,
        mapping: RdfMapping | None = None,
        entity_base: str = DEFAULT_ENTITY_BASE,
        relation_base: str = DEFAULT_RELATION_BASE,
        label_predicate: str = RDFS_LABEL,
        batch_size: int = 500,
        graph_iri: str | Sequence[str] | None = None,
    ):
        if store is None:
            store = ox.Store(str(path)) if path is not None else ox.Store()
        self.store = store
        self.mapping = mapping or RdfMapping(entity_base, relation_base, label_predicate)
        self.batch_size = batch_size
        # Named graphs: every query reads only these (their union); loading writes to the first.
        self.graph_iris = graph_iris(graph_iri)
        self._graphs = [ox.NamedNode(g) for g in self.graph_iris] or None

    @classmethod
    def from_triples(
        cls,
        triples: Iterable[Triple],
        labels: dict[str, str] | None = None,
        path: str | Path | None = None,
        other_names: dict[str, list[str]] | None = None,
        **kwargs,
    ) -> "OxigraphGraph":
        kg = cls(path=path, **kwargs)
        kg.add_triples(triples, labels, other_names)
        return kg

    def add_triples(self, triples: Iterable[Triple], labels: dict[str, str] | None = None,
                    other_names: dict[str, list[str]] | None = None) -> None:
        """Bulk-load triples. Every entity keeps exactly one label triple: `labels` replace
        earlier ones, and an entity new to the store without a label is labelled by its id.
        `other_names`: what entities are found by besides their label (rra.graph.rdf.OTHER_NAME
        triples: the loader's other languages' labels and other naming predicates' values)."""
        triples = list(triples)
        fresh = not self.holds_triples()
        text = ntriples_text(triples, labels if fresh else None, self.mapping, label_all=fresh,
                             other_names=other_names)
        target = self._target()
        self.store.bulk_load(input=text.encode("utf-8"), format=ox.RdfFormat.N_TRIPLES, to_graph=target)
        self._names_changed()
        if not fresh:
            pred = ox.NamedNode(self.mapping.label_predicate)
            entities = {x for t in triples for x in (t.head, t.tail) if not is_literal(x)}  # values carry no label
            unlabelled = {
                x: x for x in entities
                if next(iter(self.store.quads_for_pattern(ox.NamedNode(self.mapping.entity_iri(x)), pred, None,
                                                          target)), None) is None
            }
            self.set_labels({**unlabelled, **(labels or {})}, present=entities)

    def _target(self) -> ox.NamedNode | ox.DefaultGraph:
        """The graph loading writes into: the first named graph, else the default graph."""
        return self._graphs[0] if self._graphs else ox.DefaultGraph()

    def holds_triples(self) -> bool:
        """Whether the graph loading writes into holds any triple (other graphs of the store aside)."""
        return next(iter(self.store.quads_for_pattern(None, None, None, self._target())), None) is not None

    def clear_target(self) -> None:
        """Empty the graph loading writes into; the store's other graphs stay."""
        self.store.clear_graph(self._target())
        self._names_changed()

    def set_labels(self, labels: dict[str, str], present: Collection[str] = frozenset()) -> None:
        """Replace the labels of these entities (only those in a triple, as NetworkX does).
        `present`: entities known to be in a triple (those just loaded), not asked about: a query
        each made adding a 100,000-triple file to a store that holds other triples 2.3x slower."""
        pred = ox.NamedNode(self.mapping.label_predicate)
        target = self._target()
        added = []
        for x, text in labels.items():
            if is_literal(x) or (x not in present and not self.has_entity(x)):  # a literal is its own name
                continue
            node = ox.NamedNode(self.mapping.entity_iri(x))
            for quad in list(self.store.quads_for_pattern(node, pred, None, target)):
                self.store.remove(quad)
            added.append(ox.Quad(node, pred, ox.Literal(text), target))
        self.store.extend(added)
        self._names_changed()

    def _select(self, query: str, variables: tuple[str, ...]) -> list[Row]:
        self.requests += 1
        try:
            solutions = self.store.query(query, default_graph=self._graphs)
            return [tuple(_term(s[v]) for v in variables) for s in solutions]
        except OSError as e:  # the on-disk store could not be read
            raise GraphError(f"Oxigraph store: {e}") from e

    def flush(self) -> None:
        self.store.flush()
