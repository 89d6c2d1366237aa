"""The default run on the built-in KG, as `make run` does it after installing: `python train.py`, then
`python infer.py`, each timed as a user would time it (wall clock of the command), with the figures
both write (train_summary.json, metrics.json) and the load around them.

    python -m bench.bench_default_run [--out bench/results/builtin_default_run.json] [overrides ...]

Overrides go to both commands (e.g. `model.path_head=classifier` to time the paper's head). Runs go
under bench/cache/bench_default_run/ with their own checkpoint directory, so checkpoints/ is left
alone.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from bench.common import CACHE, REPO, RESULTS, Run, arguments, loadavg


def parser():
    ap = arguments("bench_default_run", __doc__)
    ap.add_argument("--out", default=str(RESULTS / "builtin_default_run.json"))
    ap.add_argument("overrides", nargs="*", help="Hydra overrides for both commands")
    return ap


def timed(cmd: list[str]) -> float:
    """Run one command from the repository root; its wall seconds. A failure stops the benchmark
    with the command's last output."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env={**os.environ, "WANDB_MODE": "offline"})
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{(proc.stdout + proc.stderr)[-3000:]}")
    return round(time.perf_counter() - start, 1)


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    run = Run.start("bench_default_run", args, argv)
    work = CACHE / "bench_default_run"
    shared = [f"paths.checkpoint_dir={work / 'checkpoints'}", *args.overrides]
    train_dir, infer_dir = work / "train", work / "infer"
    train_cmd = [sys.executable, "train.py", *shared, f"hydra.run.dir={train_dir}"]
    infer_cmd = [sys.executable, "infer.py", *shared, f"hydra.run.dir={infer_dir}", "resume=false",
                 f"retriever.ckpt={work / 'checkpoints' / 'retriever' / 'best.ckpt'}"]
    train_s = timed(train_cmd)
    load_after_train = loadavg()
    infer_s = timed(infer_cmd)
    summary = json.loads((train_dir / "train_summary.json").read_text())
    metrics = json.loads((infer_dir / "metrics.json").read_text())
    figures = {"commands": ["python train.py " + " ".join(args.overrides), "python infer.py " + " ".join(args.overrides)],
               "train_wall_s": train_s, "infer_wall_s": infer_s, "total_wall_s": round(train_s + infer_s, 1),
               "train_fit_seconds": summary.get("fit_seconds"), "global_step": summary.get("global_step"),
               "still_improving": (summary.get("convergence") or {}).get("still_improving"),
               "retriever_test": {k: v for k, v in (summary.get("metrics") or {}).items() if k.startswith("test/")},
               "answers": {k: metrics.get(k) for k in ("n", "hits@1", "hits@1_strict", "f1", "path_acc", "hop_acc",
                                                       "status", "by_shape", "by_plan_kind")},
               "pretrained_mix": summary.get("pretrained_mix"), "load_after_train": load_after_train}
    run.write(figures, args.out)
    print(json.dumps({k: figures[k] for k in ("train_wall_s", "infer_wall_s")} | {"hits@1": metrics.get("hits@1")}))


if __name__ == "__main__":
    main()
