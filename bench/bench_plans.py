"""Questions beyond one chain on the built-in KG: Hits@1 and F1 per question shape (chain /
conjunction / comparison / order) with the graph scorer, on each graph backend, and what the new
shapes cost the default training run (training rows, against the chain-only data).

    python -m bench.bench_plans --ckpt checkpoints/retriever/best.ckpt [--backends networkx oxigraph]
        [--train-summary outputs/retriever/runs/<time>/train_summary.json]

The checkpoint is the one `python train.py` publishes (built-in data, default config). Writes
bench/results/bench_plans.json (figures, command, config, machine with its load average).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from bench.common import REPO, RESULTS, Run, arguments, build_method, infer_config


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


def answer_on(backend: str, ckpt: str) -> tuple[dict, dict]:
    """The built-in test split answered on one backend (graph scorer): figures, and the top answers."""
    from rra.config import build_graph
    from rra.eval.metrics import compute_metrics
    from rra.eval.run import answer_all, load_split

    overrides = [f"graph={backend}", f"retriever.ckpt={ckpt}", "answer=graph"]
    cfg = infer_config(overrides)
    kg = build_graph(cfg)
    method = build_method(kg, None, overrides)
    examples = load_split(cfg, "test", kg)
    start = time.perf_counter()
    preds = [p for _, p in answer_all(method, examples, batch_size=32)]
    m = compute_metrics(preds, wall_s=time.perf_counter() - start)
    return ({"n": m["n"], "hits@1": m["hits@1"], "f1": m["f1"], "by_shape": m["by_shape"],
             "questions_per_s": m["questions_per_s"], "status": m["status"], "config": overrides},
            {p.qid: p.answers[:1] for p in preds})


def training_run(path: str) -> dict:
    """What train_summary.json says of the run that made the checkpoint (its fit time, test figures)."""
    s = json.loads(Path(path).read_text())
    return {"fit_seconds": s.get("fit_seconds"), "epochs": s.get("epochs"), "global_step": s.get("global_step"),
            "plans": (s.get("data") or {}).get("plans"),
            "test_metrics": {k: v for k, v in (s.get("metrics") or {}).items() if k.startswith("test/")}}


def parser():
    """The command line of `python -m bench.bench_plans`."""
    ap = arguments("bench_plans", __doc__)
    ap.add_argument("--ckpt", default=str(REPO / "checkpoints" / "retriever" / "best.ckpt"))
    ap.add_argument("--backends", nargs="+", default=["networkx", "oxigraph"])
    ap.add_argument("--train-summary", help="train_summary.json of the run that made --ckpt (its fit time)")
    ap.add_argument("--out", default=str(RESULTS / "bench_plans.json"))
    return ap


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    run = Run.start("bench_plans", args, argv)
    figures, first = {"ckpt": args.ckpt, "backends": {}}, None
    for backend in args.backends:
        row, answers = answer_on(backend, args.ckpt)
        first = first or answers
        figures["backends"][backend] = {**row, "same_top_answers_as_first_backend": answers == first}
        print(backend, json.dumps(row, indent=1))
    rows = {"chain_only": training_rows(False), "with_plans": training_rows(True)}
    rows["ratio"] = round(rows["with_plans"]["encoder_rows"] / rows["chain_only"]["encoder_rows"], 3)
    figures["training_rows"] = rows
    if args.train_summary:
        figures["train"] = training_run(args.train_summary)
    run.write(figures, args.out)
    print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
