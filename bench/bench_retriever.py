"""MetaQA retriever figures: hop / top-1 / top-3 path accuracy per hop on the full test splits,
and batched top-3 retrieval throughput on the 2-hop test split.

    python bench/bench_retriever.py --train          # python train.py experiment=metaqa, then evaluate
    python bench/bench_retriever.py --ckpt checkpoints/metaqa/best.ckpt   # evaluate an existing one

We train on MetaQA **dev** (a seeded 10% held out for validation; the official train split is not
available here) and score every test question against the gold path of its qtype file.
Writes bench/results/bench_retriever.json.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as rra/__init__.py, before torch loads
import torch  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from common import machine  # noqa: E402  (bench/common.py)
from rra.data.metaqa import load_metaqa  # noqa: E402
from rra.models.retriever import Retriever  # noqa: E402


def train(overrides: list[str]) -> dict:
    """Run train.py in a subprocess (its own Hydra run dir) and return its train_summary.json."""
    run_dir = REPO / "outputs" / "bench_retriever" / datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    cmd = [sys.executable, str(REPO / "train.py"), "experiment=metaqa", "logger=csv",
           f"hydra.run.dir={run_dir}", *overrides]
    start = time.perf_counter()
    subprocess.run(cmd, cwd=REPO, check=True)
    summary = json.loads((run_dir / "train_summary.json").read_text())
    summary.update(command=" ".join(cmd[1:]), wall_seconds=time.perf_counter() - start, run_dir=str(run_dir))
    return summary


def evaluate(model: Retriever, root: Path, batch_size: int) -> dict:
    out = {}
    for hop in (1, 2, 3):
        examples = load_metaqa(root, hops=[hop], split="test")
        preds = model.predict([e.question for e in examples], topk=3, batch_size=batch_size)
        n = len(examples)
        hop_ok = sum(p[0].hop == hop for p in preds)
        top1 = sum(p[0].path == e.relation_path for p, e in zip(preds, examples))
        top3 = sum(any(x.path == e.relation_path for x in p[:3]) for p, e in zip(preds, examples))
        out[f"{hop}hop"] = {"questions": n, "hop_acc": hop_ok / n, "path_acc_top1": top1 / n,
                            "path_acc_top3": top3 / n}
        print(f"{hop}-hop test: {out[f'{hop}hop']}", flush=True)
    return out


def throughput(model: Retriever, root: Path, call_size: int, batch_size: int, limit: int | None = None,
               use_cache: bool = True) -> dict:
    """Top-3 path prediction over the 2-hop test questions, `call_size` questions per predict()
    call (masked duplicates are encoded once per call); plus raw encoder speed on distinct texts."""
    questions = [e.question for e in load_metaqa(root, hops=[2], split="test", with_gold_paths=False)][:limit]
    model.predict(questions[:call_size], topk=3, batch_size=batch_size, use_cache=False)  # warm-up
    model._predict_cache.clear()
    model.encoded_texts = 0
    start = time.perf_counter()
    for i in range(0, len(questions), call_size):
        model.predict(questions[i : i + call_size], topk=3, batch_size=batch_size, use_cache=use_cache)
    seconds = time.perf_counter() - start
    return {"questions": len(questions), "questions_per_call": call_size, "encoding_cache": use_cache,
            "seconds": seconds,
            "questions_per_s": len(questions) / seconds,
            "encoder_passes_per_question": model.encoded_texts / len(questions)}


def raw_encoder_speed(model: Retriever, n: int = 512, batch_size: int = 128) -> dict:
    """Sequences/s of the encoder + head on distinct 2-hop step texts (no de-duplication): what a
    question costs when nothing repeats, 1 + beam passes for a 2-hop question."""
    texts = [f"which films star the director of entity number {i} [SEP] directed by" for i in range(n)]
    with torch.no_grad():
        model.encode(texts[:batch_size])
        start = time.perf_counter()
        for i in range(0, n, batch_size):
            model.path_head(model.encode(texts[i : i + batch_size]))
        seconds = time.perf_counter() - start
    seq_s = n / seconds
    return {"sequences_per_s": seq_s, "questions_per_s_2hop_top3_without_dedup": seq_s / (1 + 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", action="store_true", help="train first (python train.py experiment=metaqa)")
    ap.add_argument("--ckpt", default=str(REPO / "checkpoints" / "metaqa" / "best.ckpt"))
    ap.add_argument("--root", default=str(REPO.parent / "shared" / "data" / "metaqa"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--call-size", type=int, default=32, help="questions per predict() call (infer.py's batch_size)")
    ap.add_argument("--throughput-n", type=int, default=3000, help="2-hop test questions timed in calls of --call-size")
    ap.add_argument("--nocache-n", type=int, default=640, help="questions timed without the encoding cache")
    ap.add_argument("--training-json", help="training figures of an earlier run (JSON file) instead of --train")
    ap.add_argument("--quantize", choices=["int8"], help="dynamic int8 encoder (CPU); writes bench_retriever_int8.json")
    ap.add_argument("--skip-eval", action="store_true", help="throughput only (no full test-split accuracy)")
    ap.add_argument("overrides", nargs="*", help="extra train.py overrides")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    result = {"command": "python bench/bench_retriever.py " + " ".join(sys.argv[1:]),
              "timestamp": datetime.now(timezone.utc).isoformat(), "train_split": "dev",
              "test_split": "test (full 1/2/3-hop, gold paths from qtype files)", "machine": machine()}
    if args.train:
        result["training"] = train(args.overrides)
    elif args.training_json:
        result["training"] = json.loads(Path(args.training_json).read_text())
    model = Retriever.load(args.ckpt).quantize(args.quantize)
    result["checkpoint"], result["quantize"] = args.ckpt, args.quantize
    result["model"] = {k: v for k, v in dict(model.hparams).items() if k != "relations"}
    start = time.perf_counter()
    if not args.skip_eval:
        result["test"] = evaluate(model, Path(args.root), args.batch_size)
        result["test_eval_seconds"] = time.perf_counter() - start
    result["throughput_2hop_top3"] = throughput(model, Path(args.root), args.call_size, args.batch_size, args.throughput_n)
    result["throughput_2hop_top3_no_cache"] = throughput(model, Path(args.root), args.call_size, args.batch_size,
                                                         args.nocache_n, use_cache=False)
    result["throughput_2hop_top3_whole_split_one_call"] = throughput(model, Path(args.root), 10**6, args.batch_size)
    result["raw_encoder"] = raw_encoder_speed(model)
    result["machine"]["loadavg_end"] = os.getloadavg()
    out = REPO / "bench" / "results" / ("bench_retriever_int8.json" if args.quantize else "bench_retriever.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str))
    print(json.dumps({k: result.get(k) for k in ("test", "throughput_2hop_top3", "throughput_2hop_top3_no_cache", "raw_encoder")}, indent=1))


if __name__ == "__main__":
    main()
