"""Retrieve for questions beyond one chain: the retriever's plan reading -> scored query plans ->
their answers and evidence, executed on the graph (rra.plan.execute).

The pipeline asks the plan heads (rra.models.plan_head) about every question. A question read as
one chain takes the chain retrieval unchanged (rra.pipeline.retrieve). Otherwise:

- **conjunction**: the path predictor is asked once per anchor, with that anchor in focus
  (rra.plan.focus_text); every pair of anchors x their top paths is a candidate plan scored by the
  product of the two path scores;
- **condition**: the chain's top paths x the attribute head's top relations, with the operator of
  the condition head and, for a comparison, the literal written in the question; scored by
  path score x attribute probability x condition probability.

Candidates are executed best first until `topk` of them have answers; the others are reported as
dropped. The result is a `Retrieval` whose `plans` the graph scorer ranks by and whose evidence
holds the walks of every chain that reach an answer and the attribute triples the condition read,
so the rewriter and the LLM see both chains and the condition.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from itertools import combinations
from typing import Sequence

from rra.graph.base import GraphError, KnowledgeGraph, PathInstance, UnknownEntityError
from rra.plan import COMPARISONS, Constraint, QueryPlan, execute, literal_value, question_literals, written_value
from rra.linking import link_anchors
from rra.pipeline.retrieve import Evidence, Retrieval, ScoredPath
from rra.text import BRACKETED, relation_phrase


@dataclass
class ScoredPlan:
    plan: QueryPlan
    score: float
    ends: list[str] = field(default_factory=list)  # the plan's answers on the graph

    @property
    def path(self) -> list[str]:  # the first chain, where code reads a retrieved path
        return list(self.plan.paths[0])

    def describe(self, labels: dict[str, str] | None = None) -> str:
        return self.plan.describe(labels)

    def to_dict(self) -> dict:
        return {**self.plan.to_dict(), "score": self.score, "n_ends": len(self.ends)}


@dataclass
class PlanSpec:
    """What the pipeline hands over for one question: anchors (ids, best first), the per-anchor
    candidate paths (conjunction) or the chain's candidates plus condition options."""

    anchors: list[str]
    candidates: list[list]  # per anchor: PathPrediction-like (.path, .score), best first
    conditions: list[tuple[Constraint, float]] = field(default_factory=list)  # (condition, probability)
    reading: dict = field(default_factory=dict)  # the plan heads' reading, for the prediction's record


def condition_options(reading, question: str, mentions: Sequence[str], attributes: int = 2) -> list[tuple[Constraint, float]]:
    """(Constraint, probability) options from a plan reading: its best condition with the top
    attribute relations; a comparison takes the last literal written in the question (none: no options)."""
    op, p_op = reading.conditions[0]
    if op == "none":
        return []
    value = None
    if op in COMPARISONS:
        literals = [x for x in question_literals(question, mentions) if literal_value(x) is not None]
        if not literals:
            return []
        value = written_value(literals[-1])
    return [(Constraint(r, op, value), p_op * p) for r, p in reading.attributes[:attributes]]


