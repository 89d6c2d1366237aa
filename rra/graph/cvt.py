"""Compound value types (CVT): Freebase's unnamed nodes that each hold one n-ary fact.

"Trey Parker -> tv_actor.starring_roles -> m.04j60kc -> regular_tv_appearance.character -> Phillip":
the middle node has no name and is never an answer; the fact it holds is one fact in two edges.
A per-question graph *folds* every CVT away when it is built: each pair of edges that meet at a
CVT becomes one edge between the two named ends, its relation the two steps joined by `FOLD`:

    (Trey Parker, tv.tv_actor.starring_roles > tv.regular_tv_appearance.character, Phillip)

so a path through a CVT is one hop of the question, a CVT can never be an answer, and the answer
is the named entity beyond it, for every method alike (they only ever see the folded graph). A
step that walks a CVT edge backwards is written `~r` inside a folded relation (`^` stays what it
is everywhere else: the whole relation walked backwards). Each pair is folded once, oriented so
that its relation has the fewest `~` steps, so a fact gets the same name in every question.

For a reader, `unfold` writes a folded triple back as two triples through a numbered `CVT1`, as
the RRA paper's KG-to-text corpus shows them (`(Trey Parker, tv.tv_actor.starring_roles, CVT1)
(CVT1, tv.regular_tv_appearance.character, Phillip)`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import compress
from operator import itemgetter, not_
from typing import Iterable, Sequence

from rra.records import Triple

FOLD = " > "
BACK = "~"
FREEBASE_ID = r"^[mg]\.[0-9a-z_]+$"  # m.04j60kc, g.11b6... : Freebase machine ids


@dataclass(frozen=True)
class CVTRule:
    """Which nodes are compound values: ids in `ids`, and ids matching `pattern` that have no
    name (a named `m.0abc` is an ordinary entity). `pattern=None` and no ids: no CVTs."""

    pattern: str | None = FREEBASE_ID
    ids: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self):
        object.__setattr__(self, "ids", frozenset(self.ids or ()))
        object.__setattr__(self, "_re", re.compile(self.pattern) if self.pattern else None)

    def candidates(self, entities: Iterable[str]) -> set[str]:
        """The entities whose id matches the pattern (CVTs unless they have a name)."""
        match = self._re.match if self._re is not None else None
        return {e for e in entities if match(e)} if match else set()

    def is_cvt(self, entity: str, named: bool = False) -> bool:
        if entity in self.ids:
            return True
        return self._re is not None and not named and bool(self._re.match(entity))

    @classmethod
    def of(cls, value) -> "CVTRule":
        """From a config mapping {pattern, ids} (None: the Freebase default; an instance as it is)."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        value = dict(value)
        unknown = set(value) - {"pattern", "ids"}
        if unknown:
            raise ValueError(f"unknown cvt keys {sorted(unknown)}; expected pattern, ids")
        return cls(value.get("pattern", FREEBASE_ID), frozenset(value.get("ids") or ()))


# Relations that say what a node is (its type, its name, its topic notes): a node with such an edge of
# its own is a described entity, not an anonymous compound value.
DESCRIBING = ("type.object.", "common.topic.", "rdf:type", "rdfs:label", "http://www.w3.org/")


def domain(relation: str) -> str:
    """A Freebase relation's domain, the type it belongs to: `film.performance` of
    `film.performance.actor` (the relation itself where it has no dot)."""
    return relation.rsplit(".", 1)[0] if "." in relation else relation


