"""LightningDataModule for the retriever: any KG + any QA set with relation-path supervision.

Batches are plain text: {"question": [masked question, ...], "path": [[rel, ...], ...]}; the model
tokenises (so the tokenizer lives in one place, the checkpoint). How supervised questions become
those items (de-duplication, each step's frontier candidates, the plan ranker's items) is
rra.data.training_items, a mixin of the datamodule.

Supervision (`train_paths`), for training and validation examples:
- "auto" (default): a question's own `relation_path` is its label; the KG labels the others
  (`rra.data.supervision`: best answer-F1 path, exactly `hops` long when the question says so).
  Every question is also labelled from the KG, so the agreement between the given and the
  KG-derived paths is reported.
- "kg": every label from the KG (the dataset's own path stays in `gold_path`).
- "given": only the questions' own paths; the KG labels just the questions without one.
Test examples keep their given (gold) paths. The dataset's `semantics` (rra.records.AnswerSemantics)
decide what a path's answers are, in supervision as in retrieval.

Coverage is reported per split and dataset hop set (`summary["coverage"]`): how many questions got a
path, and why the others did not (topic not in KG, no answer in KG, no path within max_hops or of the
stated length). Below `min_coverage` a warning says so loudly; when most topics are missing from the
KG the run stops, since the questions and the KG do not belong together.

The questions come from the dataset (`rra.data.dataset.Dataset`: its train / val / test sources,
`hop` filter and answer rule); the graph is injected:
    kg:     a KnowledgeGraph, or a zero-argument callable returning one (train.py passes the backend
            of the `graph` config group); without one the dataset's KG file `kb_path` is read into NetworkX
The validation set, when the dataset has none, is a seeded `val_fraction` of the training examples.
"""
from __future__ import annotations

import inspect
import logging
import random
from collections import Counter
from typing import Any, Callable, Mapping

import lightning as L
from torch.utils.data import DataLoader

from rra.data.dataset import Dataset
from rra.data.training_items import TrainingItems, beyond_chain
from rra.graph.base import INVERSE_PREFIX, KnowledgeGraph, inverse
from rra.records import QAExample
from rra.text.matching import normalize_answer

log = logging.getLogger(__name__)

ANSWERED_BY_TOPIC = 0.01  # share of training questions answered by their own topic that makes round trips plans


def relation_vocabulary(kg: KnowledgeGraph) -> list[str]:
    """Every KG relation in both directions: forward ones sorted, then their inverses."""
    forward = sorted(r for r in kg.relation_types() if not r.startswith(INVERSE_PREFIX))
    return forward + [inverse(r) for r in forward]


def collate(items: list[dict]) -> dict[str, list]:
    # a path item may carry ranking items of the plan ranker (`with`): they ride in its batch
    items = [y for x in items for y in [x, *x.get("with", ())]]
    batch = {"question": [x["question"] for x in items], "path": [x["path"] for x in items]}
    if any(x.get("ranking") is not None for x in items):  # only data with query plans: the plan ranker's items
        batch["ranking"] = [x.get("ranking") for x in items]
    if any("candidates" in x for x in items):  # the relation scorer's: each step's frontier relations
        for key in ("candidates", "anchor", "graph_key", "accept"):
            batch[key] = [x.get(key) for x in items]
        batch["texts"] = {r: t for x in items for r, t in (x.get("texts") or {}).items()}
    return batch


