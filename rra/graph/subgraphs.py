"""Per-question graphs: benchmarks that ship one small subgraph with each question (RoG's and
NSM / GNN-RAG's WebQSP and CWQ files) answered through the same `KnowledgeGraph` protocol.

`QuestionGraphs` is the backend (conf/graph/subgraphs.yaml). The dataset's readers register each
question's subgraph with it (`add(key, load)`: the triples, or a function that reads them, so a
whole benchmark is never held as graphs at once); a question's graph is built on first use (CVTs
folded, `rra.graph.cvt`) into a `DictGraph` and kept in a small LRU cache. Every protocol
call goes to the graph of the question selected with

    with kg.scope(example):           # example.extra["subgraph"] names its subgraph
        method.answer(example)

which the evaluation loop and KG supervision do for every question, so RRA, the graph scorer,
the rewriters and every baseline run unchanged, each question on its own graph. A call with no
question selected is a GraphError that says so. `relation_types()` is the relation vocabulary:
the union over the questions of `relations_from` (the data config's training split), else (no
training split, as at inference on a test file alone) over every question registered so far.
"""
from __future__ import annotations

import contextvars
import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Callable, Iterable, Sequence

from rra.graph.base import (RELATION_END_SAMPLE, Direction, GraphError, GraphStats, KnowledgeGraph, MatchMode,
                            PathInstance, Triple, check_time, paused_gc)
from rra.graph.cvt import CVTRule, cvt_like, fold
from rra.graph.dict_graph import DictGraph


@dataclass
class Subgraph:
    """One question's graph as a dataset gives it: (head, relation, tail) ids, names of those that
    have one, and the entities never folded as CVTs (the question's topic entities)."""

    triples: Sequence[tuple[str, str, str]]
    labels: dict[str, str] = field(default_factory=dict)
    keep: frozenset[str] = frozenset()
    # whether the dataset names its entities (then an unnamed id is a CVT); False (an NSM file
    # without its names file): an unnamed id is folded only where it behaves like a CVT, one sign
    # being that its properties' type is none of `entity_domains` (rra.graph.cvt.cvt_like)
    named: bool = True
    entity_domains: frozenset[str] = frozenset()


def build_subgraph(sub: Subgraph, rule: CVTRule) -> tuple[DictGraph, set[str], frozenset[str], int]:
    """The question's graph with its compound values folded away, the CVT ids it had, its
    relations, and how many unnamed ids it kept as entities (they did not behave like CVTs)."""
    entities = set(map(itemgetter(0), sub.triples)) | set(map(itemgetter(2), sub.triples))
    unnamed = {e for e in rule.candidates(entities) if e not in sub.keep and e not in sub.labels}
    cvts = unnamed if sub.named else cvt_like(sub.triples, unnamed, sub.entity_domains)
    kept = len(unnamed - cvts)
    cvts |= {e for e in entities & rule.ids if e not in sub.keep}
    triples = fold(sub.triples, cvts) if cvts else sub.triples
    graph = DictGraph(triples, {e: n for e, n in sub.labels.items() if e not in cvts})
    return graph, cvts, frozenset(map(itemgetter(1), triples)), kept


class NoQuestionError(GraphError):
    """A per-question graph was asked something outside `scope(...)`."""


_ACTIVE: contextvars.ContextVar[str | None] = contextvars.ContextVar("rra_subgraph", default=None)


