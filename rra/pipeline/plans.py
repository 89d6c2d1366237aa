"""Retrieve by query plan: candidate plans built from the graph around a question's anchors,
ranked by the retriever's plan ranker, the best one executed (rra.plans.execution.execute).

For each question of a batch (when the retriever has a plan ranker: trained on data beyond one
chain, or on chains with `datamodule.plan_ranker=true`, the default):

1. **chains**: the path predictor is asked once per linked anchor with that anchor in focus
   (rra.plans.plan.focus_text: the anchor `[E]`, the other named entities `<e>`); a question with one
   anchor reuses the chain prediction it already has;
2. **candidates**: every plan those chains, the question's literals and its named entities make
   that executes to a non-empty result (rra.plans.candidates: chains, conjunctions of two or three
   anchors, a named intermediate, conditions, two conditions, orders, count, yes/no), bounded by
   `PlanSettings`;
3. **ranking**: the plan ranker's logit of each candidate's text (rra.plans.text.plan_words) against the
   question (rra.plans.text.ranker_text), plus `path_weight` x the mean log-probability of its chains (the
   path predictor's); no plan kind is a class, and the anchors' order is the chosen plan's.

A chosen plain chain is answered as before (rra.pipeline.retrieve: the anchor's top paths), with
those paths in the order the ranker put their chains and scored by it (`rank_chains`): the ranker
reads the whole path against the question, so "the h-index of the person who supervised [E]" takes
`doctoralAdvisor, hIndex` where the path predictor's first step read "h-index" as `hIndex`. Any
other plan is executed here: its answers (entities, a
count as "7", "yes" / "no"), the walks of each chain that reach them, the named intermediate's and
the conditions' triples as evidence, and the plan itself for the rewriter, the LLM and the page.
When no candidate has an answer on the graph the question says so (status no_path, with the
reason), rather than answering something else.
"""
from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass, field
from typing import Sequence

from rra.graph.base import GraphError, KnowledgeGraph, UnknownEntityError, inverse
from rra.plans.candidates import Candidate, enumerate_plans
from rra.plans.execution import execute
from rra.plans.plan import QueryPlan, focus_text, literal_value, question_literals
from rra.plans.reads import AttributeSchema, Chain, PlanLimits, PlanReads
from rra.pipeline.retrieve import Evidence, Retrieval, ScoredPath
from rra.records import Status
from rra.plans.text import KIND_READERS, asked_kind, id_kind, plan_parts, plan_words, ranker_text, readable_kind
from rra.text.questions import mark_mentions
from rra.text.relations import relation_phrase


@dataclass
class PlanSettings:
    """conf/method/rra.yaml `plans`: the bounds of the enumeration and the weight of the chains'
    probability in a plan's score."""

    max_plans: int = 400  # candidate plans per question
    paths_per_anchor: int = 5  # the path predictor's best paths per anchor
    max_anchors: int = 3  # linked entities joined
    branch_hops: int = 2  # relations of a conjunction's branches
    max_attributes: int = 6  # attributes tried for conditions and orders, per plan
    modifier_bases: int = 8  # best plans that conditions, orders and counts are tried on
    max_pairs: int = 100  # two-condition plans per base plan
    max_values: int = 5000  # larger result sets are neither filtered nor ordered
    max_frontier: int = 5000  # a walk reaching more entities is not followed further
    path_weight: float = 1.0  # x mean log-probability of a plan's chains, added to the ranker's logit
    kind_weight: float = 16.0  # x how far a plan's kind reads from what the question asks for (`kind_logits`)
    kind_reader: str = "pretrained"  # which encoder reads asked words against kinds: "pretrained" or "trained"
    walk_on: int = 1  # continuations of a best path offered where they give what the question asks for (`_walk_on`)
    kinds_from_ids: bool = True  # results the graph gives no class: the kind their ids name ("book/x"; `answer_kind`)
    shown: int = 3  # plans kept in the prediction's record
    rank_chains: bool = True  # a chosen chain walks the anchor's paths in the ranker's order (False: the path predictor's)
    max_readings: int = 4  # anchor lists tried where a linked name is several entities' (readings_of)

    def __post_init__(self):
        if self.kind_reader not in KIND_READERS:
            raise ValueError(f"method.plans.kind_reader={self.kind_reader!r}: "
                             f"one of {', '.join(map(repr, KIND_READERS))}")
        if self.walk_on < 0:
            raise ValueError(f"method.plans.walk_on={self.walk_on}: the continuations offered, 0 or more")

    def limits(self) -> PlanLimits:
        return PlanLimits(self.max_plans, self.paths_per_anchor, self.max_anchors, self.branch_hops,
                          self.max_attributes, self.modifier_bases, self.max_pairs, self.max_values,
                          self.max_frontier)


