"""The trained rewriter: a generative LM fine-tuned on "linearised triples -> text" (WebNLG + KG pairs).

- Any HF causal LM (default: the packaged SmolLM2-135M-Instruct GGUF, dequantised to float32 so it
  trains on CPU) or seq2seq LM (`seq2seq=true`, e.g. t5-small) by hub name or local path.
- Causal LMs read `prompt(facts) + target + eos`; the loss covers the target tokens only (prompt
  masked), and the LM head is applied only at those positions, which saves a large share of the
  compute of a 49k-token vocabulary.
- CPU budget knobs: `freeze_embeddings` (the tied 28M-parameter embedding of SmolLM2) and
  `train_last_layers` (train only the top k blocks: no backward pass through the frozen lower ones).
- The checkpoint is self-describing (checkpoint["rra"]: model config, tokenizer, prompt format), so
  `RewriterModule.load(ckpt)` rebuilds the model without reading the pretrained weights again.

The pipeline step that uses it is rra.pipeline.rewrite.TrainedRewriter (`python infer.py rewriter=trained
rewriter.ckpt=...`).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Sequence

import lightning as L
import torch
from torch import nn
from torch.nn import functional as F
from torchmetrics import MeanMetric, MinMetric
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM

from rra.models.checkpoint import CheckpointError, build, load_weights, read_checkpoint
from rra.models.encoder import freeze_lower, tokenizer_from_state, tokenizer_to_state
from rra.models.schedule import adamw, warmup_schedule
from rra.resources import DEFAULT_LLM, load_pretrained, pretrained_config

CHECKPOINT_FORMAT = "rra-rewriter"
CHECKPOINT_VERSION = 1

# Short on purpose: every prompt token is paid for at each training step on CPU.
DEFAULT_PROMPT = "Facts: {facts}\nText:"
# For the untrained (zero-shot) baseline with an instruction-tuned model and its chat template.
ZERO_SHOT_PROMPT = (
    "Write the following facts as one or two fluent English sentences. Use every fact, keep the "
    "names as written, and add nothing else.\nFacts: {facts}"
)

# A Llama small enough to overfit a few pairs in seconds; the vocabulary stays the real tokenizer's.
TINY_CONFIG = dict(model_type="llama", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                   tie_word_embeddings=True)


def load_lm(name: str = DEFAULT_LLM, config: dict | None = None, pretrained: bool = True,
            seq2seq: bool = False, tokenizer=None):
    """(model, tokenizer). `config` (or pretrained=False) builds random weights from a config:
    a full config with `model_type` (as saved in checkpoints) needs nothing from `name`."""
    if pretrained and not config:
        # GGUF weights are quantised; the loader de-quantises them to float32 for training.
        return load_pretrained(name, seq2seq=seq2seq, tokenizer=tokenizer)
    _, tokenizer = load_pretrained(name, tokenizer=tokenizer, load_model=False)
    config = dict(config or {})
    if "model_type" in config:
        config.setdefault("vocab_size", len(tokenizer))
        cfg = AutoConfig.for_model(**config)
    else:
        cfg = pretrained_config(name, **config)
    auto = AutoModelForSeq2SeqLM if seq2seq else AutoModelForCausalLM
    return auto.from_config(cfg), tokenizer


class RewriterModule(L.LightningModule):
    def __init__(
        self,
        model_name: str = DEFAULT_LLM,
        model_config: dict | None = None,
        pretrained: bool = True,
        seq2seq: bool = False,
        prompt: str = DEFAULT_PROMPT,
        chat: bool = False,  # wrap the prompt in the tokenizer's chat template
        lr: float = 1e-4,
        weight_decay: float = 0.0,
        warmup_steps: int = 50,
        schedule: str = "linear",  # "linear" decay after warm-up, or "constant"
        max_source_len: int = 96,  # tokens of linearised facts
        max_target_len: int = 96,
        freeze_embeddings: bool = True,
        train_last_layers: int | None = None,  # None: train all blocks
        num_beams: int = 1,
        max_new_tokens: int = 96,
        val_generate: int = 0,  # generate for the first N validation examples -> val/bleu, val/chrf
        test_generate: int | None = None,  # None: every test example
        tokenizer_state: dict | None = None,
        init_from: str | None = None,  # start from a trained rewriter's weights (e.g. adapt to your KG)
    ):
        super().__init__()
        if model_config is not None:  # a Hydra DictConfig would not survive weights_only loading
            model_config = {k: v for k, v in dict(model_config).items()}
        self.save_hyperparameters(ignore=["tokenizer_state"])
        if "{facts}" not in prompt:
            raise ValueError(f"rewriter prompt must contain {{facts}}: {prompt!r}")
        tokenizer = tokenizer_from_state(tokenizer_state) if tokenizer_state else None
        self.model, self.tokenizer = load_lm(model_name, model_config, pretrained, seq2seq, tokenizer)
        if tokenizer_state and tokenizer_state.get("chat_template"):
            self.tokenizer.chat_template = tokenizer_state["chat_template"]
        if chat and not getattr(self.tokenizer, "chat_template", None):
            raise ValueError(f"chat=true but the tokenizer of {model_name!r} has no chat template")
        freeze_lower(self.model, freeze_embeddings, train_last_layers, "rewriter")
        if init_from:
            ckpt = _read_checkpoint(init_from)
            try:
                self.load_state_dict(ckpt["state_dict"], strict=False)
            except RuntimeError as e:  # shape mismatch: another base model
                raise CheckpointError(f"{init_from}: its weights do not fit {model_name!r}: {e}") from e
            missing = [k for k in self.state_dict() if k.startswith("model.") and k not in ckpt["state_dict"]]
            if missing:
                raise CheckpointError(f"{init_from}: not a checkpoint of {model_name!r}: "
                                      f"{len(missing)} weights missing, e.g. {missing[0]}")
        self.metrics = nn.ModuleDict({s: MeanMetric() for s in ("train_loss", "val_loss", "test_loss")})
        self.val_loss_best = MinMetric()
        self._generated: dict[str, tuple[list[str], list[list[str]]]] = {}
        self._batch_start = 0.0
        self.checkpoint_path: str | None = None

    # -- tokenisation ------------------------------------------------------------------------
    @property
    def eos_id(self) -> int:
        return self.tokenizer.eos_token_id

    def prompt_ids(self, facts: str) -> list[int]:
        tok = self.tokenizer
        ids = tok(facts, add_special_tokens=False)["input_ids"]
        if len(ids) > self.hparams.max_source_len:  # cut the facts, never the prompt's tail
            facts = tok.decode(ids[: self.hparams.max_source_len])
        text = self.hparams.prompt.format(facts=facts)
        if self.hparams.chat:
            text = tok.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                           tokenize=False)
        return tok(text, add_special_tokens=not self.hparams.chat and self.hparams.seq2seq)["input_ids"]

    def target_ids(self, text: str) -> list[int]:
        # Leading space: the target continues "Text:" the way ordinary prose would.
        prefix = "" if self.hparams.seq2seq else " "
        ids = self.tokenizer(prefix + text, add_special_tokens=False)["input_ids"]
        return ids[: self.hparams.max_target_len - 1] + [self.eos_id]

    def _pad(self, seqs: list[list[int]], value: int, left: bool = False) -> torch.Tensor:
        width = max(len(s) for s in seqs)
        rows = [([value] * (width - len(s)) + s) if left else (s + [value] * (width - len(s))) for s in seqs]
        return torch.tensor(rows, dtype=torch.long, device=self.device)

    # -- training ----------------------------------------------------------------------------
    def loss(self, sources: list[str], targets: list[str]) -> torch.Tensor:
        prompts = [self.prompt_ids(s) for s in sources]
        answers = [self.target_ids(t) for t in targets]
        pad = self.tokenizer.pad_token_id
        if self.hparams.seq2seq:
            inputs = self._pad(prompts, pad)
            labels = self._pad(answers, -100)
            return self.model(input_ids=inputs, attention_mask=(inputs != pad).long() if pad is not None
                              else None, labels=labels).loss
        seqs = [p + a for p, a in zip(prompts, answers)]
        inputs = self._pad(seqs, pad)
        mask = self._pad([[1] * len(s) for s in seqs], 0)
        labels = self._pad([[-100] * len(p) + a for p, a in zip(prompts, answers)], -100)
        hidden = self.model.base_model(input_ids=inputs, attention_mask=mask).last_hidden_state
        # position t predicts token t+1: apply the LM head only where that token is a target token
        predict = labels[:, 1:] != -100
        logits = self.model.get_output_embeddings()(hidden[:, :-1][predict])
        return F.cross_entropy(logits.float(), labels[:, 1:][predict])

    def model_step(self, batch: dict, split: str) -> torch.Tensor:
        loss = self.loss(batch["source"], batch["target"])
        n = len(batch["source"])
        metric = self.metrics[f"{split}_loss"]
        metric(loss.detach(), n)
        self.log(f"{split}/loss", metric, on_step=split == "train", on_epoch=True, prog_bar=True, batch_size=n)
        return loss

    def training_step(self, batch, batch_idx):
        return self.model_step(batch, "train")

    def validation_step(self, batch, batch_idx):
        self.model_step(batch, "val")
        self._maybe_generate(batch, "val", self.hparams.val_generate)

    def test_step(self, batch, batch_idx):
        self.model_step(batch, "test")
        self._maybe_generate(batch, "test", self.hparams.test_generate)

    def _maybe_generate(self, batch: dict, split: str, limit: int | None) -> None:
        hyps, refs = self._generated.setdefault(split, ([], []))
        room = len(batch["source"]) if limit is None else max(0, limit - len(hyps))
        if room:
            hyps += self.generate(batch["source"][:room])
            refs += batch["refs"][:room]

    def _log_generation(self, split: str) -> None:
        hyps, refs = self._generated.pop(split, ([], []))
        if hyps:
            scores = text_scores(hyps, refs)
            self.log(f"{split}/bleu", scores["bleu"])
            self.log(f"{split}/chrf", scores["chrf"])

    def on_validation_epoch_start(self) -> None:
        self._generated.pop("val", None)

    def on_train_start(self) -> None:
        self.val_loss_best.reset()  # drop what the sanity check put there

    def on_validation_epoch_end(self) -> None:
        self._log_generation("val")
        if self.metrics["val_loss"].update_count:
            self.val_loss_best(self.metrics["val_loss"].compute())
            self.log("val/loss_best", self.val_loss_best.compute())

    def on_test_epoch_end(self) -> None:
        self._log_generation("test")

    def on_train_batch_start(self, batch, batch_idx) -> None:
        self._batch_start = time.perf_counter()

    def on_train_batch_end(self, outputs, batch, batch_idx) -> None:
        n = len(batch["source"])
        dt = max(time.perf_counter() - self._batch_start, 1e-9)
        self.log("train/samples_per_s", n / dt, on_step=True, on_epoch=False, batch_size=n)

    def configure_optimizers(self):
        hp = self.hparams
        params = [p for p in self.model.parameters() if p.requires_grad]
        if not params:
            raise ValueError("rewriter: every parameter is frozen (check freeze_embeddings/train_last_layers)")
        optimizer = adamw(params, self.trainer, lr=hp.lr, weight_decay=hp.weight_decay)
        schedule = warmup_schedule(optimizer, self.trainer.estimated_stepping_batches, hp.warmup_steps, hp.schedule)
        return {"optimizer": optimizer, "lr_scheduler": schedule}

    # -- generation --------------------------------------------------------------------------
    @torch.no_grad()
    def generate(self, sources: Sequence[str], num_beams: int | None = None,
                 max_new_tokens: int | None = None, batch_size: int = 8, temperature: float | None = None,
                 top_p: float = 1.0) -> list[str]:
        """Text for each linearised-facts string (greedy with num_beams=1, else beam search;
        `temperature` samples instead, e.g. candidate rewrites for answer-sensitive selection).
        Sources are batched in order of length (less padding, similar output lengths per batch)."""
        was_training = self.training
        self.eval()
        pad = self.tokenizer.pad_token_id
        encoded = [self.prompt_ids(s) for s in sources]
        order = sorted(range(len(sources)), key=lambda i: len(encoded[i]))
        out: list[str] = [""] * len(sources)
        try:
            for i in range(0, len(order), batch_size):
                rows = order[i:i + batch_size]
                prompts = [encoded[j] for j in rows]
                # causal LMs continue the prompt, so padding goes on the left
                inputs = self._pad(prompts, pad, left=not self.hparams.seq2seq)
                mask = self._pad([[1] * len(p) for p in prompts], 0, left=not self.hparams.seq2seq)
                gen = self.model.generate(
                    input_ids=inputs, attention_mask=mask,
                    **({"do_sample": True, "temperature": temperature, "top_p": top_p, "num_beams": 1}
                       if temperature else {"do_sample": False, "num_beams": num_beams or self.hparams.num_beams}),
                    max_new_tokens=max_new_tokens or self.hparams.max_new_tokens,
                    eos_token_id=self.eos_id, pad_token_id=pad,
                )
                new = gen if self.hparams.seq2seq else gen[:, inputs.shape[1]:]
                for j, t in zip(rows, self.tokenizer.batch_decode(new, skip_special_tokens=True)):
                    out[j] = " ".join(t.split())
        finally:
            self.train(was_training)
        return out

    # -- checkpoints -------------------------------------------------------------------------
    def on_save_checkpoint(self, checkpoint: dict) -> None:
        state = tokenizer_to_state(self.tokenizer)
        if state is not None:
            state["chat_template"] = getattr(self.tokenizer, "chat_template", None)
        checkpoint["rra"] = {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "model_name": self.hparams.model_name,
            "model_config": {k: v for k, v in self.model.config.to_dict().items() if k != "quantization_config"},
            "seq2seq": self.hparams.seq2seq,
            "prompt": self.hparams.prompt,
            "chat": self.hparams.chat,
            "tokenizer": state,
        }

    @classmethod
    def load(cls, path: str | Path, map_location: str | torch.device = "cpu") -> "RewriterModule":
        """Rebuild a fine-tuned rewriter from its checkpoint alone (no pretrained weights read)."""
        ckpt = _read_checkpoint(path)
        info = ckpt["rra"]
        hp = dict(ckpt.get("hyper_parameters", {}))
        hp.update(model_config=info["model_config"], pretrained=False, tokenizer_state=info["tokenizer"],
                  init_from=None)  # the stored weights already include what it started from
        return load_weights(build(cls, hp, path), ckpt, path, map_location)


def _read_checkpoint(path: str | Path) -> dict:
    return read_checkpoint(path, CHECKPOINT_FORMAT, CHECKPOINT_VERSION, "train one with `python train.py task=rewriter`")


def text_scores(hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> dict:
    """Corpus BLEU (13a, case-sensitive) and chrF (char 6-gram, beta 2) of `hyps` against every
    reference of each; a shorter reference list has None in the missing places (sacrebleu skips them)."""
    import sacrebleu

    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} reference sets")
    if not hyps:
        raise ValueError("no hypotheses to score")
    width = max(len(r) for r in refs)
    if width == 0:
        raise ValueError("no reference texts (is this an input-only WebNLG file?)")
    # sacrebleu wants one stream per reference position
    streams = [[r[i] if i < len(r) else None for r in refs] for i in range(width)]
    return {
        "bleu": sacrebleu.corpus_bleu(list(hyps), streams).score,
        "chrf": sacrebleu.corpus_chrf(list(hyps), streams).score,
        "n": len(hyps),
        "max_refs": width,
    }
