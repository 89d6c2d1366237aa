"""RRA on each KG store: the same questions, retriever and graph scorer on NetworkX, the embedded
Oxigraph store, `oxigraph serve` over HTTP and a private Virtuoso 7 (named graph), through infer.py's
own evaluation loop (rra.eval.run.run_split). Reports Hits@1, graph requests per question and
questions/s per store, and whether every store gave the NetworkX answers.

    python -m bench.bench_graph_rra --ckpt checkpoints/metaqa/best.ckpt --hop 2 --limit 1000

MetaQA: the retriever is trained on the dev split (the official train split is not available
here) and the questions are the first `--limit` of the test split. Writes bench/results/bench_graph_rra.json.
Stores that are not installed (oxigraph CLI, virtuoso-t) are skipped and say so.
"""
from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

from bench.common import METAQA, METAQA_CKPT, RESULTS, Run, arguments, free_port, oxigraph_serve, run_infer
from rra.graph.loaders import read_triples
from rra.graph.rdf import write_ntriples

GRAPH_IRI = "http://rra.local/graph/metaqa"


def answers(out: Path) -> list:
    return [json.loads(x)["answers"] for x in (out / "predictions.jsonl").read_text().splitlines()]


def open_store(store: str, nt: Path, work: Path, stop: list) -> list[str] | None:
    """The graph= overrides that put infer.py on `store` (starting its server; `stop` collects what
    ends it), or None where the store is not installed."""
    if store == "networkx":
        return ["graph=networkx"]
    if store == "oxigraph":
        return ["graph=oxigraph", f"graph.graph_iri={GRAPH_IRI}"]
    if store == "oxigraph_serve":
        served = oxigraph_serve(nt, work / "oxigraph_store", GRAPH_IRI)
        if served is None:
            return None
        stop.append(served[0].terminate)
        return ["graph=sparql", f"graph.endpoint={served[1]}", f"graph.graph_iri={GRAPH_IRI}", "graph.trust_env=false"]
    if store == "virtuoso":
        from rra.graph.virtuoso import VirtuosoServer, binaries

        if binaries() is None:
            return None
        server = VirtuosoServer(work / "virtuoso", free_port(), free_port()).start()
        stop.append(server.stop)
        server.load(nt, GRAPH_IRI)
        return ["graph=sparql", f"graph.endpoint={server.endpoint}", f"graph.graph_iri={GRAPH_IRI}",
                "graph.trust_env=false", "graph.timeout=60"]
    raise ValueError(f"unknown store {store!r}")


def stores(args, work: Path) -> tuple[dict, dict]:
    """infer.py on every store in turn: (figures per store, stores skipped and why)."""
    base = ["data=metaqa", f"data.hop={args.hop}", "split=test", f"limit={args.limit}", "llm=none",
            f"retriever.ckpt={args.ckpt}", f"batch_size={args.batch_size}", "show_summary=false", "resume=false",
            f"data.root={args.data_root}"]
    nt = work / "kb.nt"
    write_ntriples(nt, *read_triples(Path(args.data_root) / "kb.txt")[:2])
    results, skipped, stop = {}, {}, []
    try:
        for store in args.stores:
            t0 = time.perf_counter()
            extra = open_store(store, nt, work, stop)
            if extra is None:
                skipped[store] = f"{store} is not installed (oxigraph CLI / virtuoso-t)"
                continue
            setup_s = time.perf_counter() - t0
            m = run_infer(base + extra, work / store)
            results[store] = {"hits@1": m["hits@1"], "n": m["n"], "questions_per_s": m.get("questions_per_s"),
                              "graph_requests_per_question": m.get("graph_requests_per_question"),
                              "store_setup_seconds": round(setup_s, 2), "statuses": m.get("status", {}),
                              "overrides": extra}
            print(store, json.dumps(results[store]), flush=True)
    finally:
        for s in stop:
            s()
    return results, skipped


def compare(results: dict, work: Path) -> None:
    """Each store's answers against NetworkX's, and the HTTP stores' slowdown against the embedded one."""
    ref = answers(work / "networkx") if "networkx" in results else None
    for store in results:
        if ref is not None:
            results[store]["same_answers_as_networkx"] = answers(work / store) == ref
    emb = results.get("oxigraph", {}).get("questions_per_s")
    for store in ("oxigraph_serve", "virtuoso"):
        if emb and results.get(store, {}).get("questions_per_s"):
            results[store]["slowdown_vs_embedded"] = round(emb / results[store]["questions_per_s"], 2)


def parser():
    """The command line of `python -m bench.bench_graph_rra`."""
    ap = arguments("bench_graph_rra", __doc__)
    ap.add_argument("--ckpt", default=str(METAQA_CKPT))
    ap.add_argument("--hop", type=int, default=2)
    ap.add_argument("--limit", type=int, default=1000)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--stores", nargs="+", default=["networkx", "oxigraph", "oxigraph_serve", "virtuoso"])
    ap.add_argument("--data-root", default=str(METAQA),
                    help="the MetaQA folder (default: ../shared/data/metaqa, as conf/data/metaqa.yaml)")
    ap.add_argument("--out", default=str(RESULTS / "bench_graph_rra.json"))
    return ap


def main() -> None:
    args = parser().parse_args()
    run = Run.start("bench_graph_rra", args)
    work = Path(tempfile.mkdtemp(prefix="bench_graph_rra_"))
    try:
        results, skipped = stores(args, work)
        compare(results, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    run.write({"stores": results, "skipped": skipped,
               "note": f"MetaQA {args.hop}-hop test, first {args.limit} questions; retriever trained on the dev "
                       "split (official train split unavailable); graph scorer, no LLM; graph requests = SPARQL "
                       "queries sent (HTTP requests incl. retries on endpoints)"}, args.out)


if __name__ == "__main__":
    main()
