"""MetaQA retriever figures: hop / top-1 / top-3 path accuracy per hop on the full test splits,
and batched top-3 retrieval throughput on the 2-hop test split.

    python -m bench.bench_retriever --train          # python train.py experiment=metaqa, then evaluate
    python -m bench.bench_retriever --ckpt checkpoints/metaqa/best.ckpt   # evaluate an existing one

We train on MetaQA **dev** (a seeded 10% held out for validation; the official train split is not
available here) and score every test question against the gold path of its qtype file.
Writes bench/results/bench_retriever.json.
"""
from __future__ import annotations

import rra  # noqa: F401  (first: sets OMP_WAIT_POLICY before torch loads)

import json
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import torch

from bench.common import METAQA, METAQA_CKPT, REPO, RESULTS, Run, arguments
from rra.data.metaqa import load_metaqa
from rra.models.retriever import Retriever


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


def uncached(model: Retriever, examples: list, kg, call_size: int, batch_size: int, pruning: bool,
             topk: int = 3) -> dict:
    """What a user with non-repeating questions gets: the encoding cache off, `call_size`
    questions per predict() call; graph pruning on (kg + topic entity given) or off (pure model).
    Latency percentiles are per call; path accuracy is top-1 against the gold path."""
    questions = [e.question for e in examples]
    topics = [e.topic_entities[0] for e in examples]
    kw = dict(kg=kg, graph_pruning=True) if pruning else {}
    model.predict(questions[:call_size], topk=topk, batch_size=batch_size, use_cache=False,
                  topics=topics[:call_size] if pruning else None, **kw)  # warm-up
    model.encoded_texts = 0
    calls, preds = [], []
    for i in range(0, len(questions), call_size):
        start = time.perf_counter()
        preds += model.predict(questions[i : i + call_size], topk=topk, batch_size=batch_size, use_cache=False,
                               topics=topics[i : i + call_size] if pruning else None, **kw)
        calls.append(time.perf_counter() - start)
    n = len(questions)
    lat = sorted(calls)
    gold = [e.relation_path for e in examples]
    return {"questions": n, "questions_per_call": call_size, "graph_pruning": pruning, "encoding_cache": False,
            "seconds": sum(calls), "questions_per_s": n / sum(calls),
            "latency_per_call_p50_s": lat[len(lat) // 2], "latency_per_call_p95_s": lat[min(len(lat) - 1, int(0.95 * len(lat)))],
            "encoder_passes_per_question": model.encoded_texts / n,
            "path_acc_top1": sum(bool(p) and p[0].path == g for p, g in zip(preds, gold)) / n,
            f"path_acc_top{topk}": sum(any(x.path == g for x in p[:topk]) for p, g in zip(preds, gold)) / n}


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


def uncached_table(model: Retriever, args) -> dict:
    """The cache-off figures per hop, on the split as it comes and on distinct masked templates,
    graph pruning off and on."""
    from rra.data.metaqa import load_metaqa_graph

    kg = load_metaqa_graph(args.root)
    table = {}
    for hop in (1, 2, 3):
        test = load_metaqa(Path(args.root), hops=[hop], split="test")
        distinct = list({model.mask(e.question): e for e in reversed(test)}.values())[::-1]
        # "test": as the split comes (masked templates repeat inside a call, encoded once);
        # "distinct": one question per masked text, so nothing is shared: what users' questions cost
        for name, examples in (("test", test[: args.nocache_n]), ("distinct", distinct[: args.nocache_n])):
            for pruning in (False, True):
                key = f"{hop}hop_top3_{name}_{'pruned' if pruning else 'model_only'}"
                table[key] = uncached(model, examples, kg, args.call_size, args.batch_size, pruning)
                print(key, json.dumps(table[key]), flush=True)
    return table


def accuracy_and_speed(model: Retriever, args) -> dict:
    """Path accuracy on the full test splits (unless --skip-eval) and the throughput figures."""
    root, out = Path(args.root), {}
    start = time.perf_counter()
    if not args.skip_eval:
        out["test"] = evaluate(model, root, args.batch_size)
        out["test_eval_seconds"] = time.perf_counter() - start
    out["throughput_2hop_top3"] = throughput(model, root, args.call_size, args.batch_size, args.throughput_n)
    out["throughput_2hop_top3_no_cache"] = throughput(model, root, args.call_size, args.batch_size,
                                                      args.nocache_n, use_cache=False)
    out["throughput_2hop_top3_whole_split_one_call"] = throughput(model, root, 10**6, args.batch_size)
    out["raw_encoder"] = raw_encoder_speed(model)
    return out


UNCACHED_NOTE = ("MetaQA test questions (first --nocache-n per hop; 'distinct': one per masked template, so no "
                 "encoding is shared inside a call), encoding cache off, calls of --call-size questions; retriever "
                 "trained on MetaQA dev. 'pruned': graph_pruning with the MetaQA KG and the gold topic entity; "
                 "'model_only': the pure model beam search.")


def parser():
    """The command line of `python -m bench.bench_retriever`."""
    ap = arguments("bench_retriever", __doc__)
    ap.add_argument("--train", action="store_true", help="train first (python train.py experiment=metaqa)")
    ap.add_argument("--ckpt", default=str(METAQA_CKPT))
    ap.add_argument("--root", default=str(METAQA))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--call-size", type=int, default=32, help="questions per predict() call (infer.py's batch_size)")
    ap.add_argument("--throughput-n", type=int, default=3000, help="2-hop test questions timed in calls of --call-size")
    ap.add_argument("--nocache-n", type=int, default=640, help="questions timed without the encoding cache")
    ap.add_argument("--uncached-only", action="store_true",
                    help="only the cache-off figures per hop, pruning on and off (bench_retriever_uncached.json)")
    ap.add_argument("--training-json", help="training figures of an earlier run (JSON file) instead of --train")
    ap.add_argument("--quantize", choices=["int8"], help="dynamic int8 encoder (CPU); writes bench_retriever_int8.json")
    ap.add_argument("--skip-eval", action="store_true", help="throughput only (no full test-split accuracy)")
    ap.add_argument("--out", help="results file (default bench/results/bench_retriever[_uncached][_int8].json)")
    ap.add_argument("overrides", nargs="*", help="extra train.py overrides")
    return ap


def main() -> None:
    args = parser().parse_args()
    torch.set_num_threads(args.threads)
    run = Run.start("bench_retriever", args)
    figures = {"train_split": "dev", "test_split": "test (full 1/2/3-hop, gold paths from qtype files)"}
    if args.train:
        figures["training"] = train(args.overrides)
    elif args.training_json:
        figures["training"] = json.loads(Path(args.training_json).read_text())
    model = Retriever.load(args.ckpt).quantize(args.quantize)
    figures.update(checkpoint=args.ckpt, quantize=args.quantize)
    suffix = ("_uncached" if args.uncached_only else "") + (f"_{args.quantize}" if args.quantize else "")
    if args.uncached_only:
        figures.update(uncached=uncached_table(model, args), note=UNCACHED_NOTE)
    else:
        figures["model"] = {k: v for k, v in dict(model.hparams).items() if k != "relations"}
        figures.update(accuracy_and_speed(model, args))
    run.write(figures, args.out or RESULTS / f"bench_retriever{suffix}.json")
    print(json.dumps({k: figures.get(k) for k in ("test", "throughput_2hop_top3", "throughput_2hop_top3_no_cache",
                                                 "raw_encoder", "uncached") if k in figures}, indent=1))


if __name__ == "__main__":
    main()
