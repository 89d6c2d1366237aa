"""Training budget benchmark (issue 28, item 7): does the default retriever training converge on data
whose questions repeat few templates, and what does it cost on the built-in data?

    python -m bench.bench_budget template [--train 5000 --test 500]   # MiniLM, default budget vs epochs only
    python -m bench.bench_budget builtin [--label after]               # `python train.py && python infer.py`

template: bench.template_kg writes a sports KG whose 5,000 training questions repeat 24 masked
wordings (one batch per epoch), then `train.py data=files ...` runs twice with the packaged MiniLM:
with the defaults (no override at all) and with `trainer.min_steps=0` (the budget before the step
floor: max_epochs=3 epochs, i.e. three optimizer steps); each checkpoint answers the 500 test
questions with `infer.py` (graph scorer, given topics). builtin: the README's default run as is.
Every run records its wall time, training time, steps, convergence verdict (train_summary.json),
test path accuracy and Hits@1, and the load average before and after (the machine is shared).
Writes bench/results/bench_budget_<mode>.json (a builtin run adds its entry under --label).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.common import REPO, RESULTS, Run, arguments, previous
from bench.template_kg import write


def sh(args: list[str], env: dict) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return time.perf_counter() - start


def train_and_answer(work: Path, name: str, train_args: list[str], infer_args: list[str]) -> dict:
    """One `train.py` + `infer.py` pair under `work`; the figures both wrote."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "disabled", "RRA_ROOT": str(work)}
    load_before = os.getloadavg()
    train_dir, infer_dir = work / "runs" / f"{name}_train", work / "runs" / f"{name}_infer"
    train_wall = sh(["train.py", *train_args, "logger=none", f"name={name}", f"hydra.run.dir={train_dir}"], env)
    summary = json.loads((train_dir / "train_summary.json").read_text())
    ckpt = work / "checkpoints" / name / "best.ckpt"
    infer_wall = sh(["infer.py", *infer_args, "logger=none", f"retriever.ckpt={ckpt}",
                     f"hydra.run.dir={infer_dir}"], env)
    metrics = json.loads((infer_dir / "metrics.json").read_text())
    return {"train_command": "python train.py " + " ".join(train_args),
            "infer_command": "python infer.py " + " ".join(infer_args),
            "train_wall_s": round(train_wall, 1), "fit_seconds": round(summary["fit_seconds"], 1),
            "infer_wall_s": round(infer_wall, 1), "epochs": summary["epochs"],
            "global_step": summary["global_step"], "budget": summary.get("budget"),
            "convergence": summary.get("convergence"),
            "val_path_acc_best": summary["metrics"].get("val/path_acc_best"),
            "test_path_acc": summary["metrics"].get("test/path_acc"),
            "hits@1": metrics.get("hits@1"), "f1": metrics.get("f1"),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()]}


def template(args) -> dict:
    work = Path(args.work)
    kg = work / "template_kg"
    made = write(kg, args.train, args.test, args.seed)
    data = ["data=files", f"data.kb_path={kg / 'kb.tsv'}", f"data.train_file={kg / 'train.jsonl'}"]
    test = data[:2] + [f"data.test_file={kg / 'test.jsonl'}"]
    runs = {"default": train_and_answer(work, "templates", data + [f"data.test_file={kg / 'test.jsonl'}"], test),
            "epochs_only": train_and_answer(work, "templates_epochs", data + [
                f"data.test_file={kg / 'test.jsonl'}", "trainer.min_steps=0"], test)}
    return {"kg": made, "runs": runs}


def builtin(args) -> dict:
    work = Path(args.work)
    return {"runs": {args.label: train_and_answer(work, "retriever", [], [])}}


def parser():
    """The command line of `python -m bench.bench_budget`."""
    ap = arguments("bench_budget", __doc__)
    ap.add_argument("mode", choices=["template", "builtin"])
    ap.add_argument("--train", type=int, default=5000)
    ap.add_argument("--test", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--label", default="after", help="builtin: the name of this run in the JSON")
    ap.add_argument("--work", default="/tmp/rra_bench_budget", help="runs and checkpoints go here")
    return ap


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    run = Run.start("bench_budget", args, argv)
    out = RESULTS / f"bench_budget_{args.mode}.json"
    figures = template(args) if args.mode == "template" else builtin(args)
    if args.mode == "builtin":  # keep the other labels' runs (before / after)
        figures["runs"] = {**previous(out).get("runs", {}), **figures["runs"]}
    run.write(figures, out)
    print(json.dumps({k: {m: r[m] for m in ("global_step", "fit_seconds", "test_path_acc", "hits@1")}
                      for k, r in figures["runs"].items()}, indent=1))


if __name__ == "__main__":
    main()
