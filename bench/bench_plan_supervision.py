"""How long deriving query-plan supervision from the graph takes (rra.data.plan_supervision): the
training set's questions turned into the candidate plans the plan ranker learns from, on the
scholarly KG (bench/kgs/scholarly.py: 43,244 N-Triples lines, 3,000 training + 300 validation
questions of ten shapes).

    python -m bench.bench_plan_supervision [--data DIR] [--beside RECORD] [--out bench/results/bench_plan_supervision.json]

It is the part of `python train.py data=files ...` before the first step that grows with the data
(a user's first run on their KG, and every run after the questions change: then the cache under
~/.cache/rra/supervision no longer matches). The datamodule is set up as train.py sets it up, with the
cache off; `label_plans` is timed per split. `digest` (sha256 of every question's candidates and
label) proves that a faster derivation derives the same plans: compare it between commits.
Without --data the KG and questions are generated into a temporary folder (2-3 s, not timed).
--beside: this benchmark's record from another commit, taken in the same hour (a git worktree of it
with this file copied in): kept under `beside`, with `same_plans` (the digests agree) and `speedup`.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
import time
from pathlib import Path

from bench.common import RESULTS, Run, arguments, compose

KEYS = ("plan_candidates", "plan", "plan_source", "plan_exact")


def parser():
    ap = arguments("bench_plan_supervision", __doc__)
    ap.add_argument("--data", help="a folder written by `python -m bench.kgs.scholarly --out DIR`")
    ap.add_argument("--beside", help="this benchmark's record from another commit, taken in the same hour")
    ap.add_argument("--out", default=str(RESULTS / "bench_plan_supervision.json"))
    return ap


def measure(data: Path) -> dict:
    """Set up the scholarly datamodule as train.py does (no cache) and time `label_plans` per split."""
    import rra.data.plan_supervision as ps
    from rra.training.run import build_datamodule

    cfg = compose("train", ["data=files", f"data.kb_path={data / 'kg.nt'}",
                            f"data.train_file={data / 'plans_train.jsonl'}",
                            f"data.val_file={data / 'plans_val.jsonl'}", "datamodule.supervision_cache=false"],
                  root=Path(tempfile.mkdtemp(prefix="bench_plan_supervision_")))
    calls, label_plans = [], ps.label_plans

    def timed(kg, examples, *args, **kwargs):
        start = time.perf_counter()
        report = label_plans(kg, examples, *args, **kwargs)
        calls.append((time.perf_counter() - start, examples, report))
        return report

    ps.label_plans = timed
    try:
        start = time.perf_counter()
        datamodule = build_datamodule(cfg)
        datamodule.setup("fit")
        setup_s = time.perf_counter() - start
    finally:
        ps.label_plans = label_plans
    digest = hashlib.sha256()
    splits = {}
    for name, (seconds, examples, report) in zip(("train", "val"), calls):
        for ex in examples:
            digest.update(json.dumps({k: ex.extra.get(k) for k in KEYS}, sort_keys=True, default=str).encode())
        splits[name] = {"questions": len(examples), "seconds": round(seconds, 2),
                        "ms_per_question": round(1000 * seconds / max(len(examples), 1), 2),
                        "ranked": report.ranked, "exact": report.exact}
    return {"setup_s": round(setup_s, 2), "label_plans_s": round(sum(c[0] for c in calls), 2),
            "splits": splits, "digest": digest.hexdigest()}


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    run = Run.start("bench_plan_supervision", args, argv)
    if args.data:
        figures = measure(Path(args.data))
    else:
        from bench.kgs import scholarly

        with tempfile.TemporaryDirectory() as tmp:
            scholarly.main(["--out", tmp])
            figures = measure(Path(tmp))
    figures["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent,
                                       capture_output=True, text=True).stdout.strip()
    if args.beside:
        other = json.loads(Path(args.beside).read_text())
        figures["beside"] = {k: other.get(k) for k in ("figures", "command", "load", "timestamp")}
        figures["same_plans"] = other["figures"]["digest"] == figures["digest"]
        figures["speedup"] = round(other["figures"]["label_plans_s"] / figures["label_plans_s"], 2)
    print(json.dumps({k: v for k, v in figures.items() if k != "beside"}, indent=1))
    run.write({"figures": figures}, args.out)


if __name__ == "__main__":
    main()
