"""What a training's data setup costs on a large KG: the retriever datamodule's `setup()` (paths
labelled from the graph, query-plan candidates, topics linked from the text) with every cache cold.

    python -m bench.bench_training_setup --triples 1000000 --questions 400

A seeded synthetic KG of the MetaQA-like shape bench_scale uses (rra labels and names added so
questions can name their topics), and training / validation questions asked of it: 1-hop and 2-hop
chains walked from seeded topics, a quarter of the training questions without a topic entity
(`datamodule.link_topics`, linked from the text). Measured: the graph load, `setup()` wall time
and the passes over the whole graph (`build_adjacency` calls) it makes, and the resident memory
after. Run it from another checkout (a git worktree of an older commit: `cd WORKTREE && python -m
bench.bench_training_setup ...` with this file copied there) to compare code; `--label` names the
row, rows merge into bench/results/bench_training_setup.json.
"""
from __future__ import annotations

import random
import subprocess
import tempfile
import time
from pathlib import Path

from bench.common import RESULTS, Run, arguments, previous
from bench.bench_scale import RELATIONS, generate, rss_mb


def questions(kg, n: int, seed: int, unlinked: float, max_head: int) -> list:
    """Chains of 1-2 hops from seeded movie topics, answers from the graph; a share without a topic."""
    from rra.records import QAExample

    rng = random.Random(seed)
    out = []
    while len(out) < n:
        topic = f"m{rng.randrange(1000, min(50000, max_head))}"
        if not kg.has_entity(topic):
            continue
        path = [rng.choice(RELATIONS)] if rng.random() < 0.6 else [rng.choice(RELATIONS), "^" + rng.choice(RELATIONS)]
        ends = sorted({p.end for p in kg.follow_path(topic, path, limit=50)})
        if not ends or len(ends) > 20:
            continue
        words = " then ".join(r.replace("^", "reverse ").replace("_", " ") for r in path)
        label = kg.label(topic)
        given = [] if rng.random() < unlinked else [topic]
        out.append(QAExample(f"what is the {words} of {label}", given, ends[:5], qid=f"q{seed}-{len(out)}"))
    return out


def parser():
    p = arguments("bench_training_setup", __doc__)
    p.add_argument("--triples", type=int, default=1_000_000)
    p.add_argument("--questions", type=int, default=400)
    p.add_argument("--label", default="this checkout")
    p.add_argument("--out", default=str(RESULTS / "bench_training_setup.json"))
    return p


def main() -> None:
    args = parser().parse_args()
    run = Run.start("bench_training_setup", args)

    import rra.data.supervision as supervision
    from rra.data.datamodule import RetrieverDataModule
    from rra.data.dataset import Dataset
    from rra.graph.loaders import load_graph
    from rra.linking import link_training_topics

    passes = []
    build = supervision.build_adjacency

    def counted(kg):
        start = time.perf_counter()
        adj = build(kg)
        passes.append(round(time.perf_counter() - start, 2))
        return adj

    supervision.build_adjacency = counted  # every labeller reaches it through this module
    with tempfile.TemporaryDirectory() as tmp:
        shape = generate(args.triples, Path(tmp))
        named = range(1000, min(50000, shape["heads"]))
        with open(Path(tmp) / "kb.tsv", "a") as f:  # names, so questions can name their topics
            for h in named:
                f.write(f"m{h}\trdfs:label\tMovie number {h}\n")
        start = time.perf_counter()
        kg = load_graph(Path(tmp) / "kb.tsv")
        load_s = time.perf_counter() - start
        train = questions(kg, args.questions, 1, 0.25, shape["heads"])
        val = questions(kg, max(20, args.questions // 5), 2, 0.0, shape["heads"])
        dm = RetrieverDataModule(Dataset(train=train, val=val), kg, supervision_cache=False, plan_ranker=True,
                                 link_topics=link_training_topics, dedupe=False)
        start = time.perf_counter()
        dm.setup()
        setup_s = time.perf_counter() - start
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = None
    row = {"commit": commit, "kg": {**shape, "labels": len(named)}, "load_s": round(load_s, 1),
           "train_questions": len(train), "val_questions": len(val), "setup_s": round(setup_s, 1),
           "graph_passes": len(passes), "pass_seconds": passes, "rss_mb_after": round(rss_mb()),
           "topics_linked": dm.summary.get("topics_linked"),
           "covered": {k: v.get("covered") for k, v in dm.summary.get("coverage", {}).items()}}
    print(row, flush=True)
    record = previous(args.out)
    rows = {**record.get("rows", {}), args.label: row}
    run.write({"rows": rows}, args.out)


if __name__ == "__main__":
    main()
