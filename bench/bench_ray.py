"""Questions per second of one process against 1 and 2 local Ray Data workers (runner=ray), on the
same questions in the same run, and whether they answer the same.

    python -m bench.bench_ray --ckpt checkpoints/retriever/best.ckpt --split train --rounds 2

Each round runs the three modes one after the other (the order turns every round, since this
machine's speed drifts between minutes), each into a fresh output dir, through what infer.py runs
(rra.eval.run.run_split; rra.eval.ray_infer.run_ray). Per mode: end-to-end seconds (the method
built, or the workers started, and every question answered), the answering loop's q/s (infer's
`questions_per_s`; for Ray: over the whole Ray run, start-up included), Ray's seconds to the first
answers (the workers' start-up), and Hits@1. Ray itself starts once (`ray.init`, timed apart).
Writes bench/results/bench_ray.json.
"""
from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODES = ["single", "ray1", "ray2"]


def run_mode(mode: str, overrides: list[str], out: Path) -> dict:
    """One run of `mode` into `out`: its timings, Hits@1 and answers."""
    from hydra.utils import instantiate

    from bench.common import compose

    extra = [] if mode == "single" else ["runner=ray", f"runner.num_workers={mode[-1]}"]
    cfg = compose("infer", ["show_summary=false", *overrides, *extra], output_dir=out)
    start = time.perf_counter()
    metrics = instantiate(cfg.runner)(cfg)
    total = time.perf_counter() - start
    answers = {}
    for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        answers[d["qid"]] = d["answers"]
    return {"mode": mode, "n": metrics["n"], "end_to_end_s": round(total, 2),
            "end_to_end_q_per_s": round(metrics["n"] / total, 2),
            "loop_q_per_s": round(metrics["questions_per_s"], 2) if metrics.get("questions_per_s") else None,
            "first_answer_s": metrics.get("first_answer_s"), "hits@1": metrics["hits@1"],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()], "answers": answers}


def summarise(rounds: list[list[dict]]) -> dict:
    """Median per mode over the rounds, and each Ray mode's ratio to the single process of the same round."""
    out = {}
    for mode in MODES:
        runs = [r for rnd in rounds for r in rnd if r["mode"] == mode]
        single = {i: next(r for r in rnd if r["mode"] == "single") for i, rnd in enumerate(rounds)}
        ratios = [next(r for r in rnd if r["mode"] == mode)["end_to_end_q_per_s"] / single[i]["end_to_end_q_per_s"]
                  for i, rnd in enumerate(rounds)]
        out[mode] = {"end_to_end_q_per_s": statistics.median(r["end_to_end_q_per_s"] for r in runs),
                     "end_to_end_s": statistics.median(r["end_to_end_s"] for r in runs),
                     "ratio_to_single": round(statistics.median(ratios), 3),
                     "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)],
                     "first_answer_s": None if mode == "single"
                     else statistics.median(r["first_answer_s"] for r in runs),
                     "hits@1": runs[0]["hits@1"]}
    return out


def parser():
    from bench.common import arguments

    ap = arguments("bench_ray", __doc__)
    ap.add_argument("--ckpt", default=str(REPO / "checkpoints" / "retriever" / "best.ckpt"))
    ap.add_argument("--split", default="train")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default=None, help="default: bench/results/bench_ray.json")
    return ap


def measure(ckpt: str, split: str, limit: int | None, rounds: int, tmp: Path) -> dict:
    """The figures: every round's runs (answers left out), their medians and ratios, and whether
    every run answered every question the same."""
    import ray

    overrides = ["llm=none", f"retriever.ckpt={ckpt}", f"split={split}"] + ([f"limit={limit}"] if limit else [])
    start = time.perf_counter()
    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
    ray_init_s = time.perf_counter() - start
    runs = []
    try:
        for i in range(rounds):
            order = MODES[i % 3:] + MODES[:i % 3]  # each mode goes first in turn
            runs.append([run_mode(m, overrides, tmp / f"r{i}-{m}") for m in order])
            print(json.dumps([{k: v for k, v in r.items() if k != "answers"} for r in runs[-1]]), flush=True)
    finally:
        ray.shutdown()
    return {"overrides": overrides, "ray_init_s": round(ray_init_s, 2),
            "ray": "local, num_cpus = cpu_count; each worker reserves 1 CPU (torch: 1 thread)",
            "same_answers_every_run": all(r["answers"] == runs[0][0]["answers"] for rnd in runs for r in rnd),
            "summary": summarise(runs),
            "rounds": [[{k: v for k, v in r.items() if k != "answers"} for r in rnd] for rnd in runs]}


def main(argv: list[str] | None = None) -> dict:
    from bench.common import Run

    args = parser().parse_args(argv)
    run = Run.start("bench_ray", args, argv)
    with tempfile.TemporaryDirectory() as tmp:
        figures = measure(args.ckpt, args.split, args.limit, args.rounds, Path(tmp))
    print(json.dumps(figures["summary"], indent=1))
    return run.write(figures, args.out)


if __name__ == "__main__":
    main()
