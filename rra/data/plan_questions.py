"""Questions beyond one chain over any KG, from templates: two anchors (conjunction), a comparison
with a year or number, and an order (first / last). The built-in data set mixes them with the
chain questions of rra.data.question_generator.

Templates (YAML, rra/data/builtin/plan_templates.yaml) name, per relation walked *to* the answers,
a `filter` phrase ("written by {e}") and the kind of answer (`noun`: "books"); frames combine them:

    conjunction: "which {noun} {f1} and {f2}"           -> "which books written by [X] and set in [Y]"
    comparison:  "which {noun} {f} {attr_after} {v}"     -> "which books written by [X] came out after 1990"
    order:       "what is the {first} {noun1} {f}"       -> "what is the earliest book set in [Y]"

Every question carries its gold plan (`extra["plan"]`, rra.plan.QueryPlan.to_dict()), its answers
are the plan executed on the KG (rra.plan.execute), and it is kept only when the plan's condition
or intersection actually matters (fewer answers than the chain alone) and has 1..max_answers answers.
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Sequence

from rra.data.supervision import build_adjacency
from rra.plan import Constraint, QueryPlan, apply_condition, attribute_values, execute
from rra.records import QAExample

SHAPES = ("conjunction", "comparison", "order")


def load_plan_templates(path: str | Path) -> dict:
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    for key in ("filters", "conjunction", "comparison", "order"):
        if key not in data:
            raise ValueError(f"{path}: plan templates need a {key!r} section")
    return data


def generate_plan_questions(kg, n_per_shape: int, templates: dict, seed: int = 0, max_answers: int = 10,
                            id_prefix: str = "plan", shapes: Sequence[str] = SHAPES) -> list[QAExample]:
    """`n_per_shape` distinct questions of each shape (fewer if the KG has no more), deterministic
    for a KG, templates and seed."""
    rng = random.Random(seed)
    filters = templates["filters"]  # relation -> {"noun": ..., "phrases": [...]} (answers reached by it)
    by_noun: dict[str, list[str]] = {}
    for rel, f in filters.items():
        by_noun.setdefault(f["noun"], []).append(rel)
    adj = build_adjacency(kg)  # one pass over the KG; the walks below are dictionary lookups
    starts = {rel: sorted(adj.by_relation.get(rel, {})) for rel in filters}
    attrs = {a for key in ("comparison", "order") for a in templates[key]}
    every = sorted(adj.entities or ())
    values = {a: attribute_values(kg, every, a)[0] for a in attrs}
    out: list[QAExample] = []
    for shape in shapes:
        made, seen, misses = 0, set(), 0
        while made < n_per_shape and misses < 2000:  # 2000 tries in a row with nothing new: exhausted
            misses += 1
            ex = _make(shape, kg, adj, values, rng, templates, filters, by_noun, starts, max_answers)
            if ex is None:
                continue
            key = (shape, tuple(ex.topic_entities), str(ex.extra["plan"]))
            if key in seen:
                continue
            if set(execute(kg, QueryPlan.from_dict(ex.extra["plan"])).answers) != set(ex.answers):
                continue  # never: the plan as executed on the graph must give the question's answers
            seen.add(key)
            misses = 0
            ex.qid = f"{id_prefix}-{shape}-{made}"
            out.append(ex)
            made += 1
    return out


def _ends(adj, anchor: str, relation: str) -> set[str]:
    return set(adj.by_relation.get(relation, {}).get(anchor, ()))


def _phrase(rng, filters, rel: str, label: str) -> str:
    return rng.choice(filters[rel]["phrases"]).format(e=f"[{label}]")


def _make(shape, kg, adj, attr_values, rng, templates, filters, by_noun, starts, max_answers) -> QAExample | None:
    if shape == "conjunction":
        noun = rng.choice(sorted(by_noun))
        rels = by_noun[noun]
        if len(rels) < 2:
            return None
        r1, r2 = rng.sample(rels, 2)
        a1, a2 = rng.choice(starts[r1]), rng.choice(starts[r2])
        if a1 == a2:
            return None
        e1, e2 = _ends(adj, a1, r1), _ends(adj, a2, r2)
        answers = e1 & e2
        if not answers or len(answers) > max_answers or answers in (e1, e2):
            return None  # the intersection must matter: neither chain alone is the answer
        plan = QueryPlan([a1, a2], [[r1], [r2]])
        text = rng.choice(templates["conjunction"]).format(
            noun=noun, f1=_phrase(rng, filters, r1, kg.label(a1)), f2=_phrase(rng, filters, r2, kg.label(a2)))
    else:
        attr = rng.choice(sorted(templates[shape]))
        spec = templates[shape][attr]
        rel = rng.choice([r for r in spec["relations"] if r in filters])
        anchor = rng.choice(starts[rel])
        ends = _ends(adj, anchor, rel)
        if len(ends) < 2:
            return None
        values = {e: attr_values[attr][e] for e in ends if e in attr_values[attr]}
        if len(values) < 2:
            return None
        if shape == "comparison":
            op = rng.choice(sorted(spec["frames"]))
            years = sorted({int(v) for vs in values.values() for v in vs})
            value = rng.choice(range(years[0] - 1, years[-1] + 2))
            answers = apply_condition(values, op, value)
            frame = rng.choice(spec["frames"][op])
            plan = QueryPlan([anchor], [[rel]], Constraint(attr, op, value))
        else:
            op = rng.choice(sorted(spec["frames"]))
            answers = apply_condition(values, op)
            frame = rng.choice(spec["frames"][op])
            plan = QueryPlan([anchor], [[rel]], Constraint(attr, op))
            value = None
        if not answers or len(answers) > max_answers or answers == ends or (shape == "order" and len(answers) > 1):
            return None
        noun = filters[rel]["noun"]
        text = frame.format(noun=noun, one=filters[rel].get("one", noun), v=value,
                            f=_phrase(rng, filters, rel, kg.label(anchor)))
    ordered = sorted(answers)
    return QAExample(question=text, topic_entities=list(plan.anchors), answers=ordered,
                     relation_path=list(plan.paths[0]), hops=None, source=f"generated:{shape}",
                     extra={"plan": plan.to_dict(), "shape": plan.shape, "gold_path": list(plan.paths[0]),
                            "answer_labels": [kg.label(a) for a in ordered]})
