"""What the benchmark KG generators share: a triple store that walks relation paths the way rra's
graph backends do, the gold-plan executor (the same code makes a question's answers and, in the
tests, checks them on the KG as rra loads it), N-Triples and JSONL writing, Zipf-like counts, and
the surface variation of a question (capital letter, question mark).

Nodes are strings: an entity is its IRI (or id), a literal is rra's literal node id
(`"2017"^^xsd:gYear`, rra.graph.rdf.literal_id), so an answer computed here compares with what
`load_graph` reads back. Everything is seeded and never depends on set order (string hashes
change between processes): sets are sorted before a random choice.
"""
from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Sequence

from rra.graph.rdf import XSD, is_literal, iri_ref, literal, literal_id, split_literal
from rra.plans.execution import apply_condition
from rra.plans.plan import literal_value

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


def lit(lexical, xsd_type: str) -> str:
    """The node id of a typed literal (`lit(2017, "gYear")` -> `"2017"^^xsd:gYear`)."""
    return literal_id(str(lexical), XSD + xsd_type)


def shown(node: str) -> str:
    """How a question file writes an answer node: a literal as its plain text ("2017"), an
    entity as its id."""
    return split_literal(node)[0] if is_literal(node) else node


def inverse(relation: str) -> str:
    return relation[1:] if relation.startswith("^") else "^" + relation


class Store:
    """Triples in memory with both directions indexed; `neighbors(e, r)` / `neighbors(e, "^r")`
    as in rra's KnowledgeGraph protocol, so `run_gold` runs on either."""

    def __init__(self):
        self.out: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.inc: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.triples: list[tuple[str, str, str]] = []
        self._seen: set[tuple[str, str, str]] = set()
        self.labels: dict[str, str] = {}

    def add(self, head: str, relation: str, tail: str) -> None:
        t = (head, relation, tail)
        if t in self._seen:
            return
        self._seen.add(t)
        self.triples.append(t)
        self.out[head, relation].append(tail)
        self.inc[tail, relation].append(head)

    def has(self, head: str, relation: str, tail: str) -> bool:
        return (head, relation, tail) in self._seen

    def neighbors(self, entity: str, relation: str) -> list[str]:
        if relation.startswith("^"):
            return sorted(self.inc.get((entity, relation[1:]), ()))
        return sorted(self.out.get((entity, relation), ()))

    def one(self, entity: str, relation: str) -> str | None:
        found = self.neighbors(entity, relation)
        return found[0] if found else None


# -- gold plans --------------------------------------------------------------------------------
# A gold plan, as stored in a question's `extra.gold` (JSON):
#   anchors     [entity, ...]                  one per path
#   paths       [[relation, ...], ...]          walked from each anchor; the end sets are intersected
#   via         {"step": k, "relation": r, "entity": e} or absent: after k steps of the first path,
#               keep only the nodes n with the triple (n, r, e) (an intermediate entity the question names)
#   conditions  [{"relation", "op", "value"}]  comparisons of an attribute with a literal, all must hold
#   order       {"relation", "op": argmax|argmin} or absent
#   aggregate   "count" | "ask" | absent;  ask: the entity whose membership a yes/no question asks
def walk(graph, starts: Iterable[str], path: Sequence[str], via: dict | None = None) -> set[str]:
    frontier = set(starts)
    for k, relation in enumerate(path):
        if via is not None and via["step"] == k:
            frontier = {n for n in frontier if via["entity"] in graph.neighbors(n, via["relation"])}
        frontier = {m for n in sorted(frontier) for m in graph.neighbors(n, relation)}
    return frontier


def attribute(graph, entities: Iterable[str], relation: str) -> dict[str, list[float]]:
    values = {}
    for e in sorted(entities):
        nums = [v for v in (literal_value(x) for x in graph.neighbors(e, relation)) if v is not None]
        if nums:
            values[e] = nums
    return values


def gold_nodes(graph, gold: dict) -> set[str]:
    """The answer nodes of a gold plan before aggregation."""
    ends = None
    for k, (anchor, path) in enumerate(zip(gold["anchors"], gold["paths"])):
        found = walk(graph, [anchor], path, gold.get("via") if k == 0 else None)
        ends = found if ends is None else ends & found
    for c in gold.get("conditions") or []:
        ends = apply_condition(attribute(graph, ends, c["relation"]), c["op"], literal_value(c["value"]))
    if gold.get("order"):
        ends = apply_condition(attribute(graph, ends, gold["order"]["relation"]), gold["order"]["op"])
    return ends


