"""Comparisons asked in words no training question used: the scholarly plans test set's 100
comparison questions, each rewritten with a phrasing written for this benchmark (after the plan
ranker's operator phrases, rra.plans.text.OPERATOR_PHRASES, and none taken from the KG generator's
templates: "newer than", "no lower than", "from N onwards", "through N", "exceeding", ...); the
same anchors, literals and gold answers. Hits@1 with given topics.

    python -m bench.kgs.scholarly --out DIR
    python -m bench.bench_comparison_phrasings --data DIR --ckpt checkpoints/schol_plans/best.ckpt

Writes bench/results/bench_comparison_phrasings.json (Hits@1, the misses, commands, machine, load).
"""
from __future__ import annotations

import json
import random
from pathlib import Path

from bench.bench_query_plans import run_mode
from bench.common import REPO, RESULTS, Run, arguments
from rra.eval.metrics import hit_at_1
from rra.graph import read_labels

# per generator kind and operator: {A} author, {I} institution, {V} venue, {C} country, {N} the literal
PHRASINGS = {
    "author_year": {
        ">": ["papers {A} published in years after {N}", "list {A}'s publications newer than {N}",
              "{A}'s work that appeared later than {N}"],
        "<": ["papers {A} wrote prior to {N}", "{A}'s publications earlier than {N}",
              "what had {A} published before the year {N}"],
        ">=": ["{A}'s papers from {N} onwards", "papers by {A} no earlier than {N}",
               "what has {A} published starting in {N}"],
        "<=": ["{A}'s papers no later than {N}", "papers by {A} published by {N} at the latest",
               "what did {A} publish through {N}"]},
    "staff_hindex": {
        ">": ["staff of {I} with an h-index greater than {N}", "researchers at {I} whose h-index is higher than {N}"],
        "<": ["researchers at {I} whose h-index is lower than {N}", "staff at {I} with an h-index smaller than {N}"],
        ">=": ["researchers at {I} with an h-index of {N} or more", "who at {I} has an h-index no lower than {N}"]},
    "venue_citations": {
        ">": ["{V} papers with a citation count exceeding {N}", "papers presented at {V} cited more often than {N} times"],
        "<": ["{V} papers with under {N} citations", "papers presented at {V} with a citation count smaller than {N}"]},
    "country_founding": {
        "<": ["institutions in {C} established prior to {N}", "universities in {C} that existed before {N}"],
        ">": ["institutions in {C} founded after the year {N}", "universities of {C} established later than {N}"]},
}
def rephrase(data: Path, seed: int = 7) -> list[dict]:
    """The comparison rows of DIR/plans_test.jsonl with their question rewritten (seeded choice)."""
    names, rng, rows = read_labels(data / "kg.nt")[0], random.Random(seed), []
    for line in open(data / "plans_test.jsonl", encoding="utf-8"):
        r = json.loads(line)
        if r.get("shape") != "comparison":
            continue
        kind, c = r["extra"]["kind"], r["constraint"]
        name = names[r["topic_entities"][0]]
        text = rng.choice(PHRASINGS[kind][c["op"]]).format(A=name, I=name, V=name, C=name, N=c["value"])
        rows.append({**r, "question": text, "qid": f"{r['qid']}-rephrased",
                     "extra": {**r["extra"], "template": None, "seen_phrasing": False}})
    return rows


def parser():
    ap = arguments("bench_comparison_phrasings", __doc__)
    ap.add_argument("--data", required=True, help="the directory `python -m bench.kgs.scholarly --out DIR` wrote")
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--work", default=str(REPO / "outputs" / "bench_comparison_phrasings"))
    ap.add_argument("--out", default=str(RESULTS / "bench_comparison_phrasings.json"))
    return ap


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    run = Run.start("bench_comparison_phrasings", args, argv)
    data, work = Path(args.data).resolve(), Path(args.work).resolve()
    rows = rephrase(data)
    work.mkdir(parents=True, exist_ok=True)
    (work / "plans_test.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                           encoding="utf-8")
    (work / "kg.nt").unlink(missing_ok=True)
    (work / "kg.nt").symlink_to(data / "kg.nt")
    result = run_mode(work, args.ckpt, "given", work / "runs")
    preds = [json.loads(line) for line in open(work / "runs" / "given" / "predictions.jsonl", encoding="utf-8")]
    misses = [p["question"] for p in preds if not hit_at_1(p)]
    figures = {"data": str(data), "ckpt": args.ckpt, "n": len(rows), "hits@1": round(result["metrics"]["hits@1"], 1),
               "run": {"command": result["command"], "wall_s": result["wall_s"]}, "misses": misses}
    run.write(figures, args.out)
    print(f"Hits@1 {figures['hits@1']} over {len(rows)} rephrased comparisons")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
