"""Hop prediction: pooled question vector -> Linear(d -> H) -> softmax over hop counts 1..H.

A plain head module; the encoder that feeds it is shared with the relation-path predictor inside
`rra.models.retriever.Retriever` (see there for why one module, not two).
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class HopClassifier(nn.Module):
    def __init__(self, dim: int, max_hops: int, dropout: float = 0.1):
        super().__init__()
        self.max_hops = max_hops
        self.dropout = nn.Dropout(dropout)
        self.linear = nn.Linear(dim, max_hops)

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        """Logits over hop counts; column h-1 is "h hops"."""
        return self.linear(self.dropout(pooled))

    def loss(self, logits: torch.Tensor, hops: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, hops - 1)

    @staticmethod
    def predict(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(hop counts, their probabilities), both ranked best first: shape (n, H)."""
        probs = logits.float().softmax(-1)
        p, idx = probs.sort(-1, descending=True)
        return idx + 1, p
