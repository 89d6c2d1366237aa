"""How the retriever's datamodule turns supervised questions into training items: the masked question
and its path (one item per anchor of a plan beyond one chain), de-duplicated by wording with a vote
over the KG-derived paths, and for the relation scorer each step's candidates, the relations at the
path's frontier in the graph. The plan ranker's items ride with them. A mixin of
rra.data.datamodule.RetrieverDataModule: it reads the datamodule's graph, settings and topic labels.

Batches are plain text (`collate` in rra.data.datamodule): the model tokenises.
"""
from __future__ import annotations

import logging
import random
from collections import Counter

from rra.graph.base import GraphError, KnowledgeGraph, inverse, is_inverse
from rra.records import QAExample
from rra.text.questions import mask_topic
from rra.text.relations import relation_words
from rra.text.spans import names_in_text

log = logging.getLogger(__name__)

MAX_RANKING_NEGATIVES = 16  # candidate plans a ranking item keeps besides its positives (merged items)
CHAIN_RANKING_NEGATIVES = 8  # ... on a set of chains alone (plan_ranker=true), where every question is an item
STARTS_PER_ITEM = 16  # anchors whose frontiers give a de-duplicated item its negatives
TIE = 1e-4  # votes (summed answer F1) this close are a tie; each question's own label adds 1e-6


def _walk_candidates(kg: KnowledgeGraph, anchor: str, path: list[str], max_hops: int, max_candidates: int,
                     rng: random.Random, frontier_cap: int) -> list[list[str]] | None:
    """`TrainingItems._step_candidates` on one graph (None when the anchor is not in it).
    A frontier above `frontier_cap` entities is read from a seeded sample of them (negatives only:
    the gold relation is added whatever the sample holds)."""
    if not kg.has_entity(anchor):
        return None
    frontier, out = [anchor], []
    for t in range(len(path)):
        seen = frontier if len(frontier) <= frontier_cap else rng.sample(frontier, frontier_cap)
        cands = sorted({r for rels in kg.relations_batch(seen).values() for r in rels})
        gold = path[t]
        if len(cands) > max_candidates:
            cands = sorted(rng.sample([r for r in cands if r != gold], max_candidates - 1) + [gold])
        elif gold not in cands:
            cands.append(gold)
        out.append(cands)
        found = kg.neighbors_batch(seen, gold)
        frontier = sorted({n for ns in found.values() for n in ns})
        if not frontier:
            break
    return out


def beyond_chain(plan: dict | None) -> bool:
    """Whether a question's plan is more than one chain (and has its paths: a file's condition
    without paths that supervision could not explain is not a plan to train on)."""
    return bool(plan) and bool(plan.get("paths")) and plan.get("shape", "chain") != "chain"


