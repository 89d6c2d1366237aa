"""The `KnowledgeGraph` protocol answered with SPARQL, for any backend that can run a SELECT.

`OxigraphGraph` (embedded store) and `SparqlGraph` (HTTP endpoint) subclass this and supply only
`_select`; the query text comes from queries.py and every result is sorted and sampled here
exactly as `NetworkXGraph` does, so the three backends give identical answers.
"""
from __future__ import annotations

import logging
import re
import time
from typing import Iterable, Sequence

import rra.graph.queries as q
from rra.graph.base import (INVERSE_PREFIX, RELATION_END_SAMPLE, Direction, GraphError, GraphStats, KnowledgeGraph,
                            MatchMode, PathInstance, UnknownEntityError, base_relation, check_time, is_inverse, note,
                            sample, step_triple)
from rra.graph.rdf import XSD, RdfMapping, display, label_rank, literal_id
from rra.records import Triple

# A bound result term: ("iri" | "literal" | "bnode", value), a literal with its datatype IRI and
# language tag after them (None when plain); None when unbound.
Term = tuple
Row = tuple  # of Term | None, in the order of the variables asked for


log = logging.getLogger(__name__)

RELATION_END_READ = 64  # far ends asked of the store per relation (relation_ends keeps its smallest ids)
_SURROGATE = re.compile("[\ud800-\udfff]")


