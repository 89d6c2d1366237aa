"""Query-plan supervision from the KG: which plan explains a question's gold answers best.

The chain labels of rra.data.supervision come first (one path from the first topic entity). A
question then gets a richer plan only where the KG shows that one explains its answers better:

- **conjunction** (two or more topic entities): every pair of anchors, each with its candidate
  paths (those whose end set holds every gold answer first); the pair whose *intersection* has the
  best answer-F1 wins if it beats the best single chain from any of the anchors.
- **comparison / order** (one anchor, a chain whose end set holds all gold answers and more): an
  attribute relation of those end entities whose values are numbers, years or dates, and a
  condition on it that keeps exactly the gold answers: a comparison with a literal written in the
  question (`> 1990`), or an order (argmax / argmin) when the question has an order word ("first",
  "oldest", ...). Only an exact explanation (F1 = 1) is taken: on real data a condition that merely
  improves F1 is more often chance than meaning.

A plan the data gives (`extra["plan"]` from the question file's `relation_paths` / `constraint`)
is kept; a given constraint without paths gets its chain from the KG. Every question ends with
`extra["plan"]` (a `QueryPlan.to_dict()`, chain included) and `extra["plan_source"]`.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

from rra.data.supervision import Adjacency, SupervisionConfig, build_adjacency, enumerate_paths, gold_nodes
from rra.plan import (COMPARISONS, ORDERS, Constraint, QueryPlan, apply_condition, has_order_word,
                      literal_value, question_literals, written_value)
from rra.records import QAExample

PAIR_PATHS = 5  # candidate paths per anchor tried in pairs


@dataclass
class PlanReport:
    n: int = 0
    shapes: dict = field(default_factory=dict)  # shape -> questions
    sources: dict = field(default_factory=dict)  # given | kg -> questions

    def to_dict(self) -> dict:
        return {"n": self.n, "shapes": dict(self.shapes), "sources": dict(self.sources)}


def f1(ends: set[str], gold: set[str]) -> float:
    hits = len(ends & gold)
    return 2.0 * hits / (len(ends) + len(gold)) if hits else 0.0


class Attributes:
    """Numeric attribute values over the whole KG, per relation, read once when first needed:
    relation -> {entity: [values]} (only relations with at least one parseable value)."""

    def __init__(self, kg, adj: Adjacency):
        self.kg, self.adj, self._values = kg, adj, None

    def values(self) -> dict[str, dict[str, list[float]]]:
        if self._values is None:
            targets = {t for m in self.adj.by_relation.values() for ts in m.values() for t in ts}
            try:
                labels = self.kg.labels(sorted(targets))
            except Exception:  # noqa: BLE001 - labels are optional: ids may carry the values
                labels = {}
            parsed = {t: literal_value(labels.get(t)) if literal_value(labels.get(t)) is not None
                      else literal_value(t) for t in targets}
            self._values = {}
            for r, m in self.adj.by_relation.items():
                per = {e: [parsed[t] for t in ts if parsed[t] is not None] for e, ts in m.items()}
                per = {e: v for e, v in per.items() if v}
                if per:
                    self._values[r] = per
        return self._values


def derive_plan(ex: QAExample, adj: Adjacency, attrs: Attributes, config: SupervisionConfig) -> QueryPlan | None:
    """The KG's best plan for one question (None when no path reaches any gold answer)."""
    gold = set(gold_nodes(ex))
    anchors = [t for t in dict.fromkeys(ex.topic_entities) if adj.has(t)][:3]
    if not gold or not anchors:
        return None
    per_anchor = {a: enumerate_paths(adj, a, config, gold) for a in anchors}
    # best single chain (first anchor wins ties, then shorter paths, then names)
    chains = sorted(((-f1(ends, gold), k, len(p), p, a) for k, a in enumerate(anchors)
                     for p, ends in per_anchor[a].items()))
    if not chains:
        return None
    best_f1, _, _, best_path, best_anchor = chains[0]
    best = (-best_f1, QueryPlan([best_anchor], [list(best_path)]))
    if best[0] >= 1.0:
        return best[1]
    if len(anchors) > 1:
        pair = _best_pair(anchors, per_anchor, gold)
        if pair[1] is not None and pair[0] > best[0]:
            best = pair
    if best[1].shape == "chain" and (question_literals(ex.question) or has_order_word(ex.question)):
        found = _best_condition(ex, per_anchor, anchors, gold, attrs)
        if found is not None and found[0] > best[0]:
            best = found
    return best[1]


def _best_pair(anchors, per_anchor, gold) -> tuple[float, QueryPlan]:
    best = (0.0, None)
    ranked = {a: sorted(per_anchor[a].items(), key=lambda pe: (-len(pe[1] & gold), len(pe[1]), len(pe[0]), pe[0]))
              [:PAIR_PATHS] for a in anchors}
    for i, a in enumerate(anchors):
        for b in anchors[i + 1:]:
            for pa, ea in ranked[a]:
                for pb, eb in ranked[b]:
                    score = f1(ea & eb, gold)
                    if score > best[0] + 1e-12:
                        best = (score, QueryPlan([a, b], [list(pa), list(pb)]))
    return best