class QuestionGraphs(KnowledgeGraph):
    per_question = True  # read by the evaluation loop and KG supervision: one question at a time

    def __init__(self, cvt=None, cache_size: int = 32, relations_from: Callable | None = None):
        self.rule = CVTRule.of(cvt)
        self.cache_size = max(1, int(cache_size))
        self.relations_from = relations_from
        self._sources: dict[str, Subgraph | Callable[[], Subgraph]] = {}
        self._cache: OrderedDict[str, DictGraph] = OrderedDict()
        self._relations: dict[str, frozenset[str]] = {}  # per question, once built
        self._cvts: dict[str, int] = {}  # per question built: CVTs folded, unnamed ids kept as entities
        self._kept: dict[str, int] = {}
        self._vocabulary: list[str] | None = None
        self._lock = threading.Lock()

    # -- registering and selecting questions -------------------------------------------------
    def add(self, key: str, load: Subgraph | Callable[[], Subgraph]) -> None:
        """Register a question's subgraph under `key` (the same key again replaces it)."""
        with self._lock:
            self._sources[key] = load
            self._cache.pop(key, None)
            for counts in (self._relations, self._cvts, self._kept):
                counts.pop(key, None)

    def __contains__(self, key: str) -> bool:
        return key in self._sources

    def __len__(self) -> int:
        return len(self._sources)

    @staticmethod
    def key_of(example) -> str:
        key = example.extra.get("subgraph") if hasattr(example, "extra") else example
        if not key:
            raise NoQuestionError(f"question {getattr(example, 'qid', example)!r} brings no subgraph "
                                  "(extra['subgraph'] is unset): a per-question graph answers only the "
                                  "questions of its dataset")
        return str(key)

    @contextmanager
    def scope(self, example):
        """Answer everything inside on the subgraph of `example` (a QAExample or a key)."""
        token = _ACTIVE.set(self.key_of(example))
        try:
            yield self.graph(_ACTIVE.get())
        finally:
            _ACTIVE.reset(token)

    def graph(self, key: str) -> DictGraph:
        """The built graph of question `key` (cached, least recently used dropped first)."""
        with self._lock:
            g = self._cache.get(key)
            if g is not None:
                self._cache.move_to_end(key)
                return g
            source = self._sources.get(key)
        if source is None:
            raise NoQuestionError(f"no subgraph registered under {key!r}")
        with paused_gc():  # ~10^4 new acyclic objects per question: no full collections meanwhile
            sub = source() if callable(source) else source
            g, cvts, relations, kept = build_subgraph(sub, self.rule)
        with self._lock:
            self._cache[key] = g
            self._relations[key] = relations
            self._cvts[key] = len(cvts)
            self._kept[key] = kept
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return g

    def cvt_count(self, key: str) -> int:
        self.graph(key)
        return self._cvts[key]

    def fold_report(self) -> dict[str, int]:
        """Over the questions whose graph was built: compound values folded, and unnamed ids kept
        as entities because they did not behave like one (read into metrics.json)."""
        with self._lock:
            return {"cvts_folded": sum(self._cvts.values()), "unnamed_kept": sum(self._kept.values())}

    def current(self) -> DictGraph:
        check_time()  # every protocol call of a question past its time budget stops here (rra.graph.base)
        key = _ACTIVE.get()
        if key is None:
            raise NoQuestionError("a per-question graph (graph=subgraphs) was asked outside a question: "
                                  "it answers questions of its dataset, each on its own subgraph")
        return self.graph(key)

    def relations_of(self, keys: Iterable[str]) -> set[str]:
        out: set[str] = set()
        for key in keys:
            if key not in self._relations:
                self.graph(key)
            out |= self._relations[key]
        return out

    # -- the protocol, on the selected question's graph -------------------------------------
    def has_entity(self, entity: str) -> bool:
        return self.current().has_entity(entity)

    def find_entities(self, text: str, mode: MatchMode = "exact", limit: int = 10) -> list[str]:
        return self.current().find_entities(text, mode, limit)

    def label(self, entity: str) -> str:
        return self.current().label(entity)

    def labels(self, entities: Iterable[str]) -> dict[str, str]:
        return self.current().labels(entities)

    def relations(self, entity: str, direction: Direction = "both") -> list[str]:
        return self.current().relations(entity, direction)

    def neighbors(self, entity: str, relation: str) -> list[str]:
        return self.current().neighbors(entity, relation)

    def neighbors_batch(self, entities: Sequence[str], relation: str) -> dict[str, list[str]]:
        return self.current().neighbors_batch(entities, relation)

    def relations_batch(self, entities: Sequence[str], direction: Direction = "both") -> dict[str, list[str]]:
        return self.current().relations_batch(entities, direction)

    def relation_labels(self, relations: Iterable[str]) -> dict[str, str]:
        return self.current().relation_labels(relations) if _ACTIVE.get() is not None else {}

    def relation_ends(self, relations: Sequence[str], limit: int = RELATION_END_SAMPLE) -> dict[str, list[str]]:
        """None: what a relation leads to in one question's graph would stand for it in every
        question (relation texts are kept per relation), so per-question graphs read names alone."""
        return {r: [] for r in dict.fromkeys(relations)}

    def follow_path(self, entity: str, path: Sequence[str], limit: int | None = None) -> list[PathInstance]:
        return self.current().follow_path(entity, path, limit)

    def follow_path_batch(self, entities: Sequence[str], path: Sequence[str],
                          limit: int | None = None) -> dict[str, list[PathInstance]]:
        return self.current().follow_path_batch(entities, path, limit)

    def triples(self, entity: str, limit: int | None = None, seed: int | None = None,
                direction: Direction = "both") -> list[Triple]:
        return self.current().triples(entity, limit, seed, direction)

    def all_triples(self) -> Iterable[Triple]:
        return self.current().all_triples()

    def all_aliases(self) -> dict[str, list[str]]:
        return self.current().all_aliases()

    def all_names(self) -> dict[str, list[str]]:
        return self.current().all_names()

    def stats(self) -> GraphStats:
        """The selected question's graph; outside a question, the registered questions in numbers."""
        if _ACTIVE.get() is not None:
            return self.current().stats()
        return GraphStats(entities=0, triples=0, relations={r: 0 for r in self.relation_types()})

    def relation_types(self) -> list[str]:
        """The relation vocabulary (see the module doc): the same list inside and outside a question,
        so a retriever is checked against, and trained on, the union over the training split."""
        if self.relations_from is not None and self._vocabulary is None:
            source = self.relations_from
            examples = source(kg=self) if callable(source) else source
            # no training split (inference on a test file alone): the questions registered, below
            self._vocabulary = sorted(self.relations_of(self.key_of(e) for e in examples)) if examples else []
        if self._vocabulary:
            return list(self._vocabulary)
        return sorted(self.relations_of(list(self._sources)))

    def scope_key(self) -> str | None:
        """The selected question's key (None outside one): what a per-graph cache is keyed by."""
        return _ACTIVE.get()