@dataclass
class ScoredPlan:
    plan: QueryPlan
    score: float  # its probability among the question's candidates
    ends: list[str] = field(default_factory=list)  # the plan's answers on the graph
    logit: float = 0.0  # ranker logit + path_weight x mean log-probability of its chains
    kind: str | None = None  # what its results are, as the ranker read it (Candidate.kind)

    @property
    def path(self) -> list[str]:  # the first chain, where code reads a retrieved path
        return list(self.plan.paths[0])

    def describe(self, labels: dict[str, str] | None = None) -> str:
        return self.plan.describe(labels)

    def to_dict(self) -> dict:
        return {**self.plan.to_dict(), "score": round(self.score, 6), "n_ends": len(self.ends),
                "answers": self.ends[:5], **({"kind": self.kind} if self.kind else {})}


@dataclass
class PlanChoice:
    """One question's ranked plans and the chain predictions they were built from."""

    anchors: list[str]
    ranked: list[ScoredPlan]  # best first (all candidates)
    predictions: dict[str, list]  # anchor -> the path predictor's paths with it in focus
    candidates: int = 0

    def chain_order(self, anchor: str, paths: list) -> list:
        """`paths` (the anchor's predicted paths, best first) in the order the ranker put their
        chains, each scored by its chain's share of the probability the ranker gave the anchor's
        chains (what the graph scorer ranks answers by); a path the ranker did not rank (no
        answer on the graph, or past `paths_per_anchor`) comes after, at 0."""
        share: dict[tuple, float] = {}
        for p in self.ranked:
            if p.plan.is_chain and p.plan.anchors[0] == anchor:
                share.setdefault(tuple(p.plan.paths[0]), p.score)
        total = sum(share.values()) or 1.0
        place = {k: i for i, k in enumerate(share)}
        ordered = sorted(paths, key=lambda c: place.get(tuple(c.path), len(place)))
        return [dataclasses.replace(c, score=share.get(tuple(c.path), 0.0) / total) for c in ordered]

    @property
    def best(self) -> ScoredPlan | None:
        return self.ranked[0] if self.ranked else None

    def record(self, shown: int) -> dict:
        best = self.best
        return {"plan_kind": best.plan.shape if best else None, "plan_candidates": self.candidates,
                "plans": [p.to_dict() for p in self.ranked[:shown]]}


