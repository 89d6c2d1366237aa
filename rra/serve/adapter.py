"""Everything rra/serve needs from the layers below, in one place: the question and prediction
records, the method's batched call, and the predictions.jsonl record a served answer is.

Only this file names where the records and the method's calls live (rra.records, rra.methods),
so the server follows a move of theirs by changing these imports.
"""
from __future__ import annotations

from dataclasses import fields
from typing import Sequence

from rra.records import Prediction, QAExample

__all__ = ["QAExample", "Prediction", "answer_batch", "record", "ranked_answers", "INPUT_STATUSES", "FAILURE_STATUSES"]

# Statuses that say the request named no entity of the KG (a client's mistake: 422), and those that
# say the graph or the LLM failed while answering (the server's: 5xx, with the status as error kind).
INPUT_STATUSES = ("unknown_entity", "no_topic_entity")
FAILURE_STATUSES = ("graph_error", "llm_error", "error")


def answer_batch(method, examples: Sequence[QAExample], chunk: int, max_seconds: float | None = None) -> list[Prediction]:
    """One prediction per example, in order, by the method's batched call on `chunk` questions at a
    time (RRA: one encoder pass per chunk), exactly as infer.py's evaluation loop calls it, within
    the same per-question work bounds (`max_seconds` each; the bounds hit are in each record)."""
    from rra.eval.run import mark_bounds
    from rra.graph.base import question_budget

    out: list[Prediction] = []
    for b in range(0, len(examples), max(1, chunk)):
        batch = list(examples[b:b + chunk])
        with question_budget(max_seconds * len(batch) if max_seconds else None) as budget:
            preds = list(method.answer_batch(batch))
        out += [mark_bounds(p, budget, len(batch) == 1) for p in preds]
    return out


def record(pred: Prediction) -> dict:
    """The prediction as infer.py writes it to predictions.jsonl (`Prediction.to_dict`), built
    without `asdict`'s deep copy (a third of a served answer's time): the prediction is not
    touched after this, so its lists and dicts are shared, not copied. Equal to `to_dict()`
    (tests/serve check it)."""
    d = {f.name: getattr(pred, f.name) for f in fields(pred)}
    d["triples"] = [list(t.as_tuple()) for t in pred.triples]
    return d


def ranked_answers(rec: dict) -> list[dict]:
    """The answers best first as {id, label, score, path}: the graph scorer's candidates where it
    ranked them (score and the best path reaching each), else the method's answers with their labels."""
    labels = (rec.get("extra") or {}).get("answer_labels") or []
    cands = (rec.get("extra") or {}).get("candidates") or []
    by_id = {c["entity"]: c for c in cands if isinstance(c, dict) and "entity" in c}
    out = []
    for i, a in enumerate(rec.get("answers") or []):
        c = by_id.get(a, {})
        out.append({"id": a, "label": c.get("label") or (labels[i] if i < len(labels) else a),
                    "score": c.get("score"), "path": c.get("path") or []})
    return out
