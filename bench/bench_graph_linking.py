"""RRA with the topic entity linked from the question text (no `[brackets]`, method.use_gold_topic
false) on each KG store: graph requests per question, questions/s, and whether every store links
and answers as NetworkX does.

    python -m bench.bench_graph_linking --ckpt checkpoints/metaqa/best.ckpt [--limit 300] [--batch-size 32]
        [--stores networkx oxigraph oxigraph_serve oxigraph_serve-names virtuoso virtuoso-names]

Linking reads a label lookup per n-gram of the question; the pipeline makes them ahead in batches
(rra.linking.LookAhead) and scores the lexical candidates' paths in rounds, so a SPARQL store sees
a few queries per batch. MetaQA 2-hop test, first `--limit` questions with their brackets removed;
the retriever was trained on the MetaQA **dev** split (the official train split is not available
here). Graph scorer, template rewriter, no LLM. Writes bench/results/bench_graph_linking.json.
"""
from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from pathlib import Path

from bench.bench_graph_rra import open_store
from bench.common import METAQA, METAQA_CKPT, RESULTS, Run, arguments, data_semantics, infer_config
from rra.config import build_graph
from rra.eval.metrics import compute_metrics
from rra.eval.run import with_gold  # gold answers are attached after answering
from rra.graph import load_graph, write_ntriples
from rra.pipeline.answer import GraphScorer
from rra.pipeline.method import RRAPipeline
from rra.pipeline.retrieve import PathRetrieval
from rra.pipeline.rewrite import TemplateRewriter


def unmarked_questions(root: str, hop: int, limit: int) -> tuple[list, list[str]]:
    """The first `limit` test questions with their `[brackets]` and topic entities removed, and the gold topics."""
    from rra.data.metaqa import load_metaqa

    examples = load_metaqa(root, hops=[hop], split="test")[:limit]
    gold_topics = [ex.topic_entities[0] for ex in examples]
    for ex in examples:
        ex.question = re.sub(r"\[([^\]]*)\]", r"\1", ex.question)
        ex.topic_entities = []
    return examples, gold_topics


def link_and_answer(kg, retrieval, examples, gold_topics: list[str], batch_size: int) -> tuple[dict, list]:
    """RRA linking every question from its text on `kg`: figures, and (links, answers) per question."""
    pipe = RRAPipeline(kg, retrieval, TemplateRewriter(), GraphScorer(), use_gold_topic=False)
    before = getattr(kg, "requests", None)
    t0 = time.perf_counter()
    preds = []
    for i in range(0, len(examples), batch_size):
        batch = examples[i:i + batch_size]
        preds += [with_gold(p, ex) for p, ex in zip(pipe.answer_batch(batch), batch)]
    wall = time.perf_counter() - t0
    m = compute_metrics(preds, wall_s=wall)
    linked = sum(p.topic_entities[:1] == [g] for p, g in zip(preds, gold_topics))
    return ({"hits@1": m["hits@1"], "n": m["n"], "questions_per_s": round(len(preds) / wall, 2),
             "graph_requests_per_question": None if before is None else round((kg.requests - before) / len(preds), 3),
             "topic_linked_correctly_%": round(100 * linked / len(preds), 2), "statuses": m.get("status", {})},
            [(p.topic_entities, p.answers) for p in preds])


def parser():
    """The command line of `python -m bench.bench_graph_linking`."""
    ap = arguments("bench_graph_linking", __doc__)
    ap.add_argument("--ckpt", default=str(METAQA_CKPT))
    ap.add_argument("--data-root", default=str(METAQA))
    ap.add_argument("--hop", type=int, default=2)
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--stores", nargs="+", default=["networkx", "oxigraph", "oxigraph_serve", "oxigraph_serve-names",
                                                    "virtuoso", "virtuoso-names"],
                    help="networkx, oxigraph, oxigraph_serve, virtuoso; ENDPOINT-names: graph.names_in_memory=false")
    ap.add_argument("--out", default=str(RESULTS / "bench_graph_linking.json"))
    return ap


def main() -> None:
    args = parser().parse_args()
    run = Run.start("bench_graph_linking", args)
    examples, gold_topics = unmarked_questions(args.data_root, args.hop, args.limit)
    retrieval = PathRetrieval.from_checkpoint(args.ckpt, semantics=data_semantics("metaqa"))
    work = Path(tempfile.mkdtemp(prefix="bench_graph_linking_"))
    write_ntriples(work / "kb.nt", load_graph(Path(args.data_root) / "kb.txt", format="pipe").all_triples())
    results, reference = {}, None
    try:
        for store in args.stores:
            stop: list = []
            try:
                t0 = time.perf_counter()
                # the store as infer.py's graph= sees it; `virtuoso-names`: graph.names_in_memory=false (the
                # store's own case-insensitive lookups; the default on a loopback endpoint reads names once)
                base = store.removesuffix("-names")
                extra = open_store(base, work / "kb.nt", work, stop)
                if extra is None:
                    continue
                extra += ["graph.names_in_memory=false"] if store.endswith("-names") else []
                timeout = ["graph.timeout=60"] if extra[0] == "graph=sparql" else []
                kg = build_graph(infer_config(["data=metaqa", f"data.root={args.data_root}", *extra, *timeout]))
                setup_s = time.perf_counter() - t0
                row, got = link_and_answer(kg, retrieval, examples, gold_topics, args.batch_size)
                reference = got if reference is None else reference
                results[store] = {**row, "store_setup_seconds": round(setup_s, 2),
                                  "same_links_and_answers_as_first_store": got == reference}
                print(store, json.dumps(results[store]), flush=True)
            finally:
                for s in stop:
                    s()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    run.write({"stores": results, "first_store": args.stores[0],
               "note": f"MetaQA {args.hop}-hop test, first {len(examples)} questions with brackets removed, topic "
                       "linked from the text; retriever trained on the dev split (official train split "
                       "unavailable); graph scorer, no LLM; graph requests = SPARQL queries sent"}, args.out)


if __name__ == "__main__":
    main()
