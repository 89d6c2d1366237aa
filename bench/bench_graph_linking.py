"""RRA with the topic entity linked from the question text (no `[brackets]`, method.use_gold_topic
false) on each KG store: graph requests per question, questions/s, and whether every store links
and answers as NetworkX does.

    python bench/bench_graph_linking.py --ckpt checkpoints/metaqa/best.ckpt [--limit 300] [--batch-size 32]

Linking reads a label lookup per n-gram of the question; the pipeline makes them ahead in batches
(rra.linking.LookAhead) and scores the lexical candidates' paths in rounds, so a SPARQL store sees
a few queries per batch. MetaQA 2-hop test, first `--limit` questions with their brackets removed;
the retriever was trained on the MetaQA **dev** split (the official train split is not available
here). Graph scorer, template rewriter, no LLM. Writes bench/results/bench_graph_linking.json.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_graph_rra import GRAPH_IRI  # noqa: E402  (bench/)
from common import data_semantics, free_port, machine, wait_http  # noqa: E402  (bench/common.py)

from rra.pipeline.answer import GraphScorer  # noqa: E402
from rra.eval.metrics import compute_metrics  # noqa: E402
from rra.eval.run import with_gold  # noqa: E402  (gold answers are attached after answering)
from rra.graph import SparqlGraph, load_graph, write_ntriples  # noqa: E402
from rra.pipeline.method import RRAPipeline  # noqa: E402
from rra.pipeline.retrieve import PathRetrieval  # noqa: E402
from rra.pipeline.rewrite import TemplateRewriter  # noqa: E402


def open_store(store: str, kb: Path, work: Path, stop: list):
    if store == "networkx":
        return load_graph(kb, format="pipe")
    if store == "oxigraph":
        return load_graph(kb, "oxigraph", format="pipe", graph_iri=GRAPH_IRI)
    nt = work / "kb.nt"
    if not nt.exists():
        write_ntriples(nt, load_graph(kb, format="pipe").all_triples())
    if store == "oxigraph_serve":
        binary = shutil.which("oxigraph") or shutil.which("oxigraph", path=str(Path(sys.executable).parent))
        loc = work / "oxigraph_store"
        subprocess.run([binary, "load", "--location", str(loc), "--file", str(nt), "--graph", GRAPH_IRI],
                       check=True, capture_output=True)
        port = free_port()
        proc = subprocess.Popen([binary, "serve-read-only", "--location", str(loc), "--bind", f"127.0.0.1:{port}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        stop.append(proc.terminate)
        url = f"http://127.0.0.1:{port}/query"
        wait_http(url, proc)
        return SparqlGraph(url, graph_iri=GRAPH_IRI, trust_env=False, timeout=60)
    if store == "virtuoso":
        from rra.graph.virtuoso import VirtuosoServer

        server = VirtuosoServer(work / "virtuoso", free_port(), free_port()).start()
        stop.append(server.stop)
        server.load(nt, GRAPH_IRI)
        return SparqlGraph(server.endpoint, graph_iri=GRAPH_IRI, trust_env=False, timeout=60)
    raise ValueError(f"unknown store {store!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ckpt", default=str(REPO / "checkpoints" / "metaqa" / "best.ckpt"))
    ap.add_argument("--data-root", default=str(REPO.parent / "shared" / "data" / "metaqa"))
    ap.add_argument("--hop", type=int, default=2)
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--stores", nargs="+", default=["networkx", "oxigraph", "oxigraph_serve", "virtuoso"])
    args = ap.parse_args()
    from rra.data.metaqa import load_metaqa

    examples = load_metaqa(args.data_root, hops=[args.hop], split="test")[: args.limit]
    gold_topics = [ex.topic_entities[0] for ex in examples]
    for ex in examples:
        ex.question = re.sub(r"\[([^\]]*)\]", r"\1", ex.question)
        ex.topic_entities = []
    retrieval = PathRetrieval.from_checkpoint(args.ckpt, semantics=data_semantics("metaqa"))
    kb = Path(args.data_root) / "kb.txt"
    work = Path(tempfile.mkdtemp(prefix="bench_graph_linking_"))
    results, reference = {}, None
    try:
        for store in args.stores:
            stop: list = []
            try:
                t0 = time.perf_counter()
                kg = open_store(store, kb, work, stop)
                setup_s = time.perf_counter() - t0
                pipe = RRAPipeline(kg, retrieval, TemplateRewriter(), GraphScorer(), use_gold_topic=False)
                before = getattr(kg, "requests", None)
                t0 = time.perf_counter()
                preds = []
                for i in range(0, len(examples), args.batch_size):
                    batch = examples[i:i + args.batch_size]
                    preds += [with_gold(p, ex) for p, ex in zip(pipe.answer_batch(batch), batch)]
                wall = time.perf_counter() - t0
                m = compute_metrics(preds, wall_s=wall)
                row = {"hits@1": m["hits@1"], "n": m["n"], "questions_per_s": round(len(preds) / wall, 2),
                       "graph_requests_per_question": None if before is None else round((kg.requests - before) / len(preds), 3),
                       "topic_linked_correctly_%": round(100 * sum(p.topic_entities[:1] == [g] for p, g in zip(preds, gold_topics)) / len(preds), 2),
                       "store_setup_seconds": round(setup_s, 2), "statuses": m.get("status", {})}
                got = [(p.topic_entities, p.answers) for p in preds]
                reference = got if reference is None else reference
                row["same_links_and_answers_as_first_store"] = got == reference
                results[store] = row
                print(store, json.dumps(row), flush=True)
            finally:
                for s in stop:
                    s()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    record = {"stores": results, "first_store": args.stores[0],
              "note": f"MetaQA {args.hop}-hop test, first {len(examples)} questions with brackets removed, topic linked "
                      "from the text; retriever trained on the dev split (official train split unavailable); graph "
                      "scorer, no LLM; graph requests = SPARQL queries sent",
              "command": "python bench/bench_graph_linking.py " + " ".join(sys.argv[1:]),
              "config": vars(args), "timestamp": datetime.now(timezone.utc).isoformat(), "machine": machine()}
    path = REPO / "bench" / "results" / "bench_graph_linking.json"
    path.write_text(json.dumps(record, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