class TrainingItems:
    """The items of a split (`_items`) and what they are made of; see the module docstring."""

    def _items(self, examples: list[QAExample], dedupe: bool, walks: bool = False) -> list[dict]:
        self._read_topic_labels(examples)
        if self.path_head == "scorer":
            return self._scorer_items(examples, dedupe, walks)
        items, owners = [], []
        for e in examples:
            plan = e.extra.get("plan") if self.plans else None
            for item in self._plan_items(e, plan) if beyond_chain(plan) else [
                    {"question": self._masked(e),
                     "path": list(e.relation_path)}]:
                items.append(item)
                owners.append(e)
        if dedupe:
            # Masked templates repeat (a templated set: a few hundred distinct masked questions among
            # tens of thousands). Keep each distinct masked question once, labelled with the path that
            # explains its questions best overall: the sum over its questions of each candidate path's answer-F1 (from KG
            # supervision), then how often it was the label. Per-question KG labels are noisy where
            # two relations reach the same answers (a film's director is often its writer); summed
            # over a template, the relation the question is about wins.
            votes = self._votes(items, owners)
            items = []
            for q, v in votes.items():
                path = v.most_common(1)[0][0]
                items.append({"question": q, "path": list(path) if path is not None else None})
        for x in items:
            x.pop("focus", None)
            x.pop("anchor", None)
        return self._attach(items, self._ranking_items(examples, dedupe))

    def _masked(self, e: QAExample) -> str:
        """The question with its topic masked, as inference reads it: a `[...]` mark, else the topic's
        name where the question writes it (the KG's label: an IRI never occurs in the text), else its id,
        else another name the KG finds it by (an alias: "JFK"; read ahead by `_read_topic_labels`)."""
        masked = mask_topic(e.question, self._topic_names(e), self.mask_token)
        alias = self._aliases_in_text.get((e.question, e.topic_entities[0])) \
            if masked == e.question and e.topic_entities else None
        return mask_topic(e.question, [alias], self.mask_token) if alias else masked

    def _topic_names(self, e: QAExample) -> list[str]:
        return [n for t in e.topic_entities for n in (self._topic_labels.get(t), t) if n]

    def _fill_topic_labels(self, examples: list[QAExample]) -> None:
        """The KG's labels of the questions' topics not read yet, in one call, into `_topic_labels`."""
        wanted = sorted({t for e in examples for t in e.topic_entities} - set(self._topic_labels))
        if wanted:
            try:
                found = self.kg.labels(wanted)
            except Exception:  # noqa: BLE001 - without labels the ids are masked, as before
                found = {}
            self._topic_labels.update({t: n for t, n in found.items() if n and n != t})

    def _read_topic_labels(self, examples: list[QAExample]) -> None:
        """The KG's labels of the questions' topics, in one call, then the name each question writes
        its topic by where the text holds neither its label nor its id (an alias: "JFK" for the entity
        labelled "John F. Kennedy"; rra.text.spans.names_in_text), in one batched lookup for all of them. A
        per-question graph has no labels outside a question: its readers mark the topic in the text."""
        if self.kg is None or getattr(self.kg, "per_question", False):
            return
        self._fill_topic_labels(examples)
        if not self.mask_token:
            return
        asked: dict[tuple[str, str], str] = {}  # (question, topic) -> the topic's label (or id)
        for e in examples:
            if e.topic_entities and (e.question, e.topic_entities[0]) not in self._aliases_in_text \
                    and mask_topic(e.question, self._topic_names(e), self.mask_token) == e.question:
                topic = e.topic_entities[0]
                asked[(e.question, topic)] = self._topic_labels.get(topic) or topic
        if asked:
            try:
                names = names_in_text(self.kg, [(q, t, label) for (q, t), label in asked.items()])
            except GraphError:
                names = [t for _, t in asked]  # the id: nothing in the text to mask, as before
            self._aliases_in_text.update(zip(asked, names))

    def _plan_items(self, e: QAExample, plan: dict) -> list[dict]:
        """Path items of a question whose plan is more than a chain: one per anchor of the plan, the
        question with that anchor in focus (`[E]`) and every other entity it names as `<e>`
        (rra.plans.plan.focus_text, as the pipeline asks the path predictor at inference), its path."""
        from rra.plans.plan import focus_text
        from rra.text.questions import mark_mentions

        named = list(dict.fromkeys(list(plan["anchors"]) + list(e.topic_entities)))
        labels = self._labels(e, named)
        mentions = [labels.get(a) or a for a in named]
        text = mark_mentions(e.question, mentions)
        return [{"question": focus_text(text, mentions, k, self.mask_token or "[E]"), "path": list(path),
                 "focus": True, "anchor": anchor}
                for k, (anchor, path) in enumerate(zip(plan["anchors"], plan["paths"]))]

    def _labels(self, e: QAExample, entities) -> dict[str, str]:
        """The KG's labels of `entities` (on per-question graphs, in `e`'s own graph: {} without one)."""
        if self.kg is None:
            return {}
        if getattr(self.kg, "per_question", False):
            try:
                with self.kg.scope(e) as graph:
                    return graph.labels(entities)
            except GraphError:
                return {}
        return self.kg.labels(entities)

    def _ranking_items(self, examples: list[QAExample], dedupe: bool) -> list[dict]:
        """The plan ranker's items: per question with candidate plans (rra.data.plan_supervision),
        what the ranker reads of it and the texts of its positive and negative plans
        (rra.plans.text.plan_words). With `dedupe`, questions that read alike and share their positives
        are one item, their negatives merged (at most MAX_RANKING_NEGATIVES)."""
        if not self.plan_ranker:
            return []
        from rra.data.plan_supervision import ranker_question
        from rra.plans.plan import QueryPlan
        from rra.plans.text import plan_parts, plan_words
        from rra.text.relations import RelationText, relation_names

        text_of = self.relation_text or RelationText(relation_names(self.dataset.relation_labels), self.kg)
        merged: dict[tuple, dict] = {}
        out = []
        for e in examples:
            cands = e.extra.get("plan_candidates")
            if not cands or not cands["positive"]:
                continue
            labels = self._labels(e, e.topic_entities)
            question, slots = ranker_question(e, [labels.get(t) or t for t in e.topic_entities] + list(e.topic_entities),
                                              self.mask_token or "[E]")
            parts: dict[str, list[str]] = {}
            kinds: dict[str, str] = {}  # plan text -> what its results are, where the KG says

            def read(plans: list[dict]) -> list[str]:
                texts = []
                for d in plans:
                    plan = QueryPlan.from_dict(d)
                    kind = d.get("kind") if self.plan_kinds else None
                    text = plan_words(plan, text_of, slots, kind=kind)
                    parts.setdefault(text, plan_parts(plan, text_of, slots))
                    if kind:
                        kinds.setdefault(text, kind)
                    texts.append(text)
                return list(dict.fromkeys(texts))

            label = e.extra.get("plan")
            positive = read(([label] if label and label.get("paths") else []) + cands["positive"])  # the label first
            negative = [t for t in read(cands["negative"]) if t not in positive]
            if not negative:
                continue  # nothing to tell apart
            chain = all(p.get("shape") == "chain" for p in cands["positive"])
            cap = CHAIN_RANKING_NEGATIVES if chain and self.chains_only else MAX_RANKING_NEGATIVES
            key = (question, tuple(sorted(positive)))
            if dedupe and key in merged:  # it stands for one more question
                item = merged[key]["ranking"]
                item["negative"] = list(dict.fromkeys(item["negative"] + negative))[:cap]
                item["parts"].update({t: parts[t] for t in item["negative"] if t in parts})
                item["kinds"].update({t: kinds[t] for t in item["negative"] if t in kinds})
                item["weight"] += 1
                continue
            negative = negative[:cap]
            item = {"question": question, "path": None,
                    "ranking": {"positive": positive, "negative": negative, "weight": 1,
                                "parts": {t: parts[t] for t in positive + negative if parts.get(t)},
                                "kinds": {t: kinds[t] for t in positive + negative if t in kinds}},
                    "chain": chain}
            merged[key] = item
            out.append(item)
        # questions a chain answers teach the ranker to leave chains alone; a sample of them does
        chains = [x for x in out if x["chain"]]
        for x in out:
            del x["chain"]
        keep = max(50, round(self.chain_rankings * (len(out) - len(chains))))
        if self.chains_only:  # a ranker asked for on chains alone (plan_ranker=true): every question teaches it
            keep = len(chains)
        if len(chains) > keep:
            dropped = {id(x) for x in random.Random(self.seed).sample(chains, len(chains) - keep)}
            out = [x for x in out if id(x) not in dropped]
        return out

    @staticmethod
    def _attach(items: list[dict], rankings: list[dict]) -> list[dict]:
        """The plan ranker's items ride with the path items (`with`, flattened by `collate`), spread
        evenly, so they add no optimizer steps (each step pays for the relations' texts once)."""
        hosts = [x for x in items if x["path"] is not None] or items
        if not hosts:
            return rankings
        for k, r in enumerate(rankings):
            hosts[k % len(hosts)].setdefault("with", []).append(r)
        return items

    # -- the relation scorer's items -------------------------------------------------------------
    def _scorer_items(self, examples: list[QAExample], dedupe: bool, walks: bool = False) -> list[dict]:
        """Items for the relation scorer: as for the classifier, plus where each item starts (its
        anchor, and its subgraph on per-question graphs) and, per step, the relations at the
        frontier in the graph (the candidates the scorer must choose from, gold included).

        De-duplication keeps what the graph says about the anchor: questions of one masked
        wording vote for the path that explains them best (as for the classifier), but each
        question takes the best-voted path *it can walk* from its own anchor, and items are
        distinct (wording, path) pairs. So "the youngest member of [E]" stays two items when some
        anchors are clubs and others countries, and a noisy label (a film's director who is also
        its writer) is still outvoted where the voted path is walkable."""
        items, owners = [], []
        for e in examples:
            plan = e.extra.get("plan") if self.plans else None
            made = self._plan_items(e, plan) if beyond_chain(plan) else [
                {"question": self._masked(e), "path": list(e.relation_path),
                 "anchor": e.topic_entities[0] if e.topic_entities else None}]
            for item in made:
                item["graph_key"] = e.extra.get("subgraph")
                items.append(item)
                owners.append(e)
        if dedupe:
            items = self._vote(items, owners)
        if walks and self.walk_questions > 0:
            items += self._walk_items(items)
        rng = random.Random(self.seed)
        read = []
        for x in items:
            x.pop("focus", None)
            starts = x.pop("starts", None) or [(x.get("anchor"), x.get("graph_key"))]
            if x["path"] is not None and x.get("anchor"):
                x["candidates"] = self._step_candidates(starts, x["path"], rng)
                read.append((x, sorted({r for step in x["candidates"] or () for r in step} | set(x["path"]))))
        text_of = self.relation_text
        if self.relation_kinds:
            text_of = self.relation_text.with_kinds()
            text_of.prepare({r for _, rels in read for r in rels})  # every relation's kind in one batch of reads
        for x, rels in read:
            x["texts"] = {r: text_of(r) for r in rels}
        return self._attach(items, self._ranking_items(examples, dedupe))

    def _walk_items(self, items: list[dict]) -> list[dict]:
        """`walk_questions` items per training item, walked from the training items' anchors (so
        from the kinds of entity the questions ask about), with a generator of their own: the
        dataset's items and their negatives are the same with walks or without."""
        from rra.data.walk_questions import walk_questions

        if getattr(self.kg, "per_question", False):
            log.warning("datamodule.walk_questions: per-question graphs have no graph to walk outside a question; none written")
            return []
        real = [x for x in items if x["path"] is not None and x.get("anchor")]
        anchors = sorted({a for x in real for a, _ in x.get("starts") or [(x["anchor"], None)]})
        count = round(self.walk_questions * len(real))
        names = self.relation_text.names
        walked = walk_questions(self.kg, anchors, lambda r: relation_words(r, names), count, self.max_hops,
                                random.Random(f"walks-{self.seed}"), mask=self.mask_token or "[E]",
                                lengths=[len(x["path"]) for x in real])
        self.summary["walk_items"] = len(walked)
        return [{**w, "graph_key": None, "starts": [(w["anchor"], None)]} for w in walked]

    def _votes(self, items: list[dict], owners: list[QAExample]) -> dict[str, Counter]:
        """Per masked wording, each path's vote: the summed answer-F1 of its questions' KG-derived
        candidate paths, plus 1e-6 per question labelled with it (a tie-break: the most frequent
        label); a dataset's own path, or a plan's, is one full vote."""
        votes: dict[str, Counter] = {}
        for e, x in zip(owners, items):
            v = votes.setdefault(x["question"], Counter())
            path = tuple(x["path"]) if x["path"] is not None else None
            if e.extra.get("label_source") == "given" or x.get("focus") or path is None:
                v[path] += 1.0
                continue
            v[path] += 1e-6
            for cand in e.extra.get("path_candidates") or ():
                if len(cand["path"]) <= self.max_hops:
                    v[tuple(cand["path"])] += float(cand.get("f1", 0.0))
        return votes

    def _vote(self, items: list[dict], owners: list[QAExample]) -> list[dict]:
        """The scorer's de-duplication (see `_scorer_items`): per question, the best-voted path of its
        wording that it can walk; one item per (wording, path)."""
        votes = self._votes(items, owners)
        kept: dict[tuple, dict] = {}
        for e, x in zip(owners, items):
            path = tuple(x["path"]) if x["path"] is not None else None
            walkable = {path}
            if path is not None and not x.get("focus") and e.extra.get("label_source") != "given":
                walkable |= {tuple(c["path"]) for c in e.extra.get("path_candidates") or ()
                             if c.get("f1", 0.0) > 0 and len(c["path"]) <= self.max_hops}
            v = votes[x["question"]]
            best = max(walkable, key=lambda p: (v[p], p is not None, p or ()))
            key = (x["question"], best)
            if key not in kept:
                kept[key] = {**x, "path": list(best) if best is not None else None, "starts": []}
                # paths as long as the voted one that explain this wording's questions as well (a film's
                # writer who is also its director): validation counts them right, as the answers would.
                # Not longer ones: a round trip (written_by, ^written_by, written_by) ties too
                if best is not None and not x.get("focus") and e.extra.get("label_source") != "given":
                    tied = sorted(p for p, n in v.items() if p is not None and p != best and len(p) == len(best)
                                  and n >= v[best] - TIE)
                    if tied:
                        kept[key]["accept"] = [list(p) for p in tied]
            if len(kept[key]["starts"]) < STARTS_PER_ITEM and x.get("anchor"):
                start = (x.get("anchor"), x.get("graph_key"))
                if start not in kept[key]["starts"]:
                    kept[key]["starts"].append(start)
        return list(kept.values())

    def _step_candidates(self, starts: list[tuple[str, object]], path: list[str], rng: random.Random,
                         frontier_cap: int = 500) -> list[list[str]] | None:
        """Per step t of `path`, the relations around the entities path[:t] reaches from the item's
        anchor, at most `max_candidates` per step (a seeded sample, the gold relation kept). The
        first step also takes the relations of the other anchors the item stands for (`starts`:
        (anchor, subgraph key) of the questions de-duplicated into it, up to STARTS_PER_ITEM): one
        item of a wording learns against what every kind of anchor offers (a film with a rating and
        one without). Later steps start from many entities already, so their own frontier varies."""
        kg, walked = self.kg, []
        for k, (anchor, graph_key) in enumerate(starts):
            limit_path = path if k == 0 else path[:1]
            if getattr(kg, "per_question", False):
                if not graph_key:
                    continue
                with kg.scope(graph_key):
                    found = _walk_candidates(kg, anchor, limit_path, self.max_hops, 10**9, rng, frontier_cap)
            else:
                found = _walk_candidates(kg, anchor, limit_path, self.max_hops, 10**9, rng, frontier_cap)
            if found is not None:
                walked.append(found)
        if not walked:
            return None
        steps = [set(c) for c in walked[0]]
        if steps:
            steps[0] = steps[0].union(*(w[0] for w in walked[1:] if w))
        out = []
        for t, cands in enumerate(steps):
            gold = path[t]
            others = sorted(cands - {gold})
            # inverse_negatives: the gold relation read the other way is the candidate most like it
            # ("written by" / "written by (reverse)"); a training frontier rarely holds it, a wide one at
            # answer time does (an entity that is also named as another's object). After a reversed step
            # the prefix's "(reverse)" draws it ("after_reversed" adds it there only). Either removed every
            # reversed-relation miss where measured, but single trainings on other KGs were not better
            # (bench/results/bench_prefix_directions.json), so neither is the default.
            after_reversed = t > 0 and is_inverse(path[t - 1])
            wanted = self.inverse_negatives is True or (self.inverse_negatives == "after_reversed" and after_reversed)
            hard = [inverse(gold)] if wanted else []
            others = [r for r in others if r not in hard]
            room = self.max_candidates - 1 - len(hard)
            if len(others) > room:
                others = rng.sample(others, room)
            out.append(sorted(others + hard + [gold]))
        return out