class PlanSearch:
    """Builds and ranks the candidate plans of a batch of questions (see the module doc)."""

    def __init__(self, kg: KnowledgeGraph, retrieval, settings: PlanSettings | None = None):
        self.kg, self.retrieval = kg, retrieval
        self.settings = settings or PlanSettings()
        self.schema = AttributeSchema(kg)  # which relations are attributes, learnt once for the KG

    @property
    def enabled(self) -> bool:
        return getattr(self.retrieval.model, "ranker", None) is not None

    def choose(self, questions: Sequence[str], anchors: Sequence[list[str]], mentions: Sequence[list[str]],
               first: dict[int, list], alternates: dict[int, dict[int, list[str]]] | None = None
               ) -> dict[int, PlanChoice]:
        """For each question i of `first` (its chain predictions for anchors[i][0]): its PlanChoice.
        `alternates` (question -> {anchor position: other entities its mention names}): a name that
        several entities share ("A. Wang") is read as each of them (`readings`, at most
        `max_readings` per question), and the graph decides (`_pick`)."""
        todo = sorted(first)
        alternates = alternates or {}
        readings = {i: readings_of(anchors[i], alternates.get(i, {}), self.settings.max_readings) for i in todo}
        # the path predictor once per (question, anchor position, entity) walked from: every anchor of
        # a reading with several, with the others masked; a one-anchor question's first reuses `first`
        focus = sorted({(i, k, r[k]) for i in todo for r in readings[i] for k in range(len(r))
                        if len(r) > 1 or r[0] != anchors[i][0]})
        texts = [focus_text(mark_mentions(questions[i], mentions[i]), mentions[i], k) for i, k, _ in focus]
        found = self.retrieval.predict(texts, kg=self.kg, topics=[e for _, _, e in focus]) if focus else []
        per_anchor: dict[int, dict[str, list]] = {i: {anchors[i][0]: first[i]} for i in todo}
        for (i, _, e), paths in zip(focus, found):
            per_anchor[i][e] = paths
        hparams = getattr(self.retrieval.model, "hparams", None) or {}
        lim = dataclasses.replace(self.settings.limits(), round_trips=bool(hparams.get("plan_round_trips", False)))
        # the graph reads of the batch's plans, made together (the graph may change between batches)
        reads = PlanReads(self.kg, self.retrieval.semantics, lim, self.schema)
        # a ranker reads what a plan's results are only if it was trained so (older checkpoints: not)
        with_kinds = bool(hparams.get("plan_reads_kinds", False))
        words = {i: [m for m in mentions[i] if literal_value(m) is None] for i in todo}  # "1990" is a value
        jobs = [(i, r) for i in todo for r in readings[i]]

        def chains_of(i, r):
            return [Chain(a, tuple(p.path), float(p.score)) for a in r for p in per_anchor[i].get(a, [])]

        def plans_of(i, r, cs):
            return enumerate_plans(self.kg, cs, question_literals(questions[i], words[i]), r, lim,
                                   self.retrieval.semantics, read_kinds=with_kinds, reads=reads)

        chains = [chains_of(i, r) for i, r in jobs]
        reads.prefetch([(cs, r) for cs, (_, r) in zip(chains, jobs)], with_kinds)
        cands: list[list[Candidate]] = [plans_of(i, r, cs) for (i, r), cs in zip(jobs, chains)]
        text_of = self.retrieval.relation_text or relation_phrase

        def rank(todo_jobs):
            """(the ranker's logits, the plans as it read them) of each job's candidates."""
            rank_texts, plan_texts, parts, kinds = [], [], [], []
            for n in todo_jobs:
                (i, _), cs = jobs[n], cands[n]
                q, slots = ranker_text(questions[i], words[i])
                rank_texts.append(q)
                plan_texts.append([plan_words(c.plan, text_of, slots, kind=c.kind) for c in cs])
                parts.append([plan_parts(c.plan, text_of, slots) for c in cs])
                kinds.append([c.kind if with_kinds else None for c in cs])
            logits = self.retrieval.model.rank_plans(rank_texts, plan_texts, parts, kinds) if todo_jobs else []
            if self.settings.kind_weight and with_kinds and logits and hasattr(self.retrieval.model, "kind_cosines"):
                answer_kinds = [[answer_kind(c, self.settings.kinds_from_ids) for c in cands[n]] for n in todo_jobs]
                logits = kind_logits(self.retrieval.model, rank_texts, answer_kinds, logits, self.settings.kind_weight,
                                     self.settings.kind_reader)
            return logits, plan_texts

        logits, plan_texts = rank(range(len(jobs)))
        if with_kinds and self.settings.walk_on > 0 and hasattr(self.retrieval.model, "continuations"):
            chosen = {}  # question -> what its first reading's best plan answers (the first job of each question)
            for (i, _), cs, row in zip(jobs, cands, logits):
                if i not in chosen and cs:
                    scores = self._scores(row, cs)
                    chosen[i] = answer_kind(cs[scores.index(max(scores))], self.settings.kinds_from_ids)
            walked = self._walk_on(questions, anchors, mentions, per_anchor, reads, chosen)
            again = [n for n, (i, _) in enumerate(jobs) if i in walked]
            for n in again:  # its plans again, with the continuations among its anchor's paths
                cands[n] = plans_of(*jobs[n], chains_of(*jobs[n]))
            for n, row, shown in zip(again, *rank(again)):
                logits[n], plan_texts[n] = row, shown
        per_question: dict[int, list[tuple[PlanChoice, list[str]]]] = {}
        for (i, r), cs, row, shown in zip(jobs, cands, logits, plan_texts):
            scored = sorted(zip(self._scores(row, cs), cs, shown),
                            key=lambda x: -x[0])  # stable: ties keep the enumeration's order (simpler first)
            top = scored[0][0] if scored else 0.0
            norm = sum(math.exp(s - top) for s, _, _ in scored) or 1.0
            ranked = [ScoredPlan(c.plan, math.exp(s - top) / norm, list(c.answers), s, c.kind) for s, c, _ in scored]
            per_question.setdefault(i, []).append(
                (PlanChoice(list(r), ranked, per_anchor[i], len(scored)), [t for _, _, t in scored]))
        return {i: _pick(options) for i, options in per_question.items()}

    def _scores(self, logits: Sequence[float], cands: Sequence[Candidate]) -> list[float]:
        """Each candidate's score: the ranker's logit + `path_weight` x its chains' mean log-probability."""
        return [lg + self.settings.path_weight * c.prior for lg, c in zip(logits, cands)]

    def _walk_on(self, questions, anchors, mentions, per_anchor: dict[int, dict[str, list]], reads: PlanReads,
                 chosen: dict[int, str | None]) -> set[int]:
        """Where a question names the kind of its answers ("... is in what town") and a continuation of
        its first anchor's best path gives a kind that reads more like it than what the plan the
        ranker chose gives (`chosen`: `team, ground` gives a stadium, `team, ground, location` a city), the
        best `walk_on` such continuations (not a step straight back) join the anchor's paths, each
        scored as the search would have had the end head said "go on" where it said "end": the
        path's score x P(r) x P(end after r). An end head trained on few three-hop questions stops
        after two, and the search never offers the third; the ranker, which reads the whole path
        against the question, then decides. In place (the anchor's list is the one its chain answers
        walk, PlanChoice.predictions); returns the questions whose paths grew."""
        model = self.retrieval.model
        max_hops = int(model.hparams.get("max_hops", 3))
        asked = {i: asked_kind(questions[i]) for i in chosen}
        starts = []  # (question, its first anchor, that anchor's best path)
        for i, kind in chosen.items():
            a = anchors[i][0]
            paths = per_anchor[i].get(a) or []
            if asked[i] and kind and paths and len(paths[0].path) < max_hops:
                starts.append((i, a, paths[0]))
        if not starts:
            return set()
        texts = [focus_text(mark_mentions(questions[i], mentions[i]), mentions[i], 0) for i, _, _ in starts]
        steps = model.continuations(texts, [p.path for _, _, p in starts], self.kg, [a for _, a, _ in starts],
                                    self.retrieval.relation_text)
        offers = []  # (start, path, score)
        for start, step in zip(starts, steps):
            i, a, best = start
            have = {tuple(p.path) for p in per_anchor[i][a]}
            onward = [(r, v) for r, v in step.items() if inverse(r) != best.path[-1]]  # not a step straight back
            for r, (lp, lp_end, _) in sorted(onward, key=lambda x: -x[1][0])[: self.settings.walk_on]:
                path = (*best.path, r)
                if path not in have:
                    offers.append((start, path, best.score * math.exp(lp + lp_end)))
        if not offers:
            return set()
        reads.walker.prefill([(start[1], path) for start, path, _ in offers])
        ends = [reads.walker.reach(start[1], path) for start, path, _ in offers]
        theirs = [result_kind(k, e or (), self.settings.kinds_from_ids)
                  for k, e in zip(reads.kinds.kinds_of([e or frozenset() for e in ends]), ends)]
        pairs = [[k, chosen[start[0]]] for (start, _, _), k in zip(offers, theirs)]  # the continuation's, the choice's
        cos = model.kind_cosines([asked[start[0]] for start, _, _ in offers], pairs, self.settings.kind_reader)
        walked = set()
        for (start, path, score), e, (c_new, c_chosen) in zip(offers, ends, cos):
            if not e or c_new is None or c_chosen is None or c_new <= c_chosen:
                continue
            i, a, best = start
            paths = per_anchor[i][a]
            paths.append(dataclasses.replace(best, path=list(path), score=score, hop=len(path)))
            paths.sort(key=lambda p: -p.score)
            walked.add(i)
        return walked


