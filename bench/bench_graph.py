"""Graph-layer benchmark on MetaQA: KB load time and 2-hop path-following latency per backend.

    python -m bench.bench_graph [--metaqa ../shared/data/metaqa] [--questions 500] [--runs 3]

Load: `load_graph(kb.txt)` (133,582 lines, file to ready graph), median of `--runs` runs
(NetworkX; pyoxigraph in memory). Also the time to fill an on-disk store with `oxigraph load`.
Paths: a seeded sample of MetaQA 2-hop *test* questions; each gives its topic entity and the
relation path of its question type (actor_to_movie_to_director -> [^starred_actors, directed_by]).
Each backend follows every path once to warm up, then once timed: NetworkX, embedded Oxigraph,
and Oxigraph over HTTP (`oxigraph serve-read-only` on 127.0.0.1 started here, result cache off so
every path is a real request; the SPARQL backends send one query per path). All three must
return identical path instances.
No training is involved; MetaQA models elsewhere in rra train on the dev split.
Also: find_entities latency per match mode (exact is an index lookup on every backend; casefold
and substring scan all labels on the SPARQL backends). Writes bench/results/bench_graph.json.
"""
from __future__ import annotations

import gc
import json
import random
import statistics
import subprocess
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

from bench.common import METAQA, RESULTS, Run, arguments, oxigraph_binary, oxigraph_serve
from rra.graph import SparqlGraph, load_graph, read_triples, write_ntriples

RELATION_OF = {"actor": "starred_actors", "director": "directed_by", "writer": "written_by",
               "year": "release_year", "genre": "has_genre", "language": "in_language"}
TARGETS = {"load_s": 5.0, "two_hop_p50_ms": {"networkx": 1.0, "oxigraph_http": 5.0}}


def qtype_path(qtype: str) -> list[str]:
    """actor_to_movie_to_director -> [^starred_actors, directed_by];
    movie_to_actor_to_movie -> [starred_actors, ^starred_actors]."""
    a, mid, b = qtype.split("_to_")
    if mid == "movie":
        return ["^" + RELATION_OF[a], RELATION_OF[b]]
    return [RELATION_OF[mid], "^" + RELATION_OF[mid]]


def two_hop_sample(metaqa: Path, n: int, seed: int) -> list[tuple[str, list[str], set[str]]]:
    questions = (metaqa / "2-hop/vanilla/qa_test.txt").read_text(encoding="utf-8").splitlines()
    qtypes = (metaqa / "2-hop/qa_test_qtype.txt").read_text(encoding="utf-8").splitlines()
    items = []
    for line, qtype in zip(questions, qtypes):
        question, answers = line.split("\t")
        topic = question[question.index("[") + 1:question.index("]")]
        items.append((topic, qtype_path(qtype.strip()), set(answers.split("|"))))
    return random.Random(seed).sample(items, min(n, len(items)))


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def percentiles(seconds: list[float]) -> dict:
    ms = sorted(s * 1000 for s in seconds)
    pick = lambda q: ms[min(len(ms) - 1, int(q * len(ms)))]
    return {"p50_ms": round(statistics.median(ms), 4), "p95_ms": round(pick(0.95), 4),
            "mean_ms": round(statistics.fmean(ms), 4), "max_ms": round(ms[-1], 4), "n": len(ms)}


def follow_all(kg, sample) -> tuple[list[float], list]:
    for topic, path, _ in sample:  # warm-up (page cache, JIT-free but allocator/connection warm)
        kg.follow_path(topic, path)
    times, results = [], []
    for topic, path, _ in sample:
        start = time.perf_counter()
        paths = kg.follow_path(topic, path)
        times.append(time.perf_counter() - start)
        results.append(paths)
    return times, results


def lookup_all(kg, sample, n: int = 50) -> dict:
    """find_entities latency by mode, on the topic entities' names (lower-cased for casefold)."""
    topics = [t for t, _, _ in sample[:n]]
    out = {}
    for mode in ("exact", "casefold", "substring"):
        texts = [t.lower() if mode == "casefold" else t for t in topics]
        times = [timed(lambda: kg.find_entities(x, mode)) for x in texts]
        found = sum(topic in kg.find_entities(x, mode, limit=100) for topic, x in zip(topics, texts))
        out[mode] = {**percentiles(times), "topic_found": f"{found}/{len(topics)}"}
    return out


def load_figures(kb: Path, runs: int) -> dict:
    """`load_graph(kb)` file to ready graph, median of `runs` (NetworkX; pyoxigraph in memory)."""
    nx_runs, ox_runs, read_runs = [], [], []
    for _ in range(runs):
        read_runs.append(timed(lambda: read_triples(kb)))
        nx_runs.append(timed(lambda: load_graph(kb, "networkx")))
        ox_runs.append(timed(lambda: load_graph(kb, "oxigraph")))
        gc.collect()
    report = read_triples(kb)[2]
    return {"kb_lines": report.lines, "triples": report.triples,
            "read_only_s_median": round(statistics.median(read_runs), 3),
            "networkx_s_median": round(statistics.median(nx_runs), 3), "networkx_s_runs": [round(x, 3) for x in nx_runs],
            "oxigraph_memory_s_median": round(statistics.median(ox_runs), 3),
            "oxigraph_memory_s_runs": [round(x, 3) for x in ox_runs]}


