"""RRA on each KG store: the same questions, retriever and graph scorer on NetworkX, the embedded
Oxigraph store, `oxigraph serve` over HTTP and a private Virtuoso 7 (named graph), through infer.py's
own evaluation loop (rra.eval.run.run_split). Reports Hits@1, graph requests per question and
questions/s per store, and whether every store gave the NetworkX answers.

    python bench/bench_graph_rra.py --ckpt checkpoints/metaqa/best.ckpt --hop 2 --limit 1000

MetaQA: the retriever is trained on the dev split (the official train split is not available
here) and the questions are the first `--limit` of the test split. Writes bench/results/bench_graph_rra.json.
Stores that are not installed (oxigraph CLI, virtuoso-t) are skipped and say so.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from common import free_port, machine, oxigraph_binary, wait_http  # noqa: E402  (bench/common.py)
from hydra import compose, initialize_config_dir  # noqa: E402
from hydra.core.global_hydra import GlobalHydra  # noqa: E402
from hydra.core.hydra_config import HydraConfig  # noqa: E402
from omegaconf import open_dict  # noqa: E402

from rra.config import register_resolvers  # noqa: E402
from rra.eval.run import run_split  # noqa: E402
from rra.graph.loaders import read_triples  # noqa: E402
from rra.graph.rdf import write_ntriples  # noqa: E402

GRAPH_IRI = "http://rra.local/graph/metaqa"


def infer(overrides: list[str], out: Path) -> dict:
    """One infer.py run (compose + run_split, as `python infer.py` does) into `out`."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("infer", overrides=overrides, return_hydra_config=True)
    HydraConfig().set_config(cfg)
    with open_dict(cfg):
        cfg.paths.output_dir = str(out)
    start = time.perf_counter()
    metrics = run_split(cfg, out)
    metrics["run_seconds_with_setup"] = round(time.perf_counter() - start, 2)
    return metrics


def answers(out: Path) -> list:
    return [json.loads(x)["answers"] for x in (out / "predictions.jsonl").read_text().splitlines()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ckpt", default=str(REPO / "checkpoints" / "metaqa" / "best.ckpt"))
    ap.add_argument("--hop", type=int, default=2)
    ap.add_argument("--limit", type=int, default=1000)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--stores", nargs="+", default=["networkx", "oxigraph", "oxigraph_serve", "virtuoso"])
    ap.add_argument("--data-root", default=str(REPO.parent / "shared" / "data" / "metaqa"),
                    help="the MetaQA folder (default: ../shared/data/metaqa, as conf/data/metaqa.yaml)")
    args = ap.parse_args()
    register_resolvers(REPO)
    base = ["data=metaqa", f"data.hop={args.hop}", "split=test", f"limit={args.limit}", "llm=none", "logger=none",
            f"retriever.ckpt={args.ckpt}", f"batch_size={args.batch_size}", "show_summary=false", "resume=false",
            f"data.root={args.data_root}"]
    work = Path(tempfile.mkdtemp(prefix="bench_graph_rra_"))
    kb = Path(args.data_root) / "kb.txt"
    nt = work / "kb.nt"
    triples, labels, _ = read_triples(kb)
    write_ntriples(nt, triples, labels)
    results, skipped, procs = {}, {}, []
    try:
        for store in args.stores:
            out = work / store
            extra, setup_s = [], 0.0
            t0 = time.perf_counter()
            if store == "networkx":
                extra = ["graph=networkx"]
            elif store == "oxigraph":
                extra = ["graph=oxigraph", f"graph.graph_iri={GRAPH_IRI}"]
            elif store == "oxigraph_serve":
                binary = oxigraph_binary()
                if binary is None:
                    skipped[store] = "oxigraph CLI not installed"
                    continue
                loc = work / "oxigraph_store"
                subprocess.run([binary, "load", "--location", str(loc), "--file", str(nt), "--graph", GRAPH_IRI],
                               check=True, capture_output=True)
                port = free_port()
                procs.append(subprocess.Popen([binary, "serve-read-only", "--location", str(loc), "--bind",
                                               f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                url = f"http://127.0.0.1:{port}/query"
                wait_http(url, procs[-1])
                extra = ["graph=sparql", f"graph.endpoint={url}", f"graph.graph_iri={GRAPH_IRI}", "graph.trust_env=false"]
            elif store == "virtuoso":
                from rra.graph.virtuoso import VirtuosoServer, binaries

                if binaries() is None:
                    skipped[store] = "virtuoso-t not installed"
                    continue
                server = VirtuosoServer(work / "virtuoso", free_port(), free_port()).start()
                procs.append(server)
                server.load(nt, GRAPH_IRI)
                extra = ["graph=sparql", f"graph.endpoint={server.endpoint}", f"graph.graph_iri={GRAPH_IRI}",
                         "graph.trust_env=false", "graph.timeout=60"]
            setup_s = time.perf_counter() - t0
            m = infer(base + extra, out)
            results[store] = {"hits@1": m["hits@1"], "n": m["n"], "questions_per_s": m.get("questions_per_s"),
                              "graph_requests_per_question": m.get("graph_requests_per_question"),
                              "store_setup_seconds": round(setup_s, 2), "statuses": m.get("status", {}),
                              "overrides": extra}
            print(store, json.dumps(results[store]), flush=True)
        ref = answers(work / "networkx") if "networkx" in results else None
        for store in results:
            if ref is not None:
                results[store]["same_answers_as_networkx"] = answers(work / store) == ref
    finally:
        for p in procs:
            p.stop() if hasattr(p, "stop") else p.terminate()
    emb = results.get("oxigraph", {}).get("questions_per_s")
    for store in ("oxigraph_serve", "virtuoso"):
        if emb and results.get(store, {}).get("questions_per_s"):
            results[store]["slowdown_vs_embedded"] = round(emb / results[store]["questions_per_s"], 2)
    record = {"stores": results, "skipped": skipped,
              "note": f"MetaQA {args.hop}-hop test, first {args.limit} questions; retriever trained on the dev "
                      "split (official train split unavailable); graph scorer, no LLM; graph requests = SPARQL "
                      "queries sent (HTTP requests incl. retries on endpoints)",
              "command": "python bench/bench_graph_rra.py " + " ".join(sys.argv[1:]),
              "config": vars(args), "timestamp": datetime.now(timezone.utc).isoformat(), "machine": machine()}
    path = REPO / "bench" / "results" / "bench_graph_rra.json"
    path.write_text(json.dumps(record, indent=1))
    print(f"wrote {path}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