def chunks(items: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


class SparqlBackedGraph(KnowledgeGraph):
    mapping: RdfMapping
    batch_size: int = 500
    load_report = None  # set by rra.graph.load_graph
    requests = 0  # queries sent to the store (HTTP requests, retries included, on an endpoint)
    # Case-insensitive lookups from a map of every name, built by one scan on first need (True for a
    # store in this process: OxigraphGraph; an option of SparqlGraph). The store's own way, a VALUES
    # join on LCASE(?l), costs names x texts on Oxigraph (4,000 texts over 42,000 names: 8.7 s, the
    # scan 0.55 s) and on Virtuoso; an endpoint filters on its side by default rather than send every
    # name over the network.
    names_in_memory = False
    _casefold: dict[str, list[tuple[str, str]]] | None = None
    _casefold_read = 0.0  # time.monotonic() when it was read

    def _select(self, query: str, variables: tuple[str, ...]) -> list[Row]:
        """Run a SELECT and return its rows as tuples of terms, in `variables` order."""
        raise NotImplementedError

    # -- term <-> id ---------------------------------------------------------------------
    def _entity(self, term: Term) -> str:
        kind, value = term[0], term[1]
        if kind == "iri":
            return self.mapping.entity_id(value)
        if kind == "bnode":
            return "_:" + value
        # a literal is a literal node ("1985"^^xsd:gYear), never the entity spelt 1985 (rdf.py)
        return literal_id(value, *term[2:4]) if len(term) > 2 else literal_id(value)

    def _key(self, term: Term) -> str:
        """The value that `mapping.node_key` gives the node of this result term (match results to
        the nodes asked for without decoding every IRI)."""
        return self._entity(term) if term[0] == "literal" else term[1]

    def _asked(self, by_key: dict, term: Term):
        """The node asked for (in a VALUES clause) that a result row's echoed term stands for."""
        found = by_key.get(self._key(term))
        if found is None and term[0] == "literal" and term[2:3] == (XSD + "integer",) and term[1] in ("0", "1"):
            # Virtuoso echoes the boolean of a VALUES clause as the integer 1 or 0
            found = by_key.get(literal_id("true" if term[1] == "1" else "false", XSD + "boolean"))
        return found

    def _relation(self, term: Term) -> str:
        return self.mapping.relation_id(term[1])

    # -- lookup --------------------------------------------------------------------------
    def has_entity(self, entity: str) -> bool:
        return bool(self._select(q.has_entity(self.mapping, entity), ("p",)))

    def label(self, entity: str) -> str:
        found = self.labels([entity])
        if entity not in found:
            raise UnknownEntityError(entity)
        return found[entity]

    def labels(self, entities: Iterable[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(entities))
        found: dict[str, tuple[int, int, str]] = {}  # id -> (language rank, predicate rank, label)
        for chunk in chunks(wanted, self.batch_size):
            by_key = {self.mapping.node_key(x): x for x in chunk}
            for e, l, lang, lp in self._select(q.labels(self.mapping, chunk), ("e", "l", "lang", "lp")):
                x = self._asked(by_key, e)
                if x is None:
                    continue
                if l is None:  # no label: the id, or a literal's value
                    found.setdefault(x, (99, 99, display(x)))
                else:  # several: the best language (label_rank), rdfs:label before schema:name, then the smallest
                    found[x] = min(found.get(x, (99, 99, x)), (label_rank(lang[1] if lang else None,
                                                                          self.mapping.label_language),
                                                               self._naming_rank(lp), l[1]))
        return {x: found[x][2] for x in wanted if x in found}

    def _naming_rank(self, predicate: Term | None) -> int:
        """The place of a naming predicate among `mapping.label_predicates` (the label predicate 0)."""
        preds = self.mapping.label_predicates
        return preds.index(predicate[1]) if predicate is not None and predicate[1] in preds else len(preds)

    def find_entities(self, text: str, mode: MatchMode = "exact", limit: int = 10) -> list[str]:
        if mode not in ("exact", "casefold", "substring"):
            raise ValueError(f"unknown match mode {mode!r}; expected exact, casefold or substring")
        if _SURROGATE.search(text):  # not valid Unicode: no RDF label can match it
            return []
        table = self._casefold_map() if mode == "casefold" else None
        if table is not None:
            return self._best(table.get(text.casefold(), []), text, mode, limit)
        rows = self._select(q.find_entities(self.mapping, text, mode), ("e", "l"))
        return self._rank(rows, text, mode, limit)

    def _casefold_map(self) -> dict[str, list[tuple[str, str]]] | None:
        """casefolded name -> its (entity, name) pairs, every name of the store read once. Python's
        casefold, as NetworkX matches (SPARQL's LCASE leaves 'ß', which casefold reads 'ss'). A store
        that changes drops it (`_names_changed`). None where the store answers them itself: not
        `names_in_memory`, or, from then on, names that could not be read (a time-out, a cut result)."""
        if not self.names_in_memory:
            return None
        ttl = getattr(self, "cache_ttl", None)  # an endpoint's results are trusted this long
        if self._casefold is None or (ttl is not None and time.monotonic() - self._casefold_read > ttl):
            self._casefold_read = time.monotonic()
            table: dict[str, list[tuple[str, str]]] = {}
            try:
                rows = self._select(q.named(self.mapping), ("e", "l"))
            except GraphError as e:
                log.warning("case-insensitive name lookups go to the store from now on: its names could not be "
                            "read (%s: %s)", type(e).__name__, e)
                self.names_in_memory = False
                return None
            for e, l in rows:
                table.setdefault(l[1].casefold(), []).append((self._entity(e), l[1]))
            self._casefold = table
        return self._casefold

    def _names_changed(self) -> None:
        self._casefold = None

    def _rank(self, rows, text: str, mode: str, limit: int) -> list[str]:
        """The entities of candidate rows whose label matches `text` in `mode`, by (label length,
        label, id) of each one's best label; at most `limit`."""
        return self._best([(self._entity(e), l[1]) for e, l in rows], text, mode, limit)

    @staticmethod
    def _best(pairs: Iterable[tuple[str, str]], text: str, mode: str, limit: int) -> list[str]:
        """`_rank` over (entity, name) pairs."""
        needle = text.casefold()
        best: dict[str, str] = {}
        for x, label in pairs:
            if mode == "exact":
                ok = label == text
            elif mode == "casefold":
                ok = label.casefold() == needle
            else:
                ok = needle in label.casefold()
            if ok and (x not in best or (len(label), label) < (len(best[x]), best[x])):
                best[x] = label
        hits = sorted(best, key=lambda x: (len(best[x]), best[x], x))
        return hits[:limit]

    def _names(self) -> tuple[dict[str, tuple[str | None, list[str]]], set[str]]:
        """Every node, and per node with a name its label, chosen as `labels` chooses it (None where
        only aliases name it), and its other names: aliases, labels in other languages, other naming
        predicates' values, whether a store rra loaded keeps them as OTHER_NAME triples or one served
        as written keeps them as they were. Two scans (nodes, naming triples), not every fact."""
        nodes = {self._entity(e) for (e,) in self._select(q.nodes(self.mapping), ("e",))}
        found: dict[str, list[str]] = {}
        label: dict[str, tuple[int, int, str]] = {}
        for e, l, lang, lp in self._select(q.names(self.mapping), ("e", "l", "lang", "lp")):
            x = self._entity(e)
            if x not in nodes:  # a property's or a class's name, with no fact of its own
                continue
            found.setdefault(x, []).append(l[1])
            if lp is not None:
                rank = (label_rank(lang[1] if lang else None, self.mapping.label_language), self._naming_rank(lp), l[1])
                label[x] = min(label.get(x, rank), rank)
        out = {}
        for x, names in found.items():
            own = label[x][2] if x in label else None
            out[x] = (own, sorted({n.strip() for n in names if n != own} - {own, ""}))
        return out, nodes

    def all_aliases(self) -> dict[str, list[str]]:
        return {x: other for x, (_, other) in self._names()[0].items() if other}

    def all_names(self) -> dict[str, list[str]]:
        named, nodes = self._names()
        out = {x: [own if own is not None else display(x), *other] for x, (own, other) in named.items()}
        return {**out, **{x: [display(x)] for x in sorted(nodes - set(out))}}

    SCAN_BATCH = 5000  # texts per case-insensitive lookup (each such query scans all labels)

    def find_entities_batch(self, texts: Sequence[str], mode: MatchMode = "exact",
                            limit: int = 10) -> dict[str, list[str]]:
        """`find_entities` for many texts: one query per `batch_size` texts in exact and casefold
        mode (substring goes text by text); the same answer per text."""
        wanted = list(dict.fromkeys(texts))
        if mode == "substring":
            return {t: self.find_entities(t, mode, limit) for t in wanted}
        if mode not in ("exact", "casefold"):
            raise ValueError(f"unknown match mode {mode!r}; expected exact, casefold or substring")
        out = {t: [] for t in wanted}
        valid = [t for t in wanted if not _SURROGATE.search(t)]
        table = self._casefold_map() if mode == "casefold" else None
        if table is not None:
            return {**out, **{t: self._best(table.get(t.casefold(), []), t, mode, limit) for t in valid}}
        # casefold scans every label once per query whatever the number of texts: big chunks
        size = self.batch_size if mode == "exact" else max(self.batch_size, self.SCAN_BATCH)
        for chunk in chunks(valid, size):
            rows = self._select(q.find_entities_batch(self.mapping, chunk, mode), ("e", "l", "lc"))
            by_key: dict[str, list] = {}
            for e, l, lc in rows:  # grouped by what the store matched: the label, or its LCASE
                key = l[1] if mode == "exact" else (lc[1] if lc is not None else None)
                by_key.setdefault(key, []).append((e, l))
            for t in chunk:
                out[t] = self._rank(by_key.get(t if mode == "exact" else t.lower(), []), t, mode, limit)
        return out

    # -- structure -----------------------------------------------------------------------
    def relations(self, entity: str, direction: Direction = "both") -> list[str]:
        rows = self._select(q.relations(self.mapping, entity), ("out", "in"))
        if not rows:
            raise UnknownEntityError(entity)
        rels: set[str] = set()
        for out, inc in rows:
            if out is not None and direction in ("out", "both"):
                rels.add(self._relation(out))
            if inc is not None and direction in ("in", "both"):
                rels.add(INVERSE_PREFIX + self._relation(inc))
        return sorted(rels)

    def neighbors(self, entity: str, relation: str) -> list[str]:
        return self.neighbors_batch([entity], relation)[entity]

    def relations_batch(self, entities: Sequence[str], direction: Direction = "both") -> dict[str, list[str]]:
        result: dict[str, set[str]] = {x: set() for x in entities}
        for chunk in chunks(list(result), self.batch_size):
            by_key = {self.mapping.node_key(x): x for x in chunk}
            for e, out, inc in self._select(q.relations_batch(self.mapping, chunk), ("e", "out", "in")):
                x = by_key.get(self._key(e))
                if x is None:
                    continue
                if out is not None and direction in ("out", "both"):
                    result[x].add(self._relation(out))
                if inc is not None and direction in ("in", "both"):
                    result[x].add(INVERSE_PREFIX + self._relation(inc))
        return {x: sorted(r) for x, r in result.items()}

    def relation_labels(self, relations: Iterable[str]) -> dict[str, str]:
        # a predicate's own label first, else the label of the entity that describes it
        # (mapping.property_namespaces: Wikidata's wdt:P19 is named by wd:P19), as the loaders do
        wanted = [r for r in dict.fromkeys(base_relation(r) for r in relations)]
        named_by: dict[str, list[str]] = {}  # IRI that may carry a name -> the relations it names
        for r in wanted:
            own = self.mapping.relation_iri(r)
            named_by.setdefault(own, []).append(r)
            described = self.mapping.property_entity_iri(r)
            if described:
                named_by.setdefault(described, []).append(r)
        found: dict[str, tuple[int, int, int, str]] = {}
        for chunk in chunks(list(named_by), self.batch_size):
            for iri, l, lang, lp in self._select(q.labels_of_iris(self.mapping, chunk), ("r", "l", "lang", "lp")):
                if iri is None or l is None or l[1] in (iri[1], self.mapping.entity_id(iri[1])):
                    continue  # a label that is the IRI itself (a store labelling every node by its id) names nothing
                for rel in named_by.get(iri[1], ()):
                    via = 0 if iri[1] == self.mapping.relation_iri(rel) else 1
                    rank = (via, label_rank(lang[1] if lang else None, self.mapping.label_language),
                            self._naming_rank(lp), l[1])
                    found[rel] = min(found.get(rel, rank), rank)
        return {r: v[3] for r, v in found.items()}

    def relation_ends(self, relations: Sequence[str], limit: int = RELATION_END_SAMPLE) -> dict[str, list[str]]:
        # the store's smallest ends of each relation (it sorts a relation's distinct ends once per
        # run: seconds for a relation of millions of facts), then the `limit` smallest ids of those:
        # the in-memory graphs' nodes wherever ids sort as the store sorts terms (IRIs of one base;
        # values of one type, whose kind is their type's whatever the order)
        wanted = list(dict.fromkeys(relations))
        found: dict[str, set[str]] = {r: set() for r in wanted}
        for chunk in chunks(wanted, 32):
            pairs = [(base_relation(r), is_inverse(r)) for r in chunk]
            for k, n in self._select(q.relation_ends(self.mapping, pairs, RELATION_END_READ), ("k", "n")):
                if k is not None and n is not None:
                    found[chunk[int(k[1])]].add(self._entity(n))
        return {r: sorted(ends)[:limit] for r, ends in found.items()}

    def neighbors_batch(self, entities: Sequence[str], relation: str) -> dict[str, list[str]]:
        result: dict[str, list[str]] = {x: [] for x in entities}
        wanted = list(result)
        rel, inv = base_relation(relation), is_inverse(relation)
        for chunk in chunks(wanted, self.batch_size):
            by_key = {self.mapping.node_key(x): x for x in chunk}
            for e, n in self._select(q.neighbors(self.mapping, chunk, rel, inv), ("e", "n")):
                x = self._asked(by_key, e)
                if x is not None:  # ignore rows for entities not asked for (a confused endpoint)
                    result[x].append(self._entity(n))
        for ns in result.values():
            ns.sort()
        return result

    def neighbors_by_relation(self, wanted: dict[str, Sequence[str]]) -> dict[str, dict[str, list[str]]]:
        """One UNION query for many relations (split so that no query lists more than `batch_size`
        entities; a relation asked for more is chunked on its own)."""
        asked = {r: list(dict.fromkeys(es)) for r, es in wanted.items()}
        out = {r: {x: [] for x in es} for r, es in asked.items()}
        for r, es in asked.items():
            if len(es) > self.batch_size:
                out[r] = self.neighbors_batch(es, r)
        for group in _pack([(r, len(es)) for r, es in asked.items() if len(es) <= self.batch_size], self.batch_size):
            check_time()
            keys = [{self.mapping.node_key(x): x for x in asked[r]} for r in group]
            requests = [(asked[r], base_relation(r), is_inverse(r)) for r in group]
            for k, e, n in self._select(q.neighbors_union(self.mapping, requests), ("k", "e", "n")):
                try:
                    i = int(k[1])
                    r = group[i]
                except (TypeError, ValueError, IndexError):
                    continue  # a row the query cannot produce: ignore it
                x = self._asked(keys[i], e)
                if x is not None:
                    out[r][x].append(self._entity(n))
        for found in out.values():
            for ns in found.values():
                ns.sort()
        return out

    def follow_path(
        self, entity: str, path: Sequence[str], limit: int | None = None
    ) -> list[PathInstance]:
        """One query for the whole path. Sorting the instances by their entity sequence gives
        exactly `walk_path`'s order (each hop's neighbours sorted, earlier hops first)."""
        if not path:
            return []
        check_time()
        variables = tuple(f"x{i}" for i in range(1, len(path) + 1))
        cap = row_cap(limit)
        rows = self._select(q.path(self.mapping, entity, path, cap), variables)
        _noted(rows, cap, path, entity)
        walks = sorted([entity] + [self._entity(t) for t in row] for row in rows)
        if limit is not None:
            walks = walks[:limit]
        return [
            PathInstance(w, [step_triple(w[i], r, w[i + 1]) for i, r in enumerate(path)])
            for w in walks
        ]

    def follow_path_batch(
        self, entities: Sequence[str], path: Sequence[str], limit: int | None = None
    ) -> dict[str, list[PathInstance]]:
        """One query per `batch_size` start entities; each entity's instances sorted as in
        `follow_path`."""
        found: dict[str, list[list[str]]] = {e: [] for e in entities}
        if not path:
            return {e: [] for e in found}
        variables = tuple(f"x{i}" for i in range(len(path) + 1))
        for chunk in chunks(list(found), self.batch_size):
            check_time()
            by_key = {self.mapping.node_key(x): x for x in chunk}
            cap = row_cap(limit, len(chunk))
            rows = self._select(q.path_batch(self.mapping, chunk, path, cap), variables)
            _noted(rows, cap, path, f"{len(chunk)} entities")
            for row in rows:
                start = self._asked(by_key, row[0]) if row[0] is not None else None
                if start is not None:  # ignore rows for entities not asked for
                    found[start].append([start] + [self._entity(t) for t in row[1:]])
        out = {}
        for e, walks in found.items():
            walks = sorted(walks)[:limit] if limit is not None else sorted(walks)
            out[e] = [PathInstance(w, [step_triple(w[i], r, w[i + 1]) for i, r in enumerate(path)]) for w in walks]
        return out

    def follow_paths_batch(
        self, requests: Sequence[tuple[Sequence[str], Sequence[str]]], limit: int | None = None
    ) -> list[dict[str, list[PathInstance]]]:
        """`follow_path_batch` for several (start entities, path) requests in one UNION query
        (split so that no query lists more than `batch_size` start entities): a retrieval round
        of RRA costs one round trip, whatever the number of distinct candidate paths."""
        reqs = [(list(dict.fromkeys(starts)), list(path)) for starts, path in requests]
        walks: list[dict[str, set]] = [{x: set() for x in starts} for starts, _ in reqs]
        groups = _pack([(k, len(starts) if path else 0) for k, (starts, path) in enumerate(reqs)], self.batch_size)
        keys = [{self.mapping.node_key(x): x for x in starts} for starts, _ in reqs]
        for group in groups:
            if len(group) == 1 and len(reqs[group[0]][0]) > self.batch_size:  # too many starts: chunked
                k = group[0]
                for x, found in self.follow_path_batch(*reqs[k]).items():
                    walks[k][x].update(tuple(p.entities) for p in found)
                continue
            longest = max(len(reqs[k][1]) for k in group)
            variables = ("k",) + tuple(f"x{i}" for i in range(longest + 1))
            check_time()
            cap = row_cap(limit, sum(len(reqs[k][0]) for k in group))
            rows = self._select(q.paths_union(self.mapping, [reqs[k] for k in group], cap), variables)
            _noted(rows, cap, ["several paths"], f"{sum(len(reqs[k][0]) for k in group)} entities")
            for row in rows:
                try:
                    k = group[int(row[0][1])]
                except (TypeError, ValueError, IndexError):
                    continue  # a row the query cannot produce: ignore it
                n = len(reqs[k][1])
                start = self._asked(keys[k], row[1]) if row[1] is not None else None
                if start is not None and all(t is not None for t in row[2:2 + n]):
                    walks[k][start].add((start,) + tuple(self._entity(t) for t in row[2:2 + n]))
        out = []
        for (starts, path), found in zip(reqs, walks):
            d = {}
            for x, ws in found.items():
                ordered = sorted(list(w) for w in ws)
                ordered = ordered[:limit] if limit is not None else ordered
                d[x] = [PathInstance(w, [step_triple(w[i], r, w[i + 1]) for i, r in enumerate(path)]) for w in ordered]
            out.append(d)
        return out

    def triples(
        self,
        entity: str,
        limit: int | None = None,
        seed: int | None = None,
        direction: Direction = "both",
    ) -> list[Triple]:
        rows = self._select(q.triples(self.mapping, entity), ("p", "o", "s"))
        if not rows:
            raise UnknownEntityError(entity)
        out: set[Triple] = set()
        for p, o, s in rows:
            if o is not None and direction in ("out", "both"):
                out.add(Triple(entity, self._relation(p), self._entity(o)))
            if s is not None and direction in ("in", "both"):
                out.add(Triple(self._entity(s), self._relation(p), entity))
        return sample(sorted(out), limit, seed)

    def stats(self) -> GraphStats:
        (n,) = self._select(q.entity_count(self.mapping), ("n",))[0]
        counts = {self._relation(p): int(c[1]) for p, c in self._select(q.relation_counts(self.mapping), ("p", "c"))}
        ordered = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        return GraphStats(int(n[1]), sum(counts.values()), ordered)

    def relation_types(self) -> list[str]:
        return sorted(self._relation(p) for p, _ in self._select(q.relation_counts(self.mapping), ("p", "c")))

    def all_triples(self) -> Iterable[Triple]:
        # One SELECT: a whole MetaQA-sized KG (134k facts) is a few MB of results, and paging with
        # ORDER BY would make the store sort everything once per page.
        for s, p, o in self._select(q.all_triples(self.mapping), ("s", "p", "o")):
            yield Triple(self._entity(s), self._relation(p), self._entity(o))

    def triple_count(self) -> int:
        """Every triple in the store, label triples included."""
        return int(self._select(q.triple_count(self.mapping), ("c",))[0][0][1])


# Rows a path query may bring back, per start entity, when the caller bounds its instances: far
# above `limit` (below it the instances are exactly walk_path's first `limit`, in its order), so
# only a walk through a hub reaches it; its rows are then the store's first ones, and flagged.
MIN_ROWS = 100_000


def _pack(sizes: Sequence[tuple[object, int]], limit: int) -> list[list]:
    """The keys of (key, size) pairs in order, grouped so that no group's sizes add up past `limit`
    (a key larger than `limit` is a group of its own); keys of size 0 are left out: one query per group."""
    groups, size = [[]], 0
    for key, n in sizes:
        if not n:
            continue
        if groups[-1] and size + n > limit:
            groups.append([])
            size = 0
        groups[-1].append(key)
        size += n
    return [g for g in groups if g]


def row_cap(limit: int | None, starts: int = 1) -> int | None:
    return None if limit is None else max(MIN_ROWS, 10 * limit) * max(1, starts)


def _noted(rows: list, cap: int | None, path: Sequence[str], start: str) -> None:
    """A path query that brought back as many rows as its LIMIT was cut short: say so."""
    if cap is not None and len(rows) >= cap:
        note(f"path instances capped at {cap} rows ({' / '.join(path)} from {start})")
