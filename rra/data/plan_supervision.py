"""Query-plan supervision from the KG: which plans explain a question's gold answers, and which
of the other candidate plans are wrong (what the plan ranker, rra.models.plan_ranker, learns from).

For a question with answers (ids or values, a count "7", "yes" / "no") the candidates are built as
at inference (rra.plans.candidates.enumerate_plans), from the KG's own paths in place of the path
predictor's: per anchor, the paths that reach a gold answer (or, for a count, paths with that many
results; for a yes/no, paths that could hold another entity the question names,
rra.plans.reads.KindCheck), the best one walked a step further or stopped a step short, and a
seeded sample of its other short paths. Every candidate whose answers are exactly the gold ones explains the
question; the **positives** are those of the fewest parts (`QueryPlan.complexity`: anchors,
conditions, a named intermediate; an order only where the question has an order word, since one
answer among several is often an extreme by chance), the **negatives** a seeded sample of the
candidates whose answers differ. When nothing explains the answers exactly, the best chain is the
positive. A plan the data gives (`extra["plan"]` from the question file) is the only positive.

Every question with candidates ends with `extra["plan_candidates"]` = {"positive": [plan dicts],
"negative": [plan dicts]}, and every question with a plan with `extra["plan"]` (the positive that
explains the most questions of the set, rra.plans.text.plan_words read alike: a consistent label for the
path predictor's per-anchor items) and `extra["plan_source"]` (given | kg).

Cost: chain questions whose chain label is exact cost next to nothing unless the set has other
shapes (then the ranker must learn to leave chains alone).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from rra.data.supervision import (Adjacency, SupervisionConfig, _read_cache, _write_cache, enumerate_paths,
                                  resolve_adjacency)
from rra.plans.candidates import Candidate, answers_match, enumerate_plans
from rra.plans.plan import QueryPlan, has_order_word, question_literals
from rra.plans.reads import AttributeSchema, Chain, KindCheck, PlanLimits, PlanReads
from rra.plans.text import plan_words, ranker_text
from rra.records import QAExample
from rra.text.matching import normalize_answer
from rra.text.relations import relation_phrase

YES_NO = frozenset({"yes", "no"})
PLAN_SUPERVISION_VERSION = 14  # bump when the candidates or the ranker text change, so cached ones stop matching (7: yes/no chains by kind; 8: near misses; 9: result kinds; 10: a date against a year by its year; 11: conditions that keep every entity; 12: tied result kinds named by the most specific class; 13: answers given by label match their nodes, round trips to the anchor are no chain; 14: an attribute decided from entities that have it)
TRAIN_LIMITS = PlanLimits(max_plans=300, paths_per_anchor=10, modifier_bases=10)


@dataclass
class PlanReport:
    n: int = 0
    shapes: dict = field(default_factory=dict)  # shape of extra["plan"] -> questions
    sources: dict = field(default_factory=dict)  # given | kg -> questions
    ranked: int = 0  # questions with candidates (positives and negatives) for the plan ranker
    exact: int = 0  # ... of which some plan explains the answers exactly

    def to_dict(self) -> dict:
        return {"n": self.n, "shapes": dict(self.shapes), "sources": dict(self.sources), "ranked": self.ranked,
                "exact": self.exact}


def answer_kind(answers: Sequence[str]) -> str:
    """entities (ids or values) / count (one whole number) / yes_no."""
    norm = {normalize_answer(a) for a in answers}
    if norm and norm <= YES_NO:
        return "yes_no"
    if len(norm) == 1 and next(iter(norm)).isdigit():
        return "count"
    return "entities"


class GraphIndex:
    """The KG read once for supervision: its adjacency, its literal nodes by value text (a gold
    answer "2017" is the node `"2017"^^xsd:gYear`), and a graph view over the adjacency that the
    plan enumeration reads (`neighbors_batch`, `relations_batch`, `labels`) at dictionary speed."""

    def __init__(self, kg, adj: Adjacency | Callable[[], Adjacency] | None = None):
        self.kg, self.adj = kg, resolve_adjacency(kg, adj)
        self._values: dict[str, list[str]] | None = None
        self._relations: dict[str, list[str]] | None = None
        self._sorted: dict[str, dict[str, tuple[str, ...]]] = {}
        self.schema = AttributeSchema(self)
        self.kinds = KindCheck(self)
        self.plan_kinds: dict[tuple, str | None] = {}  # QueryPlan.key() -> what its results are (Candidate.kind)

    def neighbors_batch(self, entities, relation: str) -> dict[str, tuple[str, ...]]:
        """As the graph protocol's, sorted, but as tuples kept for the next question (the plan
        enumeration only reads them): a hub's thousands of neighbours were sorted and copied for
        every question that passed it."""
        m = self.adj.by_relation.get(relation, {})
        done = self._sorted.setdefault(relation, {})
        out = {}
        for e in dict.fromkeys(entities):
            if e in m:
                if e not in done:
                    done[e] = tuple(sorted(m[e]))
                out[e] = done[e]
        return out

    def neighbors_by_relation(self, wanted: dict) -> dict[str, dict[str, tuple[str, ...]]]:
        return {r: self.neighbors_batch(es, r) for r, es in wanted.items()}

    def relations_batch(self, entities, direction: str = "both") -> dict[str, list[str]]:
        if self._relations is None:
            if self.adj.entities is None:  # a lazy adjacency: ask the graph
                return self.kg.relations_batch(entities)
            rels = defaultdict(list)
            for r, m in self.adj.by_relation.items():
                for e in m:
                    rels[e].append(r)
            self._relations = dict(rels)
        return {e: self._relations.get(e, []) for e in dict.fromkeys(entities)}

    def labels(self, entities) -> dict[str, str]:
        return self.kg.labels(entities)

    def nodes(self, answers: Sequence[str]) -> set[str]:
        out = set()
        for a in answers:
            if self.adj.has(a):
                out.add(a)
                continue
            if self._values is None:
                self._values = defaultdict(list)
                for n in self.adj.entities or ():
                    if n[:1] == '"':
                        self._values[normalize_answer(n)].append(n)
            out.update(self._values.get(normalize_answer(a), ()))
        return out


def training_chains(index: GraphIndex, ex: QAExample, anchors: Sequence[str], config: SupervisionConfig,
                    rng: random.Random, relevant: int = 6, others: int = 4) -> list[Chain]:
    """Per anchor, the paths that may explain the answers (score 1, best first), the best one's near
    misses (`_near_misses`) and a seeded sample of its other paths of 1-2 relations (score 0.1):
    what the path predictor's beam would offer."""
    kind = answer_kind(ex.answers)
    short = SupervisionConfig(max_hops=min(2, config.max_hops), max_frontier=config.max_frontier,
                              semantics=config.semantics)
    named = list(ex.answers) + [x for ids in (getattr(ex, "answer_ids", None) or []) for x in ids]
    gold = index.nodes(named) if kind != "yes_no" else set()  # a number may be a value node too
    out = []
    for a in anchors:
        everything = enumerate_paths(index.adj, a, short)
        reach = enumerate_paths(index.adj, a, config, gold) if gold else {}
        good = sorted(reach, key=lambda p: (not gold <= reach[p], len(p), -len(reach[p] & gold) / len(reach[p] | gold),
                                            p))
        if kind == "count":
            n = int(normalize_answer(ex.answers[0]))
            good = good[: relevant // 2] + sorted((p for p, ends in everything.items() if len(ends) == n),
                                                  key=lambda p: (len(p), p))
        elif kind == "yes_no":
            # the paths that could hold the other named entity (KindCheck), those that do first at
            # each length: for a "no", a path that does not reach it explains the answer only if it
            # asks the right kind of thing; a random path ("no" to anything) would be a positive
            named = set(ex.topic_entities) - {a}
            good = sorted((p for p, ends in everything.items()
                           if any(index.kinds.could_be_among(e, p[-1], ends) for e in named)),
                          key=lambda p: (len(p), not everything[p] & named, p))
        good = good[:relevant]
        near = _near_misses(everything, good, rng) if kind != "yes_no" else []
        rest = sorted(set(everything) - set(good) - set(near))
        # graded like a beam: the likelier explanations first, so the best ones get conditions and orders
        out += [Chain(a, p, 0.9 ** k) for k, p in enumerate(good)]
        out += [Chain(a, p, 0.1) for p in near + rng.sample(rest, min(others, len(rest)))]
    return out


