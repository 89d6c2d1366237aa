"""The RRA retriever: hop classifier + sequential relation-path predictor on ONE shared encoder.

Two path heads (`model.path_head`):
- `scorer` (default, rra.models.relation_scorer): each step reads the question + walked prefix and
  scores the relations that exist at the path's frontier in the graph by their names (bi-encoder,
  relation vectors cached), and whether the path ends after each; lengths compete in one beam
  and the hop classifier is only a prior (`hop_weight`). No relation vocabulary is learnt: a
  checkpoint answers on a KG whose relations it never saw.
- `classifier` (the paper's): a `Linear(d -> |R|)` over the training KG's relations, paths of the
  hop classifier's length. Kept to reproduce the paper's design and its figures.

Why one LightningModule with a shared encoder and two heads, not two models:
- The hop classifier and the first path step read the same text (the masked question), so one
  encoder pass gives both the hop distribution and the first step's query vector.
- One checkpoint holds everything inference needs (encoder config, tokenizer, max hops, masking,
  the head), so `Retriever.load(path)` is the whole loading story.
- Multi-task training is a mild regulariser; the heads stay separate modules with their own loss.

This file holds the LightningModule's heads, training and checkpoints. Two parts live beside it, in
mixins the class inherits: rra.models.path_search (`predict`, the searches for relation paths) and
rra.models.plan_ranking (the plan ranker's training step and `rank_plans`).

Inference for the pipeline:
    model = Retriever.load("checkpoints/retriever/best.ckpt", map_location="cpu")
    preds = model.predict(["who directed [Alien]"], topk=3, kg=kg, topics=["Alien"])
"""
from __future__ import annotations

import logging
import math
import time
from pathlib import Path
from typing import Sequence

import lightning as L
import torch
from torch.nn import ModuleDict
from torchmetrics import MaxMetric, MeanMetric

from rra.graph.base import INVERSE_PREFIX, inverse
from rra.models.checkpoint import CheckpointError, build, load_weights, read_checkpoint  # noqa: F401 (CheckpointError: re-exported)
from rra.models.encoder import (encode_cached, freeze_lower, load_encoder, sparse_embedding_grads, tokenizer_from_state,
                                tokenizer_to_state)
from rra.models.frontier import MAX_FRONTIER, Transitions
from rra.models.hop_classifier import HopClassifier
from rra.models.path_predictor import RelationPathPredictor, step_text
from rra.models.path_search import PathPrediction, PathSearch  # noqa: F401 (PathPrediction: re-exported)
from rra.models.plan_ranker import PlanRanker
from rra.models.plan_ranking import PlanRanking
from rra.models.relation_scorer import RelationScorer
from rra.models.schedule import adamw, warmup_schedule
from rra.resources import DEFAULT_ENCODER
from rra.text.questions import mask_topic
from rra.text.relations import relation_phrase

log = logging.getLogger(__name__)

CHECKPOINT_FORMAT = "rra-retriever"
CHECKPOINT_VERSION = 2  # 2: the path head is named (`path_head`); version 1 checkpoints are classifiers
PATH_HEADS = ("scorer", "classifier")
LENGTH_RULES = ("end_head", "path_text")  # how the scorer chooses a path's length (Retriever length_rule)
# predict()'s text -> encoding cache: masked question templates repeat (MetaQA: ~500 in 39k questions)
ENCODING_CACHE_SIZE = 50_000


class RelationMismatchError(ValueError):
    """The checkpoint was trained on a KG with a different relation set."""


