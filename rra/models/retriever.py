"""The RRA retriever: hop classifier + sequential relation-path predictor on ONE shared encoder.

Why one LightningModule with a shared encoder and two heads, not two models:
- The hop classifier and the first path step read the same text (the masked question), so one
  encoder pass gives both the hop distribution and the first-relation scores: inference costs
  `1 + (hops-1) * beams` encoder passes per question instead of `2 + ...`.
- One checkpoint holds everything inference needs (relation vocabulary, encoder config, tokenizer,
  max hops, masking), so `Retriever.load(path)` is the whole loading story.
- Multi-task training is a mild regulariser (the hop signal shapes the same question encoding that
  the first step uses); on MetaQA both tasks reach >= 99.5% together, so there is no accuracy cost.
- The heads stay separate modules (`HopClassifier`, `RelationPathPredictor`) with their own loss,
  so either can be reused or weighted (`hop_loss_weight`).

Inference for the pipeline:
    model = Retriever.load("checkpoints/retriever/best.ckpt", map_location="cpu")
    model.check_relations(kg.relation_types())        # clear error on a KG with other relations
    preds = model.predict(["who directed [Alien]"], topk=3)   # list[list[PathPrediction]]
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import lightning as L
import torch
from torch.nn import ModuleDict
from torch.nn import functional as F
from torchmetrics import MaxMetric, MeanMetric

from rra.graph.base import INVERSE_PREFIX, inverse
from rra.models.checkpoint import CheckpointError, load_weights, read_checkpoint  # noqa: F401 (CheckpointError: re-exported)
from rra.models.encoder import load_encoder, tokenizer_from_state, tokenizer_to_state
from rra.models.hop_classifier import HopClassifier
from rra.models.path_predictor import RelationPathPredictor, beam_search, step_text
from rra.models.plan_head import PlanHead, PlanPrediction, plan_targets, read_predictions
from rra.models.schedule import warmup_schedule
from rra.text import mask_topic
from rra.resources import DEFAULT_ENCODER

CHECKPOINT_FORMAT = "rra-retriever"
CHECKPOINT_VERSION = 1
# predict()'s text -> encoding cache: masked question templates repeat (MetaQA: ~500 in 39k questions)
ENCODING_CACHE_SIZE = 50_000
# graph pruning skips a question whose path prefix reaches more entities than this (too costly to check)
MAX_FRONTIER = 5000


class RelationMismatchError(ValueError):
    """The checkpoint was trained on a KG with a different relation set."""


@dataclass
class PathPrediction:
    path: list[str]  # relations, inverse ones written `^r`
    score: float  # product of the step probabilities
    hop: int  # path length the search was run for
    hop_prob: float  # the hop classifier's probability of that length

    def to_dict(self) -> dict:
        return asdict(self)


class Retriever(L.LightningModule):
    def __init__(
        self,
        relations: Sequence[str],
        max_hops: int = 3,
        encoder: str = DEFAULT_ENCODER,
        encoder_config: dict | None = None,
        pretrained: bool = True,
        max_length: int = 48,
        mask_token: str | None = "[E]",
        freeze_encoder: bool = False,
        lr: float = 5e-5,
        head_lr: float = 1e-3,
        weight_decay: float = 0.01,
        warmup_ratio: float = 0.1,
        schedule: str = "linear",  # "linear" (warm-up then linear decay) or "constant" (after warm-up)
        hop_loss_weight: float = 1.0,
        dropout: float = 0.1,
        beam: int = 3,
        tokenizer_state: dict | None = None,
        plan_heads: bool = False,  # set by the data when it has questions beyond one chain
        plan_loss_weight: float = 1.0,
    ):
        super().__init__()
        # tokenizer_state is a large JSON string; it travels in checkpoint["rra"], not in hparams
        self.save_hyperparameters(ignore=["tokenizer_state"])
        if not relations:
            raise ValueError("Retriever needs a non-empty relation vocabulary")
        if len(set(relations)) != len(relations):
            raise ValueError("relation vocabulary has duplicates")
        self.relations = list(relations)
        self.rel_index = {r: i for i, r in enumerate(self.relations)}
        tokenizer = tokenizer_from_state(tokenizer_state) if tokenizer_state else None
        self.encoder = load_encoder(encoder, encoder_config, pretrained, max_length, tokenizer)
        self.encoder.train()  # from_pretrained returns eval mode; Lightning keeps modes as found
        if freeze_encoder:
            self.encoder.requires_grad_(False)
        self.hop_head = HopClassifier(self.encoder.dim, max_hops, dropout)
        self.path_head = RelationPathPredictor(self.encoder.dim, len(self.relations), dropout)
        # query-plan heads (rra.models.plan_head) only for data with several anchors or conditions:
        # a retriever trained on chains has none, so it is the model it always was
        self.plan_head = PlanHead(self.encoder.dim, len(self.relations), dropout) if plan_heads else None
        sep = self.encoder.tokenizer.sep_token
        self.sep = sep if sep else "|"

        # one set of metrics per split; per-hop path accuracy for evaluation splits
        def metrics(evaluation: bool) -> ModuleDict:
            names = ["loss", "hop_acc", "step_acc"]
            if plan_heads:
                names.append("plan_acc")
            if evaluation:
                names += ["path_acc", f"path_acc_top{beam}"] + [f"path_acc_{h}hop" for h in range(1, max_hops + 1)]
            return ModuleDict({n: MeanMetric() for n in names})

        # (not one ModuleDict keyed by split: "train" is a reserved nn.Module attribute)
        self.train_metrics, self.val_metrics, self.test_metrics = metrics(False), metrics(True), metrics(True)
        self.val_path_acc_best = MaxMetric()
        self.encoded_texts = 0  # sequences encoded by predict(): for "encoder passes per question"
        self.cache_size = ENCODING_CACHE_SIZE
        self._predict_cache: dict[str, torch.Tensor] = {}
        self.checkpoint_path: str | None = None
        self._batch_start = 0.0
        self.decoded: list[dict] = []  # this validation epoch's decodes, for dashboards (rra.training.dashboard)

    # -- encoding ----------------------------------------------------------------------------
    def mask(self, question: str, topic_entities: Sequence[str] = ()) -> str:
        return mask_topic(question, topic_entities, self.hparams.mask_token)

    def encode(self, texts: list[str]) -> torch.Tensor:
        if self.hparams.freeze_encoder:
            with torch.no_grad():
                return self.encoder(texts)
        return self.encoder(texts)

    def encode_unique(self, texts: list[str], batch_size: int = 256, cache: dict | None = None) -> torch.Tensor:
        """Encode each distinct text once (masked templates repeat a lot), length-sorted batches.
        `cache` (text -> vector) carries encodings across calls; predict() passes its own, which
        training clears, since the weights change."""
        cache = cache if cache is not None else {}
        todo = sorted({t for t in texts if t not in cache}, key=len)
        for b in range(0, len(todo), batch_size):
            chunk = todo[b : b + batch_size]
            cache.update(zip(chunk, self.encode(chunk)))
        self.encoded_texts += len(todo)
        out = torch.stack([cache[t] for t in texts])
        if len(cache) > self.cache_size:  # bounded: drop the oldest entries
            for key in list(cache)[: len(cache) - self.cache_size]:
                del cache[key]
        return out

    def path_ids(self, path: Sequence[str], where: str = "") -> list[int]:
        try:
            return [self.rel_index[r] for r in path]
        except KeyError as e:
            raise ValueError(f"{where}: relation {e.args[0]!r} is not in the model's vocabulary") from None

    # -- training ----------------------------------------------------------------------------
    def model_step(self, batch: dict) -> dict:
        """Teacher-forced loss for a batch {"question": [...], "path": [[rel, ...] | None, ...],
        optional "plan": [plan label | None, ...]}: each question with a path expands into one
        encoder input per path step; row 0 of each also feeds the hop head (and the plan heads).
        A question with a plan label but no path (a conjunction's question with every anchor
        masked) adds one row for the plan heads. Shared by train/val/test."""
        questions = [self.mask(q) for q in batch["question"]]
        plans = batch.get("plan") or [None] * len(questions)
        texts, targets, first_rows, hops, paths, plan_rows, plan_labels = [], [], [], [], [], [], []
        step_rows = []  # rows that are path steps (all of them unless plan-only rows were added)
        for q, path, plan in zip(questions, batch["path"], plans):
            if path is None:
                if plan is not None and self.plan_head is not None:
                    plan_rows.append(len(texts))
                    plan_labels.append(plan)
                    texts.append(q)
                continue
            if not 1 <= len(path) <= self.hparams.max_hops:
                raise ValueError(f"path {path} of {q!r}: length must be 1..{self.hparams.max_hops}")
            first_rows.append(len(texts))
            hops.append(len(path))
            paths.append(path)
            if plan is not None and self.plan_head is not None:
                plan_rows.append(len(texts))
                plan_labels.append(plan)
            ids = self.path_ids(path, q)
            for t in range(len(path)):
                step_rows.append(len(texts))
                texts.append(step_text(q, path[:t], self.sep))
                targets.append(ids[t])
        pooled = self.encode(texts)
        out = {"questions": [q for q, p in zip(questions, batch["path"]) if p is not None], "hops": hops,
               "paths": paths}
        loss = pooled.new_zeros(())
        if first_rows:
            targets_t = torch.tensor(targets, device=pooled.device)
            hops_t = torch.tensor(hops, device=pooled.device)
            first = pooled[torch.tensor(first_rows, device=pooled.device)]
            steps = pooled if len(step_rows) == len(texts) else pooled[torch.tensor(step_rows, device=pooled.device)]
            hop_logits = self.hop_head(first)
            rel_logits = self.path_head(steps)
            loss = self.hparams.hop_loss_weight * self.hop_head.loss(hop_logits, hops_t) + \
                self.path_head.loss(rel_logits, targets_t)
            first_steps = torch.tensor([step_rows.index(r) for r in first_rows], device=pooled.device)
            out.update(hop_correct=(hop_logits.argmax(-1) + 1 == hops_t).float(),
                       step_correct=(rel_logits.argmax(-1) == targets_t).float(),
                       first_hop_logits=hop_logits,
                       first_rel_logits=rel_logits[first_steps])
        if plan_rows:
            logits = self.plan_head(pooled[torch.tensor(plan_rows, device=pooled.device)])
            plan_t = plan_targets(plan_labels, self.rel_index, pooled.device)
            loss = loss + self.hparams.plan_loss_weight * self.plan_head.loss(logits, plan_t)
            out["plan_correct"] = PlanHead.correct(logits, plan_t)
        out["loss"] = loss
        return out

    def _log(self, split: str, name: str, values: torch.Tensor, n: int, prog_bar: bool = False):
        metric = getattr(self, f"{split}_metrics")[name]
        metric.update(values)
        self.log(f"{split}/{name}", metric, on_step=False, on_epoch=True, batch_size=n, prog_bar=prog_bar,
                 sync_dist=False)

    def _shared_step(self, batch: dict, split: str) -> torch.Tensor:
        out = self.model_step(batch)
        n = len(batch["question"])
        self._log(split, "loss", out["loss"].detach(), n, prog_bar=True)
        if "hop_correct" in out:
            self._log(split, "hop_acc", out["hop_correct"], len(out["hops"]), prog_bar=split != "train")
            self._log(split, "step_acc", out["step_correct"], len(out["step_correct"]))
            if split != "train":
                self._log_decoding(out, split)
        if "plan_correct" in out:
            self._log(split, "plan_acc", out["plan_correct"], len(out["plan_correct"]), prog_bar=split != "train")
        return out["loss"]

    def _log_decoding(self, out: dict, split: str) -> None:
        """Full decoding as at inference: predicted hop count, beam search, compare to gold path."""
        beam = self.hparams.beam
        hop_pred = out["first_hop_logits"].argmax(-1) + 1
        beams = self._search(out["questions"], out["first_rel_logits"], hop_pred.tolist(), beam)
        gold = [tuple(self.path_ids(p)) for p in out["paths"]]
        top1 = torch.tensor([float(bool(b) and b[0][0] == g) for b, g in zip(beams, gold)], device=self.device)
        topk = torch.tensor([float(any(p == g for p, _ in b)) for b, g in zip(beams, gold)], device=self.device)
        n = len(gold)
        self._log(split, "path_acc", top1, n, prog_bar=True)
        self._log(split, f"path_acc_top{beam}", topk, n)
        if split == "val":
            for q, b, path, g, hop in zip(out["questions"], beams, out["paths"], gold, hop_pred.tolist()):
                best = list(b[0][0]) if b else []
                self.decoded.append({"question": q, "gold_path": list(path), "pred_path": [self.relations[i] for i in best],
                                     "gold_hop": len(path), "pred_hop": hop, "correct": bool(b) and b[0][0] == g})
        hops = torch.tensor(out["hops"], device=self.device)
        for h in range(1, self.hparams.max_hops + 1):
            if (hops == h).any():
                self._log(split, f"path_acc_{h}hop", top1[hops == h], int((hops == h).sum()))

    def training_step(self, batch, batch_idx):
        return self._shared_step(batch, "train")

    def validation_step(self, batch, batch_idx):
        return self._shared_step(batch, "val")

    def test_step(self, batch, batch_idx):
        return self._shared_step(batch, "test")

    def on_train_start(self) -> None:
        self.val_path_acc_best.reset()  # drop what the sanity check put there

    def on_train_batch_start(self, batch, batch_idx) -> None:
        self._predict_cache.clear()  # weights are about to change
        self._batch_start = time.perf_counter()

    def on_train_batch_end(self, outputs, batch, batch_idx) -> None:
        n = len(batch["question"])
        dt = max(time.perf_counter() - self._batch_start, 1e-9)
        self.log("train/samples_per_s", n / dt, on_step=True, on_epoch=False, batch_size=n)

    def on_validation_epoch_start(self) -> None:
        self.decoded = []

    def on_validation_epoch_end(self) -> None:
        if self.val_metrics["path_acc"].update_count:
            self.val_path_acc_best(self.val_metrics["path_acc"].compute())
            self.log("val/path_acc_best", self.val_path_acc_best.compute(), prog_bar=True)

    def configure_optimizers(self):
        hp = self.hparams
        heads = list(self.hop_head.parameters()) + list(self.path_head.parameters())
        if self.plan_head is not None:
            heads += list(self.plan_head.parameters())
        groups = [{"params": heads, "lr": hp.head_lr}]
        encoder = [p for p in self.encoder.parameters() if p.requires_grad]
        if encoder:
            groups.append({"params": encoder, "lr": hp.lr})
        optimizer = torch.optim.AdamW(groups, weight_decay=hp.weight_decay)
        total = self.trainer.estimated_stepping_batches
        warmup = int(hp.warmup_ratio * total) if math.isfinite(total) else 0
        return {"optimizer": optimizer, "lr_scheduler": warmup_schedule(optimizer, total, warmup, hp.schedule)}

    # -- inference ---------------------------------------------------------------------------
    def _search(self, questions: list[str], first_logits: torch.Tensor, lengths: list[int], beam: int,
                query_question: list[int] | None = None, batch_size: int = 256, cache: dict | None = None,
                allowed=None):
        """Beam search for query j over question `query_question[j]` (default j) with `lengths[j]` steps.
        `allowed(items)`: optional graph pruning over (question index, prefix) items."""
        qq = query_question if query_question is not None else list(range(len(lengths)))

        def score(items):
            texts = [step_text(questions[qq[j]], [self.relations[r] for r in prefix], self.sep) for j, prefix in items]
            return F.log_softmax(self.path_head(self.encode_unique(texts, batch_size, cache)).float(), -1)

        allow = (lambda items: allowed([(qq[j], prefix) for j, prefix in items])) if allowed else None
        first_logp = F.log_softmax(first_logits.float(), -1)[torch.tensor(qq, device=first_logits.device)]
        return beam_search(first_logp, lengths, beam, score, allow)

    def graph_pruner(self, kg, topics: Sequence[str | None], max_frontier: int = MAX_FRONTIER):
        """`allowed` for beam search: the relation ids with an instance from the entities a prefix
        reaches from question i's topic entity `topics[i]` in `kg` (None: no pruning for that
        question, e.g. no topic or a frontier above `max_frontier` entities)."""
        frontiers: dict[tuple[str, tuple[int, ...]], set[str] | None] = {}
        nexts: dict[tuple[str, tuple[int, ...]], set[int] | None] = {}

        def frontier(topic: str, prefix: tuple[int, ...]) -> set[str] | None:
            key = (topic, prefix)
            if key not in frontiers:
                if not prefix:
                    frontiers[key] = {topic} if kg.has_entity(topic) else set()
                else:
                    before = frontier(topic, prefix[:-1])
                    if before is None:
                        frontiers[key] = None
                    else:
                        found = kg.neighbors_batch(sorted(before), self.relations[prefix[-1]]) if before else {}
                        reached = {e for ends in found.values() for e in ends}
                        frontiers[key] = reached if len(reached) <= max_frontier else None
            return frontiers[key]

        def allowed(items):
            out = []
            for i, prefix in items:
                topic = topics[i] if i < len(topics) else None
                if not topic:
                    out.append(None)
                    continue
                key = (topic, tuple(prefix))
                if key not in nexts:
                    ends = frontier(topic, key[1])
                    nexts[key] = None if ends is None else {
                        self.rel_index[r] for e in ends for r in kg.relations(e) if r in self.rel_index}
                out.append(nexts[key])
            return out

        return allowed

    @torch.no_grad()
    def predict(
        self,
        questions: Sequence[str],
        topk: int = 3,
        hops: int | None = None,
        try_second_hop: bool = False,
        batch_size: int = 256,
        topic_entities: Sequence[Sequence[str]] | None = None,
        use_cache: bool = True,
        kg=None,
        topics: Sequence[str | None] | None = None,
        graph_pruning: bool = True,
    ) -> list[list[PathPrediction]]:
        """Top-`topk` relation paths per question, best first.

        hops: None -> the hop classifier's choice; an int forces that length.
        try_second_hop: also search the classifier's second-best length; those paths follow the
            first length's (so a caller can fall back when the first ones have no KG instance).
        topic_entities: per question, entity strings to mask when the question has no `[...]` span.
        use_cache: reuse encodings of texts seen by earlier calls (bounded by `cache_size`); with
            masked topic entities, templated questions then cost almost no encoder passes.
        """
        if hops is not None and not 1 <= hops <= self.hparams.max_hops:
            raise ValueError(f"hops={hops} outside 1..{self.hparams.max_hops}")
        was_training = self.training
        if was_training:  # in training mode the weights may have changed since the last call
            self._predict_cache.clear()
        self.eval()
        try:
            mask_with = topic_entities or [()] * len(questions)
            masked = [self.mask(q, t) for q, t in zip(questions, mask_with)]
            cache = self._predict_cache if use_cache else None
            pooled = self.encode_unique(masked, batch_size, cache)
            hop_rank, hop_prob = HopClassifier.predict(self.hop_head(pooled))
            first_logits = self.path_head(pooled)
            queries = []  # (question index, hop, hop probability)
            for i in range(len(masked)):
                if hops is not None:
                    queries.append((i, hops, float(hop_prob[i][hop_rank[i] == hops])))
                    continue
                for rank in range(2 if try_second_hop and self.hparams.max_hops > 1 else 1):
                    queries.append((i, int(hop_rank[i, rank]), float(hop_prob[i, rank])))
            if topics is not None and len(topics) != len(masked):
                raise ValueError(f"predict: {len(topics)} topics for {len(masked)} questions")
            allowed = self.graph_pruner(kg, topics) if graph_pruning and kg is not None and topics else None
            beams = self._search(masked, first_logits, [h for _, h, _ in queries], topk,
                                 [i for i, _, _ in queries], batch_size, cache, allowed)
            results: list[list[PathPrediction]] = [[] for _ in masked]
            for (i, hop, p), found in zip(queries, beams):
                results[i] += [
                    PathPrediction([self.relations[r] for r in ids], math.exp(s), hop, p) for ids, s in found
                ]
            return results
        finally:
            self.train(was_training)

    @torch.no_grad()
    def predict_plan(self, questions: Sequence[str], batch_size: int = 256,
                     use_cache: bool = True) -> list[PlanPrediction] | None:
        """The plan heads' reading of each question (every anchor marked `[...]`); None when this
        retriever has no plan heads (trained on chains only). The encodings come from predict()'s
        cache when it has just read the same texts, so a chain question costs no extra pass."""
        if self.plan_head is None:
            return None
        was_training = self.training
        if was_training:
            self._predict_cache.clear()
        self.eval()
        try:
            masked = [self.mask(q) for q in questions]
            pooled = self.encode_unique(masked, batch_size, self._predict_cache if use_cache else None)
            return read_predictions(self.plan_head(pooled), self.relations)
        finally:
            self.train(was_training)

    # -- checkpoints -------------------------------------------------------------------------
    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint["rra"] = {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "relations": self.relations,
            "max_hops": self.hparams.max_hops,
            "mask_token": self.hparams.mask_token,
            "encoder": self.hparams.encoder,
            "encoder_config": self.encoder.config_dict,
            "tokenizer": tokenizer_to_state(self.encoder.tokenizer),
        }

    @classmethod
    def load(cls, path: str | Path, map_location: str | torch.device = "cpu") -> "Retriever":
        """Rebuild a trained retriever from its checkpoint alone (no pretrained weights, no config):
        a checkpoint file, a directory written by `rra-export`, or a Hub id holding one."""
        ckpt = read_checkpoint(path, CHECKPOINT_FORMAT, CHECKPOINT_VERSION, "train one with `python train.py`",
                               map_location)
        info = ckpt["rra"]
        hp = dict(ckpt.get("hyper_parameters", {}))
        hp.update(relations=info["relations"], encoder_config=info["encoder_config"], pretrained=False,
                  tokenizer_state=info["tokenizer"])
        return load_weights(cls(**hp), ckpt, path, map_location)

    def quantize(self, mode: str | None) -> "Retriever":
        """Inference on CPU with the encoder's Linear layers in dynamic int8 (`mode="int8"`), a
        speed/accuracy trade measured in bench/bench_retriever.py; None leaves the model as is."""
        if mode in (None, "none", "fp32"):
            return self
        if mode != "int8":
            raise ValueError(f"quantize={mode!r}: supported are 'int8' and null")
        from torch.ao.quantization import quantize_dynamic

        self.encoder = quantize_dynamic(self.encoder.eval(), {torch.nn.Linear}, dtype=torch.qint8)
        self._predict_cache.clear()
        return self

    def check_relations(self, kg_relations: Sequence[str], strict: bool = False) -> str | None:
        """Compare the checkpoint's relations with the KG's (forward-only lists, as
        `KnowledgeGraph.relation_types()` gives, are expanded with their inverses).

        A relation the model predicts but the KG lacks is an error (its paths could never be
        followed). KG relations the model never saw are normal for a store holding more than the
        training KG: returned as a warning (count and the first few), an error only if `strict`."""
        kg = set(kg_relations)
        if not any(r.startswith(INVERSE_PREFIX) for r in kg):
            kg |= {inverse(r) for r in kg}
        mine = set(self.relations)
        where = self.checkpoint_path or "this retriever"
        missing = sorted(r for r in mine - kg if not r.startswith(INVERSE_PREFIX))
        if missing:
            raise RelationMismatchError(
                f"{where} knows {len(missing)} relation(s) this knowledge graph does not have: "
                f"{few(missing)}. Is it the KG the retriever was trained on (graph_iri / data.kb_path)? "
                "Else train a retriever on this KG (python train.py data=...)."
            )
        unseen = sorted(r for r in kg - mine if not r.startswith(INVERSE_PREFIX))
        if not unseen:
            return None
        message = (f"the knowledge graph has {len(unseen)} relation(s) {where} never saw (its paths "
                   f"will not use them): {few(unseen)}")
        if strict:
            raise RelationMismatchError(message + " (strict_relations=true)")
        return message


def few(items: Sequence[str], n: int = 8) -> str:
    """The first `n` items and how many more: error messages never list hundreds of names."""
    shown = ", ".join(items[:n])
    return shown + (f", ... ({len(items) - n} more)" if len(items) > n else "")