def embedded_figures(kb: Path, sample) -> tuple[dict, dict, list]:
    """2-hop paths and name lookups on NetworkX and embedded Oxigraph: (two_hop, find_entities,
    NetworkX's path instances, the reference for the HTTP store)."""
    nxg, oxg = load_graph(kb, "networkx"), load_graph(kb, "oxigraph")
    gc.collect()
    t_nx, r_nx = follow_all(nxg, sample)
    t_ox, r_ox = follow_all(oxg, sample)
    reached = sum(bool({p.end for p in paths} & answers) for paths, (_, _, answers) in zip(r_nx, sample))
    two_hop = {"networkx": percentiles(t_nx), "oxigraph_embedded": percentiles(t_ox),
               "questions_with_answer_reached": f"{reached}/{len(sample)}",
               "mean_instances_per_question": round(statistics.fmean(len(r) for r in r_nx), 1),
               "embedded_identical_to_networkx": r_ox == r_nx,
               "entities": nxg.stats().entities, "oxigraph_rdf_triples": oxg.triple_count()}
    lookups = {"networkx": lookup_all(nxg, sample), "oxigraph_embedded": lookup_all(oxg, sample)}
    return two_hop, lookups, r_nx


def http_figures(kb: Path, sample, reference: list) -> dict:
    """The same on `oxigraph serve-read-only` (result cache off: every path is a request), and what
    converting and bulk-loading the KG cost; {} without the oxigraph CLI."""
    if not oxigraph_binary():
        return {}
    triples, labels, _ = read_triples(kb)
    with tempfile.TemporaryDirectory(prefix="bench_graph_") as tmp:
        nt, store = Path(tmp) / "kb.nt", Path(tmp) / "store"
        out = {"convert_to_ntriples_s": round(timed(lambda: write_ntriples(nt, triples, labels)), 3),
               "oxigraph_cli_load_s": round(timed(lambda: subprocess.run(
                   [oxigraph_binary(), "load", "--location", str(store), "--file", str(nt)], check=True,
                   capture_output=True)), 3)}
        proc, url = oxigraph_serve(nt, store)  # the loaded store, served
        try:
            with SparqlGraph(url, cache_size=0, timeout=30, trust_env=False) as http:
                # the floor: one round trip of a query that touches nothing
                trivial = [timed(lambda: http._post("ASK {}")) for _ in range(200)]
                out["http_trivial_query_p50_ms"] = round(statistics.median(trivial) * 1000, 4)
                t_http, r_http = follow_all(http, sample)
                out["oxigraph_http"] = {**percentiles(t_http), "requests": http.requests}
                out["http_identical_to_networkx"] = r_http == reference
                out["find_entities"] = lookup_all(http, sample)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    return out


def targets_met(figures: dict) -> dict:
    two = figures["two_hop"]
    checks = {"networkx_load_le_5s": figures["load"]["networkx_s_median"] <= TARGETS["load_s"],
              "oxigraph_load_le_5s": figures["load"]["oxigraph_memory_s_median"] <= TARGETS["load_s"],
              "networkx_2hop_p50_le_1ms": two["networkx"]["p50_ms"] <= 1.0}
    if isinstance(two.get("oxigraph_http"), dict):
        checks["oxigraph_http_2hop_p50_le_5ms"] = two["oxigraph_http"]["p50_ms"] <= 5.0
    return checks


def parser():
    """The command line of `python -m bench.bench_graph`."""
    ap = arguments("bench_graph", __doc__)
    ap.add_argument("--metaqa", default=str(METAQA))
    ap.add_argument("--questions", type=int, default=500)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(RESULTS / "bench_graph.json"))
    return ap


def main() -> None:
    args = parser().parse_args()
    run = Run.start("bench_graph", args)
    kb = Path(args.metaqa) / "kb.txt"
    figures = {"load": load_figures(kb, args.runs)}
    sample = two_hop_sample(Path(args.metaqa), args.questions, args.seed)
    two_hop, lookups, reference = embedded_figures(kb, sample)
    for key in ("entities", "oxigraph_rdf_triples"):
        figures["load"][key] = two_hop.pop(key)
    gc.collect()  # the HTTP client should not pay for the garbage collector walking two KGs
    http = http_figures(kb, sample, reference)
    if http:
        for key in ("convert_to_ntriples_s", "oxigraph_cli_load_s"):
            figures["load"][key] = http.pop(key)
        lookups["oxigraph_http"] = http.pop("find_entities")
        two_hop.update(http)
    else:
        two_hop["oxigraph_http"] = "skipped: `oxigraph` binary not found"
    figures["two_hop"], figures["find_entities"] = two_hop, lookups
    checks = targets_met(figures)
    run.write({"data": {"kb": str(kb), "questions": "2-hop/vanilla/qa_test.txt (topic entity) + "
                        "2-hop/qa_test_qtype.txt (path)", "train_split": "dev",
                        "note": "no training here; rra trains MetaQA models on the dev split"},
               "figures": figures, "targets": TARGETS, "targets_met": checks,
               "versions": {"networkx": version("networkx"), "pyoxigraph": version("pyoxigraph")}}, args.out)
    print(json.dumps({"figures": figures, "targets_met": checks}, indent=2))


if __name__ == "__main__":
    main()