def answer_kind(c: Candidate, from_ids: bool = True) -> str | None:
    """What a candidate plan answers, in the words of `Candidate.kind`: a count answers a number
    (its `kind` names what it counts), a yes/no no kind of thing; else its results' kind, where it is
    words (`readable_kind`: not a class id the graph gives no label), or where the graph gives them no
    class, the kind their ids name ("book/the_narrow_tide": `id_kind`; `from_ids` False: not read)."""
    if c.plan.aggregate == "count":
        return "number"
    return None if c.plan.aggregate == "ask" else result_kind(c.kind, c.nodes, from_ids)


def result_kind(kind: str | None, nodes, from_ids: bool = True) -> str | None:
    """What a set of result `nodes` is, in words: the graph's `kind` for them (KindCheck.kinds_of) where
    it is words (`readable_kind`), else, `from_ids`, the kind their ids name (`id_kind`)."""
    return readable_kind(kind) or (id_kind(nodes) if from_ids else None)


def kind_logits(model, questions: Sequence[str], kinds: Sequence[Sequence[str | None]], logits: list[list[float]],
                weight: float, reader: str = "trained") -> list[list[float]]:
    """The ranker's logits less `weight` x how much worse each plan's kind reads than the best kind
    among the question's candidates, against what the question asks for (rra.plans.text.asked_kind,
    cosines by the encoder `reader` names, Retriever.kind_cosines): "which university did [E]'s
    writer attend" then prefers `author, almaMater` (giving university) to `author, almaMater, city`
    (giving city), which read almost alike by their relations. A plan of unknown kind counts as an
    average one; a question that names no kind, or whose candidates give one kind, keeps its logits."""
    asked = [asked_kind(q) for q in questions]
    cosines = model.kind_cosines(asked, kinds, reader)
    out = []
    for row, cos in zip(logits, cosines):
        known = [c for c in cos if c is not None]
        if len(set(known)) < 2:
            out.append(row)
            continue
        best, mean = max(known), sum(known) / len(known)
        out.append([lg - weight * (best - (mean if c is None else c)) for lg, c in zip(row, cos)])
    return out


