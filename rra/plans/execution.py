"""How a query plan (rra.plans.plan.QueryPlan) runs on any graph backend: its conditions tested,
its answers aggregated, the plan executed.

`execute` runs a plan through the `KnowledgeGraph` protocol only (`follow_path`, `neighbors_batch`,
`labels`), so every backend answers it alike: the chains' end sets are intersected, each condition
reads its attribute relation of the remaining entities and compares values as numbers (years and
ISO dates included), never as strings; a count answers the number of entities as text ("7"), a
yes/no "yes" or "no".
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Sequence

from rra.graph.base import KnowledgeGraph, PathInstance, Triple, UnknownEntityError, step_triple
from rra.plans.plan import ORDERS, DateValue, QueryPlan, Via, literal_value


def compare(value: float, op: str, literal: float) -> bool:
    """`value op literal`; a date against a whole number (a year as the question writes it) by its
    year: "after 1999" is from 2000 on, "until 1999" through its 31 December, "in 1999" all of it."""
    return condition_test(op, literal)(value)


_ORDERED = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


def condition_test(op: str, literal: float):
    """`value -> value op literal`, built once per literal (deriving plans tests millions of values
    against a few literals): `compare`'s rule, a date against a whole number by its year."""
    years = not isinstance(literal, DateValue) and float(literal).is_integer()
    if op == "=":
        return lambda v: abs((math.floor(v) if years and isinstance(v, DateValue) else v) - literal) < 1e-9
    holds = _ORDERED[op]
    return lambda v: holds(math.floor(v) if years and isinstance(v, DateValue) else v, literal)


def apply_condition(values: dict[str, list[float]], op: str, literal: float | None = None) -> set[str]:
    """Entities whose attribute values satisfy the condition: a comparison holds if one of an
    entity's values satisfies it; an order keeps every entity sharing the extreme value. Entities
    without a value never pass."""
    have = {e: v for e, v in values.items() if v}
    if op in ORDERS:
        if not have:
            return set()
        pick = max if op == "argmax" else min
        best = {e: pick(v) for e, v in have.items()}
        extreme = pick(best.values())
        return {e for e, v in best.items() if v == extreme}
    holds = condition_test(op, literal)
    return {e for e, v in have.items() if any(map(holds, v))}


def aggregate_answers(plan: QueryPlan, nodes) -> list[str]:
    """A plan's answers from its result nodes: the nodes themselves (sorted), their number as text
    for a count, "yes" / "no" for a yes/no plan."""
    if plan.aggregate == "count":
        return [str(len(nodes))]
    if plan.aggregate == "ask":
        return ["yes" if plan.ask in nodes else "no"]
    return sorted(nodes)


# --- execution on a graph ------------------------------------------------------------------------
@dataclass
class Execution:
    """What a plan gave on a graph: the answers (entity ids, or a count / "yes" / "no"), the result
    entities before aggregating, the chain walks that reach them (per anchor), and the triples the
    named intermediate and the conditions read."""

    answers: list[str] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)  # the result entities (what a count counts)
    chain_ends: list[set[str]] = field(default_factory=list)  # per anchor, before intersecting
    walks: list[list[PathInstance]] = field(default_factory=list)  # per anchor, walks that end at a result
    condition_triples: list[Triple] = field(default_factory=list)  # (entity, attribute, value) read by conditions
    via_triples: list[Triple] = field(default_factory=list)  # (intermediate, relation, named entity)
    values: dict[str, list[float]] = field(default_factory=dict)  # attribute values of the last condition


def attribute_values(kg: KnowledgeGraph, entities: Sequence[str], relation: str) -> tuple[dict[str, list[float]], dict[str, list[str]]]:
    """Per entity, the values of `relation` as numbers (unparseable ones skipped), and the raw
    neighbour ids they came from: one `neighbors_batch` call, and one `labels` call for targets
    whose id is not itself a value."""
    found = kg.neighbors_batch(sorted(entities), relation) if entities else {}
    raw = {e: list(v) for e, v in found.items() if v}
    direct = {t: literal_value(t) for v in raw.values() for t in v}
    unread = sorted(t for t, v in direct.items() if v is None)
    labels = kg.labels(unread) if unread else {}
    values = {}
    for e, targets in raw.items():
        nums = [n for n in (direct[t] if direct[t] is not None else literal_value(labels.get(t)) for t in targets)
                if n is not None]
        if nums:
            values[e] = nums
    return values, raw


def via_filter(kg: KnowledgeGraph, nodes: Sequence[str], via: Via) -> tuple[set[str], list[Triple]]:
    """The nodes n with the triple (n, via.relation, via.entity), and those triples."""
    found = kg.neighbors_batch(sorted(set(nodes)), via.relation) if nodes else {}
    kept = {n for n, targets in found.items() if via.entity in targets}
    return kept, [step_triple(n, via.relation, via.entity) for n in sorted(kept)]


def execute(kg: KnowledgeGraph, plan: QueryPlan, semantics=None, max_instances: int = 10_000,
            walks: Sequence[list[PathInstance]] | None = None) -> Execution:
    """Run `plan` on `kg`: walk each anchor's path (or take `walks`, already fetched), keep the
    walks `semantics` accepts (the dataset's answer rule) and, on the first path, those passing the
    named intermediate; intersect the end sets, filter or order them by each condition, then
    aggregate. Raises the graph's errors (the caller records them)."""
    out = Execution()
    per_anchor = []
    for k, (anchor, path) in enumerate(zip(plan.anchors, plan.paths)):
        found = walks[k] if walks is not None else kg.follow_path(anchor, list(path), limit=max_instances)
        kept = [w for w in found if semantics is None or semantics.keeps(w.entities, anchor)]
        if k == 0 and plan.via is not None:
            passing, out.via_triples = via_filter(kg, [w.entities[plan.via.step] for w in kept], plan.via)
            kept = [w for w in kept if w.entities[plan.via.step] in passing]
        per_anchor.append(kept)
        out.chain_ends.append({w.end for w in kept})
    joined = set.intersection(*out.chain_ends) if out.chain_ends else set()
    for c in plan.constraints:
        if not joined:
            break
        out.values, raw = attribute_values(kg, sorted(joined), c.relation)
        joined = apply_condition(out.values, c.op, literal_value(c.value))
        out.condition_triples += [step_triple(e, c.relation, t) for e in sorted(joined) for t in raw.get(e, [])]
    out.nodes = sorted(joined)
    out.answers = aggregate_answers(plan, joined)
    out.walks = [[w for w in kept if w.end in joined] for kept in per_anchor]
    if out.via_triples:  # only the intermediates that lead to a result
        used = {w.entities[plan.via.step] for w in out.walks[0]}
        backwards = plan.via.relation.startswith("^")  # step_triple wrote it the KG's way round
        out.via_triples = [t for t in out.via_triples if (t.tail if backwards else t.head) in used]
    return out


def plan_answers(kg: KnowledgeGraph, plan: QueryPlan, semantics=None) -> list[str]:
    """The answers of a plan (for the question generator and supervision)."""
    try:
        return execute(kg, plan, semantics).answers
    except UnknownEntityError:
        return []