def run_gold(graph, gold: dict) -> list[str]:
    """The answers of a gold plan as a question file writes them (count: "7"; ask: "yes"/"no")."""
    nodes = gold_nodes(graph, gold)
    if gold.get("aggregate") == "count":
        return [str(len(nodes))]
    if gold.get("aggregate") == "ask":
        return ["yes" if gold["ask"] in nodes else "no"]
    return sorted(shown(n) for n in nodes)


# -- writing -----------------------------------------------------------------------------------
def write_ntriples(path: Path, store: Store, string_literals: set[str] = frozenset()) -> int:
    """`store`'s triples, then an rdfs:label for every labelled IRI (entities and relations
    alike), as N-Triples. Literal objects carry their full datatype IRI; the ids in
    `string_literals` are written `^^xsd:string` (rra's ids leave that datatype implicit)."""
    term: dict[str, str] = {}

    def node(x: str) -> str:
        if x not in term:
            if is_literal(x):
                lexical, datatype, _ = split_literal(x)
                datatype = datatype or (XSD + "string" if x in string_literals else None)
                term[x] = literal(lexical) + (f"^^{iri_ref(datatype)}" if datatype else "")
            else:
                term[x] = iri_ref(x)
        return term[x]

    lines = [f"{node(h)} {node(r)} {node(t)} .\n" for h, r, t in store.triples]
    label = iri_ref(RDFS_LABEL)
    lines += [f"{node(x)} {label} {literal(store.labels[x])} .\n" for x in sorted(store.labels)]
    path.write_text("".join(lines), encoding="utf-8")
    return len(lines)


def write_jsonl(path: Path, rows: Sequence[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


# -- question making ---------------------------------------------------------------------------
def zipf_counts(n: int, total: int, rng: random.Random | None, s: float = 1.0, minimum: int = 1) -> list[int]:
    """`total` split over `n` items with Zipf-like weights 1/rank^s, each item getting at least
    `minimum` (when total allows); sums to `total` exactly. Ranks in a seeded random order, or in
    the items' order when `rng` is None (the first item the most frequent)."""
    if n == 0:
        return []
    ranks = list(range(1, n + 1))
    if rng is not None:
        rng.shuffle(ranks)
    weights = [1 / r ** s for r in ranks]
    floor = min(minimum, total // n)
    rest = total - floor * n
    raw = [rest * w / sum(weights) for w in weights]
    counts = [floor + int(x) for x in raw]
    by_remainder = sorted(range(n), key=lambda i: (-(raw[i] - int(raw[i])), i))
    for i in by_remainder[: total - sum(counts)]:
        counts[i] += 1
    return counts


def surface(rng: random.Random, text: str) -> str:
    """A question as people type it: first letter capitalised or not, question mark or not
    (never touching a label that starts the question, which stays verbatim)."""
    text = text.strip()
    if text[:1].islower() and rng.random() < 0.55:
        text = text[0].upper() + text[1:]
    if text.endswith("?"):
        return text if rng.random() < 0.8 else text[:-1]
    return text + "?" if rng.random() < 0.55 else text


def fill(template: str, **slots: str) -> str:
    """A template's `{X}` slots filled with labels, verbatim (`str.format` would read braces or
    format specs inside a label)."""
    out = template
    for name, value in slots.items():
        out = out.replace("{" + name + "}", value)
    return out


def write_stats(path: Path, stats: dict) -> Path:
    """A generated KG's stats.json (its figures, as docs/benchmark_kgs.md quotes them)."""
    path.write_text(json.dumps(stats, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def generator_parser(name: str, doc: str, scale_help: str = "size of the KG (and, below 1, of the question sets)"):
    """The command line every generator shares (`python -m bench.kgs.NAME --out DIR [--scale S] [--seed N]`)."""
    from bench.common import arguments

    ap = arguments(f"kgs.{name}", doc)
    ap.add_argument("--out", required=True)
    ap.add_argument("--scale", type=float, default=1.0, help=scale_help)
    ap.add_argument("--seed", type=int, default=0)
    return ap