def _best_condition(ex, per_anchor, anchors, gold, attrs: Attributes) -> tuple[float, QueryPlan] | None:
    literals = [v for v in (literal_value(x) for x in question_literals(ex.question)) if v is not None]
    ordered = has_order_word(ex.question)
    values = attrs.values()
    options = []
    for a in anchors[:1]:  # a condition applies to the chain from the question's topic
        for p, ends in per_anchor[a].items():
            if gold <= ends and len(ends) > len(gold):
                options.append((len(p), p, a, ends))
    for _, p, a, ends in sorted(options)[:PAIR_PATHS]:
        for r, per in sorted(values.items()):
            have = {e: per[e] for e in ends if e in per}
            if not gold <= set(have):
                continue
            tries = [(op, None) for op in ORDERS] if ordered else []
            tries += [(op, v) for v in literals for op in COMPARISONS]
            for op, v in tries:
                if f1(apply_condition(have, op, v), gold) >= 1.0:
                    value = _as_written(v, ex.question) if v is not None else None
                    return 1.0, QueryPlan([a], [list(p)], Constraint(r, op, value))
    return None


def _as_written(v: float, question: str):
    """The literal as the question wrote it (1990, not 1990.0)."""
    for x in question_literals(question):
        if literal_value(x) == v:
            return written_value(x)
    return v


def label_plans(kg, examples: Sequence[QAExample], config: SupervisionConfig | None = None,
                adjacency: Adjacency | None = None) -> PlanReport:
    """Set `extra["plan"]` and `extra["plan_source"]` on every example (see the module doc).
    Questions whose chain label already explains their answers exactly (F1 = 1) stay chains without
    any further search, so a KG of chain questions costs next to nothing here."""
    config = config or SupervisionConfig()
    report = PlanReport()
    if getattr(kg, "per_question", False) and adjacency is None:
        # one subgraph per question (rra.graph.subgraphs): each question planned on its own graph
        for ex in examples:
            with kg.scope(ex) as graph:
                one = label_plans(graph, [ex], config)
            report.n += one.n
            for mine, theirs in ((report.shapes, one.shapes), (report.sources, one.sources)):
                for k, v in theirs.items():
                    mine[k] = mine.get(k, 0) + v
        report.shapes = dict(Counter(report.shapes).most_common())
        return report
    adj, attrs = adjacency, None
    for ex in examples:
        report.n += 1
        given = ex.extra.get("plan")
        plan = None
        if given and given.get("paths"):
            plan, source = QueryPlan.from_dict(given), "given"
        else:
            needs = len(set(ex.topic_entities)) > 1 or given or not _chain_exact(ex)
            if needs and ex.answers:
                if adj is None:
                    adj = build_adjacency(kg)
                    attrs = Attributes(kg, adj)
                if given and given.get("constraint"):  # a given condition: only the chain is derived
                    c = given["constraint"]
                    plan = _chain_for_condition(ex, adj, attrs, config,
                                                Constraint(c["relation"], c["op"], c.get("value")))
                else:
                    plan = derive_plan(ex, adj, attrs, config)
            source = "kg"
            if plan is None and ex.relation_path and ex.topic_entities:
                plan = QueryPlan([ex.topic_entities[0]], [list(ex.relation_path)])
        if plan is None:
            ex.extra.pop("plan", None)
            continue
        ex.extra["plan"] = plan.to_dict()
        ex.extra["plan_source"] = source
        if plan.shape != "chain" or source == "given":
            ex.relation_path = list(plan.paths[0])
        report.shapes[plan.shape] = report.shapes.get(plan.shape, 0) + 1
        report.sources[source] = report.sources.get(source, 0) + 1
    report.shapes = dict(Counter(report.shapes).most_common())
    return report


def _chain_exact(ex: QAExample) -> bool:
    cands = ex.extra.get("path_candidates") or []
    return bool(cands) and cands[0].get("f1") == 1.0


def _chain_for_condition(ex, adj, attrs: Attributes, config, constraint: Constraint) -> QueryPlan | None:
    """A given condition: the shortest chain from the first topic whose ends, filtered by the
    condition, explain the gold answers best."""
    gold = set(gold_nodes(ex))
    anchor = next((t for t in ex.topic_entities if adj.has(t)), None)
    if anchor is None:
        return None
    per = attrs.values().get(constraint.relation, {})
    best = None
    for p, ends in enumerate_paths(adj, anchor, config, gold).items():
        have = {e: per[e] for e in ends if e in per}
        score = f1(apply_condition(have, constraint.op, literal_value(constraint.value)), gold)
        key = (score, -len(p), tuple(p))
        if best is None or key > best[0]:
            best = (key, p)
    return QueryPlan([anchor], [list(best[1])], constraint) if best and best[0][0] > 0 else None