def readings_of(anchors: list[str], alternates: dict[int, list[str]], limit: int) -> list[list[str]]:
    """The anchor lists a question may mean: as linked first, then with each shared name read as
    each of its other entities (anchor position -> entities), at most `limit` in all."""
    out = [list(anchors)]
    for k, others in sorted(alternates.items()):
        if k >= len(anchors):
            continue
        out += [r[:k] + [e] + r[k + 1:] for r in out for e in others if e not in r]
    return out[:max(1, limit)]


def _pick(options: list[tuple[PlanChoice, list[str]]]) -> PlanChoice:
    """One question's choice among its readings (PlanChoice, the ranked plans' texts). The first
    reading (the linker's) stands unless another's best plan is of another form with a higher
    score: the graph holds an answer to the question as asked for that entity and not for the first
    ("papers by A. Wang at V": the Wang with papers at V; "... after 2015": the one with such
    papers). Where the best plans read alike the name stays a guess, and the first is kept; a
    yes/no, though, asks whether any entity of that name is one, so a "yes" wins."""
    chosen, texts = options[0]
    for choice, other in options[1:]:
        if choice.best is None:
            continue
        if chosen.best is None:
            chosen, texts = choice, other
        elif other[0] != texts[0]:
            if choice.best.logit > chosen.best.logit:
                chosen, texts = choice, other
        elif chosen.best.plan.aggregate == "ask" and chosen.best.ends != ["yes"] and choice.best.ends == ["yes"]:
            chosen, texts = choice, other
    return chosen


