"""Every evaluation figure of the project, defined once. Methods only produce `Prediction`s (or
their JSONL dicts); everything reported is computed here.

Definitions (per question, then averaged over all questions, failures included as misses; the
answer metrics over the questions that have gold answers, `labelled` of them, n/a when none do):
A gold answer matches a predicted string equal to its id or its label (`gold_labels`); a gold
answer given as a name also matches the KG ids with that label (`gold_aliases`; the evaluation
loop looks both up in the KG, `rra.eval.run.name_gold_answers`), so a dataset may give answers as
ids or as names. A gold answer that is a number or a date also matches by value ("2017.0", "2017"
and `"2017"^^xsd:gYear` are one answer; `rra.graph.literals.value_text`). All comparisons casefold
and collapse whitespace.

- **Hits@1**. Two ways, chosen per prediction by `hits_mode`:
  - `"top"` (default; graph scorer, candidate choice, any ranked answer): the top answer
    `answers[0]` equals a gold answer after normalisation (casefold, collapsed whitespace).
  - `"reply"` (free-form LLM answers): a gold answer occurs in the LLM's reply as a
    case-insensitive substring. This is how the RRA paper scores free-form answers; it is loose
    (a reply listing many names can hit), so reports say which mode produced each figure.
- **Answer F1**: precision/recall of the predicted answer set (`answer_set` if given,
  else `answers[:1]`) against the gold set, normalised strings; 0 when either is empty.
- **Hit** (as RoG, GNN-RAG and GCR report it): any gold answer is among the predicted answers
  (the whole ranked list `answers`, not only the first) or, for a free-form reply, occurs in it.
- **Exact match (EM)**: the predicted answer set (as for F1) names every gold answer and nothing
  else (each predicted string names some gold answer); EM implies F1 = 1.
- **Subgraph ceiling** (benchmarks with one subgraph per question): the share of questions whose
  subgraph holds a gold answer at all (after compound values are folded away: a CVT is never an
  answer), i.e. the best Hit any method could reach on those graphs; n/a on other datasets.
- **Answer coverage**: a gold answer is among the entities of the retrieved triples (retrieval
  recall: the best any answerer reading them could do).
- **Hop accuracy / path accuracy**: predicted hop count (`pred_hop`) / top relation path
  (`pred_path`) equal the gold ones (`gold_hop`, `gold_path`); averaged
  only over questions where the gold is known (`n` given beside them).
- **Per question shape** (`by_shape`): Hits@1 and F1 of each question shape apart (`gold_shape`:
  the data's own `shape`, else from the question's gold or given plan, rra.plans.plan), with the kinds of
  plan the method chose for them (`predicted`); only when a run has questions of more than one
  shape. **Per plan kind** (`by_plan_kind`): the same by the plan the method chose (RRA with a
  plan ranker). A count is answered as a number ("3") and a yes/no as "yes" / "no": they match a
  gold "3" / "yes" like any other answer string.
- **LLM calls / prompt+completion tokens per question**: means of the per-question counts.
- **Latency p50/p95**: per-question wall seconds; **questions/s**: questions / run wall time
  (when the runner passes it) else questions / summed latency.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from typing import Iterable

from rra.graph.literals import value_text
from rra.records import Prediction
from rra.text.matching import normalize_answer


def as_dict(p: Prediction | dict) -> dict:
    return p.to_dict() if isinstance(p, Prediction) else p


def scored(p: dict, name: str):
    """A scoring field of a prediction; predictions.jsonl files written before these were fields
    of `Prediction` kept them in `extra`."""
    value = p.get(name)
    return value if value not in (None, []) else p.get("extra", {}).get(name, value)


def gold_units(p: dict) -> list[set[str]]:
    """Each gold answer as the set of strings that name it: its id and, when the dataset gives
    one (`gold_labels`, aligned with `gold_answers`), its label. KGs whose ids are not
    names (`person/ann_smith`) are scored on either, so an LLM reply naming "Ann Smith" counts."""
    labels = scored(p, "gold_labels") or []
    aliases = p.get("gold_aliases") or []
    units = []
    for i, g in enumerate(p.get("gold_answers", [])):
        written = [g] + ([labels[i]] if i < len(labels) and labels[i] else []) + list(aliases[i] if i < len(aliases) else [])
        names = {normalize_answer(x) for x in written}
        # a value also by its value: "2017.0" and `"2.017E3"^^xsd:double` name the year 2017
        names |= {v for x in written if (v := value_text(str(x))) is not None}
        names.discard("")
        if names:
            units.append(names)
    return units


def hit_at_1(p: dict) -> bool:
    gold = gold_units(p)
    if not gold:
        return False
    if scored(p, "hits_mode") == "reply":
        reply = normalize_answer(p.get("reply", ""))
        return any(name in reply for unit in gold for name in unit)
    answers = p.get("answers") or []
    return bool(answers) and any(normalize_answer(answers[0]) in unit for unit in gold)


def hit_at_1_strict(p: dict) -> bool:
    """The answer the method commits to is gold, scored exactly: answers[0] for ranked answers;
    for a free-form reply, the first KG entity (of the method's answers, topic entities excluded)
    named inside the reply's final answer (`rra.llm.parse.committed_answers`), else that answer's
    first item itself. A reply that lists or echoes the knowledge earns nothing for naming the right
    entity somewhere else."""
    gold = gold_units(p)
    if not gold:
        return False
    if scored(p, "hits_mode") == "reply":
        from rra.llm.parse import committed_answers, parse_answer

        committed = committed_answers(p.get("reply", ""))
        if not committed:
            return False
        span = normalize_answer(" | ".join(committed))
        topics = {normalize_answer(t) for t in p.get("topic_entities") or []}
        named = [a for a in (p.get("answers") or []) if normalize_answer(a) not in topics
                 and re.search(r"(?<!\w)" + re.escape(normalize_answer(a)) + r"(?!\w)", span)]
        first = named[0] if named else committed[0]
        if not any(normalize_answer(first) in unit for unit in gold):
            # a name holding " and " or a comma ("Quill and Anchor", "Pride and Prejudice") is cut
            # into items above; a final answer that starts with a whole gold name commits to it
            whole = normalize_answer(parse_answer(p.get("reply", "")))
            return any(re.match(re.escape(name) + r"(?:$|\s*[|;,]|\s+and\s)", whole) for unit in gold for name in unit)
    else:
        first = (p.get("answers") or [""])[0]
    return bool(first) and any(normalize_answer(first) in unit for unit in gold)


def answer_f1(p: dict) -> float:
    pred = {normalize_answer(a) for a in (scored(p, "answer_set") or (p.get("answers") or [])[:1])}
    pred.discard("")
    gold = gold_units(p)
    if not pred or not gold:
        return 0.0
    found = [unit for unit in gold if unit & pred]
    if not found:
        return 0.0
    named = set().union(*gold)
    prec, rec = len([a for a in pred if a in named]) / len(pred), len(found) / len(gold)
    return 2 * prec * rec / (prec + rec)


def hit(p: dict) -> bool:
    """Any gold answer among all predicted answers, or (reply mode) named in the reply."""
    gold = gold_units(p)
    if not gold:
        return False
    names = set().union(*gold)
    if any(normalize_answer(a) in names for a in p.get("answers") or []):
        return True
    reply = normalize_answer(p.get("reply", "")) if scored(p, "hits_mode") == "reply" else ""
    return bool(reply) and any(name in reply for name in names)


def exact_match(p: dict) -> bool:
    """The predicted answer set (F1's) names every gold answer and nothing else."""
    pred = {normalize_answer(a) for a in (scored(p, "answer_set") or (p.get("answers") or [])[:1])}
    pred.discard("")
    gold = gold_units(p)
    if not pred or not gold:
        return False
    return all(unit & pred for unit in gold) and all(any(a in unit for unit in gold) for a in pred)


def answer_coverage(p: dict) -> bool:
    ents = {normalize_answer(e) for t in p.get("triples", []) for e in (t[0], t[2])}
    return any(unit & ents for unit in gold_units(p))


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100]); 0 for no values."""
    if not values:
        return 0.0
    v = sorted(values)
    k = max(1, math.ceil(q / 100 * len(v)))
    return v[k - 1]


def compute_metrics(predictions: Iterable[Prediction | dict], wall_s: float | None = None) -> dict:
    preds = [as_dict(p) for p in predictions]
    n = len(preds)
    if n == 0:
        return {"n": 0}

    def mean(xs) -> float:
        xs = list(xs)
        return sum(xs) / len(xs) if xs else 0.0

    # Answer metrics over the questions that have gold answers; none labelled -> n/a, not 0.
    labelled = [p for p in preds if p.get("gold_answers")]
    hop_known = [p for p in preds if scored(p, "gold_hop") is not None]
    in_subgraph = [p for p in labelled if "answer_in_subgraph" in p.get("extra", {})]
    path_known = [p for p in preds if scored(p, "gold_path")]
    lat = [float(p.get("latency_s", 0.0)) for p in preds]
    total = wall_s if wall_s and wall_s > 0 else sum(lat)
    modes = Counter(scored(p, "hits_mode") or "top" for p in preds)
    asked = [p for p in preds if p.get("llm_calls", 0) > 0]
    return {
        "n": n,
        "labelled": len(labelled),
        "hits@1": 100 * mean(hit_at_1(p) for p in labelled) if labelled else None,
        "hits@1_strict": 100 * mean(hit_at_1_strict(p) for p in labelled) if labelled else None,
        "f1": 100 * mean(answer_f1(p) for p in labelled) if labelled else None,
        "hit": 100 * mean(hit(p) for p in labelled) if labelled else None,
        "em": 100 * mean(exact_match(p) for p in labelled) if labelled else None,
        "subgraph_ceiling": 100 * mean(p["extra"]["answer_in_subgraph"] for p in in_subgraph)
        if in_subgraph else None,
        "answer_coverage": 100 * mean(answer_coverage(p) for p in labelled) if labelled else None,
        "hop_acc": 100 * mean(scored(p, "pred_hop") == scored(p, "gold_hop") for p in hop_known)
        if hop_known else None,
        "hop_acc_n": len(hop_known),
        "path_acc": 100 * mean(list(scored(p, "pred_path") or []) == list(scored(p, "gold_path"))
                               for p in path_known) if path_known else None,
        "path_acc_n": len(path_known),
        "llm_calls_per_q": mean(p.get("llm_calls", 0) for p in preds),
        # of the questions that asked an LLM, the share it answered (not failed / unparseable)
        "llm_answered": 100 * mean(p.get("status") not in ("llm_error", "unparseable") for p in asked)
        if asked else None,
        "llm_asked_n": len(asked),
        "llm_prompt_tokens_per_q": mean(p.get("llm_prompt_tokens", 0) for p in preds),
        "llm_completion_tokens_per_q": mean(p.get("llm_completion_tokens", 0) for p in preds),
        "latency_p50_s": percentile(lat, 50),
        "latency_p95_s": percentile(lat, 95),
        "questions_per_s": n / total if total > 0 else None,
        "status": dict(Counter(p.get("status", "ok") for p in preds).most_common()),
        "hits_mode": dict(modes),
        **by_shape(labelled),
    }


def plan_kind(p: dict) -> str | None:
    """The kind of plan the method answered with (rra.plans.plan.QueryPlan.shape; "chain" for a chain),
    where it ranked plans; None otherwise."""
    return p.get("extra", {}).get("plan_kind") or (p.get("extra", {}).get("plan") or {}).get("shape")


def _shape_order(shapes) -> list[str]:
    from rra.plans.plan import SHAPES

    order = list(SHAPES)
    return sorted(shapes, key=lambda s: (order.index(s) if s in order else len(order), s))


def by_shape(labelled: list[dict]) -> dict:
    """{"by_shape": {gold shape: {"n", "hits@1", "f1", "predicted": {plan kind: n}}}} when the questions
    have several shapes (the data's `shape`, else the gold plan's, rra.eval.run.gold_shape), and
    {"by_plan_kind": {plan kind: {"n", "hits@1", "f1"}}} by the plan the method chose, where it
    ranked plans; else {}."""
    groups: dict[str, list[dict]] = {}
    kinds: dict[str, list[dict]] = {}
    for p in labelled:
        groups.setdefault(scored(p, "gold_shape") or "chain", []).append(p)
        if plan_kind(p):
            kinds.setdefault(plan_kind(p), []).append(p)
    out = {}

    def figures(ps: list[dict]) -> dict:
        return {"n": len(ps), "hits@1": 100 * sum(map(hit_at_1, ps)) / len(ps),
                "f1": 100 * sum(map(answer_f1, ps)) / len(ps)}

    if len(groups) > 1:
        out["by_shape"] = {}
        for s in _shape_order(groups):
            out["by_shape"][s] = figures(groups[s])
            predicted = Counter(plan_kind(p) for p in groups[s] if plan_kind(p))
            if predicted:
                out["by_shape"][s]["predicted"] = dict(predicted.most_common())
    if kinds and (len(kinds) > 1 or len(groups) > 1):
        out["by_plan_kind"] = {k: figures(kinds[k]) for k in _shape_order(kinds)}
    return out
