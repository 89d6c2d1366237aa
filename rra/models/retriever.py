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

Inference for the pipeline:
    model = Retriever.load("checkpoints/retriever/best.ckpt", map_location="cpu")
    preds = model.predict(["who directed [Alien]"], topk=3, kg=kg, topics=["Alien"])
"""
from __future__ import annotations

import logging
import math
import time
from contextlib import contextmanager
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
from rra.models.encoder import encode_cached, freeze_lower, load_encoder, mean_pool, tokenizer_from_state, tokenizer_to_state
from rra.models.frontier import MAX_FRONTIER, Frontier, Transitions, both_directions
from rra.models.hop_classifier import HopClassifier
from rra.models.path_predictor import RelationPathPredictor, beam_search, path_phrase, step_text
from rra.models.plan_ranker import PlanRanker, coverage_features, part_marks, phrase_hits, slot_regions, token_match
from rra.models.relation_scorer import RelationScorer, search_paths
from rra.models.schedule import adamw, warmup_schedule
from rra.resources import DEFAULT_ENCODER
from rra.text import mask_topic, pooled_plan_text, relation_phrase, without_direction

log = logging.getLogger(__name__)

CHECKPOINT_FORMAT = "rra-retriever"
CHECKPOINT_VERSION = 2  # 2: the path head is named (`path_head`); version 1 checkpoints are classifiers
PATH_HEADS = ("scorer", "classifier")
LENGTH_RULES = ("end_head", "path_text")  # how the scorer chooses a path's length (Retriever length_rule)
# predict()'s text -> encoding cache: masked question templates repeat (MetaQA: ~500 in 39k questions)
ENCODING_CACHE_SIZE = 50_000


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
        # (rra.text.plan_words `kind`); the data sets it (datamodule.plan_kinds), older checkpoints read without
        plan_round_trips: bool = False,  # a chain back to its anchor is a plan: the training data asked such
        # questions (datamodule._answered_by_topic); older checkpoints and other data: no candidate
        pooled_operators: bool = True,  # the ranker's pooled plan vector reads operators (rra.text.pooled_plan_text);
        # false leaves them to the word-matched modifiers (an option: not better in the runs made, docs/query_plans.md)
        operator_phrases: bool = False,  # the ranker also reads operator phrasings written beside a literal
        # (rra.models.plan_ranker.phrase_hits); conf/model/retriever.yaml sets it, older checkpoints read without
        answer_types: bool = False,  # the ranker reads what a question asks for against a plan's kind
        # (rra.models.plan_ranker.PlanRanker.kind_logits); conf/model/retriever.yaml sets it, older checkpoints read without
        relation_kinds: bool = False,  # the scorer reads what a relation leads to after its name ("place of birth
        # giving city", rra.text.KindedRelationText); the data sets it (datamodule.relation_kinds), older checkpoints read without
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

    def _ranking_step(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        """The plan ranker's loss over the batch's ranking items. Questions and each item's first
        positive (its label) with its modifier texts are encoded with gradients, so both sides of
        the bi-encoder learn. The other candidates and modifiers (most are negatives, repeated
        across the epoch) come from banks encoded without gradients once per epoch (`_plan_bank`,
        `_part_bank`, emptied when an epoch starts unless validation just filled them with the same
        weights: `_fresh_banks`): their backward pass, or an encoder pass per batch, would multiply
        the ranker's cost for little."""
        items = [(q, r) for q, r in zip(batch["question"], batch["ranking"]) if r]
        learnt = sorted({r["positive"][0] for _, r in items})
        banked = sorted({t for _, r in items for t in r["positive"] + r["negative"]} - set(learnt))
        texts = learnt + banked
        index = {t: i for i, t in enumerate(texts)}
        questions, q_tokens, q_mask, q_regions = self._tokens([q for q, _ in items])
        plans = self.encode([self._pooled(t) for t in learnt])
        if banked:
            plans = torch.cat([plans, self._banked(banked).to(plans.dtype)])
        parts_of = {t: ps for _, r in items for t, ps in (r.get("parts") or {}).items()}
        cands = [[index[t] for t in r["positive"] + r["negative"]] for _, r in items]
        positive = [[True] * len(r["positive"]) + [False] * len(r["negative"]) for _, r in items]
        uncovered = coverage_features([q for q, _ in items], texts, self.hparams.mask_token or "[E]")
        parts = self._part_logits(q_tokens, q_mask, q_regions, [parts_of.get(t, []) for t in texts],
                                  learnt={p for t in learnt for p in parts_of.get(t, [])}, bank=self._part_bank,
                                  questions=[q for q, _ in items])
        kind_of = {t: k for _, r in items for t, k in (r.get("kinds") or {}).items()}
        weights = [r.get("weight", 1) for _, r in items]
        typed = self._kind_logits(q_tokens, q_mask, [kind_of.get(t) for t in texts], self._kind_bank)
        type_loss = None
        if typed is not None:
            kind_logits, index, plan_logits = typed
            parts = _plus(parts, plan_logits)
            kinds_in = lambda ts: sorted({index[kind_of[t]] for t in ts if t in kind_of})  # noqa: E731
            type_loss = self.ranker.type_loss(kind_logits, [kinds_in(r["positive"] + r["negative"]) for _, r in items],
                                              [kinds_in(r["positive"]) for _, r in items], weights)
        loss, correct = self.ranker.loss(questions, plans, cands, positive, uncovered, parts, weights)
        return (loss if type_loss is None else loss + type_loss), correct

    def _tokens(self, texts: list[str], regions=slot_regions) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                                                     torch.Tensor]:
        """(pooled vectors, unit token vectors, mask of the real tokens: no padding, no [CLS]/[SEP],
        `regions(text, offsets)` per token: a question's literal-slot regions, a modifier's
        part_marks) of `texts`, in one encoder pass."""
        enc = self.encoder
        fast = getattr(enc.tokenizer, "is_fast", False)  # offsets need a fast tokenizer; else no regions
        tok = enc.tokenizer(texts, padding=True, truncation=True, max_length=enc.max_length, return_tensors="pt",
                            return_special_tokens_mask=True, return_offsets_mapping=fast)
        special = tok.pop("special_tokens_mask").bool()
        offsets = tok.pop("offset_mapping").tolist() if fast else [[(0, 0)] * special.shape[1]] * len(texts)
        marks = torch.tensor([regions(t, o) for t, o in zip(texts, offsets)], dtype=torch.long)
        device = next(enc.model.parameters()).device
        tok = {k: v.to(device) for k, v in tok.items()}
        hidden = enc.model(input_ids=tok["input_ids"], attention_mask=tok["attention_mask"]).last_hidden_state
        return mean_pool(hidden, tok["attention_mask"]), F.normalize(hidden.float(), dim=-1), \
            tok["attention_mask"].bool() & ~special.to(device), marks

    def _part_logits(self, q_tokens: torch.Tensor, q_mask: torch.Tensor, q_regions: torch.Tensor,
                     parts: list[list[str]], learnt: Sequence[str] = (), bank: dict | None = None,
                     questions: Sequence[str] | None = None) -> torch.Tensor | None:
        """(n, m) logits of the m plans' modifiers (rra.text.plan_parts) against n questions' tokens.
        `learnt`: modifier texts encoded with gradients (training: the labels'); the others' token
        vectors come from `bank` (text -> (tokens, mask, part_marks)), encoded without gradients when
        missing. `questions`: the n texts, for the phrasings written beside a literal (phrase_hits)."""
        distinct = sorted({p for ps in parts for p in ps})
        if not distinct:
            return None
        bank = self._part_cache if bank is None else bank
        grad = [p for p in distinct if p in set(learnt)]
        rest = [p for p in distinct if p not in set(learnt)]
        todo = sorted((p for p in rest if p not in bank), key=len)
        if todo:
            with self._stable_encoder():
                _, tokens, mask, marks = self._tokens(todo, part_marks)
            bank.update({p: (tokens[k], mask[k], marks[k]) for k, p in enumerate(todo)})
        rows: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []
        if grad:
            _, tokens, mask, marks = self._tokens(grad, part_marks)
            rows += [(tokens[k], mask[k], marks[k]) for k in range(len(grad))]
        rows += [bank[p] for p in rest]
        width = max(int(m.shape[0]) for _, m, _ in rows)
        p_tokens = torch.stack([F.pad(t, (0, 0, 0, width - t.shape[0])) for t, _, _ in rows])
        p_mask = torch.stack([F.pad(m, (0, width - m.shape[0])) for _, m, _ in rows])
        p_marks = torch.stack([F.pad(k, (0, 0, 0, width - k.shape[0])) for _, _, k in rows])
        index = {p: k for k, p in enumerate(grad + rest)}
        uses = torch.zeros(len(parts), len(distinct))
        for j, ps in enumerate(parts):
            for p in ps:
                uses[j, index[p]] += 1
        hits = None
        if questions is not None and self.ranker.phrase_weight is not None:
            order = grad + rest
            hits = torch.tensor([[phrase_hits(q, p) for p in order] for q in questions], dtype=torch.float32)
        return self.ranker.part_logits(token_match(q_tokens, q_mask, p_tokens, p_mask, q_regions, p_marks), uses, hits)

    def _kind_logits(self, q_tokens: torch.Tensor, q_mask: torch.Tensor, kinds: Sequence[str | None],
                     bank: dict | None = None) -> tuple[torch.Tensor, dict[str, int], torch.Tensor] | None:
        """What the n questions ask for against the distinct kinds of m plans (`kinds`, None:
        unknown): ((n, k) logits, kind -> column, (n, m) each plan's logit: its kind's), or None where the
        ranker reads no answer types or no plan has a kind. A kind's vector is the mean of its words'
        unit token vectors, encoded without gradients (a few dozen distinct texts) into `bank`
        (training: one epoch's weights) or the inference cache."""
        if self.ranker is None or self.ranker.type_query is None or not any(kinds):
            return None
        bank = self._kind_cache if bank is None else bank
        distinct = sorted({k for k in kinds if k})
        todo = [k for k in distinct if k not in bank]
        if todo:
            with self._stable_encoder():
                _, tokens, mask, _ = self._tokens(todo)
            for k, kind in enumerate(todo):
                real = mask[k] if mask[k].any() else torch.ones_like(mask[k])
                bank[kind] = F.normalize(tokens[k][real].mean(0), dim=-1)
        index = {k: j for j, k in enumerate(distinct)}
        uses = torch.zeros(len(kinds), len(distinct))
        for j, kind in enumerate(kinds):
            if kind:
                uses[j, index[kind]] = 1.0
        logits = self.ranker.kind_logits(q_tokens, q_mask, torch.stack([bank[k] for k in distinct]))
        return logits, index, logits @ uses.T.to(logits.device)

    @contextmanager
    def _stable_encoder(self):
        """Encode without gradients in eval mode (no dropout: one stable vector per text, the
        banks' and caches' contract), then restore the encoder's mode."""
        was = self.encoder.training
        self.encoder.eval()
        try:
            with torch.no_grad():
                yield
        finally:
            self.encoder.train(was)

    def _pooled(self, plan_text: str) -> str:
        return pooled_plan_text(plan_text, self.hparams.get("pooled_operators", True))

    def _banked(self, texts: list[str]) -> torch.Tensor:
        todo = sorted({t for t in texts if t not in self._plan_bank}, key=len)  # chunks of like lengths pad less
        if todo:
            with self._stable_encoder():
                for b in range(0, len(todo), 256):
                    chunk = todo[b:b + 256]
                    self._plan_bank.update(zip(chunk, self.encoder([self._pooled(t) for t in chunk]).detach()))
        return torch.stack([self._plan_bank[t] for t in texts])

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

    def graph_pruner(self, kg, topics: Sequence[str | None], max_frontier: int | None = None):
        """The classifier's `allowed` for beam search: relation ids with an instance from where a
        prefix leads from question i's topic (rra.models.frontier; None: no pruning there)."""
        return Frontier(kg, topics, max_frontier or self.hparams.max_frontier).allowed_ids(self.rel_index)

    def relation_reader(self, relation_text=None):
        """How this scorer reads a relation: as it was trained, with what the relation leads to
        (`relation_kinds`: rra.text.RelationText.with_kinds) or by its name alone."""
        if relation_text is None:
            return relation_phrase
        if self.hparams.get("relation_kinds", False) and hasattr(relation_text, "with_kinds"):
            return relation_text.with_kinds()
        return relation_text

    def _prefix_reader(self, text_of):
        """How a step text reads the relations already walked: with their direction mark, or without
        it where `prefix_directions` is false. A query whose prefix says "(reverse)" resembles every
        candidate that says it too, so a scorer that never saw a relation's reverse as a negative (a
        training frontier rarely holds it) chooses it after a reversed step wherever a wide frontier
        offers it (a film named after a year: `^release_year`). Without the mark, the prefix's names
        pull the same way on candidates of the same name, unless `datamodule.inverse_negatives`
        teaches direction too; together they were not better overall (docs/retriever.md).
        Candidates always keep their mark."""
        if self.hparams.get("prefix_directions", True):
            return text_of
        return lambda r: without_direction(text_of(r))

    def _relation_vectors(self, relations: Sequence[str], text_of, batch_size: int = 256,
                          after: tuple[str, ...] = ()) -> torch.Tensor:
        """Unit vectors of the relations' texts, each text encoded once while the weights stay
        (cleared at every training step). `after`: each relation read at the end of these walked
        ones, the whole path as one phrase (length_rule path_text)."""
        if hasattr(text_of, "prepare"):
            text_of.prepare(relations)  # the relations' names and kinds in one batch of graph reads
        texts = [path_phrase((*after, r), text_of) for r in relations] if after else [text_of(r) for r in relations]
        todo = [t for t in dict.fromkeys(texts) if t not in self._relation_cache]
        if todo:
            self._relation_cache.update(zip(todo, F.normalize(self.encode_unique(todo, batch_size).float(), dim=-1)))
        return torch.stack([self._relation_cache[t] for t in texts]) if texts else torch.zeros(0, self.encoder.dim)

    def _scorer_predict(self, masked: list[str], pooled: torch.Tensor, hop_prob: torch.Tensor, topk: int,
                        hops: int | None, batch_size: int, cache: dict | None, kg, topics, relation_text,
                        hop_weight: float | None, pretrained_reading: float = 0.0) -> list[list[PathPrediction]]:
        """Graph-constrained search with the relation scorer (see rra.models.relation_scorer).
        Candidates at each step: the relations at the prefix's frontier from the question's topic;
        where that cannot be said (no graph or topic, a hub frontier) every relation of the KG
        (both directions), else the training vocabulary."""
        text_of = self.relation_reader(relation_text)
        walked = self._prefix_reader(text_of)
        frontier = Frontier(kg, topics or [], self.hparams.max_frontier) if kg is not None else None
        transitions = self._transitions_in(kg)
        fallback: list[str] | None = None

        def everything() -> list[str]:
            nonlocal fallback
            if fallback is None:
                fallback = both_directions(kg.relation_types()) if kg is not None else list(self.relations)
                if not fallback:
                    raise ValueError("the relation scorer needs a graph to choose relations from (kg=..., topics=...)")
            return fallback

        scale = float(self.path_head.scale)
        # path_text: every step compares the question alone with the path so far read as one phrase
        phrases = self.hparams.get("length_rule", "end_head") == "path_text"

        def step(items):
            if frontier is not None:
                frontier.prepare(items)  # the round's graph lookups in a few batched calls
            cands_of = [frontier.relations(i, p) if frontier is not None else None for i, p in items]
            if transitions is not None:  # the round's far-end reads in one batch
                transitions.prepare({p[-1] for _, p in items if p},
                                    {c for (_, p), cs in zip(items, cands_of) if p and cs for c in cs})
            prefixed = [] if phrases else [(j, (i, p)) for j, (i, p) in enumerate(items) if p]
            vectors: dict[int, torch.Tensor] = {j: pooled[i].float() for j, (i, p) in enumerate(items)
                                                if phrases or not p}
            if prefixed:
                texts = [step_text(masked[i], p, self.sep, walked) for _, (i, p) in prefixed]
                enc = self.encode_unique(texts, batch_size, cache).float()
                vectors.update({j: enc[k] for k, (j, _) in enumerate(prefixed)})
            out = []
            for j, (i, p) in enumerate(items):
                cands = everything() if cands_of[j] is None else cands_of[j]
                if transitions is not None and p and cands:
                    cands = transitions.keep(p[-1], cands)
                if not cands:
                    out.append({})
                    continue
                rel = self._relation_vectors(cands, text_of, batch_size, tuple(p) if phrases else ())
                logp = F.log_softmax(scale * (rel @ F.normalize(vectors[j], dim=-1)), -1).tolist()
                end = self.path_head.end_logits(vectors[j], rel)
                lp_end, lp_go = F.logsigmoid(end).tolist(), F.logsigmoid(-end).tolist()
                out.append({r: (a, b, c) for r, a, b, c in zip(cands, logp, lp_end, lp_go)})
            return out

        novelty = None  # per question, how unlike the training wordings (pretrained_reading)
        if hops is None and phrases:
            found = self._paths_by_text(pooled, topk, step, text_of, batch_size)
        else:
            prune = [self.hparams.prune_ratio] * len(masked)
            if pretrained_reading > 0:
                # a second reading chooses among the paths the search keeps, and pruning drops the continuations
                # the trained end head made unlikely, the ones it may overrule ("the band that recorded [E] is from
                # which country": artist, hometown, country after artist, hometown at P(end) near 1); so questions
                # it will re-read are searched unpruned, the others as without it
                novelty = self.pretrained_reader().novelty(masked)
                prune = [0.0 if g > 0 else r for g, r in zip(novelty, prune)]
            found = search_paths(len(masked), topk, self.hparams.max_hops, step,
                                 [hops] * len(masked) if hops is not None else None, prune)
        if pretrained_reading > 0:  # paths read as phrases by name alone, as the pretrained encoder reads text
            names = relation_text if relation_text is not None else relation_phrase
            found = self.pretrained_reader().rerank(masked, found, names, pretrained_reading, novelty)
        weight = self.hparams.hop_weight if hop_weight is None else hop_weight
        results = []
        for i, paths in enumerate(found):
            scored = []
            for path, logscore in paths:
                p_hop = float(hop_prob[i, len(path) - 1])
                scored.append(PathPrediction(list(path), math.exp(logscore + weight * math.log(max(p_hop, 1e-12))),
                                             len(path), p_hop))
            results.append(sorted(scored, key=lambda x: -x.score))
        return results

    def pretrained_reader(self):
        """The pretrained encoder this retriever was fine-tuned from (read by name: the packaged one
        offline) with the wordings it trained on, loaded once."""
        if self._pretrained_reading is None:
            from rra.models.pretrained_reading import PretrainedReading

            encoder = load_encoder(self.hparams.encoder).to(self.device)
            self._pretrained_reading = PretrainedReading(encoder, self.training_wordings)
        return self._pretrained_reading

    def _transitions_in(self, kg) -> Transitions | None:
        """What may follow each relation in `kg` (kept while the same graph is searched), or None
        where the search leaves no composition out (no graph, `transition_floor` 0)."""
        floor = float(self.hparams.get("transition_floor", 0.01))
        if kg is None or floor <= 0:
            return None
        if self._transitions is None or self._transitions.kg is not kg or self._transitions.floor != floor:
            self._transitions = Transitions(kg, floor)
        return self._transitions

    def _paths_by_text(self, pooled: torch.Tensor, k: int, step, text_of, batch_size: int) -> list[list[tuple]]:
        """Paths whose length the question's words decide, for an end head that has not learnt when
        a path ends (retriever=zero_shot: P(end) = 0.5 at every step, so the shortest path always
        won and no 2- or 3-hop question was answered). `step` (phrases mode) scores a path so far by
        the cosine of the question with the path read as one phrase ("doctoral advisor,
        affiliation, country"); the `k` best paths of each length 1..max_hops by those step scores
        are then ranked by that cosine less `length_penalty` per relation: a longer phrase shares
        more words with any question, so a relation must raise the cosine by more than that to be
        walked (0.08 was the best of those tried on two KGs, docs/retriever.md)."""
        n = len(pooled)
        pools: list[dict[tuple[str, ...], float]] = [{} for _ in range(n)]
        for length in range(1, self.hparams.max_hops + 1):
            for i, paths in enumerate(search_paths(n, k, length, step, [length] * n, 0.0)):
                pools[i].update(paths)
        scale, penalty = float(self.path_head.scale), float(self.hparams.get("length_penalty", 0.08))
        found = []
        for i, pool in enumerate(pools):
            paths = list(pool)
            if not paths:
                found.append([])
                continue
            # the phrases' vectors are those the last step of each search encoded (cached, no new pass)
            phrases = self._relation_vectors(paths, lambda path: path_phrase(path, text_of), batch_size)
            cos = phrases @ F.normalize(pooled[i].float(), dim=-1)
            fit = cos - penalty * torch.tensor([len(p) for p in paths], dtype=cos.dtype)
            logp = F.log_softmax(scale * fit, -1).tolist()
            found.append(sorted(zip(paths, logp), key=lambda c: (-c[1], len(c[0]), c[0]))[:k])
        return found

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
        relation_text=None,
        hop_weight: float | None = None,
        pretrained_reading: float = 0.0,
    ) -> list[list[PathPrediction]]:
        """Top-`topk` relation paths per question, best first.

        The scorer head searches the graph: kg + topics (each question's topic id) give every step
        its candidates, `relation_text` how a relation reads (rra.text.RelationText; default its id
        as words); `hop_weight` weighs the hop classifier's prior (default: the model's setting);
        `pretrained_reading` > 0 re-reads the found paths of questions worded unlike training with the
        pretrained encoder, at that weight (rra.models.pretrained_reading).
        `hops` forces a length; `try_second_hop` and `graph_pruning` are the classifier's.

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
            if topics is not None and len(topics) != len(masked):
                raise ValueError(f"predict: {len(topics)} topics for {len(masked)} questions")
            if self.scorer:
                hop_prob = self.hop_head(pooled).float().softmax(-1)
                return self._scorer_predict(masked, pooled, hop_prob, topk, hops, batch_size, cache, kg, topics,
                                            relation_text, hop_weight, pretrained_reading)
            hop_rank, hop_prob = HopClassifier.predict(self.hop_head(pooled))
            first_logits = self.path_head(pooled)
            queries = []  # (question index, hop, hop probability)
            for i in range(len(masked)):
                if hops is not None:
                    queries.append((i, hops, float(hop_prob[i][hop_rank[i] == hops])))
                    continue
                for rank in range(2 if try_second_hop and self.hparams.max_hops > 1 else 1):
                    queries.append((i, int(hop_rank[i, rank]), float(hop_prob[i, rank])))
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
    def rank_plans(self, questions: Sequence[str], plans: Sequence[Sequence[str]], parts=None, kinds=None,
                   batch_size: int = 256, use_cache: bool = True) -> list[list[float]] | None:
        """The plan ranker's logit of each candidate plan text (rra.text.plan_words) of each question
        (rra.text.ranker_text); `parts[i][j]`: plan j's modifier texts (rra.text.plan_parts), `kinds[i][j]`
        what its results are (rra.plan_reads.KindCheck; None: unknown). None
        when this retriever has no ranker (trained on chains only). Plan texts repeat across
        questions: each is encoded once while the weights stay."""
        if self.ranker is None:
            return None
        was_training = self.training
        if was_training:
            self._plan_cache.clear()
            self._part_cache.clear()
            self._kind_cache.clear()
        self.eval()
        try:
            out = []
            for b in range(0, len(questions), batch_size):
                qs, ps = list(questions[b:b + batch_size]), plans[b:b + batch_size]
                q, q_tokens, q_mask, q_regions = self._tokens(qs)
                texts = sorted({t for row in ps for t in row})
                if not texts:
                    out += [[] for _ in qs]
                    continue
                vectors = self.encode_unique([self._pooled(t) for t in texts], batch_size,
                                             self._plan_cache if use_cache else {})
                index = {t: i for i, t in enumerate(texts)}
                of = {t: p for row, prow in zip(ps, (parts or [])[b:b + batch_size]) for t, p in zip(row, prow)}
                kind_of = {t: k for row, krow in zip(ps, (kinds or [])[b:b + batch_size]) for t, k in zip(row, krow)}
                extra = self._part_logits(q_tokens, q_mask, q_regions, [of.get(t, []) for t in texts], questions=qs)
                typed = self._kind_logits(q_tokens, q_mask, [kind_of.get(t) for t in texts], None if use_cache else {})
                if typed is not None:
                    extra = _plus(extra, typed[2])
                logits = self.ranker.logits(q, vectors, coverage_features(qs, texts, self.hparams.mask_token or "[E]"),
                                            extra)
                out += [[float(logits[i, index[t]]) for t in row] for i, row in enumerate(ps)]
            return out
        finally:
            self.train(was_training)

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
        model = load_weights(cls(**hp), ckpt, path, map_location)
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


def _plus(a: torch.Tensor | None, b: torch.Tensor | None) -> torch.Tensor | None:
    """The sum of two optional logit tables (None: none)."""
    return b if a is None else a if b is None else a + b


def few(items: Sequence[str], n: int = 8) -> str:
    """The first `n` items and how many more: error messages never list hundreds of names."""
    shown = ", ".join(items[:n])
    return shown + (f", ... ({len(items) - n} more)" if len(items) > n else "")
