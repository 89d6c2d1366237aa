"""How cost grows with the KG: seeded synthetic KGs of growing size on each backend.

    python -m bench.bench_scale --sizes 100000 1000000 10000000

For every size a KG with a MetaQA-like shape is generated (18 relations; "movie" heads with a few
facts each, tails drawn from a Zipf-like pool so a few entities -- genres, years, languages -- have
huge in-degree), written once as TSV and N-Triples, and each backend runs in its own process:

- networkx: `load_graph(tsv)` in memory;
- oxigraph: `load_graph(tsv, backend="oxigraph", store_path=DIR)` (embedded, on disk); then the same
  call again, as a second run makes it: the store is opened, not loaded (`reopen_s`); and the file
  added to a store holding another triple rra has no record of (`added_to_a_store_s`);
- oxigraph_serve: `oxigraph load` + `oxigraph serve-read-only`, queried over HTTP (SparqlGraph);
- virtuoso: a private Virtuoso 7, bulk-loaded into a named graph, over HTTP (where installed).

Measured: load time, resident memory (of the process holding the KG: the benchmark process for
NetworkX / embedded Oxigraph, the server for the others), 2-hop `follow_path` p50/p95 over seeded
(topic, path) pairs, and retrieval throughput: `follow_path_batch` for batches of 256 topics x 3
candidate paths, as RRA's batched retrieval issues it. Writes bench/results/bench_scale.json and
bench_scale.png.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import REPO, RESULTS, Run, arguments, free_port, oxigraph_binary, oxigraph_serve, previous

RELATIONS = [f"rel_{i:02d}" for i in range(18)]
GRAPH_IRI = "http://rra.local/graph/scale"


def generate(n_triples: int, out: Path, seed: int = 0) -> dict:
    """TSV + N-Triples of a synthetic KG; returns its shape."""
    rng = random.Random(seed)
    n_heads = max(10, n_triples // 4)
    n_tails = max(10, n_triples // 3)
    tsv, nt = out / "kb.tsv", out / "kb.nt"
    seen = set()
    with tsv.open("w") as f:
        while len(seen) < n_triples:
            h = rng.randrange(n_heads)
            r = rng.randrange(len(RELATIONS))
            # Zipf-like tails: low ids are popular (genres/years), most are rare (people, titles)
            t = int(n_tails ** rng.random()) - 1
            key = (h, r, t)
            if key in seen:
                continue
            seen.add(key)
            f.write(f"m{h}\t{RELATIONS[r]}\te{t}\n")
    del seen
    from rra.graph.loaders import read_triples
    from rra.graph.rdf import write_ntriples

    triples, _, _ = read_triples(tsv)
    write_ntriples(nt, triples)
    return {"triples": n_triples, "heads": n_heads, "tail_pool": n_tails}


def rss_mb(pid: int | None = None) -> float:
    """Resident memory in MB (VmRSS of a process; this process when pid is None)."""
    path = Path(f"/proc/{pid or os.getpid()}/status")
    for line in path.read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def probes(kg, n_heads: int, seed: int = 1, n: int = 200) -> list[tuple[str, list[str]]]:
    """(topic, 2-hop path) pairs that exist: a topic's relation, then a relation of its tail."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        topic = f"m{rng.randrange(n_heads)}"
        if not kg.has_entity(topic):
            continue
        rels = [r for r in kg.relations(topic) if not r.startswith("^")]
        r1 = rng.choice(rels)
        out.append((topic, [r1, "^" + rng.choice(RELATIONS)]))
    return out