class Retriever(PathSearch, PlanRanking, L.LightningModule):
    def __init__(
        self,
        relations: Sequence[str] | None = None,  # the training KG's (classifier head, no-graph fallback)
        max_hops: int = 3,
        encoder: str = DEFAULT_ENCODER,
        encoder_config: dict | None = None,
        pretrained: bool = True,
        max_length: int = 48,
        mask_token: str | None = "[E]",
        freeze_encoder: bool = False,
        freeze_embeddings: bool = False,  # the encoder's token embeddings (rra.models.encoder.freeze_lower)
        train_last_layers: int | None = None,  # train only the encoder's top k blocks (None: all)
        lr: float = 5e-5,
        head_lr: float = 1e-3,
        weight_decay: float = 0.01,
        warmup_ratio: float = 0.1,
        schedule: str = "linear",  # "linear" (warm-up then linear decay) or "constant" (after warm-up)
        hop_loss_weight: float = 1.0,
        dropout: float = 0.1,
        beam: int = 3,
        tokenizer_state: dict | None = None,
        plan_ranker: bool = False,  # set by the data (datamodule.plan_ranker: beyond one chain, or chains ranked whole)
        plan_loss_weight: float = 1.0,
        plan_scale: float = 20.0,  # the plan ranker's initial softmax scale over cosines (learnt)
        path_head: str = "scorer",  # "scorer": relations read by name over the graph's frontier; "classifier": the paper's
        scale: float = 20.0,  # the scorer's initial softmax scale over cosines (learnt)
        end_bias: float = 0.0,  # the scorer's initial logit of a path ending after a relation (0: P = 0.5)
        end_hidden: int = 256,  # the scorer's end head: hidden units of its MLP (0: a linear head)
        hop_weight: float = 0.0,  # scorer: weight of the hop classifier's log-probability in a path's score (a prior)
        max_frontier: int = MAX_FRONTIER,  # a frontier of more entities chooses among every KG relation
        prune_ratio: float = 0.02,  # scorer: a prefix this much less likely than the best finished path is not expanded
        plan_heads: bool = False,  # checkpoints of the earlier plan-head design (classes); their heads are not loaded
        plan_reads_kinds: bool = False,  # the ranker was trained on plan texts that say what their results are
        # (rra.plans.text.plan_words `kind`); the data sets it (datamodule.plan_kinds), older checkpoints read without
        plan_round_trips: bool = False,  # a chain back to its anchor is a plan: the training data asked such
        # questions (datamodule._answered_by_topic); older checkpoints and other data: no candidate
        pooled_operators: bool = True,  # the ranker's pooled plan vector reads operators (rra.plans.text.pooled_plan_text);
        # false leaves them to the word-matched modifiers (an option: not better in the runs made, docs/query_plans.md)
        operator_phrases: bool = False,  # the ranker also reads operator phrasings written beside a literal
        # (rra.models.plan_ranker.phrase_hits); conf/model/retriever.yaml sets it, older checkpoints read without
        answer_types: bool = False,  # the ranker reads what a question asks for against a plan's kind
        # (rra.models.plan_ranker.PlanRanker.kind_logits); conf/model/retriever.yaml sets it, older checkpoints read without
        relation_kinds: bool = False,  # the scorer reads what a relation leads to after its name ("place of birth
        # giving city", rra.text.relations.KindedRelationText); the data sets it (datamodule.relation_kinds), older checkpoints read without
        prefix_directions: bool = True,  # the scorer's step text marks a walked relation read backwards "(reverse)";
        # false drops the mark from the prefix (`_prefix_reader`; an option, docs/retriever.md)
        length_rule: str = "end_head",  # scorer: how a path's length is chosen: "end_head" (the trained P(end)) or
        # "path_text" (the path read as one phrase most like the question: retriever=zero_shot's; `_paths_by_text`)
        length_penalty: float = 0.08,  # path_text: cosine a path loses per relation
        word_dropout: float = 0.0,  # scorer, training only: each word of a question is left out with this chance
        transition_floor: float = 0.01,  # scorer: a candidate that barely touches the walked relation (under this share
        # both ways) is not walked after it (rra.models.frontier.Transitions; 0: off); older checkpoints search with it
    ):
        super().__init__()
        # tokenizer_state is a large JSON string; it travels in checkpoint["rra"], not in hparams
        self.save_hyperparameters(ignore=["tokenizer_state"])
        if path_head not in PATH_HEADS:
            raise ValueError(f"path_head must be one of {', '.join(PATH_HEADS)}, not {path_head!r}")
        if length_rule not in LENGTH_RULES:
            raise ValueError(f"length_rule must be one of {', '.join(LENGTH_RULES)}, not {length_rule!r}")
        relations = list(relations or [])
        if not relations and path_head == "classifier":
            raise ValueError("Retriever needs a non-empty relation vocabulary (the classifier head has a class per "
                             "relation)")
        if len(set(relations)) != len(relations):
            raise ValueError("relation vocabulary has duplicates")
        self.relations = relations
        self.rel_index = {r: i for i, r in enumerate(self.relations)}
        tokenizer = tokenizer_from_state(tokenizer_state) if tokenizer_state else None
        self.encoder = load_encoder(encoder, encoder_config, pretrained, max_length, tokenizer)
        self.encoder.train()  # from_pretrained returns eval mode; Lightning keeps modes as found
        if freeze_encoder:
            self.encoder.requires_grad_(False)
        freeze_lower(self.encoder.model, freeze_embeddings, train_last_layers, "retriever encoder")
        self.hop_head = HopClassifier(self.encoder.dim, max_hops, dropout)
        self.scorer = path_head == "scorer"
        self.path_head = (RelationScorer(self.encoder.dim, scale, end_bias, end_hidden) if self.scorer
                          else RelationPathPredictor(self.encoder.dim, len(self.relations), dropout))
        # the query-plan ranker (rra.models.plan_ranker) where the data asks for one (datamodule.plan_ranker:
        # plans beyond one chain, or chains ranked whole); a retriever trained without has none
        self.ranker = PlanRanker(self.encoder.dim, plan_scale, phrase_weight=2.0 if operator_phrases else None,
                                 answer_types=answer_types) if plan_ranker else None
        sep = self.encoder.tokenizer.sep_token
        self.sep = sep if sep else "|"

        # one set of metrics per split; per-hop path accuracy for evaluation splits
        def metrics(evaluation: bool) -> ModuleDict:
            names = ["loss", "hop_acc", "step_acc"]
            if plan_ranker:
                names.append("plan_acc")
            if evaluation:
                names += ["path_acc", f"path_acc_top{beam}"] + [f"path_acc_{h}hop" for h in range(1, max_hops + 1)]
            return ModuleDict({n: MeanMetric() for n in names})

        # (not one ModuleDict keyed by split: "train" is a reserved nn.Module attribute)
        self.train_metrics, self.val_metrics, self.test_metrics = metrics(False), metrics(True), metrics(True)
        self.val_path_acc_best = MaxMetric()
        self.val_retrieval_acc_best = MaxMetric()
        self.encoded_texts = 0  # sequences encoded by predict(): for "encoder passes per question"
        self.cache_size = ENCODING_CACHE_SIZE
        self._predict_cache: dict[str, torch.Tensor] = {}
        self._relation_cache: dict[str, torch.Tensor] = {}  # relation text -> unit vector (scorer)
        self._transitions: Transitions | None = None  # what may follow each relation in the last graph searched
        self._plan_cache: dict[str, torch.Tensor] = {}  # plan text -> vector (ranker, inference)
        self._plan_bank: dict[str, torch.Tensor] = {}  # plan text -> vector without gradients (ranker, one epoch)
        self._part_cache: dict[str, tuple] = {}  # modifier text -> (token vectors, mask, part_marks) (ranker, inference)
        self._part_bank: dict[str, tuple] = {}  # the same without gradients (ranker, one epoch of training)
        self._kind_cache: dict[str, torch.Tensor] = {}  # a plan kind's text -> unit vector (ranker, inference)
        self._kind_bank: dict[str, torch.Tensor] = {}  # the same, one epoch of training
        self._bank_step = -1  # global step whose weights encoded the banks
        self.graph = None  # (kg, relation text) for validation decoding: attach_graph
        self.noise: dict[str, float] = {}  # standard error of each accuracy of the last validation
        self.checkpoint_path: str | None = None
        self._batch_start = 0.0
        self.decoded: list[dict] = []  # this validation epoch's decodes, for dashboards (rra.training.dashboard)
        self.training_wordings: list[str] = []  # the masked questions trained on (set by training, kept in the checkpoint)
        self._pretrained_reading = None  # rra.models.pretrained_reading.PretrainedReading, built when first asked

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
        out, encoded = encode_cached(self.encode, texts, cache if cache is not None else {}, batch_size, self.cache_size)
        self.encoded_texts += encoded
        return out

    def path_ids(self, path: Sequence[str], where: str = "") -> list[int]:
        try:
            return [self.rel_index[r] for r in path]
        except KeyError as e:
            raise ValueError(f"{where}: relation {e.args[0]!r} is not in the model's vocabulary") from None

    # -- training ----------------------------------------------------------------------------
    def model_step(self, batch: dict) -> dict:
        """Teacher-forced loss for a batch {"question": [...], "path": [[rel, ...] | None, ...],
        optional "ranking": [{"positive": [plan text, ...], "negative": [...]} | None, ...]}: each
        question with a path expands into one encoder input per path step; row 0 of each also
        feeds the hop head. An item with a ranking (path None) is a question for the plan ranker,
        against its candidate plans (rra.models.plan_ranker). Shared by train/val/test."""
        out = self._scorer_step(batch) if self.scorer else self._classifier_step(batch)
        if self.ranker is not None and any(batch.get("ranking") or ()):
            loss, correct = self._ranking_step(batch)
            out["loss"] = out["loss"] + self.hparams.plan_loss_weight * loss
            out["plan_correct"] = correct
        return out

    def _classifier_step(self, batch: dict) -> dict:
        """model_step for the paper's classifier head."""
        questions = [self.mask(q) for q in batch["question"]]
        texts, targets, first_rows, hops, paths = [], [], [], [], []
        step_rows = []
        for q, path in zip(questions, batch["path"]):
            if path is None:  # a ranking item (the plan ranker's)
                continue
            if not 1 <= len(path) <= self.hparams.max_hops:
                raise ValueError(f"path {path} of {q!r}: length must be 1..{self.hparams.max_hops}")
            first_rows.append(len(texts))
            hops.append(len(path))
            paths.append(path)
            ids = self.path_ids(path, q)
            for t in range(len(path)):
                step_rows.append(len(texts))
                texts.append(step_text(q, path[:t], self.sep))
                targets.append(ids[t])
        pooled = self.encode(texts) if texts else None
        out = {"questions": [q for q, p in zip(questions, batch["path"]) if p is not None], "hops": hops,
               "paths": paths}
        loss = torch.zeros((), device=self.device)
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
        out["loss"] = loss
        return out

    def _scorer_step(self, batch: dict) -> dict:
        """model_step for the relation scorer. Each question with a path gives one row per step
        (the question + walked prefix) whose candidates are the relations at that step's frontier
        (batch["candidates"][i][t], from the graph; the gold one always among them), with the target
        relation and whether the path ends after it (unknown at max_hops, where it must).
        Relation texts (batch["texts"]) are encoded by the same encoder, every distinct one once
        per batch, so both sides of the bi-encoder learn."""
        questions = [self.mask(q) for q in batch["question"]]
        if self.training and self.hparams.get("word_dropout", 0.0) > 0:
            questions = [self._drop_words(q) for q in questions]
        n = len(questions)
        cands_all = batch.get("candidates") or [None] * n
        names = batch.get("texts") or {}
        text_of = lambda r: names.get(r) or relation_phrase(r)  # noqa: E731
        walked = self._prefix_reader(text_of)
        texts, first_rows, hops, paths = [], [], [], []
        row_cands, row_target, row_end, kept_q = [], [], [], []
        max_hops = self.hparams.max_hops
        for q, path, cands in zip(questions, batch["path"], cands_all):
            if path is None:  # a ranking item (the plan ranker's)
                continue
            if not 1 <= len(path) <= max_hops:
                raise ValueError(f"path {path} of {q!r}: length must be 1..{max_hops}")
            first_rows.append(len(texts))
            hops.append(len(path))
            paths.append(path)
            kept_q.append(q)
            for t, rel in enumerate(path):
                # without the graph's frontier (rows made by hand), every relation the model knows competes
                step = list(cands[t]) if cands is not None and len(cands) > t else list(self.relations)
                if rel not in step:
                    step.append(rel)  # the gold relation is always a candidate
                texts.append(step_text(q, path[:t], self.sep, walked))
                row_cands.append(step)
                row_target.append(rel)
                row_end.append(None if t + 1 == max_hops else t + 1 == len(path))
        pooled = self.encode(texts) if texts else None
        out = {"questions": kept_q, "hops": hops, "paths": paths}
        for key in ("anchor", "graph_key"):
            values = batch.get(key) or [None] * n
            out[key + "s"] = [v for v, p in zip(values, batch["path"]) if p is not None]
        loss = torch.zeros((), device=self.device)
        if first_rows:
            rels = sorted({r for c in row_cands for r in c})
            index = {r: i for i, r in enumerate(rels)}
            queries = pooled
            relation_vectors = self.encode([text_of(r) for r in rels])
            step_loss, correct = self.path_head.loss(queries, relation_vectors, [[index[r] for r in c] for c in row_cands],
                                                     [index[t] for t in row_target], row_end)
            hops_t = torch.tensor(hops, device=pooled.device)
            hop_logits = self.hop_head(pooled[torch.tensor(first_rows, device=pooled.device)])
            loss = self.hparams.hop_loss_weight * self.hop_head.loss(hop_logits, hops_t) + step_loss
            out.update(hop_correct=(hop_logits.argmax(-1) + 1 == hops_t).float(), step_correct=correct,
                       first_hop_logits=hop_logits)
        out["loss"] = loss
        return out

    def _drop_words(self, question: str) -> str:
        """The question with each word left out at `word_dropout`'s chance, the masked topic and
        literal slots (`[E]`, `[N1]`, `<e>`) always kept; the whole question where no other word
        would be left: a wording no training question used should not hinge on one word."""
        words = question.split()
        marked = ["[" in w or "<" in w for w in words]
        kept = [m or u >= self.hparams.word_dropout for m, u in zip(marked, torch.rand(len(words)).tolist())]
        if not any(k and not m for k, m in zip(kept, marked)):
            return question
        return " ".join(w for w, k in zip(words, kept) if k)

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
                accept = [a for a, p in zip(batch.get("accept") or [None] * n, batch["path"]) if p is not None]
                self._log_decoding(out, split, accept)
        if "plan_correct" in out:
            self._log(split, "plan_acc", out["plan_correct"], len(out["plan_correct"]), prog_bar=split != "train")
        return out["loss"]

    def _log_decoding(self, out: dict, split: str, accept: list | None = None) -> None:
        """Full decoding as at inference, compared to the gold path: the classifier's predicted hop
        count and beam search; the scorer's graph-constrained search (lengths from the search).
        `accept[i]`: other paths that explain item i's questions as well as its label (a KG-derived
        tie, rra.data.datamodule); a prediction among them counts as right, as its answers would."""
        beam = self.hparams.beam
        if self.scorer:
            found = self._decode_with_graph(out)
            hop_pred = [len(b[0]) if b else 0 for b in found]
        else:
            hop_pred = (out["first_hop_logits"].argmax(-1) + 1).tolist()
            beams = self._search(out["questions"], out["first_rel_logits"], hop_pred, beam)
            found = [[tuple(self.relations[r] for r in ids) for ids, _ in b] for b in beams]
        gold = [tuple(p) for p in out["paths"]]
        ok = [{g, *(tuple(a) for a in (alt or ()))} for g, alt in zip(gold, accept or [None] * len(gold))]
        top1 = torch.tensor([float(bool(b) and b[0] in o) for b, o in zip(found, ok)], device=self.device)
        topk = torch.tensor([float(bool(o & set(b))) for b, o in zip(found, ok)], device=self.device)
        n = len(gold)
        self._log(split, "path_acc", top1, n, prog_bar=True)
        self._log(split, f"path_acc_top{beam}", topk, n)
        if split == "val":
            for q, b, g, o, hop in zip(out["questions"], found, gold, ok, hop_pred):
                self.decoded.append({"question": q, "gold_path": list(g), "pred_path": list(b[0]) if b else [],
                                     "gold_hop": len(g), "pred_hop": hop, "correct": bool(b) and b[0] in o})
        hops = torch.tensor(out["hops"], device=self.device)
        for h in range(1, self.hparams.max_hops + 1):
            if (hops == h).any():
                self._log(split, f"path_acc_{h}hop", top1[hops == h], int((hops == h).sum()))

    def attach_graph(self, kg, relation_text=None) -> None:
        """The graph (and how its relations read) that validation decodes on: the scorer's search
        needs each step's frontier. train.py attaches the datamodule's KG."""
        self.graph = (kg, relation_text)

    def _decode_with_graph(self, out: dict) -> list[list[tuple[str, ...]]]:
        """The scorer's top paths per question, searched on the attached graph from each item's
        anchor (per-question graphs: inside its own subgraph). Without a graph, over the batch's
        own candidate relations at every step (a weaker check, said in the log once)."""
        kg, text_of = self.graph if self.graph is not None else (None, None)
        anchors = out.get("anchors") or [None] * len(out["questions"])
        keys = out.get("graph_keys") or [None] * len(out["questions"])
        beam = self.hparams.beam
        if kg is None or not any(anchors):
            preds = self.predict(out["questions"], topk=beam, use_cache=False)
            return [[tuple(p.path) for p in ps] for ps in preds]
        if getattr(kg, "per_question", False):
            found = []
            for q, a, key in zip(out["questions"], anchors, keys):
                with kg.scope(key):
                    ps = self.predict([q], topk=beam, kg=kg, topics=[a], relation_text=text_of, use_cache=False)[0]
                found.append([tuple(p.path) for p in ps])
            return found
        preds = self.predict(out["questions"], topk=beam, kg=kg, topics=anchors, relation_text=text_of,
                             use_cache=False)
        return [[tuple(p.path) for p in ps] for ps in preds]

    def training_step(self, batch, batch_idx):
        return self._shared_step(batch, "train")

    def validation_step(self, batch, batch_idx):
        return self._shared_step(batch, "val")

    def test_step(self, batch, batch_idx):
        return self._shared_step(batch, "test")

    def on_train_start(self) -> None:
        self.val_path_acc_best.reset()  # drop what the sanity check put there
        self.val_retrieval_acc_best.reset()

    def on_fit_start(self) -> None:
        # one process on a CPU: the embedding's gradient sparse until backward ends (a GPU zeroes the dense
        # one for nothing; DDP reduces dense gradients)
        sparse_embedding_grads(self.encoder.model, self.device.type == "cpu" and self.trainer.world_size == 1)

    def on_fit_end(self) -> None:
        sparse_embedding_grads(self.encoder.model, False)

    def on_train_batch_start(self, batch, batch_idx) -> None:
        self._forget_caches()  # weights are about to change
        self._batch_start = time.perf_counter()

    def _forget_caches(self) -> None:
        self._predict_cache.clear()
        self._relation_cache.clear()
        self._plan_cache.clear()
        self._part_cache.clear()
        self._kind_cache.clear()

    def weights_swapped(self) -> None:
        """Other weights were loaded in place (callbacks.weight_average swaps its average in and out
        around each validation): nothing encoded with the previous ones may be reused."""
        self._forget_caches()
        self._clear_banks()
        self._bank_step = -1

    def load_state_dict(self, *args, **kwargs):
        """As torch loads it, and nothing encoded with the weights before is reused: the pretrained mix
        validates each alpha so, and the test after training loads the published checkpoint so."""
        out = super().load_state_dict(*args, **kwargs)
        self.weights_swapped()
        return out

    def _clear_banks(self) -> None:
        self._plan_bank.clear()
        self._part_bank.clear()
        self._kind_bank.clear()

    def on_train_batch_end(self, outputs, batch, batch_idx) -> None:
        n = len(batch["question"])
        dt = max(time.perf_counter() - self._batch_start, 1e-9)
        self.log("train/samples_per_s", n / dt, on_step=True, on_epoch=False, batch_size=n)

    def _fresh_banks(self) -> None:
        """Banks encoded with the current weights: kept while no optimizer step has changed them
        (validation at an epoch's end fills them with the weights the next epoch starts from).
        Outside fitting (validate / test of loaded or mixed weights) they always start empty."""
        fitting = self._trainer is not None and self.trainer.state.fn == "fit"
        if not fitting or self._bank_step != self.global_step:
            self._clear_banks()
            self._bank_step = self.global_step if fitting else -1

    def on_train_epoch_start(self) -> None:
        self._fresh_banks()  # the banks are encoded anew with this epoch's weights

    def on_validation_epoch_start(self) -> None:
        self._fresh_banks()
        self.decoded = []

    def on_validation_epoch_end(self) -> None:
        """Also `val/retrieval_acc`, what checkpoints are chosen on (conf/task/retriever.yaml): the
        path accuracy, averaged with the plan ranker's accuracy where the model has one, since
        inference uses both."""
        parts = [self.val_metrics[k].compute() for k in ("path_acc", "plan_acc")
                 if k in self.val_metrics and self.val_metrics[k].update_count]
        self.noise = self._validation_noise()
        if self.val_metrics["path_acc"].update_count:
            self.val_path_acc_best(self.val_metrics["path_acc"].compute())
            self.log("val/path_acc_best", self.val_path_acc_best.compute(), prog_bar=True)
        if parts:
            acc = torch.stack([torch.as_tensor(p, dtype=torch.float32) for p in parts]).mean()
            self.val_retrieval_acc_best(acc)
            self.log("val/retrieval_acc", acc)
            self.log("val/retrieval_acc_best", self.val_retrieval_acc_best.compute())

    def _validation_noise(self) -> dict[str, float]:
        """The standard error sqrt(p(1-p)/n) of each accuracy this validation measured over its n
        items (path and plan accuracy; retrieval accuracy, their mean: the mean's), so that the
        convergence verdict (rra.training.budget) can tell a rise from validation noise: on 154 plan
        questions one more right is +0.0065, and at 0.98 one standard error is 0.011."""
        out, parts = {}, []
        for name in ("path_acc", "plan_acc"):
            metric = self.val_metrics[name] if name in self.val_metrics else None
            if metric is None or not metric.update_count:
                continue
            n = float(metric.weight)  # items averaged (each weighs 1)
            p = float(metric.compute())
            if n > 0:
                out[f"val/{name}"] = math.sqrt(max(p * (1 - p), 0.0) / n)
                parts.append(out[f"val/{name}"])
        if parts:
            out["val/retrieval_acc"] = math.sqrt(sum(se * se for se in parts)) / len(parts)
        return out

    def validation_noise(self) -> dict[str, float]:
        """Standard errors of the last validation's accuracies (`_validation_noise`), by logged name."""
        return dict(self.noise)

    def configure_optimizers(self):
        hp = self.hparams
        heads = list(self.hop_head.parameters()) + list(self.path_head.parameters())
        if self.ranker is not None:
            heads += list(self.ranker.parameters())
        groups = [{"params": heads, "lr": hp.head_lr}]
        encoder = [p for p in self.encoder.parameters() if p.requires_grad]
        if encoder:
            groups.append({"params": encoder, "lr": hp.lr})
        optimizer = adamw(groups, self.trainer, weight_decay=hp.weight_decay)
        total = self.trainer.estimated_stepping_batches
        warmup = int(hp.warmup_ratio * total) if math.isfinite(total) else 0
        return {"optimizer": optimizer, "lr_scheduler": warmup_schedule(optimizer, total, warmup, hp.schedule)}

    # -- checkpoints -------------------------------------------------------------------------
    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint["rra"] = {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "relations": self.relations,
            "path_head": self.hparams.path_head,
            "max_hops": self.hparams.max_hops,
            "mask_token": self.hparams.mask_token,
            "encoder": self.hparams.encoder,
            "encoder_config": self.encoder.config_dict,
            "tokenizer": tokenizer_to_state(self.encoder.tokenizer),
            "training_wordings": self.training_wordings,
        }

    @classmethod
    def load(cls, path: str | Path, map_location: str | torch.device = "cpu") -> "Retriever":
        """Rebuild a trained retriever from its checkpoint alone (no pretrained weights, no config):
        a checkpoint file, a directory written by `rra-export`, or a Hub id holding one."""
        ckpt = read_checkpoint(path, CHECKPOINT_FORMAT, CHECKPOINT_VERSION, "train one with `python train.py`",
                               map_location)
        info = ckpt["rra"]
        hp = dict(ckpt.get("hyper_parameters", {}))
        hp["path_head"] = info.get("path_head", "classifier")  # version 1 checkpoints are classifiers
        hp.update(relations=info["relations"], encoder_config=info["encoder_config"], pretrained=False,
                  tokenizer_state=info["tokenizer"])
        if hp.pop("plan_heads", False):  # the earlier design's plan classes: not loaded, plans not ranked
            ckpt["state_dict"] = {k: v for k, v in ckpt["state_dict"].items() if not k.startswith("plan_head.")}
            log.warning("%s has plan heads of an earlier design (plan kinds as classes); it answers chains "
                        "only: retrain it (python train.py) for query plans", path)
        model = load_weights(build(cls, hp, path), ckpt, path, map_location)
        model.training_wordings = list(info.get("training_wordings") or [])
        return model

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

        The classifier can only predict its training relations: one the KG lacks is an error (its
        paths could never be followed), KG relations it never saw are a warning (an error if
        `strict`). The relation scorer reads whatever relations the KG has: relations it trained on
        that the KG lacks are only a warning (a KG other than the training one), never an error."""
        kg = set(kg_relations)
        if not any(r.startswith(INVERSE_PREFIX) for r in kg):
            kg |= {inverse(r) for r in kg}
        mine = set(self.relations)
        where = self.checkpoint_path or "this retriever"
        missing = sorted(r for r in mine - kg if not r.startswith(INVERSE_PREFIX))
        unseen = sorted(r for r in kg - mine if not r.startswith(INVERSE_PREFIX))
        if self.scorer:
            if missing:
                return (f"{where} was trained on a KG with {len(missing)} relation(s) this one does not have "
                        f"({few(missing)}); it reads this KG's own relations by name (and so does its plan ranker)")
            return None
        if missing:
            raise RelationMismatchError(
                f"{where} knows {len(missing)} relation(s) this knowledge graph does not have: "
                f"{few(missing)}. Is it the KG the retriever was trained on (graph_iri / data.kb_path)? "
                "Else train a retriever on this KG (python train.py data=...), or use the default relation "
                "scorer (model.path_head=scorer), which reads any KG's relations by name."
            )
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
