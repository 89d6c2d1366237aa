"""LightningDataModule for the retriever: any KG + any QA set with relation-path supervision.

Batches are plain text: {"question": [masked question, ...], "path": [[rel, ...], ...]}; the model
tokenises (so the tokenizer lives in one place, the checkpoint).

Supervision: with `train_paths="kg"` (default) every training/validation example is labelled from
the KG (`rra.data.supervision`: best answer-F1 path of length <= max_hops; the dataset's own path,
if any, stays in `extra["gold_path"]`). With `train_paths="given"` the loaded `relation_path`s are
used and only missing ones are labelled from the KG. Test examples keep their given (gold) paths.

Every source is injected (Hydra `_target_`, `_partial_: true` for lazy loading):
    kg:     a KnowledgeGraph, or a zero-argument callable returning one
    train / val / test: a list of QAExample, or a callable returning one; a callable with a `kg`
            parameter receives the loaded graph (question generators need it)
The validation set, when not given, is a seeded `val_fraction` of the training examples.
"""
from __future__ import annotations

import inspect
import logging
import random
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Sequence

import lightning as L
from torch.utils.data import DataLoader

from rra.data.records import QAExample
from rra.graph.base import INVERSE_PREFIX, KnowledgeGraph, inverse
from rra.models.path_predictor import mask_topic

log = logging.getLogger(__name__)

Source = Sequence[QAExample] | Callable[..., Sequence[QAExample]] | None


def relation_vocabulary(kg: KnowledgeGraph) -> list[str]:
    """Every KG relation in both directions: forward ones sorted, then their inverses."""
    forward = sorted(r for r in kg.relation_types() if not r.startswith(INVERSE_PREFIX))
    return forward + [inverse(r) for r in forward]


def collate(items: list[dict]) -> dict[str, list]:
    return {"question": [x["question"] for x in items], "path": [x["path"] for x in items]}


