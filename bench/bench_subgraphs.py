"""Per-question graphs at benchmark size: questions that each bring a 5,000-triple subgraph (as
RoG's WebQSP / CWQ rows do), answered by RRA with the graph scorer through infer.py's own
evaluation loop (rra.eval.run.run_split, data=subgraphs), so every question's graph is built
(read from the file, CVTs folded, NetworkX) and queried while the clock runs.

    python -m bench.bench_subgraphs [--questions 300] [--triples 5000] [--ckpt CKPT] [--threads 2]

The data is generated (rra.data.subgraph_generator: the sample's film world, each subgraph padded
with random facts to `--triples`), written as RoG-format JSONL. Without `--ckpt` a tiny-encoder
retriever is first trained on the generated sample (as the tests do). Reports questions/s of the
whole loop (graph build + retrieval + graph scorer), the build alone, and Hits@1 / the subgraph
ceiling as a check that the questions were really answered. Writes bench/results/bench_subgraphs.json.
"""
from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from bench.common import RESULTS, Run, arguments, compose
from rra.data.subgraph_formats import load_rog
from rra.data.subgraph_generator import big_subgraph_records, write_all, write_rog
from rra.graph.subgraphs import QuestionGraphs


def train_tiny(sample: dict, root: Path) -> str:
    """A tiny-encoder retriever trained on the generated sample (as the tests do): its checkpoint."""
    from rra.training.run import train

    f = sample["rog"]
    train(compose("train", ["data=subgraphs", "model=retriever_tiny", "trainer.max_epochs=25",
                            "callbacks.early_stopping=null", "callbacks.progress_bar=null", "test=false",
                            "name=bench_subgraphs", f"data.train_file={f['train']}", f"data.val_file={f['dev']}"], root))
    return str(root / "checkpoints" / "bench_subgraphs" / "best.ckpt")


def build_only(test_file: Path) -> dict:
    """The build alone: each question's row read again, CVTs folded, NetworkX filled (a cache of one: no reuse)."""
    kg = QuestionGraphs(cache_size=1)
    examples = load_rog(str(test_file), kg=kg)
    start, cpu = time.perf_counter(), time.process_time()
    for ex in examples:
        kg.graph(ex.extra["subgraph"])
    build_s, build_cpu = time.perf_counter() - start, time.process_time() - cpu
    n = len(examples)
    return {"build_only_questions_per_s": round(n / build_s, 2), "build_only_questions_per_cpu_s": round(n / build_cpu, 2),
            "build_cpu_ms_per_question": round(1000 * build_cpu / n, 2)}


def whole_loop(test_file: Path, ckpt: str, work: Path) -> dict:
    """`python infer.py data=subgraphs data.test_file=... answer=graph` through infer.py's own loop;
    the loop's CPU seconds apart from set-up, imports and model loading."""
    from rra.eval import run

    cfg = compose("infer", ["data=subgraphs", f"data.test_file={test_file}", f"retriever.ckpt={ckpt}", "llm=none",
                            "answer=graph", "rewriter=template", "graph.cache_size=1", "show_summary=false"], work)
    loop_cpu, answer_and_score = [], run.answer_and_score

    def timed(*a, **k):  # the evaluation loop alone
        cpu = time.process_time()
        try:
            return answer_and_score(*a, **k)
        finally:
            loop_cpu.append(time.process_time() - cpu)

    run.answer_and_score = timed
    try:
        start = time.perf_counter()
        metrics = run.run_split(cfg, work / "infer")
    finally:
        run.answer_and_score = answer_and_score
    n = metrics["n"]
    # The machine is shared (see machine.loadavg): wall-clock rates fall with the load; the
    # process's own CPU time per question is what one free core of this CPU would take.
    return {"questions_per_cpu_s": round(n / loop_cpu[0], 2), "cpu_ms_per_question": round(1000 * loop_cpu[0] / n, 2),
            "questions_per_s": round(metrics["questions_per_s"], 2),
            "questions_per_s_with_setup": round(n / (time.perf_counter() - start), 2),
            "latency_p50_s": metrics["latency_p50_s"], "latency_p95_s": metrics["latency_p95_s"],
            "hits@1": metrics["hits@1"], "subgraph_ceiling": metrics["subgraph_ceiling"], "status": metrics["status"]}


def parser():
    """The command line of `python -m bench.bench_subgraphs`."""
    ap = arguments("bench_subgraphs", __doc__)
    ap.add_argument("--questions", type=int, default=300)
    ap.add_argument("--triples", type=int, default=5000)
    ap.add_argument("--ckpt", default=None, help="a retriever trained on the generated sample (default: train one)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=str(RESULTS / "bench_subgraphs.json"))
    return ap


def main() -> None:
    args = parser().parse_args()
    import torch

    torch.set_num_threads(args.threads)
    run = Run.start("bench_subgraphs", args)
    work = Path(tempfile.mkdtemp(prefix="bench_subgraphs_"))
    ckpt = args.ckpt or train_tiny(write_all(work / "sample", questions=120, triples=60, seed=0, parquet=False), work)
    big = big_subgraph_records(args.questions, args.triples, seed=1)
    test_file = write_rog(big["splits"]["test"], big["names"], work / "big" / "test.jsonl")
    sizes = [len(r["subgraph"]) for r in big["splits"]["test"]]
    build = build_only(test_file)
    result = {
        "data": f"generated (rra.data.subgraph_generator), {args.questions} questions, RoG-format JSONL, "
                f"subgraphs of {min(sizes)}-{max(sizes)} triples (mean {sum(sizes) / len(sizes):.0f})",
        "retriever": ckpt if args.ckpt else "tiny encoder (model=retriever_tiny) trained on the generated sample",
        "method": "rra, answer=graph (graph scorer), rewriter=template, llm=none, graph=subgraphs (cache_size=1)",
        **whole_loop(test_file, ckpt, work), **build,
        "target": ">= 50 questions/s with the graph scorer, building and querying a 5,000-triple subgraph each",
        "threads": args.threads,
    }
    run.write(result, args.out)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
