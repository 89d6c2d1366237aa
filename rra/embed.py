"""Sentence embeddings with the packaged MiniLM (all-MiniLM-L6-v2): mean pooling + L2 norm.

Used by the baselines' heuristic modes (similarity in place of the LLM's choices) and by the vector
baseline. The model loads lazily on the first `encode`, so an LLM-mode run that never embeds pays
nothing. Embeddings are cached in memory by text: relation names and entity labels recur across
questions, so most heuristic choices after the first few questions cost no forward pass.
"""
from __future__ import annotations

from typing import Sequence

import torch

from rra.resources import DEFAULT_ENCODER, resolve_model


class SentenceEncoder:
    def __init__(
        self,
        model: str = DEFAULT_ENCODER,
        batch_size: int = 64,
        max_length: int = 256,
        device: str = "cpu",
        cache_size: int = 200_000,
    ):
        self.model_name = model
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self.cache_size = cache_size
        self._model = None
        self._tokenizer = None
        self._cache: dict[str, torch.Tensor] = {}

    @classmethod
    def from_modules(cls, model, tokenizer, **kwargs) -> "SentenceEncoder":
        """Wrap an already built model + tokenizer (tests: a tiny random BERT)."""
        enc = cls(model="<in-memory>", **kwargs)
        enc._model = model.eval().to(enc.device)
        enc._tokenizer = tokenizer
        return enc

    # -- loading ------------------------------------------------------------------------
    def _load(self) -> None:
        if self._model is not None:
            return
        from transformers import AutoModel, AutoTokenizer

        path = resolve_model(self.model_name)
        self._tokenizer = AutoTokenizer.from_pretrained(path)
        self._model = AutoModel.from_pretrained(path).eval().to(self.device)

    @property
    def tokenizer(self):
        self._load()
        return self._tokenizer

    @property
    def dim(self) -> int:
        self._load()
        return int(self._model.config.hidden_size)

    # -- encoding -----------------------------------------------------------------------
    @torch.no_grad()
    def _forward(self, texts: list[str]) -> torch.Tensor:
        batch = self._tokenizer(
            texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        ).to(self.device)
        hidden = self._model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=-1).float().cpu()

    def encode(self, texts: Sequence[str], cache: bool = True) -> torch.Tensor:
        """(len(texts), dim) float32, unit rows. `cache=False` for one-off bulk text (chunk
        indexing) that would only evict the small, recurring strings the cache is for."""
        self._load()
        texts = list(texts)
        if not texts:
            return torch.zeros(0, self.dim)
        unique = list(dict.fromkeys(texts))
        found = {t: self._cache[t] for t in unique if cache and t in self._cache}
        # sort by length so each batch pads to similar lengths (much faster on CPU)
        todo = sorted((t for t in unique if t not in found), key=len)
        for i in range(0, len(todo), self.batch_size):
            chunk = todo[i : i + self.batch_size]
            found.update(zip(chunk, self._forward(chunk)))
        if cache:
            if len(self._cache) + len(todo) > self.cache_size:
                self._cache.clear()  # simple and bounded; hits come back within a few questions
            self._cache.update((t, found[t]) for t in todo)
        return torch.stack([found[t] for t in texts])

    def similarity(self, query: str, texts: Sequence[str]) -> list[float]:
        """Cosine similarity of `query` with each text."""
        if not texts:
            return []
        vecs = self.encode([query, *texts])
        return (vecs[1:] @ vecs[0]).tolist()


def tiny_random_encoder(hidden_size: int = 32, seed: int = 0, **kwargs) -> SentenceEncoder:
    """A deterministic, randomly initialised 2-layer BERT with the packaged tokenizer, for tests."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    from rra.resources import packaged_encoder_path

    tok = AutoTokenizer.from_pretrained(str(packaged_encoder_path()))
    cfg = BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=hidden_size,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=hidden_size * 2,
        max_position_embeddings=512,
    )
    torch.manual_seed(seed)
    return SentenceEncoder.from_modules(BertModel(cfg), tok, **kwargs)