def _near_misses(everything: dict, good: list, rng: random.Random, longer: int = 2) -> list[tuple[str, ...]]:
    """What a beam confuses with the best explanation: that path one relation shorter (the
    intermediate), and one relation longer (walking on past the answer: "in what year was X first
    released" read as the papers of that year), which the ranker must learn to leave."""
    if not good:
        return []
    best = good[0]
    near = [best[:-1]] if len(best) > 1 and best[:-1] in everything else []
    on = sorted(p for p in everything if len(p) == len(best) + 1 and p[:-1] == best)
    near += rng.sample(on, min(longer, len(on)))
    return [p for p in near if p not in good]


def derive_candidates(index: GraphIndex, ex: QAExample, config: SupervisionConfig, rng: random.Random,
                      given: QueryPlan | None = None, limits: PlanLimits = TRAIN_LIMITS,
                      max_negatives: int = 24, conditions: list[dict] | None = None
                      ) -> tuple[list[QueryPlan], list[QueryPlan], bool]:
    """(positives, negatives, exact) of one question (see the module doc); `conditions`: the
    question's own conditions (a file's `constraint` without paths), which the positives must hold."""
    anchors = [t for t in dict.fromkeys(ex.topic_entities) if index.adj.has(t)][: limits.max_anchors]
    if not anchors or not ex.answers:
        return ([given] if given else []), [], False
    mentions = _mentions(index.kg, ex)
    chains = training_chains(index, ex, anchors, config, rng)
    if given is not None:  # the given plan's own chains are candidates too
        chains = [Chain(a, tuple(p), 1.0) for a, p in zip(given.anchors, given.paths)] + chains
    found = enumerate_plans(index, chains, question_literals(ex.question, mentions), ex.topic_entities,
                            limits, config.semantics,
                            reads=PlanReads(index, config.semantics, limits, index.schema, index.kinds))
    index.plan_kinds.update((c.plan.key(), c.kind) for c in found)
    gold, read = gold_reader(ex)
    matched = [answers_match(read(c.answers), gold) for c in found]
    right = [c for c, ok in zip(found, matched) if ok]
    wrong = _negatives([c.plan for c, ok in zip(found, matched) if not ok],
                       [given] if given is not None else [c.plan for c in right], rng, max_negatives)
    if given is not None:
        return [given], wrong, True
    ordered = has_order_word(ex.question)
    right = [c for c in right if ordered or c.plan.order is None]
    if conditions:
        right = [c for c in right if [x.to_dict() for x in c.plan.constraints] == conditions]
    if right:
        return [c.plan for c in right], wrong, True
    chain = _best_chain(found, gold, read)
    return ([chain] if chain else []), wrong, False