def cvt_like(triples: Sequence[tuple[str, str, str]], candidates: set[str],
             entity_domains: Iterable[str] = ()) -> set[str]:
    """Of `candidates` (unnamed ids), those that behave like a compound value where nothing names
    the entities (an NSM file without its names file). A CVT holds one n-ary fact: its own
    properties are all of one type (`film.performance.actor`, `.film`, `.character`), a type that
    no surely named entity has (`entity_domains`: the domains of the properties of the dataset's
    topic entities and answers; `location.location` is one, `film.performance` never), it joins
    two or more nodes, and no edge says what it is (no type, name or topic edge). A leaf (an
    answer's neighbour, a country), a node reached by others' edges only, or one with properties of
    several types or of an entity's type is an entity without a name, and stays. Two CVTs never join
    each other: of two adjacent look-alikes the one joining more nodes that are surely not CVTs
    (the topic, the answers, named ones) is the CVT.
    On the Freebase-style world of bench/kgs/freebase_subgraphs (scale 0.3, test split), against
    its names file: 99.9% of the ids folded are CVTs, 80% of its CVTs are folded (the others keep
    under two properties in their question's subgraph and stay, unnamed); bench_bad_input."""
    if not candidates:
        return set()
    entity_domains = set(entity_domains)
    domains: dict[str, set[str]] = {}
    reach: dict[str, set[str]] = {}  # nodes a candidate's own properties point at
    neighbours: dict[str, set[str]] = {}
    described: set[str] = set()
    for h, r, t in triples:
        if h in candidates:
            neighbours.setdefault(h, set()).add(t)
            if r.startswith(DESCRIBING):
                described.add(h)
            else:
                domains.setdefault(h, set()).add(domain(r))
                reach.setdefault(h, set()).add(t)
        if t in candidates:
            neighbours.setdefault(t, set()).add(h)
            if r.startswith(DESCRIBING):
                described.add(t)
    # its own properties point at two or more nodes: one property of an entity (a country's capital)
    # next to the edge that reached it is not an n-ary fact
    looks = [c for c in candidates if c not in described and len(domains.get(c, ())) == 1
             and not domains[c] & entity_domains and len(reach[c] - {c}) >= 2]
    entities = lambda c: len(neighbours[c] - candidates)  # noqa: E731  (neighbours surely not CVTs)
    out: set[str] = set()
    for c in sorted(looks, key=lambda c: (-entities(c), -len(neighbours[c]), c)):
        if not neighbours[c] & out:
            out.add(c)
    return out


def is_folded(relation: str) -> bool:
    return FOLD in relation


def fold(triples: Iterable[tuple[str, str, str]], cvts: set[str]) -> list[tuple[str, str, str]]:
    """The (head, relation, tail) triples with every CVT in `cvts` folded away (see the module
    doc). Edges between two CVTs and pairs that would join a node to itself are dropped; every
    other triple is kept as it is. Plain tuples: a per-question graph is built from them at once."""
    triples = list(triples)
    # Which triples touch a CVT, in C-level passes (few do; a subgraph has thousands of triples).
    touches = list(map(any, zip(map(cvts.__contains__, map(itemgetter(0), triples)),
                                map(cvts.__contains__, map(itemgetter(2), triples)))))
    kept: list[tuple[str, str, str]] = list(compress(triples, map(not_, touches)))
    arms: dict[str, list[tuple[str, str]]] = {}  # cvt -> [(step from the other node into it, node)]
    for h, r, t in compress(triples, touches):
        if t in cvts:
            if h not in cvts:
                arms.setdefault(t, []).append((r, h))
        else:
            arms.setdefault(h, []).append((BACK + r, t))
    seen = set(kept)
    for cvt in sorted(arms):
        edges = sorted(set(arms[cvt]))
        best: dict[tuple[str, str], tuple] = {}  # one folded edge per unordered pair of named ends
        for i, (step_x, x) in enumerate(edges):
            for step_y, y in edges[i + 1:]:
                if x == y:
                    continue
                key = (x, y) if x < y else (y, x)
                for edge in ((x, step_x + FOLD + _out(step_y), y), (y, step_y + FOLD + _out(step_x), x)):
                    if key not in best or _rank(edge) < _rank(best[key]):
                        best[key] = edge
        for edge in best.values():
            if edge not in seen:
                seen.add(edge)
                kept.append(edge)
    return kept


def _out(step_in: str) -> str:
    """A node's step into the CVT, turned into the CVT's step out to that node."""
    return step_in[len(BACK):] if step_in.startswith(BACK) else BACK + step_in


def _rank(edge: tuple[str, str, str]) -> tuple:
    return (edge[1].count(BACK), edge[1], edge[0], edge[2])


def unfold(triples: Sequence[Triple], name: str = "CVT") -> list[Triple]:
    """Folded triples written back through numbered compound nodes (`CVT1`, `CVT2`, ... in order
    of appearance); other triples unchanged. For what a rewriter or a person reads."""
    out: list[Triple] = []
    n = 0
    for t in triples:
        if not is_folded(t.relation):
            out.append(t)
            continue
        n += 1
        node = f"{name}{n}"
        first, second = t.relation.split(FOLD, 1)
        out.append(_edge(t.head, first, node))
        out.append(_edge(node, second, t.tail))
    return out


def _edge(a: str, step: str, b: str) -> Triple:
    """The triple walked by `step` from a to b (`~r`: r stored from b to a)."""
    return Triple(b, step[len(BACK):], a) if step.startswith(BACK) else Triple(a, step, b)