def retrieve_plan(kg: KnowledgeGraph, spec: PlanSpec, semantics=None, topk: int = 3, max_triples: int = 50,
                  seed: int = 0, max_instances: int = 10_000, per_anchor: int = 3) -> Retrieval:
    options: list[tuple[float, QueryPlan]] = []
    if len(spec.anchors) > 1:
        for i, j in combinations(range(len(spec.anchors)), 2):
            for ci in spec.candidates[i][:per_anchor]:
                for cj in spec.candidates[j][:per_anchor]:
                    options.append((float(ci.score) * float(cj.score),
                                    QueryPlan([spec.anchors[i], spec.anchors[j]], [list(ci.path), list(cj.path)])))
    else:
        for c in spec.candidates[0][:per_anchor]:
            for cond, p in spec.conditions:
                options.append((float(c.score) * p, QueryPlan([spec.anchors[0]], [list(c.path)], cond)))
    options.sort(key=lambda o: -o[0])  # stable: ties keep the model's order

    out = Retrieval(spec.anchors[0])
    walks: dict[tuple[str, tuple[str, ...]], list[PathInstance]] = {}

    def walk(anchor: str, path: list[str]) -> list[PathInstance]:
        key = (anchor, tuple(path))
        if key not in walks:
            walks[key] = kg.follow_path(anchor, path, limit=max_instances)
        return walks[key]

    kept = []
    for score, plan in options:
        if len(kept) >= topk:
            break
        try:
            done = execute(kg, plan, semantics, max_instances,
                           walks=[walk(a, p) for a, p in zip(plan.anchors, plan.paths)])
        except UnknownEntityError as err:
            out.status, out.errors = "unknown_entity", [str(err)]
            return out
        except GraphError as err:
            out.errors.append(f"graph_error: plan {plan.describe()}: {type(err).__name__}: {err}")
            continue
        sp = ScoredPlan(plan, score, list(done.answers))
        if done.answers:
            kept.append((sp, done))
        else:
            out.dropped.append(_as_path(plan, score, 0, []))
    if not kept:
        out.status = "graph_error" if out.errors and not out.dropped else "no_path"
        tried = "; ".join(p.describe() for _, p in options[:4]) or "no candidate plan"
        out.errors.append(f"no query plan has an answer (tried {tried})")
        return out
    out.plans = [sp for sp, _ in kept]
    best_plan, best = kept[0]
    out.paths = [_as_path(best_plan.plan, best_plan.score, len(w), sorted({x.end for x in w}), k)
                 for k, w in enumerate(best.walks)]
    out.evidence = _evidence(kept, max_triples, seed)
    return out


def _as_path(plan: QueryPlan, score: float, instances: int, ends: list[str], k: int = 0) -> ScoredPath:
    return ScoredPath(list(plan.paths[k]), score, len(plan.paths[k]), 1.0, instances, ends)


def _evidence(kept, max_triples: int, seed: int) -> list[Evidence]:
    """The walks of every chain that reach an answer, chains taking turns so that both are shown,
    then the attribute triples the condition read; best plan first, capped at `max_triples`."""
    seen: dict = {}
    rng = random.Random(seed)
    for sp, done in kept:
        queues = []
        for k, ws in enumerate(done.walks):
            order = list(ws)
            rng.shuffle(order)
            queues.append((tuple(sp.plan.paths[k]), order))
        for t in done.condition_triples:  # the condition's facts first: few, and they decide
            if len(seen) < max_triples:
                seen.setdefault(t, Evidence(t, (sp.plan.constraint.relation,), sp.score))
        while any(q for _, q in queues) and len(seen) < max_triples:
            for path, q in queues:
                if q:
                    for t in q.pop(0).triples:
                        if len(seen) < max_triples:
                            seen.setdefault(t, Evidence(t, path, sp.score))
    return list(seen.values())


# --- how the pipeline reads a question for planning ------------------------------------------------
def plan_text(question: str, link) -> str:
    """The question with every anchor mention marked `[...]` (unchanged when it is marked already):
    what the plan heads read, every anchor masked as the topic."""
    if BRACKETED.search(question):
        return question
    for m in sorted(link_anchors(link)[1], key=len, reverse=True):
        i = question.casefold().find(m.casefold())
        if i >= 0:
            question = f"{question[:i]}[{question[i:i + len(m)]}]{question[i + len(m):]}"
    return question


def plan_sentence(plan: QueryPlan, labels: dict[str, str], name=lambda r: r) -> str:
    """The plan in words, appended to the knowledge text the answerer reads."""
    chains = [f"{labels.get(a, a)} via {' then '.join(relation_phrase(name(r)) for r in p)}"
              for a, p in zip(plan.anchors, plan.paths)]
    text = "Query plan: the answers are reached from " + " and from ".join(chains)
    c = plan.constraint
    if c is not None:
        what = relation_phrase(name(c.relation))
        text += (f", keeping those with the {'largest' if c.op == 'argmax' else 'smallest'} {what}"
                 if c.op in ("argmax", "argmin") else f", keeping those whose {what} is {c.op} {c.value}")
    return text + "."
