"""Per-question graphs at benchmark size: questions that each bring a 5,000-triple subgraph (as
RoG's WebQSP / CWQ rows do), answered by RRA with the graph scorer through infer.py's own
evaluation loop (rra.eval.run.run_split, data=subgraphs), so every question's graph is built
(read from the file, CVTs folded, NetworkX) and queried while the clock runs.

    python bench/bench_subgraphs.py [--questions 300] [--triples 5000] [--ckpt CKPT] [--threads 2]

The data is generated (rra.data.subgraph_generator: the sample's film world, each subgraph padded
with random facts to `--triples`), written as RoG-format JSONL. Without `--ckpt` a tiny-encoder
retriever is first trained on the generated sample (as the tests do). Reports questions/s of the
whole loop (graph build + retrieval + graph scorer), the build alone, and Hits@1 / the subgraph
ceiling as a check that the questions were really answered. Writes bench/results/bench_subgraphs.json.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from common import machine  # noqa: E402  (bench/common.py)
from hydra import compose, initialize_config_dir  # noqa: E402
from hydra.core.global_hydra import GlobalHydra  # noqa: E402
from hydra.core.hydra_config import HydraConfig  # noqa: E402
from omegaconf import open_dict  # noqa: E402

from rra.config import register_resolvers  # noqa: E402
from rra.data.subgraph_formats import load_rog  # noqa: E402
from rra.data.subgraph_generator import big_subgraph_records, write_all, write_rog  # noqa: E402
from rra.graph.subgraphs import QuestionGraphs  # noqa: E402


def config(name: str, overrides: list[str], root: Path):
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose(name, overrides=["data=subgraphs", "logger=none", *overrides], return_hydra_config=True)
    HydraConfig().set_config(cfg)
    with open_dict(cfg):
        cfg.paths.root_dir = str(root)
        cfg.paths.output_dir = str(root / "run")
    return cfg


def train_tiny(sample: dict, root: Path) -> str:
    from rra.training.run import train

    f = sample["rog"]
    train(config("train", ["model=retriever_tiny", "trainer.max_epochs=25", "callbacks.early_stopping=null",
                                 "callbacks.progress_bar=null", "test=false", "name=bench_subgraphs",
                                 f"data.train_file={f['train']}", f"data.val_file={f['dev']}"], root))
    return str(root / "checkpoints" / "bench_subgraphs" / "best.ckpt")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=300)
    ap.add_argument("--triples", type=int, default=5000)
    ap.add_argument("--ckpt", default=None, help="a retriever trained on the generated sample (default: train one)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "bench_subgraphs.json"))
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    register_resolvers(REPO)
    work = Path(tempfile.mkdtemp(prefix="bench_subgraphs_"))
    sample = write_all(work / "sample", questions=120, triples=60, seed=0, parquet=False)
    ckpt = args.ckpt or train_tiny(sample, work)
    big = big_subgraph_records(args.questions, args.triples, seed=1)
    test_file = write_rog(big["splits"]["test"], big["names"], work / "big" / "test.jsonl")
    sizes = [len(r["subgraph"]) for r in big["splits"]["test"]]

    # the build alone: read the row again, fold CVTs, fill NetworkX (a cache of one: no reuse)
    kg = QuestionGraphs(cache_size=1)
    examples = load_rog(str(test_file), kg=kg)
    start, cpu = time.perf_counter(), time.process_time()
    for ex in examples:
        kg.graph(ex.extra["subgraph"])
    build_s, build_cpu = time.perf_counter() - start, time.process_time() - cpu

    # the whole loop, as `python infer.py data=subgraphs data.test_file=... answer=graph` runs it
    cfg = config("infer", [f"data.test_file={test_file}", f"retriever.ckpt={ckpt}", "llm=none", "answer=graph",
                           "rewriter=template", "graph.cache_size=1", "show_summary=false"], work)
    from rra.eval import run

    loop_cpu = []
    answer_and_score = run.answer_and_score

    def timed(*a, **k):  # the evaluation loop alone (set-up, imports and model loading excluded)
        cpu = time.process_time()
        try:
            return answer_and_score(*a, **k)
        finally:
            loop_cpu.append(time.process_time() - cpu)

    run.answer_and_score = timed
    start = time.perf_counter()
    metrics = run.run_split(cfg, work / "infer")
    total_s, total_cpu = time.perf_counter() - start, loop_cpu[0]
    result = {
        "benchmark": "bench_subgraphs",
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": "python " + " ".join(sys.argv),
        "data": f"generated (rra.data.subgraph_generator), {args.questions} questions, RoG-format JSONL, "
                f"subgraphs of {min(sizes)}-{max(sizes)} triples (mean {sum(sizes) / len(sizes):.0f})",
        "retriever": ckpt if args.ckpt else "tiny encoder (model=retriever_tiny) trained on the generated sample",
        "method": "rra, answer=graph (graph scorer), rewriter=template, llm=none, graph=subgraphs (cache_size=1)",
        # The machine is shared (see machine.loadavg): wall-clock rates fall with the load; the
        # process's own CPU time per question is what one free core of this CPU would take.
        "questions_per_cpu_s": round(len(examples) / total_cpu, 2),
        "cpu_ms_per_question": round(1000 * total_cpu / len(examples), 2),
        "questions_per_s": round(metrics["questions_per_s"], 2),
        "questions_per_s_with_setup": round(len(examples) / total_s, 2),
        "build_only_questions_per_s": round(len(examples) / build_s, 2),
        "build_only_questions_per_cpu_s": round(len(examples) / build_cpu, 2),
        "build_cpu_ms_per_question": round(1000 * build_cpu / len(examples), 2),
        "latency_p50_s": metrics["latency_p50_s"], "latency_p95_s": metrics["latency_p95_s"],
        "hits@1": metrics["hits@1"], "subgraph_ceiling": metrics["subgraph_ceiling"], "status": metrics["status"],
        "target": ">= 50 questions/s with the graph scorer, building and querying a 5,000-triple subgraph each",
        "threads": args.threads,
        "machine": machine(),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=1))


if __name__ == "__main__":
    main()