class RetrieverDataModule(TrainingItems, L.LightningDataModule):
    """The retriever's training data from a dataset (`rra.data.dataset.Dataset`, conf/data/*.yaml,
    which conf/datamodule/retriever.yaml refers to as `dataset: ${data}`) and how to make items of
    it: supervision, validation hold-out, caps, batches."""

    def __init__(
        self,
        dataset: Dataset | Mapping | None = None,
        kg: KnowledgeGraph | Callable[[], KnowledgeGraph] | None = None,
        plans: bool = True,  # derive query plans (several anchors, conditions, ...) and train the plan ranker on them
        plan_ranker: bool | str = "auto",  # auto: a plan ranker where some training question is beyond one chain;
        # true: on chain-only data too (it then ranks the path predictor's chains of every length, and every
        # question trains it); a set with other shapes trains the same ranker either way
        train_paths: str | None = None,  # None: the dataset's
        label_paths: Callable | None = None,
        supervision_cache: str | bool = True,
        val_fraction: float = 0.1,
        max_hops: int = 3,
        mask_token: str | None = "[E]",
        dedupe: bool = True,  # one item per distinct masked question (train and val)
        max_train_per_hop: int | None = None,
        max_val: int | None = None,
        max_test: int | None = None,
        min_coverage: float = 0.95,
        batch_size: int = 32,
        eval_batch_size: int = 64,
        num_workers: int = 0,
        seed: int = 0,
        path_head: str = "scorer",  # the model's (model.path_head): the scorer's items carry each step's candidates
        max_candidates: int = 64,  # scorer: in-frontier negatives per step (a seeded sample; the gold always kept)
        inverse_negatives: bool | str = False,  # scorer: the gold relation's other direction a negative at every
        # step (true), or only at a step after a reversed one ("after_reversed"), where a prefix's "(reverse)" draws it
        chain_rankings: float = 0.25,  # plan ranker: questions answered by a chain, per other question (a seeded sample)
        plan_kinds: bool = True,  # plan ranker: a plan's text says what its results are ("city", "year"), where the KG says
        link_topics: Callable | bool = False,  # training questions that give no topic: linked from their text
        # (train.py passes rra.linking.link_training_topics when datamodule.link_topics=true)
        relation_kinds: bool = True,  # scorer: a relation's text says what it leads to ("place of birth giving city"),
        # where the KG says (classes, typed values); a KG that says it for none trains on names alone
        walk_questions: float = 0.0,  # scorer: training items written from walks over the graph, per training item
        # (rra.data.walk_questions: "what is the birth place of the director of [E]?"); 0: none
    ):
        super().__init__()
        self.dataset, self.kg_source = Dataset.of(dataset), kg
        if kg is None and self.dataset.kb_path is None:
            raise ValueError("RetrieverDataModule needs a knowledge graph: kg=... or a dataset with kb_path=FILE")
        self.semantics = self.dataset.semantics
        train_paths = train_paths or self.dataset.train_paths
        if train_paths not in ("auto", "kg", "given"):
            raise ValueError(f"train_paths must be 'auto', 'kg' or 'given', not {train_paths!r}")
        self.train_paths, self.supervision_cache = train_paths, supervision_cache
        self.label_paths = label_paths or self.kg_labels
        self.plans = plans
        if plan_ranker not in ("auto", True, False):
            raise ValueError(f"datamodule.plan_ranker must be auto, true or false, not {plan_ranker!r}")
        self.wants_ranker = plan_ranker
        self.plan_ranker = False  # set in setup: whether the model gets a plan ranker
        self.chains_only = False  # set in setup: a ranker on a set whose questions are all chains
        self.round_trips = False  # set in setup: chains back to their anchor are plans (_answered_by_topic)
        self.val_fraction, self.max_hops, self.mask_token = val_fraction, max_hops, mask_token
        self.dedupe, self.seed, self.min_coverage = dedupe, seed, min_coverage
        self.max_train_per_hop, self.max_val, self.max_test = max_train_per_hop, max_val, max_test
        self.batch_size, self.eval_batch_size, self.num_workers = batch_size, eval_batch_size, num_workers
        if path_head not in ("scorer", "classifier"):
            raise ValueError(f"path_head must be 'scorer' or 'classifier', not {path_head!r}")
        self.path_head, self.max_candidates = path_head, max_candidates
        if inverse_negatives not in (True, False, "after_reversed"):
            raise ValueError(f"datamodule.inverse_negatives must be true, false or after_reversed, not {inverse_negatives!r}")
        self.inverse_negatives = inverse_negatives
        self.chain_rankings, self.plan_kinds = chain_rankings, plan_kinds
        self.relation_kinds = relation_kinds
        if walk_questions < 0:
            raise ValueError(f"datamodule.walk_questions must be 0 or more (walk items per training item), not {walk_questions}")
        if walk_questions and path_head != "scorer":
            raise ValueError("datamodule.walk_questions trains the relation scorer (model.path_head=scorer); "
                             f"the {path_head} has no frontier to walk")
        self.walk_questions = walk_questions
        if link_topics is True:
            raise ValueError("datamodule.link_topics=true needs the linker, which train.py passes "
                             "(rra.linking.link_training_topics); give a callable when building the datamodule yourself")
        self.link_topics = link_topics or None
        self.kinds_read = False  # set in setup: whether some training relation's text says what it leads to
        self.relation_text = None  # rra.text.relations.RelationText of the KG (scorer), set in setup
        self._topic_labels: dict[str, str] = {}  # topic id -> its label, what masking looks for in the text
        self._aliases_in_text: dict[tuple[str, str], str] = {}  # (question, topic) -> the name it is written by
        self.kg: KnowledgeGraph | None = None
        self._adjacency = None  # during setup: rra.data.supervision.adjacency_once(kg)
        self.relations: list[str] = []
        self.splits: dict[str, list[dict]] = {}
        self.summary: dict[str, Any] = {}
        self._last_report: dict | None = None

    # -- what the model needs from the data (train.py passes it to the model's constructor) --
    def model_kwargs(self) -> dict:
        self.setup("fit")
        kwargs = {"relations": self.relations, "max_hops": self.max_hops, "mask_token": self.mask_token}
        if self.plan_ranker:  # only then: a chain-only data set trains exactly the model it always did
            kwargs.update(plan_ranker=True, plan_reads_kinds=self.plan_kinds)
            if self.round_trips:
                kwargs.update(plan_round_trips=True)
        if self.kinds_read:  # only then: a model trained on names alone reads names alone on every KG
            kwargs.update(relation_kinds=True)
        return kwargs

    def training_wordings(self) -> list[str]:
        """The distinct masked questions the relation scorer trains on: what its checkpoint calls
        a familiar wording (rra.models.pretrained_reading)."""
        self.setup("fit")
        return sorted({x["question"] for x in self.splits["train"] if x.get("path")})

    # -- loading -------------------------------------------------------------------------------
    def _load(self, split: str) -> list[QAExample] | None:
        examples = self.dataset.questions(split, self.kg)
        # topics given by name train as answering reads them (per-question graphs name their topics
        # within each question's graph, which answers lookups only inside a question)
        if examples and not getattr(self.kg, "per_question", False):
            from rra.data.supervision import SupervisionConfig, resolve_topic_names

            # a shared name in training or validation: the entity whose paths reach the question's
            # answers, as linking a training question would; the test reads names as answering does
            config = SupervisionConfig(max_hops=self.max_hops, semantics=self.semantics) if split != "test" else None
            counts = resolve_topic_names(self.kg, examples, config, self._adjacency)
            if counts["by_name"]:
                how = ("per question the one with a path to an answer, %d of them not the first lookup match"
                       % counts["chosen_by_path"] if config is not None else "the first lookup match, as answering reads it")
                log.info("%s: %d topic entities given by name read as the KG's entities (%d names shared by "
                         "several entities: %s; %d names not found)", split,
                         counts["by_name"], counts["shared_name"], how, counts["not_found"])
                self.summary.setdefault("topics_by_name", {})[split] = counts
        if examples and self.link_topics is not None and any(not e.topic_entities for e in examples):
            shared = {"adjacency": self._adjacency} if self._adjacency is not None and \
                "adjacency" in inspect.signature(self.link_topics).parameters else {}
            counts = self.link_topics(self.kg, examples, self.max_hops, self.semantics, **shared)
            log.info("%s: topic entities linked from the text of %d questions that gave none (%d with a path to "
                     "an answer; %d without; %d with no entity of the KG named)", split,
                     sum(counts.values()) - counts["not_found"], counts["linked"], counts["no_path"], counts["not_found"])
            self.summary.setdefault("topics_linked", {})[split] = counts
        return examples

    def _graph(self) -> KnowledgeGraph:
        if self.kg_source is None:
            from rra.graph.loaders import load_graph

            d = self.dataset
            return load_graph(d.kb_path, labels_path=d.labels_path, format=d.kb_format,
                              property_namespaces=d.property_namespaces)
        return self.kg_source() if callable(self.kg_source) else self.kg_source

    def kg_labels(self, kg: KnowledgeGraph, examples: list[QAExample], max_hops: int) -> None:
        """Default labeller: relation paths from the KG (rra.data.supervision), cached on disk."""
        from rra.data.supervision import SupervisionConfig, label_examples

        cache = self.supervision_cache
        kwargs = {} if cache is True else {"cache_dir": cache or None}
        config = SupervisionConfig(max_hops=max_hops, semantics=self.semantics)
        if kg is self.kg and self._adjacency is not None:  # the graph read once for every labeller
            kwargs["adjacency"] = self._adjacency
        report = label_examples(kg, examples, config, **kwargs)
        self._last_report = report.to_dict()
        log.info("KG supervision: %d of %d questions covered (%.1f s)", report.covered, report.n, report.seconds)

    def _supervise(self, examples: list[QAExample], split: str, mode: str = "given") -> list[QAExample]:
        """Label paths as `mode` says (see the module doc); drop, and count by reason, the examples
        left without a usable path."""
        given = {id(e): list(e.relation_path) for e in examples if e.relation_path}
        todo = [e for e in examples if mode != "given" or id(e) not in given]
        self._last_report = None
        if todo:
            self.label_paths(self.kg, todo, self.max_hops)
        if self._last_report is not None:
            self.summary.setdefault("supervision", {})[split] = self._last_report
        for e in examples:  # the question's own path wins unless mode="kg"
            if mode in ("auto", "given") and id(e) in given:
                e.relation_path = given[id(e)]
                e.extra["label_source"] = "given"
            elif e.relation_path:
                e.extra["label_source"] = "kg"
        if self.plans:
            self._label_plans(examples, split)
        known = set(self.relations)
        kept, per_hop = [], {}
        for e in examples:
            path, reason = e.relation_path, None
            if not path:
                reason = e.extra.get("no_path_reason") or "no path"
            elif len(path) > self.max_hops:
                reason = f"path longer than max_hops={self.max_hops}"
            elif not set(path) <= known and e.extra.get("label_source") == "kg":
                # a KG-derived path over a relation the training split never had (per-question
                # subgraphs: the vocabulary is the training union): the retriever cannot predict it
                reason = "relation not in the training vocabulary"
            elif not set(path) <= known:
                bad = sorted(set(path) - known)
                raise ValueError(f"{split}: {e.source or e.question!r}: relations {bad} are not in the KG")
            else:
                kept.append(e)
            b = per_hop.setdefault("unknown" if e.hops is None else str(e.hops),
                                   {"n": 0, "covered": 0, "reasons": Counter(), "hop_labels": Counter()})
            b["n"] += 1
            if reason:
                b["reasons"][reason] += 1
            else:
                b["covered"] += 1
                b["hop_labels"][str(len(path))] += 1
        self.summary.setdefault("coverage", {})[split] = self._coverage(split, per_hop)
        return kept

    def _ranks_chains(self) -> bool:
        """Whether a ranker is trained on chain questions alone (plan_ranker=true). Not on graphs of
        one question each: on the Freebase-style subgraphs it answered 85.0 against 88.3 without and
        trained in 755 s against 409 (bench_relation_scorer subgraphs), so such a set trains the path
        predictor alone, as with plan_ranker=auto."""
        return self.wants_ranker is True and not getattr(self.kg, "per_question", False)

    def _answered_by_topic(self, examples: list[QAExample]) -> bool:
        """Whether at least ANSWERED_BY_TOPIC of the training questions are answered by their own
        topic alone (by id or label: "which books won the prize [X] won", X the only one): then a
        chain that walks back to its anchor is a plan (PlanLimits.round_trips), in training and in
        the checkpoint (`plan_round_trips`). A KG's questions seldom ask that ("who leads [X]'s
        council" answered X by `mayor, ^mayor`), so elsewhere such chains are no candidates."""
        asked = [e for e in examples if e.topic_entities and e.answers]
        if not asked or self.kg is None or getattr(self.kg, "per_question", False):
            return False
        self._fill_topic_labels(asked)  # read once: masking reads them next
        n = 0
        for e in asked:
            t = e.topic_entities[0]
            names = {normalize_answer(t), normalize_answer(self._topic_labels.get(t) or t)}
            n += all(normalize_answer(a) in names for a in e.answers)
        self.summary["answered_by_topic"] = n
        return n >= ANSWERED_BY_TOPIC * len(asked)

    def _label_plans(self, examples: list[QAExample], split: str) -> None:
        """Query plans (rra.data.plan_supervision): given ones kept, the others derived from the KG;
        each question beyond a chain (and, in a set that has such questions, every question) gets
        the candidate plans the ranker learns from."""
        from rra.data.plan_supervision import label_plans
        from rra.data.supervision import SupervisionConfig

        from rra.data.supervision import default_cache_dir

        cache = self.supervision_cache
        cache_dir = (default_cache_dir() if cache is True else cache) or None
        report = label_plans(self.kg, examples, SupervisionConfig(max_hops=self.max_hops, semantics=self.semantics),
                             adjacency=self._adjacency, seed=self.seed, cache_dir=cache_dir, every_question=self._ranks_chains(),
                             round_trips=self.round_trips)
        self.summary.setdefault("plans", {})[split] = report.to_dict()
        if any(s != "chain" for s in report.shapes):
            log.info("query plans (%s): %s", split, report.shapes)

    def _coverage(self, split: str, per_hop: dict) -> dict:
        """Coverage figures of one split; warns below `min_coverage`, stops when most topics are missing."""
        n = sum(b["n"] for b in per_hop.values())
        covered = sum(b["covered"] for b in per_hop.values())
        reasons = sum((b["reasons"] for b in per_hop.values()), Counter())
        out = {"n": n, "covered": covered, "coverage": covered / n if n else None,
               "reasons": dict(reasons.most_common()),
               "per_hop": {h: {"n": b["n"], "covered": b["covered"], "coverage": b["covered"] / b["n"],
                               "reasons": dict(b["reasons"].most_common()),
                               "hop_labels": dict(sorted(b["hop_labels"].items()))}
                           for h, b in sorted(per_hop.items())}}
        from rra.data.supervision import NO_TOPIC, TOPIC_MISSING

        if n and reasons.get(NO_TOPIC, 0) > n / 2:
            raise ValueError(
                f"{split}: {reasons[NO_TOPIC]} of {n} questions have no topic entity: training needs each question's "
                "topic (topic_entities, by id or by name, or the name marked [...] in the question), or "
                "datamodule.link_topics=true to link them from the text")
        if n and reasons.get(TOPIC_MISSING, 0) > n / 2:
            raise ValueError(
                f"{split}: the topic entities of {reasons[TOPIC_MISSING]} of {n} questions are not in the "
                f"knowledge graph ({self.dataset.kb_path or 'the configured KG'}): the questions and the KG do not "
                "belong together (check data.kb_path, and that topic_entities are the KG's entity ids)")
        if n and covered / n < self.min_coverage:
            lines = [f"  {h}-hop: {b['covered']}/{b['n']} ({100 * b['covered'] / b['n']:.1f}%) "
                     f"{dict(b['reasons'].most_common()) or ''}" for h, b in sorted(per_hop.items())]
            log.warning("\n%s\nLOW SUPERVISION COVERAGE: %s: only %d of %d questions (%.1f%%) have a usable "
                        "relation path; the others are dropped.\n%s\n%s", "!" * 72, split, covered, n,
                        100 * covered / n, "\n".join(lines), "!" * 72)
        return out

    @staticmethod
    def _cap(items: list, cap: int | None, rng: random.Random) -> list:
        """A seeded sample of at most `cap` items, in their original order (all hops represented)."""
        if cap is None or len(items) <= cap:
            return items
        return [items[i] for i in sorted(rng.sample(range(len(items)), cap))]

    def _cap_per_hop(self, examples: list[QAExample], cap: int | None, rng: random.Random) -> list[QAExample]:
        if cap is None:
            return examples
        by_hop: dict[int, list[QAExample]] = {}
        for e in examples:
            by_hop.setdefault(len(e.relation_path), []).append(e)
        kept = [e for h in sorted(by_hop) for e in (by_hop[h] if len(by_hop[h]) <= cap else rng.sample(by_hop[h], cap))]
        return kept

    def setup(self, stage: str | None = None) -> None:
        if self.splits:  # idempotent: Lightning calls setup per stage, model_kwargs calls it early
            return
        rng = random.Random(self.seed)
        self.kg = self._graph()
        try:
            self._setup(rng)
        finally:
            self._adjacency = None  # read once for the labellers of this setup, then let go

    def _setup(self, rng: random.Random) -> None:
        from rra.data.supervision import adjacency_once

        # one pass over the graph, on first need, for every labeller below (a per-question graph
        # is labelled question by question, on its own subgraph)
        self._adjacency = None if getattr(self.kg, "per_question", False) else adjacency_once(self.kg)
        self.relations = relation_vocabulary(self.kg)
        from rra.text.relations import RelationText, relation_names

        from rra.plans.reads import KindCheck

        self.relation_text = RelationText(relation_names(self.dataset.relation_labels), self.kg, KindCheck(self.kg))
        train = self._load("train")
        if train is None:
            raise ValueError("no training questions: the data config has no train source (data.train_file=...)")
        self.round_trips = self._answered_by_topic(train)
        train = self._supervise(train, "train", self.train_paths)
        beyond = any(beyond_chain(e.extra.get("plan")) for e in train)
        self.plan_ranker = self.plans and (beyond or self._ranks_chains())
        self.chains_only = self.plan_ranker and not beyond
        val = self._load("val")
        if val is None:  # seeded hold-out from the training examples
            order = list(range(len(train)))
            rng.shuffle(order)
            n_val = max(1, round(self.val_fraction * len(train))) if self.val_fraction > 0 else 0
            val = [train[i] for i in sorted(order[:n_val])]
            train = [train[i] for i in sorted(order[n_val:])]
        else:
            val = self._supervise(val, "val", self.train_paths)
        train = self._cap_per_hop(train, self.max_train_per_hop, rng)
        test = self._load("test")
        test = self._supervise(test, "test") if test is not None else []
        if self.max_test is not None and len(test) > self.max_test:
            test = rng.sample(test, self.max_test)
        self.splits = {
            "train": self._items(train, self.dedupe, walks=True),
            "val": self._cap(self._items(val, self.dedupe), self.max_val, rng),
            "test": self._items(test, dedupe=False),  # per question, so accuracy is per question
        }
        # what the model is trained on decides how it reads relations everywhere: kinds only if some
        # training text has one (validation or test relations with a kind do not count)
        self.kinds_read = self.relation_kinds and any(
            self.relation_text.kind(r) for x in self.splits["train"] for r in x.get("texts") or ())
        self.summary.update(
            relations=len(self.relations),
            semantics=vars(self.semantics).copy(),
            train_paths=self.train_paths,
            train_questions=len(train),
            **{f"{k}_items": len(v) for k, v in self.splits.items()},
            **{f"{k}_ranking_items": sum(len(x.get("with", ())) for x in v) for k, v in self.splits.items()},
            train_hops=dict(sorted(Counter(len(x["path"]) for x in self.splits["train"] if x["path"]).items())),
        )
        log.info("retriever data: %s", {k: v for k, v in self.summary.items() if k not in ("supervision", "coverage")})
        if not self.splits["train"]:
            raise ValueError("no training examples with a usable relation path")

    # -- loaders -------------------------------------------------------------------------------
    def _loader(self, split: str, shuffle: bool) -> DataLoader:
        return DataLoader(
            self.splits[split],
            batch_size=self.batch_size if split == "train" else self.eval_batch_size,
            shuffle=shuffle,
            collate_fn=collate,
            num_workers=self.num_workers,
            persistent_workers=self.num_workers > 0,
        )

    def train_dataloader(self) -> DataLoader:
        return self._loader("train", shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self._loader("val", shuffle=False)

    def test_dataloader(self) -> DataLoader:
        return self._loader("test", shuffle=False)