def retrieve_plan(kg: KnowledgeGraph, choice: PlanChoice, semantics=None, max_triples: int = 50, seed: int = 0,
                  max_instances: int = 10_000) -> Retrieval:
    """Execute the best plan of `choice` that answers on the graph (the enumeration's result may
    differ from the walks by `max_instances`), of those ranked above any chain; its evidence and
    the plan for the next steps. Not OK when none of them answers (the caller then answers by the
    best chain, if one ranked next, or reports it)."""
    out = Retrieval(choice.anchors[0])
    for sp in choice.ranked:
        if sp.plan.is_chain:  # a chain ranks above the rest: the caller answers by it
            break
        try:
            done = execute(kg, sp.plan, semantics, max_instances)
        except UnknownEntityError as err:
            out.status, out.errors = Status.UNKNOWN_ENTITY, [str(err)]
            return out
        except GraphError as err:
            out.errors.append(f"graph_error: plan {sp.plan.describe()}: {type(err).__name__}: {err}")
            continue
        if not done.nodes:
            out.dropped.append(_as_path(sp, 0, []))
            continue
        out.topic_entity = sp.plan.anchors[0]
        sp.ends = list(done.answers)
        out.plans = [sp]
        out.paths = [_as_path(sp, len(w), sorted({x.end for x in w}), k) for k, w in enumerate(done.walks)]
        out.evidence = _evidence(sp, done, max_triples, seed)
        return out
    out.status = Status.GRAPH_ERROR if out.errors and not out.dropped else Status.NO_PATH
    out.errors.append("no candidate query plan has an answer on the graph")
    return out


def _as_path(sp: ScoredPlan, instances: int, ends: list[str], k: int = 0) -> ScoredPath:
    path = sp.plan.paths[k]
    return ScoredPath(list(path), sp.score, len(path), 1.0, instances, ends)


def _evidence(sp: ScoredPlan, done, max_triples: int, seed: int) -> list[Evidence]:
    """The triples that decide (the named intermediate's, the conditions'), then the walks of every
    chain that reach a result, chains taking turns so that each is shown; capped at `max_triples`."""
    seen: dict = {}
    rng = random.Random(seed)
    for t in done.via_triples:
        if len(seen) < max_triples:
            seen.setdefault(t, Evidence(t, (sp.plan.via.relation,), sp.score))
    for t in done.condition_triples:
        if len(seen) < max_triples:
            seen.setdefault(t, Evidence(t, (t.relation,), sp.score))
    queues = []
    for k, ws in enumerate(done.walks):
        order = list(ws)
        rng.shuffle(order)
        queues.append((tuple(sp.plan.paths[k]), order))
    while any(q for _, q in queues) and len(seen) < max_triples:
        for path, q in queues:
            if q:
                for t in q.pop(0).triples:
                    if len(seen) < max_triples:
                        seen.setdefault(t, Evidence(t, path, sp.score))
    return list(seen.values())
