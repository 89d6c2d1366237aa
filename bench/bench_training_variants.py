"""Training variants side by side (`datamodule.inverse_negatives`; validation that accepts tied paths):
the record of trainings with and without each, read from what they wrote (train_summary.json,
bench_pipeline's and bench_default_run's JSON and predictions).

    python train.py experiment=metaqa data.root=../shared/data/metaqa name=mq_inv datamodule.inverse_negatives=true
    python train.py experiment=metaqa data.root=../shared/data/metaqa name=mq_base
    python -m bench.bench_pipeline --threads 1 --ckpt checkpoints/mq_inv/best.ckpt --out INV.json metaqa --hops 2 3
    (the same for mq_base, and for the inverse run's fine-tuned checkpoint best_epoch_*.ckpt)
    python -m bench.bench_default_run --out DEFAULT_INV.json datamodule.inverse_negatives=true
    python -m bench.bench_training_variants --run NAME=TRAIN_SUMMARY:PIPELINE_JSON[,PIPELINE_JSON]:PREDICTIONS[,...] \
        --default-run NAME=DEFAULT_RUN_JSON ... [--own-kg NAME=BENCH_RELATION_SCORER_JSON ...]

`model.prefix_directions=false` (the walked prefix without "(reverse)") is run the same way, with and
without `datamodule.inverse_negatives=true` (bench/results/bench_prefix_directions.json).

For each run: the training (steps, fit seconds, the published mix), Hits@1 per hop, and its path
misses split into "one relation reversed" (the rest of the path as gold) and the rest, from the
predictions bench_pipeline streamed (bench/cache/bench_pipeline/metaqa_<hop>hop_graph_<ckpt>.jsonl).
MetaQA is trained on dev and scored on test (its training split is not available here).
"""
from __future__ import annotations

import json
from pathlib import Path

from bench.common import Run, arguments
from rra.eval.report import read_predictions
from rra.graph.base import inverse, is_inverse


def misses(predictions: Path) -> dict:
    """Path misses of one prediction file: how many, how many are the gold path with one relation
    reversed, and of those how many reversed it right after a reversed step (the prefix's "(reverse)"
    drawing the candidate that says it too: `model.prefix_directions`)."""
    n = wrong = reversed_one = after_reversed = 0
    for d in read_predictions(predictions):
        gold, pred = d.get("gold_path"), d.get("pred_path") or []
        if not gold:
            continue
        n += 1
        if pred != gold:
            wrong += 1
            diff = [t for t, (p, g) in enumerate(zip(pred, gold)) if p != g]
            one = len(pred) == len(gold) and len(diff) == 1 and pred[diff[0]] == inverse(gold[diff[0]])
            reversed_one += one
            after_reversed += one and diff[0] > 0 and is_inverse(pred[diff[0] - 1])
    return {"questions": n, "path_misses": wrong, "one_relation_reversed": reversed_one,
            "reversed_after_a_reversed_step": after_reversed}


def one_run(spec: str) -> dict:
    summary, pipelines, predictions = (spec.split(":") + ["", ""])[:3]
    s = json.loads(Path(summary).read_text(encoding="utf-8")) if summary else {}
    out = {"training": {"global_step": s.get("global_step"), "fit_seconds": round(s.get("fit_seconds") or 0, 1),
                        "pretrained_mix": {k: v for k, v in (s.get("pretrained_mix") or {}).items() if k != "tried"},
                        "test_sample_path_acc": {k: round(100 * v, 2) for k, v in (s.get("metrics") or {}).items()
                                                 if k.startswith("test/path_acc")}} if s else None}
    hits = {}
    for p in filter(None, pipelines.split(",")):
        for hop, m in json.loads(Path(p).read_text(encoding="utf-8"))["figures"].items():
            hits[hop] = {"hits@1": m["hits@1"], "n": m["n"], "questions_per_s": round(m["questions_per_s"], 1)}
    out["answering"] = hits
    out["misses"] = {Path(f).stem: misses(Path(f)) for f in filter(None, predictions.split(","))}
    return out


def default_run(path: str) -> dict:
    d = json.loads(Path(path).read_text(encoding="utf-8"))
    a = d["answers"]
    return {"hits@1": round(a["hits@1"], 2), "chain": a["by_shape"]["chain"]["hits@1"], "train_wall_s": d["train_wall_s"],
            "global_step": d["global_step"], "test_path_acc_3hop": d["retriever_test"].get("test/path_acc_3hop"),
            "overrides": d.get("config", {}).get("overrides"), "load": d.get("load")}


def own_kg(path: str) -> dict:
    """The own-KG chain bench's scorer figures (bench_relation_scorer own-kg JSON), given / linked."""
    heads = json.loads(Path(path).read_text(encoding="utf-8"))["own-kg"]["heads"]["scorer"]
    return {mode: {"hits@1": round(m["hits@1"], 1), **{g: round(m["groups"][g]["hits@1"], 1) for g in
                   ("1hop", "2hop", "3hop", "held_out_phrasing", "unseen_relation") if g in m.get("groups", {})}}
            for mode, m in heads.items() if isinstance(m, dict) and "hits@1" in m}


def parser():
    ap = arguments("bench_training_variants", __doc__)
    ap.add_argument("--run", nargs="*", default=[], help="NAME=TRAIN_SUMMARY:PIPELINE_JSONS:PREDICTION_FILES")
    ap.add_argument("--default-run", nargs="*", default=[], help="NAME=bench_default_run JSON")
    ap.add_argument("--own-kg", nargs="*", default=[], help="NAME=bench_relation_scorer own-kg JSON")
    ap.add_argument("--note", default="")
    ap.add_argument("--out", default=None)
    return ap


def main() -> None:
    args = parser().parse_args()
    run = Run.start("bench_training_variants", args)
    runs = {name: one_run(spec) for name, spec in (r.split("=", 1) for r in args.run)}
    defaults = {name: default_run(p) for name, p in (r.split("=", 1) for r in args.default_run)}
    owned = {name: own_kg(p) for name, p in (r.split("=", 1) for r in args.own_kg)}
    run.write({"figures": {"metaqa": runs, "builtin_default_run": defaults, **({"own_kg": owned} if owned else {})},
               "note": args.note}, args.out)


if __name__ == "__main__":
    main()
