"""Query-plan heads: from the pooled encoding of the masked question (every anchor `[E]`, the same
encoder pass that feeds the hop classifier and the first path step) predict

- `anchors`: how many anchors the plan joins (1: one chain, 2: the intersection of two chains);
- `condition`: no condition, a comparison (> >= < <= =) with a literal from the question, or an
  order (argmax / argmin);
- `attribute`: the relation whose value the condition reads (trained on questions with a condition).

The relation path of each anchor comes from the existing `RelationPathPredictor`, asked once per
anchor with that anchor in focus (rra.plan.focus_text). A retriever trained only on chains has no
plan heads at all (`Retriever(plan_heads=False)`), so it behaves exactly as before.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from rra.plan import CONDITIONS

MAX_ANCHORS = 2
NO_ATTRIBUTE = -1  # target of questions without a condition (ignored by the attribute loss)


@dataclass
class PlanPrediction:
    anchors: list[float]  # probability of 1, 2 anchors
    conditions: list[tuple[str, float]]  # (condition, probability), best first
    attributes: list[tuple[str, float]]  # (relation, probability), best first (top few)

    @property
    def n_anchors(self) -> int:
        return 1 + max(range(len(self.anchors)), key=lambda k: self.anchors[k])

    @property
    def condition(self) -> str:
        return self.conditions[0][0]

    def to_dict(self) -> dict:
        return {"anchors": self.n_anchors, "anchor_probs": [round(p, 4) for p in self.anchors],
                "conditions": [(c, round(p, 4)) for c, p in self.conditions[:3]],
                "attributes": [(r, round(p, 4)) for r, p in self.attributes[:3]]}


class PlanHead(nn.Module):
    def __init__(self, dim: int, num_relations: int, dropout: float = 0.1):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.anchors = nn.Linear(dim, MAX_ANCHORS)
        self.condition = nn.Linear(dim, len(CONDITIONS))
        self.attribute = nn.Linear(dim, num_relations)

    def forward(self, pooled: torch.Tensor) -> dict[str, torch.Tensor]:
        x = self.dropout(pooled)
        return {"anchors": self.anchors(x), "condition": self.condition(x), "attribute": self.attribute(x)}

    @staticmethod
    def loss(logits: dict, targets: dict) -> torch.Tensor:
        """Cross-entropy of the three heads; the attribute only where a condition is given."""
        loss = F.cross_entropy(logits["anchors"], targets["anchors"]) + F.cross_entropy(logits["condition"],
                                                                                      targets["condition"])
        has = targets["attribute"] != NO_ATTRIBUTE
        if bool(has.any()):
            loss = loss + F.cross_entropy(logits["attribute"][has], targets["attribute"][has])
        return loss

    @staticmethod
    def correct(logits: dict, targets: dict) -> torch.Tensor:
        """Per question: anchors, condition and (where there is one) attribute all right."""
        ok = (logits["anchors"].argmax(-1) == targets["anchors"]) & (logits["condition"].argmax(-1) == targets["condition"])
        attr_ok = (logits["attribute"].argmax(-1) == targets["attribute"]) | (targets["attribute"] == NO_ATTRIBUTE)
        return (ok & attr_ok).float()


def plan_targets(plans: list[dict], rel_index: dict[str, int], device) -> dict[str, torch.Tensor]:
    """Tensors of the plan labels of a batch ({"anchors": 1|2, "condition": name, "attribute": rel|None})."""
    return {
        "anchors": torch.tensor([min(p["anchors"], MAX_ANCHORS) - 1 for p in plans], device=device),
        "condition": torch.tensor([CONDITIONS.index(p["condition"]) for p in plans], device=device),
        "attribute": torch.tensor([rel_index[p["attribute"]] if p.get("attribute") else NO_ATTRIBUTE
                                   for p in plans], device=device),
    }


def read_predictions(logits: dict, relations: list[str], top: int = 3) -> list[PlanPrediction]:
    anchors = logits["anchors"].float().softmax(-1)
    cond = logits["condition"].float().softmax(-1)
    attr = logits["attribute"].float().softmax(-1)
    out = []
    for i in range(anchors.shape[0]):
        c_p, c_i = cond[i].sort(descending=True)
        a_p, a_i = attr[i].topk(min(top, attr.shape[-1]))
        out.append(PlanPrediction(anchors[i].tolist(),
                                  [(CONDITIONS[k], float(p)) for p, k in zip(c_p.tolist(), c_i.tolist())],
                                  [(relations[k], float(p)) for p, k in zip(a_p.tolist(), a_i.tolist())]))
    return out
