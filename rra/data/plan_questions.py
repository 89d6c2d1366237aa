"""Questions beyond one chain over any KG, from templates: two and three anchors, a comparison with
a literal, two conditions, two anchors and a condition, an order, a chain through a node the
question names, a count and a yes/no. The built-in data set mixes them with the chain questions of
rra.data.question_generator.

Templates (YAML, rra/data/builtin/plan_templates.yaml) name, per relation walked *to* the answers,
a `filter` phrase ("written by {e}") and the kind of answer (`noun`: "books"); frames combine them:

    conjunction:       "which {noun} {f1} and {f2}"       -> "which books written by [X] and set in [Y]"
    comparison:        "which {noun} {f} came out after {v}" -> "which books written by [X] came out after 1990"
    order:             "what is the first {one} {f}"       -> "what is the first book set in [Y]"
    intermediate:      "where is the {v} book by {a} set"  -> "where is the [poetry] book by [X] set"
    count:             "how many books did {e} write"      -> answer "3"
    yes_no:            "did {x} write {e}"                 -> answer "yes" / "no"

Every question carries its gold plan (`extra["plan"]`, rra.plans.plan.QueryPlan.to_dict()) and its shape;
its answers are the plan executed on the KG (rra.plans.execution.execute), and it is kept only when every part
of the plan matters (dropping an anchor, a condition or the named node changes the answers; an
order has one extreme) and it has 1..max_answers answers; yes/no questions alternate yes and no.
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Sequence

from rra.data.supervision import build_adjacency
from rra.plans.execution import apply_condition, attribute_values, execute
from rra.plans.plan import Constraint, QueryPlan, Via
from rra.records import QAExample

SHAPES = ("conjunction", "three_anchors", "comparison", "two_conditions", "anchors_condition", "order",
          "intermediate", "count", "yes_no")
SECTIONS = ("filters", "conjunction", "comparison", "order")  # the sections every template file has


def load_plan_templates(path: str | Path) -> dict:
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    for key in SECTIONS:
        if key not in data:
            raise ValueError(f"{path}: plan templates need a {key!r} section")
    return data


def generate_plan_questions(kg, n_per_shape: int | dict, templates: dict, seed: int = 0, max_answers: int = 10,
                            id_prefix: str = "plan", shapes: Sequence[str] = SHAPES) -> list[QAExample]:
    """`n_per_shape` distinct questions of each shape (a number, or one per shape; fewer if the KG
    has no more), deterministic for a KG, templates and seed. Shapes whose section the templates
    lack are skipped."""
    rng = random.Random(seed)
    maker = _Maker(kg, templates, rng, max_answers)
    out: list[QAExample] = []
    for shape in shapes:
        if shape not in templates and shape not in SECTIONS:
            continue
        want = n_per_shape.get(shape, 0) if isinstance(n_per_shape, dict) else n_per_shape
        made, seen, misses = 0, set(), 0
        while made < want and misses < 2000:  # 2000 tries in a row with nothing new: exhausted
            misses += 1
            got = getattr(maker, shape)(yes=made % 2 == 0) if shape == "yes_no" else getattr(maker, shape)()
            if got is None:
                continue
            plan, text = got
            key = (shape, str(plan.to_dict()))
            if key in seen:
                continue
            answers = execute(kg, plan).answers
            if not answers or (plan.aggregate is None and len(answers) > max_answers):
                continue
            seen.add(key)
            misses = 0
            topics = list(dict.fromkeys(plan.anchors + ([plan.via.entity] if plan.via else [])
                                        + ([plan.ask] if plan.ask else [])))
            labels = [kg.label(a) for a in answers] if plan.aggregate is None else list(answers)
            out.append(QAExample(question=text, topic_entities=topics, answers=list(answers),
                                 relation_path=list(plan.paths[0]), hops=None, qid=f"{id_prefix}-{shape}-{made}",
                                 source=f"generated:{shape}",
                                 extra={"plan": plan.to_dict(), "shape": shape, "gold_path": list(plan.paths[0]),
                                        "answer_labels": labels}))
            made += 1
    return out


class _Maker:
    """Draws one plan and its question text per call of a shape's method (None: try again)."""

    def __init__(self, kg, templates: dict, rng: random.Random, max_answers: int):
        self.kg, self.t, self.rng, self.max_answers = kg, templates, rng, max_answers
        self.filters = templates["filters"]  # relation -> {"noun", "one", "phrases"} (answers reached by it)
        self.by_noun: dict[str, list[str]] = {}
        for rel, f in self.filters.items():
            self.by_noun.setdefault(f["noun"], []).append(rel)
        self.adj = build_adjacency(kg)  # one pass over the KG; the walks below are dictionary lookups
        self.starts = {rel: sorted(self.adj.by_relation.get(rel, {})) for rel in self.filters}
        attrs = {a for key in ("comparison", "order", "two_conditions", "anchors_condition") for a in templates.get(key, {})}
        every = sorted(self.adj.entities or ())
        self.values = {a: attribute_values(kg, every, a)[0] for a in attrs}

    # -- helpers -------------------------------------------------------------------------------
    def ends(self, anchor: str, relation: str) -> set[str]:
        return set(self.adj.by_relation.get(relation, {}).get(anchor, ()))

    def mark(self, entity: str) -> str:
        return f"[{self.kg.label(entity)}]"

    def phrase(self, rel: str, anchor: str) -> str:
        return self.rng.choice(self.filters[rel]["phrases"]).format(e=self.mark(anchor))

    def small(self, answers) -> bool:
        return 0 < len(answers) <= self.max_answers

    def filters_of(self, k: int) -> tuple[str, list[tuple[str, str]]] | None:
        """A noun and k (relation, anchor) filters of it whose chains meet (a random shared answer's)."""
        noun = self.rng.choice(sorted(self.by_noun))
        rels = self.by_noun[noun]
        if len(rels) < k:
            return None
        picked = self.rng.sample(rels, k)
        start = self.rng.choice(self.starts[picked[0]])
        target = self.rng.choice(sorted(self.ends(start, picked[0])))
        out = [(picked[0], start)]
        for r in picked[1:]:
            options = sorted(self.adj.by_relation.get(r[1:] if r.startswith("^") else "^" + r, {}).get(target, ()))
            if not options:
                return None
            out.append((r, self.rng.choice(options)))
        if len({a for _, a in out}) < k:
            return None
        return noun, out

    def pick_value(self, values: dict[str, list[float]]) -> int | None:
        years = sorted({int(v) for vs in values.values() for v in vs})
        if len(years) < 2:
            return None
        return self.rng.choice(range(years[0], years[-1] + 1))

    # -- shapes --------------------------------------------------------------------------------
    def conjunction(self):
        got = self.filters_of(2)
        if got is None:
            return None
        noun, ((r1, a1), (r2, a2)) = got
        e1, e2 = self.ends(a1, r1), self.ends(a2, r2)
        if (e1 & e2) in (e1, e2):
            return None  # the intersection must matter: neither chain alone is the answer
        text = self.rng.choice(self.t["conjunction"]).format(noun=noun, f1=self.phrase(r1, a1), f2=self.phrase(r2, a2))
        return QueryPlan([a1, a2], [[r1], [r2]]), text

    def three_anchors(self):
        got = self.filters_of(3)
        if got is None:
            return None
        noun, picks = got
        sets = [self.ends(a, r) for r, a in picks]
        joined = sets[0] & sets[1] & sets[2]
        if any(sets[i] & sets[j] == joined for i in range(3) for j in range(i + 1, 3)):
            return None  # each anchor must matter
        f1, f2, f3 = (self.phrase(r, a) for r, a in picks)
        text = self.rng.choice(self.t["three_anchors"]).format(noun=noun, f1=f1, f2=f2, f3=f3)
        return QueryPlan([a for _, a in picks], [[r] for r, _ in picks]), text

    def _attribute_chain(self, section: str):
        attr = self.rng.choice(sorted(self.t[section]))
        spec = self.t[section][attr]
        rel = self.rng.choice([r for r in spec["relations"] if r in self.filters])
        anchor = self.rng.choice(self.starts[rel])
        ends = self.ends(anchor, rel)
        values = {e: self.values[attr][e] for e in ends if e in self.values[attr]}
        if len(ends) < 2 or len(values) < 2:
            return None
        return attr, spec, rel, anchor, ends, values

    def comparison(self):
        got = self._attribute_chain("comparison")
        if got is None:
            return None
        attr, spec, rel, anchor, ends, values = got
        op = self.rng.choice(sorted(spec["frames"]))
        value = self.pick_value(values)
        kept = apply_condition(values, op, value) if value is not None else set()
        if not self.small(kept) or kept == ends:
            return None
        text = self.rng.choice(spec["frames"][op]).format(noun=self.filters[rel]["noun"], v=value,
                                                          f=self.phrase(rel, anchor))
        return QueryPlan([anchor], [[rel]], Constraint(attr, op, value)), text

    def two_conditions(self):
        if "two_conditions" not in self.t:
            return None
        got = self._attribute_chain("two_conditions")
        if got is None:
            return None
        attr, spec, rel, anchor, ends, values = got
        ops = self.rng.choice(sorted(spec["frames"]))
        lo_op, hi_op = ops.split()
        bounds = sorted({self.pick_value(values), self.pick_value(values)} - {None})
        if len(bounds) != 2:
            return None
        v, w = bounds
        lo, hi = apply_condition(values, lo_op, v), apply_condition(values, hi_op, w)
        kept = lo & hi
        if not self.small(kept) or kept in (lo, hi, ends):
            return None
        text = self.rng.choice(spec["frames"][ops]).format(noun=self.filters[rel]["noun"], v=v, w=w,
                                                           f=self.phrase(rel, anchor))
        return QueryPlan([anchor], [[rel]], [Constraint(attr, lo_op, v), Constraint(attr, hi_op, w)]), text

    def anchors_condition(self):
        if "anchors_condition" not in self.t:
            return None
        got = self.filters_of(2)
        if got is None:
            return None
        noun, ((r1, a1), (r2, a2)) = got
        attr = self.rng.choice(sorted(self.t["anchors_condition"]))
        frames = self.t["anchors_condition"][attr]["frames"]
        op = self.rng.choice(sorted(frames))
        e1, e2 = self.ends(a1, r1), self.ends(a2, r2)
        both = e1 & e2
        values = {e: self.values[attr][e] for e in e1 | e2 if e in self.values[attr]}
        value = self.pick_value(values)
        if value is None:
            return None
        kept = apply_condition({e: v for e, v in values.items() if e in both}, op, value)
        alone = [apply_condition({e: v for e, v in values.items() if e in s}, op, value) for s in (e1, e2)]
        if not self.small(kept) or kept == both or kept in alone:
            return None
        text = self.rng.choice(frames[op]).format(noun=noun, f1=self.phrase(r1, a1), f2=self.phrase(r2, a2), v=value)
        return QueryPlan([a1, a2], [[r1], [r2]], Constraint(attr, op, value)), text

    def order(self):
        got = self._attribute_chain("order")
        if got is None:
            return None
        attr, spec, rel, anchor, ends, values = got
        op = self.rng.choice(sorted(spec["frames"]))
        kept = apply_condition(values, op)
        if len(kept) != 1 or kept == ends:
            return None
        noun = self.filters[rel]["noun"]
        text = self.rng.choice(spec["frames"][op]).format(noun=noun, one=self.filters[rel].get("one", noun),
                                                          f=self.phrase(rel, anchor))
        return QueryPlan([anchor], [[rel]], Constraint(attr, op)), text

    def intermediate(self):
        if not self.t.get("intermediate"):
            return None
        spec = self.rng.choice(self.t["intermediate"])
        first, rest = spec["path"][0], spec["path"][1:]
        anchor = self.rng.choice(self.starts.get(first) or sorted(self.adj.by_relation.get(first, {})))
        middle = sorted(self.ends(anchor, first))
        if len(middle) < 2:
            return None
        node = self.rng.choice(middle)
        named = sorted(self.ends(node, spec["via"]))
        if not named:
            return None
        plan = QueryPlan([anchor], [list(spec["path"])], via=Via(1, spec["via"], self.rng.choice(named)))
        without = set(execute(self.kg, QueryPlan([anchor], [list(spec["path"])])).answers)
        if set(execute(self.kg, plan).answers) == without:
            return None  # the named node must matter
        text = self.rng.choice(spec["frames"]).format(a=self.mark(anchor), v=self.mark(plan.via.entity))
        return plan, text

    def count(self):
        if not self.t.get("count"):
            return None
        rel = self.rng.choice(sorted(self.t["count"]))
        starts = sorted(self.adj.by_relation.get(rel, {}))
        if not starts:
            return None
        anchor = self.rng.choice(starts)
        text = self.rng.choice(self.t["count"][rel]).format(e=self.mark(anchor))
        return QueryPlan([anchor], [[rel]], aggregate="count"), text

    def yes_no(self, yes: bool = True):
        if not self.t.get("yes_no"):
            return None
        rel = self.rng.choice(sorted(self.t["yes_no"]))
        starts = sorted(self.adj.by_relation.get(rel, {}))
        if not starts:
            return None
        anchor = self.rng.choice(starts)
        ends = self.ends(anchor, rel)
        pool = sorted(ends) if yes else sorted({x for e in starts for x in self.ends(e, rel)} - ends - {anchor})
        if not pool:
            return None
        asked = self.rng.choice(pool)
        text = self.rng.choice(self.t["yes_no"][rel]).format(e=self.mark(anchor), x=self.mark(asked))
        return QueryPlan([anchor], [[rel]], aggregate="ask", ask=asked), text
