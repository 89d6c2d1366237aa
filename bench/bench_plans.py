"""Questions beyond one chain on the built-in KG: Hits@1 and F1 per question shape (chain /
conjunction / comparison / order) with the graph scorer, on each graph backend, and what the new
shapes cost the default training run (training rows, against the chain-only data).

    python bench/bench_plans.py --ckpt checkpoints/retriever/best.ckpt [--backends networkx oxigraph]
        [--train-summary outputs/retriever/runs/<time>/train_summary.json]

The checkpoint is the one `python train.py` publishes (built-in data, default config). Writes
bench/results/bench_plans.json (figures, command, config, machine with its load average).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/common.py

from common import build_method, infer_config, machine  # noqa: E402


def training_rows(plans: bool) -> dict:
    """Distinct training items and encoder rows per epoch of the built-in train split, with or
    without the questions beyond one chain (what an epoch of the default run encodes)."""
    from rra.data.builtin import builtin_questions
    from rra.data.datamodule import RetrieverDataModule

    def train():
        return [q for q in builtin_questions("train") if plans or "plan" not in q.extra]

    def dev():
        return [q for q in builtin_questions("dev") if plans or "plan" not in q.extra]

    from rra.data.builtin import builtin_kb_path, builtin_labels_path

    from rra.data.dataset import Dataset

    dataset = Dataset(kb_path=str(builtin_kb_path()), labels_path=str(builtin_labels_path()), train=train, val=dev)
    dm = RetrieverDataModule(dataset, train_paths="kg", val_fraction=0.0, supervision_cache=False, plans=plans)
    dm.setup()
    items = dm.splits["train"]
    rows = sum(len(x["path"]) if x["path"] else 1 for x in items)
    return {"items": len(items), "encoder_rows": rows, "plan_ranker": dm.plan_ranker}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ckpt", default=str(ROOT / "checkpoints" / "retriever" / "best.ckpt"))
    ap.add_argument("--backends", nargs="+", default=["networkx", "oxigraph"])
    ap.add_argument("--train-summary", help="train_summary.json of the run that made --ckpt (its fit time)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "bench_plans.json"))
    args = ap.parse_args(argv)

    from rra.config import build_graph, register_resolvers

    register_resolvers(ROOT)  # ${builtin_data:...} in conf/data/builtin.yaml
    from rra.eval.metrics import compute_metrics
    from rra.eval.run import answer_all, load_split

    results = {"command": " ".join(["python", *sys.argv]), "ckpt": args.ckpt, "machine": machine(), "backends": {}}
    for backend in args.backends:
        overrides = [f"graph={backend}", f"retriever.ckpt={args.ckpt}", "answer=graph"]
        cfg = infer_config(overrides)
        kg = build_graph(cfg)
        method = build_method(kg, None, overrides)
        examples = load_split(cfg, "test", kg)
        start = time.perf_counter()
        preds = [p for _, p in answer_all(method, examples, batch_size=32)]
        wall = time.perf_counter() - start
        m = compute_metrics(preds, wall_s=wall)
        answers = {p.qid: p.answers[:1] for p in preds}
        results["backends"][backend] = {"n": m["n"], "hits@1": m["hits@1"], "f1": m["f1"], "by_shape": m["by_shape"],
                                        "questions_per_s": m["questions_per_s"], "status": m["status"],
                                        "config": overrides}
        results["backends"][backend]["_answers"] = answers
        print(backend, json.dumps({k: v for k, v in results["backends"][backend].items() if k != "_answers"}, indent=1))
    first = None
    for backend, r in results["backends"].items():
        answers = r.pop("_answers")
        first = first or answers
        r["same_top_answers_as_first_backend"] = answers == first
    results["training_rows"] = {"chain_only": training_rows(False), "with_plans": training_rows(True)}
    if args.train_summary:
        s = json.loads(Path(args.train_summary).read_text())
        results["train"] = {"fit_seconds": s.get("fit_seconds"), "epochs": s.get("epochs"),
                            "global_step": s.get("global_step"),
                            "plans": (s.get("data") or {}).get("plans"),
                            "test_metrics": {k: v for k, v in (s.get("metrics") or {}).items() if k.startswith("test/")}}
    rows = results["training_rows"]
    results["training_rows"]["ratio"] = round(rows["with_plans"]["encoder_rows"] / rows["chain_only"]["encoder_rows"], 3)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results["training_rows"], indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
