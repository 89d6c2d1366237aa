"""Sequential relation-path prediction, the paper's head (`model.path_head=classifier`; the default
reads relations instead: rra.models.relation_scorer).

Step t reads the text `question [SEP] r_1 [SEP] ... r_{t-1}` (relations verbalised, the topic
entity masked) and a Linear(d -> |R|) head scores the next relation. A path's score is the product
of its step probabilities; `beam_search` keeps the K best paths of a given length per question.

`step_text` builds that text for training and inference alike (relations read by
rra.text.relations.relation_phrase).
"""
from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from rra.text.relations import relation_phrase

def step_text(question: str, prefix: Sequence[str], sep: str = "[SEP]",
              text_of: Callable[[str], str] | None = None) -> str:
    """The encoder input for choosing the relation after `prefix` (already walked relations), each
    read by `text_of` (rra.text.relations.RelationText: the KG's or dataset's name), else as its id in words."""
    return f" {sep} ".join([question, *((text_of or relation_phrase)(r) for r in prefix)])


def path_phrase(path: Sequence[str], text_of: Callable[[str], str] | None = None) -> str:
    """A relation path read as one phrase ("doctoral advisor, affiliation, country"), to compare
    with a question as a whole (rra.models.path_search.PathSearch._paths_by_text)."""
    return ", ".join((text_of or relation_phrase)(r) for r in path)


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
# given [(query index, relation-id prefix)], the relation ids that may come next (None: any)
AllowFn = Callable[[list[tuple[int, tuple[int, ...]]]], list["set[int] | None"]]


def _masked(logp: torch.Tensor, allowed: "set[int] | None") -> torch.Tensor:
    if allowed is None:
        return logp
    keep = torch.full_like(logp, float("-inf"))
    if allowed:
        idx = torch.tensor(sorted(allowed), dtype=torch.long, device=logp.device)
        keep[idx] = logp[idx]
    return keep


def _top(logp: torch.Tensor, k: int) -> list[tuple[int, float]]:
    """The k best (relation id, log-prob) of one row, skipping masked (-inf) entries."""
    top = logp.topk(min(k, logp.numel()))
    return [(r, s) for s, r in zip(top.values.tolist(), top.indices.tolist()) if s != float("-inf")]


def beam_search(
    first_logp: torch.Tensor, lengths: Sequence[int], beam: int, score_fn: ScoreFn,
    allowed: AllowFn | None = None,
) -> list[list[tuple[tuple[int, ...], float]]]:
    """Top-`beam` relation paths of exactly `lengths[i]` steps for each query i.

    first_logp: (n, R) log-probabilities of the first relation (already computed, e.g. in the same
        encoder pass as the hop classifier).
    score_fn: given [(query index, relation-id prefix)], returns (len, R) next-step log-probs. One
        call per expansion round, with the beams of every query that round expands (batched).
    allowed: optional graph pruning: relations outside the returned set are never chosen (a beam
        with no allowed continuation dies before it is encoded).

    Lazy expansion: at each depth a query's beams are expanded best first, and a beam is only
    encoded while its score can still beat the k-th best continuation found so far (step
    log-probs are <= 0, so a continuation never scores above its prefix). The result equals plain
    beam search (expand all k beams, keep the top k of the k*k continuations); a confident model
    needs about one encoder pass per depth instead of k.
    Returns per query a list of (relation ids, log score), best first.
    """
    n, num_rel = first_logp.shape
    k = min(beam, num_rel)
    first_allowed = allowed([(i, ()) for i in range(n)]) if allowed else [None] * n
    beams = [[((r,), s) for r, s in _top(_masked(first_logp[i], first_allowed[i]), k)] for i in range(n)]
    for depth in range(1, max(lengths, default=0)):
        todo = [i for i in range(n) if lengths[i] > depth]
        if not todo:
            break
        grown: dict[int, list] = {i: [] for i in todo}
        for rnd in range(k):
            items = []  # (query, prefix, prefix score)
            for i in todo:
                if rnd >= len(beams[i]):
                    continue
                path, score = beams[i][rnd]
                found = grown[i]
                if len(found) >= k and score <= found[k - 1][1]:
                    continue  # nothing under this beam can enter the top k
                items.append((i, path, score))
            if allowed and items:
                ok = allowed([(i, p) for i, p, _ in items])
                items = [(it, a) for it, a in zip(items, ok) if a is None or a]
            else:
                items = [(it, None) for it in items]
            if not items:
                break
            logp = score_fn([(i, p) for (i, p, _), _ in items])
            for row, ((i, path, score), ok) in enumerate(items):
                cands = grown[i] + [(path + (r,), score + s) for r, s in _top(_masked(logp[row], ok), k)]
                grown[i] = sorted(cands, key=lambda c: -c[1])[:k]
        for i in todo:
            beams[i] = grown[i]
    return beams
