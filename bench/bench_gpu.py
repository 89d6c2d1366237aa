"""Training and answering on a GPU beside the CPU (issue 36): the record of one `bench/gpu_run.sh` run.

    METAQA=../shared/data/metaqa bash bench/gpu_run.sh OUT_DIR       # on a machine with a GPU
    python -m bench.bench_gpu OUT_DIR [--cpu NAME=TRAIN_SUMMARY ...]  # -> bench/results/bench_gpu.json

For each training: wall seconds of `fit`, optimizer steps, samples/s, the test path accuracy of
train.py's own test and the convergence verdict; for each answering run: Hits@1, path accuracy and
questions/s; the uncached retriever throughput of both heads (CPU, one thread). `--cpu` adds the same
training figures of CPU runs (their train_summary.json) beside the GPU ones. Nothing here needs a GPU:
it reads what the run wrote.
"""
from __future__ import annotations

import json
from pathlib import Path

from bench.common import RESULTS, Run, arguments


def training(summary: dict) -> dict:
    metrics = summary.get("metrics") or {}
    return {"fit_seconds": round(summary.get("fit_seconds") or 0, 1), "steps": summary.get("global_step"),
            "samples_per_s": round(metrics.get("train/samples_per_s", 0), 1),
            "test_path_acc": {k.removeprefix("test/"): round(100 * v, 2) for k, v in metrics.items()
                              if k.startswith("test/path_acc")},
            "val_path_acc_best": round(100 * metrics.get("val/path_acc_best", 0), 2),
            "still_improving": (summary.get("convergence") or {}).get("still_improving"),
            **({"pretrained_mix": {k: v for k, v in summary["pretrained_mix"].items() if k != "fine_tuned_ckpt"}}
               if summary.get("pretrained_mix") else {})}


def answering(metrics: dict) -> dict:
    return {k: round(metrics[k], 2) if isinstance(metrics.get(k), float) else metrics.get(k)
            for k in ("n", "hits@1", "hits@1_strict", "path_acc", "hop_acc", "questions_per_s")}


def figures(out: Path, cpu: dict[str, str]) -> dict:
    read = lambda f: json.loads(f.read_text(encoding="utf-8"))  # noqa: E731
    return {"gpu_training": {f.stem.removeprefix("train_"): training(read(f)) for f in sorted(out.glob("train_*.json"))},
            "gpu_answering": {f.stem.removeprefix("infer_"): answering(read(f)) for f in sorted(out.glob("infer_*.json"))},
            "retriever_speed_cpu_1_thread": read(out / "speed.json") if (out / "speed.json").is_file() else None,
            "cpu_training": {name: training(read(Path(f))) for name, f in cpu.items()}}


def parser():
    """The command line of `python -m bench.bench_gpu`."""
    ap = arguments("bench_gpu", __doc__)
    ap.add_argument("out_dir", help="the directory bench/gpu_run.sh wrote")
    ap.add_argument("--cpu", nargs="*", default=[], help="NAME=train_summary.json of a CPU run, for comparison")
    ap.add_argument("--device", default="", help="the machine the run had (e.g. one NVIDIA H100 80GB, 16 CPU cores)")
    ap.add_argument("--note", default="", help="what else a reader needs to know of the run")
    ap.add_argument("--out", default=str(RESULTS / "bench_gpu.json"))
    return ap


def main() -> None:
    args = parser().parse_args()
    run = Run.start("bench_gpu", args)
    cpu = dict(item.split("=", 1) for item in args.cpu)
    run.write({"device": args.device, "figures": figures(Path(args.out_dir), cpu),
               **({"note": args.note} if args.note else {})}, args.out)


if __name__ == "__main__":
    main()