def measure(kg, n_heads: int) -> dict:
    pairs = probes(kg, n_heads)
    times = []
    for topic, path in pairs:
        t0 = time.perf_counter()
        kg.follow_path(topic, path, limit=10_000)
        times.append(time.perf_counter() - t0)
    times.sort()
    # batched retrieval: 256 topics x 3 candidate paths per batch, 4 batches
    rng = random.Random(2)
    batches = 4
    t0 = time.perf_counter()
    for _ in range(batches):
        topics = [p[0] for p in rng.sample(pairs, min(len(pairs), 64))] * 4
        for k in range(3):
            kg.follow_path_batch(topics, pairs[k][1], limit=10_000)
    batch_s = time.perf_counter() - t0
    return {"path2_p50_ms": 1000 * times[len(times) // 2], "path2_p95_ms": 1000 * times[int(len(times) * 0.95)],
            "retrieval_questions_per_s": batches * 256 / batch_s}


def worker(backend: str, work: Path, n_heads: int) -> dict:
    """One backend on one KG, in this (fresh) process."""
    from rra.graph import SparqlGraph
    from rra.graph.loaders import load_graph

    base_rss = rss_mb()
    t0 = time.perf_counter()
    if backend == "networkx":
        kg = load_graph(work / "kb.tsv", "networkx")
        load_s, mem = time.perf_counter() - t0, rss_mb() - base_rss
        return {"load_s": load_s, "rss_mb": mem, **measure(kg, n_heads)}
    if backend == "oxigraph":
        store = work / "oxigraph_embedded"
        shutil.rmtree(store, ignore_errors=True)
        kg = load_graph(work / "kb.tsv", "oxigraph", store_path=store)
        kg.flush()
        load_s = time.perf_counter() - t0
        stats = kg.stats()
        out = {"load_s": load_s, "rss_mb": rss_mb() - base_rss, **measure(kg, n_heads)}
        out["rss_mb_after_queries"] = rss_mb() - base_rss
        del kg  # the store's lock goes with it
        gc.collect()
        t0 = time.perf_counter()  # a second run with the same file: the store is opened (rra.graph.store_record)
        again = load_graph(work / "kb.tsv", "oxigraph", store_path=store)
        out["reopen_s"] = time.perf_counter() - t0
        out["reopened_same_stats"] = again.stats() == stats
        del again
        gc.collect()
        # the file added to a store that holds other triples rra has no record of (no fresh bulk load)
        shutil.rmtree(store, ignore_errors=True)
        from rra.graph import OxigraphGraph, Triple

        OxigraphGraph.from_triples([Triple("Jaws", "directed_by", "Steven Spielberg")], path=store).flush()
        gc.collect()
        t0 = time.perf_counter()
        added = load_graph(work / "kb.tsv", "oxigraph", store_path=store)
        out["added_to_a_store_s"] = time.perf_counter() - t0
        out["added_same_entities"] = added.stats().entities == stats.entities + 2
        return out
    if backend == "oxigraph_serve":
        binary = oxigraph_binary()
        if binary is None:
            return {"skipped": "oxigraph CLI not installed"}
        loc = work / "oxigraph_server_store"
        shutil.rmtree(loc, ignore_errors=True)
        subprocess.run([binary, "load", "--location", str(loc), "--file", str(work / "kb.nt")],
                       check=True, capture_output=True)
        load_s = time.perf_counter() - t0
        proc, url = oxigraph_serve(work / "kb.nt", loc)  # the loaded store, served
        try:
            kg = SparqlGraph(url, trust_env=False, timeout=120, cache_size=0)
            out = {"load_s": load_s, **measure(kg, n_heads)}
            out["rss_mb"] = rss_mb(proc.pid)
            out["requests"] = kg.requests
            return out
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    if backend == "virtuoso":
        from rra.graph.virtuoso import VirtuosoServer, binaries

        if binaries() is None:
            return {"skipped": "virtuoso-t not installed"}
        root = work / "virtuoso"
        shutil.rmtree(root, ignore_errors=True)
        with VirtuosoServer(root, free_port(), free_port()) as server:
            start_s = time.perf_counter() - t0
            t1 = time.perf_counter()
            server.load(work / "kb.nt", GRAPH_IRI)
            load_s = time.perf_counter() - t1
            kg = SparqlGraph(server.endpoint, trust_env=False, timeout=300, cache_size=0, graph_iri=GRAPH_IRI)
            out = {"load_s": load_s, "server_start_s": start_s, **measure(kg, n_heads)}
            out["rss_mb"] = rss_mb(server.proc.pid)
            return out
    raise ValueError(f"unknown backend {backend!r}")


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for ax, key, label in ((axes[0], "load_s", "load time (s)"), (axes[1], "rss_mb", "resident memory (MB)"),
                           (axes[2], "path2_p50_ms", "2-hop path p50 (ms)")):
        for backend, by_size in results.items():
            pts = sorted((int(s), r[key]) for s, r in by_size.items() if isinstance(r, dict) and key in r)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=backend)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("triples")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, which="both")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_size(size: int, backends: list[str], work: Path, timeout: float) -> tuple[dict, dict]:
    """One KG size: the generated KG's shape and each backend's figures, each backend in its own
    process (`python -m bench.bench_scale --worker ...`) so its memory is its own."""
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    shape = generate(size, work)
    shape["generate_s"] = round(time.perf_counter() - t0, 1)
    print(f"{size} triples generated in {shape['generate_s']} s", flush=True)
    out = {}
    for backend in backends:
        cmd = [sys.executable, "-m", "bench.bench_scale", "--worker", backend, str(work), str(shape["heads"])]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO)
            lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
            r = json.loads(lines[-1]) if lines else {"error": (done.stderr or done.stdout)[-600:]}
        except subprocess.TimeoutExpired:
            r = {"error": f"did not finish within {timeout} s"}
        out[backend] = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()}
        print(f"  {backend}: {out[backend]}", flush=True)
    return shape, out


def parser():
    """The command line of `python -m bench.bench_scale`."""
    ap = arguments("bench_scale", __doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    ap.add_argument("--backends", nargs="+", default=["networkx", "oxigraph", "oxigraph_serve", "virtuoso"])
    ap.add_argument("--work", help="scratch directory (default: a temp dir, removed afterwards)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per backend and size")
    ap.add_argument("--out", default=str(RESULTS / "bench_scale.json"), help="merged: sizes run one at a time add up")
    ap.add_argument("--worker", nargs=3, metavar=("BACKEND", "DIR", "HEADS"), help=argparse.SUPPRESS)
    return ap


def main() -> None:
    args = parser().parse_args()
    if args.worker:
        backend, work, heads = args.worker
        print(json.dumps(worker(backend, Path(work), int(heads))))
        return
    run = Run.start("bench_scale", args)
    old = previous(args.out)
    results, shapes = old.get("results", {}), old.get("shapes", {})
    root = Path(args.work or tempfile.mkdtemp(prefix="bench_scale_"))
    try:
        for size in args.sizes:
            shapes[str(size)], by_backend = run_size(size, args.backends, root / str(size), args.timeout)
            for backend, r in by_backend.items():
                results.setdefault(backend, {})[str(size)] = r
            run.write({"results": results, "shapes": shapes}, args.out)
            shutil.rmtree(root / str(size), ignore_errors=True)
    finally:
        if not args.work:
            shutil.rmtree(root, ignore_errors=True)
    plot(results, Path(args.out).with_suffix(".png"))


if __name__ == "__main__":
    main()
