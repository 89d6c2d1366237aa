"""Relations read, not classified: the relation-path predictor's default head.

Step t of a path reads `question [SEP] r_1 [SEP] ... r_{t-1}` (the topic masked) with the shared
encoder, as the paper's classifier does; but instead of a `Linear(d -> |R|)` over a fixed relation
vocabulary, each *candidate* relation is scored from its text (its name or label, read by the same
encoder: a bi-encoder, relation vectors cached), and the candidates are the relations that exist at
the path's frontier in the graph. So a relation seen once in training, or never, can be chosen; a
checkpoint answers on a KG with relations it never saw; and no predicted path is one the graph
cannot walk. A step's logits are `scale * cos(query, relation)` over the candidates.

Paths end where the search says so: with each candidate relation the step also predicts whether the
path ends after it (`P(end | prefix, r)`, a small head on the query and relation vectors), so a path's
score is the probability of its relations and of ending where it ends, and paths of every length
compete in one beam (no hop count vetoes a length). Deciding the end with the step that chooses the
relation costs no encoder pass of its own: a path of L relations costs L passes, as the classifier's.

`search_paths` is that beam search over any candidate function: the model supplies the candidates
(graph frontier) and the step log-probabilities; see rra.models.path_search.PathSearch.predict.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import torch
from torch import nn
from torch.nn import functional as F

# given [(query index, prefix)] -> per item {relation: (log P(r), log P(end after r), log P(go on after r))}
StepFn = Callable[[list[tuple[int, tuple[str, ...]]]], list[dict[str, tuple[float, float, float]]]]


class RelationScorer(nn.Module):
    """Scores candidate relations (their encoded text) against a step's encoded query, and whether
    the path ends after each."""

    def __init__(self, dim: int, scale: float = 20.0, end_bias: float = 0.0, end_hidden: int = 256):
        super().__init__()
        # a learnt temperature: cosines in [-1, 1] need a scale for a sharp softmax
        self.log_scale = nn.Parameter(torch.tensor(math.log(scale)))
        # end logit from [query * relation, query, relation] (the relation a unit vector), through a small
        # MLP (end_hidden=0: linear): whether what the question asks lies beyond this relation. The
        # last layer starts at zero, so P(end) = sigmoid(end_bias) for every path, which the untrained
        # (zero-shot) encoder keeps: shorter paths first
        last = nn.Linear(end_hidden or 3 * dim, 1)
        nn.init.zeros_(last.weight)
        nn.init.constant_(last.bias, end_bias)
        self.end = nn.Sequential(nn.Linear(3 * dim, end_hidden), nn.GELU(), last) if end_hidden else last

    @property
    def scale(self) -> torch.Tensor:
        return self.log_scale.exp().clamp(max=100.0)

    def relation_logits(self, queries: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:
        """(n, d) queries x (m, d) relation vectors -> (n, m) logits."""
        return self.scale * F.normalize(queries.float(), dim=-1) @ F.normalize(relations.float(), dim=-1).T

    def end_logits(self, queries: torch.Tensor, relations: torch.Tensor) -> torch.Tensor:
        """(n, d) queries, (n, d) the relation chosen at each -> (n,) logit of ending the path there.
        Also (d,) query with (m, d) relations -> (m,)."""
        u = queries.float()  # as the hop head reads it: normalising would flatten what tells lengths apart
        v = F.normalize(relations.float(), dim=-1)
        u = u.expand_as(v) if u.dim() < v.dim() else u
        return self.end(torch.cat([u * v, u, v], dim=-1)).squeeze(-1)

    def loss(self, queries: torch.Tensor, relations: torch.Tensor, candidates: list[list[int]],
             targets: list[int], ends: list[bool | None]) -> tuple[torch.Tensor, torch.Tensor]:
        """Softmax over each row's own candidates (in-frontier negatives) plus, where `ends[i]` is
        known, whether the path ends after the gold relation (binary). candidates[i]: indices into
        `relations`; targets[i]: the gold one. Returns (loss, per-row correct: relation and end)."""
        logits = self.relation_logits(queries, relations)
        mask = torch.full_like(logits, float("-inf"))
        rows = torch.tensor([i for i, c in enumerate(candidates) for _ in c], device=logits.device, dtype=torch.long)
        cols = torch.tensor([j for c in candidates for j in c], device=logits.device, dtype=torch.long)
        mask[rows, cols] = 0.0
        target = torch.tensor(targets, device=logits.device)
        loss = F.cross_entropy(logits + mask, target)
        correct = ((logits + mask).argmax(-1) == target).float()
        known = [i for i, e in enumerate(ends) if e is not None]
        if known:
            idx = torch.tensor(known, device=logits.device)
            end = self.end_logits(queries[idx], relations[target[idx]])
            want = torch.tensor([float(ends[i]) for i in known], device=logits.device)
            loss = loss + F.binary_cross_entropy_with_logits(end, want)
            correct[idx] = correct[idx] * ((end > 0).float() == want).float()
        return loss, correct


def _top(scores: dict, k: int) -> list:
    return sorted(scores.items(), key=lambda x: (-x[1][0], x[0]))[:k]


def search_paths(n: int, beam: int, max_hops: int, step: StepFn, lengths: Sequence[int | None] | None = None,
                 min_ratio: float | Sequence[float] = 0.02) -> list[list[tuple[tuple[str, ...], float]]]:
    """The `beam` best relation paths of each query i, of any length 1..max_hops (or exactly
    `lengths[i]` where given), with their log scores, best first.

    `step(items)` gives, for each (query, prefix), its candidates' (log P(r), log P(end after r),
    log P(go on after r)). A path ending after r scores prefix + log P(r) + log P(end); one going on
    carries prefix + log P(r) + log P(go on) into the next step; at max_hops (or a given length) a
    path ends whatever the end head says. Lazy expansion: a prefix is encoded only while its score
    can still beat the k-th best path found so far (step log-probs are <= 0) and is within
    `min_ratio` (one for all queries, or one each) of the best finished path (a continuation fifty times less likely than the best
    path cannot change the answers), so a confident model costs one encoder pass per depth of
    the path it finds."""
    lengths = list(lengths) if lengths is not None else [None] * n
    k = max(1, beam)
    ratios = [min_ratio] * n if isinstance(min_ratio, (int, float)) else list(min_ratio)
    floors = [math.log(r) if r > 0 else float("-inf") for r in ratios]
    finished: list[list[tuple[tuple[str, ...], float]]] = [[] for _ in range(n)]
    beams: list[list[tuple[tuple[str, ...], float]]] = [[((), 0.0)] for _ in range(n)]

    def bar(i: int) -> float:
        pool = sorted((s for _, s in finished[i]), reverse=True)
        kth = pool[k - 1] if len(pool) >= k else float("-inf")
        return max(kth, pool[0] + floors[i]) if pool else kth

    for depth in range(max_hops):
        grown: dict[int, list] = {i: [] for i in range(n)}
        for rnd in range(k):
            items = []
            for i in range(n):
                if rnd < len(beams[i]) and beams[i][rnd][1] > bar(i):
                    items.append((i, *beams[i][rnd]))
            if not items:
                break
            for (i, path, score), scored in zip(items, step([(i, p) for i, p, _ in items])):
                last = depth + 1 == max_hops or lengths[i] == depth + 1
                for r, (lp, lp_end, lp_go) in _top(scored, k):
                    if lengths[i] is not None:  # a given length: relations only
                        (finished[i] if last else grown[i]).append((path + (r,), score + lp))
                        continue
                    finished[i].append((path + (r,), score + lp + (0.0 if last else lp_end)))
                    if not last:
                        grown[i].append((path + (r,), score + lp + lp_go))
        for i in range(n):
            beams[i] = sorted(grown[i], key=lambda c: -c[1])[:k]
        if not any(beams):
            break
    return [sorted(f, key=lambda c: (-c[1], len(c[0]), c[0]))[:k] for f in finished]
