"""Sequential relation-path prediction.

Step t reads the text `question [SEP] r_1 [SEP] ... r_{t-1}` (relations verbalised, the topic
entity masked) and a Linear(d -> |R|) head scores the next relation. A path's score is the product
of its step probabilities; `beam_search` keeps the K best paths of a given length per question.

`step_text` builds that text for training and inference alike (relations read by
rra.text.relation_phrase).
"""
from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from rra.text import relation_phrase

def step_text(question: str, prefix: Sequence[str], sep: str = "[SEP]") -> str:
    """The encoder input for choosing the relation after `prefix` (already walked relations)."""
    return f" {sep} ".join([question, *(relation_phrase(r) for r in prefix)])


class RelationPathPredictor(nn.Module):
    """Scores the next relation of a path from the pooled encoding of `step_text`."""

    def __init__(self, dim: int, num_relations: int, dropout: float = 0.1):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.linear = nn.Linear(dim, num_relations)

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.linear(self.dropout(pooled))

    def loss(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets)


ScoreFn = Callable[[list[tuple[int, tuple[int, ...]]]], torch.Tensor]


def beam_search(
    first_logp: torch.Tensor, lengths: Sequence[int], beam: int, score_fn: ScoreFn
) -> list[list[tuple[tuple[int, ...], float]]]:
    """Top-`beam` relation paths of exactly `lengths[i]` steps for each query i.

    first_logp: (n, R) log-probabilities of the first relation (already computed, e.g. in the same
        encoder pass as the hop classifier).
    score_fn: given [(query index, relation-id prefix)], returns (len, R) next-step log-probs; it
        is called once per depth with every live beam of every query, so encoding is batched.
    Returns per query a list of (relation ids, log score), best first.
    """
    n, num_rel = first_logp.shape
    k = min(beam, num_rel)
    top = first_logp.topk(k, dim=-1)
    beams = [
        [((int(r),), float(s)) for s, r in zip(top.values[i], top.indices[i])] for i in range(n)
    ]
    for depth in range(1, max(lengths, default=0)):
        live = [(i, path, score) for i in range(n) if lengths[i] > depth for path, score in beams[i]]
        if not live:
            break
        logp = score_fn([(i, path) for i, path, _ in live])
        step = logp.topk(k, dim=-1)
        grown: dict[int, list] = {}
        for row, (i, path, score) in enumerate(live):
            for s, r in zip(step.values[row].tolist(), step.indices[row].tolist()):
                grown.setdefault(i, []).append((path + (r,), score + s))
        for i, cands in grown.items():
            beams[i] = sorted(cands, key=lambda c: -c[1])[:k]
    return beams
