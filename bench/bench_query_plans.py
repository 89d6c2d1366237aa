"""Query plans on a KG written for them (issue 34): Hits@1 per question shape with the graph scorer,
given topics and linked from the text, from a checkpoint trained on answers only.

    python -m bench.kgs.scholarly --out DIR
    python train.py data=files data.kb_path=DIR/kg.nt data.train_file=DIR/plans_train.jsonl \\
        data.val_file=DIR/plans_val.jsonl name=schol_plans
    python -m bench.bench_query_plans --data DIR --ckpt checkpoints/schol_plans/best.ckpt \\
        [--train-summary outputs/schol_plans/runs/<time>/train_summary.json] [--modes given linked]

Each mode is one `python infer.py data=files data.kb_path=DIR/kg.nt data.test_file=DIR/plans_test.jsonl
retriever.ckpt=CKPT answer=graph [method.use_gold_topic=false]` run (its metrics.json read back:
the test rows give their shape, so metrics break Hits@1 down by it, and by the plan kind chosen).
Writes bench/results/bench_query_plans.json (figures, per-shape table, commands, machine, load) and
prints the table.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.common import REPO, RESULTS, TOPIC_MODES, Run

SHAPES = ("chain", "two_anchors", "three_anchors", "comparison", "two_conditions", "anchors_condition", "order",
          "intermediate", "count", "yes_no")
MODES = TOPIC_MODES


def infer_command(data: Path, ckpt: str, mode: str, out: Path, extra: list[str] = ()) -> list[str]:
    return [sys.executable, "infer.py", "data=files", f"data.kb_path={data / 'kg.nt'}",
            f"data.test_file={data / 'plans_test.jsonl'}", f"retriever.ckpt={ckpt}", "answer=graph", "logger=none",
            f"hydra.run.dir={out}", *MODES[mode], *extra]


def run_mode(data: Path, ckpt: str, mode: str, work: Path, extra: list[str] = ()) -> dict:
    """One infer.py run; its metrics (from metrics.json) and wall time."""
    out = work / mode
    cmd = infer_command(data, ckpt, mode, out, extra)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "WANDB_MODE": "disabled", "HYDRA_FULL_ERROR": "1"})
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")
    metrics = json.loads((out / "metrics.json").read_text())
    shown = " ".join(["python"] + [c for c in cmd[1:] if not c.startswith("hydra.run.dir=")])
    return {"command": shown, "wall_s": round(time.perf_counter() - start, 1),
            "metrics": metrics}


def shape_table(results: dict) -> tuple[dict, str]:
    """{shape: {mode: Hits@1}} and its markdown table (plus the overall row), from each mode's metrics."""
    table: dict[str, dict[str, float | None]] = {}
    for mode, r in results.items():
        by = r["metrics"].get("by_shape") or {}
        for shape in list(SHAPES) + sorted(set(by) - set(SHAPES)):
            if shape in by:
                table.setdefault(shape, {})[mode] = round(by[shape]["hits@1"], 1)
        table.setdefault("all", {})[mode] = round(r["metrics"]["hits@1"], 1)
    modes = list(results)
    lines = ["| shape | n | " + " | ".join(f"Hits@1 {m}" for m in modes) + " | plan chosen (given) |",
             "|---|---|" + "---|" * len(modes) + "---|"]
    first = next(iter(results.values()))["metrics"]
    for shape, row in table.items():
        n = first["n"] if shape == "all" else (first.get("by_shape") or {}).get(shape, {}).get("n", "")
        chosen = (first.get("by_shape") or {}).get(shape, {}).get("predicted") or {}
        lines.append(f"| {shape} | {n} | " + " | ".join(f"{row.get(m, '–')}" for m in modes) + " | "
                     + ", ".join(f"{k} {v}" for k, v in chosen.items()) + " |")
    return table, "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_query_plans", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="the directory `python -m bench.kgs.scholarly --out DIR` wrote")
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    ap.add_argument("--train-summary", help="train_summary.json of the run that made --ckpt (its time and figures)")
    ap.add_argument("--work", default=str(REPO / "outputs" / "bench_query_plans"))
    ap.add_argument("--out", default=str(RESULTS / "bench_query_plans.json"))
    ap.add_argument("extra", nargs="*", help="more infer.py overrides (e.g. graph=oxigraph)")
    return ap


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    run = Run.start("bench_query_plans", args, argv)
    data = Path(args.data).resolve()
    results = {m: run_mode(data, args.ckpt, m, Path(args.work), args.extra) for m in args.modes}
    table, text = shape_table(results)
    figures = {"data": str(data), "ckpt": args.ckpt, "per_shape_hits@1": table, "table": text,
               "runs": {m: {"command": r["command"], "wall_s": r["wall_s"], "hits@1": r["metrics"]["hits@1"],
                            "f1": r["metrics"]["f1"], "by_shape": r["metrics"].get("by_shape"),
                            "by_plan_kind": r["metrics"].get("by_plan_kind"), "status": r["metrics"].get("status"),
                            "questions_per_s": r["metrics"].get("questions_per_s")}
                        for m, r in results.items()}}
    if args.train_summary:
        s = json.loads(Path(args.train_summary).read_text())
        figures["train"] = {k: s.get(k) for k in ("fit_seconds", "epochs", "global_step", "best_ckpt")}
        figures["train"]["val"] = {k: v for k, v in (s.get("metrics") or {}).items() if k.startswith("val/")}
        figures["train"]["plans"] = (s.get("data") or {}).get("plans")
    run.write(figures, args.out)
    print(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