class RetrieverDataModule(L.LightningDataModule):
    def __init__(
        self,
        kg: KnowledgeGraph | Callable[[], KnowledgeGraph],
        train: Source,
        test: Source = None,
        val: Source = None,
        train_paths: str = "kg",
        label_paths: Callable | None = None,
        supervision_cache: str | bool = True,
        root: str | None = None,
        hop: int | Sequence[int] | None = None,
        val_fraction: float = 0.1,
        max_hops: int = 3,
        mask_token: str | None = "[E]",
        dedupe: bool = True,  # one item per distinct masked question (train and val)
        max_train_per_hop: int | None = None,
        max_val: int | None = None,
        max_test: int | None = None,
        batch_size: int = 32,
        eval_batch_size: int = 64,
        num_workers: int = 0,
        seed: int = 0,
    ):
        super().__init__()
        self.kg_source, self.sources = kg, {"train": train, "val": val, "test": test}
        if train_paths not in ("kg", "given"):
            raise ValueError(f"train_paths must be 'kg' or 'given', not {train_paths!r}")
        self.train_paths, self.supervision_cache = train_paths, supervision_cache
        self.label_paths = label_paths or self.kg_labels
        self.root = root  # the dataset folder that the loaders' configs read (${data.root})
        # keep only questions of these dataset hop sets (QAExample.hops), e.g. data.hop=2
        self.hop = None if hop is None else {int(hop)} if isinstance(hop, (int, str)) else {int(h) for h in hop}
        self.val_fraction, self.max_hops, self.mask_token = val_fraction, max_hops, mask_token
        self.dedupe, self.seed = dedupe, seed
        self.max_train_per_hop, self.max_val, self.max_test = max_train_per_hop, max_val, max_test
        self.batch_size, self.eval_batch_size, self.num_workers = batch_size, eval_batch_size, num_workers
        self.kg: KnowledgeGraph | None = None
        self.relations: list[str] = []
        self.splits: dict[str, list[dict]] = {}
        self.summary: dict[str, Any] = {}

    # -- what the model needs from the data (train.py passes it to the model's constructor) --
    def model_kwargs(self) -> dict:
        self.setup("fit")
        return {"relations": self.relations, "max_hops": self.max_hops, "mask_token": self.mask_token}

    # -- loading -------------------------------------------------------------------------------
    def _load(self, source: Source) -> list[QAExample] | None:
        if source is None:
            return None
        if callable(source):
            takes_kg = "kg" in inspect.signature(source).parameters
            source = source(kg=self.kg) if takes_kg else source()
        return [e for e in source if self.hop is None or e.hops in self.hop]

    def kg_labels(self, kg: KnowledgeGraph, examples: list[QAExample], max_hops: int) -> None:
        """Default labeller: relation paths from the KG (rra.data.supervision), cached on disk."""
        from rra.data.supervision import SupervisionConfig, label_examples

        cache = self.supervision_cache
        kwargs = {} if cache is True else {"cache_dir": cache or None}
        report = label_examples(kg, examples, SupervisionConfig(max_hops=max_hops), **kwargs)
        self.summary.setdefault("supervision", []).append(report.to_dict())
        log.info("KG supervision: %d of %d questions covered (%.1f s)", report.covered, report.n, report.seconds)

    def _supervise(self, examples: list[QAExample], split: str, relabel: bool = False) -> list[QAExample]:
        """Label paths from the KG (all when `relabel`, else the missing ones); drop (and count)
        examples without a usable path."""
        todo = list(examples) if relabel else [e for e in examples if e.relation_path is None]
        if todo:
            self.label_paths(self.kg, todo, self.max_hops)
        known = set(self.relations)
        kept, dropped = [], Counter()
        for e in examples:
            path = e.relation_path
            if not path:
                dropped["no path"] += 1
            elif len(path) > self.max_hops:
                dropped[f"longer than {self.max_hops}"] += 1
            elif not set(path) <= known:
                bad = sorted(set(path) - known)
                raise ValueError(f"{split}: {e.source or e.question!r}: relations {bad} are not in the KG")
            else:
                kept.append(e)
        if dropped:
            log.warning("%s: dropped %d of %d examples: %s", split, sum(dropped.values()), len(examples), dict(dropped))
        self.summary[f"{split}_dropped"] = dict(dropped)
        return kept

    def _items(self, examples: list[QAExample], dedupe: bool) -> list[dict]:
        items = [
            {"question": mask_topic(e.question, e.topic_entities, self.mask_token), "path": list(e.relation_path)}
            for e in examples
        ]
        if dedupe:
            # Masked templates repeat (MetaQA: ~500 distinct masked questions in 39k). Keep each
            # distinct masked question once, labelled with the path that explains its questions
            # best overall: the sum over its questions of each candidate path's answer-F1 (from KG
            # supervision), then how often it was the label. Per-question KG labels are noisy where
            # two relations reach the same answers (a film's director is often its writer); summed
            # over a template, the relation the question is about wins.
            votes: dict[str, Counter] = {}
            for e, x in zip(examples, items):
                v = votes.setdefault(x["question"], Counter())
                v[tuple(x["path"])] += 1e-6  # tie-break: the most frequent label
                for cand in e.extra.get("path_candidates") or ():
                    if len(cand["path"]) <= self.max_hops:
                        v[tuple(cand["path"])] += float(cand.get("f1", 0.0))
            items = [{"question": q, "path": list(v.most_common(1)[0][0])} for q, v in votes.items()]
        return items

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
        if self.root is not None and not Path(self.root).exists():
            raise FileNotFoundError(f"dataset folder data.root={self.root} does not exist")
        self.kg = self.kg_source() if callable(self.kg_source) else self.kg_source
        self.relations = relation_vocabulary(self.kg)
        relabel = self.train_paths == "kg"
        train = self._supervise(self._load(self.sources["train"]), "train", relabel)
        val = self._load(self.sources["val"])
        if val is None:  # seeded hold-out from the training examples
            order = list(range(len(train)))
            rng.shuffle(order)
            n_val = max(1, round(self.val_fraction * len(train))) if self.val_fraction > 0 else 0
            val = [train[i] for i in sorted(order[:n_val])]
            train = [train[i] for i in sorted(order[n_val:])]
        else:
            val = self._supervise(val, "val", relabel)
        train = self._cap_per_hop(train, self.max_train_per_hop, rng)
        test = self._load(self.sources["test"])
        test = self._supervise(test, "test") if test is not None else []
        if self.max_test is not None and len(test) > self.max_test:
            test = rng.sample(test, self.max_test)
        self.splits = {
            "train": self._items(train, self.dedupe),
            "val": self._cap(self._items(val, self.dedupe), self.max_val, rng),
            "test": self._items(test, dedupe=False),  # per question, so accuracy is per question
        }
        self.summary.update(
            relations=len(self.relations),
            train_questions=len(train),
            **{f"{k}_items": len(v) for k, v in self.splits.items()},
            train_hops=dict(sorted(Counter(len(x["path"]) for x in self.splits["train"]).items())),
        )
        log.info("retriever data: %s", self.summary)
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