def _negatives(wrong: list[QueryPlan], right: list[QueryPlan], rng: random.Random, n: int) -> list[QueryPlan]:
    """A seeded sample of the wrong plans, those sharing a chain with a right one first (the count,
    the order or the condition on the right chain, the intersection with one anchor too few: what
    the ranker must tell apart), two thirds of them at most."""
    chains = {(a, tuple(p)) for plan in right for a, p in zip(plan.anchors, plan.paths)}
    near = [w for w in wrong if any((a, tuple(p)) in chains for a, p in zip(w.anchors, w.paths))]
    far = [w for w in wrong if not any((a, tuple(p)) in chains for a, p in zip(w.anchors, w.paths))]
    near = rng.sample(near, min(len(near), max(n - len(far), 2 * n // 3)))
    return near + rng.sample(far, min(len(far), n - len(near)))


def gold_reader(ex: QAExample) -> tuple[set[str], Callable[[Sequence[str]], list[str]]]:
    """(the gold answers normalised, a function reading a plan's answers as those): a plan's
    answer that is a node one gold answer names (`answer_ids`: the answer given by its label,
    "Glass Ballad" for `dbr:Glass_Ballad`) reads as that answer, so a set naming its answers by
    label gets its plans explained as a set of ids does."""
    alias: dict[str, str] = {}
    for a, ids in zip(ex.answers, getattr(ex, "answer_ids", None) or [()] * len(ex.answers)):
        g = normalize_answer(a)
        alias[g] = g
        for x in ids:
            alias.setdefault(normalize_answer(x), g)
    return set(alias.values()), lambda answers: [alias.get(n, n) for n in map(normalize_answer, answers)]


def _best_chain(found: Sequence[Candidate], gold: set[str], read) -> QueryPlan | None:
    best = None
    for c in found:
        if c.plan.is_chain:
            got = set(read(c.answers))
            hits = len(got & gold)
            score = 2 * hits / (len(got) + len(gold)) if hits else 0.0
            if score > 0 and (best is None or score > best[0]):
                best = (score, c.plan)
    return best[1] if best else None


def _mentions(kg, ex: QAExample) -> list[str]:
    try:
        labels = kg.labels(ex.topic_entities)
    except Exception:  # noqa: BLE001 - labels are a nicety here: ids still mask
        labels = {}
    return [labels.get(t) or t for t in ex.topic_entities] + list(ex.topic_entities)


def ranker_question(ex: QAExample, mentions: Sequence[str], mask: str | None = "[E]") -> tuple[str, dict]:
    """rra.plans.text.ranker_text of a question (the same text at inference)."""
    return ranker_text(ex.question, mentions, mask)


def label_plans(kg, examples: Sequence[QAExample], config: SupervisionConfig | None = None,
                adjacency: Adjacency | Callable[[], Adjacency] | None = None, seed: int = 0, max_chains: int = 20_000,
                max_negatives: int = 24, cache_dir=None, every_question: bool = False,
                round_trips: bool = False) -> PlanReport:
    """Set `extra["plan_candidates"]`, `extra["plan"]` and `extra["plan_source"]` (module doc).
    Questions that name one entity and whose chain label explains their answers exactly (F1 = 1)
    are chains, and get candidates (at most `max_chains` of them) only if another question of the
    set is not one, or with `every_question` (a ranker over chains alone): a set of chains
    otherwise costs next to nothing here. `round_trips`: a chain that only walks back to its anchor
    is a candidate (PlanLimits.round_trips)."""
    config = config or SupervisionConfig()
    limits = dataclasses.replace(TRAIN_LIMITS, round_trips=True) if round_trips else TRAIN_LIMITS
    report = PlanReport()
    if getattr(kg, "per_question", False) and adjacency is None:
        for ex in examples:  # one subgraph per question (rra.graph.subgraphs): each on its own graph
            with kg.scope(ex) as graph:
                one = label_plans(graph, [ex], config, seed=seed, max_negatives=max_negatives,
                                  every_question=every_question, round_trips=round_trips)
            _merge(report, one)
        return report
    cache_file = None
    if cache_dir is not None:
        cache_file = Path(cache_dir) / f"plans-{_cache_key(kg, examples, config, seed, max_chains, max_negatives, *(['every_question'] if every_question else []), *(['round_trips'] if round_trips else []))}.json.gz"
        cached = _read_cache(cache_file)
        if cached is not None and len(cached) == len(examples):
            for ex, got in zip(examples, cached):
                ex.extra.pop("plan_candidates", None)
                if got:
                    ex.extra.update(got)
            return _finish(kg, examples, report)
    rng = random.Random(seed)
    index = None
    simple, rest = [], []
    for ex in examples:
        ex.extra.pop("plan_candidates", None)
        given = ex.extra.get("plan")
        if given and not given.get("paths"):
            given = None  # conditions without paths: derived like any other plan
        (rest if given or len(set(ex.topic_entities)) > 1 or not _chain_exact(ex) else simple).append(ex)
    for ex in rest:
        if index is None:
            index = GraphIndex(kg, adjacency)
        given = ex.extra.get("plan") or {}
        plan = QueryPlan.from_dict(given) if given.get("paths") else None
        conditions = None if plan else given.get("constraints") or ([given["constraint"]] if given.get("constraint") else None)
        pos, neg, exact = derive_candidates(index, ex, config, rng, plan, limits, max_negatives=max_negatives,
                                            conditions=conditions)
        _keep(ex, pos, neg, "given" if plan else "kg", exact, index.plan_kinds)
    if every_question or any(p["shape"] != "chain" for ex in rest
                             for p in (ex.extra.get("plan_candidates") or {}).get("positive", ())):
        # other shapes in the set: the ranker must also learn to leave chains alone, and a chain
        # that explains a question exactly may still be chance (the head of a department who also
        # has the highest h-index): every question gets its candidates
        for ex in simple[:max_chains]:
            if index is None:
                index = GraphIndex(kg, adjacency)
            pos, neg, exact = derive_candidates(index, ex, config, rng, limits=limits, max_negatives=max_negatives)
            _keep(ex, pos, neg, "kg", exact, index.plan_kinds)
    if cache_file is not None:
        _write_cache(cache_file, [{k: ex.extra[k] for k in ("plan_candidates", "plan_source", "plan_exact")}
                                  if "plan_candidates" in ex.extra else None for ex in examples])
    return _finish(kg, examples, report)


def _finish(kg, examples: Sequence[QAExample], report: PlanReport) -> PlanReport:
    _choose_labels(kg, examples)
    for ex in examples:
        report.n += 1
        if "plan_candidates" in ex.extra:
            report.ranked += 1
            report.exact += bool(ex.extra.get("plan_exact"))
        plan = ex.extra.get("plan")
        if plan and plan.get("paths"):
            report.shapes[plan["shape"]] = report.shapes.get(plan["shape"], 0) + 1
            source = ex.extra.get("plan_source", "kg")
            report.sources[source] = report.sources.get(source, 0) + 1
    report.shapes = dict(Counter(report.shapes).most_common())
    return report


def _cache_key(kg, examples: Sequence[QAExample], config: SupervisionConfig, *settings) -> str:
    """The KG (its stats), the questions (with what decides their candidates) and the settings."""
    stats = kg.stats()
    h = hashlib.sha256(json.dumps({"version": PLAN_SUPERVISION_VERSION, "settings": settings,
                                   "kg": [stats.entities, stats.triples, sorted(stats.relations.items())],
                                   "config": asdict(config)}, sort_keys=True, default=str).encode())
    for ex in examples:
        h.update(json.dumps([ex.qid, ex.question, ex.topic_entities, ex.answers, ex.extra.get("plan"),
                             _chain_exact(ex)], sort_keys=True, default=str).encode())
    return h.hexdigest()[:24]


def _keep(ex: QAExample, positives: list[QueryPlan], negatives: list[QueryPlan], source: str, exact: bool,
          kinds: dict[tuple, str | None]) -> None:
    if not positives:
        return

    def record(p: QueryPlan) -> dict:  # with what its results are, which the ranker reads (rra.plans.text.plan_words)
        kind = kinds.get(p.key())
        return {**p.to_dict(), "kind": kind} if kind else p.to_dict()

    ex.extra["plan_candidates"] = {"positive": [record(p) for p in positives],
                                   "negative": [record(p) for p in negatives]}
    ex.extra["plan_source"] = source
    ex.extra["plan_exact"] = bool(exact)


def _choose_labels(kg, examples: Sequence[QAExample]) -> None:
    """Each question's `extra["plan"]`: its positive read (plan_words) like the positives of the most
    questions of the set, so that the path predictor's items follow one consistent plan per wording."""
    support: Counter = Counter()
    words = {}
    for ex in examples:
        cands = ex.extra.get("plan_candidates")
        if not cands:
            continue
        _, slots = ranker_question(ex, _mentions(kg, ex))
        words[id(ex)] = [plan_words(QueryPlan.from_dict(p), relation_phrase, slots) for p in cands["positive"]]
        support.update(set(words[id(ex)]))
    for ex in examples:
        cands = ex.extra.get("plan_candidates")
        if not cands:
            continue
        best = max(range(len(cands["positive"])),
                   key=lambda k: (support[words[id(ex)][k]], -QueryPlan.from_dict(cands["positive"][k]).complexity,
                                  -sum(map(len, cands["positive"][k]["paths"])), -k))
        plan = cands["positive"][best]
        ex.extra["plan"] = plan
        if plan["shape"] != "chain" or ex.extra.get("plan_source") == "given" or not ex.relation_path:
            ex.relation_path = list(plan["paths"][0])


def _chain_exact(ex: QAExample) -> bool:
    cands = ex.extra.get("path_candidates") or []
    return bool(cands) and cands[0].get("f1") == 1.0


def _merge(report: PlanReport, one: PlanReport) -> None:
    report.n += one.n
    report.ranked += one.ranked
    report.exact += one.exact
    for mine, theirs in ((report.shapes, one.shapes), (report.sources, one.sources)):
        for k, v in theirs.items():
            mine[k] = mine.get(k, 0) + v
